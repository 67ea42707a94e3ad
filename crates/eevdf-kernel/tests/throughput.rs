//! The simulator's throughput against committed kernel data (no QEMU
//! here): `tests/kernel-ref/hackbench.jsonl` and `schbench.jsonl` are
//! `make throughput-ref`, one hackbench group (pipes and sockets) and one
//! schbench alone on one CPU on 6.12.95 and 7.2.13, the default and three
//! flips, five seeds; `hackbench-smp4.jsonl` is one and four groups on
//! four CPUs, the default and NEXT_BUDDY; `hackbench-numa2.jsonl` the
//! same on 7.2 only, on eight CPUs booted as two NUMA nodes of two SMT
//! cores; `hackbench-xeon.jsonl` one group on the 64 CPUs of
//! `xeon-4314-2s`, `hackbench-graviton3.jsonl` seven groups as processes
//! and as threads on the 64 of `graviton3`, 7.2 only.
//! Every throughput verdict that `docs/fidelity.md` marks as agreeing must
//! still agree; a disagreement must be listed in
//! `tests/kernel-ref/known-disagreements.txt`, and a listed one that
//! agrees again fails too (`eevdf kernel fidelity-doc` rewrites the list).

use std::path::PathBuf;

use eevdf_kernel::fidelity::{parse_known, Mismatches};
use eevdf_kernel::throughput_ref::{owns, verdicts, ThroughputRef, BENCHES};

fn refs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernel-ref")
}

fn read(name: &str) -> String {
    let p = refs_dir().join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn the_twin_holds_its_throughput_agreement_with_the_kernels() {
    let mut judged = Vec::new();
    for bench in BENCHES {
        let r = ThroughputRef::parse(
            bench,
            &read(&format!("{bench}.txt")),
            &read(&format!("{bench}.jsonl")),
        )
        .unwrap_or_else(|e| panic!("{bench}.jsonl: {e}"));
        judged.extend(r.judge().expect("the twins run"));
    }
    // Both kernels; on one CPU hackbench over pipes and sockets, and
    // schbench, the default and three flips each; on four CPUs one and
    // four hackbench groups over pipes and sockets, the default and
    // NEXT_BUDDY; on two nodes the same, one group over pipes and
    // sockets on the Xeon, and seven groups over pipes as processes and
    // as threads on the Graviton3, 7.2 only.
    assert_eq!(
        judged.len(),
        2 * (3 * 4 + 4 * 2) + 4 * 2 + 2 * 2 + 2 * 2,
        "groups: {judged:#?}"
    );
    for j in &judged {
        assert_eq!(
            j.kernel.len(),
            5,
            "{} {} {}: five seeds",
            j.series,
            j.row,
            j.variant
        );
        assert!(
            j.kernel.iter().all(|k| k.work > 1_000),
            "{j:?}: work was done"
        );
    }
    let v = verdicts(&judged);
    let known: Vec<String> = parse_known(&read("known-disagreements.txt"))
        .into_iter()
        .filter(|k| owns(k))
        .collect();
    Mismatches::of(&v, &known).assert_none();
    // NEXT_BUDDY's effects on 7.2 are the thread's subject (seeds/004):
    // on one CPU, on four, on two nodes and on the Graviton3, they are
    // judged, and agree.
    for row in [
        "hackbench-pipe",
        "schbench",
        "hackbench-smp4-g1-pipe",
        "hackbench-smp4-g4-pipe",
        "hackbench-numa2-g1-pipe",
        "hackbench-numa2-g1-socket",
        "hackbench-numa2-g4-pipe",
        "hackbench-graviton3-pipe-process",
        "hackbench-graviton3-pipe-thread",
    ] {
        assert!(
            v.iter().any(|v| v.row == row
                && v.variant == "NEXT_BUDDY"
                && v.series == "7.2"
                && v.what == "direction"
                && v.agrees),
            "7.2 NEXT_BUDDY on {row}: a judged effect that agrees"
        );
    }
}
