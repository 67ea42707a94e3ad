//! PELT-style averages (per-entity load tracking, docs/model.md §5):
//! geometric averages with a half-life of 32 periods of 1024 µs, in the
//! kernel's 1024 scale. Used for CPU utilisation (SIS_UTIL, wake_affine,
//! fit tests, EAS) and load (load balancing, group shares).
//!
//! Integer-only: the decay y^n is a 32.32 fixed-point table of
//! 2^32 * 0.5^(n/32) for n < 32 (computed offline, our own table; the
//! kernel's `runnable_avg_yN_inv` rounds a few entries differently) and a
//! shift per 32 periods. Within a period, the decay is interpolated
//! linearly, which keeps updates at any nanosecond cheap and exact enough.

use crate::config::Nanos;

/// One PELT period: 1024 * 1024 ns.
pub const PERIOD_NS: Nanos = 1 << 20;

/// 2^32 * 0.5^(n/32), n = 0..32.
const Y_INV: [u64; 32] = [
    4294967296, 4202935003, 4112874773, 4024744347, 3938502375, 3854108391, 3771522796, 3690706839,
    3611622602, 3534232977, 3458501653, 3384393094, 3311872529, 3240905930, 3171459999, 3103502151,
    3037000499, 2971923841, 2908241642, 2845924020, 2784941737, 2725266179, 2666869344, 2609723833,
    2553802833, 2499080104, 2445529971, 2393127307, 2341847523, 2291666560, 2242560871, 2194507416,
];

/// `val * y^periods`, periods counted in PELT periods.
pub fn decay_load(val: u64, periods: u64) -> u64 {
    if periods >= 63 * 32 {
        return 0;
    }
    mul_shr32(val >> (periods / 32), Y_INV[(periods % 32) as usize])
}

/// `(a * f) >> 32` for `f <= 2^32`, exact, in 64-bit multiplies only:
/// wasm32 has no 64x64->128 multiply (compiler-rt's `__multi3` on every
/// PELT update) and 128-bit adds and shifts take several instructions
/// there. The result is at most `a`, so it cannot overflow.
#[inline]
fn mul_shr32(a: u64, f: u64) -> u64 {
    debug_assert!(f <= 1 << 32);
    (a >> 32) * f + (((a & 0xffff_ffff) * f) >> 32)
}

/// `(a * f) >> 32` for accumulators past 64 bits (huge loads only).
fn mul_shr32_wide(a: u128, f: u64) -> u128 {
    match u64::try_from(a) {
        Ok(a) => u128::from(mul_shr32(a, f)),
        Err(_) => (a * u128::from(f)) >> 32,
    }
}

/// The 32.32 factor y^(delta / PERIOD_NS).
fn decay_factor(delta: Nanos) -> u64 {
    let periods = delta / PERIOD_NS;
    let frac = delta % PERIOD_NS;
    let whole = decay_load(1 << 32, periods);
    // Linear interpolation towards the next period.
    let next = decay_load(1 << 32, periods + 1);
    // (whole - next) < 2^32 and frac < 2^20: the product fits in u64.
    whole - (((whole - next) * frac) >> 20)
}

/// Extra fraction bits kept internally, so many small updates do not
/// lose the average to truncation.
const FRAC: u32 = 20;

/// A PELT signal: the average of an input level (0..=max) over time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pelt {
    /// The average, in the input's units.
    pub avg: u64,
    /// `avg` with FRAC more bits.
    acc: u128,
    last: Nanos,
}

/// `acc * f + (level << FRAC) * (1 - f)`, f in 32.32: in 64 bits when
/// everything fits (always, for the loads a scenario can build), the
/// same integers through 128 bits otherwise.
#[inline]
fn blend(acc: u128, level: u64, f: u64) -> u128 {
    if let Ok(a) = u64::try_from(acc) {
        if level < 1 << (64 - FRAC) {
            let keep = mul_shr32(a, f);
            let add = mul_shr32(level << FRAC, (1 << 32) - f);
            if let Some(sum) = keep.checked_add(add) {
                return u128::from(sum);
            }
        }
    }
    mul_shr32_wide(acc, f) + mul_shr32_wide(u128::from(level) << FRAC, (1 << 32) - f)
}

impl Pelt {
    /// Advances to `now`, with `level` held since the last update.
    pub fn update(&mut self, now: Nanos, level: u64) {
        if now <= self.last {
            return;
        }
        let f = decay_factor(now - self.last);
        self.acc = blend(self.acc, level, f);
        self.avg = (self.acc >> FRAC) as u64;
        self.last = now;
    }

    /// When the signal was last brought up to date.
    pub fn last_update(&self) -> Nanos {
        self.last
    }

    /// Adds a task's average that arrives with it (7.2.13
    /// `attach_entity_load_avg`, at a migrated task's enqueue). Not
    /// inlined: the page's wasm budget has no room for copies of its
    /// 128-bit arithmetic.
    #[inline(never)]
    pub fn attach(&mut self, avg: u64) {
        self.acc += u128::from(avg) << FRAC;
        self.avg = (self.acc >> FRAC) as u64;
    }

    /// Takes out a task's average that leaves with it, never below zero
    /// (`remove_entity_load_avg` or `detach_entity_load_avg`, then
    /// `sub_positive`).
    #[inline(never)]
    pub fn detach(&mut self, avg: u64) {
        self.acc = self.acc.saturating_sub(u128::from(avg) << FRAC);
        self.avg = (self.acc >> FRAC) as u64;
    }

    /// The average as of `now` without changing the state.
    pub fn peek(&self, now: Nanos, level: u64) -> u64 {
        let mut p = *self;
        p.update(now, level);
        p.avg
    }

    /// `self.update(now, level)` and `other.update(now, other_level)`,
    /// decaying once when both were last updated together.
    pub fn update_pair(&mut self, other: &mut Pelt, now: Nanos, level: u64, other_level: u64) {
        if self.last != other.last || now <= self.last {
            self.update(now, level);
            other.update(now, other_level);
            return;
        }
        let f = decay_factor(now - self.last);
        for (p, level) in [(self, level), (other, other_level)] {
            p.acc = blend(p.acc, level, f);
            p.avg = (p.acc >> FRAC) as u64;
            p.last = now;
        }
    }

    /// `(self.peek(now, level), other.peek(now, other_level))`, decaying
    /// once when both were last updated together (a CPU's utilisation
    /// and load always are): the same numbers for half the work, on the
    /// wakeup and balance paths that read every CPU.
    pub fn peek_pair(&self, other: &Pelt, now: Nanos, level: u64, other_level: u64) -> (u64, u64) {
        if self.last != other.last || now <= self.last {
            return (self.peek(now, level), other.peek(now, other_level));
        }
        let f = decay_factor(now - self.last);
        let avg = |acc: u128, level: u64| (blend(acc, level, f) >> FRAC) as u64;
        (avg(self.acc, level), avg(other.acc, other_level))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_64_bit_multiplies_agree_with_128_bit_ones() {
        let fs = [0u64, 1, 2194507416, 4294967295, 1 << 32];
        let mut a: u128 = 1;
        // Up to 2^95, so the 128-bit reference cannot overflow.
        while a < 1 << 95 {
            for &f in &fs {
                let want = |a: u128| (a * u128::from(f)) >> 32;
                assert_eq!(mul_shr32_wide(a, f), want(a), "{a} {f}");
                assert_eq!(mul_shr32_wide(a - 1, f), want(a - 1));
                if let Ok(a64) = u64::try_from(a) {
                    assert_eq!(u128::from(mul_shr32(a64, f)), want(a));
                }
                for level in [0u64, 1, 1024, 88761, (1 << 44) - 1, 1 << 44, u64::MAX] {
                    let add = (u128::from(level) << FRAC) * u128::from((1u64 << 32) - f);
                    let wide = want(a) + (add >> 32);
                    assert_eq!(blend(a, level, f), wide, "{a} {level} {f}");
                }
            }
            a = a * 7 + 3;
        }
        assert_eq!(mul_shr32(u64::MAX, 1 << 32), u64::MAX);
    }

    #[test]
    fn pairs_peek_and_update_like_two_singles() {
        let mut a = Pelt::default();
        let mut b = Pelt::default();
        let mut c = Pelt::default();
        for i in 1..200u64 {
            let now = i * 777_777;
            a.update(now, 1024 * (i % 2));
            b.update(now, 3 * i);
            if i % 3 == 0 {
                c.update(now, 5000);
            }
            let (mut a2, mut b2, mut c2) = (a, b, c);
            a2.update_pair(&mut b2, now + 12_345, 7, 9);
            let (mut a3, mut b3) = (a, b);
            a3.update(now + 12_345, 7);
            b3.update(now + 12_345, 9);
            assert_eq!((a2, b2), (a3, b3));
            a2.update_pair(&mut c2, now + 99_999, 1, 2);
            a3.update(now + 99_999, 1);
            let mut c3 = c;
            c3.update(now + 99_999, 2);
            assert_eq!((a2, c2), (a3, c3));
            for later in [now, now + 1, now + 500_000, now + 40 * PERIOD_NS] {
                let want = (a.peek(later, 1024), b.peek(later, 2048));
                assert_eq!(a.peek_pair(&b, later, 1024, 2048), want);
                let want = (a.peek(later, 0), c.peek(later, 7));
                assert_eq!(a.peek_pair(&c, later, 0, 7), want);
            }
        }
    }

    #[test]
    fn an_attached_average_decays_like_its_own_history() {
        // A CPU that ran a task alone has the task's average; moving it
        // to an idle CPU and on decaying both gives what the task's own
        // signal gives (PELT is linear in its level).
        let (mut task, mut src, mut dst) = (Pelt::default(), Pelt::default(), Pelt::default());
        let t0 = 40 * PERIOD_NS + 12_345;
        task.update(t0, 1024);
        src.update(t0, 1024);
        dst.update(t0, 0);
        assert_eq!(task, src);
        src.detach(task.avg);
        dst.attach(task.avg);
        assert!(src.avg == 0 && dst.avg == task.avg, "{src:?} {dst:?}");
        let t1 = t0 + 7 * PERIOD_NS;
        task.update(t1, 0);
        dst.update(t1, 0);
        assert!(dst.avg.abs_diff(task.avg) <= 1, "{} {}", dst.avg, task.avg);
        // Taking out more than is there leaves zero, not a wrap.
        src.detach(5000);
        assert_eq!((src.avg, src.acc), (0, 0));
    }

    #[test]
    fn half_life_is_32_periods() {
        assert_eq!(decay_load(1024, 32), 512);
        assert_eq!(decay_load(1024, 64), 256);
        assert_eq!(decay_load(1024, 0), 1024);
        assert_eq!(decay_load(u64::MAX, 63 * 32), 0);
    }

    #[test]
    fn a_busy_signal_converges_to_its_level_and_decays_when_idle() {
        let mut p = Pelt::default();
        p.update(200 * PERIOD_NS, 1024);
        assert!(p.avg > 1000, "{}", p.avg);
        p.update(232 * PERIOD_NS, 0);
        assert!((p.avg as i64 - 512).abs() < 16, "{}", p.avg);
        // Updating in many small steps gives about the same as one step.
        let mut a = Pelt::default();
        let mut b = Pelt::default();
        for i in 1..=1000u64 {
            a.update(i * 100_000, 1024);
        }
        b.update(1000 * 100_000, 1024);
        assert!(
            (a.avg as i64 - b.avg as i64).abs() <= 8,
            "{} vs {}",
            a.avg,
            b.avg
        );
    }
}
