//! Property tests of `find_energy_efficient_cpu` (7.2.13 fair.c) on the
//! energy-modelled presets, with random CPU utilisations below the
//! over-utilisation line and a random waking task whose blocked
//! utilisation sits on its previous CPU.

use eevdf_core::{FeatureSet, Profile};
use eevdf_sim::placement::{
    find_energy_efficient_cpu, fits_capacity, CpuView, CpuViews, LlcState, MachineView, WakeCtx,
};
use eevdf_sim::topology::{MachineSpec, Topology};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Case {
    topo: Topology,
    views: Vec<CpuView>,
    prev: u32,
    task_util: u64,
    task_util_est: u64,
}

/// rb5 or orion6; every CPU below 80 % of its capacity, prev holding at
/// least the task's decayed utilisation.
fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![Just("rb5"), Just("orion6")],
        proptest::collection::vec(0u64..1000, 12),
        any::<prop::sample::Index>(),
        0u64..400,
        0u64..400,
    )
        .prop_map(|(name, fill, prev, decayed, extra)| {
            let topo = Topology::build(&MachineSpec::Preset(name.into())).unwrap();
            let n = topo.nr_cpus() as usize;
            let prev = prev.index(n) as u32;
            let views: Vec<CpuView> = (0..n)
                .map(|c| {
                    let cap = u64::from(topo.capacity(c as u32));
                    let limit = cap * 1024 / 1280 - 1;
                    let own = if c as u32 == prev {
                        decayed.min(limit)
                    } else {
                        0
                    };
                    let util = (own + fill[c] * limit / 1000).min(limit);
                    CpuView {
                        idle: util == 0,
                        util,
                        ..CpuView::default()
                    }
                })
                .collect();
            let task_util = decayed.min(views[prev as usize].util);
            Case {
                topo,
                views,
                prev,
                task_util,
                task_util_est: task_util + extra,
            }
        })
}

fn place(c: &Case, allowed: &[u32]) -> Option<u32> {
    let fs = FeatureSet::new(Profile::V7_2);
    let llc = LlcState::default();
    let m = MachineView {
        topo: &c.topo,
        cpus: CpuViews::all(&c.views),
        features: &fs.features,
        profile: fs.profile,
        llc: &llc,
        eas: true,
    };
    let ctx = WakeCtx {
        waker_cpu: 0,
        prev_cpu: c.prev,
        sync: false,
        fork: false,
        task_util: c.task_util,
        task_util_est: c.task_util_est,
        task_load: 1024,
        waker_load: 1024,
        task_slice: 2_800_000,
        allowed,
        recent_used_cpu: None,
        waker_flips: 0,
        wakee_flips: 0,
    };
    find_energy_efficient_cpu(&m, &ctx, c.prev)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Not over-utilised, so EAS always answers; another CPU than prev
    /// is chosen only if the task fits there with its estimate.
    #[test]
    fn eas_moves_a_task_only_where_it_fits(c in case()) {
        let all: Vec<u32> = (0..c.topo.nr_cpus()).collect();
        let cpu = place(&c, &all);
        prop_assert!(cpu.is_some());
        let cpu = cpu.unwrap();
        if cpu != c.prev {
            let util = c.views[cpu as usize].util + c.task_util_est;
            prop_assert!(fits_capacity(util, c.topo.capacity(cpu)), "cpu {cpu} util {util}");
        }
    }

    /// A task with no utilisation adds no energy anywhere, so every
    /// delta ties and prev keeps it (as `task_util_est(p) == 0` does);
    /// and a task allowed only prev and one other CPU never lands
    /// elsewhere.
    #[test]
    fn eas_keeps_ties_on_prev_and_affinity(c in case(), other in any::<prop::sample::Index>()) {
        let idle = Case { task_util: 0, task_util_est: 0, ..c };
        let all: Vec<u32> = (0..idle.topo.nr_cpus()).collect();
        prop_assert_eq!(place(&idle, &all), Some(idle.prev));
        let other = other.index(all.len()) as u32;
        let c = Case { task_util: 1, task_util_est: 200, ..idle };
        let allowed = [c.prev.min(other), c.prev.max(other)];
        let cpu = place(&c, &allowed).unwrap();
        prop_assert!(allowed.contains(&cpu), "{cpu} outside {allowed:?}");
    }
}
