//! Scenario text v1: never panics; the properties are
//! `eevdf_scenario::fuzz_checks::scenario` (also replayed by `cargo test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| eevdf_scenario::fuzz_checks::scenario(data));
