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
/// (hackbench `send=2080ns recv=1912ns`), 14.8 us lost per tick.
/// 6.12.95+deb12-cloud-amd64 gives switch 4763 ns, wake 3678 ns.
pub const QEMU_ICOUNT_COSTS: Costs = Costs {
    switch_ns: 5_241,
    wake_ns: 3_303,
    migrate_ns: 20_000,
    // Not measured when the preset was made; kernel twins charge
    // `eevdf_kernel::calibrate::GUEST_COSTS`.
    sleep_ns: 0,
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

// ---------------------------------------------------------------------------
// Presets

/// One EAS performance domain of a preset: its CPUs, the DT
/// `dynamic-power-coefficient` (µW/MHz/V²) and `(kHz, mV)` OPPs, ascending.
struct PdSpec {
    cpus: &'static [u32],
    dyn_power_coeff: u64,
    opps: &'static [(u32, u32)],
}

struct Desc {
    name: String,
    shape: CustomMachine,
    /// `node_reclaim_distance`.
    reclaim_distance: u32,
    energy: &'static [PdSpec],
}

/// RB5 (QRB5165 = SM8250): arch/arm64/boot/dts/qcom/sm8250.dtsi gives
/// CPU0-3 Kryo 485 Silver (Cortex-A55) `capacity-dmips-mhz` 448,
/// `dynamic-power-coefficient` 105; CPU4-6 Gold (A77) 1024 / 379; CPU7
/// Gold Prime (A77) 1024 / 444; one `cluster0` in `cpu-map` and one L3
/// (`L3_0`) behind every L2, so MC spans all 8 CPUs. Three cpufreq-hw
/// domains. Max frequencies on QRB5165: 1804.8 / 2419.2 / 2841.6 MHz (the
/// DT's 3091.2 MHz prime OPP is for faster bins). Capacity as
/// `topology_normalize_cpu_scale` computes it, floor(dmips·fmax·1024 /
/// max(dmips·fmax)): little 448·1804800·1024/(1024·2841600) = 284,
/// big 1024·2419200/2841600 = 871, prime 1024.
/// Energy model: frequencies are DT OPPs; voltages are NOT public (the
/// cpufreq-hw LUT supplies them), so the mV values are estimates of a
/// typical 7 nm DVFS curve (≈0.55-0.6 V at the lowest OPP rising to
/// 0.83 / 0.90 / 1.0 V at fmax). Power as the OPP library's DT
/// estimate: P[µW] = coeff · f[MHz] · V[V]².
const RB5_EM: &[PdSpec] = &[
    PdSpec {
        cpus: &[0, 1, 2, 3],
        dyn_power_coeff: 105,
        opps: &[
            (300_000, 576),
            (691_200, 608),
            (1_075_200, 664),
            (1_516_800, 752),
            (1_804_800, 828),
        ],
    },
    PdSpec {
        cpus: &[4, 5, 6],
        dyn_power_coeff: 379,
        opps: &[
            (710_400, 576),
            (1_171_200, 624),
            (1_574_400, 700),
            (1_958_400, 788),
            (2_419_200, 900),
        ],
    },
    PdSpec {
        cpus: &[7],
        dyn_power_coeff: 444,
        opps: &[
            (844_800, 584),
            (1_305_600, 640),
            (1_862_400, 740),
            (2_361_600, 860),
            (2_841_600, 1000),
        ],
    },
];

/// Orion O6 (CIX P1 / CD8180, "sky1"): arch/arm64/boot/dts/cix/sky1.dtsi
/// gives CPU0-3 Cortex-A520 `capacity-dmips-mhz` 403 and CPU4-11
/// Cortex-A720 1024, all in one `cluster0`; one 12 MiB L3 (lscpu reports a
/// single L3 instance), so MC spans all 12. CIX states the A720s are
/// specced at 2.6 GHz and 2.5 GHz (two classes) and the A520s run at 1.8
/// GHz (800 MHz minimum). Which A720 pairs are the faster ones is not
/// documented (the vendor DT puts CPU4-5, 6-7, 8-9, 10-11 on separate
/// DVFS clocks): ESTIMATE CPU4-7 at 2.5 GHz, CPU8-11 at 2.6 GHz.
/// Capacities: 403·1800/2600 = 279, 1024·2500/2600 = 984, 1024.
/// No DT energy data exists (the seeds ran it without EAS): one PD per
/// capacity class with ESTIMATED coefficients (A520 70, A720 300,
/// scaled from the A55/A77 values above) and estimated voltages.
const ORION6_EM: &[PdSpec] = &[
    PdSpec {
        cpus: &[0, 1, 2, 3],
        dyn_power_coeff: 70,
        opps: &[
            (800_000, 600),
            (1_200_000, 650),
            (1_500_000, 720),
            (1_800_000, 800),
        ],
    },
    PdSpec {
        cpus: &[4, 5, 6, 7],
        dyn_power_coeff: 300,
        opps: &[
            (800_000, 600),
            (1_500_000, 700),
            (2_000_000, 800),
            (2_500_000, 950),
        ],
    },
    PdSpec {
        cpus: &[8, 9, 10, 11],
        dyn_power_coeff: 300,
        opps: &[
            (800_000, 600),
            (1_500_000, 700),
            (2_000_000, 800),
            (2_600_000, 1000),
        ],
    },
];

fn shape(
    nodes: u32,
    llcs_per_package: u32,
    cores_per_cluster: u32,
    smt: u32,
    capacities: Vec<u32>,
    remote_distance: u32,
) -> CustomMachine {
    CustomMachine {
        nodes,
        packages_per_node: 1,
        llcs_per_package,
        clusters_per_llc: 1,
        cores_per_cluster,
        smt,
        capacities,
        remote_distance,
    }
}

fn preset(name: &str) -> Option<Desc> {
    let (m, reclaim, energy): (CustomMachine, u32, &'static [PdSpec]) = match name {
        "rb5" => {
            let caps = vec![284, 284, 284, 284, 871, 871, 871, 1024];
            (shape(1, 1, 8, 1, caps, 20), RECLAIM_DISTANCE, RB5_EM)
        }
        "orion6" => {
            let mut caps = vec![279; 4];
            caps.extend([984; 4]);
            caps.extend([1024; 4]);
            (shape(1, 1, 12, 1, caps, 20), RECLAIM_DISTANCE, ORION6_EM)
        }
        // Xeon Silver 4314 (Intel ARK: 16 cores, 32 threads, 24 MB L3) in
        // two sockets; Dietmar's seed: cpu0 domains SMT {0,32}, MC (one
        // socket), NUMA (all), distances [[10,20],[20,10]].
        "xeon-4314-2s" => (shape(2, 1, 16, 2, vec![], 20), RECLAIM_DISTANCE, &[]),
        // AWS Graviton3: 64 Neoverse-V1 cores, no SMT, one shared 32 MB
        // L3, one node; Ryan's seed: "single flat MC domain".
        "graviton3" => (shape(1, 1, 64, 1, vec![], 20), RECLAIM_DISTANCE, &[]),
        // Prateek's 2 x 128C/256T 4th-gen EPYC, taken as Bergamo (EPYC
        // 9754, Zen 4c): 8 CCDs x 2 CCX x 8 cores per socket, 16 MB L3 per
        // CCX (16 LLCs per socket), NPS1 = one node per socket. Distance
        // 32 is what 2P AMD platforms' SLIT commonly reports between
        // sockets (ESTIMATE: not in the seed). AMD Zen sets
        // node_reclaim_distance = 32 (arch/x86/kernel/cpu/amd.c), so the
        // NUMA level keeps WAKE_AFFINE/BALANCE_EXEC/FORK.
        "epyc-2x128c" => (shape(2, 16, 8, 2, vec![], 32), 32, &[]),
        // A generic 4-core/8-thread laptop (ESTIMATE, no seed data): one
        // LLC, one node, siblings {0,4},{1,5},...
        "laptop-4c8t" => (shape(1, 1, 4, 2, vec![], 20), RECLAIM_DISTANCE, &[]),
        // The QEMU guest of `eevdf kernel run` on one CPU; its default
        // costs are measured ones (`preset_costs`).
        "qemu-icount" => (shape(1, 1, 1, 1, vec![], 20), RECLAIM_DISTANCE, &[]),
        _ => return None,
    };
    Some(Desc {
        name: name.to_string(),
        shape: m,
        reclaim_distance: reclaim,
        energy,
    })
}

fn resolve(spec: &MachineSpec) -> Result<Desc, String> {
    match spec {
        MachineSpec::Flat(n) => {
            if *n == 0 || *n > MAX_CPUS {
                return Err(format!(
                    "machine: flat CPU count {n} outside 1..={MAX_CPUS}"
                ));
            }
            let name = if *n == 1 {
                "up".to_string()
            } else {
                format!("smp{n}")
            };
            Ok(Desc {
                name,
                shape: CustomMachine::smp(*n, 1),
                reclaim_distance: RECLAIM_DISTANCE,
                energy: &[],
            })
        }
        MachineSpec::Preset(name) => preset(name).ok_or_else(|| {
            format!(
                "machine: unknown preset {name:?} (known: {})",
                PRESET_NAMES.join(", ")
            )
        }),
        MachineSpec::Custom(m) => {
            m.validate()?;
            Ok(Desc {
                name: "custom".to_string(),
                shape: m.clone(),
                reclaim_distance: RECLAIM_DISTANCE,
                energy: &[],
            })
        }
    }
}

// ---------------------------------------------------------------------------
// Construction

/// One topology level: its CPU sets and which set each CPU's mask is.
struct LevelDef {
    level: Level,
    /// SLIT distance of a NUMA level (whose groups may overlap).
    numa_distance: Option<u32>,
    sets: Vec<Vec<u32>>,
    set_of: Vec<usize>,
}

/// A domain before degenerate-domain removal.
struct RawDomain {
    level: Level,
    span: Vec<u32>,
    groups: Vec<Vec<u32>>,
    flags: u32,
    imbalance_pct: u32,
    cache_nice_tries: u32,
    imb_numa_nr: u32,
}

type Partition = (Vec<Vec<u32>>, Vec<usize>);

/// Groups CPUs by a dense key; sets come out sorted.
fn partition(cpus: &[CpuTopo], key: impl Fn(&CpuTopo) -> u32) -> Partition {
    let nkeys = cpus.iter().map(&key).max().map_or(0, |k| k as usize + 1);
    let mut sets = vec![Vec::new(); nkeys];
    let set_of = (cpus.iter().enumerate())
        .map(|(cpu, t)| {
            let k = key(t) as usize;
            sets[k].push(cpu as u32);
            k
        })
        .collect();
    (sets, set_of)
}

/// The topology levels, bottom-up (step 1 of the module doc).
fn level_defs(cpus: &[CpuTopo], dist: &[Vec<u32>], clusters_per_llc: u32) -> Vec<LevelDef> {
    let def = |level, numa_distance, (sets, set_of): Partition| LevelDef {
        level,
        numa_distance,
        sets,
        set_of,
    };
    let smt = partition(cpus, |c| c.core);
    // cpu_clustergroup_mask falls back to the SMT mask when the cluster
    // would be the whole LLC.
    let cls = if clusters_per_llc > 1 {
        partition(cpus, |c| c.cluster)
    } else {
        smt.clone()
    };
    let mut defs = vec![
        def(Level::Smt, None, smt),
        def(Level::Cls, None, cls),
        def(Level::Mc, None, partition(cpus, |c| c.llc)),
        def(Level::Pkg, None, partition(cpus, |c| c.node)),
    ];
    let mut distances: Vec<u32> = dist.iter().flatten().copied().collect();
    distances.retain(|&d| d > LOCAL_DISTANCE);
    distances.sort_unstable();
    distances.dedup();
    for (j, &d) in distances.iter().enumerate() {
        let sets = (0..dist.len())
            .map(|a| {
                (0..cpus.len() as u32)
                    .filter(|&c| dist[a][cpus[c as usize].node as usize] <= d)
                    .collect()
            })
            .collect();
        let set_of = cpus.iter().map(|c| c.node as usize).collect();
        let level = Level::Numa(u8::try_from(j + 1).unwrap_or(u8::MAX));
        defs.push(def(level, Some(d), (sets, set_of)));
    }
    defs
}

/// Steps 1-3 of the module doc for every CPU.
struct Builder<'a> {
    cpus: &'a [CpuTopo],
    defs: Vec<LevelDef>,
    /// Per CPU, the set index at each level, up to the first full span.
    raw: Vec<Vec<usize>>,
    /// The distinct capacity values (`asym_cap_list`).
    classes: Vec<u32>,
    reclaim_distance: u32,
}

impl Builder<'_> {
    fn span(&self, cpu: usize, k: usize) -> &[u32] {
        &self.defs[k].sets[self.raw[cpu][k]]
    }

    /// `asym_cpu_capacity_classify`.
    fn asym_flags(&self, span: &[u32]) -> u32 {
        if self.classes.len() < 2 {
            return 0;
        }
        let mut seen: Vec<u32> = span
            .iter()
            .map(|&c| self.cpus[c as usize].capacity)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        match seen.len() {
            0 | 1 => 0,
            k if k < self.classes.len() => SD_ASYM_CPUCAPACITY,
            _ => SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL,
        }
    }

    /// `sd_init` for `cpu` at level `k`; clears the child's PREFER_SIBLING
    /// under an asymmetric domain.
    fn sd_init(&self, cpu: usize, k: usize, child: Option<&mut RawDomain>) -> RawDomain {
        let def = &self.defs[k];
        let span = self.span(cpu, k);
        let mut flags = SD_BALANCE_NEWIDLE
            | SD_BALANCE_EXEC
            | SD_BALANCE_FORK
            | SD_WAKE_AFFINE
            | SD_PREFER_SIBLING
            | self.asym_flags(span)
            | match def.level {
                Level::Smt => SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
                Level::Cls => SD_CLUSTER | SD_SHARE_LLC,
                Level::Mc => SD_SHARE_LLC,
                Level::Pkg => 0,
                Level::Numa(_) => SD_NUMA,
            };
        if let Some(child) = child.filter(|_| flags & SD_ASYM_CPUCAPACITY != 0) {
            child.flags &= !SD_PREFER_SIBLING;
        }
        let (mut imbalance_pct, mut cache_nice_tries) = (117, 1);
        if flags & SD_SHARE_CPUCAPACITY != 0 {
            imbalance_pct = 110;
            cache_nice_tries = 0;
        } else if flags & SD_NUMA != 0 {
            cache_nice_tries = 2;
            flags &= !SD_PREFER_SIBLING;
            flags |= SD_SERIALIZE;
            if def.numa_distance.unwrap_or(0) > self.reclaim_distance {
                flags &= !(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
            }
        }
        RawDomain {
            level: def.level,
            span: span.to_vec(),
            groups: Vec::new(),
            flags,
            imbalance_pct,
            cache_nice_tries,
            imb_numa_nr: 0,
        }
    }

    /// `build_sched_groups` / `build_overlap_sched_groups`: walk the span
    /// from `cpu`, wrapping around; `covered` is scratch space.
    fn groups(&self, cpu: usize, k: usize, covered: &mut [bool]) -> Vec<Vec<u32>> {
        let span = self.span(cpu, k);
        let subset = |a: &[u32]| a.iter().all(|c| span.binary_search(c).is_ok());
        covered.iter_mut().for_each(|c| *c = false);
        let start = span.partition_point(|&c| (c as usize) < cpu);
        let mut groups = Vec::new();
        for &i in span[start..].iter().chain(&span[..start]) {
            let i = i as usize;
            if covered[i] {
                continue;
            }
            let group = if self.defs[k].numa_distance.is_none() {
                // get_group: the child's span, or the CPU at the bottom.
                if k == 0 {
                    vec![i as u32]
                } else {
                    self.span(i, k - 1).to_vec()
                }
            } else {
                // A sibling whose hierarchy ended lower has no domain here.
                if self.raw[i].len() <= k {
                    continue;
                }
                let mut s = k;
                if s > 0 && !subset(self.span(i, s - 1)) {
                    // find_descended_sibling.
                    while s > 0 && !subset(self.span(i, s - 1)) {
                        s -= 1;
                    }
                    while s > 0 && self.span(i, s - 1) == self.span(i, s) {
                        s -= 1;
                    }
                }
                self.span(i, s.saturating_sub(1)).to_vec()
            };
            for &c in &group {
                covered[c as usize] = true;
            }
            groups.push(group);
        }
        groups
    }

    fn raw_domains(&self, cpu: usize, covered: &mut [bool]) -> Vec<RawDomain> {
        let mut doms: Vec<RawDomain> = Vec::with_capacity(self.raw[cpu].len());
        for k in 0..self.raw[cpu].len() {
            let mut sd = self.sd_init(cpu, k, doms.last_mut());
            sd.groups = self.groups(cpu, k, covered);
            doms.push(sd);
        }
        doms
    }
}

/// `sd->imb_numa_nr`, as at the end of `build_sched_domains`.
fn set_imb_numa_nr(doms: &mut [RawDomain]) {
    let (mut imb, mut imb_span) = (0u32, 1u32);
    for k in 0..doms.len() {
        let weight = doms[k].span.len() as u32;
        let llc = |sd: &RawDomain| sd.flags & SD_SHARE_LLC != 0;
        if !llc(&doms[k]) && k > 0 && llc(&doms[k - 1]) {
            let nr_llcs = weight / doms[k - 1].span.len() as u32;
            imb = if nr_llcs == 1 { weight >> 3 } else { nr_llcs }.max(1);
            doms[k].imb_numa_nr = imb;
            imb_span = doms[k + 1..]
                .iter()
                .find(|p| p.flags & SD_NUMA != 0)
                .map_or(weight, |p| p.span.len() as u32);
        } else {
            doms[k].imb_numa_nr = imb * (weight / imb_span).max(1);
        }
    }
}

/// `cpu_attach_domain`: drop degenerate parents (passing PREFER_SIBLING
/// down), then a degenerate base domain.
fn attach(mut doms: Vec<RawDomain>) -> Vec<SchedDomain> {
    let mut t = 0;
    while t + 1 < doms.len() {
        if sd_parent_degenerate(&doms[t], &doms[t + 1]) {
            let parent = doms.remove(t + 1);
            doms[t].flags |= parent.flags & SD_PREFER_SIBLING;
        } else {
            t += 1;
        }
    }
    if doms.first().is_some_and(sd_degenerate) {
        doms.remove(0);
    }
    doms.into_iter()
        .map(|d| {
            let w = d.span.len() as u32;
            SchedDomain {
                level: d.level,
                span: d.span,
                groups: d.groups,
                flags: DomainFlags::from_bits(d.flags),
                imbalance_pct: d.imbalance_pct,
                min_interval_ms: w,
                max_interval_ms: 2 * w,
                busy_factor: 16,
                cache_nice_tries: d.cache_nice_tries,
                imb_numa_nr: d.imb_numa_nr,
            }
        })
        .collect()
}

/// The energy model of a preset: capacity at an OPP = CPU capacity ·
/// f / fmax; cost = power in µW = coeff · MHz · V² = coeff · kHz · mV² / 1e9.
fn energy_model(cpus: &[CpuTopo], specs: &[PdSpec]) -> Vec<PerfDomain> {
    specs
        .iter()
        .map(|pd| {
            let cap = u64::from(cpus[pd.cpus[0] as usize].capacity);
            let fmax = u64::from(pd.opps.last().map_or(1, |o| o.0));
            let opps = pd.opps.iter().map(|&(khz, mv)| {
                let (khz, mv) = (u64::from(khz), u64::from(mv));
                let power = pd.dyn_power_coeff * khz * mv * mv / 1_000_000_000;
                ((cap * khz / fmax) as u32, power)
            });
            PerfDomain {
                cpus: pd.cpus.to_vec(),
                opps: opps.collect(),
            }
        })
        .collect()
}

fn construct(desc: &Desc) -> Topology {
    let m = &desc.shape;
    let capacity_of = |core: u32| match m.capacities.last() {
        None => SCHED_CAPACITY_SCALE,
        Some(last) => *m.capacities.get(core as usize).unwrap_or(last),
    };

    // Cores in creation order, then CPUs thread-major (Linux x86 numbering).
    let mut cores = Vec::new();
    for node in 0..m.nodes {
        for p in 0..m.packages_per_node {
            let package = node * m.packages_per_node + p;
            for l in 0..m.llcs_per_package {
                let llc = package * m.llcs_per_package + l;
                for c in 0..m.clusters_per_llc {
                    let cluster = llc * m.clusters_per_llc + c;
                    for _ in 0..m.cores_per_cluster {
                        let core = cores.len() as u32;
                        let capacity = capacity_of(core);
                        cores.push(CpuTopo {
                            capacity,
                            core,
                            cluster,
                            llc,
                            package,
                            node,
                        });
                    }
                }
            }
        }
    }
    let cpus: Vec<CpuTopo> = (0..m.smt).flat_map(|_| cores.iter().copied()).collect();
    let n = cpus.len();
    let node_distance: Vec<Vec<u32>> = (0..m.nodes)
        .map(|a| {
            let d = |b| {
                if a == b {
                    LOCAL_DISTANCE
                } else {
                    m.remote_distance
                }
            };
            (0..m.nodes).map(d).collect()
        })
        .collect();

    let defs = level_defs(&cpus, &node_distance, m.clusters_per_llc);
    let smt_masks = (0..n)
        .map(|c| defs[0].sets[defs[0].set_of[c]].clone())
        .collect();
    let raw = (0..n)
        .map(|cpu| {
            let mut v = Vec::new();
            for def in &defs {
                let s = def.set_of[cpu];
                v.push(s);
                if def.sets[s].len() == n {
                    break;
                }
            }
            v
        })
        .collect();
    let mut classes: Vec<u32> = cpus.iter().map(|c| c.capacity).collect();
    classes.sort_unstable();
    classes.dedup();
    let b = Builder {
        cpus: &cpus,
        defs,
        raw,
        classes,
        reclaim_distance: desc.reclaim_distance,
    };
    let mut covered = vec![false; n];
    let domains = (0..n)
        .map(|cpu| {
            let mut doms = b.raw_domains(cpu, &mut covered);
            set_imb_numa_nr(&mut doms);
            attach(doms)
        })
        .collect();

    Topology {
        name: desc.name.clone(),
        perf_domains: energy_model(&cpus, desc.energy),
        cpus,
        node_distance,
        domains,
        smt_masks,
    }
}

/// `sd_degenerate`.
fn sd_degenerate(sd: &RawDomain) -> bool {
    if sd.span.len() == 1 {
        return true;
    }
    if sd.flags & SD_DEGENERATE_GROUPS_MASK != 0 && sd.groups.len() > 1 {
        return false;
    }
    sd.flags & SD_WAKE_AFFINE == 0
}

/// `sd_parent_degenerate`.
fn sd_parent_degenerate(sd: &RawDomain, parent: &RawDomain) -> bool {
    if sd_degenerate(parent) {
        return true;
    }
    if sd.span != parent.span {
        return false;
    }
    let mut pflags = parent.flags;
    if parent.groups.len() == 1 {
        pflags &= !SD_DEGENERATE_GROUPS_MASK;
    }
    !sd.flags & pflags == 0
}

#[cfg(test)]
mod tests {
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
}
