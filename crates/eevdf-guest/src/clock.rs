//! Clocks and sleeps in integer nanoseconds of `CLOCK_MONOTONIC` (virtual
//! time under QEMU `-icount`), and CPU burning calibrated by the
//! thread's own CPU clock.

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

/// Burns CPU without system calls, as rt-app's calibrated loops and a
/// plain `while (1)` do. Reading the thread's CPU clock during a burst
/// would be a system call whose `task_sched_runtime()` runs
/// `update_curr()`, so the kernel would see the slice end within one
/// read instead of at the next tick (measured: ct-rtapp on 6.12 had a
/// p99.9 of 171 us against the simulator's 3980 us). Under `-icount`
/// an iteration always costs the same, so one calibration per process
/// is exact.
#[derive(Debug, Clone, Copy)]
pub struct Burner {
    /// Iterations per millisecond of CPU time.
    iters_per_ms: u64,
}

static ITERS_PER_MS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

impl Burner {
    /// The process's calibrated burner; the first call calibrates (about
    /// 3 ms of CPU), so call it before the measured window.
    pub fn calibrated() -> Burner {
        Burner {
            iters_per_ms: *ITERS_PER_MS.get_or_init(calibrate),
        }
    }

    /// Runs `ns` of CPU work.
    pub fn burn(&self, ns: Nanos) {
        spin(ns.saturating_mul(self.iters_per_ms) / 1_000_000);
    }

    /// Spins until `CLOCK_MONOTONIC` (vDSO) reaches `t`, reading it every
    /// 5 us of work.
    pub fn spin_until(&self, t: Nanos) {
        while now() < t {
            self.burn(5_000);
        }
    }
}

/// Iterations per millisecond: the fastest of five 1 ms rounds by the
/// thread's CPU clock (an interrupt in a round only makes it slower; the
/// later rounds find a native CPU's clock ramped up).
fn calibrate() -> u64 {
    const ROUND: u64 = 1 << 18;
    let mut best = u64::MAX;
    for _ in 0..5 {
        let before = thread_cpu();
        spin(ROUND);
        best = best.min(thread_cpu().saturating_sub(before).max(1));
    }
    (ROUND.saturating_mul(1_000_000) / best).clamp(1, 1 << 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burn_runs_about_the_asked_cpu_time() {
        let b = Burner::calibrated();
        let c0 = thread_cpu();
        b.burn(5_000_000);
        let used = thread_cpu() - c0;
        // Exact under -icount; a native host may change speed after the
        // calibration (and tests run in parallel), so within 2x here.
        assert!((2_500_000..10_000_000).contains(&used), "{used}");
    }

    #[test]
    fn sleep_until_the_past_returns_at_once() {
        let t = now();
        sleep_until(t.saturating_sub(1_000_000)).unwrap();
        sleep_until(t + 2_000_000).unwrap();
        assert!(now() >= t + 2_000_000);
    }
}
