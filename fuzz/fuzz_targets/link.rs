//! Share links: never panics; the properties are
//! `eevdf_scenario::fuzz_checks::link` (also replayed by `cargo test`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| eevdf_scenario::fuzz_checks::link(data));
