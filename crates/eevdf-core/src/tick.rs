//! Accounting and time-driven rescheduling: `update_curr`,
//! `update_deadline` (docs/model.md §3.3), `task_tick_fair` and HRTICK (§3.8).

use crate::entity::{CfsRqId, EntityId};
use crate::features::{HrtickArm, ProtSet};
use crate::rq::Rq;
use crate::tree::vtime_before;
use crate::weight::NICE_0_LOAD;

impl Rq {
    /// `update_deadline`: when vruntime reaches the deadline, a new
    /// request starts at the *current* vruntime (not the old deadline).
    fn update_deadline(&mut self, q: CfsRqId, id: EntityId) -> bool {
        let se = self.se(id);
        if vtime_before(se.vruntime, se.deadline) {
            return false;
        }
        if !se.custom_slice {
            let base = self.config.base_slice_ns;
            self.se_mut(id).slice = base;
        }
        let vslice = self.delta_fair(self.se(id).slice, id);
        let se = self.se_mut(id);
        se.deadline = se.vruntime.wrapping_add(vslice);
        se.request_restored = false;
        self.avg_vruntime(q);
        true
    }

    /// `update_curr`: charges curr for the time since `exec_start` and
    /// asks for a reschedule when its request is done or its protection
    /// is over (docs/model.md §3.3).
    pub(crate) fn update_curr(&mut self, q: CfsRqId) {
        let Some(id) = self.cfs(q).curr else {
            return;
        };
        let now = self.clock;
        let delta = now as i64 - self.se(id).exec_start as i64;
        if delta <= 0 {
            return;
        }
        let delta = delta as u64;
        let vdelta = self.delta_fair(delta, id);
        {
            let se = self.se_mut(id);
            se.exec_start = now;
            se.sum_exec_runtime += delta;
            se.vruntime = se.vruntime.wrapping_add(vdelta);
        }
        let resched = self.update_deadline(q, id);
        if self.cfs(q).nr_queued == 1 {
            return;
        }
        let want = if self.features().prot_set == ProtSet::Stash {
            // 6.12-6.16: only a cancelled (short-preempted) ineligible
            // curr is rescheduled before its deadline.
            resched || self.did_preempt_short(q, id)
        } else {
            resched || !self.protect_slice(id)
        };
        if want {
            self.resched_curr_lazy();
            self.clear_buddies(q, id);
        }
    }

    /// `did_preempt_short` of 6.12: protection cancelled and curr no
    /// longer eligible.
    fn did_preempt_short(&self, q: CfsRqId, id: EntityId) -> bool {
        let se = self.se(id);
        if !se.on_rq || !self.features().preempt_short {
            return false;
        }
        if se.vprot == se.deadline {
            return false;
        }
        !self.entity_eligible(q, id)
    }

    /// `task_tick_fair`: the scheduler tick on this CPU. `queued` marks
    /// an HRTICK expiry, which reschedules unconditionally.
    pub fn task_tick(&mut self, queued: bool) {
        let Some(task) = self.curr_task else {
            return;
        };
        let mut cur = Some(task);
        while let Some(se) = cur {
            cur = self.parent_entity(se);
            let q = self.se(se).cfs_rq;
            if self.cfs(q).curr == Some(se) {
                self.update_curr(q);
            }
            if queued {
                self.resched_curr();
            }
        }
        self.debug_check();
    }

    /// Charges the running task up to the current clock (`update_curr`
    /// at every level), e.g. before a snapshot.
    pub fn update_curr_all(&mut self) {
        if let Some(task) = self.curr_task {
            let mut cur = Some(task);
            while let Some(se) = cur {
                cur = self.parent_entity(se);
                let q = self.se(se).cfs_rq;
                if self.cfs(q).curr == Some(se) {
                    self.update_curr(q);
                }
            }
        }
    }

    /// `hrtick_start_fair`: with HRTICK and more than one queued task,
    /// the delay at which the simulator arms a timer that calls
    /// `task_tick(true)`, at least 10 us (`hrtick_start`). A slice or
    /// deadline already passed arms nothing and asks for a reschedule.
    pub fn hrtick_start_fair(&mut self) -> Option<u64> {
        if !self.features().hrtick || self.h_nr_queued <= 1 {
            return None;
        }
        let se = self.se(self.curr_task?);
        let delta = match self.features().hrtick_arm {
            HrtickArm::SliceLeft => {
                let ran = se.sum_exec_runtime - se.prev_sum_exec_runtime;
                se.slice.checked_sub(ran)
            }
            // 7.2: time to the virtual deadline at curr's weight.
            // (s64) vdelta, as vruntime wraps.
            HrtickArm::Deadline => u64::try_from(se.deadline.wrapping_sub(se.vruntime) as i64)
                .ok()
                .map(|v| mul_div(v, se.load.weight, NICE_0_LOAD)),
        };
        let Some(delta) = delta else {
            self.resched_curr();
            return None;
        };
        Some(delta.max(HRTICK_MIN_NS))
    }
}

/// `hrtick_start`'s floor: shorter slices "just don't make sense and can
/// cause timer DoS" (core.c).
const HRTICK_MIN_NS: u64 = 10_000;

/// `a * b / c` without overflow (u128 only when the product needs it).
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p / c,
        None => u64::try_from(u128::from(a) * u128::from(b) / u128::from(c)).unwrap_or(u64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use crate::{CfsRqId, EnqueueFlags, FeatureSet, LoadWeight, Policy, Profile, Rq, RqConfig};

    #[test]
    fn hrtick_on_7_2_arms_for_the_time_to_the_deadline() {
        // A 3 ms first request is placed half a slice ahead (PLACE_DEADLINE_
        // INITIAL); after 1 ms of running, 0.5 ms of real time is left to
        // the deadline at any weight (7.2.13 hrtick_start_fair), where the
        // slice rule says 2 ms.
        for nice in [0, -5, 7] {
            let fs = FeatureSet::new(Profile::V7_2);
            let mut rq = Rq::new(RqConfig::new(fs.features, 1, 250));
            let w = LoadWeight::from_nice(nice);
            let a = rq.create_task(CfsRqId::ROOT, w, Policy::Normal, Some(3_000_000));
            rq.enqueue_task(a, EnqueueFlags::INITIAL);
            rq.pick_next_task();
            let b = rq.create_task(CfsRqId::ROOT, w, Policy::Normal, None);
            rq.enqueue_task(b, EnqueueFlags::INITIAL);
            rq.set_clock(1_000_000);
            rq.update_curr_all();
            let d = rq.hrtick_start_fair().unwrap();
            assert!((499_000..=501_000).contains(&d), "nice {nice}: {d}");
            // Past the deadline update_curr starts a new 3 ms request.
            rq.set_clock(1_600_000);
            rq.update_curr_all();
            let d = rq.hrtick_start_fair().unwrap();
            assert!((2_999_000..=3_001_000).contains(&d), "nice {nice}: {d}");
        }
    }

    #[test]
    fn hrtick_arms_for_the_rest_of_the_slice() {
        let mut fs = FeatureSet::new(Profile::V7_1);
        fs.apply("HRTICK").unwrap();
        let mut rq = Rq::new(RqConfig::new(fs.features, 1, 250));
        let a = rq.create_task(
            CfsRqId::ROOT,
            LoadWeight::from_nice(0),
            Policy::Normal,
            Some(3_000_000),
        );
        rq.enqueue_task(a, EnqueueFlags::INITIAL);
        rq.pick_next_task();
        assert_eq!(rq.hrtick_start_fair(), None, "one task: no hrtick");
        let b = rq.create_task(
            CfsRqId::ROOT,
            LoadWeight::from_nice(0),
            Policy::Normal,
            None,
        );
        rq.enqueue_task(b, EnqueueFlags::INITIAL);
        rq.set_clock(1_000_000);
        rq.update_curr_all();
        assert_eq!(rq.hrtick_start_fair(), Some(2_000_000));
        rq.set_clock(3_500_000);
        rq.task_tick(true);
        assert_eq!(
            rq.resched,
            Some(crate::Resched::Full),
            "hrtick expiry reschedules"
        );
    }
}
