//! Workload state machines (spec §13): what a thread does when its CPU
//! burst ends, and whom it wakes.
//!
//! hackbench is folded: a sender's burst writes as many messages as fit
//! (up to one pipe's capacity) and a receiver's burst reads what is
//! there; events are raised only at burst ends, where a pipe may turn
//! empty or full and a wakeup happens. Messages appear in the pipe at the
//! end of the sender's burst, an approximation of at most one burst.

use crate::config::Nanos;

/// Index of a thread in the simulator.
pub type Tid = usize;

/// Burst length meaning "never ends" (hogs).
pub const FOREVER: Nanos = u64::MAX / 4;

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

/// A pipe between the senders of a hackbench group and one receiver.
#[derive(Clone, Debug)]
pub struct Pipe {
    pub fill: u64,
    pub capacity: u64,
    pub reader: Tid,
    /// The reader sleeps waiting for data.
    pub reader_waiting: bool,
    /// Writers sleeping because the pipe was full.
    pub writers_waiting: Vec<Tid>,
    /// Owning hackbench directive (for its statistics).
    pub directive: usize,
}

/// Cost per message a schbench message thread spends waking a worker.
pub const SCHBENCH_WAKE_CPU_NS: Nanos = 1_000;
