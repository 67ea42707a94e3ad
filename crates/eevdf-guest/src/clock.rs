//! Clocks and sleeps in integer nanoseconds of `CLOCK_MONOTONIC` (virtual
//! time under QEMU `-icount`), and CPU burning calibrated against it.

use nix::errno::Errno;
use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, clock_nanosleep, ClockId, ClockNanosleepFlags};

use crate::sys::spin_exact;

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

/// Burns CPU without system calls, as rt-app's calibrated loops and a
/// plain `while (1)` do. Reading the thread's CPU clock during a burst
/// would be a system call whose `task_sched_runtime()` runs
/// `update_curr()`, so the kernel would see the slice end within one
/// read instead of at the next tick (measured: ct-rtapp on 6.12 had a
/// p99.9 of 171 us against the simulator's 3980 us). The loop is
/// [`spin_exact`], whose iterations are two instructions each, so under
/// `-icount` every iteration takes the same virtual time.
#[derive(Debug, Clone, Copy)]
pub struct Burner {
    /// Picoseconds per `spin_exact` iteration.
    ps_per_iter: u64,
}

static PS_PER_ITER: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

impl Burner {
    /// The process's calibrated burner; the first call calibrates (about
    /// 4.6 ms under `-icount`), so call it before the measured window.
    pub fn calibrated() -> Burner {
        Burner {
            ps_per_iter: *PS_PER_ITER.get_or_init(calibrate),
        }
    }

    /// Runs `ns` of CPU work.
    pub fn burn(&self, ns: Nanos) {
        spin_exact(ns.saturating_mul(1000) / self.ps_per_iter);
    }

    /// Spins until `CLOCK_MONOTONIC` (vDSO) reaches `t`, reading it every
    /// 5 us of work.
    pub fn spin_until(&self, t: Nanos) {
        while now() < t {
            self.burn(5_000);
        }
    }
}

/// Rounds of each length in [`calibrate`].
const CALIBRATION_ROUNDS: usize = 20;
/// The long round's least length: the clock reads are small against it.
const CALIBRATION_ROUND_NS: Nanos = 200_000;

/// Picoseconds per [`spin_exact`] iteration: the shortest of
/// [`CALIBRATION_ROUNDS`] rounds of two lengths by `CLOCK_MONOTONIC`,
/// the long less the short. An interrupt or a preemption only lengthens
/// a round, and the difference cancels the clock reads, so under
/// `-icount` (where every undisturbed round of a length takes the same
/// time) this is exact. Through 4f511025's guest the burner was
/// calibrated by the thread's CPU clock, which also counts an
/// interrupt's time and a switch's: calibrated among running threads,
/// an rt-app burst of 8,177 us held the CPU 8,114 us, interrupts
/// included (7.2.13, v2-rtapp, seed 1, traced); alone it held it 8,180
/// to 8,193 us, by boot.
fn calibrate() -> u64 {
    // 50,000 iterations take 200 us at -icount shift=1; a native CPU
    // needs more.
    let mut long: u64 = 50_000;
    while timed_spin(long) < CALIBRATION_ROUND_NS && long < 1 << 40 {
        long *= 2;
    }
    let short = long / 10;
    let (mut t_short, mut t_long) = (Nanos::MAX, Nanos::MAX);
    for _ in 0..CALIBRATION_ROUNDS {
        t_short = t_short.min(timed_spin(short));
        t_long = t_long.min(timed_spin(long));
    }
    let ps = t_long.saturating_sub(t_short).saturating_mul(1000) / (long - short);
    ps.clamp(1, 1 << 40)
}

/// `CLOCK_MONOTONIC` time of `spin_exact(n)`.
fn timed_spin(n: u64) -> Nanos {
    let t0 = now();
    spin_exact(n);
    now().saturating_sub(t0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burn_runs_about_the_asked_cpu_time() {
        // Exact under -icount (the kernel runs hold that). On a native
        // host the speed can change after the calibration: a busy SMT
        // sibling during it makes the later burn up to twice as fast.
        // So here: within 4x, and twice the ask burns about twice the
        // CPU, in one of three calibrate-and-burn attempts; a burner
        // that ignores its argument fails all three.
        let mut tries = Vec::new();
        for _ in 0..3 {
            let b = Burner::calibrated();
            let burn = |ns| {
                let c0 = thread_cpu();
                b.burn(ns);
                thread_cpu() - c0
            };
            let (one, two) = (burn(5_000_000), burn(10_000_000));
            tries.push((one, two));
            let ratio = two as f64 / one.max(1) as f64;
            if (1_250_000..20_000_000).contains(&one) && (1.5..2.5).contains(&ratio) {
                return;
            }
        }
        panic!("5 and 10 ms of burn took {tries:?} ns of CPU");
    }

    #[test]
    fn sleep_until_the_past_returns_at_once() {
        let t = now();
        sleep_until(t.saturating_sub(1_000_000)).unwrap();
        sleep_until(t + 2_000_000).unwrap();
        assert!(now() >= t + 2_000_000);
    }
}
