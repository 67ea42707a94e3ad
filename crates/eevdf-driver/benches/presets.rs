//! The presets issue 20 names, as users run them (criterion): wall time
//! to simulate 2 s of `hackbench-1g` (smp8), `nb-v5-schbench`
//! (xeon-4314-2s), `flatten-hackbench` (rb5, EAS) and `nb-v5-schbench`
//! on `epyc-2x128c`. Each prints its events and simulated time once, so
//! events per second and simulated seconds per wall second follow.
//! callgrind's instruction counts of the same runs are the stable figure
//! on a noisy machine (`valgrind --tool=callgrind target/release/eevdf
//! run PRESET --duration 2s`).

use criterion::{criterion_group, criterion_main, Criterion};
use eevdf_scenario::presets::preset;
use eevdf_scenario::scenario::Scenario;
use std::hint::black_box;

/// `(bench name, preset, --set edits)`.
const RUNS: [(&str, &str, &[&str]); 4] = [
    ("hackbench_1g_2s", "hackbench-1g", &[]),
    ("nb_v5_schbench_2s", "nb-v5-schbench", &[]),
    ("flatten_hackbench_2s", "flatten-hackbench", &[]),
    (
        "nb_v5_schbench_epyc_2s",
        "nb-v5-schbench",
        &["machine=epyc-2x128c"],
    ),
];

fn scenario(name: &str, edits: &[&str]) -> Scenario {
    let mut sc = Scenario::parse(preset(name).expect("a preset").text).expect("presets parse");
    for e in edits.iter().chain(&["duration=2s"]) {
        sc.set(e).expect("a valid edit");
    }
    sc
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("presets");
    g.sample_size(10);
    for (name, p, edits) in RUNS {
        let sc = scenario(p, edits);
        let r = eevdf_sim::simulate(sc.sim_config());
        eprintln!(
            "{name}: {} events, {} s simulated",
            r.events,
            r.sim_ns / 1_000_000_000
        );
        g.bench_function(name, |b| {
            b.iter(|| black_box(eevdf_sim::simulate(sc.sim_config())))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
