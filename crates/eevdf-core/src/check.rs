//! Invariants of docs/model.md §9 (1-3, 5, 7, 12, 13), checked from scratch.
//! Debug builds run [`Rq::check_invariants`] after every public operation
//! on small queues; tests call it directly.

use crate::entity::CfsRqId;
use crate::rq::Rq;
use crate::tree::vtime_before;

/// Queues larger than this are not re-checked after every operation in
/// debug builds (the check is O(n)).
#[cfg(debug_assertions)]
const DEBUG_CHECK_LIMIT: usize = 128;

impl Rq {
    pub(crate) fn debug_check(&self) {
        #[cfg(debug_assertions)]
        if self.entities.len() <= DEBUG_CHECK_LIMIT {
            if let Err(e) = self.check_invariants() {
                panic!("runqueue invariant violated: {e}");
            }
        }
    }

    /// Checks every invariant; `Err` names the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut tasks_queued = 0;
        let mut tasks_delayed = 0;
        for id in self.entity_ids() {
            let se = self.se(id);
            if se.sched_delayed && !se.on_rq {
                return Err(format!("{id:?} delayed but not on_rq"));
            }
            if se.is_task() && se.on_rq {
                tasks_queued += 1;
                tasks_delayed += u32::from(se.sched_delayed);
            }
            let q = self.cfs(se.cfs_rq);
            let is_curr = q.curr == Some(id);
            if se.on_rq && !is_curr && se.node.is_none() {
                return Err(format!("{id:?} queued, not curr, not in tree"));
            }
            if (is_curr || !se.on_rq) && se.node.is_some() {
                return Err(format!("{id:?} in tree while curr or dequeued"));
            }
            // Invariant 5: a request never exceeds one slice (+1 rounding),
            // except a restored relative deadline.
            if se.on_rq && !se.rel_deadline && !se.request_restored {
                let span = se.deadline.wrapping_sub(se.vruntime) as i64;
                let max = self.delta_fair(se.slice, id) as i64 + 1;
                if span > max && se.my_q.is_none() {
                    return Err(format!("{id:?} request {span} exceeds one slice {max}"));
                }
            }
        }
        if tasks_queued != self.h_nr_queued {
            return Err(format!(
                "h_nr_queued {} but {tasks_queued} tasks queued",
                self.h_nr_queued
            ));
        }
        if tasks_delayed != self.h_nr_delayed {
            return Err(format!(
                "h_nr_delayed {} but {tasks_delayed} delayed",
                self.h_nr_delayed
            ));
        }
        for q in self.queue_ids() {
            self.check_queue(q)?;
        }
        Ok(())
    }

    fn check_queue(&self, q: CfsRqId) -> Result<(), String> {
        let cfs = self.cfs(q);
        cfs.timeline.check()?;
        // Invariant 1: tree membership and sums.
        let mut sum_w = 0u64;
        let mut sum_wv = 0i128;
        for item in cfs.timeline.iter() {
            let se = self.se(item.id);
            if se.cfs_rq != q || !se.on_rq {
                return Err(format!(
                    "{:?} in tree of {q:?} but not queued there",
                    item.id
                ));
            }
            if (item.deadline, item.vruntime, item.slice) != (se.deadline, se.vruntime, se.slice) {
                return Err(format!("{:?} changed while in the tree", item.id));
            }
            sum_w += se.load.weight;
            sum_wv += i128::from(se.vruntime.wrapping_sub(cfs.zero_vruntime) as i64)
                * i128::from(se.load.weight);
        }
        if sum_w != cfs.sum_weight || sum_wv != cfs.sum_w_vruntime {
            return Err(format!("{q:?}: incremental sums differ from recomputed"));
        }
        let members: Vec<_> = self
            .entity_ids()
            .filter(|id| self.se(*id).cfs_rq == q && self.se(*id).on_rq)
            .collect();
        let load: u64 = members.iter().map(|id| self.se(*id).load.weight).sum();
        if load != cfs.load_weight || members.len() as u32 != cfs.nr_queued {
            return Err(format!(
                "{q:?}: load {} nr {} but members give {load} {}",
                cfs.load_weight,
                cfs.nr_queued,
                members.len()
            ));
        }
        if let Some(n) = cfs.next {
            if self.se(n).sched_delayed {
                return Err(format!("{q:?}: next buddy {n:?} is delayed"));
            }
        }
        if members.is_empty() {
            return Ok(());
        }
        // Invariant 2: zero-sum weighted lag, in (-W, 0] with floored V.
        let v = self.avg_vruntime_peek(q);
        let w: i128 = members
            .iter()
            .map(|id| i128::from(self.se(*id).load.weight))
            .sum();
        let lag_sum: i128 = members
            .iter()
            .map(|id| {
                let se = self.se(*id);
                i128::from(v.wrapping_sub(se.vruntime) as i64) * i128::from(se.load.weight)
            })
            .sum();
        if !(lag_sum <= 0 && lag_sum > -w) {
            return Err(format!(
                "{q:?}: weighted lag sum {lag_sum} not in (-{w}, 0]"
            ));
        }
        // Invariant 3: the minimum-vruntime entity is eligible.
        let min = members
            .iter()
            .copied()
            .reduce(|a, b| {
                if vtime_before(self.se(b).vruntime, self.se(a).vruntime) {
                    b
                } else {
                    a
                }
            })
            .expect("non-empty");
        if !self.entity_eligible(q, min) {
            return Err(format!("{q:?}: min-vruntime entity {min:?} not eligible"));
        }
        Ok(())
    }
}
