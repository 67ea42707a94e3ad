//! QEMU's vCPU turns (`SimConfig::vcpu_turns`, docs/model.md §6): the
//! twin of a multi-CPU kernel run. Busy vCPUs share one CPU's speed, and
//! a vCPU that is busy alone runs as on real hardware.

use eevdf_core::{FeatureSet, Profile};
use eevdf_sim::{
    simulate, Costs, Interest, Observer, SimConfig, SimEvent, SimResult, TaskSpec, Workload,
};

const MS: u64 = 1_000_000;

fn cfg(cpus: u32, turns: bool, task: TaskSpec) -> SimConfig {
    let fs = FeatureSet::new(Profile::V7_1);
    SimConfig {
        nr_cpus: cpus,
        features: fs.features,
        profile: fs.profile,
        duration_ns: 500 * MS,
        costs: Costs::default(),
        tasks: vec![task],
        vcpu_turns: turns,
        ..SimConfig::default()
    }
}

fn hackbench(groups: u32) -> TaskSpec {
    TaskSpec::new(
        "hb",
        Workload::Hackbench {
            groups,
            fds: 10,
            pipe: true,
            threads: true,
            loops: 0,
            send_ns: 2_000,
            recv_ns: 2_000,
            pipe_msgs: 655,
        },
    )
}

fn messages(r: &SimResult) -> u64 {
    r.hackbench.iter().map(|h| h.messages).sum()
}

#[test]
fn busy_vcpus_share_one_cpus_speed() {
    let one = messages(&simulate(cfg(1, false, hackbench(4))));
    let free = messages(&simulate(cfg(4, false, hackbench(4))));
    let turns = messages(&simulate(cfg(4, true, hackbench(4))));
    assert!(free > 3 * one, "four real CPUs: {free} against one's {one}");
    // One CPU's work at most, give or take what a turn's edges leak; the
    // switches the standstills add cost some of it (0.85 here).
    assert!(
        turns * 2 > one && turns * 10 < one * 12,
        "four vCPUs in turns do about one CPU's work: {turns} against {one}"
    );
}

#[test]
fn a_vcpu_busy_alone_runs_as_on_real_cpus() {
    let ct = TaskSpec::new(
        "ct",
        Workload::Timer {
            period_ns: MS,
            run_ns: 20_000,
        },
    );
    // An equality: that turns are taken at all is what the other tests
    // here show.
    let free = simulate(cfg(4, false, ct.clone()));
    let turns = simulate(cfg(4, true, ct));
    let (f, t) = (&free.by_name[0], &turns.by_name[0]);
    assert!(f.latency.samples > 400);
    assert_eq!(
        (f.cpu_ns, f.latency.samples, f.latency.p99, f.latency.max),
        (t.cpu_ns, t.latency.samples, t.latency.p99, t.latency.max)
    );
}

#[test]
fn a_vcpu_out_of_turn_stands_still_but_is_charged() {
    // Four tasks that run 200 us and sleep 200 us, one per vCPU: in turns
    // their work goes slower, yet each run is charged its standstills, as
    // a guest's update_curr() charges the task on a vCPU that stood still.
    let periodic = |turns| {
        let mut t = TaskSpec::new(
            "p",
            Workload::Periodic {
                run_ns: 200_000,
                sleep_ns: 200_000,
                period_ns: None,
            },
        );
        t.count = 4;
        let r = simulate(cfg(4, turns, t));
        let n = &r.by_name[0];
        (n.latency.samples, n.cpu_ns / n.latency.samples.max(1))
    };
    let (runs_free, charged_free) = periodic(false);
    let (runs_turns, charged_turns) = periodic(true);
    assert!(
        runs_turns * 10 < runs_free * 7,
        "{runs_turns} runs against {runs_free}"
    );
    assert!(
        charged_turns * 10 > charged_free * 15,
        "{charged_turns} ns a run against {charged_free}"
    );
}

#[test]
fn a_timer_that_fires_before_its_thread_sleeps_wakes_it_where_it_runs() {
    // A schbench message thread arms its think timer, then finishes its
    // wake calls; a standstill can push its sleep past the timer, which
    // must then find it running (ttwu_runnable), not asleep.
    let mut c = cfg(
        4,
        true,
        TaskSpec::new(
            "sb",
            Workload::Schbench {
                message_threads: 2,
                workers: 6,
                request_ns: 150_000,
                sleep_ns: MS,
            },
        ),
    );
    c.seed = 0;
    c.duration_ns = 300 * MS;
    let mut sim = eevdf_sim::Sim::new(c);
    for step in 1..=60u64 {
        sim.run_until(step * 5 * MS);
        sim.check_threads()
            .unwrap_or_else(|e| panic!("at {} ms: {e}", step * 5));
    }
    assert!(sim.finish(300 * MS).schbench[0].requests > 1_000);
}

/// cyclictest pinned to CPU 0 (`period_ns`, 20 us runs) beside a 5 ms
/// burst loop on CPU 1, for 500 ms: the loop's bursts, cyclictest's CPU
/// time and its p99 latency.
fn beside_a_burst_loop(period_ns: u64, turns: bool) -> (u64, u64, u64) {
    let mut c = cfg(
        2,
        turns,
        TaskSpec::new(
            "ct",
            Workload::Timer {
                period_ns,
                run_ns: 20_000,
            },
        ),
    );
    c.tasks[0].cpus = Some(vec![0]);
    let mut b = TaskSpec::new(
        "b",
        Workload::Periodic {
            run_ns: 5 * MS,
            sleep_ns: 1_000,
            period_ns: None,
        },
    );
    b.cpus = Some(vec![1]);
    c.tasks.push(b);
    let r = simulate(c);
    let of = |name: &str| r.by_name.iter().find(|n| n.name == name).unwrap().clone();
    let ct = of("ct");
    (of("b").latency.samples, ct.cpu_ns, ct.latency.p99)
}

#[test]
fn a_vcpu_that_halts_hands_its_turn_over() {
    // A 5 ms period: the burst loop's 4 ms tick is nearer than the timer
    // cyclictest arms, so it sleeps and its vCPU halts. The burst loop's
    // turn ends at cyclictest's timer, the halted vCPU takes the next
    // one, wakes cyclictest and is charged about its runs only (2.2 ms on
    // real CPUs, 2.9 in turns); its halt gives the burst loop the rest.
    let (free, ct_free, p99_free) = beside_a_burst_loop(5 * MS, false);
    let (turns, ct_turns, p99_turns) = beside_a_burst_loop(5 * MS, true);
    assert!(
        ct_turns < 2 * ct_free,
        "cyclictest charged {ct_turns} ns in turns against {ct_free}"
    );
    assert!(
        p99_turns < p99_free + 50_000,
        "cyclictest p99 {p99_turns} ns in turns against {p99_free}"
    );
    // 99 on real CPUs and 98 in turns.
    assert!(turns + 4 >= free, "{turns} bursts in turns against {free}");
}

#[test]
fn a_sleeper_that_arms_the_nearest_deadline_is_kicked_before_it_sleeps() {
    // A 1 ms period: the timer cyclictest arms is the nearest deadline, so
    // QEMU kicks its vCPU out inside clock_nanosleep() (the LAPIC write's
    // qemu_timer_notify_cb), before schedule(). The burst loop runs until
    // that timer, and cyclictest's vCPU resumes with it already fired: it
    // never sleeps, and is charged for the burst loop's turns (11 ms on
    // real CPUs, 124 in turns), its latency a turn (p99 3.1 ms).
    let (_, ct_free, p99_free) = beside_a_burst_loop(MS, false);
    let (_, ct_turns, p99_turns) = beside_a_burst_loop(MS, true);
    assert!(
        ct_turns > 5 * ct_free,
        "cyclictest charged {ct_turns} ns in turns against {ct_free}"
    );
    assert!(
        p99_turns > 10 * p99_free,
        "cyclictest p99 {p99_turns} ns in turns against {p99_free}"
    );
}

/// For each wakeup that a vCPU's wakelist enqueues for a waker on
/// another vCPU: the time from the wake call to the enqueue.
#[derive(Clone, Debug, Default)]
struct WakelistDelays {
    waking: std::collections::HashMap<usize, (u64, u32)>,
    delays: Vec<u64>,
}

impl Observer for WakelistDelays {
    fn event(&mut self, e: &SimEvent) {
        match *e {
            SimEvent::Waking { ts, cpu, task, .. } => {
                self.waking.insert(task, (ts, cpu));
            }
            SimEvent::Wakeup { ts, cpu, task, on } => {
                if let Some((at, from)) = self.waking.remove(&task) {
                    if from != cpu && on == cpu {
                        self.delays.push(ts - at);
                    }
                }
            }
            _ => {}
        }
    }
    fn interest(&self) -> Interest {
        Interest::WAKEUP
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

#[test]
fn a_wakee_of_a_halted_vcpu_waits_for_its_turn() {
    // A waker's IPI marks the halted target and its turn goes on (QEMU's
    // tcg_handle_interrupt: every vCPU is "self" to the one thread); the
    // target enqueues the wakee (sched_ttwu_pending) when its own turn
    // comes. On real CPUs it does so at once, after the wake cost.
    let delays = |turns| {
        let mut c = cfg(4, turns, hackbench(1));
        c.duration_ns = 400 * MS;
        let mut sim = eevdf_sim::Sim::new(c);
        sim.observe(Box::new(WakelistDelays::default()));
        for step in 1..=80u64 {
            sim.run_until(step * 5 * MS);
            sim.check_threads()
                .unwrap_or_else(|e| panic!("at {} ms: {e}", step * 5));
        }
        let mut d = sim.detach_observer::<WakelistDelays>().unwrap().delays;
        d.sort_unstable();
        assert!(d.len() > 20, "{} wakelist wakeups", d.len());
        (d[d.len() / 2], d[d.len() - 1])
    };
    // Here 2,638 such wakeups on real CPUs, each 5 us (the wake cost);
    // 66 in turns, 2.6 ms at the median.
    let (free_p50, free_max) = delays(false);
    let (turns_p50, turns_max) = delays(true);
    assert!(
        free_max <= Costs::default().wake_ns,
        "real CPUs: p50 {free_p50} ns, max {free_max} ns"
    );
    assert!(
        turns_p50 > 100_000,
        "in turns: p50 {turns_p50} ns, max {turns_max} ns"
    );
}

#[test]
fn a_thread_that_meets_a_lock_held_by_a_vcpu_standing_still_hands_its_turn_over() {
    // Hackbench over pipes on four vCPUs: a thread that reaches a pipe
    // whose mutex a thread on a vCPU standing still holds spins (the
    // optimistic spin's PAUSE), which ends its turn; real CPUs take none.
    let counts = |turns| {
        let mut sim = eevdf_sim::Sim::new(cfg(4, turns, hackbench(1)));
        sim.run_until(200 * MS);
        sim.turn_counts()
    };
    assert_eq!(counts(false), eevdf_sim::TurnCounts::default());
    let c = counts(true);
    assert!(
        c.spins > 10 && c.spins * 2 < c.turns,
        "{} of {} turns end at a spin",
        c.spins,
        c.turns
    );
}
