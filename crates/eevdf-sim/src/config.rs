//! What a simulation runs: the machine, the kernel configuration, the
//! costs and the workloads (docs/model.md §6, issue "Simulator"). Built by
//! `eevdf-scenario` from scenario text; plain data, `Clone`.

use eevdf_core::{Features, Policy, Profile};

use crate::topology::MachineSpec;

/// Nanoseconds.
pub use crate::event::Nanos;

/// The kernel's preemption model (`/sys/kernel/debug/sched/preempt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PreemptModel {
    /// Reschedule only when the task leaves the kernel (or sleeps).
    None,
    /// As `None`, plus `cond_resched()` points inside long kernel
    /// sections (every [`COND_RESCHED_NS`]).
    Voluntary,
    /// Preempt at once, also inside the kernel.
    #[default]
    Full,
    /// `resched_curr_lazy` requests wait for return to user or the next
    /// tick; full requests act at once.
    Lazy,
}

/// Spacing of `cond_resched()` points in kernel sections (voluntary model).
pub const COND_RESCHED_NS: Nanos = 10_000;

impl PreemptModel {
    pub const ALL: [PreemptModel; 4] = [
        PreemptModel::None,
        PreemptModel::Voluntary,
        PreemptModel::Full,
        PreemptModel::Lazy,
    ];
    pub fn name(self) -> &'static str {
        match self {
            PreemptModel::None => "none",
            PreemptModel::Voluntary => "voluntary",
            PreemptModel::Full => "full",
            PreemptModel::Lazy => "lazy",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }

    /// The model a profile's kernel runs without a `preempt` line: 7.x
    /// defaults to PREEMPT_LAZY where the architecture has it (7.2.13
    /// Kconfig.preempt; Debian 7.2 reads back `lazy`), the 6.x kernels
    /// as Debian configures them, PREEMPT_VOLUNTARY (6.12.95 reads back
    /// `voluntary`).
    pub fn for_profile(p: Profile) -> PreemptModel {
        match p {
            Profile::V6_12 | Profile::V6_18 | Profile::V6_19Rc1 => PreemptModel::Voluntary,
            Profile::V7_1 | Profile::V7_2 | Profile::Tip2026_09 => PreemptModel::Lazy,
        }
    }
}

/// Machine costs. Defaults are typical of a modern arm64/x86 core; set
/// them to zero to compare with hand-worked examples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Costs {
    /// Context switch: time between the switch and the incoming task's
    /// first instruction (counted in its wakeup latency).
    pub switch_ns: Nanos,
    /// Wakeup path: from the wake call (or timer interrupt) to the
    /// wakee being enqueued (IPI, ttwu). The waker spends it too (a
    /// timer's interrupt takes it from the task running there).
    pub wake_ns: Nanos,
    /// Extra cost the first time a task runs after a migration.
    pub migrate_ns: Nanos,
    /// A timed sleep: CPU a timer or periodic task spends in each
    /// activation beyond its `run` (the `clock_nanosleep()` system call,
    /// arming the hrtimer, the way into `schedule()`), charged at the
    /// activation's end. 0 unless measured (`eevdf kernel calibrate`).
    pub sleep_ns: Nanos,
    /// A scheduler tick's interrupt: CPU the running task loses at each
    /// tick (interrupt entry and exit, `sched_tick()`, the timer
    /// softirq). Its vruntime pays for it too, as in a kernel without
    /// `CONFIG_IRQ_TIME_ACCOUNTING` (Debian's). 0 unless measured.
    pub tick_ns: Nanos,
}

impl Costs {
    /// No costs at all: hand-worked examples, and a base for tests that
    /// set one or two (`Costs { wake_ns: 3_000, ..Costs::ZERO }`).
    pub const ZERO: Costs = Costs {
        switch_ns: 0,
        wake_ns: 0,
        migrate_ns: 0,
        sleep_ns: 0,
        tick_ns: 0,
    };
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            switch_ns: 2_000,
            wake_ns: 5_000,
            migrate_ns: 20_000,
            sleep_ns: 0,
            tick_ns: 0,
        }
    }
}

/// A task group (cgroup v2 directory) with one level below the root.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupSpec {
    /// Path such as `/test-B`.
    pub path: String,
    /// cgroup v2 `cpu.weight`, 1..=10000; 100 = 1024 shares.
    pub weight: u32,
    /// cgroup v2 `cpu.idle`.
    pub idle: bool,
}

/// What a task does (docs/model.md §6).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// cyclictest: an absolute periodic timer, then a tiny run.
    Timer { period_ns: Nanos, run_ns: Nanos },
    /// rt-app: run, then sleep (relative); or, with `period_ns`, run once
    /// per absolute period.
    Periodic {
        run_ns: Nanos,
        sleep_ns: Nanos,
        period_ns: Option<Nanos>,
    },
    /// hackbench: `groups` groups of `fds` senders and `fds` receivers;
    /// each sender writes `loops` messages to every receiver of its group
    /// (0 = forever). Messages cost CPU time; pipes hold `pipe_msgs`.
    Hackbench {
        groups: u32,
        fds: u32,
        threads: bool,
        pipe: bool,
        loops: u64,
        send_ns: Nanos,
        recv_ns: Nanos,
        pipe_msgs: u32,
    },
    /// schbench: `message_threads` each wake `workers` workers, which do
    /// `request_ns` of work and go back to sleep; message threads think
    /// for `sleep_ns` between rounds.
    Schbench {
        message_threads: u32,
        workers: u32,
        request_ns: Nanos,
        sleep_ns: Nanos,
    },
    /// A CPU hog that never sleeps.
    Hog,
}

impl Workload {
    pub fn kind(&self) -> &'static str {
        match self {
            Workload::Timer { .. } => "timer",
            Workload::Periodic { .. } => "periodic",
            Workload::Hackbench { .. } => "hackbench",
            Workload::Schbench { .. } => "schbench",
            Workload::Hog => "hog",
        }
    }

    /// Fraction of run time spent in the kernel, in percent, and the
    /// longest non-preemptible stretch (relevant for the none, voluntary
    /// and lazy preemption models). hackbench's applies only when a task
    /// sets `kernel` or `ksection`; else each message is one syscall
    /// (docs/model.md §6, "Preemption points").
    pub fn kernel_profile(&self) -> (u32, Nanos) {
        match self {
            Workload::Hackbench { .. } => (80, 20_000),
            Workload::Schbench { .. } => (30, 10_000),
            Workload::Timer { .. } | Workload::Periodic { .. } => (10, 5_000),
            Workload::Hog => (0, 0),
        }
    }
}

/// One `task` directive: `count` tasks (or one workload instance that
/// creates its own threads, for hackbench and schbench).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TaskSpec {
    pub name: String,
    pub count: u32,
    pub workload: Workload,
    pub nice: i32,
    pub policy: Policy,
    /// Custom slice (`sched_setattr` `sched_runtime`); `None` = base slice.
    pub slice_ns: Option<Nanos>,
    /// Allowed CPUs; `None` = all.
    pub cpus: Option<Vec<u32>>,
    /// Group path; `None` = the root group.
    pub group: Option<String>,
    /// `timer_slack_ns`; `None` = 50 us for normal tasks, 0 otherwise.
    pub slack_ns: Option<Nanos>,
    /// First start time; the seed adds an offset within one period.
    pub start_ns: Nanos,
    /// Share of run time spent in the kernel, percent (`None` = the
    /// workload's default, [`Workload::kernel_profile`]).
    pub kernel_pct: Option<u32>,
    /// Longest non-preemptible kernel section (`None` = the default).
    pub ksection_ns: Option<Nanos>,
}

impl TaskSpec {
    /// A task directive with default keys.
    pub fn new(name: &str, workload: Workload) -> Self {
        TaskSpec {
            name: name.to_string(),
            count: 1,
            workload,
            nice: 0,
            policy: Policy::Normal,
            slice_ns: None,
            cpus: None,
            group: None,
            slack_ns: None,
            start_ns: 0,
            kernel_pct: None,
            ksection_ns: None,
        }
    }

    /// The effective (kernel percent, longest kernel section).
    pub fn kernel(&self) -> (u32, Nanos) {
        let (pct, section) = self.workload.kernel_profile();
        (
            self.kernel_pct.unwrap_or(pct).min(100),
            self.ksection_ns.unwrap_or(section),
        )
    }

    /// The effective timer slack.
    pub fn slack(&self) -> Nanos {
        self.slack_ns.unwrap_or(50_000)
    }
}

/// `sysctl` values that scenarios may set (debugfs names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Sysctl {
    /// `base_slice_ns`: the scaled value; `None` = 0.70 ms x (1 + ilog2(min(ncpus, 8))).
    pub base_slice_ns: Option<Nanos>,
    /// `migration_cost_ns`; `None` = 500 us.
    pub migration_cost_ns: Option<Nanos>,
    /// `/proc/sys/kernel/sched_energy_aware`; `None` = on where the
    /// machine has an energy model in mainline (rb5).
    pub energy_aware: Option<bool>,
}

/// A whole simulation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SimConfig {
    /// CPUs of a flat machine (used when `machine` is `None`).
    pub nr_cpus: u32,
    /// The machine's topology; `None` = `nr_cpus` identical CPUs
    /// sharing one LLC.
    pub machine: Option<MachineSpec>,
    pub hz: u32,
    pub profile: Profile,
    pub features: Features,
    pub sysctl: Sysctl,
    pub preempt: PreemptModel,
    pub costs: Costs,
    pub seed: u64,
    pub duration_ns: Nanos,
    /// Wakeups (and schbench requests) that began before this time are
    /// left out of the latency statistics: start-up is not steady state.
    /// Everything else (CPU time, switches, messages) counts from 0.
    pub warmup_ns: Nanos,
    pub groups: Vec<GroupSpec>,
    pub tasks: Vec<TaskSpec>,
    /// Every CPU's first tick after the start, in `0..tick`: a kernel's
    /// ticks sit at multiples of `TICK_NSEC` of its monotonic clock
    /// (`tick_init_jiffy_update`), so a kernel run's twin takes the phase
    /// of its window. `None`: each CPU's phase is drawn from the seed.
    pub tick_phase_ns: Option<Nanos>,
    /// Events after which a run stops with a partial result; `None`:
    /// the cost model's default (`Cost::default_budget`).
    pub max_events: Option<u64>,
    /// The QEMU guest a kernel run's twin copies: its vCPUs take turns
    /// on one host thread (`machine::turns`). Off: real CPUs, all
    /// running at once.
    pub vcpu_turns: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            nr_cpus: 1,
            machine: None,
            hz: 250,
            profile: Profile::default(),
            features: Features::default(),
            sysctl: Sysctl::default(),
            preempt: PreemptModel::for_profile(Profile::default()),
            costs: Costs::default(),
            seed: 1,
            duration_ns: 10_000_000_000,
            warmup_ns: 0,
            groups: Vec::new(),
            tasks: Vec::new(),
            tick_phase_ns: None,
            max_events: None,
            vcpu_turns: false,
        }
    }
}
