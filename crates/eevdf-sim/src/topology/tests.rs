//! Topologies: shapes, distances, domains and groups as topology.c
//! builds them, capacities and energy models.

use super::*;
use proptest::prelude::*;

fn preset(name: &str) -> Topology {
    Topology::build(&MachineSpec::Preset(name.into())).unwrap()
}

fn range(a: u32, b: u32) -> Vec<u32> {
    (a..b).collect()
}

fn levels(t: &Topology, cpu: u32) -> Vec<Level> {
    t.domains[cpu as usize].iter().map(|d| d.level).collect()
}

/// Structural invariants every topology must satisfy.
fn check_invariants(t: &Topology) {
    let n = t.nr_cpus();
    assert_eq!(t.domains.len(), n as usize);
    for cpu in 0..n {
        let doms = &t.domains[cpu as usize];
        let mut prev: Option<&SchedDomain> = None;
        for sd in doms {
            assert!(sd.span.windows(2).all(|w| w[0] < w[1]), "span sorted");
            assert!(sd.span.contains(&cpu));
            assert!(sd.span.len() > 1, "no single-CPU domain survives");
            assert!(sd.groups[0].contains(&cpu), "first group holds cpu");
            assert_eq!(sd.min_interval_ms, sd.span.len() as u32);
            assert_eq!(sd.max_interval_ms, 2 * sd.span.len() as u32);
            assert_eq!(sd.busy_factor, 16);
            let mut all: Vec<u32> = sd.groups.iter().flatten().copied().collect();
            all.sort_unstable();
            if !sd.flags.numa {
                // Non-overlapping groups partition the span.
                assert_eq!(all, sd.span, "groups partition the span");
            } else {
                all.dedup();
                assert_eq!(all, sd.span, "groups cover the span");
            }
            match prev {
                Some(child) => {
                    assert!(child.span.len() < sd.span.len());
                    assert!(child.span.iter().all(|c| sd.span.contains(c)));
                    assert_eq!(sd.groups[0], child.span, "first group = child");
                }
                None => assert!(
                    sd.groups.iter().all(|g| g.len() == 1),
                    "bottom groups are CPUs"
                ),
            }
            prev = Some(sd);
        }
        if let Some(top) = doms.last() {
            assert_eq!(top.span.len() as u32, n, "top domain spans all");
        } else {
            assert_eq!(n, 1);
        }
        assert!(t.smt_siblings(cpu).contains(&cpu));
        let llc = t.llc_id(cpu);
        assert_eq!(t.llc_id(llc), llc);
        for other in 0..n {
            assert_eq!(
                t.cpus_share_cache(cpu, other),
                t.cpus_share_cache(other, cpu)
            );
        }
    }
}

#[test]
fn presets_build_with_expected_sizes() {
    let sizes = [8, 12, 64, 64, 512, 8, 1];
    for (name, want) in PRESET_NAMES.iter().zip(sizes) {
        let t = preset(name);
        assert_eq!(t.nr_cpus(), want, "{name}");
        assert_eq!(t.name, *name);
        check_invariants(&t);
        assert!(!t.describe().is_empty());
    }
}

#[test]
fn qemu_icount_is_one_cpu_with_measured_costs() {
    let t = preset("qemu-icount");
    assert_eq!((t.nr_cpus(), t.domains[0].len()), (1, 0));
    assert_eq!(preset_costs("qemu-icount"), QEMU_ICOUNT_COSTS);
    assert_ne!(QEMU_ICOUNT_COSTS, Costs::default());
    assert_eq!(preset_costs("rb5"), Costs::default());
    assert_eq!(preset_costs("pdp11"), Costs::default());
}

#[test]
fn xeon_cpu0_domains() {
    let t = preset("xeon-4314-2s");
    assert_eq!(t.node_distance, vec![vec![10, 20], vec![20, 10]]);
    assert_eq!(levels(&t, 0), [Level::Smt, Level::Mc, Level::Numa(1)]);
    let d = &t.domains[0];
    assert_eq!(d[0].span, [0, 32]);
    assert_eq!(d[0].groups, [vec![0], vec![32]]);
    let mut socket0 = range(0, 16);
    socket0.extend(32..48);
    assert_eq!(d[1].span, socket0);
    assert_eq!(d[2].span, range(0, 64));
    assert_eq!(
        [d[0].imbalance_pct, d[1].imbalance_pct, d[2].imbalance_pct],
        [110, 117, 117]
    );
    assert_eq!(
        [
            d[0].cache_nice_tries,
            d[1].cache_nice_tries,
            d[2].cache_nice_tries
        ],
        [0, 1, 2]
    );
    assert_eq!([d[1].min_interval_ms, d[1].max_interval_ms], [32, 64]);
    let base = DomainFlags {
        balance_newidle: true,
        balance_exec: true,
        balance_fork: true,
        wake_affine: true,
        ..DomainFlags::default()
    };
    assert_eq!(
        d[0].flags,
        DomainFlags {
            share_cpucapacity: true,
            share_llc: true,
            prefer_sibling: true,
            ..base
        }
    );
    assert_eq!(
        d[1].flags,
        DomainFlags {
            share_llc: true,
            prefer_sibling: true,
            ..base
        }
    );
    // Distance 20 <= node_reclaim_distance: WAKE_AFFINE etc. stay.
    assert_eq!(
        d[2].flags,
        DomainFlags {
            numa: true,
            serialize: true,
            ..base
        }
    );
    let pairs: Vec<Vec<u32>> = (0..16).map(|c| vec![c, c + 32]).collect();
    assert_eq!(d[1].groups, pairs);
    let mut socket1 = range(16, 32);
    socket1.extend(48..64);
    assert_eq!(d[2].groups, [d[1].span.clone(), socket1.clone()]);
    // PKG (imb 32 >> 3 = 4) was degenerate; NUMA inherits 4.
    assert_eq!([d[1].imb_numa_nr, d[2].imb_numa_nr], [0, 4]);
    // A socket-1 sibling thread starts its groups with its own.
    let d49 = &t.domains[49];
    assert_eq!(d49[0].span, [17, 49]);
    assert_eq!(d49[0].groups, [vec![49], vec![17]]);
    assert_eq!(d49[2].groups[0], socket1);
    assert_eq!(t.smt_siblings(33), [1, 33]);
    assert_eq!(t.llc_id(40), 0);
    assert_eq!(t.llc_size(40), 32);
    assert!(t.cpus_share_cache(3, 47));
    assert!(!t.cpus_share_cache(3, 16));
    assert_eq!(t.node_of(48), 1);
    assert!(!t.asymmetric());
    assert!(t.sd_asym_cpucapacity(0).is_none());
    assert!(t.perf_domains.is_empty());
}

#[test]
fn degenerate_levels_removed() {
    let g = preset("graviton3");
    for cpu in [0, 37, 63] {
        assert_eq!(levels(&g, cpu), [Level::Mc]);
        let mc = &g.domains[cpu as usize][0];
        assert_eq!(mc.span, range(0, 64));
        assert_eq!(mc.groups.len(), 64);
        assert_eq!(mc.groups[0], [cpu]);
        assert!(mc.flags.share_llc && mc.flags.prefer_sibling);
    }
    assert_eq!(g.llc_size(5), 64);

    let up = Topology::build(&MachineSpec::Flat(1)).unwrap();
    assert_eq!(up.name, "up");
    assert!(up.domains[0].is_empty());
    assert!(up.sd_llc(0).is_none());
    assert_eq!((up.llc_id(0), up.llc_size(0)), (0, 1));
    assert_eq!(up.smt_siblings(0), [0]);

    let smp = Topology::build(&MachineSpec::Flat(4)).unwrap();
    assert_eq!(smp.name, "smp4");
    assert_eq!(levels(&smp, 2), [Level::Mc]);
    assert_eq!(
        smp.domains[2][0].groups,
        [vec![2], vec![3], vec![0], vec![1]]
    );
    check_invariants(&smp);

    let laptop = preset("laptop-4c8t");
    assert_eq!(levels(&laptop, 0), [Level::Smt, Level::Mc]);
    assert_eq!(laptop.smt_siblings(5), [1, 5]);
    assert_eq!(laptop.llc_size(7), 8);
}

#[test]
fn rb5_asymmetric_capacity() {
    let t = preset("rb5");
    let caps: Vec<u32> = (0..8).map(|c| t.capacity(c)).collect();
    assert_eq!(caps, [284, 284, 284, 284, 871, 871, 871, 1024]);
    assert_eq!(t.max_capacity(), 1024);
    assert!(t.asymmetric());
    for cpu in 0..8 {
        assert_eq!(levels(&t, cpu), [Level::Mc]);
        let mc = &t.domains[cpu as usize][0];
        assert!(mc.flags.asym_cpucapacity && mc.flags.asym_cpucapacity_full);
        assert!(mc.flags.share_llc);
        assert_eq!(t.sd_asym_cpucapacity(cpu).map(|d| d.level), Some(Level::Mc));
        assert_eq!(t.sd_llc(cpu).map(|d| d.span.len()), Some(8));
    }
    let pds: Vec<Vec<u32>> = t.perf_domains.iter().map(|p| p.cpus.clone()).collect();
    assert_eq!(pds, [vec![0, 1, 2, 3], vec![4, 5, 6], vec![7]]);
    for pd in &t.perf_domains {
        assert!(pd
            .opps
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        let top = pd.opps.last().unwrap().0;
        assert_eq!(top, t.capacity(pd.cpus[0]), "top OPP = CPU capacity");
    }
    assert_eq!(t.perf_domain_of(5).map(|p| p.cpus.len()), Some(3));
    // Orion6 is also asymmetric (three capacity classes).
    let o = preset("orion6");
    assert!(o.asymmetric());
    let caps: Vec<u32> = [0, 4, 8].iter().map(|&c| o.capacity(c)).collect();
    assert_eq!(caps, [279, 984, 1024]);
    assert_eq!(levels(&o, 11), [Level::Mc]);
}

#[test]
fn epyc_ccx_llc_and_numa() {
    let t = preset("epyc-2x128c");
    assert_eq!(
        levels(&t, 0),
        [Level::Smt, Level::Mc, Level::Pkg, Level::Numa(1)]
    );
    let mut ccx0 = range(0, 8);
    ccx0.extend(256..264);
    assert_eq!(t.sd_llc(0).unwrap().span, ccx0);
    assert_eq!(t.llc_size(0), 16);
    assert_eq!(t.llc_id(263), 0);
    assert!(!t.cpus_share_cache(0, 8));
    let d = &t.domains[0];
    let mut socket0 = range(0, 128);
    socket0.extend(256..384);
    assert_eq!(d[2].span, socket0);
    assert_eq!(d[2].groups.len(), 16);
    assert_eq!(d[2].groups[0], ccx0);
    assert!(d[2].flags.prefer_sibling && !d[2].flags.share_llc);
    assert_eq!(d[3].span.len(), 512);
    assert_eq!(d[3].groups.len(), 2);
    // node_reclaim_distance is 32 on Zen: distance 32 keeps wake_affine.
    assert!(d[3].flags.wake_affine && d[3].flags.balance_fork);
    assert_eq!([d[2].imb_numa_nr, d[3].imb_numa_nr], [16, 16]);
    assert_eq!(t.node_of(384), 1);
    assert_eq!(t.smt_siblings(130), [130, 386]);
}

#[test]
fn far_numa_drops_wake_affine_and_pkg_survives() {
    // Two packages per node: PKG (the node) has two LLC groups.
    let m = CustomMachine {
        nodes: 2,
        packages_per_node: 2,
        llcs_per_package: 1,
        clusters_per_llc: 1,
        cores_per_cluster: 2,
        smt: 1,
        capacities: vec![],
        remote_distance: 40,
    };
    let t = Topology::build(&MachineSpec::Custom(m)).unwrap();
    check_invariants(&t);
    assert_eq!(levels(&t, 0), [Level::Mc, Level::Pkg, Level::Numa(1)]);
    let numa = &t.domains[0][2];
    assert!(numa.flags.numa && numa.flags.serialize && numa.flags.balance_newidle);
    assert!(!numa.flags.wake_affine && !numa.flags.balance_exec && !numa.flags.balance_fork);
    assert!(!numa.flags.prefer_sibling);
}

#[test]
fn clusters_and_partial_asymmetry() {
    // LLC of two clusters: {512,512} and {1024,768}.
    let m = CustomMachine {
        nodes: 1,
        packages_per_node: 1,
        llcs_per_package: 1,
        clusters_per_llc: 2,
        cores_per_cluster: 2,
        smt: 1,
        capacities: vec![512, 512, 1024, 768],
        remote_distance: 20,
    };
    let t = Topology::build(&MachineSpec::Custom(m)).unwrap();
    check_invariants(&t);
    assert_eq!(t.cluster_cpus(3), [2, 3]);
    assert_eq!(levels(&t, 0), [Level::Cls, Level::Mc]);
    // Cluster 0 is symmetric; its MC parent sees every capacity.
    let d0 = &t.domains[0];
    assert!(d0[0].flags.cluster && !d0[0].flags.asym_cpucapacity);
    assert!(!d0[0].flags.prefer_sibling, "ASYM parent clears child's");
    assert!(d0[1].flags.asym_cpucapacity_full);
    // Cluster 1 spans two of three capacities: ASYM but not FULL.
    let d2 = &t.domains[2];
    assert!(d2[0].flags.asym_cpucapacity && !d2[0].flags.asym_cpucapacity_full);
    assert_eq!(t.sd_asym_cpucapacity(2).map(|d| d.level), Some(Level::Mc));
    // sd_llc is the highest SHARE_LLC domain (MC), not CLS.
    assert_eq!(t.llc_size(2), 4);
    assert!(t.asymmetric());
}

#[test]
fn asymmetric_numa_machine() {
    // One LLC per node holding both capacities. sd_init runs bottom-up
    // on the raw levels: PKG (MC's span) is ASYM and clears MC's
    // PREFER_SIBLING, NUMA is ASYM and clears PKG's; so when PKG
    // degenerates it has no PREFER_SIBLING to pass down.
    let m = CustomMachine {
        nodes: 2,
        cores_per_cluster: 2,
        capacities: vec![512, 1024, 512, 1024],
        ..CustomMachine::smp(2, 1)
    };
    let t = Topology::build(&MachineSpec::Custom(m)).unwrap();
    check_invariants(&t);
    assert_eq!(levels(&t, 0), [Level::Mc, Level::Numa(1)]);
    let d = &t.domains[0];
    assert!(d[0].flags.asym_cpucapacity_full && !d[0].flags.prefer_sibling);
    assert!(d[1].flags.asym_cpucapacity_full && !d[1].flags.prefer_sibling);
    assert_eq!(t.sd_asym_cpucapacity(3).map(|d| d.level), Some(Level::Mc));
    assert_eq!(t.node_distance, vec![vec![10, 20], vec![20, 10]]);
    // One LLC per node: imb_numa_nr = max(1, 2 >> 3) = 1.
    assert_eq!(d[1].imb_numa_nr, 1);
}

#[test]
fn custom_round_trip_and_numbering() {
    let m = CustomMachine {
        nodes: 2,
        packages_per_node: 1,
        llcs_per_package: 2,
        clusters_per_llc: 1,
        cores_per_cluster: 3,
        smt: 2,
        capacities: vec![1024, 800],
        remote_distance: 21,
    };
    assert_eq!((m.nr_cores(), m.nr_cpus()), (Some(12), Some(24)));
    let t = Topology::build(&MachineSpec::Custom(m)).unwrap();
    check_invariants(&t);
    assert_eq!(t.nr_cpus(), 24);
    assert_eq!(t.name, "custom");
    assert_eq!(t.node_distance, vec![vec![10, 21], vec![21, 10]]);
    // Core 0 1024, every later core 800 (last value repeats).
    assert_eq!(
        (t.capacity(0), t.capacity(1), t.capacity(12), t.capacity(23)),
        (1024, 800, 1024, 800)
    );
    assert_eq!(t.cpus[12].core, 0);
    assert_eq!(t.smt_siblings(4), [4, 16]);
    assert_eq!(t.cpus[4].llc, 1);
    assert_eq!(t.node_of(6), 1);
    assert_eq!(t.node_of(18), 1);
    assert_eq!(t.llc_size(0), 6);
    let nodes: std::collections::BTreeSet<u32> = t.cpus.iter().map(|c| c.node).collect();
    assert_eq!(nodes.len(), 2);
}

#[test]
fn build_errors() {
    let ok = CustomMachine::smp(4, 2);
    assert!(Topology::build(&MachineSpec::Custom(ok.clone())).is_ok());
    let bad = |f: &dyn Fn(&mut CustomMachine)| {
        let mut m = ok.clone();
        f(&mut m);
        Topology::build(&MachineSpec::Custom(m)).unwrap_err()
    };
    bad(&|m| m.nodes = 0);
    bad(&|m| m.packages_per_node = 0);
    bad(&|m| m.llcs_per_package = 0);
    bad(&|m| m.clusters_per_llc = 0);
    bad(&|m| m.cores_per_cluster = 0);
    bad(&|m| m.smt = 0);
    bad(&|m| m.smt = 9);
    bad(&|m| m.cores_per_cluster = 2049);
    bad(&|m| m.cores_per_cluster = u32::MAX);
    bad(&|m| m.capacities = vec![0]);
    bad(&|m| m.capacities = vec![1025]);
    bad(&|m| m.capacities = vec![1024; 5]);
    bad(&|m| {
        m.nodes = 2;
        m.remote_distance = 10;
    });
    assert!(Topology::build(&MachineSpec::Preset("pdp11".into())).is_err());
    assert!(Topology::build(&MachineSpec::Flat(0)).is_err());
    assert!(Topology::build(&MachineSpec::Flat(4097)).is_err());
    assert!(Topology::build(&MachineSpec::Flat(4096)).is_ok());
}

#[test]
fn describe_and_cpulist() {
    assert_eq!(cpulist(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    assert_eq!(cpulist(&[]), "");
    let d = preset("xeon-4314-2s").describe();
    assert!(d.contains("SMT   span 0,32 (2)"), "{d}");
    assert!(d.contains("MC    span 0-15,32-47 (32)"), "{d}");
    assert!(d.contains("NUMA  span 0-63 (64)"), "{d}");
    assert!(!d.contains("PKG"), "{d}");
    assert_eq!(Level::Numa(2).name(), "NUMA2");
    assert_eq!(Level::Numa(1).to_string(), "NUMA");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn custom_machines_are_well_formed(
        nodes in 1u32..4,
        ppn in 1u32..3,
        llcs in 1u32..3,
        clusters in 1u32..3,
        cores in 1u32..4,
        smt in 1u32..3,
        caps in proptest::collection::vec(1u32..=1024, 0..4),
        dist in 11u32..60,
    ) {
        let mut caps = caps;
        caps.truncate((nodes * ppn * llcs * clusters * cores) as usize);
        let m = CustomMachine {
            nodes, packages_per_node: ppn, llcs_per_package: llcs,
            clusters_per_llc: clusters, cores_per_cluster: cores, smt,
            capacities: caps, remote_distance: dist,
        };
        let t = Topology::build(&MachineSpec::Custom(m.clone())).unwrap();
        prop_assert_eq!(Some(t.nr_cpus()), m.nr_cpus());
        check_invariants(&t);
        for cpu in 0..t.nr_cpus() {
            // The LLC domain is exactly the hardware LLC (when > 1 CPU).
            let llc: Vec<u32> = (0..t.nr_cpus())
                .filter(|&c| t.cpus[c as usize].llc == t.cpus[cpu as usize].llc)
                .collect();
            if llc.len() > 1 {
                prop_assert_eq!(&t.sd_llc(cpu).unwrap().span, &llc);
            }
            prop_assert_eq!(t.smt_siblings(cpu).len() as u32, smt);
        }
    }
}
