//! The scenario API as other crates (CLI, web) use it.

use eevdf_scenario::presets::{preset, PRESETS};
use eevdf_scenario::scenario::{Machine, Scenario, ENGINE_VERSION, MAX_COLUMNS};

#[test]
fn presets_load_override_and_print() {
    assert!(PRESETS.len() >= 4);
    let mut s = Scenario::parse(preset("default").unwrap().text).unwrap();
    assert_eq!(s.engine, ENGINE_VERSION);
    s.set("machine=smp8").unwrap();
    s.set("sysctl.base_slice_ns=3ms").unwrap();
    s.apply_features("NO_RUN_TO_PARITY,PS_SET_NEXT_BUDDY")
        .unwrap();
    assert_eq!(s.machine, Machine::Smp(8));
    assert_eq!(s.machine.nr_cpus(), 8);
    assert!(!s.features.features.run_to_parity);
    let text = s.to_text();
    assert!(text.contains("\nfeatures NO_RUN_TO_PARITY PS_SET_NEXT_BUDDY\n"));
    assert!(text.lines().all(|l| l.chars().count() <= MAX_COLUMNS));
    assert_eq!(Scenario::parse(&text).unwrap(), s);
}

#[test]
fn errors_display_position_message_and_hint() {
    let text = "eevdf-scenario v1\ntask ct kind=timer peroid=1ms\nend\n";
    let e = Scenario::parse(text).unwrap_err();
    let shown = e.to_string();
    assert!(shown.starts_with("2:20: unknown key `peroid`"), "{shown}");
    assert!(shown.contains("(hint: did you mean `period`?"), "{shown}");
    let e = Scenario::default().set("hz=99").unwrap_err();
    assert_eq!((e.line, e.column), (0, 4));
}

#[test]
fn byte_order_mark_and_crlf_are_accepted() {
    let text = "\u{feff}eevdf-scenario v1\r\nmachine smp2\r\nend\r\n";
    assert_eq!(Scenario::parse(text).unwrap().machine.nr_cpus(), 2);
}
