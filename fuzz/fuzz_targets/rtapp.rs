//! rt-app JSON import: never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = eevdf_scenario::rtapp::import(text, "smp4");
    }
});
