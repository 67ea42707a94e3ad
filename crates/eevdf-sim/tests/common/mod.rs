//! The ct-hackbench row of docs/fidelity.md as a `SimConfig`, with the
//! 7.2 guest's measured switch, wake and message costs
//! (`calibrate::GUEST_COSTS`; no `sleep` or `tick` cost): cyclictest
//! (1 ms, 100 us slice) against one hackbench group of 10 thread pairs
//! over pipes, on one CPU at HZ=250, for 1 s.

use eevdf_core::{FeatureSet, Profile};
use eevdf_sim::{Costs, PreemptModel, SimConfig, TaskSpec, Workload};

pub const US: u64 = 1_000;
pub const MS: u64 = 1_000_000;
/// hackbench's send cost per message in the 7.2 guest.
pub const SEND_NS: u64 = 2_252;
/// The 7.2 guest's wake cost, paid by the waker.
pub const WAKE_NS: u64 = 3_298;

pub fn ct_hackbench(profile: Profile, preempt: PreemptModel) -> SimConfig {
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
            send_ns: SEND_NS,
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
            wake_ns: WAKE_NS,
            ..Costs::ZERO
        },
        preempt,
        tasks: vec![ct, hb],
        ..SimConfig::default()
    }
}
