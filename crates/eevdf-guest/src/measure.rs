//! Reading the kernel's counters: a thread's CPU time, wakeups and
//! migrations (`/proc/.../schedstat`, `/proc/.../sched`), and each CPU's
//! busy time and context switches (`/proc/stat`, debugfs `sched/debug`).

use eevdf_scenario::guest::GuestCpu;
use nix::time::{clock_gettime, ClockId};

use crate::clock::Nanos;

/// One thread's counters at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadStats {
    pub cpu_ns: Nanos,
    /// `nr_wakeups` (0 without schedstats).
    pub wakeups: u64,
    pub migrations: u64,
}

impl ThreadStats {
    /// `self - earlier`, saturating.
    pub fn since(&self, earlier: &ThreadStats) -> ThreadStats {
        ThreadStats {
            cpu_ns: self.cpu_ns.saturating_sub(earlier.cpu_ns),
            wakeups: self.wakeups.saturating_sub(earlier.wakeups),
            migrations: self.migrations.saturating_sub(earlier.migrations),
        }
    }
}

/// Counters of the calling thread.
pub fn own_stats() -> Result<ThreadStats, String> {
    stats_at("/proc/thread-self", ClockId::CLOCK_THREAD_CPUTIME_ID)
}

/// Counters of thread `tid` of this process.
pub fn task_stats(tid: i32) -> Result<ThreadStats, String> {
    stats_at(&format!("/proc/self/task/{tid}"), thread_clock(tid))
}

/// The CPU-time clock of thread `tid` (`MAKE_THREAD_CPUCLOCK(tid,
/// CPUCLOCK_SCHED)`), readable for threads of the same process.
fn thread_clock(tid: i32) -> ClockId {
    ClockId::from_raw(((!(tid as u32)) << 3) as i32 | 6)
}

/// CPU time comes from the thread's CPU clock, which includes the
/// running slice not yet folded into `schedstat` (up to a tick);
/// `schedstat` is the fallback.
fn stats_at(dir: &str, clock: ClockId) -> Result<ThreadStats, String> {
    let read = |f: &str| {
        std::fs::read_to_string(format!("{dir}/{f}")).map_err(|e| format!("{dir}/{f}: {e}"))
    };
    // `sched` first: reading it costs the thread CPU time (much of it
    // under emulation) that must not fall between two readings.
    // It needs SCHED_DEBUG on older kernels; without it only the CPU
    // time is known.
    let sched = read("sched").unwrap_or_default();
    let cpu_ns = match clock_gettime(clock) {
        Ok(ts) => crate::clock::ns_of(ts),
        Err(_) => {
            let schedstat = read("schedstat")?;
            schedstat
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{dir}/schedstat: unexpected {schedstat:?}"))?
        }
    };
    Ok(ThreadStats {
        cpu_ns,
        wakeups: sched_field(&sched, "nr_wakeups").unwrap_or(0),
        migrations: sched_field(&sched, "nr_migrations").unwrap_or(0),
    })
}

/// The integer value of `key : value` in `/proc/PID/sched`, where the
/// printed key's last dotted part is `key` (`se.statistics.nr_wakeups`
/// on old kernels, `stats.nr_wakeups` or `nr_wakeups` on newer ones).
pub fn sched_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        let k = k.trim();
        (k.rsplit('.').next() == Some(key)).then(|| v.trim().parse().ok())?
    })
}

/// Per-CPU idle time (ns) from `/proc/stat`: idle + iowait, USER_HZ
/// (100) ticks. Busy time is the rest of the elapsed time: under NO_HZ
/// the idle time is measured exactly at each idle entry and exit, while
/// user and system time are sampled at ticks (and a thread that wakes
/// in step with the tick looks busy for the whole tick).
pub fn parse_proc_stat(text: &str) -> Vec<(u32, Nanos)> {
    const NS_PER_TICK: u64 = 10_000_000;
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let cpu: u32 = f.next()?.strip_prefix("cpu")?.parse().ok()?;
            // user nice system idle iowait ...
            let v: Vec<u64> = f.take(5).map(|x| x.parse().unwrap_or(0)).collect();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            Some((cpu, idle.saturating_mul(NS_PER_TICK)))
        })
        .collect()
}

/// Per-CPU `nr_switches` from debugfs `sched/debug` (` .nr_switches : N`
/// under each `cpu#N` heading; the first one per CPU is the rq's).
pub fn parse_sched_debug(text: &str) -> Vec<(u32, u64)> {
    let mut out: Vec<(u32, u64)> = Vec::new();
    let mut cur: Option<u32> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("cpu#") {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            cur = digits.parse().ok();
            continue;
        }
        let Some(c) = cur else { continue };
        let Some(v) = line.trim_start().strip_prefix(".nr_switches") else {
            continue;
        };
        if let Some(n) = v
            .trim_start()
            .strip_prefix(':')
            .and_then(|n| n.trim().parse().ok())
        {
            out.push((c, n));
            cur = None;
        }
    }
    out
}

/// One sample of every CPU's counters.
#[derive(Clone, Debug, Default)]
pub struct CpuSample {
    /// `CLOCK_MONOTONIC` when taken.
    pub at: Nanos,
    pub idle: Vec<(u32, Nanos)>,
    /// Empty when debugfs is not read (local mode).
    pub switches: Vec<(u32, u64)>,
}

/// Samples `/proc/stat` and, with `debugfs`, `sched/debug`.
pub fn sample_cpus(debugfs: bool) -> Result<CpuSample, String> {
    let stat = std::fs::read_to_string("/proc/stat").map_err(|e| format!("/proc/stat: {e}"))?;
    let switches = if debugfs {
        let path = "/sys/kernel/debug/sched/debug";
        let t = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        parse_sched_debug(&t)
    } else {
        Vec::new()
    };
    Ok(CpuSample {
        at: crate::clock::now(),
        idle: parse_proc_stat(&stat),
        switches,
    })
}

/// The per-CPU deltas for CPUs `0..nr` between two samples around a
/// window of `window_ns` (busy time clamped to it).
pub fn cpu_deltas(
    before: &CpuSample,
    after: &CpuSample,
    nr: u32,
    window_ns: Nanos,
) -> Vec<GuestCpu> {
    let get = |v: &[(u32, u64)], c: u32| v.iter().find(|x| x.0 == c).map_or(0, |x| x.1);
    let elapsed = after.at.saturating_sub(before.at);
    (0..nr)
        .map(|cpu| GuestCpu {
            cpu,
            busy_ns: elapsed
                .saturating_sub(get(&after.idle, cpu).saturating_sub(get(&before.idle, cpu)))
                .min(window_ns),
            switches: get(&after.switches, cpu).saturating_sub(get(&before.switches, cpu)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sched_fields_of_every_spelling() {
        let old = "x (1, #threads: 1)\n---\nse.nr_migrations   :   3\n\
                   se.statistics.nr_wakeups :  7\nse.statistics.nr_wakeups_sync : 2\n";
        assert_eq!(sched_field(old, "nr_wakeups"), Some(7));
        assert_eq!(sched_field(old, "nr_migrations"), Some(3));
        let new = "stats.nr_wakeups_local : 1\nstats.nr_wakeups : 9\nnr_migrations_cold : 4\n";
        assert_eq!(sched_field(new, "nr_wakeups"), Some(9));
        assert_eq!(sched_field(new, "nr_migrations"), None);
    }

    /// Spins `ns` of the calling thread's CPU time by its clock (a test
    /// needs the exact amount, which the calibrated burner only
    /// approximates on a native host).
    fn spin_cpu(ns: u64) {
        let end = crate::clock::thread_cpu() + ns;
        while crate::clock::thread_cpu() < end {}
    }

    #[test]
    fn a_threads_cpu_time_reads_the_same_from_inside_and_outside() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (back_tx, back_rx) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            spin_cpu(3_000_000);
            tx.send((nix::unistd::gettid().as_raw(), own_stats().unwrap()))
                .unwrap();
            back_rx.recv().unwrap();
        });
        let (tid, inside) = rx.recv().unwrap();
        // Work elsewhere in the process must not show in the thread's time.
        spin_cpu(20_000_000);
        let outside = task_stats(tid).unwrap();
        back_tx.send(()).unwrap();
        h.join().unwrap();
        assert!(inside.cpu_ns >= 3_000_000, "{inside:?}");
        // The main thread's 20 ms must not show; a loaded CI host (tests
        // in parallel, debug build) has cost the thread over 1 ms between
        // its reading and its sleep, so the bound is 10 ms.
        assert!(
            outside.cpu_ns >= inside.cpu_ns && outside.cpu_ns < inside.cpu_ns + 10_000_000,
            "{inside:?} then {outside:?}"
        );
    }

    #[test]
    fn proc_stat_idle_is_idle_and_iowait() {
        let t = "cpu  1 1 1 1 1 1 1 1 1 1\ncpu0 10 1 2 500 7 3 4 5 9 0\nintr 5\n";
        assert_eq!(parse_proc_stat(t), vec![(0, 507 * 10_000_000)]);
        let before = CpuSample {
            at: 0,
            idle: vec![(0, 100), (1, 0)],
            switches: vec![(0, 5)],
        };
        let after = CpuSample {
            at: 1000,
            idle: vec![(0, 400), (1, 0)],
            switches: vec![(0, 9)],
        };
        let d = cpu_deltas(&before, &after, 2, 900);
        assert_eq!((d[0].busy_ns, d[0].switches), (700, 4));
        assert_eq!((d[1].busy_ns, d[1].switches), (900, 0));
    }

    #[test]
    fn sched_debug_switches_per_cpu() {
        let t = "Sched Debug Version: v0.11\n\ncpu#0, 2100.000 MHz\n  .nr_running : 1\n\
                 \x20 .nr_switches                    : 1234\n  .nr_uninterruptible : 0\n\
                 cfs_rq[0]:/\n  .nr_switches : 99\ncpu#1\n  .nr_switches : 56\n";
        assert_eq!(parse_sched_debug(t), vec![(0, 1234), (1, 56)]);
    }
}
