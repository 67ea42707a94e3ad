//! Workload state machines: what a thread does when its CPU burst ends,
//! and whom it wakes. Bursts are stated in work (nanoseconds on a CPU of
//! capacity 1024); a smaller CPU takes longer to finish them.
//!
//! hackbench's bursts are folded over many messages, but end at every
//! write or read that wakes somebody (see [`crate::hackbench`]).

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
    Timer {
        period: Nanos,
        run: Nanos,
        /// Nominal expiry of the pending (or last) timer.
        expiry: Nanos,
    },
    Periodic {
        run: Nanos,
        sleep: Nanos,
        period: Option<Nanos>,
        /// Nominal start of the current activation.
        activation: Nanos,
    },
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
    Message {
        workers: Vec<Tid>,
        think: Nanos,
    },
    Worker {
        request: Nanos,
        /// When the current request was asked for.
        asked: Option<Nanos>,
    },
}

impl Role {
    pub fn name(&self) -> &'static str {
        match self {
            Role::Timer { .. } => "timer",
            Role::Periodic { .. } => "periodic",
            Role::Hog => "hog",
            Role::Sender { .. } => "sender",
            Role::Receiver { .. } => "receiver",
            Role::Message { .. } => "message",
            Role::Worker { .. } => "worker",
        }
    }
}

/// Cost per message a schbench message thread spends waking a worker.
pub const SCHBENCH_WAKE_CPU_NS: Nanos = 1_000;
