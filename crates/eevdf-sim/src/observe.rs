//! Typed scheduler events the simulator emits, and the observer trait
//! their consumers implement.
//!
//! The simulator only emits; what is kept (a trace, a decision log, a
//! latency watch) belongs to the observer, so adding a consumer never
//! adds state to [`crate::Sim`]. Events arrive in emission order, which
//! is time order except for [`SimEvent::Waking`], stamped at the wake
//! call (the wake cost earlier than its [`SimEvent::Wakeup`]).
//!
//! Observers are cloned with the simulator (teaching checkpoints), so an
//! observer's state at a checkpoint is the state the run had there.

use std::any::Any;

use dyn_clone::DynClone;
use eevdf_core::{PickReason, WakeupDecision};

use crate::config::Nanos;
use crate::trace::PrevState;
use crate::workload::Tid;

/// The lag and eligibility of one entity at an event, read from its
/// queue: `V - v` in virtual ns (positive: owed service).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LagAt {
    pub lag: i64,
    pub eligible: bool,
    /// `deadline - V` (virtual ns).
    pub deadline_to_v: i64,
}

/// One scheduler event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimEvent {
    /// `schedule()` changed what `cpu` runs (`None`: its idle task).
    Switch {
        ts: Nanos,
        cpu: u32,
        prev: Option<Tid>,
        prev_state: PrevState,
        next: Option<Tid>,
    },
    /// The pick behind a switch, or behind keeping the same task.
    Pick {
        ts: Nanos,
        cpu: u32,
        next: Option<Tid>,
        /// The engine's reason at the top-level queue (`None`: idle).
        reason: Option<PickReason>,
        /// The picked entity at the top-level queue, against V at the
        /// pick (`pick_eevdf()`'s return, as a kernel probe reads it);
        /// `None`: idle.
        picked: Option<LagAt>,
        /// Entities queued at the top level, delayed ones included
        /// (`cfs_rq->nr_queued`).
        nr_queued: u32,
    },
    /// At the wake call, on the waker's CPU (`sched_waking`).
    Waking {
        ts: Nanos,
        cpu: u32,
        task: Tid,
        target_cpu: u32,
    },
    /// At enqueue on the target CPU `cpu` (`sched_wakeup`), in the
    /// context of CPU `on`: the waker's when it queues the task itself
    /// (its own CPU, a busy one sharing its LLC, a delayed task's), the
    /// target's when the target does (the wakelist's IPI to an idle CPU
    /// or one beyond the LLC: `ttwu_queue_cond()`).
    Wakeup {
        ts: Nanos,
        cpu: u32,
        task: Tid,
        on: u32,
    },
    /// `wakeup_preempt` ran for `task` against `curr` (fair tasks only;
    /// `curr` is `None` when the CPU was idle).
    WakeupPreempt {
        ts: Nanos,
        cpu: u32,
        task: Tid,
        curr: Option<Tid>,
        decision: WakeupDecision,
        /// After the decision (its `update_curr` included).
        wakee: LagAt,
        curr_lag: Option<LagAt>,
        /// `nr_queued` of the wakee's queue (delayed entities count).
        nr_queued: u32,
    },
    Migrate {
        ts: Nanos,
        cpu: u32,
        task: Tid,
        orig_cpu: u32,
        dest_cpu: u32,
    },
    /// The periodic tick ran `task_tick` on a busy CPU.
    Tick { ts: Nanos, cpu: u32, curr: Tid },
    /// A wakeup latency sample: from the wakeup being asked for to the
    /// task's first instruction.
    Latency {
        ts: Nanos,
        cpu: u32,
        task: Tid,
        /// When the wakeup was asked for.
        woke: Nanos,
        latency: Nanos,
    },
    /// Hackbench threads of task directive `directive` moved `count`
    /// messages (a burst's worth, written or read).
    Messages {
        ts: Nanos,
        directive: usize,
        count: u64,
    },
    /// The last loop of a hackbench directive with `loops` finished.
    HackbenchDone { ts: Nanos, directive: usize },
    /// A schbench worker of `directive` served the request asked for at
    /// `asked`.
    Request {
        ts: Nanos,
        directive: usize,
        asked: Nanos,
    },
}

impl SimEvent {
    /// When it happened.
    pub fn ts(&self) -> Nanos {
        match *self {
            SimEvent::Switch { ts, .. }
            | SimEvent::Pick { ts, .. }
            | SimEvent::Waking { ts, .. }
            | SimEvent::Wakeup { ts, .. }
            | SimEvent::WakeupPreempt { ts, .. }
            | SimEvent::Migrate { ts, .. }
            | SimEvent::Tick { ts, .. }
            | SimEvent::Latency { ts, .. }
            | SimEvent::Messages { ts, .. }
            | SimEvent::HackbenchDone { ts, .. }
            | SimEvent::Request { ts, .. } => ts,
        }
    }
}

/// Which kinds of [`SimEvent`] an observer takes, so the simulator
/// builds only events somebody reads (a latency watch should not pay for
/// every wakeup's lag computation). A plain bit set: a crate for eight
/// flags would cost more than it saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interest(u8);

impl Interest {
    pub const SWITCH: Interest = Interest(1);
    pub const PICK: Interest = Interest(1 << 1);
    /// `Waking` and `Wakeup`.
    pub const WAKEUP: Interest = Interest(1 << 2);
    pub const WAKEUP_PREEMPT: Interest = Interest(1 << 3);
    pub const MIGRATE: Interest = Interest(1 << 4);
    pub const TICK: Interest = Interest(1 << 5);
    pub const LATENCY: Interest = Interest(1 << 6);
    /// `Messages`, `HackbenchDone` and `Request`.
    pub const WORKLOAD: Interest = Interest(1 << 7);
    pub const NONE: Interest = Interest(0);
    pub const ALL: Interest = Interest(0xff);

    pub const fn union(self, o: Interest) -> Interest {
        Interest(self.0 | o.0)
    }

    pub const fn has(self, o: Interest) -> bool {
        self.0 & o.0 != 0
    }

    /// The kind of one event.
    pub fn of(e: &SimEvent) -> Interest {
        match e {
            SimEvent::Switch { .. } => Interest::SWITCH,
            SimEvent::Pick { .. } => Interest::PICK,
            SimEvent::Waking { .. } | SimEvent::Wakeup { .. } => Interest::WAKEUP,
            SimEvent::WakeupPreempt { .. } => Interest::WAKEUP_PREEMPT,
            SimEvent::Migrate { .. } => Interest::MIGRATE,
            SimEvent::Tick { .. } => Interest::TICK,
            SimEvent::Latency { .. } => Interest::LATENCY,
            SimEvent::Messages { .. }
            | SimEvent::HackbenchDone { .. }
            | SimEvent::Request { .. } => Interest::WORKLOAD,
        }
    }
}

/// A consumer of [`SimEvent`]s, attached with [`crate::Sim::observe`].
pub trait Observer: DynClone + std::fmt::Debug {
    fn event(&mut self, e: &SimEvent);
    /// The events it wants; it is sent no others.
    fn interest(&self) -> Interest {
        Interest::ALL
    }
    /// For finding an attached observer again by its type.
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

dyn_clone::clone_trait_object!(Observer);

/// Implements [`Observer`]'s `Any` plumbing for a `'static` type.
#[macro_export]
macro_rules! observer_any {
    () => {
        fn as_any(&self) -> &dyn ::std::any::Any {
            self
        }
        fn as_any_mut(&mut self) -> &mut dyn ::std::any::Any {
            self
        }
        fn into_any(self: Box<Self>) -> Box<dyn ::std::any::Any> {
            self
        }
    };
}

/// The observers attached to one simulator, and the union of what they
/// want.
#[derive(Clone, Debug)]
pub struct Observers {
    list: Vec<Box<dyn Observer>>,
    wanted: Interest,
}

impl Default for Observers {
    fn default() -> Self {
        Observers {
            list: Vec::new(),
            wanted: Interest::NONE,
        }
    }
}

impl Observers {
    /// Somebody takes events of kind `k`: callers skip building the
    /// others.
    #[inline]
    pub fn wants(&self, k: Interest) -> bool {
        self.wanted.has(k)
    }

    pub fn attach(&mut self, o: Box<dyn Observer>) {
        self.wanted = self.wanted.union(o.interest());
        self.list.push(o);
    }

    #[inline]
    pub fn emit(&mut self, e: SimEvent) {
        let k = Interest::of(&e);
        for o in &mut self.list {
            if o.interest().has(k) {
                o.event(&e);
            }
        }
    }

    /// The first attached observer of type `T`.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.list
            .iter()
            .find_map(|o| o.as_any().downcast_ref::<T>())
    }

    pub fn get_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.list
            .iter_mut()
            .find_map(|o| o.as_any_mut().downcast_mut::<T>())
    }

    /// Detaches and returns the first observer of type `T`.
    pub fn detach<T: 'static>(&mut self) -> Option<T> {
        let i = self.list.iter().position(|o| o.as_any().is::<T>())?;
        let o = self.list.remove(i);
        self.wanted = self
            .list
            .iter()
            .fold(Interest::NONE, |w, o| w.union(o.interest()));
        o.into_any().downcast::<T>().ok().map(|b| *b)
    }
}
