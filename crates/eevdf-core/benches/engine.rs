//! Engine benchmarks (criterion). CI runs them once in `--test` mode;
//! `cargo bench -p eevdf-core` measures.
//!
//! `cycle/N`: one scheduler cycle on a runqueue with N always-runnable
//! tasks: advance the clock one tick, `task_tick` (update_curr), and
//! `pick_next_task` (pick_eevdf + put_prev/set_next). Slices are shorter
//! than a tick, so every cycle switches tasks. Target: the cost at 4096
//! entities is at most 3x the cost at 8 (the pick is O(log n)).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use eevdf_core::{
    calc_delta_fair, CfsRqId, EnqueueFlags, Features, LoadWeight, Policy, Rq, RqConfig,
};

fn runqueue(n: usize) -> Rq {
    let mut rq = Rq::new(RqConfig::new(Features::default(), 8, 1000));
    for i in 0..n {
        let nice = (i % 7) as i32 - 3;
        let id = rq.create_task(
            CfsRqId::ROOT,
            LoadWeight::from_nice(nice),
            Policy::Normal,
            None,
        );
        rq.enqueue_task(id, EnqueueFlags::INITIAL);
    }
    rq.pick_next_task();
    rq
}

fn bench_cycle(c: &mut Criterion) {
    let mut g = c.benchmark_group("cycle");
    for n in [1usize, 8, 64, 512, 4096] {
        let mut rq = runqueue(n);
        let tick = rq.config.tick_nsec;
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                let now = rq.clock + tick;
                rq.set_clock(now);
                rq.task_tick(false);
                black_box(rq.pick_next_task())
            })
        });
    }
    g.finish();
}

fn bench_calc_delta_fair(c: &mut Criterion) {
    let lw = LoadWeight::from_nice(5);
    c.bench_function("calc_delta_fair nice 5", |b| {
        b.iter(|| calc_delta_fair(black_box(2_800_000), black_box(&lw)))
    });
}

criterion_group!(benches, bench_cycle, bench_calc_delta_fair);
criterion_main!(benches);
