//! A `slice` outside the kernel's clamp is accepted and noted: the
//! kernel (`__setparam_fair`, 7.2 fair.c) and the engine run it at
//! 0.1 ms or 100 ms, and the note says which.

use eevdf_scenario::scenario::Scenario;

fn notes(tasks: &str) -> Vec<String> {
    let text = format!("eevdf-scenario v1\nmachine up\n{tasks}end\n");
    Scenario::parse(&text).unwrap().slice_notes()
}

#[test]
fn slices_past_the_clamp_are_noted() {
    assert_eq!(
        notes("task a kind=hog slice=10us\ntask b kind=hog slice=200ms\n"),
        [
            "task a: slice=10us is outside the kernel's 100us..100ms (sched_setattr clamps it); it runs with 100us",
            "task b: slice=200ms is outside the kernel's 100us..100ms (sched_setattr clamps it); it runs with 100ms",
        ]
    );
}

#[test]
fn slices_inside_the_clamp_and_base_slices_are_not() {
    assert!(
        notes("task a kind=hog slice=100us\ntask b kind=hog slice=100ms\ntask c kind=hog\n")
            .is_empty()
    );
    for p in eevdf_scenario::presets::PRESETS {
        let sc = Scenario::parse(p.text).unwrap();
        assert!(
            sc.slice_notes().is_empty(),
            "{}: {:?}",
            p.name,
            sc.slice_notes()
        );
    }
}
