//! Clocks and sleeps in integer nanoseconds of `CLOCK_MONOTONIC` (virtual
//! time under QEMU `-icount`), and CPU burning measured by the thread's
//! own CPU clock.

use std::hint::black_box;

use nix::errno::Errno;
use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, clock_nanosleep, ClockId, ClockNanosleepFlags};

/// Nanoseconds.
pub type Nanos = u64;

/// A `timespec` in nanoseconds (negative parts read as 0).
pub fn ns_of(ts: TimeSpec) -> Nanos {
    let s = u64::try_from(ts.tv_sec()).unwrap_or(0);
    let n = u64::try_from(ts.tv_nsec()).unwrap_or(0);
    s.saturating_mul(1_000_000_000).saturating_add(n)
}

fn ts_of(ns: Nanos) -> TimeSpec {
    let s = (ns / 1_000_000_000).min(i64::MAX as u64) as i64;
    TimeSpec::new(s, (ns % 1_000_000_000) as i64)
}

/// `CLOCK_MONOTONIC` now (vDSO, no system call).
pub fn now() -> Nanos {
    clock_gettime(ClockId::CLOCK_MONOTONIC).map_or(0, ns_of)
}

/// The calling thread's CPU time.
pub fn thread_cpu() -> Nanos {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(0, ns_of)
}

/// Sleeps until absolute `CLOCK_MONOTONIC` time `at` (returns at once if
/// it has passed), as cyclictest does.
pub fn sleep_until(at: Nanos) -> Result<(), Errno> {
    let ts = ts_of(at);
    loop {
        match clock_nanosleep(
            ClockId::CLOCK_MONOTONIC,
            ClockNanosleepFlags::TIMER_ABSTIME,
            &ts,
        ) {
            Ok(_) => return Ok(()),
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// `n` iterations of integer work the optimiser cannot remove.
fn spin(n: u64) {
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64);
    for i in 0..n {
        x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
    }
    black_box(x);
}

/// Burns CPU in chunks sized from the speed it has learned, so that the
/// clock is read a few times per burst instead of in a tight loop (a
/// system call per read would make the burst mostly kernel time).
#[derive(Debug, Clone)]
pub struct Burner {
    /// Learned speed, iterations per microsecond.
    iters_per_us: u64,
}

impl Default for Burner {
    fn default() -> Self {
        Burner { iters_per_us: 100 }
    }
}

impl Burner {
    /// Runs a chunk aimed at `target_ns` and learns from `took_ns`
    /// (at most a factor of two per step, so one preemption during a
    /// chunk cannot wreck the estimate).
    fn chunk(&mut self, target_ns: Nanos, clock: fn() -> Nanos) {
        let iters = (target_ns.saturating_mul(self.iters_per_us) / 1000).max(8);
        let before = clock();
        spin(iters);
        let took = clock().saturating_sub(before).max(1);
        let measured = (iters.saturating_mul(1000) / took).max(1);
        let (lo, hi) = (self.iters_per_us / 2, self.iters_per_us.saturating_mul(2));
        self.iters_per_us = measured.clamp(lo.max(1), hi.max(1)).min(1 << 24);
    }

    /// Runs `ns` of this thread's CPU time.
    pub fn burn(&mut self, ns: Nanos) {
        let end = thread_cpu().saturating_add(ns);
        loop {
            let now = thread_cpu();
            if now >= end {
                return;
            }
            let left = end - now;
            self.chunk((left / 2).clamp(500, 50_000).min(left), thread_cpu);
        }
    }

    /// Spins until `CLOCK_MONOTONIC` reaches `t`, reading it every few
    /// microseconds of work.
    pub fn spin_until(&mut self, t: Nanos) {
        loop {
            let n = now();
            if n >= t {
                return;
            }
            self.chunk((t - n).min(5_000), now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burn_runs_about_the_asked_cpu_time() {
        let mut b = Burner::default();
        let c0 = thread_cpu();
        b.burn(5_000_000);
        let used = thread_cpu() - c0;
        assert!((5_000_000..6_000_000).contains(&used), "{used}");
    }

    #[test]
    fn sleep_until_the_past_returns_at_once() {
        let t = now();
        sleep_until(t.saturating_sub(1_000_000)).unwrap();
        sleep_until(t + 2_000_000).unwrap();
        assert!(now() >= t + 2_000_000);
    }
}
