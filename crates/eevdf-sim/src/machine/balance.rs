//! Load balancing and wakeup placement glue (docs/model.md §5): the
//! simulator's side of `select_task_rq_fair` (building the
//! [`MachineView`], `record_wakee`), migrations through the engine's
//! dequeue/enqueue (so lag and relative deadlines follow the task),
//! periodic balancing per domain with the interval rules, newidle
//! balancing (avg_idle, NI_RANDOM), `task_hot`, and the SIS_UTIL scan
//! budget.
//!
//! Simplifications, each noted where it is made: group types are
//! has_spare / fully_busy / overloaded plus misfit (no asym packing or
//! SMT-balance classes); misfit tasks move by active balance only to an
//! idle bigger CPU.

use std::cell::OnceCell;

use eevdf_core::{CfsRqId, WakeFlags};

use super::{Sim, State};
use crate::config::Nanos;
use crate::pelt::Pelt;
use crate::placement::{self, CpuView, CpuViews, MachineView, PlaceReason, WakeCtx};
use crate::topology::SchedDomain;
use crate::workload::Tid;

const MS: Nanos = 1_000_000;
/// `available_idle_cpu()`: nothing running, queued or on its way
/// (`rq->ttwu_pending`: a wakee on a halted vCPU's wakelist, `turns.rs`).
#[inline]
fn idle_cpu(c: &super::Cpu) -> bool {
    c.curr.is_none() && c.rq.h_nr_queued == 0 && !c.ttwu_pending
}

/// A CPU as placement sees it at `now`.
#[inline]
fn view_of(c: &super::Cpu, now: Nanos) -> CpuView {
    let busy = busy_level(c);
    let ms = c.rq.cfs_rq_min_slice(CfsRqId::ROOT);
    let load_weight = c.rq.cfs(CfsRqId::ROOT).load_weight;
    let (util, load) = c.util.peek_pair(&c.load, now, busy, load_weight);
    CpuView {
        idle: idle_cpu(c),
        sched_idle: false,
        nr_running: c.rq.h_nr_queued,
        nr_delayed: c.rq.h_nr_delayed,
        util: cpu_util(c, util),
        load,
        min_slice: (ms != u64::MAX).then_some(ms),
    }
}

/// `sched_nr_migrate`: tasks looked at per balance pass.
const LOOP_MAX: usize = 32;

/// Group statistics of one sched group (`struct sg_lb_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupStats {
    /// Runnable fair tasks (delayed ones excluded).
    pub nr: u64,
    /// Σ PELT load of the CPUs.
    pub load: u64,
    /// Σ PELT utilisation, in capacity units.
    pub util: u64,
    pub capacity: u64,
    pub idle: u64,
    /// CPUs in the group.
    pub weight: u64,
}

/// Buffers reused by every wakeup placement and balance pass, so the hot
/// paths do not allocate (an allocation per wakeup was a visible share
/// of the worker's time in wasm, whose allocator is slower than glibc's).
/// Their contents mean nothing between calls.
#[derive(Clone, Debug, Default)]
pub(super) struct Scratch {
    views: Vec<OnceCell<CpuView>>,
    all_views: Vec<CpuView>,
    group_stats: Vec<GroupStats>,
}

/// What one balance pass decided (`calculate_imbalance`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalanceDecision {
    /// Balanced, or an imbalance not worth fixing.
    None,
    /// migrate_task: move `count` tasks from group `busiest`.
    MigrateTask { busiest: usize, count: u64 },
    /// migrate_load: move `load` worth of PELT load from group `busiest`.
    MigrateLoad { busiest: usize, load: u64 },
}

/// What `task_hot` reads of a task and of the pull.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HotCheck {
    /// The domain shares CPU capacity (the SMT level).
    pub smt_level: bool,
    pub cache_hot_buddy: bool,
    /// The destination's `rq->nr_running`.
    pub dst_nr_running: u32,
    /// The task is its queue's next buddy.
    pub next_buddy: bool,
    /// Since the task last ran (`rq_clock_task - exec_start`).
    pub since_ran: Nanos,
    pub migration_cost: Nanos,
}

/// `task_hot` (7.2.13 and 6.12.95 fair.c): a task that ran within the
/// migration cost is cache-hot, except to an SMT sibling; its queue's
/// next buddy is hot only to a destination with tasks of its own
/// (`CACHE_HOT_BUDDY` with `env->dst_rq->nr_running`), so an idle
/// CPU may pull it. Pure, so it is tested data-driven
/// (`tests/balance/task_hot.txt`).
pub fn task_hot(c: &HotCheck) -> bool {
    if c.smt_level {
        return false;
    }
    if c.cache_hot_buddy && c.dst_nr_running > 0 && c.next_buddy {
        return true;
    }
    c.since_ran < c.migration_cost
}

/// `sched_balance_find_src_group` + `calculate_imbalance` for the
/// group statistics of one domain, `local` being the balancing CPU's
/// group. Pure, so it is tested data-driven (`tests/balance/*.txt`).
pub fn calculate_imbalance(
    groups: &[GroupStats],
    local: usize,
    imbalance_pct: u32,
    numa: bool,
) -> BalanceDecision {
    let pct = imbalance_pct;
    let ls = groups[local];
    let Some((bi, bs)) = groups
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != local)
        .map(|(i, s)| (i, *s))
        .max_by_key(|(i, s)| (s.group_type(pct), s.avg_load(), s.nr, std::cmp::Reverse(*i)))
    else {
        return BalanceDecision::None;
    };
    if ls.group_type(pct) == GroupType::HasSpare {
        if bs.group_type(pct) == GroupType::HasSpare && bs.nr <= ls.nr + 1 {
            return BalanceDecision::None;
        }
        if bs.nr <= 1 {
            return BalanceDecision::None;
        }
        // adjust_numa_imbalance: tolerate a small imbalance across nodes.
        if numa && bs.nr <= 2 {
            return BalanceDecision::None;
        }
        // migrate_task: even out the number of tasks.
        let count = (bs.nr - ls.nr.min(bs.nr)) / 2;
        if count == 0 {
            return BalanceDecision::None;
        }
        return BalanceDecision::MigrateTask { busiest: bi, count };
    }
    if bs.group_type(pct) < GroupType::Overloaded {
        return BalanceDecision::None;
    }
    if bs.avg_load() * 100 <= ls.avg_load() * u64::from(pct) {
        return BalanceDecision::None;
    }
    let total_load: u64 = groups.iter().map(|s| s.load).sum();
    let total_cap: u64 = groups.iter().map(|s| s.capacity).sum();
    let sd_avg = total_load * 1024 / total_cap.max(1);
    let load = (bs.avg_load().saturating_sub(sd_avg)).min(sd_avg.saturating_sub(ls.avg_load()))
        * bs.capacity.min(ls.capacity)
        / 1024;
    if load == 0 {
        return BalanceDecision::None;
    }
    BalanceDecision::MigrateLoad { busiest: bi, load }
}

/// The kernel's `enum group_type`, in its order (the worse type wins
/// `update_sd_pick_busiest()`), for the three this model tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupType {
    HasSpare,
    FullyBusy,
    Overloaded,
}

impl GroupStats {
    /// `group_classify()`: has_spare < fully_busy < overloaded. The kernel also
    /// requires utilisation or runnable pressure for overloaded; with
    /// more runnable tasks than CPUs the runnable pressure always holds
    /// in this model (every waiting task adds a full unit), so the task
    /// count decides. A group is fully busy when its utilisation exceeds
    /// its capacity by the imbalance margin even without waiting tasks.
    pub fn group_type(&self, imbalance_pct: u32) -> GroupType {
        if self.nr > self.weight {
            GroupType::Overloaded
        } else if self.nr == self.weight
            || self.capacity * 100 < self.util * u64::from(imbalance_pct)
        {
            GroupType::FullyBusy
        } else {
            GroupType::HasSpare
        }
    }

    /// Load per 1024 units of capacity.
    pub fn avg_load(&self) -> u64 {
        self.load * 1024 / self.capacity.max(1)
    }
}

/// `cpu_util()`: a CPU's utilisation capped at its capacity (a migrated
/// task's average can take the sum past it).
#[inline]
pub(super) fn cpu_util(c: &super::Cpu, util: u64) -> u64 {
    util.min(c.capacity)
}

/// The PELT utilisation input of a CPU: its capacity while something
/// runs (`accumulate_sum` scales running time by
/// `arch_scale_cpu_capacity`, so utilisation measures work done).
pub(super) fn busy_level(c: &super::Cpu) -> u64 {
    if c.curr.is_some() {
        c.capacity
    } else {
        0
    }
}

impl Sim {
    /// Brings a CPU's PELT signals up to `now` (levels as they were).
    /// Not inlined, nor is `pelt_thread`: a copy at each of their call
    /// sites cost the page's wasm budget more than the calls cost time.
    #[inline(never)]
    pub(super) fn pelt_cpu(&mut self, cpu: u32, now: Nanos) {
        let c = &mut self.cpus[cpu as usize];
        if now > c.nr_last {
            // Through u64 when it fits (nearly always): wasm32 has no
            // 128-bit multiply.
            let dt = now - c.nr_last;
            c.nr_area += match u64::from(c.rq.h_nr_queued).checked_mul(dt) {
                Some(p) => u128::from(p),
                None => u128::from(c.rq.h_nr_queued) * u128::from(dt),
            };
            c.nr_last = now;
        }
        let busy = busy_level(c);
        let load = c.rq.cfs(CfsRqId::ROOT).load_weight;
        c.util.update_pair(&mut c.load, now, busy, load);
    }

    /// Brings a thread's PELT signals up to `now`.
    #[inline(never)]
    pub(super) fn pelt_thread(&mut self, tid: Tid, now: Nanos) {
        let (running, runnable) = self.pelt_levels(tid);
        let t = &mut self.threads[tid];
        t.util.update_pair(&mut t.load, now, running, runnable);
    }

    /// A thread's PELT input levels: its CPU's capacity while it runs,
    /// its weight while it runs or waits to.
    pub(super) fn pelt_levels(&self, tid: Tid) -> (u64, u64) {
        let t = &self.threads[tid];
        let running = if matches!(t.state, State::Running | State::Blocking) {
            self.cpus[t.cpu as usize].capacity
        } else {
            0
        };
        let runnable = if matches!(t.state, State::Running | State::Runnable | State::Blocking) {
            t.weight
        } else {
            0
        };
        (running, runnable)
    }

    /// `record_wakee`: the waker's flip counter (halved every second).
    pub(super) fn record_wakee(&mut self, waker_cpu: u32, wakee: Tid, now: Nanos) {
        let Some(w) = self.cpus[waker_cpu as usize].curr else {
            return;
        };
        if w == wakee {
            return;
        }
        let t = &mut self.threads[w];
        if now > t.flips_decay_ts + 1_000_000_000 {
            t.wakee_flips >>= 1;
            t.flips_decay_ts = now;
        }
        if t.last_wakee != Some(wakee) {
            t.last_wakee = Some(wakee);
            t.wakee_flips += 1;
        }
    }

    /// CPU `cpu` as placement sees it at `now`.
    fn cpu_view(&self, cpu: u32, now: Nanos) -> CpuView {
        view_of(&self.cpus[cpu as usize], now)
    }

    /// `select_task_rq_fair` for thread `tid`.
    pub(super) fn select_task_rq(
        &mut self,
        tid: Tid,
        waker_cpu: u32,
        sync: bool,
        fork: bool,
        now: Nanos,
    ) -> (u32, PlaceReason) {
        // The scratch buffers, so a wakeup does not allocate. Energy-aware
        // placement reads every CPU: they are made in one pass; otherwise
        // each is made when placement first reads it.
        let mut views = std::mem::take(&mut self.scratch.views);
        let mut all = std::mem::take(&mut self.scratch.all_views);
        all.clear();
        if self.eas {
            all.extend(self.cpus.iter().map(|c| view_of(c, now)));
        } else {
            views.resize_with(self.cpus.len(), OnceCell::new);
            views.iter_mut().for_each(|v| {
                v.take();
            });
        }
        let make = |cpu: u32| self.cpu_view(cpu, now);
        let idleness = |cpu: u32| (idle_cpu(&self.cpus[cpu as usize]), false);
        let t = &self.threads[tid];
        let waker = self.cpus[waker_cpu as usize].curr;
        // Only fit checks (asymmetric machines) and EAS read the task's
        // utilisation: elsewhere the decay would be work on every wakeup.
        let synced_util = if self.eas || self.topo.asymmetric() {
            t.util.peek(now, 0)
        } else {
            t.util.avg
        };
        let ctx = WakeCtx {
            waker_cpu,
            prev_cpu: t.cpu,
            sync,
            fork,
            // sync_entity_load_avg(): decayed to now; util_est keeps about
            // what it slept with.
            task_util: synced_util,
            task_util_est: t.util.avg.max(synced_util),
            task_load: t.load.avg,
            waker_load: waker.map_or(0, |w| self.threads[w].load.avg),
            task_slice: self.cpus[t.cpu as usize].rq.se(t.eid).slice,
            allowed: &t.allowed,
            recent_used_cpu: t.recent_used_cpu,
            waker_flips: waker.map_or(0, |w| self.threads[w].wakee_flips),
            wakee_flips: t.wakee_flips,
        };
        let m = MachineView {
            topo: &self.topo,
            cpus: match self.eas {
                true => CpuViews::all(&all),
                false => CpuViews::lazy(&views, &make, &idleness),
            },
            features: &self.cfg.features,
            profile: self.cfg.profile,
            llc: &self.llc,
            eas: self.eas,
        };
        let placed = placement::select_task_rq_fair(&m, &ctx);
        self.scratch.views = views;
        self.scratch.all_views = all;
        self.threads[tid].recent_used_cpu = placed.recent_used_cpu;
        (placed.cpu, placed.reason)
    }

    fn queue_on(&self, cpu: u32, tid: Tid) -> CfsRqId {
        match self.group_of(tid) {
            Some(g) => self.cpus[cpu as usize].groups[g].1,
            None => CfsRqId::ROOT,
        }
    }

    /// The index of the thread's task group, `None` for the root.
    pub(super) fn group_of(&self, tid: Tid) -> Option<usize> {
        let d = self.threads[tid].directive;
        self.cfg.tasks[d]
            .group
            .as_ref()
            .and_then(|p| self.cfg.groups.iter().position(|x| &x.path == p))
    }

    /// A migrating thread takes its PELT averages along (7.2.13 fair.c:
    /// `migrate_task_rq_fair` -> `remove_entity_load_avg` on `src`, or
    /// `detach_entity_load_avg` when a balance moves it; then
    /// `attach_entity_load_avg` at its enqueue on `dst`). A thread in a
    /// group moves its load between the group's queues, and its
    /// utilisation, which the group entities pass up unchanged, at the
    /// root; the root's load follows through the group entity's weight.
    #[inline(never)]
    fn move_pelt(&mut self, tid: Tid, src: u32, dst: u32, now: Nanos) {
        self.pelt_thread(tid, now);
        self.pelt_cpu(src, now);
        self.pelt_cpu(dst, now);
        let t = &self.threads[tid];
        let (util, load) = (t.util.avg, t.load.avg);
        let group = self.group_of(tid);
        for (cpu, arrives) in [(src, false), (dst, true)] {
            let c = &mut self.cpus[cpu as usize];
            debug_assert_eq!(c.util.last_update(), now, "pelt_cpu brought {cpu} to now");
            let move_avg = |p: &mut Pelt, avg| {
                if arrives {
                    p.attach(avg);
                } else {
                    p.detach(avg);
                }
            };
            move_avg(&mut c.util, util);
            match group {
                None => move_avg(&mut c.load, load),
                Some(g) => {
                    let (pelt, level) = &mut c.group_load[g];
                    pelt.update(now, *level);
                    move_avg(pelt, load);
                }
            }
        }
    }

    /// Moves a dequeued (sleeping) thread's entity to `dst`, from the
    /// code on CPU `ctx` (its waker's, or its timer's).
    pub(super) fn move_sleeping(&mut self, tid: Tid, dst: u32, ctx: u32, now: Nanos) {
        let src = self.threads[tid].cpu;
        self.move_pelt(tid, src, dst, now);
        let eid = self.threads[tid].eid;
        self.count_migration(src, dst);
        self.trace_migration(tid, src, dst, ctx);
        let se = self.cpus[src as usize].rq.detach_task(eid);
        self.cpus[src as usize].owner[eid.0 as usize] = None;
        let q = self.queue_on(dst, tid);
        let neid = self.cpus[dst as usize].rq.attach_task(se, q);
        let owner = &mut self.cpus[dst as usize].owner;
        if owner.len() <= neid.0 as usize {
            owner.resize(neid.0 as usize + 1, None);
        }
        owner[neid.0 as usize] = Some(tid);
        let t = &mut self.threads[tid];
        t.cpu = dst;
        t.eid = neid;
        t.migrations += 1;
        t.migrated = true;
    }

    /// Moves a queued, not running thread (runnable, or delayed) to
    /// `dst`: the engine's `migrate_out` / `migrate_in` (`detach_task` +
    /// `attach_task` with the kernel's flags).
    fn migrate_runnable(&mut self, tid: Tid, dst: u32, ctx: u32, now: Nanos) {
        let src = self.threads[tid].cpu;
        self.move_pelt(tid, src, dst, now);
        let eid = self.threads[tid].eid;
        let c = &mut self.cpus[src as usize];
        c.rq.set_clock(now);
        let se = c.rq.migrate_out(eid);
        c.owner[eid.0 as usize] = None;
        self.update_group_share(src, tid, now);
        let q = self.queue_on(dst, tid);
        let c = &mut self.cpus[dst as usize];
        c.rq.set_clock(now);
        let neid = c.rq.migrate_in(se, q);
        if c.owner.len() <= neid.0 as usize {
            c.owner.resize(neid.0 as usize + 1, None);
        }
        c.owner[neid.0 as usize] = Some(tid);
        self.count_migration(src, dst);
        self.trace_migration(tid, src, dst, ctx);
        let t = &mut self.threads[tid];
        t.cpu = dst;
        t.eid = neid;
        t.migrations += 1;
        t.migrated = true;
        self.update_group_share(dst, tid, now);
        let c = &mut self.cpus[dst as usize];
        c.rq.wakeup_preempt(neid, WakeFlags::default());
        self.hrtick_update(dst, now);
        self.honour_resched(dst, now);
    }

    /// Counts a migration at the lowest domain (of CPU 0's hierarchy, by
    /// span size) that spans both CPUs.
    fn count_migration(&mut self, src: u32, dst: u32) {
        let level = self.topo.domains[src as usize]
            .iter()
            .find(|sd| sd.span.contains(&dst))
            .map(|sd| sd.span.len());
        if let Some(span) = level {
            let idx = self.topo.domains[0]
                .iter()
                .position(|sd| sd.span.len() >= span);
            if let Some(i) = idx {
                if self.domain_migrations.len() <= i {
                    self.domain_migrations.resize(i + 1, 0);
                }
                self.domain_migrations[i] += 1;
            }
        }
    }

    /// Records `sched_migrate_task` (at the current event time).
    /// `sched_migrate_task`, on the CPU whose code moves the task
    /// (`set_task_cpu()`): `ctx`.
    fn trace_migration(&mut self, tid: Tid, src: u32, dst: u32, ctx: u32) {
        let ts = self.q.now();
        self.observers.emit(crate::observe::SimEvent::Migrate {
            ts,
            cpu: ctx,
            task: tid,
            orig_cpu: src,
            dest_cpu: dst,
        });
    }

    /// `update_misfit_status` (tick): on an asymmetric machine, a running
    /// task that does not fit its CPU, where a bigger one exists.
    pub(super) fn update_misfit_status(&mut self, cpu: u32) {
        let c = cpu as usize;
        let misfit = match self.cpus[c].curr {
            Some(tid) if self.topo.asymmetric() => {
                let cap = self.topo.capacity(cpu);
                let t = &self.threads[tid];
                !placement::fits_capacity(t.util.avg, cap)
                    && cap < self.topo.max_capacity()
                    && t.allowed.iter().any(|a| self.topo.capacity(*a) > cap)
            }
            _ => false,
        };
        self.cpus[c].misfit = misfit;
    }

    /// Active balance for a misfit task (`migrate_misfit`): the stopper
    /// takes `src`, the running task is pushed to the bigger `dst`.
    fn active_balance(&mut self, src: u32, tid: Tid, dst: u32, now: Nanos) {
        self.account_running(src, now);
        self.pelt_cpu(src, now);
        self.pelt_thread(tid, now);
        let c = &mut self.cpus[src as usize];
        c.rq.set_clock(now);
        c.rq.stop_curr();
        c.curr = None;
        c.gen += 1;
        c.misfit = false;
        self.threads[tid].state = State::Runnable;
        self.threads[tid].last_ran = now;
        // The stopper's request is a full one.
        let in_kernel = self.preempts_kernel(eevdf_core::Resched::Full);
        self.hackbench_preempted(tid, now, in_kernel);
        // The stopper on `src` pushes it.
        self.migrate_runnable(tid, dst, src, now);
        self.switch(src, now);
    }

    /// Schedules every CPU's first balance pass.
    pub(super) fn init_balance(&mut self) {
        let tick = self.cpus[0].rq.config.tick_nsec;
        for cpu in 0..self.cpus.len() {
            let n = self.topo.domains[cpu].len();
            let intervals: Vec<Nanos> = self.topo.domains[cpu]
                .iter()
                .map(|sd| u64::from(sd.min_interval_ms) * MS)
                .collect();
            let c = &mut self.cpus[cpu];
            c.avg_idle = 2 * c.rq.config.migration_cost_ns;
            c.balance_interval = intervals.clone();
            c.nr_balance_failed = vec![0; n];
            // Stagger like the kernel's jiffies-based next_balance.
            c.next_balance = intervals
                .iter()
                .map(|i| i + (cpu as u64 % 8) * tick / 8)
                .collect();
            if let Some(first) = c.next_balance.iter().min() {
                self.q.schedule(*first, super::Ev::Balance(cpu as u32));
            }
        }
    }

    /// The periodic balance (`sched_balance_domains`) on `cpu`.
    pub(super) fn periodic_balance(&mut self, cpu: u32, now: Nanos) {
        let c = cpu as usize;
        let busy = self.cpus[c].curr.is_some();
        let tick = self.cpus[c].rq.config.tick_nsec;
        for level in 0..self.topo.domains[c].len() {
            if now < self.cpus[c].next_balance[level] {
                continue;
            }
            if self.topo.domains[c][level].flags.share_llc
                && !self.topo.domains[c][level].flags.share_cpucapacity
            {
                self.update_idle_cpu_scan(cpu, level, now);
            }
            let moved = self.sched_balance_rq(cpu, level, now);
            let sd = &self.topo.domains[c][level];
            let (min_i, max_i, factor) = (
                u64::from(sd.min_interval_ms) * MS,
                u64::from(sd.max_interval_ms) * MS,
                u64::from(sd.busy_factor),
            );
            let cpu_state = &mut self.cpus[c];
            cpu_state.balance_interval[level] = if moved > 0 {
                min_i
            } else {
                (cpu_state.balance_interval[level] * 2).min(max_i)
            };
            let mut interval = cpu_state.balance_interval[level];
            if busy {
                interval = interval * factor - tick.min(interval * factor);
            }
            let interval = interval.clamp(tick, 100 * MS);
            cpu_state.next_balance[level] = now + interval;
        }
        if let Some(next) = self.cpus[c].next_balance.iter().min() {
            self.q
                .schedule((*next).max(now + 1), super::Ev::Balance(cpu));
        }
    }

    /// `update_idle_cpu_scan`: the SIS_UTIL budget of this CPU's LLC.
    fn update_idle_cpu_scan(&mut self, cpu: u32, level: usize, now: Nanos) {
        let sd = &self.topo.domains[cpu as usize][level];
        let weight = sd.span.len() as u64;
        let pct = u64::from(sd.imbalance_pct);
        let sum: u64 = sd
            .span
            .iter()
            .map(|i| {
                let c = &self.cpus[*i as usize];
                cpu_util(c, c.util.peek(now, busy_level(c)))
            })
            .sum();
        let x = sum / weight.max(1);
        let y = 1024 - (x * x * pct * pct / (10_000 * 1024)).min(1024);
        let id = self.topo.llc_id(cpu) as usize;
        if id < self.llc.nr_idle_scan.len() {
            self.llc.nr_idle_scan[id] = (y * weight / 1024) as u32;
        }
    }

    fn group_stats(&self, group: &[u32], now: Nanos) -> GroupStats {
        let mut s = GroupStats::default();
        for cpu in group {
            let c = &self.cpus[*cpu as usize];
            let busy = busy_level(c);
            let cap = u64::from(self.topo.capacity(*cpu));
            s.nr += u64::from(c.rq.h_nr_queued - c.rq.h_nr_delayed);
            let load_weight = c.rq.cfs(CfsRqId::ROOT).load_weight;
            let (util, load) = c.util.peek_pair(&c.load, now, busy, load_weight);
            s.load += load;
            s.util += cpu_util(c, util);
            s.capacity += cap;
            s.idle += u64::from(c.curr.is_none() && c.rq.h_nr_queued == 0);
            s.weight += 1;
        }
        s
    }

    /// `task_hot` for a pull of `tid` to `dst` at domain `level`.
    fn task_hot(&self, tid: Tid, dst: u32, dst_nr_running: u32, level: usize, now: Nanos) -> bool {
        let t = &self.threads[tid];
        let src = &self.cpus[t.cpu as usize];
        task_hot(&HotCheck {
            smt_level: self.topo.domains[dst as usize][level]
                .flags
                .share_cpucapacity,
            cache_hot_buddy: self.cfg.features.cache_hot_buddy,
            dst_nr_running,
            next_buddy: src.rq.cfs(src.rq.se(t.eid).cfs_rq).next == Some(t.eid),
            since_ran: now.saturating_sub(t.last_ran),
            migration_cost: src.rq.config.migration_cost_ns,
        })
    }

    /// One balance pass (`sched_balance_rq`) of `dst` at domain `level`.
    /// Returns the number of tasks pulled.
    fn sched_balance_rq(&mut self, dst: u32, level: usize, now: Nanos) -> usize {
        // A handle on the shared topology: `sd` stays borrowed while the
        // pass mutates `self`, without copying the domain per pass.
        let topo = std::rc::Rc::clone(&self.topo);
        let sd = &topo.domains[dst as usize][level];
        // Nothing to pull when no CPU of the domain has a second runnable
        // task: every path below would then end at find_busiest_queue
        // with nothing moved and nothing recorded, so skip the statistics
        // (common on a lightly loaded machine). Only the
        // misfit path moves a running task, so asymmetric domains go on.
        if !sd.flags.asym_cpucapacity
            && !sd
                .groups
                .iter()
                .flatten()
                .any(|c| self.nr_runnable(*c) >= 2)
        {
            return 0;
        }
        // Scratch buffer: a balance pass does not allocate.
        let mut stats = std::mem::take(&mut self.scratch.group_stats);
        stats.clear();
        stats.extend(sd.groups.iter().map(|g| self.group_stats(g, now)));
        let moved = self.balance_groups(dst, level, sd, &stats, now);
        self.scratch.group_stats = stats;
        moved
    }

    /// Runnable fair tasks of `cpu` that could move (delayed ones excluded).
    fn nr_runnable(&self, cpu: u32) -> u32 {
        let rq = &self.cpus[cpu as usize].rq;
        rq.h_nr_queued - rq.h_nr_delayed
    }

    /// The rest of `sched_balance_rq`, given each group's statistics.
    fn balance_groups(
        &mut self,
        dst: u32,
        level: usize,
        sd: &SchedDomain,
        stats: &[GroupStats],
        now: Nanos,
    ) -> usize {
        let Some(local) = sd.groups.iter().position(|g| g.contains(&dst)) else {
            return 0;
        };
        let ls = stats[local];
        let pct = sd.imbalance_pct;
        // group_misfit_task: an idle bigger CPU takes a misfit task
        // (migrate_misfit, by active balance since the task runs).
        if sd.flags.asym_cpucapacity
            && ls.group_type(pct) == GroupType::HasSpare
            && self.cpus[dst as usize].curr.is_none()
        {
            let dcap = self.topo.capacity(dst);
            let misfit = sd
                .span
                .iter()
                .copied()
                .filter(|c| *c != dst && self.cpus[*c as usize].misfit)
                .filter(|c| u64::from(dcap) * 1024 > u64::from(self.topo.capacity(*c)) * 1078)
                .find_map(|c| self.cpus[c as usize].curr.map(|t| (c, t)))
                .filter(|(_, t)| self.threads[*t].state == State::Running)
                .filter(|(_, t)| self.threads[*t].allowed.contains(&dst));
            if let Some((src, tid)) = misfit {
                self.active_balance(src, tid, dst, now);
                return 1;
            }
        }
        let (bi, migrate_load, mut imbalance) =
            match calculate_imbalance(stats, local, pct, sd.flags.numa) {
                BalanceDecision::None => return 0,
                BalanceDecision::MigrateTask { busiest, count } => (busiest, false, count),
                BalanceDecision::MigrateLoad { busiest, load } => (busiest, true, load),
            };
        // find_busiest_queue.
        let src = sd.groups[bi]
            .iter()
            .copied()
            .filter(|c| self.nr_runnable(*c) >= 2)
            .max_by_key(|c| {
                let cpu = &self.cpus[*c as usize];
                if migrate_load {
                    cpu.load.peek(now, cpu.rq.cfs(CfsRqId::ROOT).load_weight)
                } else {
                    u64::from(cpu.rq.h_nr_queued)
                }
            });
        let Some(src) = src else {
            return 0;
        };
        // detach_tasks: the coldest first (the tail of cfs_tasks).
        // Delayed tasks (sleeping, still queued) move only for migrate_load.
        let mut cands: Vec<Tid> = (0..self.threads.len())
            .filter(|t| {
                let th = &self.threads[*t];
                if th.cpu != src {
                    return false;
                }
                let se = self.cpus[src as usize].rq.se(th.eid);
                th.allowed.contains(&dst)
                    && self.cpus[src as usize].curr != Some(*t)
                    && se.on_rq
                    && (th.state == State::Runnable || (migrate_load && se.sched_delayed))
            })
            .collect();
        cands.sort_by_key(|t| (self.threads[*t].last_ran, *t));
        let failed = self.cpus[dst as usize].nr_balance_failed[level];
        let mut moved = 0;
        // `dst` is not switched until the pass is over (see
        // `balancing_cpu`): a switch could dequeue a migrated delayed task
        // on pick and start a nested newidle pass, leaving `cands` stale.
        let outer = self.balancing_cpu.replace(dst);
        // detach_tasks() takes them all before attach_tasks() adds any:
        // task_hot sees the destination as it was before the pass.
        let dst_nr_running = self.cpus[dst as usize].rq.h_nr_queued;
        for tid in cands.into_iter().take(LOOP_MAX) {
            if imbalance == 0 {
                break;
            }
            debug_assert!(
                {
                    let th = &self.threads[tid];
                    let rq = &self.cpus[src as usize].rq;
                    th.cpu == src && rq.se(th.eid).on_rq && rq.curr_task != Some(th.eid)
                },
                "can_migrate_task: candidate {tid} left {src} or runs"
            );
            if failed <= sd.cache_nice_tries && self.task_hot(tid, dst, dst_nr_running, level, now)
            {
                continue;
            }
            if migrate_load {
                let load = self.threads[tid].load.avg.max(1);
                if load >> failed.min(16) > imbalance {
                    continue;
                }
                imbalance = imbalance.saturating_sub(load);
            } else {
                imbalance -= 1;
            }
            // The balancing CPU pulls it.
            self.migrate_runnable(tid, dst, dst, now);
            moved += 1;
        }
        self.balancing_cpu = outer;
        if moved > 0 {
            self.honour_resched(dst, now);
        }
        let f = &mut self.cpus[dst as usize].nr_balance_failed[level];
        *f = if moved > 0 { 0 } else { *f + 1 };
        moved
    }

    /// `sched_balance_newidle`: a CPU about to go idle tries to pull a
    /// task, domain by domain, unless it does not stay idle long enough
    /// on average. NI_RANDOM skips attempts in proportion to the recent
    /// failure rate.
    pub(super) fn newidle_balance(&mut self, cpu: u32, now: Nanos) -> bool {
        let c = &self.cpus[cpu as usize];
        if c.avg_idle < c.rq.config.migration_cost_ns {
            return false;
        }
        for level in 0..self.topo.domains[cpu as usize].len() {
            if !self.topo.domains[cpu as usize][level].flags.balance_newidle {
                continue;
            }
            if self.cfg.features.ni_random {
                let failed = u64::from(self.cpus[cpu as usize].nr_balance_failed[level].min(10));
                let chance = 1024 >> failed;
                if self.rng.below(1024) >= chance.max(1) {
                    continue;
                }
            }
            if self.sched_balance_rq(cpu, level, now) > 0 {
                return true;
            }
        }
        false
    }
}
