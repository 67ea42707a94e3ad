//! What a simulation reports: per-thread and per-directive latency and
//! CPU time, per-CPU busy time and switches, workload sections.

use crate::config::Nanos;
use crate::metrics::LatencyStats;
use crate::workload::RoleKind;

/// One simulated thread (`NAME.I`).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskResult {
    /// `NAME.I`: the directive's name and the thread's creation index.
    pub name: String,
    /// Index of the `task` directive that created it.
    pub directive: usize,
    pub role: RoleKind,
    pub cpu_ns: Nanos,
    pub wakeups: u64,
    pub migrations: u64,
    pub latency: LatencyStats,
}

/// All threads of one `task` directive together.
#[derive(Clone, Debug, PartialEq)]
pub struct NameResult {
    pub name: String,
    pub tasks: u32,
    pub cpu_ns: Nanos,
    pub latency: LatencyStats,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuResult {
    pub cpu: u32,
    pub busy_ns: Nanos,
    /// Context switches, into idle too (`rq->nr_switches`).
    pub switches: u64,
    /// Time-averaged `nr_running` (delayed tasks included), x1000.
    pub nr_running_milli: u64,
    /// PELT utilisation at the end, 0..=1024 of this CPU's capacity.
    pub util: u64,
    /// This CPU's capacity (1024 = the biggest CPU).
    pub capacity: u32,
}

/// Migrations by the lowest sched domain spanning source and target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainResult {
    /// `SMT`, `CLS`, `MC`, `PKG`, `NUMA`, ...
    pub level: String,
    pub migrations: u64,
}

/// hackbench's own numbers, per directive.
#[derive(Clone, Debug, PartialEq)]
pub struct HackbenchResult {
    pub name: String,
    /// Messages delivered (all groups).
    pub messages: u64,
    /// Time when every sender and receiver finished, if they did.
    pub completion_ns: Option<Nanos>,
    /// Messages per simulated second.
    pub throughput: f64,
}

/// schbench's own numbers, per directive.
#[derive(Clone, Debug, PartialEq)]
pub struct SchbenchResult {
    pub name: String,
    pub requests: u64,
    /// Requests per simulated second.
    pub rps: f64,
    /// Wake call to request completion.
    pub request_latency: LatencyStats,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Totals {
    pub switches: u64,
    pub migrations: u64,
    pub wakeups: u64,
}

/// Why a run stopped before its duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partial {
    /// The event budget it reached (`SimConfig::max_events`).
    pub max_events: u64,
}

/// The result of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    /// Simulated time covered: the duration, or where a partial run
    /// stopped.
    pub sim_ns: Nanos,
    /// The scenario's `warmup`: latencies count wakeups from here on.
    pub warmup_ns: Nanos,
    /// `Some` when the event budget stopped the run early.
    pub partial: Option<Partial>,
    pub events: u64,
    pub by_name: Vec<NameResult>,
    pub tasks: Vec<TaskResult>,
    pub cpus: Vec<CpuResult>,
    pub totals: Totals,
    /// Migrations per domain level, bottom-up (empty on one CPU).
    pub domains: Vec<DomainResult>,
    pub hackbench: Vec<HackbenchResult>,
    pub schbench: Vec<SchbenchResult>,
}
