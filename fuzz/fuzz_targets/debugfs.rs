//! Features lines and debugfs pastes: never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = eevdf_scenario::parse_features_line(text);
        let mut sc = eevdf_scenario::scenario::Scenario::parse("eevdf-scenario v1\nend\n").expect("empty scenario");
        let _ = eevdf_scenario::debugfs::apply(&mut sc, text);
    }
});
