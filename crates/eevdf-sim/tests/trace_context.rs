//! A trace event sits on the CPU whose code emits it, as in the kernel's
//! trace: a wakeup's `sched_migrate_task` on the CPU that runs
//! `try_to_wake_up()` (its `set_task_cpu()`), the waker's, not the CPU
//! the task leaves.

use eevdf_core::{FeatureSet, Profile};
use eevdf_sim::trace::TraceEvent;
use eevdf_sim::{Costs, Sim, SimConfig, TaskSpec, Workload};

const MS: u64 = 1_000_000;

#[test]
fn a_wakeups_migration_is_traced_on_the_wakers_cpu() {
    let fs = FeatureSet::new(Profile::V7_2);
    let hb = TaskSpec::new(
        "hb",
        Workload::Hackbench {
            groups: 1,
            fds: 10,
            pipe: true,
            threads: true,
            loops: 0,
            send_ns: 2_000,
            recv_ns: 2_000,
            pipe_msgs: 655,
        },
    );
    let mut sim = Sim::new(SimConfig {
        nr_cpus: 4,
        features: fs.features,
        profile: fs.profile,
        duration_ns: 100 * MS,
        costs: Costs::default(),
        tasks: vec![hb],
        ..SimConfig::default()
    });
    sim.record_trace();
    sim.run_until(sim.duration());
    let trace = sim.take_trace();
    let mut waking = std::collections::HashMap::new();
    let (mut checked, mut elsewhere) = (0, 0);
    for e in &trace.events {
        match *e {
            // Between a task's sched_waking and its sched_wakeup a
            // migration is the wakeup's; others are load balancing's.
            TraceEvent::Waking { cpu, task, .. } => {
                waking.insert(task, cpu);
            }
            TraceEvent::Wakeup { task, .. } => {
                waking.remove(&task);
            }
            TraceEvent::Migrate {
                cpu,
                task,
                orig_cpu,
                ..
            } => {
                if let Some(&w) = waking.get(&task) {
                    assert_eq!(cpu, w, "task {task}: migrated by its waker's CPU");
                    checked += 1;
                    elsewhere += u32::from(w != orig_cpu);
                }
            }
            _ => {}
        }
    }
    // Here 200 or so, most woken from another CPU than the one left.
    assert!(
        checked > 20 && elsewhere > 0,
        "{checked} wakeup migrations, {elsewhere} by a CPU other than the one left"
    );
}
