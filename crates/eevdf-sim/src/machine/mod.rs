//! The simulated machine: CPUs with an `eevdf-core` runqueue each, the
//! event loop, ticks, HRTICK, wakeups and costs. Threads are created
//! in `spawn` (a new thread starts on the next allowed CPU in creation
//! order), a waking thread's CPU comes from `balance` (the simulator's
//! `select_task_rq_fair`), `preempt` applies the preemption model,
//! `switch` does the context switch and its accounting, `bursts` moves a
//! thread's workload from burst to burst, and `pipes` runs hackbench's
//! threads.

use eevdf_core::{
    CfsRqId, DequeueFlags, EnqueueFlags, EntityId, HrtickArm, LoadWeight, Resched, Rq, RqConfig,
    WakeFlags, WakeupDecision,
};
use std::rc::Rc;

use crate::config::{Nanos, PreemptModel, SimConfig, Workload, COND_RESCHED_NS};
use crate::event::EventQueue;
use crate::hackbench::{self, Pipe};
use crate::metrics::LatencyHist;
use crate::observe::{Interest, LagAt, Observer, Observers, SimEvent};
use crate::pelt::Pelt;
use crate::placement::LlcState;
use crate::result::{
    CpuResult, DomainResult, HackbenchResult, NameResult, SchbenchResult, SimResult, TaskResult,
    Totals,
};
use crate::rng::SimRng;
use crate::topology::{MachineSpec, Topology};
use crate::trace::{PrevState, Trace, TraceRecorder, TraceTask};
use crate::workload::{
    wall_for_work, work_in_wall, Message, Periodic, Role, Tid, Timer, Worker, WorkloadStats,
    FOREVER,
};

pub mod balance;
mod bursts;
mod finish;
mod pipes;
mod preempt;
mod spawn;
mod switch;
// The page (wasm32) never runs a kernel run's twin, and has a size
// budget: it builds the turns as no-ops.
#[cfg(not(target_arch = "wasm32"))]
mod turns;
#[cfg(target_arch = "wasm32")]
#[path = "turns_off.rs"]
mod turns;
mod views;

use preempt::Preemption;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Tick(u32),
    /// The running thread finished its burst (stale if `gen` differs).
    BurstEnd {
        cpu: u32,
        gen: u64,
    },
    /// A delayed reschedule becomes effective (preemption models) at
    /// `at`.
    ReschedPoint {
        cpu: u32,
        gen: u64,
        at: ReschedAt,
    },
    HrTick {
        cpu: u32,
        gen: u64,
    },
    /// A wakeup reaches its CPU. `waker` is the waking thread's CPU
    /// (`None` for a timer, which fires on the sleeper's CPU).
    Wake {
        tid: Tid,
        sync: bool,
        from_task: bool,
        waker: Option<u32>,
    },
    /// Periodic load balancing on a CPU (the tick's SCHED_SOFTIRQ, or the
    /// NOHZ idle balancer on behalf of an idle CPU).
    Balance(u32),
    /// A thread's timer fires (before the wake cost).
    Timer {
        tid: Tid,
    },
    /// A vCPU's turn ends at its deadline (`turns`; stale if `gen`
    /// differs).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Turn {
        gen: u64,
    },
    /// A timer armed within the turn `gen` ends it sooner.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    TurnCut {
        gen: u64,
    },
    /// A vCPU's standstill ends: a pending reschedule is decided anew.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Thaw {
        cpu: u32,
    },
    /// A vCPU whose tick came while it stood still handles it in its
    /// turn (`turns`).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    TickIrq {
        cpu: u32,
    },
    /// A thread reaches a channel held by a vCPU standing still
    /// (`turns`; stale if `gen` is not the turn's).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Spin {
        gen: u64,
        tid: Tid,
    },
}

/// Where a delayed reschedule is taken (`Ev::ReschedPoint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReschedAt {
    /// The return to user mode (a syscall's exit).
    ReturnToUser,
    /// A `might_resched()` in kernel code (voluntary).
    MightResched,
    /// The end of an interrupt: decided again for the code it returns to.
    IrqEnd,
}

/// How many vCPU turns a kernel run's twin took, and how many of them a
/// spin ended (`Sim::turn_counts`; zero for a run without turns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TurnCounts {
    pub turns: u64,
    pub spins: u64,
}

/// A wakeup between `select_task_rq()` and its enqueue.
#[derive(Clone, Copy, Debug)]
struct Activation {
    tid: Tid,
    sync: bool,
    from_task: bool,
    /// The waker's CPU (the wakee's last for a timer).
    src: u32,
    /// A delayed task requeued where it is.
    delayed: bool,
    /// The thread's start.
    first: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not started yet, or asleep.
    Sleeping,
    /// A wakeup is on its way.
    Waking,
    Runnable,
    Running,
    /// Asleep in its workload but still curr: it finishes the wakeups it
    /// started (`try_to_wake_up()` in its own context) before
    /// `schedule()` takes it off the queue. A wakeup now makes it
    /// running again without a switch (`ttwu_runnable`).
    Blocking,
}

/// Where a thread kicked out of its vCPU's turn inside its sleep's
/// syscall stands (`turns.rs`, `bursts.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Park {
    No,
    /// Its timer is armed: it sleeps when its vCPU runs again, unless a
    /// wakeup (`ttwu_runnable`) made it running meanwhile.
    Armed,
    /// Its own timer fired first: `do_nanosleep()` returns at once.
    Fired,
}

#[derive(Clone, Debug)]
struct Thread {
    directive: usize,
    index: u32,
    role: Role,
    cpu: u32,
    eid: EntityId,
    state: State,
    started: bool,
    allowed: Rc<[u32]>,
    /// CPU work left in the current burst.
    remaining: Nanos,
    /// Asleep in `mutex_lock()` (`D`): a hackbench pipe's mutex.
    on_mutex: bool,
    /// Woken onto a halted vCPU's wakelist, waiting for its turn
    /// (`turns.rs`).
    on_wake_list: bool,
    /// Kicked out of its vCPU's turn inside the syscall that sleeps
    /// (`turns.rs`): it sleeps when the vCPU runs again.
    park: Park,
    /// When the pending wakeup was asked for (latency start).
    wake_stamp: Option<Nanos>,
    slack: Nanos,
    /// Share of run time in the kernel and the longest section; `None`:
    /// a hackbench thread's messages say (one syscall each).
    kernel: Option<(u32, Nanos)>,
    hist: LatencyHist,
    wakeups: u64,
    migrations: u64,
    ran_ns: Nanos,
    /// PELT utilisation (running) and load (runnable weight).
    util: Pelt,
    load: Pelt,
    weight: u64,
    /// Last time it ran (the balancer prefers cache-cold tasks).
    last_ran: Nanos,
    wakee_flips: u32,
    last_wakee: Option<Tid>,
    flips_decay_ts: Nanos,
    recent_used_cpu: Option<u32>,
    /// The next run pays the migration cost.
    migrated: bool,
    /// When its sleep's timer fires, if it sleeps on one.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    timer_at: Option<Nanos>,
    /// Wakeup work this thread owes its CPU before its workload goes on:
    /// `try_to_wake_up()` runs in the waker's context (see `owe_wakes`).
    owed: Nanos,
}

#[derive(Clone, Debug)]
struct Cpu {
    rq: Rq,
    curr: Option<Tid>,
    /// The running thread makes progress from here (after the switch cost
    /// and any wakeup work it owes).
    run_start: Nanos,
    /// The owed wakeup work in the window before `run_start`: what is not
    /// done when the thread is switched out goes back to it.
    owed: Nanos,
    /// When that wakeup work, or an interrupt's, ends: until then no
    /// reschedule takes the CPU (`honour_resched`).
    wakes_end: Nanos,
    /// When the interrupt time `steal_time` charged ends. The interrupt
    /// returns to user or kernel code, so a reschedule that waited for
    /// it is decided there again (a lazy one waits for the return to
    /// user), unlike one after a waker's own `try_to_wake_up()`s.
    irq_end: Nanos,
    /// Absolute end of the running burst.
    burst_end: Nanos,
    /// `arch_scale_cpu_capacity`: how fast this CPU does work (1024 =
    /// the biggest).
    capacity: u64,
    gen: u64,
    hrtick_gen: u64,
    /// An HRTICK is armed and has not fired (`hrtick_active`), and when.
    hrtick_pending: bool,
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    hrtick_at: Nanos,
    /// This CPU's next tick.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    next_tick: Nanos,
    /// Where the switch being made takes the CPU from a running task.
    preemption: Preemption,
    busy_since: Option<Nanos>,
    /// Wakees wait on this halted vCPU's wakelist for its turn
    /// (`rq->ttwu_pending`; `turns.rs`).
    ttwu_pending: bool,
    /// A timer interrupt is raised on this halted vCPU: it runs at its
    /// turn (`turns.rs`).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    irq_pending: bool,
    busy_ns: Nanos,
    switches: u64,
    /// Group entities of this CPU: (group entity, its queue).
    groups: Vec<(EntityId, CfsRqId)>,
    /// Thread owning each entity slot of this CPU's runqueue.
    owner: Vec<Option<Tid>>,
    /// PELT utilisation (busy) and load (root queue weight).
    util: Pelt,
    load: Pelt,
    /// Per domain (bottom-up): next periodic balance and its interval.
    next_balance: Vec<Nanos>,
    balance_interval: Vec<Nanos>,
    nr_balance_failed: Vec<u32>,
    /// When the CPU last went idle, and the average idle length.
    idle_since: Option<Nanos>,
    avg_idle: Nanos,
    /// ∫ nr_running dt since the start, and when it was last advanced.
    nr_area: u128,
    nr_last: Nanos,
    /// `rq->misfit_task_load != 0`: the running task does not fit.
    misfit: bool,
    /// Per task group: PELT load of its queue here, and the queue weight
    /// held since the last update.
    group_load: Vec<(Pelt, u64)>,
}

#[derive(Clone, Debug)]
struct Group {
    shares: u64,
    idle: bool,
    /// Σ over CPUs of the group queue's load (for calc_group_shares).
    load_total: u64,
}

/// A running simulation; `Clone` is a checkpoint.
#[derive(Clone, Debug)]
pub struct Sim {
    cfg: SimConfig,
    /// Shared, never mutated: checkpoints and balance passes borrow it
    /// without copying the domains.
    topo: Rc<Topology>,
    llc: LlcState,
    rng: SimRng,
    /// Energy-aware scheduling is on.
    eas: bool,
    /// Whoever watches the run: the trace, teaching, a decision log.
    observers: Observers,
    /// Migrations per domain level of CPU 0's hierarchy (by span size).
    domain_migrations: Vec<u64>,
    /// The CPU running a newidle balance: it picks after pulling, so
    /// wakeup preemption must not switch it from inside the pull.
    newidle_cpu: Option<u32>,
    /// The CPU pulling tasks in a balance pass (`detach_tasks` +
    /// `attach_tasks`): its reschedule waits for the end of the pass, as
    /// the kernel's `resched_curr` only sets a flag and `schedule()` runs
    /// after the softirq. Switching it from inside the pass could start a
    /// nested newidle balance that moves the pass's remaining candidates.
    balancing_cpu: Option<u32>,
    q: EventQueue<Ev>,
    cpus: Vec<Cpu>,
    threads: Vec<Thread>,
    groups: Vec<Group>,
    pipes: Vec<Pipe>,
    /// Reused buffer for the threads a pipe operation wakes.
    woken: Vec<Tid>,
    /// Pipes whose mutex a preempted thread holds.
    mutexes_held: u32,
    /// QEMU's vCPU turns (`turns`), for a kernel run's twin.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    turns: turns::Turns,
    events: u64,
    /// Events after which the run stops (`max_events`, or the cost
    /// model's default), and where it stopped if it did.
    budget: u64,
    stopped_at: Option<Nanos>,
    /// hackbench messages each directive has still to send.
    hb_left: Vec<u64>,
    stats: WorkloadStats,
    scratch: balance::Scratch,
}

impl Sim {
    /// Builds the machine and its threads; nothing has run yet.
    ///
    /// # Panics
    ///
    /// If `cfg.machine` does not build ([`Sim::try_new`] says why); a
    /// parsed scenario's machine always does.
    pub fn new(cfg: SimConfig) -> Sim {
        Sim::try_new(cfg).unwrap_or_else(|e| panic!("invalid machine: {e}"))
    }

    /// [`Sim::new`], or the reason the configured machine does not build
    /// (an unknown preset, a custom machine without CPUs, ...).
    pub fn try_new(cfg: SimConfig) -> Result<Sim, String> {
        let spec = cfg
            .machine
            .clone()
            .unwrap_or(MachineSpec::Flat(cfg.nr_cpus.max(1)));
        let topo = Topology::build(&spec)?;
        let nr = topo.nr_cpus();
        let topo_name = topo.name.clone();
        let topo_has_no_em = topo.perf_domains.is_empty() || !topo.asymmetric();
        let mut rng = SimRng::new(cfg.seed);
        let mut rqcfg = RqConfig::new(cfg.features, nr, cfg.hz);
        if let Some(b) = cfg.sysctl.base_slice_ns {
            rqcfg.base_slice_ns = b;
        }
        if let Some(m) = cfg.sysctl.migration_cost_ns {
            rqcfg.migration_cost_ns = m;
        }
        rqcfg.preempt_lazy = cfg.preempt == PreemptModel::Lazy;
        let groups: Vec<Group> = cfg
            .groups
            .iter()
            .map(|g| Group {
                shares: (u64::from(g.weight.clamp(1, 10_000)) * 1024 / 100).max(2),
                idle: g.idle,
                load_total: 0,
            })
            .collect();
        let budget = cfg
            .max_events
            .unwrap_or_else(|| crate::cost::Cost::of(&cfg, nr).default_budget());
        let mut q = EventQueue::new();
        let tick = rqcfg.tick_nsec;
        let cpus: Vec<Cpu> = (0..nr)
            .map(|c| {
                let mut rq = Rq::new(rqcfg);
                let gs = groups
                    .iter()
                    .map(|g| rq.create_group(CfsRqId::ROOT, g.shares, g.idle))
                    .collect();
                // The seed draws each CPU's tick phase (drawn even when
                // given, so the other draws stay the same).
                let drawn = rng.below(tick);
                let phase = cfg.tick_phase_ns.map_or(drawn, |p| p % tick.max(1));
                q.schedule(phase, Ev::Tick(c));
                Cpu {
                    rq,
                    curr: None,
                    run_start: 0,
                    owed: 0,
                    wakes_end: 0,
                    irq_end: 0,
                    burst_end: 0,
                    capacity: u64::from(topo.capacity(c)),
                    gen: 0,
                    hrtick_gen: 0,
                    hrtick_pending: false,
                    hrtick_at: FOREVER,
                    next_tick: phase,
                    preemption: Preemption::ToUser,
                    busy_since: None,
                    ttwu_pending: false,
                    irq_pending: false,
                    busy_ns: 0,
                    switches: 0,
                    groups: gs,
                    owner: Vec::new(),
                    util: Pelt::default(),
                    load: Pelt::default(),
                    next_balance: Vec::new(),
                    balance_interval: Vec::new(),
                    nr_balance_failed: Vec::new(),
                    idle_since: Some(0),
                    avg_idle: 0,
                    nr_area: 0,
                    nr_last: 0,
                    misfit: false,
                    group_load: vec![(Pelt::default(), 0); groups.len()],
                }
            })
            .collect();
        let llc = LlcState {
            nr_idle_scan: (0..nr).map(|c| topo.llc_size(c)).collect(),
        };
        let vcpu_turns = turns::Turns::new(&topo);
        let mut sim = Sim {
            topo: Rc::new(topo),
            llc,
            rng: SimRng::new(cfg.seed ^ 0x9e37_79b9_7f4a_7c15),
            newidle_cpu: None,
            balancing_cpu: None,
            observers: Observers::default(),
            // sched_energy_aware: the kernel enables EAS when the machine
            // has an energy model. Of our presets only rb5 has one in
            // mainline (its DT gives dynamic-power-coefficients); the
            // seeds ran Orion6 without EAS.
            eas: cfg.sysctl.energy_aware.unwrap_or(topo_name == "rb5") && !topo_has_no_em,
            domain_migrations: Vec::new(),
            q,
            cpus,
            threads: Vec::new(),
            groups,
            pipes: Vec::new(),
            woken: Vec::new(),
            mutexes_held: 0,
            turns: vcpu_turns,
            events: 0,
            budget,
            stopped_at: None,
            hb_left: vec![0; cfg.tasks.len()],
            stats: WorkloadStats::new(cfg.tasks.len(), cfg.warmup_ns),
            scratch: balance::Scratch::default(),
            cfg,
        };
        sim.spawn_threads(&mut rng);
        sim.init_balance();
        sim.init_turns();
        Ok(sim)
    }

    /// Runs until the configured duration and returns the result.
    pub fn run(mut self) -> SimResult {
        let end = self.cfg.duration_ns;
        self.run_until(end);
        let end = self.stopped_at.unwrap_or(end);
        self.finish(end)
    }

    /// Where the event budget stopped the run, if it did.
    pub fn stopped_at(&self) -> Option<Nanos> {
        self.stopped_at
    }

    /// Each thread's latency histogram as (ns, count) pairs, in creation
    /// order (for cyclictest-style output).
    pub fn histograms(&self) -> Vec<Vec<(Nanos, u64)>> {
        self.threads.iter().map(|t| t.hist.buckets()).collect()
    }

    /// The configured duration.
    pub fn duration(&self) -> Nanos {
        self.cfg.duration_ns
    }

    /// Processes every event up to and including `t`.
    pub fn run_until(&mut self, t: Nanos) {
        let mut last = u64::MAX;
        let mut same = 0u32;
        while let Some(at) = self.q.peek_time() {
            if at > t || self.stopped_at.is_some() {
                break;
            }
            if self.events >= self.budget {
                // Stop cleanly: everything before `at` has happened.
                self.stopped_at = Some(at);
                break;
            }
            let (now, ev) = self.q.pop().expect("peeked");
            // Time must advance: a million events at one nanosecond is a
            // livelock in the model, not a workload.
            if now == last {
                same += 1;
                assert!(same < 1_000_000, "livelock at {now} ns: {ev:?}");
            } else {
                last = now;
                same = 0;
            }
            self.events += 1;
            self.handle(now, ev);
        }
    }

    /// Processes the next event, if any, and returns its time (teaching
    /// mode's single step). Same effect as `run_until` reaching it.
    pub fn step(&mut self) -> Option<Nanos> {
        let (now, ev) = self.q.pop()?;
        self.events += 1;
        self.handle(now, ev);
        Some(now)
    }

    /// Starts recording a scheduler trace (before running).
    pub fn record_trace(&mut self) {
        let tasks = self.trace_tasks();
        let _ = self.observers.detach::<TraceRecorder>();
        self.observe(Box::new(TraceRecorder(Trace::new(
            self.cpus.len() as u32,
            tasks,
        ))));
    }

    /// The recorded trace, in time order (empty if not recording).
    pub fn take_trace(&mut self) -> Trace {
        let mut t = self
            .observers
            .detach::<TraceRecorder>()
            .map(|r| r.0)
            .unwrap_or_default();
        t.finish();
        t
    }

    /// Attaches an observer of the run's [`SimEvent`]s.
    pub fn observe(&mut self, o: Box<dyn Observer>) {
        self.observers.attach(o);
    }

    /// The first attached observer of type `T`.
    pub fn observer<T: 'static>(&self) -> Option<&T> {
        self.observers.get::<T>()
    }

    /// Detaches the first observer of type `T`.
    pub fn detach_observer<T: 'static>(&mut self) -> Option<T> {
        self.observers.detach::<T>()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    // One arm per event kind: the event loop's dispatch, read as a table.
    fn handle(&mut self, now: Nanos, ev: Ev) {
        match ev {
            Ev::Tick(c) => {
                let tick = self.cpus[c as usize].rq.config.tick_nsec;
                self.q.schedule(now + tick, Ev::Tick(c));
                self.cpus[c as usize].next_tick = now + tick;
                if self.cpus[c as usize].curr.is_none() {
                    return; // NO_HZ idle: nothing to do.
                }
                if self.tick_waits_for_turn(c, now) {
                    return;
                }
                self.tick(c, now);
            }
            Ev::TickIrq { cpu } => {
                if self.cpus[cpu as usize].curr.is_some() {
                    self.tick(cpu, now);
                }
            }
            Ev::BurstEnd { cpu, gen } => {
                let c = &self.cpus[cpu as usize];
                // Stale: another burst began, or an interrupt moved the end.
                if c.gen != gen || now < c.burst_end {
                    return;
                }
                self.burst_end(cpu, now);
            }
            Ev::ReschedPoint { cpu, gen, at } => {
                if self.decide_at_thaw(cpu, now) {
                    return;
                }
                let waking = self.wakeup_work_left(cpu, now);
                if waking > 0 {
                    // An interrupt pushed the wakeups' end later.
                    let ev = Ev::ReschedPoint { cpu, gen, at };
                    self.q.schedule(now + waking, ev);
                    return;
                }
                if self.cpus[cpu as usize].gen == gen
                    && self.cpus[cpu as usize].rq.resched.is_some()
                {
                    match at {
                        ReschedAt::IrqEnd => self.honour_resched(cpu, now),
                        ReschedAt::MightResched => {
                            self.cpus[cpu as usize].preemption = Preemption::MightResched;
                            self.switch(cpu, now);
                        }
                        ReschedAt::ReturnToUser => self.switch(cpu, now),
                    }
                }
            }
            Ev::HrTick { cpu, gen } => {
                let c = &mut self.cpus[cpu as usize];
                if c.hrtick_gen != gen {
                    return;
                }
                c.hrtick_pending = false;
                if c.curr.is_none() {
                    return;
                }
                c.rq.set_clock(now);
                c.rq.task_tick(true);
                self.honour_resched(cpu, now);
            }
            Ev::Timer { tid } => {
                self.timer_event(tid, now);
            }
            Ev::Wake {
                tid,
                sync,
                from_task,
                waker,
            } => self.wake(tid, sync, from_task, waker, now),
            Ev::Balance(c) => self.periodic_balance(c, now),
            Ev::Turn { gen } => self.turn(gen, now),
            Ev::TurnCut { gen } => self.cut_turn(gen, now),
            Ev::Thaw { cpu } => self.honour_resched(cpu, now),
            Ev::Spin { gen, tid } => self.spin(gen, tid, now),
        }
    }

    /// The tick's interrupt on `c` (`sched_tick()`).
    fn tick(&mut self, c: u32, now: Nanos) {
        // The interrupt's own time, before sched_tick() reads the
        // clock: update_curr() charges it from the next update on.
        self.steal_time(c, now, self.cfg.costs.tick_ns);
        self.pelt_cpu(c, now);
        if let Some(t) = self.cpus[c as usize].curr {
            self.pelt_thread(t, now);
        }
        self.update_misfit_status(c);
        let cpu = &mut self.cpus[c as usize];
        cpu.rq.set_clock(now);
        // sched_tick() upgrades a pending lazy request *before*
        // task_tick(): one raised by this tick stays lazy.
        if cpu.rq.resched == Some(Resched::Lazy) {
            cpu.rq.resched = Some(Resched::Full);
        }
        cpu.rq.task_tick(false);
        if let (true, Some(curr)) = (
            self.observers.wants(Interest::TICK),
            self.cpus[c as usize].curr,
        ) {
            self.observers.emit(SimEvent::Tick {
                ts: now,
                cpu: c,
                curr,
            });
        }
        self.honour_resched(c, now);
    }

    /// A thread's timer fires.
    fn timer_event(&mut self, tid: Tid, now: Nanos) {
        self.threads[tid].timer_at = None;
        self.timer_interrupt(self.threads[tid].cpu);
        let wake = self.cfg.costs.wake_ns;
        self.steal_time(self.threads[tid].cpu, now, wake);
        self.q.schedule(
            now + wake,
            Ev::Wake {
                tid,
                sync: false,
                from_task: false,
                waker: None,
            },
        );
        // A thread still on its way to sleep (its wakeups, a vCPU
        // standstill) is woken where it runs (`ttwu_runnable`).
        if self.threads[tid].state == State::Sleeping {
            self.threads[tid].state = State::Waking;
        }
    }

    fn wake(&mut self, tid: Tid, sync: bool, from_task: bool, waker: Option<u32>, now: Nanos) {
        if let Some(until) = waker.and_then(|w| self.standing_still(w, now)) {
            // The waker's vCPU stands still: its wakeup waits with it.
            let ev = Ev::Wake {
                tid,
                sync,
                from_task,
                waker,
            };
            self.q.schedule(until, ev);
            return;
        }
        let t = &self.threads[tid];
        if t.park == Park::Armed && waker.is_none() && !from_task {
            // A parked sleeper's own timer: `do_nanosleep()` will not
            // sleep, its next activation starts when its vCPU runs.
            self.threads[tid].park = Park::Fired;
            return;
        }
        if matches!(t.state, State::Runnable | State::Running) || t.on_wake_list {
            return; // already awake: the wakeup is absorbed
        }
        if t.state == State::Blocking {
            // ttwu_runnable: still queued and running, so it just goes on
            // (its next burst is planned when its wakeup work ends), and
            // its timer, if that woke it, waited for nothing.
            self.threads[tid].state = State::Running;
            self.threads[tid].wake_stamp = None;
            return;
        }
        // A thread's start is a wakeup, not a fork: as in a kernel run
        // (and in cyclictest, rt-app or hackbench), threads exist before
        // the window and sleep until their start, so neither
        // PLACE_DEADLINE_INITIAL's half slice nor the fork path applies.
        // (6.12.95 ct-4hog: with fork semantics the simulator's first tick
        // ended a hog's half slice and the picks parted from the kernel's
        // at 3.2 ms; with wakeups they agree, and so does p99.)
        let first = !t.started;
        // A thread's start is not a wakeup sample (timers carry their own
        // nominal expiry as the stamp).
        if t.wake_stamp.is_none() && !first {
            self.threads[tid].wake_stamp = Some(now);
        }
        let prev = self.threads[tid].cpu;
        let delayed = self.cpus[prev as usize].rq.se(self.threads[tid].eid).on_rq;
        // A delayed task is requeued where it is (ttwu_runnable); others
        // go through select_task_rq_fair.
        let cpu = if delayed {
            prev
        } else {
            let waker_cpu = waker.unwrap_or(prev);
            if let (Some(w), true) = (waker, from_task) {
                self.record_wakee(w, tid, now);
            }
            let (cpu, _why) =
                self.select_task_rq(tid, waker_cpu, sync && waker.is_some(), false, now);
            cpu
        };
        let src = waker.unwrap_or(prev);
        if cpu != prev {
            self.move_sleeping(tid, cpu, src, now);
        }
        if self.observers.wants(Interest::WAKEUP) {
            let cost = self.cfg.costs.wake_ns;
            self.observers.emit(SimEvent::Waking {
                ts: now.saturating_sub(cost),
                cpu: src,
                task: tid,
                target_cpu: cpu,
            });
        }
        let w = Activation {
            tid,
            sync,
            from_task,
            src,
            delayed,
            first,
        };
        if !self.wait_on_wake_list(cpu, w, now) {
            self.activate(cpu, w, now);
        }
    }

    /// `ttwu_do_activate()`: enqueues a woken thread on `cpu` and asks
    /// whether it preempts, in the context `wakeup_logged_on` names.
    fn activate(&mut self, cpu: u32, w: Activation, now: Nanos) {
        let Activation {
            tid,
            sync,
            from_task,
            src,
            delayed,
            first,
        } = w;
        self.threads[tid].on_wake_list = false;
        if self.observers.wants(Interest::WAKEUP) {
            let on = self.wakeup_logged_on(src, cpu, delayed);
            self.observers.emit(SimEvent::Wakeup {
                ts: now,
                cpu,
                task: tid,
                on,
            });
        }
        self.pelt_thread(tid, now);
        let t = &mut self.threads[tid];
        t.state = State::Runnable;
        t.started = true;
        t.wakeups += u64::from(!first);
        if t.remaining == 0 {
            t.remaining = first_burst(&t.role);
        }
        let eid = t.eid;
        self.pelt_cpu(cpu, now);
        let c = &mut self.cpus[cpu as usize];
        c.rq.set_clock(now);
        c.rq.enqueue_task(eid, EnqueueFlags::WAKEUP);
        self.update_group_share(cpu, tid, now);
        let wf = WakeFlags {
            sync,
            fork: false,
            rq_selected: !delayed,
            from_task,
        };
        let c = &mut self.cpus[cpu as usize];
        let decision = c.rq.wakeup_preempt(eid, wf);
        if self.observers.wants(Interest::WAKEUP_PREEMPT) {
            self.emit_wakeup_preempt(cpu, tid, decision, now);
        }
        self.hrtick_update(cpu, now);
        self.honour_resched(cpu, now);
    }

    /// The CPU whose context enqueues a wakee on `cpu` for a waker on
    /// `src` (`try_to_wake_up()`, 7.2.13 and 6.12.95): the waker itself,
    /// unless `ttwu_queue_cond()` hands the task to the target's wakelist
    /// (an idle target, or one beyond the waker's LLC). A delayed task is
    /// requeued by the waker (`ttwu_runnable()`).
    fn wakeup_logged_on(&self, src: u32, cpu: u32, delayed: bool) -> u32 {
        let wakelist =
            self.cpus[cpu as usize].curr.is_none() || !self.topo.cpus_share_cache(src, cpu);
        if delayed || src == cpu || !wakelist {
            src
        } else {
            cpu
        }
    }

    /// Keeps the group entity's weight at `calc_group_shares`:
    /// `tg_shares * load / tg_weight` (clamped to [2, tg_shares]) where a
    /// CPU's load is `max(queue weight, PELT load of the queue)` and
    /// `tg_weight` sums those loads over the CPUs.
    fn update_group_share(&mut self, cpu: u32, tid: Tid, now: Nanos) {
        let Some(g) = self.group_of(tid) else {
            return;
        };
        {
            let c = &mut self.cpus[cpu as usize];
            let weight = c.rq.cfs(c.groups[g].1).load_weight;
            let gl = &mut c.group_load[g];
            gl.0.update(now, gl.1);
            gl.1 = weight;
        }
        let load_of = |c: &Cpu| {
            let (pelt, level) = c.group_load[g];
            level.max(pelt.avg)
        };
        let total: u64 = self.cpus.iter().map(load_of).sum();
        self.groups[g].load_total = total;
        let here = load_of(&self.cpus[cpu as usize]);
        let c = &mut self.cpus[cpu as usize];
        let (gse, _) = c.groups[g];
        let shares = self.groups[g].shares;
        let w = (shares * here)
            .checked_div(total)
            .map_or(shares, |w| w.clamp(2, shares));
        if c.rq.se(gse).load.weight != w {
            c.rq.reweight_entity(gse, LoadWeight::new(w));
        }
    }

    fn newidle_pull(&mut self, cpu: u32, now: Nanos) -> bool {
        self.newidle_cpu = Some(cpu);
        let pulled = self.newidle_balance(cpu, now);
        self.newidle_cpu = None;
        pulled
    }
}

/// CPU 0's tick phase, as `Sim::new` draws it (the first draw of the
/// seeded stream) unless `tick_phase_ns` gives it. A kernel run puts its
/// first tick there (the guest delays its window), and a kernel ticks
/// every CPU together, so a kernel run's twin sets `tick_phase_ns` to
/// this for all CPUs.
pub fn first_tick_phase(cfg: &SimConfig) -> Nanos {
    let tick = RqConfig::new(cfg.features, 1, cfg.hz).tick_nsec.max(1);
    let drawn = SimRng::new(cfg.seed).below(tick);
    cfg.tick_phase_ns.map_or(drawn, |p| p % tick)
}

/// The first burst of a thread when it starts.
fn first_burst(role: &Role) -> Nanos {
    match role {
        Role::Hog => FOREVER,
        Role::Timer(t) => t.run.max(1),
        Role::Periodic(p) => p.run.max(1),
        // Senders and receivers plan their batches at the first burst end.
        Role::Sender { send, .. } => *send,
        Role::Receiver { recv, .. } => *recv,
        Role::Message(m) => m.step(),
        Role::Worker(w) => w.request,
    }
}

/// Runs a configuration to its end.
pub fn simulate(cfg: SimConfig) -> SimResult {
    Sim::new(cfg).run()
}
