//! hackbench's `pipe->mutex` (docs/model.md §6): a thread preempted in
//! the kernel inside a read's or write's lock keeps the mutex, and whoever reaches
//! that pipe sleeps in `D` until the unlock. A 7.2.13 ct-hackbench trace
//! (lazy, `CONFIG_PREEMPTION`) has 896 `D` sleeps in 1 s; 6.12.95
//! (voluntary) has none, as no kernel preemption can stop a holder.

use eevdf_core::{FeatureSet, Profile};
use eevdf_sim::trace::{PrevState, TraceEvent};
use eevdf_sim::{Costs, PreemptModel, Sim, SimConfig, TaskSpec, Workload};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn ct_hackbench(profile: Profile, preempt: PreemptModel) -> SimConfig {
    let fs = FeatureSet::new(profile);
    let mut ct = TaskSpec::new(
        "ct",
        Workload::Timer {
            period_ns: MS,
            run_ns: 20 * US,
        },
    );
    ct.slice_ns = Some(100 * US);
    let hb = TaskSpec::new(
        "hb",
        Workload::Hackbench {
            groups: 1,
            fds: 10,
            threads: true,
            pipe: true,
            loops: 0,
            send_ns: 2_252,
            recv_ns: 2_042,
            pipe_msgs: 655,
        },
    );
    SimConfig {
        nr_cpus: 1,
        hz: 250,
        features: fs.features,
        profile: fs.profile,
        duration_ns: 1_000 * MS,
        costs: Costs {
            switch_ns: 5_244,
            wake_ns: 3_298,
            migrate_ns: 0,
        },
        preempt,
        tasks: vec![ct, hb],
        ..SimConfig::default()
    }
}

/// (`D` sleeps, all switches) in the run's trace, and the run's check.
fn mutex_sleeps(c: SimConfig) -> (usize, usize) {
    let end = c.duration_ns;
    let mut sim = Sim::new(c);
    sim.record_trace();
    let mut d = 0;
    let mut switches = 0;
    for step in 1..=10 {
        sim.run_until(end / 10 * step);
        sim.check_threads().unwrap();
    }
    for e in &sim.take_trace().events {
        if let TraceEvent::Switch { prev_state, .. } = *e {
            switches += 1;
            d += usize::from(prev_state == PrevState::Uninterruptible);
        }
    }
    (d, switches)
}

#[test]
fn only_a_kernel_preemption_leaves_the_mutex_held() {
    let (d, _) = mutex_sleeps(ct_hackbench(Profile::V7_2, PreemptModel::Lazy));
    // The kernel's 890 in 1 s; the simulator's are of that order.
    assert!((200..5_000).contains(&d), "{d} D sleeps under lazy");
    let (d, switches) = mutex_sleeps(ct_hackbench(Profile::V6_12, PreemptModel::Voluntary));
    assert_eq!(
        d, 0,
        "voluntary never preempts a holder ({switches} switches)"
    );
    let (d, _) = mutex_sleeps(ct_hackbench(Profile::V6_12, PreemptModel::None));
    assert_eq!(d, 0);
}

#[test]
fn sockets_have_no_pipe_mutex() {
    let mut c = ct_hackbench(Profile::V7_2, PreemptModel::Full);
    if let Workload::Hackbench { pipe, .. } = &mut c.tasks[1].workload {
        *pipe = false;
    }
    assert_eq!(mutex_sleeps(c).0, 0);
}
