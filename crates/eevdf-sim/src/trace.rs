//! Scheduler trace recording: the events that ftrace's sched tracepoints
//! would show (`sched_switch`, `sched_waking`, `sched_wakeup`,
//! `sched_migrate_task`), kept by an observer and bounded in memory.
//! Formatting (ftrace text, Chrome JSON) lives in `eevdf-scenario`.

use crate::config::Nanos;
use crate::observe::{Observer, SimEvent};

/// Events kept at most; beyond, recording stops and the trace says so.
pub const MAX_EVENTS: usize = 4_000_000;

/// A thread as the trace names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceTask {
    /// `comm`: the directive's name, at most 15 bytes as in the kernel.
    pub comm: String,
    pub pid: u32,
    /// Kernel prio: 120 + nice.
    pub prio: i32,
}

/// The state a switched-out task leaves in (`prev_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted in the kernel (`R+`: `preempt_schedule_irq()` and
    /// friends, under `full` or a `lazy` model's full request).
    Preempted,
    /// Switched out runnable on its way back to user mode (`R`:
    /// `schedule()` from `exit_to_user_mode_loop()`), or preempted
    /// while running user code.
    Runnable,
    /// Went to sleep (`S`).
    Sleeping,
    /// Went to sleep uninterruptibly (`D`), on a mutex.
    Uninterruptible,
}

/// One recorded event. Tasks are indices into [`Trace::tasks`]; `None`
/// is the CPU's idle task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    Switch {
        ts: Nanos,
        cpu: u32,
        prev: Option<usize>,
        prev_state: PrevState,
        next: Option<usize>,
    },
    /// At the wake call, on the waker's CPU.
    Waking {
        ts: Nanos,
        cpu: u32,
        task: usize,
        target_cpu: u32,
    },
    /// At enqueue on the target CPU `cpu`, logged by CPU `on`
    /// ([`SimEvent::Wakeup`]).
    Wakeup {
        ts: Nanos,
        cpu: u32,
        task: usize,
        on: u32,
    },
    Migrate {
        ts: Nanos,
        cpu: u32,
        task: usize,
        orig_cpu: u32,
        dest_cpu: u32,
    },
}

impl TraceEvent {
    pub fn ts(&self) -> Nanos {
        match *self {
            TraceEvent::Switch { ts, .. }
            | TraceEvent::Waking { ts, .. }
            | TraceEvent::Wakeup { ts, .. }
            | TraceEvent::Migrate { ts, .. } => ts,
        }
    }
}

/// A recorded trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub nr_cpus: u32,
    pub tasks: Vec<TraceTask>,
    /// In time order (stable for equal times).
    pub events: Vec<TraceEvent>,
    /// Recording stopped at [`MAX_EVENTS`].
    pub truncated: bool,
}

impl Trace {
    /// An empty trace of these tasks.
    pub fn new(nr_cpus: u32, tasks: Vec<TraceTask>) -> Trace {
        Trace {
            nr_cpus,
            tasks,
            events: Vec::new(),
            truncated: false,
        }
    }

    pub(crate) fn push(&mut self, e: TraceEvent) {
        if self.events.len() >= MAX_EVENTS {
            self.truncated = true;
            return;
        }
        self.events.push(e);
    }

    /// Sorts by time; events recorded with an earlier timestamp (a
    /// waking at the wake call) find their place.
    pub(crate) fn finish(&mut self) {
        self.events.sort_by_key(|e| e.ts());
    }
}

/// The observer that records a [`Trace`] ([`crate::Sim::record_trace`]).
#[derive(Clone, Debug)]
pub struct TraceRecorder(pub Trace);

impl Observer for TraceRecorder {
    fn event(&mut self, e: &SimEvent) {
        let t = match *e {
            SimEvent::Switch {
                ts,
                cpu,
                prev,
                prev_state,
                next,
            } => TraceEvent::Switch {
                ts,
                cpu,
                prev,
                prev_state,
                next,
            },
            SimEvent::Waking {
                ts,
                cpu,
                task,
                target_cpu,
            } => TraceEvent::Waking {
                ts,
                cpu,
                task,
                target_cpu,
            },
            SimEvent::Wakeup { ts, cpu, task, on } => TraceEvent::Wakeup { ts, cpu, task, on },
            SimEvent::Migrate {
                ts,
                cpu,
                task,
                orig_cpu,
                dest_cpu,
            } => TraceEvent::Migrate {
                ts,
                cpu,
                task,
                orig_cpu,
                dest_cpu,
            },
            SimEvent::Pick { .. }
            | SimEvent::WakeupPreempt { .. }
            | SimEvent::Tick { .. }
            | SimEvent::Latency { .. }
            | SimEvent::Messages { .. }
            | SimEvent::HackbenchDone { .. }
            | SimEvent::Request { .. } => return,
        };
        self.0.push(t);
    }
    crate::observer_any!();
}
