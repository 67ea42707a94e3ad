//! Who pays for a wakeup (docs/model.md §6): a task that wakes another
//! runs `try_to_wake_up()` itself, and a timer's interrupt takes its time
//! from whatever runs on its CPU.

use eevdf_core::{FeatureSet, Profile};
use eevdf_sim::trace::TraceEvent;
use eevdf_sim::{simulate, Costs, SimConfig, TaskSpec, Workload};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn one_cpu(tokens: &[&str], costs: Costs) -> SimConfig {
    let mut fs = FeatureSet::new(Profile::V7_2);
    for t in tokens {
        fs.apply(t).unwrap();
    }
    SimConfig {
        nr_cpus: 1,
        hz: 1000,
        features: fs.features,
        profile: fs.profile,
        duration_ns: 1_000 * MS,
        costs,
        preempt: eevdf_sim::PreemptModel::Full,
        ..SimConfig::default()
    }
}

#[test]
fn a_sender_pays_for_each_reader_it_wakes() {
    // A 6.12.95 ct-hackbench trace spaces one sender's wakeups 10-11 us
    // apart: a 2.6 us write, the wakeup and its two tracepoints. Here a write is 2 us and a
    // wakeup 3 us, so wakeups by one running thread are at least 5 us
    // apart, and some exactly (one write, then the wakeup).
    let costs = Costs {
        switch_ns: US,
        wake_ns: 3 * US,
        ..Costs::ZERO
    };
    let mut c = one_cpu(&[], costs);
    c.tasks = vec![TaskSpec::new(
        "hb",
        Workload::Hackbench {
            groups: 1,
            fds: 4,
            threads: true,
            pipe: true,
            loops: 0,
            send_ns: 2 * US,
            recv_ns: 2 * US,
            pipe_msgs: 655,
        },
    )];
    c.duration_ns = 50 * MS;
    // Without kernel preemption no pipe mutex is held across a switch,
    // so each write wakes at most its reader (a holder's unlock would
    // wake a mutex waiter 3 us before it).
    c.preempt = eevdf_sim::PreemptModel::Voluntary;
    let mut sim = eevdf_sim::Sim::new(c);
    sim.record_trace();
    sim.run_until(50 * MS);
    let mut gaps = Vec::new();
    let mut last: Option<u64> = None;
    for e in &sim.take_trace().events {
        match *e {
            TraceEvent::Switch { .. } => last = None,
            // Threads are released by wakeups in the first tick.
            TraceEvent::Wakeup { ts, .. } if ts > 2 * MS => {
                if let Some(l) = last {
                    gaps.push(ts - l);
                }
                last = Some(ts);
            }
            _ => {}
        }
    }
    let mut sorted = gaps.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted.first(),
        Some(&(5 * US)),
        "{:?}",
        &sorted[..20.min(sorted.len())]
    );
}

fn periodic_cpu_ns(wake_ns: u64) -> (u64, u64) {
    let costs = Costs {
        wake_ns,
        ..Costs::ZERO
    };
    // The timer task never preempts (NO_WAKEUP_PREEMPTION) and the
    // periodic task's slice outlasts its burst: the timer's interrupts
    // fall inside the bursts and only delay them.
    let mut c = one_cpu(&["NO_WAKEUP_PREEMPTION", "NO_HRTICK"], costs);
    let mut p = TaskSpec::new(
        "p",
        Workload::Periodic {
            run_ns: 2_500 * US,
            sleep_ns: 0,
            period_ns: Some(10 * MS),
        },
    );
    p.slice_ns = Some(10 * MS);
    let t = TaskSpec::new(
        "t",
        Workload::Timer {
            period_ns: MS,
            run_ns: 10 * US,
        },
    );
    c.tasks = vec![p, t];
    let r = simulate(c);
    let p = r.by_name.iter().find(|n| n.name == "p").unwrap();
    (p.cpu_ns, p.latency.samples)
}

#[test]
fn a_timer_interrupt_takes_its_time_from_the_running_task() {
    let (free, n) = periodic_cpu_ns(0);
    assert!(n >= 95, "{n} activations");
    // Without interrupt time a burst is its work (the last one may be
    // cut by the end of the run).
    assert!(
        n * 2_500 * US - free < 2_500 * US,
        "{free} ns in {n} bursts"
    );
    // The 1 ms timer fires once in most 2.5 ms bursts (its task re-arms
    // it only when it runs, after the burst); each interrupt takes 20 us
    // the burst then still has to do.
    let (charged, m) = periodic_cpu_ns(20 * US);
    assert_eq!(m, n);
    let per_burst = (charged - free) / n;
    assert!(
        (15 * US..=20 * US).contains(&per_burst),
        "{per_burst} ns a burst"
    );
}
