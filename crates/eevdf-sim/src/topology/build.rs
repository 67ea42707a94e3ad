//! Construction (`kernel/sched/topology.c`): levels, `sd_init`, groups,
//! `imb_numa_nr`, `cpu_attach_domain`, the energy model.

use super::*;

/// One topology level: its CPU sets and which set each CPU's mask is.
pub(super) struct LevelDef {
    pub(super) level: Level,
    /// SLIT distance of a NUMA level (whose groups may overlap).
    pub(super) numa_distance: Option<u32>,
    pub(super) sets: Vec<Vec<u32>>,
    pub(super) set_of: Vec<usize>,
}

/// A domain before degenerate-domain removal.
pub(super) struct RawDomain {
    pub(super) level: Level,
    pub(super) span: Vec<u32>,
    pub(super) groups: Vec<Vec<u32>>,
    pub(super) flags: u32,
    pub(super) imbalance_pct: u32,
    pub(super) cache_nice_tries: u32,
    pub(super) imb_numa_nr: u32,
}

pub(super) type Partition = (Vec<Vec<u32>>, Vec<usize>);

/// Groups CPUs by a dense key; sets come out sorted.
pub(super) fn partition(cpus: &[CpuTopo], key: impl Fn(&CpuTopo) -> u32) -> Partition {
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
pub(super) fn level_defs(
    cpus: &[CpuTopo],
    dist: &[Vec<u32>],
    clusters_per_llc: u32,
) -> Vec<LevelDef> {
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
pub(super) struct Builder<'a> {
    pub(super) cpus: &'a [CpuTopo],
    pub(super) defs: Vec<LevelDef>,
    /// Per CPU, the set index at each level, up to the first full span.
    pub(super) raw: Vec<Vec<usize>>,
    /// The distinct capacity values (`asym_cap_list`).
    pub(super) classes: Vec<u32>,
    pub(super) reclaim_distance: u32,
}

impl Builder<'_> {
    pub(super) fn span(&self, cpu: usize, k: usize) -> &[u32] {
        &self.defs[k].sets[self.raw[cpu][k]]
    }

    /// `asym_cpu_capacity_classify`.
    pub(super) fn asym_flags(&self, span: &[u32]) -> u32 {
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
    pub(super) fn sd_init(&self, cpu: usize, k: usize, child: Option<&mut RawDomain>) -> RawDomain {
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
    pub(super) fn groups(&self, cpu: usize, k: usize, covered: &mut [bool]) -> Vec<Vec<u32>> {
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

    pub(super) fn raw_domains(&self, cpu: usize, covered: &mut [bool]) -> Vec<RawDomain> {
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
pub(super) fn set_imb_numa_nr(doms: &mut [RawDomain]) {
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
pub(super) fn attach(mut doms: Vec<RawDomain>) -> Vec<SchedDomain> {
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
pub(super) fn energy_model(cpus: &[CpuTopo], specs: &[PdSpec]) -> Vec<PerfDomain> {
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

pub(super) fn construct(desc: &Desc) -> Topology {
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
pub(super) fn sd_degenerate(sd: &RawDomain) -> bool {
    if sd.span.len() == 1 {
        return true;
    }
    if sd.flags & SD_DEGENERATE_GROUPS_MASK != 0 && sd.groups.len() > 1 {
        return false;
    }
    sd.flags & SD_WAKE_AFFINE == 0
}

/// `sd_parent_degenerate`.
pub(super) fn sd_parent_degenerate(sd: &RawDomain, parent: &RawDomain) -> bool {
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
