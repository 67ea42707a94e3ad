//! Simulator throughput (criterion): wall time to simulate
//! (a) smp8 cyclictest + hackbench 1 group (10 s),
//! (b) smp8 cyclictest + 16 rt-app tasks (130 s, the 0/8 series' run),
//! (c) smp8 with 2000 hogs and 8 timers (2 s).
//! Each prints its event count once, so events per second and simulated
//! seconds per wall second follow from the measured time.

use criterion::{criterion_group, criterion_main, Criterion};
use eevdf_sim::topology::MachineSpec;
use eevdf_sim::{simulate, SimConfig, TaskSpec, Workload};
use std::hint::black_box;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn timer() -> TaskSpec {
    let mut t = TaskSpec::new(
        "ct",
        Workload::Timer {
            period_ns: 3_777_000,
            run_ns: 20_000,
        },
    );
    t.slice_ns = Some(8 * MS);
    t
}

fn smp8(secs: u64, tasks: Vec<TaskSpec>) -> SimConfig {
    SimConfig {
        nr_cpus: 8,
        hz: 250,
        duration_ns: secs * S,
        tasks,
        ..SimConfig::default()
    }
}

fn on(preset: &str, mut cfg: SimConfig) -> SimConfig {
    cfg.machine = Some(MachineSpec::Preset(preset.to_string()));
    cfg
}

fn scenarios() -> Vec<(&'static str, SimConfig)> {
    let mut hb = TaskSpec::new(
        "hb",
        Workload::Hackbench {
            groups: 1,
            fds: 20,
            threads: true,
            pipe: true,
            loops: 0,
            send_ns: 2_000,
            recv_ns: 2_000,
            pipe_msgs: 655,
        },
    );
    hb.slice_ns = Some(16 * MS);
    let mut rt = TaskSpec::new(
        "rtapp",
        Workload::Periodic {
            run_ns: 8_177_000,
            sleep_ns: 17_777_000,
            period_ns: None,
        },
    );
    rt.count = 16;
    rt.slice_ns = Some(16 * MS);
    let mut hogs = TaskSpec::new("hog", Workload::Hog);
    hogs.count = 2000;
    let mut timers = timer();
    timers.count = 8;
    let mut rt1000 = rt.clone();
    rt1000.count = 1000;
    let mut hogs984 = TaskSpec::new("hog", Workload::Hog);
    hogs984.count = 984;
    let mut timers16 = timer();
    timers16.count = 16;
    vec![
        ("a_ct_hackbench_10s", smp8(10, vec![timer(), hb.clone()])),
        ("b_ct_rtapp16_130s", smp8(130, vec![timer(), rt.clone()])),
        ("c_2000hogs_timers_2s", smp8(2, vec![hogs, timers])),
        (
            "rb5_ct_hackbench_10s",
            on("rb5", smp8(10, vec![timer(), hb])),
        ),
        (
            "rb5_ct_rtapp16_130s",
            on("rb5", smp8(130, vec![timer(), rt])),
        ),
        (
            "epyc_2000_tasks_1s",
            on("epyc-2x128c", smp8(1, vec![timers16, rt1000, hogs984])),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate");
    g.sample_size(10);
    for (name, cfg) in scenarios() {
        let r = simulate(cfg.clone());
        eprintln!("{name}: {} events, {} s simulated", r.events, r.sim_ns / S);
        g.bench_function(name, |b| b.iter(|| black_box(simulate(cfg.clone()))));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
