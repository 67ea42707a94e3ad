//! One CPU's fair class: the queues (`struct cfs_rq`, docs/model.md §3.1), the
//! entity arena, the virtual clock V (`avg_vruntime`) and the exact
//! eligibility test (`entity_eligible`, §2.3).
//!
//! The other modules add the mechanisms as further `impl Rq` blocks, each
//! named after the fair.c functions it mirrors: `enqueue` (place, enqueue,
//! dequeue, delayed dequeue), `pick` (pick_eevdf, set_next/put_prev),
//! `protect` (vprot), `wakeup` (wakeup_preempt_fair), `tick` (update_curr,
//! task_tick, hrtick).

use crate::entity::{CfsRqId, EntityId, Policy, SchedEntity};
use crate::features::Features;
use crate::pick::PickStep;
use crate::tree::{vtime_before, Timeline, TreeItem};
use crate::weight::{calc_delta_fair, LoadWeight};

/// Where `init_cfs_rq` starts the virtual clock: `(u64)(-(1LL << 20))`,
/// so wrap-around is exercised from the first nanosecond.
pub const INIT_ZERO_VRUNTIME: u64 = (-(1i64 << 20)) as u64;

/// Static parameters of one runqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RqConfig {
    pub features: Features,
    /// `sysctl_sched_base_slice`: the scaled default request size.
    pub base_slice_ns: u64,
    /// `TICK_NSEC` = 10^9 / HZ.
    pub tick_nsec: u64,
    /// `sysctl_sched_migration_cost` (preempt_sync threshold).
    pub migration_cost_ns: u64,
    /// `LAG_DECAY_SLEEP`: positive lag decays linearly to zero over this
    /// sleep length (the patch's exact curve is not published; docs/model.md §8).
    pub lag_decay_ns: u64,
    /// `dynamic_preempt_lazy()`: `resched_curr_lazy` sets
    /// `TIF_NEED_RESCHED_LAZY` instead of `TIF_NEED_RESCHED`.
    pub preempt_lazy: bool,
}

impl RqConfig {
    /// Mainline defaults for a machine with `nr_cpus` CPUs at `hz`.
    pub fn new(features: Features, nr_cpus: u32, hz: u32) -> Self {
        RqConfig {
            features,
            base_slice_ns: features.base_slice_ns(nr_cpus),
            tick_nsec: 1_000_000_000 / u64::from(hz.max(1)),
            migration_cost_ns: 500_000,
            lag_decay_ns: 4_000_000_000,
            preempt_lazy: false,
        }
    }
}

impl Default for RqConfig {
    fn default() -> Self {
        RqConfig::new(Features::default(), 1, 1000)
    }
}

/// A pending reschedule request on this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resched {
    /// `resched_curr_lazy` under the lazy preemption model:
    /// `TIF_NEED_RESCHED_LAZY`, honoured on the next return to user mode
    /// or upgraded by the tick.
    Lazy,
    /// `resched_curr`: `TIF_NEED_RESCHED`.
    Full,
}

/// `struct cfs_rq`.
#[derive(Clone, Debug)]
pub struct CfsRq {
    /// Σ weights of all on_rq entities (curr and delayed included).
    pub load_weight: u64,
    pub nr_queued: u32,
    /// Queued entities except curr.
    pub(crate) timeline: Timeline,
    /// v0, the reference point of the sums.
    pub zero_vruntime: u64,
    /// Σ_tree (v_i - v0) * w_i, exact.
    pub sum_w_vruntime: i128,
    /// Σ_tree w_i.
    pub sum_weight: u64,
    pub curr: Option<EntityId>,
    pub next: Option<EntityId>,
    /// The group entity that represents this queue in its parent.
    pub se: Option<EntityId>,
    /// `cpu.idle` of the group (the root is never idle).
    pub idle: bool,
    /// `LAG_RESET_IDLE`: a fair entity was picked since the queue was last empty.
    pub picked_since_empty: bool,
}

impl CfsRq {
    fn new(se: Option<EntityId>) -> Self {
        CfsRq {
            load_weight: 0,
            nr_queued: 0,
            timeline: Timeline::new(),
            zero_vruntime: INIT_ZERO_VRUNTIME,
            sum_w_vruntime: 0,
            sum_weight: 0,
            curr: None,
            next: None,
            se,
            idle: false,
            picked_since_empty: false,
        }
    }
}

/// One CPU's fair-class runqueue (`struct rq`, fair parts).
#[derive(Clone, Debug)]
pub struct Rq {
    pub config: RqConfig,
    /// `rq_clock_task`, set by the caller before each operation.
    pub clock: u64,
    pub(crate) entities: Vec<Option<SchedEntity>>,
    free: Vec<u32>,
    pub(crate) queues: Vec<Option<CfsRq>>,
    /// The running fair task (`rq->curr` when it is fair).
    pub curr_task: Option<EntityId>,
    pub resched: Option<Resched>,
    /// Tasks on_rq (delayed included): `rq->cfs.h_nr_queued`.
    pub h_nr_queued: u32,
    /// Delayed tasks: `h_nr_queued - h_nr_runnable`.
    pub h_nr_delayed: u32,
    /// The steps of the last pick, for snapshots and teaching.
    pub last_pick: Vec<PickStep>,
    /// Picks made so far (`pick_task_fair` calls), so a stepper can stop
    /// at the next one.
    pub picks: u64,
    /// The last wakeup-preemption decision: the wakee and why.
    pub last_wakeup: Option<(EntityId, crate::wakeup::WakeupDecision)>,
    /// `wakeup_preempt` calls so far, so a stepper can tell a new
    /// decision from an equal old one.
    pub wakeups: u64,
}

impl Rq {
    pub fn new(config: RqConfig) -> Self {
        Rq {
            config,
            clock: 0,
            entities: Vec::new(),
            free: Vec::new(),
            queues: vec![Some(CfsRq::new(None))],
            curr_task: None,
            resched: None,
            h_nr_queued: 0,
            h_nr_delayed: 0,
            last_pick: Vec::new(),
            picks: 0,
            last_wakeup: None,
            wakeups: 0,
        }
    }

    pub fn features(&self) -> &Features {
        &self.config.features
    }

    /// Advances `rq_clock_task`; time never goes backwards.
    pub fn set_clock(&mut self, now: u64) {
        debug_assert!(now >= self.clock, "rq clock went backwards");
        self.clock = self.clock.max(now);
    }

    // ---- arena -------------------------------------------------------

    pub fn se(&self, id: EntityId) -> &SchedEntity {
        self.entities[id.0 as usize]
            .as_ref()
            .expect("live entity id")
    }

    /// The entity, if `id` is still live (a view may hold an id whose
    /// task has since migrated away).
    pub fn get_se(&self, id: EntityId) -> Option<&SchedEntity> {
        self.entities.get(id.0 as usize)?.as_ref()
    }

    pub(crate) fn se_mut(&mut self, id: EntityId) -> &mut SchedEntity {
        self.entities[id.0 as usize]
            .as_mut()
            .expect("live entity id")
    }

    pub fn cfs(&self, q: CfsRqId) -> &CfsRq {
        self.queues[q.0 as usize].as_ref().expect("live cfs_rq id")
    }

    pub(crate) fn cfs_mut(&mut self, q: CfsRqId) -> &mut CfsRq {
        self.queues[q.0 as usize].as_mut().expect("live cfs_rq id")
    }

    /// Every live queue id, root first.
    pub fn queue_ids(&self) -> impl Iterator<Item = CfsRqId> + '_ {
        self.queues
            .iter()
            .enumerate()
            .filter(|(_, q)| q.is_some())
            .map(|(i, _)| CfsRqId(i as u32))
    }

    /// Every live entity id.
    pub fn entity_ids(&self) -> impl Iterator<Item = EntityId> + '_ {
        self.entities
            .iter()
            .enumerate()
            .filter(|(_, e)| e.is_some())
            .map(|(i, _)| EntityId(i as u32))
    }

    pub(crate) fn alloc_entity(&mut self, se: SchedEntity) -> EntityId {
        match self.free.pop() {
            Some(i) => {
                self.entities[i as usize] = Some(se);
                EntityId(i)
            }
            None => {
                self.entities.push(Some(se));
                EntityId((self.entities.len() - 1) as u32)
            }
        }
    }

    /// Creates a task entity on queue `q` (not yet enqueued). `slice` is a
    /// custom slice (`sched_setattr`), clamped to 0.1..100 ms; `None`
    /// means the base slice.
    pub fn create_task(
        &mut self,
        q: CfsRqId,
        load: LoadWeight,
        policy: Policy,
        slice: Option<u64>,
    ) -> EntityId {
        let (slice, custom) = match slice {
            Some(s) => (crate::entity::clamp_custom_slice(s), true),
            None => (self.config.base_slice_ns, false),
        };
        let load = if policy == Policy::Idle {
            LoadWeight::idle()
        } else {
            load
        };
        let mut se = SchedEntity::new_task(load, policy, slice, custom);
        se.cfs_rq = q;
        se.depth = self.queue_depth(q);
        self.alloc_entity(se)
    }

    /// Creates a task group's per-CPU entity and queue under `parent`;
    /// `weight` is the group entity's share (`calc_group_shares`, which
    /// the simulator computes). `idle` is the group's `cpu.idle`.
    pub fn create_group(
        &mut self,
        parent: CfsRqId,
        weight: u64,
        idle: bool,
    ) -> (EntityId, CfsRqId) {
        let qid = CfsRqId(self.queues.len() as u32);
        let mut se = SchedEntity::new_task(
            LoadWeight::new(weight.max(2)),
            Policy::Normal,
            self.config.base_slice_ns,
            false,
        );
        se.cfs_rq = parent;
        se.my_q = Some(qid);
        se.depth = self.queue_depth(parent);
        let id = self.alloc_entity(se);
        let mut q = CfsRq::new(Some(id));
        q.idle = idle;
        self.queues.push(Some(q));
        (id, qid)
    }

    /// Depth of entities that sit on `q`.
    fn queue_depth(&self, q: CfsRqId) -> u32 {
        match self.cfs(q).se {
            None => 0,
            Some(gse) => self.se(gse).depth + 1,
        }
    }

    /// Removes a dequeued task from this CPU (migration): the caller
    /// re-attaches it elsewhere with [`Rq::attach_task`].
    pub fn detach_task(&mut self, id: EntityId) -> SchedEntity {
        let se = self.se(id);
        assert!(!se.on_rq && se.is_task(), "detach a dequeued task");
        assert!(self.curr_task != Some(id), "detach the running task");
        for q in self.queues.iter_mut().flatten() {
            if q.curr == Some(id) {
                q.curr = None;
            }
        }
        let se = self.entities[id.0 as usize].take().expect("live");
        self.free.push(id.0);
        se
    }

    /// `detach_task` for the load balancer: dequeues a queued, not
    /// running task without sleeping (its lag and relative deadline are
    /// saved) and detaches it. A delayed task stays delayed (the kernel
    /// moves those only for migrate_load).
    pub fn migrate_out(&mut self, id: EntityId) -> SchedEntity {
        assert!(
            self.se(id).on_rq && self.curr_task != Some(id),
            "migrate a queued, not running task"
        );
        let done = self.dequeue_entities(id, crate::enqueue::DequeueFlags::SAVE);
        debug_assert!(done, "a SAVE dequeue is never delayed");
        if self.se(id).sched_delayed {
            self.h_nr_delayed -= 1;
        }
        let se = self.detach_task(id);
        self.debug_check();
        se
    }

    /// `attach_task`: adopts a task taken with [`Rq::migrate_out`] onto
    /// queue `q` and enqueues it (`ENQUEUE_MIGRATED`). The caller then
    /// runs `wakeup_preempt`.
    pub fn migrate_in(&mut self, se: SchedEntity, q: CfsRqId) -> EntityId {
        let delayed = se.sched_delayed;
        let id = self.attach_task(se, q);
        if delayed {
            self.h_nr_delayed += 1;
        }
        self.enqueue_task_fair(id, crate::enqueue::EnqueueFlags::MIGRATED);
        self.debug_check();
        id
    }

    /// The stopper class takes the CPU (active balance): the running fair
    /// task is put back on its queue and no fair task runs until the next
    /// `pick_next_task`.
    pub fn stop_curr(&mut self) {
        if let Some(id) = self.curr_task {
            self.put_prev_task(id);
        }
        self.debug_check();
    }

    /// Adopts a migrated task onto queue `q`. `exec_start` is zeroed
    /// (ENQUEUE_MIGRATED: not cache-hot).
    pub fn attach_task(&mut self, mut se: SchedEntity, q: CfsRqId) -> EntityId {
        se.cfs_rq = q;
        se.depth = self.queue_depth(q);
        se.exec_start = 0;
        se.node = None;
        self.alloc_entity(se)
    }

    /// The parent entity (`parent_entity`).
    pub fn parent_entity(&self, id: EntityId) -> Option<EntityId> {
        self.cfs(self.se(id).cfs_rq).se
    }

    /// `se_is_idle`: a SCHED_IDLE task or an entity of an idle group.
    pub fn se_is_idle(&self, id: EntityId) -> bool {
        let se = self.se(id);
        match se.my_q {
            None => se.policy == Policy::Idle,
            Some(q) => self.cfs(q).idle,
        }
    }

    // ---- sums, V and eligibility ---------------------------------------

    fn entity_key(q: &CfsRq, v: u64) -> i64 {
        v.wrapping_sub(q.zero_vruntime) as i64
    }

    /// `__enqueue_entity`: into the tree and the sums.
    pub(crate) fn enqueue_timeline(&mut self, q: CfsRqId, id: EntityId) {
        let se = self.se(id);
        let item = TreeItem {
            id,
            deadline: se.deadline,
            vruntime: se.vruntime,
            slice: se.slice,
        };
        let w = se.load.weight;
        let cfs = self.cfs_mut(q);
        let key = Self::entity_key(cfs, item.vruntime);
        cfs.sum_w_vruntime += wide_mul(key, w);
        cfs.sum_weight += w;
        let node = cfs.timeline.insert(item);
        self.se_mut(id).node = Some(node);
    }

    /// `__dequeue_entity`: out of the tree and the sums.
    pub(crate) fn dequeue_timeline(&mut self, q: CfsRqId, id: EntityId) {
        let node = self.se_mut(id).node.take().expect("entity in tree");
        let cfs = self.cfs_mut(q);
        let item = cfs.timeline.remove(node);
        debug_assert_eq!(item.id, id);
        let w = self.se(id).load.weight;
        let cfs = self.cfs_mut(q);
        let key = Self::entity_key(cfs, item.vruntime);
        cfs.sum_w_vruntime -= wide_mul(key, w);
        cfs.sum_weight -= w;
    }

    /// (S, W) of §2.2: the tree sums plus curr if it is on_rq.
    fn avg_sums(&self, q: CfsRqId) -> (i128, i128) {
        let cfs = self.cfs(q);
        let mut s = cfs.sum_w_vruntime;
        let mut w = i128::from(cfs.sum_weight);
        if let Some(c) = cfs.curr {
            let c = self.se(c);
            if c.on_rq {
                s += wide_mul(Self::entity_key(cfs, c.vruntime), c.load.weight);
                w += i128::from(c.load.weight);
            }
        }
        (s, w)
    }

    /// V without moving v0 (for snapshots and checks).
    pub fn avg_vruntime_peek(&self, q: CfsRqId) -> u64 {
        let (s, w) = self.avg_sums(q);
        let cfs = self.cfs(q);
        if w == 0 {
            return cfs.zero_vruntime;
        }
        // Floor division: an entity placed exactly at V is eligible.
        let delta = floor_div(s, w);
        cfs.zero_vruntime.wrapping_add(delta as i64 as u64)
    }

    /// `avg_vruntime`: V = v0 + floor(S / W). Like v7.0+, it also moves
    /// v0 to V (keeping the sums small); with exact arithmetic this has
    /// no effect on any decision.
    pub fn avg_vruntime(&mut self, q: CfsRqId) -> u64 {
        let v = self.avg_vruntime_peek(q);
        let cfs = self.cfs_mut(q);
        let delta = v.wrapping_sub(cfs.zero_vruntime) as i64;
        cfs.sum_w_vruntime -= wide_mul(delta, cfs.sum_weight);
        cfs.zero_vruntime = v;
        v
    }

    /// `vruntime_eligible`: lag(v) >= 0  <=>  S >= (v - v0) * W, exact.
    pub fn vruntime_eligible(&self, q: CfsRqId, vruntime: u64) -> bool {
        let (s, w) = self.avg_sums(q);
        let key = Self::entity_key(self.cfs(q), vruntime);
        match u64::try_from(w) {
            Ok(w) => s >= wide_mul(key, w),
            Err(_) => s >= i128::from(key) * w,
        }
    }

    /// `entity_eligible`.
    pub fn entity_eligible(&self, q: CfsRqId, id: EntityId) -> bool {
        self.vruntime_eligible(q, self.se(id).vruntime)
    }

    /// `ineligible_vruntime` (newest tip): the first vruntime at which
    /// curr stops being eligible, v0 + floor(sum_w_vruntime/sum_weight) + 1
    /// over the tree only; `None` when the tree is empty.
    pub fn ineligible_vruntime(&self, q: CfsRqId) -> Option<u64> {
        let cfs = self.cfs(q);
        if cfs.sum_weight == 0 {
            return None;
        }
        let d = floor_div(cfs.sum_w_vruntime, i128::from(cfs.sum_weight));
        Some(
            cfs.zero_vruntime
                .wrapping_add(d as i64 as u64)
                .wrapping_add(1),
        )
    }

    /// The lag V - v of an entity (virtual ns).
    pub fn entity_lag_now(&self, q: CfsRqId, id: EntityId) -> i64 {
        self.avg_vruntime_peek(q).wrapping_sub(self.se(id).vruntime) as i64
    }

    /// `cfs_rq_min_slice`: curr (if on_rq) and the tree; `u64::MAX` if empty.
    pub fn cfs_rq_min_slice(&self, q: CfsRqId) -> u64 {
        let cfs = self.cfs(q);
        let mut m = u64::MAX;
        if let Some(c) = cfs.curr {
            if self.se(c).on_rq {
                m = self.se(c).slice;
            }
        }
        if let Some((_, mn, _)) = cfs.timeline.aggregates() {
            m = m.min(mn);
        }
        m
    }

    /// `cfs_rq_max_slice`: curr (if on_rq) and the tree; 0 if empty.
    pub fn cfs_rq_max_slice(&self, q: CfsRqId) -> u64 {
        let cfs = self.cfs(q);
        let mut m = 0;
        if let Some(c) = cfs.curr {
            if self.se(c).on_rq {
                m = self.se(c).slice;
            }
        }
        if let Some((_, _, mx)) = cfs.timeline.aggregates() {
            m = m.max(mx);
        }
        m
    }

    /// `entity_before`: a's deadline is strictly earlier.
    pub fn entity_before(&self, a: EntityId, b: EntityId) -> bool {
        vtime_before(self.se(a).deadline, self.se(b).deadline)
    }

    /// `calc_delta_fair` for entity `id`.
    pub(crate) fn delta_fair(&self, delta: u64, id: EntityId) -> u64 {
        calc_delta_fair(delta, &self.se(id).load)
    }

    /// `resched_curr_lazy`: a lazy request only under the lazy model
    /// (`get_lazy_tif_bit()`), otherwise `resched_curr`.
    pub(crate) fn resched_curr_lazy(&mut self) {
        if !self.config.preempt_lazy {
            return self.resched_curr();
        }
        self.resched = Some(self.resched.map_or(Resched::Lazy, |r| r.max(Resched::Lazy)));
    }

    /// `test_tsk_need_resched(curr)`: `TIF_NEED_RESCHED` only, not the
    /// lazy bit.
    pub fn need_resched(&self) -> bool {
        self.resched == Some(Resched::Full)
    }

    /// `resched_curr`.
    pub(crate) fn resched_curr(&mut self) {
        self.resched = Some(Resched::Full);
    }
}

/// `key * weight` as i128, through i64 when the product fits (nearly
/// always): the same value, but wasm32 has no 64x64->128 multiply and
/// would call compiler-rt's `__multi3` on every update.
#[inline]
fn wide_mul(key: i64, weight: u64) -> i128 {
    match i64::try_from(weight).ok().and_then(|w| key.checked_mul(w)) {
        Some(p) => i128::from(p),
        None => i128::from(key) * i128::from(weight),
    }
}

/// `floor(s / w)` for `w > 0`, through i64 when both fit: the same value
/// without the slow 128-bit division routine (`__divti3`) on wasm32.
#[inline]
fn floor_div(s: i128, w: i128) -> i128 {
    debug_assert!(w > 0);
    match (i64::try_from(s), i64::try_from(w)) {
        (Ok(s), Ok(w)) => i128::from(s.div_euclid(w)),
        _ => s.div_euclid(w),
    }
}

#[cfg(test)]
mod wide_tests {
    use super::{floor_div, wide_mul};

    #[test]
    fn fast_paths_agree_with_128_bit_arithmetic() {
        let keys = [
            0i64,
            1,
            -1,
            7,
            -7,
            i64::MAX,
            i64::MIN,
            1 << 40,
            -(1 << 40),
            123_456_789,
        ];
        let weights = [1u64, 2, 15, 1024, 88761, 1 << 40, u64::MAX];
        for &k in &keys {
            for &w in &weights {
                assert_eq!(wide_mul(k, w), i128::from(k) * i128::from(w), "{k} * {w}");
                let s = i128::from(k) * 3 + 1;
                for d in [1i128, 3, 1024, i128::from(w), i128::MAX] {
                    assert_eq!(floor_div(s, d), s.div_euclid(d), "{s} / {d}");
                }
            }
        }
    }
}
