//! Machine topology, CPU capacities, NUMA distances, Linux-style sched
//! domains and a small energy model (docs/model.md §5).
//!
//! A [`MachineSpec`] (flat SMP, a named seed machine or an explicit
//! [`CustomMachine`]) is turned into a [`Topology`]: one [`CpuTopo`] per
//! CPU, the SLIT node-distance table, every CPU's sched-domain hierarchy
//! and, for the asymmetric presets, the performance domains EAS uses.
//!
//! Domain construction follows `kernel/sched/topology.c` step by step:
//!
//! 1. Topology levels bottom-up: SMT (`cpu_smt_mask`), CLS
//!    (`cpu_clustergroup_mask`; the SMT mask when the cluster is the whole
//!    LLC, as arm64 does), MC (`cpu_coregroup_mask` = the LLC), PKG
//!    (`cpu_cpu_mask` = the CPU's NUMA node), then one NUMA level per
//!    distinct remote SLIT distance (`sched_init_numa`; the span of level
//!    `j` holds the CPUs of all nodes at distance `<= d_j`). The kernel's
//!    NODE level (numa_level 0) always has PKG's span and degenerates, so it
//!    is not built. As in `build_sched_domains`, a CPU's hierarchy stops at
//!    the first level spanning every CPU.
//! 2. `sd_init`: `min_interval = span_weight` ms, `max_interval =
//!    2 * span_weight` ms, `busy_factor = 16`, `imbalance_pct = 117`,
//!    flags BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|
//!    PREFER_SIBLING plus the level's topology flags
//!    (SMT: SHARE_CPUCAPACITY|SHARE_LLC, CLS: CLUSTER|SHARE_LLC,
//!    MC: SHARE_LLC, NUMA: NUMA) plus `asym_cpu_capacity_classify`
//!    (ASYM_CPUCAPACITY when the span holds >= 2 capacity values, and _FULL
//!    when it holds all of them). Then: ASYM clears the child's
//!    PREFER_SIBLING; SHARE_CPUCAPACITY ⇒ imbalance_pct 110,
//!    cache_nice_tries 0; else SHARE_LLC ⇒ cache_nice_tries 1; else NUMA ⇒
//!    cache_nice_tries 2, no PREFER_SIBLING, SERIALIZE, and beyond
//!    `node_reclaim_distance` (30; 32 on AMD Zen) no BALANCE_EXEC/FORK or
//!    WAKE_AFFINE; else (PKG) cache_nice_tries 1.
//! 3. Groups: `build_sched_groups` (the child-domain spans of the CPUs in
//!    the span, single CPUs at the bottom level, starting with the owning
//!    CPU's) and `build_overlap_sched_groups` for NUMA levels (siblings'
//!    child spans, with `find_descended_sibling`).
//! 4. `imb_numa_nr` as computed at the end of `build_sched_domains`.
//! 5. `cpu_attach_domain`: parents that `sd_parent_degenerate` are removed
//!    (passing PREFER_SIBLING down), then a degenerate base domain.
//!
//! Placement-relevant values are integers only: capacities (1..=1024),
//! SLIT distances, energy-model capacities and costs.

use std::fmt;

use crate::config::Costs;

mod build;
mod presets;

use build::*;
use presets::*;

/// Names accepted by [`MachineSpec::Preset`].
pub const PRESET_NAMES: &[&str] = &[
    "rb5",
    "orion6",
    "xeon-4314-2s",
    "graviton3",
    "epyc-2x128c",
    "laptop-4c8t",
    "qemu-icount",
];

/// Costs of the `qemu-icount` machine: one CPU of the QEMU guest that
/// `eevdf kernel run` boots (`-icount shift=1`, 2 ns per instruction),
/// as measured inside it. Produced by `eevdf kernel calibrate --kernel
/// 7.2` on 7.2.13+deb14-cloud-amd64 (QEMU 7.2.22, -seed 1),
/// 2026-12-01; the run is deterministic, a rerun prints the same medians.
///
/// - `switch`: two threads yielding in turn, per context switch (5901 ns
///   median) minus one null system call (`getppid`, 660 ns);
/// - `wake`: the idle timer wakeup latency with timer slack 1 ns (8544 ns
///   median) minus `switch`, since the simulator adds the switch after
///   the wake cost on an idle CPU;
/// - `migrate` (never used on one CPU) keeps the default.
///
/// Not costs keys: 100-byte pipe write 2080 ns and read 1912 ns
/// (hackbench `send=2080ns recv=1912ns`). That run also lost 14.8 us per
/// tick; the preset keeps `tick` at 0 like `sleep` (its results predate
/// both keys), and kernel twins charge a later run's 14,687 ns.
/// 6.12.95+deb12-cloud-amd64 gives switch 4763 ns, wake 3678 ns.
pub const QEMU_ICOUNT_COSTS: Costs = Costs {
    switch_ns: 5_241,
    wake_ns: 3_303,
    migrate_ns: 20_000,
    // Not keys when the preset was made; kernel twins charge
    // `eevdf_kernel::calibrate::GUEST_COSTS`.
    sleep_ns: 0,
    tick_ns: 0,
};

/// The default [`Costs`] of a machine preset: the measured ones of
/// `qemu-icount`, [`Costs::default`] for the others (and unknown names).
/// A scenario's explicit `costs` keys override them.
pub fn preset_costs(name: &str) -> Costs {
    match name {
        "qemu-icount" => QEMU_ICOUNT_COSTS,
        _ => Costs::default(),
    }
}

/// `SCHED_CAPACITY_SCALE`: the capacity of the biggest CPU.
pub const SCHED_CAPACITY_SCALE: u32 = 1024;
/// SLIT distance of a node to itself (`LOCAL_DISTANCE`).
pub const LOCAL_DISTANCE: u32 = 10;
/// Default `node_reclaim_distance` (`RECLAIM_DISTANCE`).
pub const RECLAIM_DISTANCE: u32 = 30;
/// Largest machine [`Topology::build`] accepts.
pub const MAX_CPUS: u32 = 4096;
/// Largest SMT width [`Topology::build`] accepts.
pub const MAX_SMT: u32 = 8;

/// A machine as scenarios describe it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MachineSpec {
    /// N identical CPUs sharing one LLC, one node (the old `up`/`smpN`).
    Flat(u32),
    /// A named seed machine, one of [`PRESET_NAMES`].
    Preset(String),
    /// An explicit machine.
    Custom(CustomMachine),
}

/// An explicit machine: a regular tree node → package → LLC → cluster →
/// core → SMT thread.
///
/// CPUs are numbered like Linux on x86: the first thread of every core in
/// creation order (node, package, LLC, cluster, core), then every core's
/// second thread, and so on; so with 16 cores and SMT2, CPU `c` and
/// `c + 16` are siblings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CustomMachine {
    /// NUMA nodes (>= 1).
    pub nodes: u32,
    /// Packages per node, usually 1.
    pub packages_per_node: u32,
    /// LLC (MC) domains per package.
    pub llcs_per_package: u32,
    /// Clusters per LLC; 1 = no cluster level.
    pub clusters_per_llc: u32,
    /// Cores per cluster.
    pub cores_per_cluster: u32,
    /// Threads per core (1..=8).
    pub smt: u32,
    /// Capacity per core in creation order, 1..=1024; empty = all 1024. If
    /// shorter than the core count, the last value repeats; longer is an
    /// error. Values are used as given (not normalised to 1024).
    pub capacities: Vec<u32>,
    /// SLIT distance between any two different nodes (local is 10); must
    /// be in 11..=255 when `nodes > 1`, ignored otherwise.
    pub remote_distance: u32,
}

impl CustomMachine {
    /// A one-node, one-LLC machine of `cores` cores with `smt` threads each.
    pub fn smp(cores: u32, smt: u32) -> CustomMachine {
        CustomMachine {
            nodes: 1,
            packages_per_node: 1,
            llcs_per_package: 1,
            clusters_per_llc: 1,
            cores_per_cluster: cores,
            smt,
            capacities: Vec::new(),
            remote_distance: 20,
        }
    }

    /// Number of cores, `None` on overflow.
    pub fn nr_cores(&self) -> Option<u32> {
        self.nodes
            .checked_mul(self.packages_per_node)?
            .checked_mul(self.llcs_per_package)?
            .checked_mul(self.clusters_per_llc)?
            .checked_mul(self.cores_per_cluster)
    }

    /// Number of CPUs (hardware threads), `None` on overflow.
    pub fn nr_cpus(&self) -> Option<u32> {
        self.nr_cores()?.checked_mul(self.smt)
    }

    fn validate(&self) -> Result<(), String> {
        let counts = [
            ("nodes", self.nodes),
            ("packages_per_node", self.packages_per_node),
            ("llcs_per_package", self.llcs_per_package),
            ("clusters_per_llc", self.clusters_per_llc),
            ("cores_per_cluster", self.cores_per_cluster),
            ("smt", self.smt),
        ];
        if let Some((what, _)) = counts.iter().find(|(_, v)| *v == 0) {
            return Err(format!("machine: {what} must be at least 1"));
        }
        if self.smt > MAX_SMT {
            return Err(format!(
                "machine: smt {} is more than {MAX_SMT} threads per core",
                self.smt
            ));
        }
        match self.nr_cpus() {
            Some(n) if n <= MAX_CPUS => {}
            _ => return Err(format!("machine: more than {MAX_CPUS} CPUs")),
        }
        let cores = self.nr_cores().unwrap_or(0) as usize;
        if self.capacities.len() > cores {
            return Err(format!(
                "machine: {} capacities for {cores} cores",
                self.capacities.len()
            ));
        }
        if let Some(c) = self
            .capacities
            .iter()
            .find(|&&c| c == 0 || c > SCHED_CAPACITY_SCALE)
        {
            return Err(format!(
                "machine: capacity {c} is outside 1..={SCHED_CAPACITY_SCALE}"
            ));
        }
        if self.nodes > 1 && !(LOCAL_DISTANCE + 1..=255).contains(&self.remote_distance) {
            return Err(format!(
                "machine: remote node distance {} is outside 11..=255",
                self.remote_distance
            ));
        }
        Ok(())
    }
}

/// Capacity and topology ids of one CPU. Ids are global indices in
/// creation order (core 0.., cluster 0.., …), not CPU numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CpuTopo {
    /// `arch_scale_cpu_capacity`, 1..=1024.
    pub capacity: u32,
    pub core: u32,
    pub cluster: u32,
    pub llc: u32,
    pub package: u32,
    pub node: u32,
}

/// A topology level of a sched domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    Smt,
    Cls,
    Mc,
    Pkg,
    /// The `j`-th NUMA level (`j >= 1`, the kernel's `numa_level`), for the
    /// `j`-th smallest remote SLIT distance.
    Numa(u8),
}

impl Level {
    /// "SMT", "CLS", "MC", "PKG", "NUMA" (first NUMA level), "NUMA2", …
    pub fn name(&self) -> String {
        match self {
            Level::Smt => "SMT".into(),
            Level::Cls => "CLS".into(),
            Level::Mc => "MC".into(),
            Level::Pkg => "PKG".into(),
            Level::Numa(j) if *j <= 1 => "NUMA".into(),
            Level::Numa(j) => format!("NUMA{j}"),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

// SD_* flag bits (order of include/linux/sched/sd_flags.h), used while
// building; `DomainFlags` is the public form.
const SD_BALANCE_NEWIDLE: u32 = 1 << 0;
const SD_BALANCE_EXEC: u32 = 1 << 1;
const SD_BALANCE_FORK: u32 = 1 << 2;
const SD_BALANCE_WAKE: u32 = 1 << 3;
const SD_WAKE_AFFINE: u32 = 1 << 4;
const SD_ASYM_CPUCAPACITY: u32 = 1 << 5;
const SD_ASYM_CPUCAPACITY_FULL: u32 = 1 << 6;
const SD_SHARE_CPUCAPACITY: u32 = 1 << 7;
const SD_CLUSTER: u32 = 1 << 8;
const SD_SHARE_LLC: u32 = 1 << 9;
const SD_SERIALIZE: u32 = 1 << 10;
const SD_PREFER_SIBLING: u32 = 1 << 11;
const SD_NUMA: u32 = 1 << 12;
/// Flags with SDF_NEEDS_GROUPS: all of ours except WAKE_AFFINE.
const SD_DEGENERATE_GROUPS_MASK: u32 = ((1 << 13) - 1) & !SD_WAKE_AFFINE;

const FLAG_NAMES: [(u32, &str); 13] = [
    (SD_BALANCE_NEWIDLE, "BALANCE_NEWIDLE"),
    (SD_BALANCE_EXEC, "BALANCE_EXEC"),
    (SD_BALANCE_FORK, "BALANCE_FORK"),
    (SD_BALANCE_WAKE, "BALANCE_WAKE"),
    (SD_WAKE_AFFINE, "WAKE_AFFINE"),
    (SD_ASYM_CPUCAPACITY, "ASYM_CPUCAPACITY"),
    (SD_ASYM_CPUCAPACITY_FULL, "ASYM_CPUCAPACITY_FULL"),
    (SD_SHARE_CPUCAPACITY, "SHARE_CPUCAPACITY"),
    (SD_CLUSTER, "CLUSTER"),
    (SD_SHARE_LLC, "SHARE_LLC"),
    (SD_SERIALIZE, "SERIALIZE"),
    (SD_PREFER_SIBLING, "PREFER_SIBLING"),
    (SD_NUMA, "NUMA"),
];

/// The `SD_*` flags of a sched domain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DomainFlags {
    pub share_cpucapacity: bool,
    pub share_llc: bool,
    pub cluster: bool,
    pub numa: bool,
    pub serialize: bool,
    pub asym_cpucapacity: bool,
    pub asym_cpucapacity_full: bool,
    pub prefer_sibling: bool,
    pub wake_affine: bool,
    pub balance_newidle: bool,
    pub balance_exec: bool,
    pub balance_fork: bool,
    pub balance_wake: bool,
}

impl DomainFlags {
    fn from_bits(b: u32) -> DomainFlags {
        let has = |f: u32| b & f != 0;
        DomainFlags {
            share_cpucapacity: has(SD_SHARE_CPUCAPACITY),
            share_llc: has(SD_SHARE_LLC),
            cluster: has(SD_CLUSTER),
            numa: has(SD_NUMA),
            serialize: has(SD_SERIALIZE),
            asym_cpucapacity: has(SD_ASYM_CPUCAPACITY),
            asym_cpucapacity_full: has(SD_ASYM_CPUCAPACITY_FULL),
            prefer_sibling: has(SD_PREFER_SIBLING),
            wake_affine: has(SD_WAKE_AFFINE),
            balance_newidle: has(SD_BALANCE_NEWIDLE),
            balance_exec: has(SD_BALANCE_EXEC),
            balance_fork: has(SD_BALANCE_FORK),
            balance_wake: has(SD_BALANCE_WAKE),
        }
    }

    fn bits(&self) -> u32 {
        let pairs = [
            (self.share_cpucapacity, SD_SHARE_CPUCAPACITY),
            (self.share_llc, SD_SHARE_LLC),
            (self.cluster, SD_CLUSTER),
            (self.numa, SD_NUMA),
            (self.serialize, SD_SERIALIZE),
            (self.asym_cpucapacity, SD_ASYM_CPUCAPACITY),
            (self.asym_cpucapacity_full, SD_ASYM_CPUCAPACITY_FULL),
            (self.prefer_sibling, SD_PREFER_SIBLING),
            (self.wake_affine, SD_WAKE_AFFINE),
            (self.balance_newidle, SD_BALANCE_NEWIDLE),
            (self.balance_exec, SD_BALANCE_EXEC),
            (self.balance_fork, SD_BALANCE_FORK),
            (self.balance_wake, SD_BALANCE_WAKE),
        ];
        pairs
            .iter()
            .filter(|(on, _)| *on)
            .fold(0, |b, (_, f)| b | f)
    }

    /// The kernel names of the set flags ("SHARE_LLC", …), in sd_flags.h order.
    pub fn names(&self) -> Vec<&'static str> {
        let b = self.bits();
        FLAG_NAMES
            .iter()
            .filter(|(f, _)| b & f != 0)
            .map(|(_, n)| *n)
            .collect()
    }
}

/// One sched domain of one CPU.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SchedDomain {
    pub level: Level,
    /// Sorted CPU ids.
    pub span: Vec<u32>,
    /// The sched groups (each sorted): the child domains' spans (single
    /// CPUs at the bottom level); the first contains the owning CPU. They
    /// partition `span` except at NUMA levels, where they may overlap.
    pub groups: Vec<Vec<u32>>,
    pub flags: DomainFlags,
    pub imbalance_pct: u32,
    pub min_interval_ms: u32,
    pub max_interval_ms: u32,
    pub busy_factor: u32,
    pub cache_nice_tries: u32,
    /// `sd->imb_numa_nr`: tasks a NUMA-level balance tolerates before
    /// spreading (0 below the first domain above the LLC).
    pub imb_numa_nr: u32,
}

/// Energy model of one performance domain (for EAS): `opps` are
/// `(capacity at that OPP, cost)`, strictly increasing in both. `cost` is
/// the OPP's estimated power in µW, so a PD's energy is proportional to
/// `Σ util_i × cost / capacity` (docs/model.md §5; the kernel's
/// `em_perf_state.cost` is `10 × power / performance`, the same ratio).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PerfDomain {
    pub cpus: Vec<u32>,
    pub opps: Vec<(u32, u64)>,
}

/// A machine: CPUs, node distances, per-CPU sched domains, energy model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    pub name: String,
    pub cpus: Vec<CpuTopo>,
    /// SLIT, nodes x nodes.
    pub node_distance: Vec<Vec<u32>>,
    /// `domains[cpu]` = that CPU's domains bottom-up, degenerate levels
    /// removed (empty for a one-CPU machine).
    pub domains: Vec<Vec<SchedDomain>>,
    /// Energy model (asymmetric presets only; empty otherwise).
    pub perf_domains: Vec<PerfDomain>,
    /// `cpu_smt_mask` per CPU (cached for `smt_siblings`).
    smt_masks: Vec<Vec<u32>>,
}

impl Topology {
    /// Builds a machine; `Err` for an unknown preset or an invalid custom
    /// machine (a zero count, more than 4096 CPUs, smt > 8, a capacity of
    /// 0 or above 1024, a remote distance outside 11..=255).
    pub fn build(spec: &MachineSpec) -> Result<Topology, String> {
        let desc = resolve(spec)?;
        Ok(construct(&desc))
    }

    pub fn nr_cpus(&self) -> u32 {
        self.cpus.len() as u32
    }

    /// `arch_scale_cpu_capacity(cpu)`. Panics if `cpu` is out of range.
    pub fn capacity(&self, cpu: u32) -> u32 {
        self.cpus[cpu as usize].capacity
    }

    pub fn max_capacity(&self) -> u32 {
        self.cpus.iter().map(|c| c.capacity).max().unwrap_or(0)
    }

    /// `sd_llc`: the highest domain with SHARE_LLC (walking up from the
    /// base while the flag is set, as `highest_flag_domain` does); `None`
    /// when the CPU has no such domain (e.g. a one-CPU machine).
    pub fn sd_llc(&self, cpu: u32) -> Option<&SchedDomain> {
        let mut llc = None;
        for sd in &self.domains[cpu as usize] {
            if !sd.flags.share_llc {
                break;
            }
            llc = Some(sd);
        }
        llc
    }

    /// `sd_llc_id`: the first CPU of the LLC domain's span (the CPU itself
    /// without one).
    pub fn llc_id(&self, cpu: u32) -> u32 {
        self.sd_llc(cpu).map_or(cpu, |sd| sd.span[0])
    }

    /// `sd_llc_size`: CPUs in the LLC domain (1 without one).
    pub fn llc_size(&self, cpu: u32) -> u32 {
        self.sd_llc(cpu).map_or(1, |sd| sd.span.len() as u32)
    }

    /// `cpus_share_cache`.
    pub fn cpus_share_cache(&self, a: u32, b: u32) -> bool {
        a == b || self.llc_id(a) == self.llc_id(b)
    }

    /// The CPUs in APIC-ID order, a core's threads next to each other
    /// (cores are numbered node, package, LLC, cluster, core first):
    /// QEMU's vCPU order, where CPU numbers put every core's first thread
    /// first. The identity without SMT.
    pub fn apic_order(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.nr_cpus()).collect();
        order.sort_by_key(|&c| (self.cpus[c as usize].core, c));
        order
    }

    /// Each CPU's place in [`Topology::apic_order`]: its QEMU vCPU index.
    pub fn apic_index(&self) -> Vec<u32> {
        let mut index = vec![0; self.nr_cpus() as usize];
        for (i, &c) in self.apic_order().iter().enumerate() {
            index[c as usize] = i as u32;
        }
        index
    }

    /// `cpu_smt_mask(cpu)`: the CPU's core's threads, sorted, including `cpu`.
    pub fn smt_siblings(&self, cpu: u32) -> &[u32] {
        &self.smt_masks[cpu as usize]
    }

    /// `sd_asym_cpucapacity`: the lowest domain with
    /// SD_ASYM_CPUCAPACITY_FULL (the kernel's choice: the lowest level
    /// that sees every capacity value), `None` on a symmetric machine.
    pub fn sd_asym_cpucapacity(&self, cpu: u32) -> Option<&SchedDomain> {
        self.domains[cpu as usize]
            .iter()
            .find(|sd| sd.flags.asym_cpucapacity_full)
    }

    /// `sched_asym_cpucap_active()`: some domain has SD_ASYM_CPUCAPACITY.
    pub fn asymmetric(&self) -> bool {
        // The top domain spans every CPU, so it sees any asymmetry.
        self.domains
            .first()
            .and_then(|d| d.last())
            .is_some_and(|sd| sd.flags.asym_cpucapacity)
    }

    /// The CPUs of `cpu`'s hardware cluster (sysfs `cluster_cpus`); the
    /// whole LLC when the machine has one cluster per LLC.
    pub fn cluster_cpus(&self, cpu: u32) -> Vec<u32> {
        let cl = self.cpus[cpu as usize].cluster;
        self.cpus_where(|c| c.cluster == cl)
    }

    pub fn node_of(&self, cpu: u32) -> u32 {
        self.cpus[cpu as usize].node
    }

    /// The performance domain holding `cpu`, if the machine has an energy model.
    pub fn perf_domain_of(&self, cpu: u32) -> Option<&PerfDomain> {
        self.perf_domains.iter().find(|pd| pd.cpus.contains(&cpu))
    }

    /// A short text summary: shape, capacities, distances, one line per
    /// domain level of CPU 0, perf domains.
    pub fn describe(&self) -> String {
        let n = self.cpus.len();
        let smt = self.smt_masks.first().map_or(1, Vec::len);
        let llcs = self.cpus.iter().map(|c| c.llc).max().map_or(0, |m| m + 1);
        let mut out = format!(
            "{}: {} CPUs ({} cores x {} threads), {} node(s), {} LLC(s)\n",
            self.name,
            n,
            n / smt.max(1),
            smt,
            self.node_distance.len(),
            llcs
        );
        let mut caps: Vec<u32> = self.cpus.iter().map(|c| c.capacity).collect();
        caps.sort_unstable();
        caps.dedup();
        let caps: Vec<String> = caps
            .iter()
            .map(|&cap| {
                let cpus = self.cpus_where(|c| c.capacity == cap);
                format!("{cap} [{}]", cpulist(&cpus))
            })
            .collect();
        out += &format!("  capacity: {}\n", caps.join(", "));
        if self.node_distance.len() > 1 {
            let rows: Vec<String> = self
                .node_distance
                .iter()
                .map(|r| {
                    let r: Vec<String> = r.iter().map(u32::to_string).collect();
                    r.join(" ")
                })
                .collect();
            out += &format!("  node distances: {}\n", rows.join(" / "));
        }
        match self.domains.first() {
            Some(doms) if !doms.is_empty() => {
                out += "  cpu0 domains:\n";
                for sd in doms {
                    let shown: Vec<String> = sd
                        .groups
                        .iter()
                        .take(8)
                        .map(|g| format!("{{{}}}", cpulist(g)))
                        .collect();
                    let more = if sd.groups.len() > 8 { " ..." } else { "" };
                    out += &format!(
                        "    {:<5} span {} ({})  groups {}: {}{}  imb {} cnt {} \
                         interval {}-{} ms imb_numa_nr {}  {}\n",
                        sd.level.name(),
                        cpulist(&sd.span),
                        sd.span.len(),
                        sd.groups.len(),
                        shown.join(" "),
                        more,
                        sd.imbalance_pct,
                        sd.cache_nice_tries,
                        sd.min_interval_ms,
                        sd.max_interval_ms,
                        sd.imb_numa_nr,
                        sd.flags.names().join("|")
                    );
                }
            }
            _ => out += "  cpu0 domains: none\n",
        }
        for pd in &self.perf_domains {
            let opps: Vec<String> = pd.opps.iter().map(|(c, p)| format!("{c}:{p}")).collect();
            out += &format!(
                "  perf domain [{}] capacity:cost(uW) {}\n",
                cpulist(&pd.cpus),
                opps.join(" ")
            );
        }
        out
    }

    fn cpus_where(&self, f: impl Fn(&CpuTopo) -> bool) -> Vec<u32> {
        (0..self.nr_cpus())
            .filter(|&c| f(&self.cpus[c as usize]))
            .collect()
    }
}

/// Formats sorted CPU ids as a kernel cpulist ("0-15,32-47").
pub fn cpulist(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests;
