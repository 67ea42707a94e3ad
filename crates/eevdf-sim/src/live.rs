//! Latency summaries kept as a run goes, for progress views.
//!
//! A snapshot of a running simulation must cost what changed since the
//! last one, not a clone and a finish of the whole run (issue 16: 243 s in
//! the page for 7 s of CLI). [`LiveLatency`] is an observer of
//! [`SimEvent::Latency`] that adds each sample to one fixed-size
//! log-linear histogram per `task` directive, so reading percentiles
//! walks at most [`LIVE_BUCKETS`] counters whatever the number of
//! samples. Values keep [`LIVE_BITS`] significant bits, as
//! [`crate::metrics`] coarsens, so a live percentile is the exact one
//! with its low bits cleared (`tests`); the final result stays exact.

use crate::config::Nanos;
use crate::metrics::{widen, LatencyStats};
use crate::observe::{Interest, Observer, SimEvent};
use crate::observer_any;
use crate::workload::Tid;

/// Significant bits a live value keeps: 1/256 relative precision.
pub const LIVE_BITS: u32 = 9;
/// Counters of one histogram at most (values up to 2^64 ns).
pub const LIVE_BUCKETS: usize = ((64 - LIVE_BITS as usize) + 2) << (LIVE_BITS - 1);

/// The bucket of `v`: `v` itself below 2^LIVE_BITS, then 256 buckets
/// per power of two.
fn bucket(v: Nanos) -> usize {
    let width = 64 - v.leading_zeros();
    if width <= LIVE_BITS {
        v as usize
    } else {
        let drop = width - LIVE_BITS;
        ((drop as usize) << (LIVE_BITS - 1)) + (v >> drop) as usize
    }
}

/// The smallest value of bucket `i` (`metrics::quantize` of its values).
fn bucket_value(i: usize) -> Nanos {
    let half = 1usize << (LIVE_BITS - 1);
    if i < 2 * half {
        return i as Nanos;
    }
    let drop = (i / half - 1) as u32;
    ((i % half + half) as Nanos) << drop
}

/// One distribution in fixed buckets.
#[derive(Clone, Debug, Default)]
pub struct LiveHist {
    /// Grown to the highest bucket seen, never beyond [`LIVE_BUCKETS`].
    counts: Vec<u64>,
    samples: u64,
    sum_ns: u128,
    min: Nanos,
    max: Nanos,
    max_at: Option<Nanos>,
}

impl LiveHist {
    /// Records a wakeup due at `at` with latency `v`.
    pub fn record_at(&mut self, v: Nanos, at: Nanos) {
        if self.samples == 0 || v > self.max {
            self.max_at = Some(at);
        }
        self.record(v);
    }

    pub fn record(&mut self, v: Nanos) {
        let b = bucket(v);
        debug_assert!(b < LIVE_BUCKETS, "bucket {b} of {v}");
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        widen(&mut self.min, &mut self.max, self.samples == 0, v);
        self.samples += 1;
        self.sum_ns += u128::from(v);
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Counters a read walks: bounded by [`LIVE_BUCKETS`], not samples.
    pub fn width(&self) -> usize {
        self.counts.len()
    }

    /// p50 to p99.9 by cyclictest's rank rule (the smallest value whose
    /// cumulative count reaches ceil(N * p)), in one pass.
    pub fn stats(&self) -> LatencyStats {
        if self.samples == 0 {
            return LatencyStats::default();
        }
        let rank = |num: u128, den: u128| (u128::from(self.samples) * num).div_ceil(den).max(1);
        let ranks = [rank(50, 100), rank(90, 100), rank(99, 100), rank(999, 1000)];
        let mut out = [self.max; 4];
        let mut next = 0;
        let mut cum: u128 = 0;
        for (i, c) in self.counts.iter().enumerate() {
            cum += u128::from(*c);
            while next < 4 && cum >= ranks[next] {
                out[next] = bucket_value(i).clamp(self.min, self.max);
                next += 1;
            }
            if next == 4 {
                break;
            }
        }
        LatencyStats {
            samples: self.samples,
            sum_ns: self.sum_ns,
            min: self.min,
            p50: out[0],
            p90: out[1],
            p99: out[2],
            p99_9: out[3],
            max: self.max,
            max_at: self.max_at,
        }
    }

    /// (value, count) of the non-empty buckets, increasing.
    pub fn buckets(&self) -> Vec<(Nanos, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (bucket_value(i), *c))
            .collect()
    }
}

/// Wakeup latencies per `task` directive, as they happen.
#[derive(Clone, Debug)]
pub struct LiveLatency {
    directive_of: Vec<usize>,
    hists: Vec<LiveHist>,
}

impl LiveLatency {
    /// `directive_of[tid]` is thread `tid`'s directive, of `directives`.
    pub fn new(directive_of: Vec<usize>, directives: usize) -> Self {
        LiveLatency {
            directive_of,
            hists: vec![LiveHist::default(); directives],
        }
    }

    /// The histogram of directive `d`.
    pub fn hist(&self, d: usize) -> &LiveHist {
        &self.hists[d]
    }
}

impl Observer for LiveLatency {
    fn event(&mut self, e: &SimEvent) {
        if let SimEvent::Latency {
            task,
            latency,
            woke,
            ..
        } = *e
        {
            let d = self.directive_of.get(task as Tid).copied();
            if let Some(h) = d.and_then(|d| self.hists.get_mut(d)) {
                h.record_at(latency, woke);
            }
        }
    }

    fn interest(&self) -> Interest {
        Interest::LATENCY
    }

    observer_any!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LatencyHist;
    use proptest::prelude::*;

    fn quantized(v: Nanos) -> Nanos {
        crate::metrics::quantize(v, LIVE_BITS)
    }

    #[test]
    fn buckets_are_contiguous_and_invert() {
        let mut last = 0;
        for v in (0..5000u64).chain([u64::MAX / 3, u64::MAX]) {
            let b = bucket(v);
            assert!(
                b >= last && b <= last + 1 || v > 5000,
                "{v}: {b} after {last}"
            );
            assert_eq!(bucket_value(b), quantized(v), "{v}");
            assert!(b < LIVE_BUCKETS, "{v}: {b}");
            last = b;
        }
        assert_eq!(bucket(u64::MAX), LIVE_BUCKETS - 1);
    }

    proptest! {
        /// A live percentile is the exact one with its low bits cleared.
        #[test]
        fn live_percentiles_are_the_exact_ones_quantized(
            vals in proptest::collection::vec(0u64..50_000_000, 1..400),
        ) {
            let mut live = LiveHist::default();
            let mut exact = LatencyHist::new();
            for v in &vals {
                live.record(*v);
                exact.record(*v);
            }
            let (l, e) = (live.stats(), exact.stats());
            let q = |v: Nanos| quantized(v).clamp(e.min, e.max);
            prop_assert_eq!((l.samples, l.sum_ns, l.min, l.max), (e.samples, e.sum_ns, e.min, e.max));
            prop_assert_eq!([l.p50, l.p90, l.p99, l.p99_9], [q(e.p50), q(e.p90), q(e.p99), q(e.p99_9)]);
        }
    }
}
