//! Read-only views of a runqueue for the UI and for tests: V, every
//! entity's vruntime, lag, deadline, eligibility, protection and buddy
//! state, and the steps of the last pick.

use crate::entity::{CfsRqId, EntityId, Policy};
use crate::pick::PickStep;
use crate::rq::{Resched, Rq};

/// One entity as the teaching view draws it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntitySnapshot {
    pub id: EntityId,
    /// `Some(q)` for a group entity: its own queue.
    pub my_q: Option<CfsRqId>,
    pub policy: Policy,
    pub weight: u64,
    pub slice: u64,
    pub vruntime: u64,
    pub deadline: u64,
    /// V - vruntime (virtual ns); positive means owed service.
    pub lag: i64,
    pub eligible: bool,
    pub is_curr: bool,
    pub is_next: bool,
    pub delayed: bool,
    /// curr's protection end, while it is protected.
    pub vprot: Option<u64>,
    pub sum_exec_runtime: u64,
}

/// One queue (`cfs_rq`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfsRqSnapshot {
    pub id: CfsRqId,
    /// The group entity representing this queue in its parent.
    pub group_se: Option<EntityId>,
    pub avg_vruntime: u64,
    pub load_weight: u64,
    pub nr_queued: u32,
    pub min_slice: Option<u64>,
    /// curr first (if queued), then the tree in deadline order.
    pub entities: Vec<EntitySnapshot>,
}

/// A whole runqueue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RqSnapshot {
    pub clock: u64,
    pub curr_task: Option<EntityId>,
    pub resched: Option<Resched>,
    pub h_nr_queued: u32,
    pub h_nr_delayed: u32,
    pub queues: Vec<CfsRqSnapshot>,
    pub last_pick: Vec<PickStep>,
}

impl Rq {
    /// A snapshot of the current state. Does not charge curr: call
    /// [`Rq::update_curr_all`] first for up-to-the-nanosecond vruntimes.
    pub fn snapshot(&self) -> RqSnapshot {
        let queues = self
            .queue_ids()
            .map(|q| {
                let cfs = self.cfs(q);
                let v = self.avg_vruntime_peek(q);
                let curr = cfs.curr.filter(|c| self.se(*c).on_rq);
                let ids = curr.into_iter().chain(cfs.timeline.iter().map(|i| i.id));
                let entities = ids
                    .map(|id| {
                        let se = self.se(id);
                        let is_curr = Some(id) == cfs.curr;
                        EntitySnapshot {
                            id,
                            my_q: se.my_q,
                            policy: se.policy,
                            weight: se.load.weight,
                            slice: se.slice,
                            vruntime: se.vruntime,
                            deadline: se.deadline,
                            lag: v.wrapping_sub(se.vruntime) as i64,
                            eligible: self.entity_eligible(q, id),
                            is_curr,
                            is_next: cfs.next == Some(id),
                            delayed: se.sched_delayed,
                            vprot: (is_curr && self.protect_slice(id)).then_some(se.vprot),
                            sum_exec_runtime: se.sum_exec_runtime,
                        }
                    })
                    .collect();
                let ms = self.cfs_rq_min_slice(q);
                CfsRqSnapshot {
                    id: q,
                    group_se: cfs.se,
                    avg_vruntime: v,
                    load_weight: cfs.load_weight,
                    nr_queued: cfs.nr_queued,
                    min_slice: (ms != u64::MAX).then_some(ms),
                    entities,
                }
            })
            .collect();
        RqSnapshot {
            clock: self.clock,
            curr_task: self.curr_task,
            resched: self.resched,
            h_nr_queued: self.h_nr_queued,
            h_nr_delayed: self.h_nr_delayed,
            queues,
            last_pick: self.last_pick.clone(),
        }
    }
}
