//! Share links: never panic; a decoded scenario's link decodes back to it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(sc) = eevdf_scenario::link::decode(text) {
            let url = eevdf_scenario::link::url(&sc, "https://x/");
            let back = eevdf_scenario::link::decode(&url).expect("our own link decodes");
            assert_eq!(back.to_text(), sc.to_text());
        }
    }
});
