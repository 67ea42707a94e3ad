//! Scheduling entities (`struct sched_entity`, docs/model.md §2) and their ids.

use crate::tree::NodeRef;
use crate::weight::LoadWeight;

/// An entity's slot in its runqueue's arena. Stable while the entity
/// lives on this CPU; migration detaches and re-attaches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntityId(pub u32);

/// A fair-class queue on one CPU: the root (`rq->cfs`) or a task group's
/// per-CPU queue (`se->my_q`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CfsRqId(pub u32);

impl CfsRqId {
    /// `rq->cfs`.
    pub const ROOT: CfsRqId = CfsRqId(0);
}

/// Scheduling policy of a fair task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    #[default]
    Normal,
    Batch,
    /// `SCHED_IDLE`: weight 3, never preempts a non-idle entity.
    Idle,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Normal => "normal",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
        }
    }
}

/// Lower and upper clamp of a custom slice (`sched_setattr`, docs/model.md §2).
pub const SLICE_MIN_NS: u64 = 100_000;
pub const SLICE_MAX_NS: u64 = 100_000_000;

/// Clamps a requested custom slice as `__setparam_fair` does.
pub fn clamp_custom_slice(ns: u64) -> u64 {
    ns.clamp(SLICE_MIN_NS, SLICE_MAX_NS)
}

/// `struct sched_entity`, the fields EEVDF uses.
#[derive(Clone, Debug)]
pub struct SchedEntity {
    pub load: LoadWeight,
    pub vruntime: u64,
    pub deadline: u64,
    /// Request size r in real ns.
    pub slice: u64,
    pub custom_slice: bool,
    /// Saved lag V - v (virtual ns), written at dequeue.
    pub vlag: i64,
    /// End of the slice-protection window (virtual ns).
    pub vprot: u64,
    pub on_rq: bool,
    pub sched_delayed: bool,
    /// `deadline` holds `deadline - vruntime` across a non-sleep dequeue.
    pub rel_deadline: bool,
    /// The current request was restored from a relative deadline (it may
    /// exceed one slice until the next fresh request).
    pub request_restored: bool,
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    pub prev_sum_exec_runtime: u64,
    pub policy: Policy,
    /// The queue this entity sits on.
    pub cfs_rq: CfsRqId,
    /// For a group entity, its own queue.
    pub my_q: Option<CfsRqId>,
    /// Depth in the hierarchy (0 = on the root queue).
    pub depth: u32,
    /// Tree node while queued and not curr.
    pub(crate) node: Option<NodeRef>,
    /// Clock at the last sleep dequeue (for `LAG_DECAY_SLEEP`).
    pub sleep_start: Option<u64>,
    /// `vlag_seq` of `LAG_RESET_IDLE`: the queue's idle sequence at dequeue.
    pub vlag_seq: u64,
}

impl SchedEntity {
    /// A new, not-yet-queued task entity (`__sched_fork`): zero lag.
    pub fn new_task(load: LoadWeight, policy: Policy, slice: u64, custom: bool) -> Self {
        SchedEntity {
            load,
            vruntime: 0,
            deadline: 0,
            slice,
            custom_slice: custom,
            vlag: 0,
            vprot: 0,
            on_rq: false,
            sched_delayed: false,
            rel_deadline: false,
            request_restored: false,
            exec_start: 0,
            sum_exec_runtime: 0,
            prev_sum_exec_runtime: 0,
            policy,
            cfs_rq: CfsRqId::ROOT,
            my_q: None,
            depth: 0,
            node: None,
            sleep_start: None,
            vlag_seq: 0,
        }
    }

    pub fn is_task(&self) -> bool {
        self.my_q.is_none()
    }
}
