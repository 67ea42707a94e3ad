//! `try_to_wake_up()` runs in the waker's context with `p->pi_lock` held
//! and interrupts off, so no switch comes between a wakeup's
//! `sched_waking` and its `sched_wakeup`, and a waker that sleeps next
//! does so after its wakees are queued (`pipe_write()` wakes the reader
//! before the syscall returns). A 7.2.13 ct-hackbench trace (seed 1,
//! 1 s, lazy) has no hackbench wakeup in cyclictest's context and one
//! receiver woken in a receiver's, from an interrupt; engine 0.6's twin
//! had 67 and 336, as it let the waker go while its wakeups were on the
//! way (here, under lazy: 54 switches inside a wakeup, 3 of them inside
//! a timer's interrupt).

mod common;

use common::ct_hackbench;
use eevdf_core::Profile;
use eevdf_sim::trace::TraceEvent;
use eevdf_sim::{PreemptModel, Sim};

/// Switches that came while a wakeup was between its call and its
/// enqueue, out of all wakeups (one CPU).
fn switches_inside_wakeups(profile: Profile, preempt: PreemptModel) -> (usize, usize) {
    let c = ct_hackbench(profile, preempt);
    let end = c.duration_ns;
    let mut sim = Sim::new(c);
    sim.record_trace();
    sim.run_until(end);
    sim.check_threads().unwrap();
    let mut waking: Vec<usize> = Vec::new();
    let (mut inside, mut wakeups) = (0, 0);
    for e in &sim.take_trace().events {
        match *e {
            TraceEvent::Waking { task, .. } => waking.push(task),
            TraceEvent::Wakeup { task, .. } => {
                wakeups += 1;
                waking.retain(|&t| t != task);
            }
            TraceEvent::Switch { .. } => inside += usize::from(!waking.is_empty()),
            TraceEvent::Migrate { .. } => {}
        }
    }
    (inside, wakeups)
}

#[test]
fn no_switch_comes_inside_a_wakeup() {
    for (profile, preempt) in [
        (Profile::V7_2, PreemptModel::Lazy),
        (Profile::V7_2, PreemptModel::Full),
        (Profile::V6_12, PreemptModel::Voluntary),
        (Profile::V6_12, PreemptModel::None),
    ] {
        let (inside, wakeups) = switches_inside_wakeups(profile, preempt);
        assert!(wakeups > 1_000, "{preempt:?}: {wakeups} wakeups");
        assert_eq!(inside, 0, "{preempt:?}: {inside} of {wakeups} wakeups");
    }
}

/// `sched_wakeup` comes from the CPU that queues the task: the waker for
/// its own CPU or a busy one in its LLC, the target itself when
/// `ttwu_queue_cond()` hands it the task (an idle target; 7.2.13 and
/// 6.12.95 `kernel/sched/core.c`). A 7.2.13 trace of hackbench on four
/// vCPUs logs 2,954 of 6,404 receiver wakeups on the waker's CPU. A
/// wakeup's `sched_migrate_task` comes from the CPU that runs
/// `try_to_wake_up()` (its `set_task_cpu()`), the waker's, not the CPU
/// the task leaves.
#[test]
fn a_remote_wakeup_is_logged_where_it_is_queued() {
    let mut c = ct_hackbench(Profile::V7_2, PreemptModel::Lazy);
    c.nr_cpus = 4;
    c.duration_ns = 300 * common::MS;
    let end = c.duration_ns;
    let mut sim = Sim::new(c);
    sim.record_trace();
    sim.run_until(end);
    let mut curr: Vec<Option<usize>> = vec![None; 4];
    let mut waker_cpu = std::collections::BTreeMap::new();
    let mut waking = std::collections::BTreeSet::new();
    let (mut by_waker, mut by_target) = (0, 0);
    let (mut migrations, mut moved_by_another) = (0, 0);
    for e in &sim.take_trace().events {
        match *e {
            TraceEvent::Switch { cpu, next, .. } => curr[cpu as usize] = next,
            TraceEvent::Waking { task, cpu, .. } => {
                waker_cpu.insert(task, cpu);
                waking.insert(task);
            }
            TraceEvent::Wakeup { cpu, task, on, .. } => {
                waking.remove(&task);
                let src = waker_cpu[&task];
                let expect = if src == cpu || curr[cpu as usize].is_some() {
                    src
                } else {
                    cpu
                };
                assert_eq!(on, expect, "wakeup of {task} on {cpu} from {src}");
                by_waker += usize::from(on == src && src != cpu);
                by_target += usize::from(on == cpu && src != cpu);
            }
            // Between a task's sched_waking and its sched_wakeup a
            // migration is the wakeup's; others are load balancing's.
            TraceEvent::Migrate {
                cpu,
                task,
                orig_cpu,
                ..
            } if waking.contains(&task) => {
                let src = waker_cpu[&task];
                assert_eq!(cpu, src, "migration of {task} by its waker's CPU");
                migrations += 1;
                moved_by_another += usize::from(src != orig_cpu);
            }
            TraceEvent::Migrate { .. } => {}
        }
    }
    assert!(
        by_waker > 50 && by_target > 50,
        "{by_waker} by the waker, {by_target} by the target"
    );
    assert!(
        migrations > 20 && moved_by_another > 0,
        "{migrations} wakeup migrations, {moved_by_another} by a CPU other than the one left"
    );
}
