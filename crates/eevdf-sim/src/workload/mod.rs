//! Workload state machines: what a thread does when its CPU burst ends,
//! and whom it wakes. Bursts are stated in work (nanoseconds on a CPU of
//! capacity 1024); a smaller CPU takes longer to finish them.
//!
//! hackbench's bursts are folded over many messages, but end at every
//! write or read that wakes somebody (see [`hackbench`]). One module per
//! kind holds its rules; the simulator carries out what they decide
//! (timers, wakeups, the engine's calls).

pub mod hackbench;
pub mod schbench;
pub mod stats;
pub mod timer;

pub use schbench::{Message, Worker, SCHBENCH_WAKE_CPU_NS};
pub use stats::WorkloadStats;
pub use timer::{Periodic, Timer};

use crate::config::Nanos;

/// Index of a thread in the simulator.
pub type Tid = usize;

/// Burst length meaning "never ends" (hogs).
pub const FOREVER: Nanos = u64::MAX / 4;

/// `SCHED_CAPACITY_SCALE`: a CPU of this capacity does one nanosecond
/// of work per nanosecond.
pub const CAPACITY_SCALE: u64 = 1024;

/// Wall time a CPU of `capacity` needs for `work` (nanoseconds of work
/// on a 1024 CPU), rounded up so the work is done when it ends.
/// Workloads state their bursts in work: a little core of capacity 284
/// takes 3.6 times as long, as on the RB5 the seeds measured.
pub fn wall_for_work(work: Nanos, capacity: u64) -> Nanos {
    debug_assert!(capacity > 0 && capacity <= CAPACITY_SCALE);
    if capacity == CAPACITY_SCALE || work >= FOREVER {
        return work;
    }
    let wall = (u128::from(work) * u128::from(CAPACITY_SCALE)).div_ceil(u128::from(capacity));
    Nanos::try_from(wall).unwrap_or(FOREVER).min(FOREVER)
}

/// Work a CPU of `capacity` does in `wall` nanoseconds (rounded down;
/// the inverse of [`wall_for_work`] up to rounding).
pub fn work_in_wall(wall: Nanos, capacity: u64) -> Nanos {
    debug_assert!(capacity > 0 && capacity <= CAPACITY_SCALE);
    if capacity == CAPACITY_SCALE {
        return wall;
    }
    // wall * capacity < 2^64 * 2^10 / 2^10: fits after the division.
    (u128::from(wall) * u128::from(capacity) / u128::from(CAPACITY_SCALE)) as Nanos
}

/// Per-thread workload state.
#[derive(Clone, Debug)]
pub enum Role {
    Timer(Timer),
    Periodic(Periodic),
    Hog,
    Sender {
        /// The group's pipes: `pipe_base .. pipe_base + npipes`.
        pipe_base: usize,
        npipes: usize,
        /// Next receiver (round robin).
        next: usize,
        /// Messages still to send (`u64::MAX` = forever).
        left: u64,
        send: Nanos,
        /// Messages written by the burst in progress.
        batch: u64,
        /// It slept on a full pipe and has not written since.
        waited: bool,
    },
    Receiver {
        pipe: usize,
        left: u64,
        recv: Nanos,
        batch: u64,
    },
    Message(Message),
    Worker(Worker),
}

/// A thread's kind, as results and traces name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RoleKind {
    Timer,
    Periodic,
    Hog,
    Sender,
    Receiver,
    Message,
    Worker,
}

impl RoleKind {
    pub const ALL: [RoleKind; 7] = [
        RoleKind::Timer,
        RoleKind::Periodic,
        RoleKind::Hog,
        RoleKind::Sender,
        RoleKind::Receiver,
        RoleKind::Message,
        RoleKind::Worker,
    ];

    /// The kind [`RoleKind::as_str`] names.
    pub fn from_name(name: &str) -> Option<RoleKind> {
        RoleKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The name in `eevdf.result.v1` and the guest's plan.
    pub fn as_str(self) -> &'static str {
        match self {
            RoleKind::Timer => "timer",
            RoleKind::Periodic => "periodic",
            RoleKind::Hog => "hog",
            RoleKind::Sender => "sender",
            RoleKind::Receiver => "receiver",
            RoleKind::Message => "message",
            RoleKind::Worker => "worker",
        }
    }
}

impl std::fmt::Display for RoleKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Role {
    pub fn kind(&self) -> RoleKind {
        match self {
            Role::Timer(_) => RoleKind::Timer,
            Role::Periodic(_) => RoleKind::Periodic,
            Role::Hog => RoleKind::Hog,
            Role::Sender { .. } => RoleKind::Sender,
            Role::Receiver { .. } => RoleKind::Receiver,
            Role::Message(_) => RoleKind::Message,
            Role::Worker(_) => RoleKind::Worker,
        }
    }

    /// It sleeps on timers (so its wakeups have a nominal time).
    pub fn timed(&self) -> bool {
        matches!(self, Role::Timer(_) | Role::Periodic(_))
    }
}
