//! Slice protection: `set_protect_slice`, `update_protect_slice`,
//! `protect_slice`, `cancel_protect_slice` (docs/model.md §3.5) and every seed
//! variant of §5.2.
//!
//! `PROT_SET` chooses how a fresh window is set at switch-in and
//! `PROT_UPDATE` how a failed wakeup preemption shortens it; the two are
//! independent, and `PROT_LAG_AWARE` (v2 2/6) stacks on both by measuring
//! from `min(vruntime, V)` instead of `vruntime`. So the v2 series is
//! `PROT_LAG_AWARE PROT_SET=SHORT_AVG`, the 0/8 series' first two patches
//! `PROT_SET=CAP_MIN_SLICE PROT_UPDATE=ALIGN`, and so on.

use crate::entity::{CfsRqId, EntityId};
use crate::features::{ProtSet, ProtUpdate};
use crate::rq::Rq;
use crate::tree::{vtime_before, vtime_min};

impl Rq {
    /// `protect_slice(se)`: vruntime < vprot. Under the 6.12 stash model
    /// the window is "deadline unchanged and not cancelled".
    pub fn protect_slice(&self, id: EntityId) -> bool {
        let se = self.se(id);
        match self.features().prot_set {
            ProtSet::Stash => self.features().run_to_parity && se.vprot == se.deadline,
            _ => vtime_before(se.vruntime, se.vprot),
        }
    }

    /// `cancel_protect_slice(se)`.
    pub(crate) fn cancel_protect_slice(&mut self, id: EntityId) {
        if !self.protect_slice(id) {
            return;
        }
        let stash = self.features().prot_set == ProtSet::Stash;
        let se = self.se_mut(id);
        if stash {
            se.vprot = se.deadline.wrapping_add(1);
        } else {
            se.vprot = se.vruntime;
        }
    }

    /// The protection quantum `q` of §5.1: the minimum slice of the
    /// queue (RUN_TO_PARITY) or the unscaled base slice, capped by the
    /// entity's own slice.
    fn protect_quantum(&self, q: CfsRqId, id: EntityId) -> u64 {
        let f = self.features();
        let ms = self.cfs_rq_min_slice(q);
        let quantum = if f.run_to_parity {
            ms
        } else {
            f.normalized_base_slice_ns
        };
        quantum.min(self.se(id).slice)
    }

    /// `base_v` of PROT_LAG_AWARE: `min(vruntime, V)`.
    fn protect_base(&self, q: CfsRqId, id: EntityId) -> u64 {
        let v = self.se(id).vruntime;
        if self.features().prot_lag_aware {
            vtime_min(v, self.avg_vruntime_peek(q))
        } else {
            v
        }
    }

    /// The window `set_protect_slice` would open now, per `PROT_SET`.
    /// Called with `se` already out of the tree and not yet curr, so the
    /// queue's min slice is that of the *other* entities.
    fn protect_window(&self, q: CfsRqId, id: EntityId) -> u64 {
        let f = self.features();
        let se = self.se(id);
        let quantum = self.protect_quantum(q, id);
        let base_v = self.protect_base(q, id);
        let shorter_queued = quantum != se.slice;
        let short_cap = base_v.wrapping_add(self.delta_fair(quantum, id));
        match f.prot_set {
            ProtSet::Stash => se.deadline,
            ProtSet::Mainline => {
                if base_v != se.vruntime || shorter_queued {
                    vtime_min(se.deadline, short_cap)
                } else {
                    se.deadline
                }
            }
            // v2 6/6: protect only until curr becomes ineligible.
            ProtSet::ShortAvg => {
                if f.preempt_short && quantum < se.slice {
                    self.avg_vruntime_peek(q)
                } else if base_v != se.vruntime || shorter_queued {
                    vtime_min(se.deadline, short_cap)
                } else {
                    se.deadline
                }
            }
            // Peter's review of 6/6: until the tree's root is eligible.
            ProtSet::PzRoot => {
                let mut vprot = if base_v != se.vruntime || shorter_queued {
                    vtime_min(se.deadline, short_cap)
                } else {
                    se.deadline
                };
                if f.preempt_short && shorter_queued {
                    if let Some(root) = self.cfs(q).timeline.root() {
                        vprot = vtime_min(vprot, root.vruntime);
                    }
                }
                vprot
            }
            // Newest tip: until curr stops being eligible.
            ProtSet::Ineligible => {
                if shorter_queued {
                    let cap = if f.preempt_short {
                        self.ineligible_vruntime(q).unwrap_or(short_cap)
                    } else {
                        short_cap
                    };
                    vtime_min(se.deadline, cap)
                } else {
                    se.deadline
                }
            }
            // 8-series 1/8: never more than one min slice; with a shorter
            // slice queued also not past ineligibility. The digest leaves
            // open whether the ineligible cap needs a shorter slice; we
            // apply it only then (equal slices keep a full quantum).
            ProtSet::CapMinSlice => {
                let mut vprot = vtime_min(se.deadline, short_cap);
                if f.preempt_short && shorter_queued {
                    if let Some(iv) = self.ineligible_vruntime(q) {
                        vprot = vtime_min(vprot, iv);
                    }
                }
                vprot
            }
        }
    }

    /// `set_protect_slice`: a fresh window at switch-in.
    pub(crate) fn set_protect_slice(&mut self, q: CfsRqId, id: EntityId) {
        let vprot = self.protect_window(q, id);
        self.se_mut(id).vprot = vprot;
        #[cfg(debug_assertions)]
        self.check_protection_bound(q, id);
    }

    /// `update_protect_slice`: after a failed wakeup preemption, shorten
    /// curr's window to the (new) minimum slice. Never extends it.
    pub(crate) fn update_protect_slice(&mut self, q: CfsRqId, id: EntityId) {
        let f = *self.features();
        let se = self.se(id);
        let old = se.vprot;
        let new = match f.prot_update {
            _ if f.prot_set == ProtSet::Stash => old,
            ProtUpdate::Mainline => {
                let ms = self.cfs_rq_min_slice(q);
                let base_v = self.protect_base(q, id);
                base_v.wrapping_add(self.delta_fair(ms, id))
            }
            // Peter's review of 2/6: count what curr has already run.
            ProtUpdate::PzRuntime => {
                let ms = self.cfs_rq_min_slice(q) as i64;
                let ran = se.sum_exec_runtime.saturating_sub(se.prev_sum_exec_runtime) as i64;
                let rest = ms.saturating_sub(ran);
                let v = self.delta_fair(rest.unsigned_abs(), id);
                if rest >= 0 {
                    se.vruntime.wrapping_add(v)
                } else {
                    se.vruntime.wrapping_sub(v)
                }
            }
            // 8-series 2/8: the same formula as set_protect_slice.
            ProtUpdate::Align => self.protect_window(q, id),
        };
        self.se_mut(id).vprot = vtime_min(old, new);
    }

    /// Invariant 6 of docs/model.md §9 (mainline rule): vprot within
    /// [vruntime, deadline] and at most one quantum past vruntime.
    #[cfg(debug_assertions)]
    fn check_protection_bound(&self, q: CfsRqId, id: EntityId) {
        let f = self.features();
        if f.prot_set != ProtSet::Mainline || f.prot_lag_aware {
            return;
        }
        let se = self.se(id);
        let quantum = self.protect_quantum(q, id);
        let span = se.vprot.wrapping_sub(se.vruntime) as i64;
        debug_assert!(!vtime_before(se.deadline, se.vprot), "vprot past deadline");
        let max_span = self.delta_fair(quantum, id) as i64;
        let ok_span = span <= max_span || quantum == se.slice;
        debug_assert!(ok_span, "vprot {span} beyond one quantum {max_span}");
    }
}
