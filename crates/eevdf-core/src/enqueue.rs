//! Placement and queue membership: `place_entity`, `update_entity_lag`,
//! `enqueue_entity`/`dequeue_entity`, the hierarchy walks
//! `enqueue_task_fair`/`dequeue_entities`, delayed dequeue and its
//! requeue (docs/model.md §3.2, §3.7), and `reweight_entity` (§3.2).

use crate::entity::{CfsRqId, EntityId};
use crate::features::{DelayLag, LagClamp};
use crate::rq::Rq;

/// `ENQUEUE_*` flags the fair class looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnqueueFlags {
    /// `ENQUEUE_WAKEUP`: the task was sleeping.
    pub wakeup: bool,
    /// `ENQUEUE_INITIAL`: first enqueue after fork.
    pub initial: bool,
    /// `ENQUEUE_MIGRATED`: arrives from another CPU.
    pub migrated: bool,
    /// `ENQUEUE_QUEUED` (newest tip): the entity is already counted in
    /// `nr_queued` (a delayed requeue), so placement excludes it.
    pub queued: bool,
}

impl EnqueueFlags {
    pub const WAKEUP: EnqueueFlags = EnqueueFlags {
        wakeup: true,
        initial: false,
        migrated: false,
        queued: false,
    };
    pub const INITIAL: EnqueueFlags = EnqueueFlags {
        wakeup: false,
        initial: true,
        migrated: false,
        queued: false,
    };
    pub const MIGRATED: EnqueueFlags = EnqueueFlags {
        wakeup: false,
        initial: false,
        migrated: true,
        queued: false,
    };
    pub const RESTORE: EnqueueFlags = EnqueueFlags {
        wakeup: false,
        initial: false,
        migrated: false,
        queued: false,
    };
}

/// `DEQUEUE_*` flags the fair class looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DequeueFlags {
    /// `DEQUEUE_SLEEP`: the task blocks.
    pub sleep: bool,
    /// `DEQUEUE_SPECIAL`: stopped/traced/dead; never delayed.
    pub special: bool,
    /// `DEQUEUE_DELAYED`: completes an earlier delayed dequeue.
    pub delayed: bool,
}

impl DequeueFlags {
    pub const SLEEP: DequeueFlags = DequeueFlags {
        sleep: true,
        special: false,
        delayed: false,
    };
    /// A non-sleep dequeue (migration, attribute change): keeps the
    /// relative deadline under PLACE_REL_DEADLINE.
    pub const SAVE: DequeueFlags = DequeueFlags {
        sleep: false,
        special: false,
        delayed: false,
    };
    pub const SPECIAL: DequeueFlags = DequeueFlags {
        sleep: true,
        special: true,
        delayed: false,
    };
}

/// What a task dequeue did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DequeueResult {
    /// DELAY_DEQUEUE: the task sleeps but stays queued to burn its
    /// negative lag; it is dequeued when picked.
    Delayed,
    /// The task left the queue.
    Dequeued,
}

impl Rq {
    /// `update_entity_lag` (docs/model.md §3.2, §3.7): saves the clamped lag and
    /// reports whether clamping (or the delayed-entity rules) changed it,
    /// i.e. whether `V - vlag != vruntime`.
    pub(crate) fn update_entity_lag(&mut self, q: CfsRqId, id: EntityId) -> bool {
        let v = self.avg_vruntime(q);
        let se = self.se(id);
        let raw = v.wrapping_sub(se.vruntime) as i64;
        let span = match self.features().lag_clamp {
            LagClamp::MaxSliceTick => {
                self.cfs_rq_max_slice(q).max(se.slice) + self.config.tick_nsec
            }
            LagClamp::TwoSliceTick => (2 * se.slice).max(self.config.tick_nsec),
        };
        let limit = self.delta_fair(span, id) as i64;
        let mut vlag = raw.clamp(-limit, limit);
        let delayed_rules = se.sched_delayed && self.features().delay_lag == DelayLag::V7_1;
        if delayed_rules {
            // While delayed the debt may not grow; DELAY_ZERO clips
            // positive lag.
            vlag = vlag.max(se.vlag);
            if self.features().delay_zero {
                vlag = vlag.min(0);
            }
        }
        self.se_mut(id).vlag = vlag;
        vlag != raw
    }

    /// `place_entity` (docs/model.md §3.2).
    pub(crate) fn place_entity(&mut self, q: CfsRqId, id: EntityId, flags: EnqueueFlags) {
        let v = self.avg_vruntime(q);
        let base = self.config.base_slice_ns;
        let f = *self.features();
        let (custom, w_se, vlag) = {
            let se = self.se(id);
            (se.custom_slice, se.load.weight, se.vlag)
        };
        if !custom {
            self.se_mut(id).slice = base;
        }
        let slice = self.se(id).slice;
        let mut vslice = self.delta_fair(slice, id) as i64;

        let cfs = self.cfs(q);
        // The newest code excludes the entity itself when it is still
        // counted (a delayed requeue); this avoids inflating a lone
        // entity's lag by (w + 0)/1.
        let others = cfs.nr_queued - u32::from(flags.queued);
        let mut lag: i64 = 0;
        if f.place_lag && others != 0 && vlag != 0 {
            let mut load = i128::from(cfs.sum_weight);
            if let Some(c) = cfs.curr {
                if c != id && self.se(c).on_rq {
                    load += i128::from(self.se(c).load.weight);
                }
            }
            let load = if load == 0 { 1 } else { load };
            // Lag inflation: placing at V - l moves V by w*l/(W+w); the
            // inflated lag restores exactly the saved lag afterwards.
            let inflated = i128::from(vlag) * (load + i128::from(w_se));
            lag = (inflated / load) as i64;
        }
        let se = self.se_mut(id);
        se.vruntime = v.wrapping_sub(lag as u64);
        if f.place_rel_deadline && se.rel_deadline {
            se.deadline = se.deadline.wrapping_add(se.vruntime);
            se.rel_deadline = false;
            se.request_restored = true;
            return;
        }
        se.request_restored = false;
        if f.place_deadline_initial && flags.initial {
            vslice /= 2;
        }
        se.deadline = se.vruntime.wrapping_add(vslice as u64);
    }

    /// `enqueue_entity`.
    pub(crate) fn enqueue_entity(&mut self, q: CfsRqId, id: EntityId, flags: EnqueueFlags) {
        let is_curr = self.cfs(q).curr == Some(id);
        self.prepare_wakeup_lag(q, id, flags);
        // If we're the current task, renormalise before update_curr().
        if is_curr {
            self.place_entity(q, id, flags);
        }
        self.update_curr(q);
        if !is_curr {
            self.place_entity(q, id, flags);
        }
        let w = self.se(id).load.weight;
        let cfs = self.cfs_mut(q);
        cfs.load_weight += w;
        cfs.nr_queued += 1;
        if !is_curr {
            self.enqueue_timeline(q, id);
        }
        let se = self.se_mut(id);
        se.on_rq = true;
        se.sleep_start = None;
    }

    /// Seed lag rules applied to a waking entity before placement:
    /// `LAG_DECAY_SLEEP` (8-series 4/8) and `LAG_RESET_IDLE` (5/8).
    fn prepare_wakeup_lag(&mut self, q: CfsRqId, id: EntityId, flags: EnqueueFlags) {
        if !flags.wakeup {
            return;
        }
        let f = *self.features();
        let now = self.clock;
        let decay = self.config.lag_decay_ns.max(1);
        let reset = f.lag_reset_idle && !self.cfs(q).picked_since_empty;
        let se = self.se_mut(id);
        if f.lag_decay_sleep && se.vlag > 0 {
            if let Some(start) = se.sleep_start {
                let slept = now.saturating_sub(start);
                let keep = decay.saturating_sub(slept);
                se.vlag = (i128::from(se.vlag) * i128::from(keep) / i128::from(decay)) as i64;
            }
        }
        if reset {
            se.vlag = 0;
        }
    }

    /// `dequeue_entity`: returns false when the dequeue was delayed.
    pub(crate) fn dequeue_entity(&mut self, q: CfsRqId, id: EntityId, flags: DequeueFlags) -> bool {
        self.update_curr(q);
        self.clear_buddies(q, id);
        let f = *self.features();
        if flags.delayed {
            debug_assert!(
                self.se(id).sched_delayed,
                "DEQUEUE_DELAYED on a live entity"
            );
        } else {
            let delay = flags.sleep && !flags.special;
            if f.delay_dequeue && delay && !self.entity_eligible(q, id) {
                if f.delay_lag == DelayLag::V7_1 {
                    self.update_entity_lag(q, id);
                }
                self.set_delayed(id);
                return false;
            }
        }
        self.update_entity_lag(q, id);
        let is_curr = self.cfs(q).curr == Some(id);
        if f.place_rel_deadline && !flags.sleep {
            let se = self.se_mut(id);
            se.deadline = se.deadline.wrapping_sub(se.vruntime);
            se.rel_deadline = true;
        }
        if !is_curr {
            self.dequeue_timeline(q, id);
        }
        let w = self.se(id).load.weight;
        let now = self.clock;
        let cfs = self.cfs_mut(q);
        cfs.load_weight -= w;
        cfs.nr_queued -= 1;
        if cfs.nr_queued == 0 {
            cfs.picked_since_empty = false;
        }
        let se = self.se_mut(id);
        se.on_rq = false;
        if flags.sleep {
            se.sleep_start = Some(now);
        }
        if flags.delayed {
            self.clear_delayed(id);
            if f.delay_lag == DelayLag::V6_12 && f.delay_zero && self.se(id).vlag > 0 {
                self.se_mut(id).vlag = 0;
            }
        }
        true
    }

    fn set_delayed(&mut self, id: EntityId) {
        self.se_mut(id).sched_delayed = true;
        if self.se(id).is_task() {
            self.h_nr_delayed += 1;
        }
    }

    fn clear_delayed(&mut self, id: EntityId) {
        self.se_mut(id).sched_delayed = false;
        if self.se(id).is_task() {
            self.h_nr_delayed -= 1;
        }
    }

    /// `requeue_delayed_entity`: a delayed entity is woken before it was
    /// picked. It stays on this CPU. 7.2.13 runs `update_curr()` first,
    /// so V counts curr's time up to now; 6.12.95 does not, and its V
    /// uses curr's stale vruntime.
    pub(crate) fn requeue_delayed_entity(&mut self, id: EntityId) {
        let q = self.se(id).cfs_rq;
        let f = *self.features();
        if f.delay_lag == DelayLag::V7_1 {
            self.update_curr(q);
        }
        let is_curr = self.cfs(q).curr == Some(id);
        let replace = match f.delay_lag {
            DelayLag::V7_1 => self.update_entity_lag(q, id),
            DelayLag::V6_12 => {
                if f.delay_zero {
                    self.update_entity_lag(q, id);
                    if self.se(id).vlag > 0 {
                        self.se_mut(id).vlag = 0;
                        true
                    } else {
                        false
                    }
                } else {
                    false
                }
            }
        };
        if replace {
            if !is_curr {
                self.dequeue_timeline(q, id);
            }
            let flags = EnqueueFlags {
                queued: true,
                ..EnqueueFlags::default()
            };
            self.place_entity(q, id, flags);
            if !is_curr {
                self.enqueue_timeline(q, id);
            }
        }
        self.clear_delayed(id);
    }

    /// `enqueue_task_fair`: enqueues task `id` and, bottom-up, every
    /// ancestor that is not queued yet; group entities take the minimum
    /// slice of their queue.
    pub fn enqueue_task(&mut self, id: EntityId, flags: EnqueueFlags) {
        self.enqueue_task_fair(id, flags);
        self.debug_check();
    }

    pub(crate) fn enqueue_task_fair(&mut self, id: EntityId, flags: EnqueueFlags) {
        assert!(self.se(id).is_task(), "enqueue_task on a group entity");
        // ttwu waits until a blocked task has left the CPU (on_cpu): the
        // caller must run pick_next_task after the sleep first.
        debug_assert!(
            self.se(id).on_rq || self.curr_task != Some(id),
            "enqueue of a blocked task that was not switched out"
        );
        if self.se(id).on_rq {
            // ttwu_runnable: a delayed task woken before it was picked.
            debug_assert!(self.se(id).sched_delayed, "enqueue of a queued task");
            if self.se(id).sched_delayed {
                self.requeue_delayed_entity(id);
            }
            return;
        }
        self.h_nr_queued += 1;
        let mut flags = flags;
        let mut slice: Option<u64> = None;
        let mut cur = Some(id);
        while let Some(se) = cur {
            if self.se(se).on_rq {
                if self.se(se).sched_delayed {
                    self.requeue_delayed_entity(se);
                }
                break;
            }
            let q = self.se(se).cfs_rq;
            if let Some(s) = slice {
                let e = self.se_mut(se);
                e.slice = s;
                e.custom_slice = true;
            }
            self.enqueue_entity(q, se, flags);
            slice = Some(self.cfs_rq_min_slice(q));
            flags = EnqueueFlags::WAKEUP;
            cur = self.parent_entity(se);
        }
        // Remaining (already queued) ancestors: refresh the group slice.
        while let Some(se) = cur {
            let q = self.se(se).cfs_rq;
            if let Some(s) = slice {
                self.set_entity_slice(q, se, s);
            }
            slice = Some(self.cfs_rq_min_slice(q));
            cur = self.parent_entity(se);
        }
    }

    /// Sets a queued group entity's slice, re-propagating the tree
    /// aggregates if it sits in the tree (`min_vruntime_cb_propagate`).
    fn set_entity_slice(&mut self, q: CfsRqId, se: EntityId, slice: u64) {
        if self.se(se).slice == slice {
            return;
        }
        let in_tree = self.se(se).node.is_some();
        if in_tree {
            self.dequeue_timeline(q, se);
        }
        self.se_mut(se).slice = slice;
        if in_tree {
            self.enqueue_timeline(q, se);
        }
    }

    /// `dequeue_task_fair` for task `id`.
    pub fn dequeue_task(&mut self, id: EntityId, flags: DequeueFlags) -> DequeueResult {
        assert!(self.se(id).is_task(), "dequeue_task on a group entity");
        assert!(self.se(id).on_rq, "dequeue of a task that is not queued");
        let r = if self.dequeue_entities(id, flags) {
            DequeueResult::Dequeued
        } else {
            DequeueResult::Delayed
        };
        self.debug_check();
        r
    }

    /// `dequeue_entities`: dequeues `id` and every ancestor whose queue
    /// becomes empty. Returns false if `id` itself was delayed.
    pub(crate) fn dequeue_entities(&mut self, id: EntityId, flags: DequeueFlags) -> bool {
        let task_sleep = flags.sleep;
        let is_task = self.se(id).is_task();
        let mut flags = flags;
        let mut slice: Option<u64> = None;
        let mut cur = Some(id);
        let mut first = true;
        while let Some(se) = cur {
            let q = self.se(se).cfs_rq;
            if !self.dequeue_entity(q, se, flags) {
                if first {
                    return false;
                }
                slice = Some(self.cfs_rq_min_slice(q));
                cur = self.parent_entity(se);
                break;
            }
            if first && is_task {
                self.h_nr_queued -= 1;
            }
            first = false;
            // Don't dequeue the parent if it has other entities besides us.
            if self.cfs(q).load_weight != 0 {
                slice = Some(self.cfs_rq_min_slice(q));
                cur = self.parent_entity(se);
                // Bias the next pick towards this group: the task slept
                // within its slice (§12.1b). Independent of NEXT_BUDDY.
                if task_sleep {
                    if let Some(p) = cur {
                        self.set_next_buddy(p);
                    }
                }
                break;
            }
            flags = DequeueFlags {
                sleep: true,
                special: false,
                delayed: false,
            };
            cur = self.parent_entity(se);
        }
        while let Some(se) = cur {
            let q = self.se(se).cfs_rq;
            if let Some(s) = slice {
                self.set_entity_slice(q, se, s);
            }
            slice = Some(self.cfs_rq_min_slice(q));
            cur = self.parent_entity(se);
        }
        true
    }

    /// `reweight_entity` (docs/model.md §3.2): change an entity's weight, keeping
    /// w*lag and the relative deadline (and a running protection).
    pub fn reweight_entity(&mut self, id: EntityId, weight: crate::weight::LoadWeight) {
        let q = self.se(id).cfs_rq;
        let is_curr = self.cfs(q).curr == Some(id);
        let on_rq = self.se(id).on_rq;
        let mut rel_vprot = false;
        if on_rq {
            self.update_curr(q);
            self.update_entity_lag(q, id);
            if is_curr && self.protect_slice(id) {
                rel_vprot = true;
            }
            let se = self.se_mut(id);
            se.deadline = se.deadline.wrapping_sub(se.vruntime);
            se.rel_deadline = true;
            if rel_vprot {
                se.vprot = se.vprot.wrapping_sub(se.vruntime);
            }
            let w = se.load.weight;
            if !is_curr {
                self.dequeue_timeline(q, id);
            }
            let cfs = self.cfs_mut(q);
            cfs.nr_queued -= 1;
            cfs.load_weight -= w;
        }
        {
            let se = self.se_mut(id);
            let old = i128::from(se.load.weight);
            let new = i128::from(weight.weight.max(1));
            se.vlag = (i128::from(se.vlag) * old / new) as i64;
            if se.rel_deadline {
                se.deadline = (i128::from(se.deadline as i64) * old / new) as i64 as u64;
            }
            if rel_vprot {
                se.vprot = (i128::from(se.vprot as i64) * old / new) as i64 as u64;
            }
            se.load = weight;
        }
        if on_rq {
            self.place_entity(q, id, EnqueueFlags::default());
            let se = self.se_mut(id);
            if rel_vprot {
                se.vprot = se.vprot.wrapping_add(se.vruntime);
            }
            let w = se.load.weight;
            let cfs = self.cfs_mut(q);
            cfs.load_weight += w;
            cfs.nr_queued += 1;
            if !is_curr {
                self.enqueue_timeline(q, id);
            }
        }
        self.debug_check();
    }

    /// Sets the saved lag of a dequeued entity, as if it had slept with
    /// that lag. For decision scripts and guided tours that need an exact
    /// starting lag; the kernel has no such call.
    pub fn set_saved_lag(&mut self, id: EntityId, vlag: i64) {
        assert!(!self.se(id).on_rq, "set_saved_lag on a queued entity");
        self.se_mut(id).vlag = vlag;
    }

    /// Sets or clears a task's custom slice (`sched_setattr`
    /// `sched_runtime`): requeued like the kernel's sched_change pattern
    /// (dequeue SAVE, change, enqueue RESTORE). A delayed task stays
    /// delayed across the change.
    pub fn set_custom_slice(&mut self, id: EntityId, slice: Option<u64>) {
        let queued = self.se(id).on_rq;
        let running = self.curr_task == Some(id);
        if queued {
            let done = self.dequeue_entities(id, DequeueFlags::SAVE);
            debug_assert!(done, "a SAVE dequeue is never delayed");
            if running {
                self.put_prev_task(id);
            }
        }
        {
            let base = self.config.base_slice_ns;
            let se = self.se_mut(id);
            match slice {
                Some(s) => {
                    se.slice = crate::entity::clamp_custom_slice(s);
                    se.custom_slice = true;
                }
                None => {
                    se.slice = base;
                    se.custom_slice = false;
                }
            }
        }
        if queued {
            self.enqueue_task_fair(id, EnqueueFlags::RESTORE);
            if running {
                // sched_change: the running task is set again, without a
                // new protection window (first = false).
                self.set_next_task(id, false);
            }
        }
        self.debug_check();
    }
}
