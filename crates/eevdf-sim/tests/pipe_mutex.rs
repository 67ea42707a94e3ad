//! hackbench's `pipe->mutex` (docs/model.md §6): a thread preempted in
//! the kernel inside a read's or write's lock keeps the mutex, and whoever reaches
//! that pipe sleeps in `D` until the unlock. A 7.2.13 ct-hackbench trace
//! (lazy, `CONFIG_PREEMPTION`) has 896 `D` sleeps in 1 s; 6.12.95
//! (voluntary) has none, as no kernel preemption can stop a holder.

mod common;

use common::ct_hackbench;
use eevdf_core::Profile;
use eevdf_sim::trace::{PrevState, TraceEvent};
use eevdf_sim::{PreemptModel, Sim, SimConfig, Workload};

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
