//! Scenario text v1 and mail paste-back: never panic; whatever parses
//! prints canonical text that parses to the same scenario.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(sc) = eevdf_scenario::scenario::Scenario::parse(text) {
            let canon = sc.to_text();
            let back = eevdf_scenario::scenario::Scenario::parse(&canon).expect("canonical text parses");
            assert_eq!(back.to_text(), canon);
        }
        let _ = eevdf_scenario::paste::parse_pasted(text);
    }
});
