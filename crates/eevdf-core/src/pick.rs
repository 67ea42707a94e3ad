//! Picking and switching: `pick_eevdf` (docs/model.md §3.4), `pick_next_entity`,
//! `pick_task_fair` + `pick_next_task_fair`'s put/set walk,
//! `set_next_entity`/`put_prev_entity`, and the buddies.
//!
//! Every pick records *why* it chose what it chose ([`PickReason`]), so
//! the teaching view can show the engine's own reasoning.

use crate::enqueue::DequeueFlags;
use crate::entity::{CfsRqId, EntityId};
use crate::features::NbMode;
use crate::rq::Rq;

/// Why `pick_eevdf` returned an entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickReason {
    /// The only queued entity (no eligibility check).
    Only,
    /// The eligible next buddy (PICK_BUDDY, or NEXT_BUDDY before 6.19).
    NextBuddy,
    /// curr is eligible and still inside its protection window.
    Protected { vprot: u64 },
    /// Eligible with the earliest deadline (the leftmost entity).
    EarliestDeadline { deadline: u64 },
    /// Eligible with the earliest deadline among eligible entities,
    /// found by the heap search because the leftmost was not eligible.
    EarliestEligibleDeadline { deadline: u64 },
    /// curr is eligible and its deadline is strictly earlier than the
    /// best queued candidate's.
    CurrEarlierDeadline { deadline: u64 },
}

/// One level of a pick: which queue, what it returned and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickStep {
    pub cfs_rq: CfsRqId,
    pub picked: EntityId,
    pub reason: PickReason,
    /// V of the queue at the time of the pick.
    pub avg_vruntime: u64,
    /// The entity was delayed: the pick dequeued it and started over.
    pub dequeued_delayed: bool,
}

/// The result of `pick_next_task`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickOutcome {
    /// The task now running, or `None` (idle).
    pub next: Option<EntityId>,
    /// The previously running task, if it changed.
    pub switched_from: Option<EntityId>,
    pub switched: bool,
}

impl Rq {
    /// `pick_eevdf(cfs_rq, protect)`, docs/model.md §3.4 (7.1 order).
    pub fn pick_eevdf(&self, q: CfsRqId, protect: bool) -> Option<(EntityId, PickReason)> {
        let cfs = self.cfs(q);
        let f = self.features();
        let mut curr = cfs.curr.filter(|c| self.se(*c).on_rq);
        let first = cfs.timeline.first();

        if cfs.nr_queued == 1 {
            return curr
                .or(first.map(|i| i.id))
                .map(|id| (id, PickReason::Only));
        }
        // PICK_BUDDY lives here since 6.19; "clear buddies for
        // preempt_short" gates it by `protect`.
        if f.nb_mode != NbMode::Legacy && f.pick_buddy && (protect || !f.ps_clear_buddy) {
            if let Some(n) = cfs.next {
                if self.entity_eligible(q, n) {
                    return Some((n, PickReason::NextBuddy));
                }
            }
        }
        if let Some(c) = curr {
            if !self.entity_eligible(q, c) {
                curr = None;
            }
        }
        if let Some(c) = curr {
            if protect && self.protect_slice(c) {
                return Some((
                    c,
                    PickReason::Protected {
                        vprot: self.se(c).vprot,
                    },
                ));
            }
        }
        let mut best = None;
        if let Some(l) = first {
            if self.vruntime_eligible(q, l.vruntime) {
                best = Some((
                    l.id,
                    PickReason::EarliestDeadline {
                        deadline: l.deadline,
                    },
                ));
            } else {
                best = cfs
                    .timeline
                    .search_eligible(|v| self.vruntime_eligible(q, v))
                    .map(|i| {
                        (
                            i.id,
                            PickReason::EarliestEligibleDeadline {
                                deadline: i.deadline,
                            },
                        )
                    });
            }
        }
        if let Some(c) = curr {
            let replace = match best {
                None => true,
                Some((b, _)) => self.entity_before(c, b),
            };
            if replace {
                best = Some((
                    c,
                    PickReason::CurrEarlierDeadline {
                        deadline: self.se(c).deadline,
                    },
                ));
            }
        }
        best
    }

    /// `pick_next_entity`: a delayed pick is dequeued and `None` returned
    /// (the caller picks again). `dequeue_delayed` is false for the 6.19
    /// wakeup check, which called `__pick_eevdf` directly.
    pub(crate) fn pick_next_entity(
        &mut self,
        q: CfsRqId,
        protect: bool,
        dequeue_delayed: bool,
        record: bool,
    ) -> Option<EntityId> {
        let f = *self.features();
        // Before 6.19 the buddy was honoured here, gated by PICK_BUDDY
        // since 2a77e4be12cb (backported to 6.12.95).
        if f.nb_mode == NbMode::Legacy && f.pick_buddy && protect {
            if let Some(n) = self.cfs(q).next {
                if self.entity_eligible(q, n) {
                    if record {
                        self.record_step(q, n, PickReason::NextBuddy, false);
                    }
                    return Some(n);
                }
            }
        }
        let (id, reason) = self.pick_eevdf(q, protect)?;
        let delayed = self.se(id).sched_delayed;
        if record {
            self.record_step(q, id, reason, delayed && dequeue_delayed);
        }
        if delayed && dequeue_delayed {
            self.dequeue_entities(
                id,
                DequeueFlags {
                    sleep: true,
                    special: false,
                    delayed: true,
                },
            );
            return None;
        }
        Some(id)
    }

    fn record_step(&mut self, q: CfsRqId, id: EntityId, reason: PickReason, dequeued: bool) {
        let v = self.avg_vruntime_peek(q);
        self.last_pick.push(PickStep {
            cfs_rq: q,
            picked: id,
            reason,
            avg_vruntime: v,
            dequeued_delayed: dequeued,
        });
    }

    /// `pick_task_fair`: descends from the root picking at each level.
    fn pick_task_fair(&mut self) -> Option<EntityId> {
        self.last_pick.clear();
        self.picks += 1;
        'again: loop {
            let mut q = CfsRqId::ROOT;
            if self.cfs(q).nr_queued == 0 {
                return None;
            }
            loop {
                if let Some(c) = self.cfs(q).curr {
                    if self.se(c).on_rq {
                        self.update_curr(q);
                    }
                }
                let Some(se) = self.pick_next_entity(q, true, true, true) else {
                    continue 'again;
                };
                match self.se(se).my_q {
                    Some(child) => q = child,
                    None => return Some(se),
                }
            }
        }
    }

    /// `schedule()`'s fair part: `pick_next_task_fair` with the put/set
    /// walk that leaves common ancestors untouched (their protection is
    /// not renewed). Clears the reschedule request afterwards, so one
    /// raised by `update_curr` during the pick does not survive it
    /// (`__schedule()` calls `clear_tsk_need_resched(prev)` after
    /// `pick_next_task()`, 6.12 and 7.2).
    pub fn pick_next_task(&mut self) -> PickOutcome {
        let prev = self.curr_task;
        let next = self.pick_task_fair();
        let outcome = match (prev, next) {
            (Some(p), Some(n)) if p == n => PickOutcome {
                next,
                switched_from: None,
                switched: false,
            },
            (Some(p), Some(n)) => {
                let mut se = n;
                let mut pse = p;
                loop {
                    let (sd, pd) = (self.se(se).depth, self.se(pse).depth);
                    if self.se(se).cfs_rq == self.se(pse).cfs_rq {
                        break;
                    }
                    if sd <= pd {
                        let q = self.se(pse).cfs_rq;
                        self.put_prev_entity(q, pse);
                        pse = self.parent_entity(pse).expect("parent");
                    }
                    if sd >= pd {
                        let q = self.se(se).cfs_rq;
                        self.set_next_entity(q, se, true);
                        se = self.parent_entity(se).expect("parent");
                    }
                }
                let q = self.se(se).cfs_rq;
                self.put_prev_entity(q, pse);
                self.set_next_entity(q, se, true);
                self.curr_task = Some(n);
                PickOutcome {
                    next,
                    switched_from: Some(p),
                    switched: true,
                }
            }
            (None, Some(n)) => {
                self.set_next_task(n, true);
                PickOutcome {
                    next,
                    switched_from: None,
                    switched: true,
                }
            }
            (Some(p), None) => {
                self.put_prev_task(p);
                PickOutcome {
                    next: None,
                    switched_from: Some(p),
                    switched: true,
                }
            }
            (None, None) => PickOutcome {
                next: None,
                switched_from: None,
                switched: false,
            },
        };
        self.resched = None;
        self.debug_check();
        outcome
    }

    /// `put_prev_task_fair`: every level of the running task.
    pub(crate) fn put_prev_task(&mut self, id: EntityId) {
        let mut cur = Some(id);
        while let Some(se) = cur {
            cur = self.parent_entity(se);
            let q = self.se(se).cfs_rq;
            if self.cfs(q).curr == Some(se) {
                self.put_prev_entity(q, se);
            }
        }
        if self.curr_task == Some(id) {
            self.curr_task = None;
        }
    }

    /// `set_next_task_fair`: every level of the task.
    pub(crate) fn set_next_task(&mut self, id: EntityId, first: bool) {
        let mut cur = Some(id);
        while let Some(se) = cur {
            cur = self.parent_entity(se);
            let q = self.se(se).cfs_rq;
            if self.cfs(q).curr != Some(se) {
                self.set_next_entity(q, se, first);
            }
        }
        self.curr_task = Some(id);
    }

    /// `set_next_entity`: `se` becomes curr of `q`; a fresh switch-in
    /// (`first`) opens a new protection window.
    pub(crate) fn set_next_entity(&mut self, q: CfsRqId, id: EntityId, first: bool) {
        self.clear_buddies(q, id);
        if self.se(id).on_rq {
            self.dequeue_timeline(q, id);
            if first {
                self.set_protect_slice(q, id);
            }
        }
        let now = self.clock;
        let cfs = self.cfs_mut(q);
        cfs.curr = Some(id);
        cfs.picked_since_empty = true;
        let se = self.se_mut(id);
        se.exec_start = now;
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
    }

    /// `put_prev_entity`: curr goes back into the tree (a delayed one too:
    /// it keeps competing until picked).
    pub(crate) fn put_prev_entity(&mut self, q: CfsRqId, id: EntityId) {
        if self.se(id).on_rq {
            self.update_curr(q);
            self.enqueue_timeline(q, id);
        }
        self.cfs_mut(q).curr = None;
    }

    /// `set_next_buddy`: marks `id` and its ancestors as their queues'
    /// `next`; refuses delayed entities.
    pub fn set_next_buddy(&mut self, id: EntityId) {
        let mut cur = Some(id);
        while let Some(se) = cur {
            cur = self.parent_entity(se);
            if self.se(se).sched_delayed {
                return;
            }
            let q = self.se(se).cfs_rq;
            self.cfs_mut(q).next = Some(se);
        }
    }

    /// `clear_buddies`: if `id` is `q`'s next buddy, clears it and the
    /// ancestors' buddies that lead to it.
    pub(crate) fn clear_buddies(&mut self, q: CfsRqId, id: EntityId) {
        if self.cfs(q).next != Some(id) {
            return;
        }
        let mut cur = Some(id);
        while let Some(se) = cur {
            cur = self.parent_entity(se);
            let q = self.se(se).cfs_rq;
            if self.cfs(q).next != Some(se) {
                break;
            }
            self.cfs_mut(q).next = None;
        }
    }
}
