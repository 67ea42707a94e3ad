//! The simulator's only source of randomness: xoshiro256++ seeded from one
//! `u64`, with our own integer sampling code. `rand`'s distributions do not
//! promise value stability across versions and float `exp`/`ln` differ
//! between native and wasm libms, so every draw here is integer-only and
//! bit-identical on every target.

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A seeded, cloneable PRNG.
#[derive(Clone, Debug)]
pub struct SimRng(Xoshiro256PlusPlus);

impl SimRng {
    pub fn new(seed: u64) -> Self {
        SimRng(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, n)` without modulo bias (Lemire's multiply-and-reject).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = self.next_u64() as u128 * n as u128;
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform in `[lo, hi]`.
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi);
        match (hi - lo).checked_add(1) {
            Some(n) => lo + self.below(n),
            None => self.next_u64(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let mut a = SimRng::new(42);
        let mut b = SimRng::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn stream_is_pinned() {
        // A golden value: if a dependency update changes the stream, saved
        // scenario links would stop replaying; this test catches it.
        let mut r = SimRng::new(1);
        let first: Vec<u64> = (0..3).map(|_| r.below(1_000_000)).collect();
        assert_eq!(first, GOLDEN);
    }
    const GOLDEN: [u64; 3] = [811_612, 747_104, 100_150];

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = SimRng::new(7);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            let x = r.below(10);
            seen[x as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(r.range_inclusive(5, 5), 5);
        let _ = r.range_inclusive(0, u64::MAX);
    }
}
