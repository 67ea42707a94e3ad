//! Latency samples and their percentiles.
//!
//! Percentiles follow cyclictest's rank rule: the p-th percentile is the
//! smallest value whose cumulative count reaches ceil(p * N). Values are
//! kept exactly (a sorted map from nanoseconds to counts) until a
//! histogram holds [`MAX_DISTINCT`] distinct values; then, to bound
//! memory, values keep only their top significant bits (log-linear, first
//! 1/8192 relative precision, halving as needed), deterministically.

use std::collections::BTreeMap;

use crate::config::Nanos;

/// Distinct values kept before coarsening.
pub const MAX_DISTINCT: usize = 1 << 16;

/// Summary of one latency distribution (all values in ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LatencyStats {
    pub samples: u64,
    pub sum_ns: u128,
    pub min: Nanos,
    pub p50: Nanos,
    pub p90: Nanos,
    pub p99: Nanos,
    pub p99_9: Nanos,
    pub max: Nanos,
    /// When the wakeup with the max latency was due (the first of equal
    /// ones), as `perf sched latency` shows it; `None` when the samples
    /// came without times (a kernel run's histogram).
    pub max_at: Option<Nanos>,
}

impl LatencyStats {
    /// Mean in ns (0 with no samples).
    pub fn mean_ns(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.samples as f64
        }
    }
}

/// Takes `v` into the range `min..=max` (`first`: the range is empty).
pub(crate) fn widen(min: &mut Nanos, max: &mut Nanos, first: bool, v: Nanos) {
    if first {
        (*min, *max) = (v, v);
    } else {
        (*min, *max) = ((*min).min(v), (*max).max(v));
    }
}

/// A latency histogram: exact while small, log-linear beyond.
#[derive(Clone, Debug)]
pub struct LatencyHist {
    counts: BTreeMap<Nanos, u64>,
    samples: u64,
    sum_ns: u128,
    min: Nanos,
    max: Nanos,
    max_at: Option<Nanos>,
    /// Significant bits kept per value (64 = exact).
    bits: u32,
}

/// `v` with only its top `bits` significant bits kept (64 = exact).
pub fn quantize(v: Nanos, bits: u32) -> Nanos {
    let width = 64 - v.leading_zeros();
    if width <= bits {
        v
    } else {
        let drop = width - bits;
        (v >> drop) << drop
    }
}

impl Default for LatencyHist {
    /// Exact (a derived default would keep 0 significant bits and read
    /// every sample as 0).
    fn default() -> Self {
        LatencyHist::new()
    }
}

impl LatencyHist {
    pub fn new() -> Self {
        LatencyHist {
            counts: BTreeMap::new(),
            samples: 0,
            sum_ns: 0,
            min: 0,
            max: 0,
            max_at: None,
            bits: 64,
        }
    }

    pub fn record(&mut self, v: Nanos) {
        self.record_n(v, 1);
    }

    /// Records a wakeup due at `at` with latency `v`.
    pub fn record_at(&mut self, v: Nanos, at: Nanos) {
        if self.samples == 0 || v > self.max {
            self.max_at = Some(at);
        }
        self.record_n(v, 1);
    }

    /// Records `n` samples of value `v` (a histogram read back from a
    /// kernel run's report); `n == 0` records nothing.
    pub fn record_n(&mut self, v: Nanos, n: u64) {
        if n == 0 {
            return;
        }
        widen(&mut self.min, &mut self.max, self.samples == 0, v);
        self.samples += n;
        self.sum_ns += u128::from(v) * u128::from(n);
        *self.counts.entry(quantize(v, self.bits)).or_insert(0) += n;
        if self.counts.len() > MAX_DISTINCT {
            self.coarsen();
        }
    }

    fn coarsen(&mut self) {
        self.bits = if self.bits == 64 { 13 } else { self.bits - 1 };
        let old = std::mem::take(&mut self.counts);
        for (v, c) in old {
            *self.counts.entry(quantize(v, self.bits)).or_insert(0) += c;
        }
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &LatencyHist) {
        if other.samples == 0 {
            return;
        }
        if self.samples == 0 || other.max > self.max {
            self.max_at = other.max_at;
        }
        if self.samples == 0 {
            self.min = other.min;
            self.max = other.max;
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.samples += other.samples;
        self.sum_ns += other.sum_ns;
        self.bits = self.bits.min(other.bits);
        for (v, c) in &other.counts {
            *self.counts.entry(quantize(*v, self.bits)).or_insert(0) += c;
        }
        if self.bits < 64 {
            let old = std::mem::take(&mut self.counts);
            for (v, c) in old {
                *self.counts.entry(quantize(v, self.bits)).or_insert(0) += c;
            }
        }
        while self.counts.len() > MAX_DISTINCT {
            self.coarsen();
        }
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// (value in ns, count) in increasing value order.
    pub fn buckets(&self) -> Vec<(Nanos, u64)> {
        self.counts.iter().map(|(v, c)| (*v, *c)).collect()
    }

    /// The smallest value whose cumulative count reaches
    /// ceil(samples * num / den); `None` without samples.
    pub fn percentile(&self, num: u64, den: u64) -> Option<Nanos> {
        if self.samples == 0 {
            return None;
        }
        let rank = (u128::from(self.samples) * u128::from(num))
            .div_ceil(u128::from(den))
            .max(1);
        let mut cum: u128 = 0;
        for (v, c) in &self.counts {
            cum += u128::from(*c);
            if cum >= rank {
                // The exact max is known even when coarsened.
                return Some((*v).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    pub fn stats(&self) -> LatencyStats {
        if self.samples == 0 {
            return LatencyStats::default();
        }
        let p = |n, d| self.percentile(n, d).unwrap_or(0);
        LatencyStats {
            samples: self.samples,
            sum_ns: self.sum_ns,
            min: self.min,
            p50: p(50, 100),
            p90: p(90, 100),
            p99: p(99, 100),
            p99_9: p(999, 1000),
            max: self.max,
            max_at: self.max_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn max_at_is_the_first_wakeup_with_the_max_and_merges_with_it() {
        let mut a = LatencyHist::new();
        for (v, at) in [(5, 10), (9, 20), (9, 30), (2, 40)] {
            a.record_at(v, at);
        }
        assert_eq!((a.stats().max, a.stats().max_at), (9, Some(20)));
        let mut b = LatencyHist::new();
        b.record_at(12, 7);
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.stats().max_at, Some(7));
        let mut m = b.clone();
        m.merge(&a);
        assert_eq!(m.stats().max_at, Some(7));
        // Untimed samples (a kernel run's histogram) know no time.
        let mut k = LatencyHist::new();
        k.record_n(9, 3);
        assert_eq!(k.stats().max_at, None);
    }

    #[test]
    fn rank_rule_matches_cyclictest() {
        let mut h = LatencyHist::new();
        for v in 1..=10u64 {
            h.record(v * 1000);
        }
        // ceil(0.5 * 10) = 5th value; ceil(0.9 * 10) = 9th; ceil(0.99*10) = 10th.
        let s = h.stats();
        assert_eq!(
            (s.p50, s.p90, s.p99, s.max, s.min),
            (5000, 9000, 10000, 10000, 1000)
        );
        assert_eq!(s.mean_ns(), 5500.0);
        assert_eq!(LatencyHist::new().stats(), LatencyStats::default());
        let mut d = LatencyHist::default();
        d.record(1234);
        assert_eq!(d.stats().p50, 1234, "the default histogram is exact");
    }

    #[test]
    fn record_n_equals_n_records() {
        let (mut a, mut b) = (LatencyHist::new(), LatencyHist::new());
        for (v, n) in [(7u64, 3u64), (2, 1), (9, 0), (7, 2)] {
            a.record_n(v, n);
            for _ in 0..n {
                b.record(v);
            }
        }
        assert_eq!(a.stats(), b.stats());
        assert_eq!(a.buckets(), b.buckets());
        assert_eq!(a.buckets(), vec![(2, 1), (7, 5)]);
    }

    proptest! {
        #[test]
        fn exact_percentiles_match_a_sorted_vector(vals in prop::collection::vec(0u64..1_000_000, 1..500)) {
            let mut h = LatencyHist::new();
            for v in &vals { h.record(*v); }
            let mut sorted = vals.clone();
            sorted.sort_unstable();
            for (n, d) in [(50u64, 100u64), (90, 100), (99, 100), (999, 1000)] {
                let rank = (vals.len() as u64 * n).div_ceil(d).max(1) as usize;
                prop_assert_eq!(h.percentile(n, d), Some(sorted[rank - 1]));
            }
        }

        #[test]
        fn coarsened_percentiles_stay_within_relative_precision(seed in 0u64..1000) {
            let mut h = LatencyHist::new();
            let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let mut vals = Vec::new();
            for _ in 0..(MAX_DISTINCT + 5000) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let v = (x >> 20) % 50_000_000;
                vals.push(v);
                h.record(v);
            }
            vals.sort_unstable();
            let rank = (vals.len() as u64 * 99).div_ceil(100) as usize;
            let exact = vals[rank - 1] as f64;
            let got = h.percentile(99, 100).unwrap() as f64;
            prop_assert!((exact - got).abs() <= exact / 4096.0 + 1.0, "{} vs {}", exact, got);
        }
    }
}
