//! Discrete-event machine simulator around the EEVDF engine: time, CPUs, workloads, metrics.
//!
//! Time is integer nanoseconds; equal-time events fire in insertion order;
//! all randomness comes from one seeded [`rng::SimRng`]. A [`SimConfig`]
//! (machine, kernel, costs, workloads) runs to a [`SimResult`].

#![forbid(unsafe_code)]

pub mod config;
pub mod cost;
pub mod event;
pub mod live;
pub mod machine;
pub mod metrics;
pub mod observe;
pub mod pelt;
pub mod placement;
pub mod result;
pub mod rng;
pub mod shares;
pub mod topology;
pub mod trace;
pub mod workload;

pub use workload::hackbench;

pub use config::{Costs, GroupSpec, PreemptModel, SimConfig, Sysctl, TaskSpec, Workload};
pub use event::{EventQueue, Nanos};
pub use machine::balance::{
    calculate_imbalance, task_hot, BalanceDecision, GroupStats, GroupType, HotCheck,
};
pub use machine::{first_tick_phase, simulate, Sim, TurnCounts};
pub use metrics::{LatencyHist, LatencyStats};
pub use observe::{Interest, LagAt, Observer, SimEvent};
pub use result::{
    CpuResult, HackbenchResult, NameResult, Partial, SchbenchResult, SimResult, TaskResult, Totals,
};
pub use rng::SimRng;
pub use workload::RoleKind;
