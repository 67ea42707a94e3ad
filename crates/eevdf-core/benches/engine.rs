//! Engine micro-benchmarks (criterion). CI runs them once in `--test` mode;
//! `cargo bench -p eevdf-core` measures.

use criterion::{criterion_group, criterion_main, Criterion};
use eevdf_core::{calc_delta_fair, LoadWeight};
use std::hint::black_box;

fn bench_calc_delta_fair(c: &mut Criterion) {
    let lw = LoadWeight::from_nice(5);
    c.bench_function("calc_delta_fair nice 5", |b| {
        b.iter(|| calc_delta_fair(black_box(2_800_000), black_box(&lw)))
    });
}

criterion_group!(benches, bench_calc_delta_fair);
criterion_main!(benches);
