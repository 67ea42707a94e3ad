//! Wakeup preemption: `wakeup_preempt_fair` (docs/model.md §3.6) in the mainline
//! 7.1 form, the 6.12-6.18 legacy form (`NB_MODE=legacy`) and the 6.19-rc1
//! form (`NB_MODE=mel_v5`), with the seed toggles of §5.2 and §8.4.
//!
//! The decision comes back with its reason, so callers (and students) can
//! see which rule let the wakee in or kept it waiting.

use crate::entity::{CfsRqId, EntityId, Policy};
use crate::features::{NbMode, NbSyncDelta};
use crate::rq::Rq;

/// Wakeup flags the fair class looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeFlags {
    /// `WF_SYNC`: the waker promises to sleep soon (pipes, ...).
    pub sync: bool,
    /// `WF_FORK`: the wakee is a new child.
    pub fork: bool,
    /// `WF_RQ_SELECTED`: `select_task_rq` ran for this wakeup.
    pub rq_selected: bool,
    /// The waker runs in task context (`in_task()`), not in an interrupt.
    pub from_task: bool,
}

/// `enum preempt_wakeup_action`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeupAction {
    None,
    Short,
    Pick,
    Resched,
}

/// Why a wakeup did or did not preempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeupReason {
    /// The CPU ran no fair task: a higher class preempts idle at once.
    IdleCpu,
    /// The wakee is already curr.
    AlreadyCurr,
    /// curr already has a reschedule pending.
    NeedReschedPending,
    /// NO_WAKEUP_PREEMPTION.
    FeatureOff,
    /// A non-idle wakee always preempts an idle (SCHED_IDLE) curr.
    IdlePreempted,
    /// An idle wakee never preempts a non-idle curr.
    IdleWakee,
    /// SCHED_BATCH and SCHED_IDLE tasks do not preempt.
    NotNormalPolicy,
    /// WF_FORK: exec usually follows.
    Fork,
    /// The wakee is still delayed.
    WakeeDelayed,
    /// 6.19-rc1: the waker is no longer eligible.
    WakerIneligible,
    /// NEXT_BUDDY kept an older buddy with an earlier deadline, or
    /// preempt_sync decided not to preempt.
    SyncNoPreempt,
    /// preempt_sync: the wakee's deadline is earlier and the waker ran long enough.
    SyncResched,
    /// The pick (protect honoured) chose the wakee.
    PickedWakee,
    /// PREEMPT_SHORT: the shorter-slice wakee wins the pick ignoring
    /// curr's protection and the buddy.
    ShorterSlicePicked,
    /// PS_CANCEL_IF_ELIGIBLE: shorter slice and eligible, though not the pick.
    ShorterSliceEligible,
    /// The pick chose someone else (curr protected, or an earlier deadline).
    PickedOther { picked: Option<EntityId> },
}

/// The outcome of `wakeup_preempt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeupDecision {
    pub preempt: bool,
    pub action: WakeupAction,
    pub reason: WakeupReason,
}

impl WakeupReason {
    /// A sentence for humans.
    pub fn describe(&self) -> &'static str {
        match self {
            WakeupReason::IdleCpu => "CPU was idle",
            WakeupReason::AlreadyCurr => "wakee already running",
            WakeupReason::NeedReschedPending => "a reschedule was already pending",
            WakeupReason::FeatureOff => "NO_WAKEUP_PREEMPTION",
            WakeupReason::IdlePreempted => "non-idle wakee preempts an idle task",
            WakeupReason::IdleWakee => "idle wakee never preempts",
            WakeupReason::NotNormalPolicy => "BATCH and IDLE tasks do not preempt",
            WakeupReason::Fork => "forked child does not preempt",
            WakeupReason::WakeeDelayed => "wakee still delayed",
            WakeupReason::WakerIneligible => "waker no longer eligible",
            WakeupReason::SyncNoPreempt => "next buddy set; sync wakeup does not preempt",
            WakeupReason::SyncResched => "sync wakeup with earlier deadline preempts",
            WakeupReason::PickedWakee => "wakee is eligible with the earliest deadline",
            WakeupReason::ShorterSlicePicked => "shorter slice preempts",
            WakeupReason::ShorterSliceEligible => "shorter slice and eligible preempts",
            WakeupReason::PickedOther { .. } => "another entity wins the pick",
        }
    }
}

impl Rq {
    /// `find_matching_se`: climbs both entities to a common queue.
    pub fn find_matching_se(&self, mut se: EntityId, mut pse: EntityId) -> (EntityId, EntityId) {
        let (mut sd, mut pd) = (self.se(se).depth, self.se(pse).depth);
        while sd > pd {
            se = self.parent_entity(se).expect("parent");
            sd -= 1;
        }
        while pd > sd {
            pse = self.parent_entity(pse).expect("parent");
            pd -= 1;
        }
        while self.se(se).cfs_rq != self.se(pse).cfs_rq {
            se = self.parent_entity(se).expect("parent");
            pse = self.parent_entity(pse).expect("parent");
        }
        (se, pse)
    }

    /// `set_preempt_buddy` (6.19+): keep an older buddy with an earlier
    /// deadline, else make the wakee the buddy.
    fn set_preempt_buddy(&mut self, q: CfsRqId, pse: EntityId) -> bool {
        if let Some(n) = self.cfs(q).next {
            if self.entity_before(n, pse) {
                return false;
            }
        }
        self.set_next_buddy(pse);
        true
    }

    /// `set_short_buddy` (newest tip, PS_SHORT_BUDDY_TIE for 8-series 3/8):
    /// keep a buddy with a strictly shorter slice (or, with the tie rule,
    /// an equal slice and an earlier deadline).
    fn set_short_buddy(&mut self, q: CfsRqId, pse: EntityId) {
        if let Some(n) = self.cfs(q).next {
            let (ns, ps) = (self.se(n).slice, self.se(pse).slice);
            if ns < ps
                || (self.features().ps_short_buddy_tie && ns == ps && self.entity_before(n, pse))
            {
                return;
            }
        }
        self.set_next_buddy(pse);
    }

    /// `preempt_sync`: a sync wakee preempts only if its deadline is
    /// earlier and the waker has run long enough.
    fn preempt_sync(&self, se: EntityId, pse: EntityId, wf: WakeFlags) -> WakeupAction {
        let mut threshold = self.config.migration_cost_ns;
        if wf.rq_selected {
            threshold >>= 2;
        }
        let s = self.se(se);
        let delta = match self.features().nb_sync_delta {
            // As written: update_curr just set exec_start, so delta is ~0.
            NbSyncDelta::ExecStart => self.clock.saturating_sub(s.exec_start),
            NbSyncDelta::StintRuntime => s.sum_exec_runtime - s.prev_sum_exec_runtime,
        };
        if self.entity_before(pse, se) && delta >= threshold {
            WakeupAction::Resched
        } else {
            WakeupAction::None
        }
    }

    /// `wakeup_preempt` for fair task `p`, just enqueued on this CPU.
    pub fn wakeup_preempt(&mut self, p: EntityId, wf: WakeFlags) -> WakeupDecision {
        let d = self.wakeup_preempt_inner(p, wf);
        self.last_wakeup = Some((p, d));
        self.wakeups += 1;
        self.debug_check();
        d
    }

    // Kept whole: it follows check_preempt_wakeup_fair (7.2 fair.c) step
    // by step, so it reads side by side with the kernel function.
    fn wakeup_preempt_inner(&mut self, p: EntityId, wf: WakeFlags) -> WakeupDecision {
        let f = *self.features();
        let no = |reason| WakeupDecision {
            preempt: false,
            action: WakeupAction::None,
            reason,
        };
        let Some(curr) = self.curr_task else {
            self.resched_curr();
            return WakeupDecision {
                preempt: true,
                action: WakeupAction::Pick,
                reason: WakeupReason::IdleCpu,
            };
        };
        if curr == p {
            return no(WakeupReason::AlreadyCurr);
        }
        // 6.12-6.18 nominate the buddy before anything can end the
        // check (6.12.95 check_preempt_wakeup_fair; decision 37).
        if f.nb_mode == NbMode::Legacy && f.next_buddy && !wf.fork && !self.se(p).sched_delayed {
            self.set_next_buddy(p);
        }
        // wakeup_preempt_fair tests TIF_NEED_RESCHED only: a pending lazy
        // request does not stop a wakeup preemption check (7.2).
        let pending = self.need_resched();
        if pending && !(f.ps_ignore_need_resched && f.preempt_short) {
            return no(WakeupReason::NeedReschedPending);
        }
        if !f.wakeup_preemption {
            return no(WakeupReason::FeatureOff);
        }
        let (se, pse) = self.find_matching_se(curr, p);
        let q = self.se(se).cfs_rq;
        let cse_idle = self.se_is_idle(se);
        let pse_idle = self.se_is_idle(pse);
        let policy_normal = self.se(p).policy == Policy::Normal;

        if cse_idle && !pse_idle {
            let action = if f.ps_cancel_if_eligible {
                WakeupAction::Pick
            } else {
                WakeupAction::Short
            };
            return self.do_preempt(q, se, pse, action, None, WakeupReason::IdlePreempted);
        }
        // PROT_ALWAYS_UPDATE (v2 5/6): the early exits still update curr's
        // protection, which needs fresh accounting first.
        let early_exit = |rq: &mut Rq, reason| {
            if f.prot_always_update && f.run_to_parity {
                rq.update_curr(q);
                rq.update_protect_slice(q, se);
            }
            no(reason)
        };
        if cse_idle != pse_idle {
            return early_exit(self, WakeupReason::IdleWakee);
        }
        if !policy_normal {
            return early_exit(self, WakeupReason::NotNormalPolicy);
        }
        self.update_curr(q);

        if f.nb_mode == NbMode::Legacy {
            return self.wakeup_preempt_legacy(q, se, pse);
        }

        let mut action = WakeupAction::Pick;
        if f.preempt_short && self.se(pse).slice < self.se(se).slice {
            action = WakeupAction::Short;
        } else {
            if wf.fork {
                return early_exit(self, WakeupReason::Fork);
            }
            if self.se(pse).sched_delayed {
                return early_exit(self, WakeupReason::WakeeDelayed);
            }
            if f.nb_resched_ineligible_waker && wf.from_task && !self.entity_eligible(q, se) {
                return self.do_preempt(
                    q,
                    se,
                    pse,
                    WakeupAction::Resched,
                    None,
                    WakeupReason::WakerIneligible,
                );
            }
            if f.next_buddy && self.set_preempt_buddy(q, pse) && wf.sync {
                match self.preempt_sync(se, pse, wf) {
                    WakeupAction::Resched => {
                        return self.do_preempt(
                            q,
                            se,
                            pse,
                            WakeupAction::Resched,
                            None,
                            WakeupReason::SyncResched,
                        )
                    }
                    _ => return no(WakeupReason::SyncNoPreempt),
                }
            }
        }

        // pick: the 6.19 form asked __pick_eevdf (no delayed dequeue).
        let dequeue_delayed = f.nb_mode == NbMode::Mainline;
        let protect = action != WakeupAction::Short;
        let nse = loop {
            let n = self.pick_next_entity(q, protect, dequeue_delayed, false);
            if n.is_none() && self.cfs(q).nr_queued > 0 {
                continue;
            }
            break n;
        };
        if nse == Some(pse) {
            let reason = if action == WakeupAction::Short {
                WakeupReason::ShorterSlicePicked
            } else {
                WakeupReason::PickedWakee
            };
            return self.do_preempt(q, se, pse, action, nse, reason);
        }
        if f.ps_cancel_if_eligible && action == WakeupAction::Short && self.entity_eligible(q, pse)
        {
            return self.do_preempt(q, se, pse, action, nse, WakeupReason::ShorterSliceEligible);
        }
        // The curr may have been a delayed entity that the pick dequeued.
        if f.run_to_parity && self.se(se).on_rq && self.cfs(q).curr == Some(se) {
            self.update_protect_slice(q, se);
        }
        no(WakeupReason::PickedOther { picked: nse })
    }

    /// The `preempt:` label.
    fn do_preempt(
        &mut self,
        q: CfsRqId,
        se: EntityId,
        pse: EntityId,
        action: WakeupAction,
        nse: Option<EntityId>,
        reason: WakeupReason,
    ) -> WakeupDecision {
        let f = *self.features();
        if f.ps_cancel_if_eligible {
            // v2 4/6 / newest tip: always cancel; the wakee becomes the
            // (short) buddy only when it was the pick.
            self.cancel_protect_slice(se);
            if action == WakeupAction::Short && nse == Some(pse) {
                self.set_short_buddy(q, pse);
            }
        } else if action == WakeupAction::Short {
            self.cancel_protect_slice(se);
            // PS_SET_NEXT_BUDDY (v2 1/6) replaces PS_CLEAR_BUDDY's
            // clear_buddies when both are on.
            if f.ps_set_next_buddy {
                self.set_next_buddy(pse);
            } else if f.ps_clear_buddy {
                self.clear_buddies(q, se);
            }
        }
        self.resched_curr_lazy();
        WakeupDecision {
            preempt: true,
            action,
            reason,
        }
    }

    /// The 6.12-6.18 form: preempt iff `__pick_eevdf(!short) == pse`.
    fn wakeup_preempt_legacy(&mut self, q: CfsRqId, se: EntityId, pse: EntityId) -> WakeupDecision {
        // check_preempt_wakeup_fair before 6.19 (6.12.95): a short wakee
        // that do_preempt_short() accepts cancels curr's protection even
        // if it then loses the pick ("current's slice protection will be
        // lost").
        let short = self.do_preempt_short(q, pse, se);
        if short {
            self.cancel_protect_slice(se);
        }
        let picked = self.pick_eevdf(q, true).map(|(id, _)| id);
        if picked == Some(pse) {
            self.resched_curr_lazy();
            let (action, reason) = if short {
                (WakeupAction::Short, WakeupReason::ShorterSlicePicked)
            } else {
                (WakeupAction::Pick, WakeupReason::PickedWakee)
            };
            return WakeupDecision {
                preempt: true,
                action,
                reason,
            };
        }
        WakeupDecision {
            preempt: false,
            action: WakeupAction::None,
            reason: WakeupReason::PickedOther { picked },
        }
    }

    /// `do_preempt_short` (6.12.95 fair.c): a shorter-slice, eligible
    /// wakee that is earlier than curr or faces an ineligible curr.
    fn do_preempt_short(&self, q: CfsRqId, pse: EntityId, se: EntityId) -> bool {
        self.features().preempt_short
            && self.se(pse).slice < self.se(se).slice
            && self.entity_eligible(q, pse)
            && (self.entity_before(pse, se) || !self.entity_eligible(q, se))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CfsRqId, EnqueueFlags, FeatureSet, LoadWeight, Profile, RqConfig};

    /// PS_SHORT_BUDDY_TIE (0/8 3/8): an existing buddy with the same slice
    /// and an earlier deadline is kept; the newest tip replaces it.
    #[test]
    fn short_buddy_tie_keeps_the_earlier_buddy() {
        for (tie, expect_x) in [(true, true), (false, false)] {
            let mut fs = FeatureSet::new(Profile::Tip2026_09);
            fs.apply(if tie {
                "PS_SHORT_BUDDY_TIE"
            } else {
                "NO_PS_SHORT_BUDDY_TIE"
            })
            .unwrap();
            let mut rq = Rq::new(RqConfig::new(fs.features, 8, 1000));
            let x = rq.create_task(
                CfsRqId::ROOT,
                LoadWeight::from_nice(0),
                Policy::Normal,
                Some(4_000_000),
            );
            let b = rq.create_task(
                CfsRqId::ROOT,
                LoadWeight::from_nice(0),
                Policy::Normal,
                Some(4_000_000),
            );
            rq.enqueue_task(x, EnqueueFlags::INITIAL);
            rq.enqueue_task(b, EnqueueFlags::WAKEUP);
            assert!(rq.entity_before(x, b));
            rq.set_next_buddy(x);
            rq.set_short_buddy(CfsRqId::ROOT, b);
            let next = rq.cfs(CfsRqId::ROOT).next;
            assert_eq!(next == Some(x), expect_x, "tie={tie}");
        }
    }
}
