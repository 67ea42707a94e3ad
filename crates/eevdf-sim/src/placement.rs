//! Wakeup and fork placement after `select_task_rq_fair` in
//! kernel/sched/fair.c of Debian's 7.2.13 and 6.12.95 (the same code
//! unless a comment says otherwise): `wake_wide`; `wake_affine` with
//! `wake_affine_idle` and `wake_affine_weight` (WA_IDLE, WA_WEIGHT,
//! WA_BIAS, and the seed's WA_SLICE); `select_idle_sibling` with the idle
//! target and prev, the task's `recent_used_cpu` (which it updates), the
//! cluster fallbacks (`cpus_share_resources`), `select_idle_smt`, and
//! `select_idle_cpu` (SIS_UTIL budget, target's cluster first,
//! `select_idle_core`, and the seed's SIS_SLICE); `select_idle_capacity`
//! on asymmetric machines (with a SIS_UTIL budget from 7.2); a simplified
//! `find_energy_efficient_cpu`; and the fork slow path
//! (`sched_balance_find_dst_cpu`).
//!
//! Left out: SCHED_IDLE wakees (`choose_sched_idle_rq`), per-CPU kthread
//! stacking, uclamp, the staleness of the `has_idle_cores` hint (computed
//! exactly here), and 7.2's SMT-aware ranking in `select_idle_capacity`
//! and idle-core test in `asym_fits_cpu` (asymmetric SMT machines).
//!
//! Pure functions of a [`MachineView`], so decisions can be tested
//! data-driven: machine, CPU states and waking task in; the CPU, the
//! rule that chose it ([`PlaceReason`]) and the task's new
//! `recent_used_cpu` ([`Placed`]) out.

use std::cell::OnceCell;

use eevdf_core::{Features, Profile};

use crate::topology::{PerfDomain, SchedDomain, Topology};

/// What placement needs to know about one CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuView {
    /// Nothing runs or is queued (`available_idle_cpu`).
    pub idle: bool,
    /// Only SCHED_IDLE tasks run (`sched_idle_cpu`): counts as idle.
    pub sched_idle: bool,
    /// `rq->nr_running` (delayed tasks included).
    pub nr_running: u32,
    /// Delayed tasks among them.
    pub nr_delayed: u32,
    /// PELT utilisation, capacity-invariant: 0..=this CPU's capacity.
    pub util: u64,
    /// PELT load (`cpu_load`).
    pub load: u64,
    /// The queue's minimum slice including curr (`MINSLICE_PERCPU`);
    /// `None` when idle.
    pub min_slice: Option<u64>,
}

/// Per-LLC state kept by the load balancer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LlcState {
    /// SIS_UTIL scan budget, indexed by the LLC id (first CPU of the LLC).
    pub nr_idle_scan: Vec<u32>,
}

/// The waking (or forked) task and its context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeCtx<'a> {
    /// The waker's CPU (`smp_processor_id()`); the parent's at fork.
    pub waker_cpu: u32,
    pub prev_cpu: u32,
    pub sync: bool,
    pub fork: bool,
    /// `task_util(p)`: the sleeper's utilisation decayed to the wakeup
    /// (`sync_entity_load_avg`); what leaves or joins a CPU's own.
    pub task_util: u64,
    /// `task_util_est(p)`, what fit checks ask room for: the larger of
    /// `task_util` and UTIL_EST's estimate, which keeps about what the
    /// task had when it last slept; with no `util_est` here, that value
    /// stands in for it. Never below `task_util`.
    pub task_util_est: u64,
    pub task_load: u64,
    /// The waker's load (`current`'s `task_h_load`), for sync wakeups.
    pub waker_load: u64,
    pub task_slice: u64,
    pub allowed: &'a [u32],
    pub recent_used_cpu: Option<u32>,
    pub waker_flips: u32,
    pub wakee_flips: u32,
}

/// Every CPU as placement reads it, each computed on its first read
/// and kept for the rest of the call: a wakeup reads a few CPUs (prev,
/// target, an LLC scan), and computing all of them (their PELT decay,
/// their min slice) was most of a wakeup's cost on 64-CPU machines.
/// Placement is a pure function of the machine at one instant, so a CPU
/// read late is the CPU read early.
#[derive(Clone, Copy)]
pub struct CpuViews<'a> {
    /// Every CPU made at once (energy-aware placement reads them all).
    all: Option<&'a [CpuView]>,
    cells: &'a [OnceCell<CpuView>],
    make: &'a dyn Fn(u32) -> CpuView,
    /// A CPU's `(idle, sched_idle)` without the rest of its view: idle
    /// scans read only these, over a whole LLC.
    idleness: &'a dyn Fn(u32) -> (bool, bool),
}

impl<'a> CpuViews<'a> {
    /// Views of `cells.len()` CPUs, each made by `make` when first read;
    /// `cells` must be empty. `idleness` must agree with `make`.
    pub fn lazy(
        cells: &'a [OnceCell<CpuView>],
        make: &'a dyn Fn(u32) -> CpuView,
        idleness: &'a dyn Fn(u32) -> (bool, bool),
    ) -> Self {
        debug_assert!(cells.iter().all(|c| c.get().is_none()), "stale views");
        CpuViews {
            all: None,
            cells,
            make,
            idleness,
        }
    }

    /// Views made beforehand, one per CPU.
    pub fn all(views: &'a [CpuView]) -> Self {
        CpuViews {
            all: Some(views),
            cells: &[],
            make: &|_| unreachable!("every view is made"),
            idleness: &|_| unreachable!("every view is made"),
        }
    }

    /// CPU `cpu`'s `(idle, sched_idle)`, without making its view.
    #[inline]
    pub fn idleness(&self, cpu: u32) -> (bool, bool) {
        let view = match self.all {
            Some(v) => Some(&v[cpu as usize]),
            None => self.cells[cpu as usize].get(),
        };
        match view {
            Some(v) => (v.idle, v.sched_idle),
            None => {
                let i = (self.idleness)(cpu);
                debug_assert_eq!(i, {
                    let v = self.get(cpu);
                    (v.idle, v.sched_idle)
                });
                i
            }
        }
    }

    /// `available_idle_cpu() || sched_idle_cpu()` of CPU `cpu`.
    #[inline]
    fn idle_for_sis(&self, cpu: u32) -> bool {
        let (idle, sched_idle) = self.idleness(cpu);
        idle || sched_idle
    }

    /// CPU `cpu`'s view.
    #[inline]
    pub fn get(&self, cpu: u32) -> CpuView {
        match self.all {
            Some(v) => v[cpu as usize],
            None => *self.cells[cpu as usize].get_or_init(|| (self.make)(cpu)),
        }
    }

    pub fn len(&self) -> usize {
        self.all.map_or(self.cells.len(), <[CpuView]>::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every CPU's view, in CPU order.
    pub fn iter(&self) -> impl Iterator<Item = CpuView> + '_ {
        (0..self.len() as u32).map(|c| self.get(c))
    }
}

impl std::fmt::Debug for CpuViews<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let read = match self.all {
            Some(v) => v.len(),
            None => self.cells.iter().filter(|c| c.get().is_some()).count(),
        };
        write!(f, "CpuViews({} CPUs, {read} made)", self.len())
    }
}

/// The whole machine as placement sees it.
#[derive(Clone, Copy, Debug)]
pub struct MachineView<'a> {
    pub topo: &'a Topology,
    pub cpus: CpuViews<'a>,
    pub features: &'a Features,
    /// The kernel version, for code that differs without a feature.
    pub profile: Profile,
    pub llc: &'a LlcState,
    /// Energy-aware scheduling is enabled (`sched_energy_aware`) and the
    /// machine has an energy model.
    pub eas: bool,
}

/// Why a CPU was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaceReason {
    /// The fork/exec slow path: idlest group, then idlest CPU.
    ForkIdlest,
    /// `select_idle_sibling`: the target is idle.
    TargetIdle,
    /// `select_idle_sibling`: prev shares the LLC and is idle (with
    /// clusters, in another cluster only when the scan found nothing).
    PrevIdle,
    /// `select_idle_sibling`: the recently used CPU is idle (with
    /// clusters, likewise).
    RecentUsedIdle,
    /// `select_idle_capacity`: an idle CPU that fits the task.
    IdleCapacityFit,
    /// `select_idle_capacity`: no idle fitting CPU; the best idle one.
    IdleCapacityBest,
    /// An idle SMT sibling of prev.
    IdleSmtSibling,
    /// `select_idle_core`: a fully idle core.
    IdleCore,
    /// `select_idle_cpu`: an idle CPU found by the scan.
    IdleCpuScan,
    /// `select_idle_cpu` with an idle core hinted but none allowed: the
    /// first idle CPU `select_idle_core` met.
    IdleCpuOfCoreScan,
    /// SIS_SLICE: no idle CPU; the one where the slice lets it run first.
    SliceCpu,
    /// No idle CPU found: the target (after wake_affine).
    Target,
    /// The task may only run on one CPU.
    Pinned,
    /// `find_energy_efficient_cpu`: the lowest estimated energy.
    EnergyEfficient,
}

/// A placement decision and the task's `recent_used_cpu` after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub cpu: u32,
    pub reason: PlaceReason,
    /// The caller stores this in the task (`p->recent_used_cpu`).
    pub recent_used_cpu: Option<u32>,
}

/// The fit margin: `fits_capacity(u, cap)` ⇔ u * 1280 < cap * 1024.
pub fn fits_capacity(util: u64, capacity: u32) -> bool {
    util * 1280 < u64::from(capacity) * 1024
}

/// `wake_wide`: one-to-many waker patterns spread out.
pub fn wake_wide(topo: &Topology, ctx: &WakeCtx) -> bool {
    let factor = topo.llc_size(ctx.waker_cpu);
    let (master, slave) = if ctx.waker_flips >= ctx.wakee_flips {
        (ctx.waker_flips, ctx.wakee_flips)
    } else {
        (ctx.wakee_flips, ctx.waker_flips)
    };
    !(slave < factor || master < slave * factor)
}

fn allowed(ctx: &WakeCtx, cpu: u32) -> bool {
    ctx.allowed.contains(&cpu)
}

/// `wake_affine_idle`.
fn wake_affine_idle(m: &MachineView, this: u32, prev: u32, sync: bool) -> Option<u32> {
    let c = |i: u32| m.cpus.get(i);
    let idle = |cpu: u32| m.cpus.idleness(cpu).0;
    if idle(this) && m.topo.cpus_share_cache(this, prev) {
        return Some(if idle(prev) { prev } else { this });
    }
    if sync && c(this).nr_running - c(this).nr_delayed == 1 {
        return Some(this);
    }
    if idle(prev) {
        return Some(prev);
    }
    None
}

/// `wake_affine_weight` with PELT loads (7.2.13 and 6.12.95 alike).
fn wake_affine_weight(
    m: &MachineView,
    ctx: &WakeCtx,
    this: u32,
    prev: u32,
    imbalance_pct: u32,
) -> Option<u32> {
    let c = |i: u32| m.cpus.get(i);
    let mut this_eff = i128::from(c(this).load);
    if ctx.sync {
        let current = i128::from(ctx.waker_load);
        if current > this_eff {
            return Some(this);
        }
        this_eff -= current;
    }
    this_eff += i128::from(ctx.task_load);
    // Signed, as the kernel's s64: prev minus the wakee may go below 0.
    let mut prev_eff = i128::from(c(prev).load) - i128::from(ctx.task_load);
    if m.features.wa_bias {
        this_eff *= 100;
        prev_eff *= 100 + (i128::from(imbalance_pct) - 100) / 2;
    }
    this_eff *= i128::from(m.topo.capacity(prev));
    prev_eff *= i128::from(m.topo.capacity(this));
    if ctx.sync {
        prev_eff += 1;
    }
    (this_eff < prev_eff).then_some(this)
}

/// WA_SLICE (0/8 7/8): prefer the CPU where the wakee's slice is shorter
/// than the minimum slice queued there (it would preempt).
fn wake_affine_slice(m: &MachineView, ctx: &WakeCtx, this: u32, prev: u32) -> Option<u32> {
    let preempts = |i: u32| m.cpus.get(i).min_slice.is_none_or(|s| ctx.task_slice < s);
    match (preempts(this), preempts(prev)) {
        (true, false) => Some(this),
        (false, true) => Some(prev),
        _ => None,
    }
}

/// `wake_affine`: this CPU (the waker's) or prev.
fn wake_affine(m: &MachineView, ctx: &WakeCtx, this: u32, prev: u32, imbalance_pct: u32) -> u32 {
    let f = m.features;
    let mut target = None;
    if f.wa_idle {
        target = wake_affine_idle(m, this, prev, ctx.sync);
    }
    if target.is_none() && f.wa_slice {
        target = wake_affine_slice(m, ctx, this, prev);
    }
    if target.is_none() && f.wa_weight {
        target = wake_affine_weight(m, ctx, this, prev, imbalance_pct);
    }
    match target {
        Some(t) if t == this => this,
        _ => prev,
    }
}

/// `select_task_rq_fair`.
pub fn select_task_rq_fair(m: &MachineView, ctx: &WakeCtx) -> Placed {
    // wake_up_new_task() (core.c, both versions) sets a new task's
    // recent_used_cpu to task_cpu(p) before placing it.
    let recent_used_cpu = if ctx.fork {
        Some(ctx.prev_cpu)
    } else {
        ctx.recent_used_cpu
    };
    let keep = |cpu, reason| Placed {
        cpu,
        reason,
        recent_used_cpu,
    };
    if ctx.allowed.len() == 1 {
        return keep(ctx.allowed[0], PlaceReason::Pinned);
    }
    let cpu = ctx.waker_cpu;
    let prev = if allowed(ctx, ctx.prev_cpu) {
        ctx.prev_cpu
    } else {
        ctx.allowed[0]
    };
    if !ctx.fork && m.eas && !m.topo.perf_domains.is_empty() {
        if let Some(c) = find_energy_efficient_cpu(m, ctx, prev) {
            return keep(c, PlaceReason::EnergyEfficient);
        }
    }
    let want_affine = !ctx.fork && !wake_wide(m.topo, ctx) && allowed(ctx, cpu);
    let mut new_cpu = prev;
    let mut slow: Option<usize> = None;
    for (i, sd) in m.topo.domains[cpu as usize].iter().enumerate() {
        if want_affine && sd.flags.wake_affine && sd.span.contains(&prev) {
            if cpu != prev {
                new_cpu = wake_affine(m, ctx, cpu, prev, sd.imbalance_pct);
            }
            slow = None;
            break;
        }
        let flagged = if ctx.fork {
            sd.flags.balance_fork
        } else {
            sd.flags.balance_wake
        };
        if flagged {
            slow = Some(i);
        } else if !want_affine {
            break;
        }
    }
    if let Some(level) = slow {
        return keep(find_idlest_cpu(m, ctx, cpu, level), PlaceReason::ForkIdlest);
    }
    if ctx.fork {
        // No domain (one CPU): stay.
        return keep(prev, PlaceReason::Target);
    }
    select_idle_sibling(m, ctx, prev, new_cpu)
}

fn fits(m: &MachineView, ctx: &WakeCtx, cpu: u32) -> bool {
    !m.topo.asymmetric() || fits_capacity(ctx.task_util_est, m.topo.capacity(cpu))
}

/// `select_idle_sibling(p, prev, target)`. It stores prev as the task's
/// `recent_used_cpu` once past the idle target and idle prev returns.
pub fn select_idle_sibling(m: &MachineView, ctx: &WakeCtx, prev: u32, target: u32) -> Placed {
    let early = |cpu, reason| Placed {
        cpu,
        reason,
        recent_used_cpu: ctx.recent_used_cpu,
    };
    if m.cpus.idle_for_sis(target) && fits(m, ctx, target) {
        return early(target, PlaceReason::TargetIdle);
    }
    let mut prev_aff = None;
    if prev != target
        && m.topo.cpus_share_cache(prev, target)
        && m.cpus.idle_for_sis(prev)
        && fits(m, ctx, prev)
    {
        if !cluster_active(m.topo) || cpus_share_resources(m.topo, prev, target) {
            return early(prev, PlaceReason::PrevIdle);
        }
        // Another cluster: only if the target's has no idle CPU.
        prev_aff = Some(prev);
    }
    let (cpu, reason) = sis_after_store(m, ctx, prev, target, prev_aff);
    Placed {
        cpu,
        reason,
        recent_used_cpu: Some(prev),
    }
}

/// `select_idle_sibling` from the `recent_used_cpu` check on.
fn sis_after_store(
    m: &MachineView,
    ctx: &WakeCtx,
    prev: u32,
    target: u32,
    prev_aff: Option<u32>,
) -> (u32, PlaceReason) {
    let mut recent_aff = None;
    if let Some(r) = ctx.recent_used_cpu {
        if r != prev
            && r != target
            && allowed(ctx, r)
            && m.topo.cpus_share_cache(r, target)
            && m.cpus.idle_for_sis(r)
            && fits(m, ctx, r)
        {
            if !cluster_active(m.topo) || cpus_share_resources(m.topo, r, target) {
                return (r, PlaceReason::RecentUsedIdle);
            }
            recent_aff = Some(r);
        }
    }
    if m.topo.asymmetric() {
        if let Some(sd) = m.topo.sd_asym_cpucapacity(target) {
            return select_idle_capacity(m, ctx, &sd.span, target);
        }
    }
    let Some(llc) = m.topo.sd_llc(target) else {
        return (target, PlaceReason::Target);
    };
    let smt = m.topo.smt_siblings(target).len() > 1;
    let has_idle_core = smt && has_idle_cores(m, &llc.span);
    if smt && !has_idle_core && m.topo.cpus_share_cache(prev, target) {
        for s in m.topo.smt_siblings(prev).iter() {
            if *s != prev && allowed(ctx, *s) && m.cpus.idle_for_sis(*s) {
                return (*s, PlaceReason::IdleSmtSibling);
            }
        }
    }
    if let Some(hit) = select_idle_cpu(m, ctx, llc, has_idle_core, target) {
        return hit;
    }
    match (prev_aff, recent_aff) {
        (Some(p), _) => (p, PlaceReason::PrevIdle),
        (None, Some(r)) => (r, PlaceReason::RecentUsedIdle),
        (None, None) => (target, PlaceReason::Target),
    }
}

/// `sched_cluster_active`: the machine has a cluster level. Custom
/// machines are regular trees, so CPU 0's domains stand for all.
fn cluster_active(topo: &Topology) -> bool {
    topo.domains
        .first()
        .is_some_and(|d| d.iter().any(|sd| sd.flags.cluster))
}

/// `cpus_share_resources`: the same `sd_share_id` (the cluster's first
/// CPU, else the LLC's).
fn cpus_share_resources(topo: &Topology, a: u32, b: u32) -> bool {
    let id = |cpu: u32| {
        topo.domains[cpu as usize]
            .iter()
            .find(|sd| sd.flags.cluster)
            .map_or(topo.llc_id(cpu), |sd| sd.span[0])
    };
    id(a) == id(b)
}

/// The first sched group of the target's LLC domain when it is a
/// cluster (`sg->flags & SD_CLUSTER`): the child domain's span.
fn cluster_group(topo: &Topology, target: u32) -> Option<&[u32]> {
    if !cluster_active(topo) {
        return None;
    }
    let doms = &topo.domains[target as usize];
    let llc = doms.iter().take_while(|sd| sd.flags.share_llc).count();
    let child = doms.get(llc.checked_sub(2)?)?;
    child.flags.cluster.then_some(child.span.as_slice())
}

/// `for_each_cpu_wrap(cpu, span, target + 1)` over a sorted span.
fn wrap(span: &[u32], target: u32) -> impl Iterator<Item = u32> + '_ {
    let start = span.partition_point(|c| *c <= target);
    (0..span.len()).map(move |k| span[(start + k) % span.len()])
}

/// Whether any core of `span` has all its SMT threads idle. (The kernel
/// keeps this as a per-LLC hint that may be stale; we compute it.)
fn has_idle_cores(m: &MachineView, span: &[u32]) -> bool {
    span.iter().any(|cpu| {
        m.topo
            .smt_siblings(*cpu)
            .iter()
            .all(|s| m.cpus.idleness(*s).0)
    })
}

/// `select_idle_cpu`, then SIS_SLICE when it finds nothing.
fn select_idle_cpu(
    m: &MachineView,
    ctx: &WakeCtx,
    llc: &SchedDomain,
    has_idle_core: bool,
    target: u32,
) -> Option<(u32, PlaceReason)> {
    scan_llc(m, ctx, llc, has_idle_core, target).or_else(|| sis_slice(m, ctx, &llc.span))
}

/// One step of the scan.
enum Step {
    Found(u32, PlaceReason),
    Stop,
    Next,
}

/// The state of one `select_idle_cpu` scan.
struct IdleScan<'a> {
    m: &'a MachineView<'a>,
    span: &'a [u32],
    /// `cpus`: allowed CPUs of the span not yet ruled out, by position.
    cpus: Vec<bool>,
    /// `nr`: the SIS_UTIL budget plus one.
    nr: u32,
    has_idle_core: bool,
    /// The first idle CPU `select_idle_core` met.
    idle_cpu: Option<u32>,
}

impl IdleScan<'_> {
    fn pos(&self, cpu: u32) -> Option<usize> {
        self.span.binary_search(&cpu).ok()
    }

    fn candidate(&self, cpu: u32) -> bool {
        self.pos(cpu).is_some_and(|i| self.cpus[i])
    }

    fn remove(&mut self, cpu: u32) {
        if let Some(i) = self.pos(cpu) {
            self.cpus[i] = false;
        }
    }

    fn visit(&mut self, cpu: u32) -> Step {
        if self.has_idle_core {
            return self.select_idle_core(cpu);
        }
        self.nr -= 1;
        if self.nr == 0 {
            return Step::Stop;
        }
        if self.m.cpus.idle_for_sis(cpu) {
            return Step::Found(cpu, PlaceReason::IdleCpuScan);
        }
        Step::Next
    }

    /// `select_idle_core`: `core` if all its threads are idle; else its
    /// threads leave the scan, and the first idle one is remembered.
    fn select_idle_core(&mut self, core: u32) -> Step {
        let topo = self.m.topo;
        let mut idle = true;
        for &s in topo.smt_siblings(core) {
            let (s_idle, s_sched_idle) = self.m.cpus.idleness(s);
            if !s_idle {
                idle = false;
                if self.idle_cpu.is_some() {
                    break;
                }
                if s_sched_idle && self.candidate(s) {
                    self.idle_cpu = Some(s);
                    break;
                }
            } else if self.idle_cpu.is_none() && self.candidate(s) {
                self.idle_cpu = Some(s);
            }
        }
        if idle {
            return Step::Found(core, PlaceReason::IdleCore);
        }
        for &s in topo.smt_siblings(core) {
            self.remove(s);
        }
        Step::Next
    }

    /// Visits `order`, skipping CPUs out of the scan; `Some` to return.
    fn run(&mut self, order: impl Iterator<Item = u32>) -> Option<Option<(u32, PlaceReason)>> {
        for cpu in order {
            if !self.candidate(cpu) {
                continue;
            }
            match self.visit(cpu) {
                Step::Found(c, r) => return Some(Some((c, r))),
                Step::Stop => return Some(None),
                Step::Next => {}
            }
        }
        None
    }
}

/// `select_idle_cpu`: with SIS_UTIL, `nr_idle_scan` CPUs at most (none
/// when it is 0, even with an idle core); the target's cluster first;
/// for an idle core, whole cores and then the first idle CPU met.
fn scan_llc(
    m: &MachineView,
    ctx: &WakeCtx,
    llc: &SchedDomain,
    has_idle_core: bool,
    target: u32,
) -> Option<(u32, PlaceReason)> {
    let span = &llc.span;
    let nr = sis_util_nr(m, span, target);
    if nr == 1 {
        return None;
    }
    let mut s = IdleScan {
        m,
        span,
        cpus: span.iter().map(|c| allowed(ctx, *c)).collect(),
        nr,
        has_idle_core,
        idle_cpu: None,
    };
    if let Some(group) = cluster_group(m.topo, target) {
        if let Some(done) = s.run(wrap(group, target)) {
            return done;
        }
        group.iter().for_each(|c| s.remove(*c));
    }
    if let Some(done) = s.run(wrap(span, target)) {
        return done;
    }
    // The kernel also clears the LLC's idle-core hint here
    // (set_idle_cores); ours is computed afresh at every wakeup.
    s.idle_cpu.map(|c| (c, PlaceReason::IdleCpuOfCoreScan))
}

/// SIS_SLICE (0/8 8/8): with no idle CPU, the CPU where the wakee's
/// slice is shorter than everything queued (it would preempt at once),
/// preferring the largest such minimum slice.
fn sis_slice(m: &MachineView, ctx: &WakeCtx, span: &[u32]) -> Option<(u32, PlaceReason)> {
    if !m.features.sis_slice {
        return None;
    }
    span.iter()
        .copied()
        .filter(|c| allowed(ctx, *c))
        .filter_map(|c| {
            m.cpus
                .get(c)
                .min_slice
                .filter(|s| ctx.task_slice < *s)
                .map(|s| (c, s))
        })
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(c, _)| (c, PlaceReason::SliceCpu))
}

/// Whether `select_idle_capacity` takes the SIS_UTIL budget: in
/// 7.2.13's fair.c, not in 6.12.95's. Taken as new in 7.2, so in the
/// tip tree after it.
fn sis_util_capacity(p: Profile) -> bool {
    matches!(p, Profile::V7_2 | Profile::Tip2026_09)
}

/// The SIS_UTIL budget of `select_idle_cpu`/`select_idle_capacity`
/// plus one (`nr`), or `u32::MAX` without SIS_UTIL. The simulator keeps
/// one per LLC; 7.2 keeps the asym domain's apart when that is wider.
fn sis_util_nr(m: &MachineView, span: &[u32], target: u32) -> u32 {
    if !m.features.sis_util {
        return u32::MAX;
    }
    let llc_id = m.topo.llc_id(target) as usize;
    let scan = m.llc.nr_idle_scan.get(llc_id).copied();
    scan.unwrap_or(span.len() as u32).saturating_add(1)
}

/// `select_idle_capacity`: from target itself, the first idle CPU that
/// fits, else the best idle one by capacity, else target. From 7.2 the
/// SIS_UTIL budget ends the scan (with the best so far) unless an idle
/// core is known.
fn select_idle_capacity(
    m: &MachineView,
    ctx: &WakeCtx,
    span: &[u32],
    target: u32,
) -> (u32, PlaceReason) {
    let limited = sis_util_capacity(m.profile)
        && !(m.topo.smt_siblings(target).len() > 1 && has_idle_cores(m, span));
    let mut nr = if limited {
        sis_util_nr(m, span, target)
    } else {
        u32::MAX
    };
    if nr == 1 {
        return (target, PlaceReason::Target);
    }
    let start = span.partition_point(|c| *c < target);
    let mut best: Option<(u32, u32)> = None;
    for k in 0..span.len() {
        let cpu = span[(start + k) % span.len()];
        if !allowed(ctx, cpu) {
            continue;
        }
        nr -= 1;
        if nr == 0 {
            break;
        }
        if !m.cpus.idle_for_sis(cpu) {
            continue;
        }
        let cap = m.topo.capacity(cpu);
        if fits_capacity(ctx.task_util_est, cap) {
            return (cpu, PlaceReason::IdleCapacityFit);
        }
        if best.is_none_or(|(_, bc)| cap > bc) {
            best = Some((cpu, cap));
        }
    }
    match best {
        Some((cpu, _)) => (cpu, PlaceReason::IdleCapacityBest),
        None => (target, PlaceReason::Target),
    }
}

/// `sched_balance_find_dst_cpu`: from the highest flagged domain down,
/// the idlest group (most idle CPUs, then fewest tasks, then least
/// load), then the idlest CPU in it.
fn find_idlest_cpu(m: &MachineView, ctx: &WakeCtx, cpu: u32, level: usize) -> u32 {
    let c = |i: u32| m.cpus.get(i);
    let mut cpu = if allowed(ctx, cpu) {
        cpu
    } else {
        ctx.allowed[0]
    };
    let mut level = level as isize;
    while level >= 0 {
        let Some(sd) = m.topo.domains[cpu as usize].get(level as usize) else {
            break;
        };
        let score = |g: &Vec<u32>| {
            let cpus: Vec<u32> = g.iter().copied().filter(|x| allowed(ctx, *x)).collect();
            if cpus.is_empty() {
                return None;
            }
            let idle = cpus.iter().filter(|x| c(**x).idle).count() as u64;
            let running: u64 = cpus.iter().map(|x| u64::from(c(*x).nr_running)).sum();
            let load: u64 = cpus.iter().map(|x| c(*x).load).sum();
            // Lower is better.
            Some((u64::MAX - idle, running, load))
        };
        let local = sd.groups.iter().find(|g| g.contains(&cpu));
        let local_score = local.and_then(score);
        let best = sd
            .groups
            .iter()
            .filter_map(|g| score(g).map(|s| (s, g)))
            .min_by(|a, b| a.0.cmp(&b.0));
        if let Some((s, g)) = best {
            if local_score.is_none_or(|ls| s < ls) {
                // The idlest CPU of that group.
                cpu = g
                    .iter()
                    .copied()
                    .filter(|x| allowed(ctx, *x))
                    .min_by_key(|x| (u8::from(!c(*x).idle), c(*x).nr_running, c(*x).load))
                    .unwrap_or(cpu);
            }
        }
        level -= 1;
    }
    if !allowed(ctx, cpu) {
        return ctx.allowed[0];
    }
    // Finally the idlest CPU among the local bottom group (SMT siblings).
    cpu
}

/// The root domain is over-utilised when some CPU runs above ~80 % of
/// its capacity (the fit margin); EAS then steps aside.
pub fn overutilized(m: &MachineView) -> bool {
    m.cpus
        .iter()
        .enumerate()
        .any(|(i, c)| !fits_capacity(c.util, m.topo.capacity(i as u32)))
}

/// schedutil's headroom (`map_util_perf`): a CPU's frequency is asked
/// for 1.25 times its utilisation.
fn map_util_perf(util: u64) -> u64 {
    util + (util >> 2)
}

/// `cpu_util(cpu, p, dst_cpu, 0)` (7.2.13): the CPU's utilisation with
/// the waking task where `dst` puts it. The task's decayed share still
/// sits on `task_cpu(p)` (its blocked utilisation) and leaves it; on
/// `dst` the kernel takes the larger of `util_avg + task_util(p)` and
/// the queue's `util_est + task_util_est(p)`. With no `util_est` here
/// the CPU's own average stands in for its estimate, so the task joins
/// with its estimate.
fn cpu_util_with(m: &MachineView, ctx: &WakeCtx, cpu: u32, dst: Option<u32>) -> u64 {
    let mut util = m.cpus.get(cpu).util;
    if ctx.prev_cpu == cpu {
        util = util.saturating_sub(ctx.task_util);
    }
    if dst == Some(cpu) {
        util += ctx.task_util_est;
    }
    util.min(u64::from(m.topo.capacity(cpu)))
}

/// `compute_energy` (7.2.13) of one performance domain with the task on
/// `dst` (`None`: the domain without it). The OPP is the lowest whose
/// capacity covers the busiest CPU with schedutil's headroom
/// (`eenv_pd_max_util`); the energy is the busy time (`eenv_pd_busy_time`
/// plus the task's) × that OPP's cost / its capacity (`em_cpu_energy`).
fn compute_energy(m: &MachineView, ctx: &WakeCtx, pd: &PerfDomain, dst: Option<u32>) -> u128 {
    let cpu_cap = u64::from(m.topo.capacity(pd.cpus[0]));
    let pd_cap = cpu_cap * pd.cpus.len() as u64;
    let base: u64 = pd
        .cpus
        .iter()
        .map(|c| cpu_util_with(m, ctx, *c, None))
        .sum();
    let busy = match dst {
        Some(_) => (base.min(pd_cap) + ctx.task_util_est).min(pd_cap),
        None => base.min(pd_cap),
    };
    let max_util = pd
        .cpus
        .iter()
        .map(|c| map_util_perf(cpu_util_with(m, ctx, *c, dst)).min(u64::from(m.topo.capacity(*c))))
        .max()
        .unwrap_or(0)
        .min(cpu_cap);
    if busy == 0 {
        return 0;
    }
    let (cap, cost) = pd
        .opps
        .iter()
        .copied()
        .find(|(c, _)| u64::from(*c) >= max_util)
        .or_else(|| pd.opps.last().copied())
        .unwrap_or((1024, 0));
    u128::from(busy) * u128::from(cost) / u128::from(cap.max(1))
}

/// One performance domain's candidates (the first loop of
/// `find_energy_efficient_cpu`): prev's spare capacity if prev is here
/// and fits, and the other fitting CPU with the most spare capacity
/// (the lowest-numbered on ties).
fn pd_candidates(
    m: &MachineView,
    ctx: &WakeCtx,
    pd: &PerfDomain,
    prev: u32,
) -> (Option<u64>, Option<(u64, u32)>) {
    let mut prev_spare = None;
    let mut max_spare: Option<(u64, u32)> = None;
    for &cpu in pd.cpus.iter().filter(|c| allowed(ctx, **c)) {
        let util = cpu_util_with(m, ctx, cpu, Some(cpu));
        let cap = m.topo.capacity(cpu);
        if !fits_capacity(util, cap) {
            continue;
        }
        let spare = u64::from(cap).saturating_sub(util);
        if cpu == prev {
            prev_spare = Some(spare);
        } else if max_spare.is_none_or(|(s, _)| spare > s) {
            max_spare = Some((spare, cpu));
        }
    }
    (prev_spare, max_spare)
}

/// `find_energy_efficient_cpu` (7.2.13 fair.c; no uclamp, `util_est`,
/// runnable boost or pressure): in each performance domain prev (if it
/// fits) and the CPU with the most spare capacity, if more than prev's,
/// are costed against the domain without the task; the least added
/// energy wins, prev unless another CPU is strictly cheaper. A task
/// with no utilisation, or one that fits nowhere, stays on prev.
/// `None` (the usual path) when the root domain is over-utilised, as
/// `select_task_rq_fair` calls it only otherwise.
pub fn find_energy_efficient_cpu(m: &MachineView, ctx: &WakeCtx, prev: u32) -> Option<u32> {
    debug_assert!(
        ctx.task_util_est >= ctx.task_util,
        "task_util_est below task_util"
    );
    if overutilized(m) {
        return None;
    }
    if ctx.task_util_est == 0 {
        return Some(prev);
    }
    let mut prev_delta: Option<u128> = None;
    let mut best: Option<(u128, u32)> = None;
    // build_perf_domains() pushes each domain on the front of rd->pd:
    // the kernel costs the last one first, which decides equal deltas.
    for pd in m.topo.perf_domains.iter().rev() {
        let (prev_spare, max_spare) = pd_candidates(m, ctx, pd, prev);
        if prev_spare.is_none() && max_spare.is_none() {
            continue;
        }
        let base = compute_energy(m, ctx, pd, None);
        let mut best_delta = best.map(|(d, _)| d);
        if prev_spare.is_some() {
            let delta = compute_energy(m, ctx, pd, Some(prev)).saturating_sub(base);
            prev_delta = Some(delta);
            best_delta = Some(best_delta.map_or(delta, |b| b.min(delta)));
        }
        let Some((spare, cpu)) = max_spare else {
            continue;
        };
        if prev_spare.is_some_and(|p| spare <= p) {
            continue;
        }
        let delta = compute_energy(m, ctx, pd, Some(cpu)).saturating_sub(base);
        if best_delta.is_some_and(|b| delta >= b) {
            continue;
        }
        best = Some((delta, cpu));
    }
    match (best, prev_delta) {
        (Some((d, cpu)), Some(p)) if d < p => Some(cpu),
        (Some((_, cpu)), None) => Some(cpu),
        _ => Some(prev),
    }
}
