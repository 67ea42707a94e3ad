//! The simulator against committed kernel reference data (no QEMU here):
//! every fidelity cell that `docs/fidelity.md` marks as agreeing must
//! still agree, and every disagreement must be listed as known in
//! `tests/kernel-ref/known-disagreements.txt`. A listed cell that agrees
//! again fails too, so the list is kept short on purpose: regenerate it
//! with `eevdf kernel fidelity-doc` after a fidelity fix and review.

use std::path::PathBuf;

use eevdf_kernel::fidelity;

fn refs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernel-ref")
}

/// The judged timer's wakeups in a row's run: duration over period.
fn expected_samples(row: &str, variant: &str) -> u64 {
    let (Some(row), Some(v)) = (fidelity::row(row), fidelity::variant(variant)) else {
        panic!("unknown row or variant {row} {variant}");
    };
    let sc = eevdf_scenario::scenario::Scenario::parse(&fidelity::scenario_text(row, v))
        .expect("a row's text parses");
    let ct = &sc.sim.tasks[0];
    let eevdf_sim::Workload::Timer { period_ns, .. } = ct.workload else {
        panic!("{}: the judged task is not a timer", row.name);
    };
    sc.sim.duration_ns / period_ns.max(1)
}

#[test]
fn the_simulator_holds_its_agreement_with_the_kernels() {
    let refs = fidelity::load_references(&refs_dir()).expect("tests/kernel-ref");
    assert!(refs.len() >= 6, "reference data: {} files", refs.len());
    for r in &refs {
        assert_eq!(
            r.seeds.len(),
            5,
            "{} {} {}: five seeds",
            r.row,
            r.variant,
            r.series
        );
        // At least half the timer's periods were measured (a period that
        // starts while the timer still waits is skipped, as cyclictest
        // does: 6.12 ct-hackbench equal-slices keeps 5,659 of 10,000).
        let expected = expected_samples(&r.row, &r.variant);
        assert!(
            r.seeds.iter().all(|s| s.samples * 2 > expected),
            "{} {}: samples, want half of {expected}",
            r.row,
            r.variant
        );
        assert_eq!(r.kernel_sha256.len(), 64);
    }
    let known_text = std::fs::read_to_string(refs_dir().join("known-disagreements.txt"))
        .expect("known-disagreements.txt");
    let known = fidelity::parse_known(&known_text);
    let judged = fidelity::judge_all(&refs).expect("simulate");
    let verdicts = fidelity::verdicts(&judged);
    // Throughput lines are tests/throughput.rs's.
    let known: Vec<String> = known
        .into_iter()
        .filter(|k| !eevdf_kernel::throughput_ref::owns(k))
        .collect();
    fidelity::Mismatches::of(&verdicts, &known).assert_none();
}

/// Every committed kernel reference comes from one guest runner: mixing
/// guests mixes regimes (docs/fidelity.md). `make test-kernel` also holds
/// that guest to the one this checkout builds.
#[test]
fn every_kernel_reference_comes_from_one_guest() {
    use eevdf_kernel::ref_guests::{describe, files_by_guest, REFRESH};
    let by_guest = files_by_guest(&refs_dir()).expect("the references");
    let files: std::collections::BTreeSet<&String> = by_guest.values().flatten().collect();
    assert!(files.len() > 50, "{} reference files", files.len());
    let each: Vec<String> = by_guest.iter().map(|(g, fs)| describe(g, fs)).collect();
    assert!(
        by_guest.len() == 1,
        "the kernel references name {} guests: {}; refresh them with `{REFRESH}`",
        by_guest.len(),
        each.join("; ")
    );
}
