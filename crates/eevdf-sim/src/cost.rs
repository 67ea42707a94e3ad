//! What a scenario costs to simulate, known before it runs: its threads
//! and an estimate of its events. Scenarios arrive from strangers (links
//! on a mailing list), so the parser refuses one over [`MAX_THREADS`] or
//! [`MAX_EVENTS`], and `Sim` stops at an event budget
//! (`SimConfig::max_events`) with a result marked partial.
//!
//! The estimate counts the events the simulator's loop handles: each
//! CPU's ticks (with their balance passes) and each thread's timers,
//! wakeups and burst ends. It is meant to be within 3x of the measured
//! count (`tests/cost.rs` checks every preset), not exact.

use crate::config::{Nanos, PreemptModel, SimConfig, TaskSpec, Workload};

/// Most threads one scenario may create (hackbench makes
/// groups x fds x 2, schbench messages x (workers + 1)). Each costs a
/// few hundred bytes; 4096 periodic tasks on epyc-2x128c are a real use.
pub const MAX_THREADS: u64 = 16_384;

/// Most events a scenario may be estimated at: about a minute of a
/// native CPU, and the default event budget of a run is a few times the
/// estimate, never more than [`MAX_EVENTS_BUDGET`].
pub const MAX_EVENTS: u64 = 2_000_000_000;

/// The largest default event budget (`SimConfig::max_events`).
pub const MAX_EVENTS_BUDGET: u64 = 4 * MAX_EVENTS;

const S: u128 = 1_000_000_000;

impl TaskSpec {
    /// The threads this directive creates.
    pub fn nr_threads(&self) -> u64 {
        match &self.workload {
            Workload::Hackbench { groups, fds, .. } => {
                u64::from((*groups).max(1)) * 2 * u64::from((*fds).max(1))
            }
            Workload::Schbench {
                message_threads,
                workers,
                ..
            } => u64::from((*message_threads).max(1)) * (1 + u64::from((*workers).max(1))),
            _ => u64::from(self.count.max(1)),
        }
    }
}

/// The estimated events per simulated second of one directive on
/// `nr_cpus` CPUs, saturating.
fn task_events_per_sec(t: &TaskSpec, nr_cpus: u32, kernel_preempts: bool, base_slice: u64) -> u128 {
    let rate = |period: Nanos| S / u128::from(period.max(1));
    let n = u128::from(t.nr_threads());
    let cpus = u128::from(nr_cpus.max(1));
    match &t.workload {
        // Expiry, wakeup, burst end (and the switches between).
        Workload::Timer { period_ns, .. } => n * 3 * rate(*period_ns),
        Workload::Periodic {
            run_ns,
            sleep_ns,
            period_ns,
        } => n * 3 * rate(period_ns.unwrap_or(run_ns.saturating_add(*sleep_ns))),
        // Ticks account for a hog.
        Workload::Hog => 0,
        // A burst ends at every wakeup: readers drain while senders write,
        // and a sender wakes one every few rounds over its receivers (two
        // on hackbench-1g's smp8, five on t1-clear-buddies' rb5; on one
        // CPU about four, fidelity-ct-hackbench). On one CPU whose kernel
        // can be preempted (`full`, `lazy`), threads blocked on a
        // preempted writer's pipe mutex make it ping-pong: about one
        // wakeup a round (fidelity-ct-hackbench under 7.2's lazy: five
        // times the events). On one CPU a writer on a slice longer than
        // the base keeps the CPU over its readers' wakeups, so it writes
        // until its pipe is full (fidelity-v2-hackbench's 16 ms: a 25th
        // of the events; with more CPUs the readers run elsewhere).
        Workload::Hackbench {
            fds,
            send_ns,
            recv_ns,
            pipe,
            pipe_msgs,
            ..
        } => {
            let busy = cpus.min(n);
            let rounds = if *pipe && kernel_preempts && cpus == 1 {
                1
            } else {
                4
            };
            let msgs = if cpus == 1 && t.slice_ns.is_some_and(|s| s > base_slice) {
                u64::from((*pipe_msgs).max(1))
            } else {
                rounds * u64::from((*fds).max(1))
            };
            let burst = u128::from(send_ns.min(recv_ns).max(&1).saturating_mul(msgs));
            busy * 3 * S / burst.max(1)
        }
        // Every round wakes every worker, which runs once and sleeps.
        Workload::Schbench {
            message_threads,
            request_ns,
            sleep_ns,
            ..
        } => {
            let round = u128::from(sleep_ns.saturating_add(*request_ns).max(1));
            let rounds = u128::from((*message_threads).max(1)) * S / round;
            3 * n * rounds / u128::from((*message_threads).max(1))
        }
    }
}

/// A scenario's size before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    pub threads: u64,
    pub cpus: u32,
    /// Estimated events per simulated second.
    pub events_per_sec: u64,
    /// Estimated events of the whole run.
    pub events: u64,
}

impl Cost {
    /// The cost of `cfg` on a machine of `nr_cpus` CPUs.
    pub fn of(cfg: &SimConfig, nr_cpus: u32) -> Cost {
        let kernel_preempts = matches!(cfg.preempt, PreemptModel::Full | PreemptModel::Lazy);
        let base_slice = cfg
            .sysctl
            .base_slice_ns
            .unwrap_or_else(|| cfg.features.base_slice_ns(nr_cpus));
        let threads = cfg
            .tasks
            .iter()
            .map(TaskSpec::nr_threads)
            .fold(0u64, u64::saturating_add);
        // A tick, and on busy machines a balance pass, per CPU and tick.
        let ticks = u128::from(cfg.hz.max(1)) * u128::from(nr_cpus.max(1)) * 2;
        let tasks: u128 = cfg
            .tasks
            .iter()
            .map(|t| task_events_per_sec(t, nr_cpus, kernel_preempts, base_slice))
            .sum();
        let per_sec = ticks.saturating_add(tasks);
        let events = per_sec.saturating_mul(u128::from(cfg.duration_ns)) / S;
        Cost {
            threads,
            cpus: nr_cpus,
            events_per_sec: u64::try_from(per_sec).unwrap_or(u64::MAX),
            events: u64::try_from(events).unwrap_or(u64::MAX),
        }
    }

    /// The default event budget of a run: four times the estimate plus a
    /// million, at most [`MAX_EVENTS_BUDGET`]; a function of the input
    /// only, so a partial result is as reproducible as a whole one.
    pub fn default_budget(&self) -> u64 {
        self.events
            .saturating_mul(4)
            .saturating_add(1_000_000)
            .min(MAX_EVENTS_BUDGET)
    }
}
