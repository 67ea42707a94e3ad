//! Property tests on SMP machines: random workloads on random topologies,
//! random features. docs/model.md §9 invariant 14 (no lost wakeups):
//! every few milliseconds each thread must be where its state says, and
//! every runqueue must pass its invariant check. Invariant 15 (PELT
//! follows migrations): each CPU's utilisation is the sum of its
//! threads', sleeping ones included.

use eevdf_core::{FeatureSet, Policy, Profile};
use eevdf_sim::topology::{CustomMachine, MachineSpec};
use eevdf_sim::{PreemptModel, Sim, SimConfig, TaskSpec, Workload};
use proptest::prelude::*;

fn workload() -> impl Strategy<Value = Workload> {
    prop_oneof![
        (100_000u64..5_000_000, 5_000u64..200_000).prop_map(|(p, r)| Workload::Timer {
            period_ns: p,
            run_ns: r.min(p / 2),
        }),
        (50_000u64..5_000_000, 50_000u64..10_000_000).prop_map(|(r, s)| Workload::Periodic {
            run_ns: r,
            sleep_ns: s,
            period_ns: None,
        }),
        Just(Workload::Hog),
        (1u32..3, 1u32..5, 1u32..40).prop_map(|(g, f, m)| Workload::Hackbench {
            groups: g,
            fds: f,
            threads: true,
            pipe: true,
            loops: 0,
            send_ns: 2_000,
            recv_ns: 2_000,
            pipe_msgs: m,
        }),
        (1u32..3, 1u32..5).prop_map(|(m, w)| Workload::Schbench {
            message_threads: m,
            workers: w,
            request_ns: 100_000,
            sleep_ns: 500_000,
        }),
    ]
}

fn machine() -> impl Strategy<Value = MachineSpec> {
    prop_oneof![
        (1u32..6).prop_map(MachineSpec::Flat),
        prop::sample::select(vec!["rb5", "laptop-4c8t", "orion6"])
            .prop_map(|s| MachineSpec::Preset(s.into())),
        (1u32..3, 1u32..3, 1u32..4, 1u32..3).prop_map(|(nodes, llcs, cores, smt)| {
            MachineSpec::Custom(CustomMachine {
                nodes,
                packages_per_node: 1,
                llcs_per_package: llcs,
                clusters_per_llc: 1,
                cores_per_cluster: cores,
                smt,
                capacities: Vec::new(),
                remote_distance: 20,
            })
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn no_lost_wakeups(
        m in machine(),
        loads in prop::collection::vec((workload(), 1u32..4, prop::option::of(100_000u64..20_000_000), -5i32..5, any::<bool>()), 1..5),
        tokens in prop::collection::vec(prop::sample::select(vec![
            "NO_DELAY_DEQUEUE", "NEXT_BUDDY", "NO_RUN_TO_PARITY", "WA_SLICE", "SIS_SLICE", "NO_SIS_UTIL",
            "NO_WA_IDLE", "NO_WA_WEIGHT", "LAG_DECAY_SLEEP", "NB_MODE=mel_v5", "NO_NI_RANDOM", "HRTICK",
        ]), 0..3),
        preempt in prop::sample::select(PreemptModel::ALL.to_vec()),
        seed in any::<u64>(),
        vcpu_turns in any::<bool>(),
    ) {
        let mut fs = FeatureSet::new(Profile::V7_1);
        for t in tokens { fs.apply(t).unwrap(); }
        let tasks = loads.into_iter().enumerate().map(|(i, (w, count, slice, nice, pin))| {
            let mut t = TaskSpec::new(&format!("t{i}"), w);
            t.count = count;
            t.slice_ns = slice;
            t.nice = nice;
            t.policy = if nice == 4 { Policy::Batch } else { Policy::Normal };
            if pin { t.cpus = Some(vec![0, 1]); }
            t
        }).collect();
        let cfg = SimConfig {
            machine: Some(m),
            hz: 1000,
            features: fs.features,
            preempt,
            seed,
            duration_ns: 300_000_000,
            tasks,
            vcpu_turns,
            ..SimConfig::default()
        };
        let mut sim = Sim::new(cfg);
        for step in 1..=60u64 {
            sim.run_until(step * 5_000_000);
            if let Err(e) = sim.check_threads() {
                return Err(TestCaseError::fail(format!("at {} ms: {e}", step * 5)));
            }
            if let Err(e) = util_follows_threads(&sim, step * 5_000_000) {
                return Err(TestCaseError::fail(format!("at {} ms: {e}", step * 5)));
            }
        }
    }
}

/// 7.2.13 keeps `cfs_rq->avg.util_avg` the sum of its entities' (a
/// migrating task's goes with it: `remove_entity_load_avg`,
/// `attach_entity_load_avg`). Here the two are separate averages of the
/// same running time, so they differ only by rounding: a PELT update's
/// within-period interpolation, a few units per thread.
fn util_follows_threads(sim: &Sim, now: u64) -> Result<(), String> {
    let n = sim.topology().nr_cpus();
    let mut sum = vec![0u64; n as usize];
    let mut count = vec![0u64; n as usize];
    for tid in 0..sim.thread_directives().len() {
        let cpu = sim.thread_cpu(tid) as usize;
        sum[cpu] += sim.thread_util_avg(tid, now);
        count[cpu] += 1;
    }
    for cpu in 0..n {
        let have = sim.cpu_util_avg(cpu, now);
        let want = sum[cpu as usize];
        let tol = 16 + 16 * count[cpu as usize];
        if have.abs_diff(want) > tol {
            return Err(format!(
                "CPU {cpu} util {have}, its {} threads' sum {want}",
                count[cpu as usize]
            ));
        }
    }
    Ok(())
}
