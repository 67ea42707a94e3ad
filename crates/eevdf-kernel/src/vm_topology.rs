//! The scenario's machine as QEMU gives it to the guest: sockets (one
//! LLC each), cores, SMT threads and NUMA nodes, the map between the
//! simulator's CPU numbers and the guest's, and the sched domains the
//! kernel must build for the run to count as the same machine.
//!
//! QEMU numbers vCPUs in APIC-ID order, so a core's threads are
//! neighbours (0,1 | 2,3 | ...); the simulator numbers them as Linux on
//! x86 hardware does, every core's first thread first (0,4 | 1,5 | ... on
//! four cores). Scenario CPU lists go in translated and per-CPU results
//! come back translated, so a twin and its kernel run speak of the same
//! CPUs.

use eevdf_scenario::scenario::Machine;
use eevdf_sim::topology::{CustomMachine, Level, MachineSpec, Topology, SCHED_CAPACITY_SCALE};

use crate::KernelError;

/// A machine QEMU can give the guest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmTopology {
    /// Number of vCPUs.
    pub cpus: u32,
    /// `-smp`'s value.
    pub smp: String,
    /// NUMA nodes (1 = no NUMA arguments).
    pub nodes: u32,
    /// SLIT distances `(i, j, d)` for nodes `i < j`.
    pub distances: Vec<(u32, u32, u32)>,
    /// `to_guest[sim_cpu]`: the guest's number of a simulated CPU.
    pub to_guest: Vec<u32>,
    /// Per guest CPU, its sched domains bottom-up as the kernel names
    /// them (`level`, span in guest numbers); empty for a flat machine,
    /// whose domains are not checked (one `MC`, or none on one CPU).
    pub domains: Vec<Domains>,
}

/// The most vCPUs QEMU's default `pc` machine takes.
pub const MAX_VCPUS: u32 = 255;

/// One CPU's sched domains bottom-up: the level's name and its span.
pub type Domains = Vec<(String, Vec<u32>)>;

/// Kernel command-line words that make the kernel print the sched domains
/// it builds (`sched_domain_debug()`), checked after a non-flat boot.
pub const DOMAIN_DEBUG_APPEND: &str = "sched_verbose loglevel=8";

impl VmTopology {
    /// QEMU's machine for `machine`: `-smp N` for `smpN`; sockets,
    /// cores, threads and nodes for a preset or custom machine whose
    /// shape is regular. Refused: capacities other than 1024, clusters,
    /// several LLCs in a socket, and presets with vendor quirks, which the
    /// guest's CPU cannot have.
    pub fn of(machine: &Machine) -> Result<VmTopology, KernelError> {
        if let Machine::Smp(n) = machine {
            return Ok(VmTopology::flat(*n));
        }
        let topo = Topology::build(&machine.spec())
            .map_err(|e| KernelError::refused(format!("machine {machine}: {e}"), ""))?;
        let shape = Shape::of(&topo)
            .and_then(|s| s.same_domains_on_x86(&topo).map(|()| s))
            .map_err(|why| {
                KernelError::refused(
                    format!("machine {machine} cannot be booted under QEMU: {why}"),
                    "run it on the simulator, or boot a machine custom without clusters or capacities",
                )
            })?;
        let to_guest = topo.apic_index();
        Ok(VmTopology {
            cpus: topo.nr_cpus(),
            smp: shape.smp(topo.nr_cpus()),
            nodes: shape.nodes,
            distances: distances(&topo),
            domains: expected_domains(&topo, &to_guest),
            to_guest,
        })
    }

    /// `-smp N`: N CPUs of one LLC, numbered alike on both sides.
    pub fn flat(n: u32) -> VmTopology {
        let n = n.max(1);
        VmTopology {
            cpus: n,
            smp: n.to_string(),
            nodes: 1,
            distances: Vec::new(),
            to_guest: (0..n).collect(),
            domains: Vec::new(),
        }
    }

    /// The kernel command line: [`crate::qemu::APPEND`], and on a
    /// non-flat machine [`DOMAIN_DEBUG_APPEND`] for the domain check.
    pub fn append(&self) -> String {
        if self.is_flat() {
            crate::qemu::APPEND.to_string()
        } else {
            format!("{} {DOMAIN_DEBUG_APPEND}", crate::qemu::APPEND)
        }
    }

    /// What a boot key adds for this machine: nothing on a flat one (so
    /// their keys are those of before topologies), else the command line
    /// and what QEMU's machine arguments say (memory is not keyed).
    pub fn key_part(&self) -> String {
        if self.is_flat() {
            return String::new();
        }
        format!(
            "{}\n-smp {}\nnodes={} distances={:?}\n",
            self.append(),
            self.smp,
            self.nodes,
            self.distances
        )
    }

    /// `sc`'s CPU lists in the guest's numbers (a task's `cpus=`).
    pub fn pin_in_guest(&self, sc: &mut eevdf_scenario::scenario::Scenario) {
        for t in &mut sc.sim.tasks {
            if let Some(cpus) = t.cpus.as_mut() {
                for c in cpus.iter_mut() {
                    if let Some(&g) = self.to_guest.get(*c as usize) {
                        *c = g;
                    }
                }
                cpus.sort_unstable();
            }
        }
    }

    /// The report's per-CPU lines in the simulator's numbers and order.
    pub fn cpus_to_sim(&self, report: &mut eevdf_scenario::guest::GuestReport) {
        if self.is_flat() {
            return;
        }
        for c in &mut report.cpus {
            if let Some(s) = self.to_sim(c.cpu) {
                c.cpu = s;
            }
        }
        report.cpus.sort_by_key(|c| c.cpu);
    }

    /// QEMU's arguments for the NUMA nodes: one memory backend and
    /// `-numa node` per node (QEMU wants every node's memory given), then
    /// each pair's SLIT distance. Nodes hold whole sockets, so each holds
    /// a run of guest CPUs.
    pub fn machine_args(&self, mem_mib: u32) -> Vec<String> {
        if self.nodes < 2 {
            return Vec::new();
        }
        let per_node = mem_mib / self.nodes;
        let cpus_per_node = self.cpus / self.nodes;
        let mut a = Vec::new();
        for n in 0..self.nodes {
            let size = if n + 1 == self.nodes {
                mem_mib - per_node * (self.nodes - 1)
            } else {
                per_node
            };
            let first = n * cpus_per_node;
            a.push("-object".into());
            a.push(format!("memory-backend-ram,id=mem{n},size={size}M"));
            a.push("-numa".into());
            a.push(format!(
                "node,nodeid={n},cpus={first}-{},memdev=mem{n}",
                first + cpus_per_node - 1
            ));
        }
        for &(i, j, d) in &self.distances {
            a.push("-numa".into());
            a.push(format!("dist,src={i},dst={j},val={d}"));
        }
        a
    }

    /// Whether the machine is QEMU's plain `-smp N` (no domain check, the
    /// default command line, the boot keys of before topologies).
    pub fn is_flat(&self) -> bool {
        self.domains.is_empty()
    }

    /// The simulator's number of a guest CPU.
    pub fn to_sim(&self, guest_cpu: u32) -> Option<u32> {
        self.to_guest
            .iter()
            .position(|&g| g == guest_cpu)
            .map(|s| s as u32)
    }

    /// Checks the domains a boot's console shows (`sched_verbose`)
    /// against the expected ones.
    pub fn check_console(&self, console: &str) -> Result<(), String> {
        if self.is_flat() {
            return Ok(());
        }
        let seen = parse_domains(console, self.cpus)?;
        for (cpu, (want, got)) in self.domains.iter().zip(&seen).enumerate() {
            let same = want.len() == got.len()
                && want
                    .iter()
                    .zip(got)
                    .all(|((wl, ws), (gl, gs))| gl.starts_with(wl.as_str()) && ws == gs);
            if !same {
                return Err(format!(
                    "guest CPU {cpu}: the kernel built {}, the simulator's machine has {}",
                    show(got),
                    show(want)
                ));
            }
        }
        Ok(())
    }
}

fn show(domains: &Domains) -> String {
    if domains.is_empty() {
        return "no domains".into();
    }
    let parts: Vec<String> = domains
        .iter()
        .map(|(l, s)| format!("{l} {}", eevdf_sim::topology::cpulist(s)))
        .collect();
    parts.join(", ")
}

/// The regular tree QEMU builds: nodes hold whole sockets, a socket (one
/// die, one LLC) `cores` cores of `threads` threads.
#[derive(Debug)]
struct Shape {
    nodes: u32,
    sockets: u32,
    cores: u32,
    threads: u32,
}

impl Shape {
    fn of(t: &Topology) -> Result<Shape, String> {
        if t.cpus.iter().any(|c| c.capacity != SCHED_CAPACITY_SCALE) {
            return Err(format!(
                "its CPUs have capacities other than {SCHED_CAPACITY_SCALE}, which an x86 guest \
                 does not"
            ));
        }
        // QEMU's `pc` machine takes at most 255 vCPUs.
        if t.nr_cpus() > MAX_VCPUS {
            return Err(format!("more than {MAX_VCPUS} CPUs"));
        }
        let count = |f: &dyn Fn(&eevdf_sim::topology::CpuTopo) -> u32| {
            let mut v: Vec<u32> = t.cpus.iter().map(f).collect();
            v.sort_unstable();
            v.dedup();
            v.len() as u32
        };
        let (cores, clusters) = (count(&|c| c.core), count(&|c| c.cluster));
        let (llcs, sockets, nodes) = (count(&|c| c.llc), count(&|c| c.package), count(&|c| c.node));
        if clusters != llcs {
            return Err("it has clusters, which QEMU's x86 guests do not report".into());
        }
        // QEMU's TCG CPU is an AMD family 0xf, whose LLC the kernel
        // takes as the whole socket whatever QEMU's dies say (7.2.13 on
        // `custom llcs=2 cores=2` built one MC of four CPUs).
        if llcs != sockets {
            return Err(
                "it has more than one LLC per socket, which the guest's CPU does not \
                        report"
                    .into(),
            );
        }
        let threads = t.nr_cpus() / cores;
        let shape = Shape {
            nodes,
            sockets,
            cores: cores / sockets,
            threads,
        };
        let regular = t.nr_cpus() == shape.sockets * shape.cores * threads
            && sockets % nodes == 0
            && cores % sockets == 0;
        if !regular {
            return Err(format!("its tree is not regular ({shape:?})"));
        }
        Ok(shape)
    }

    /// The same tree as a `machine custom` must build the same domains: a
    /// preset's quirks (AMD Zen's `node_reclaim_distance` of 32, which
    /// QEMU's TCG CPU, family 0xf, does not get) would change the guest's
    /// domain flags, which the console does not show.
    fn same_domains_on_x86(&self, t: &Topology) -> Result<(), String> {
        let remote: Vec<u32> = distances(t).iter().map(|&(_, _, d)| d).collect();
        if remote.windows(2).any(|w| w[0] != w[1]) {
            return Err("its nodes are at different distances".into());
        }
        let plain = CustomMachine {
            nodes: self.nodes,
            packages_per_node: self.sockets / self.nodes,
            llcs_per_package: 1,
            clusters_per_llc: 1,
            cores_per_cluster: self.cores,
            smt: self.threads,
            capacities: Vec::new(),
            remote_distance: remote.first().copied().unwrap_or(20),
        };
        let x86 = Topology::build(&MachineSpec::Custom(plain))?;
        if x86.domains != t.domains {
            return Err(
                "its sched domains differ from those of the same tree on a plain x86 \
                        guest (a vendor quirk of the preset)"
                    .into(),
            );
        }
        Ok(())
    }

    fn smp(&self, cpus: u32) -> String {
        format!(
            "cpus={cpus},sockets={},dies=1,cores={},threads={}",
            self.sockets, self.cores, self.threads
        )
    }
}

fn distances(t: &Topology) -> Vec<(u32, u32, u32)> {
    let n = t.node_distance.len() as u32;
    let mut v = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            v.push((i, j, t.node_distance[i as usize][j as usize]));
        }
    }
    v
}

/// The kernel's name of a level: every NUMA level is `NUMA`.
fn kernel_name(l: Level) -> String {
    match l {
        Level::Numa(_) => "NUMA".into(),
        other => other.name(),
    }
}

fn expected_domains(t: &Topology, to_guest: &[u32]) -> Vec<Domains> {
    let mut by_guest = vec![Vec::new(); to_guest.len()];
    for (sim, doms) in t.domains.iter().enumerate() {
        by_guest[to_guest[sim] as usize] = doms
            .iter()
            .map(|d| {
                let mut span: Vec<u32> = d.span.iter().map(|&c| to_guest[c as usize]).collect();
                span.sort_unstable();
                (kernel_name(d.level), span)
            })
            .collect();
    }
    by_guest
}

/// Reads `sched_domain_debug()`'s lines: `CPU3 attaching sched-domain(s):`
/// then ` domain-0: span=2-3 level=SMT`, ... The last attach of each CPU
/// counts (a rebuild prints again).
fn parse_domains(console: &str, cpus: u32) -> Result<Vec<Domains>, String> {
    let mut out: Vec<Option<Domains>> = vec![None; cpus as usize];
    let mut current: Option<usize> = None;
    for line in console.lines() {
        let line = strip_timestamp(line);
        if let Some(rest) = line.strip_prefix("CPU") {
            current = None;
            if let Some((n, tail)) = rest.split_once(' ') {
                if tail.starts_with("attaching sched-domain") {
                    let cpu: usize = n.parse().map_err(|_| format!("bad CPU in {line:?}"))?;
                    if cpu >= out.len() {
                        return Err(format!("the console names CPU {cpu} of {cpus}"));
                    }
                    out[cpu] = Some(Vec::new());
                    current = Some(cpu);
                } else if tail.starts_with("attaching NULL sched-domain") {
                    if let Ok(cpu) = n.parse::<usize>() {
                        if cpu < out.len() {
                            out[cpu] = Some(Vec::new());
                        }
                    }
                }
            }
            continue;
        }
        let Some(cpu) = current else { continue };
        let t = line.trim_start();
        if !t.starts_with("domain-") {
            continue;
        }
        // A line split by another CPU's message is left out: the
        // comparison then finds the domain missing.
        let field = |k: &str| t.split_whitespace().find_map(|w| w.strip_prefix(k));
        let (Some(span), Some(level)) = (field("span=").and_then(parse_cpulist), field("level="))
        else {
            continue;
        };
        if let Some(doms) = out[cpu].as_mut() {
            doms.push((level.to_string(), span));
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(cpu, d)| d.ok_or_else(|| format!("the console shows no sched domains of CPU {cpu}")))
        .collect()
}

/// `[    0.123456] text` → `text`.
fn strip_timestamp(line: &str) -> &str {
    let l = line.trim_end_matches('\r');
    match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((_, rest)) => rest,
        None => l,
    }
}

/// `0-3,8,10-11` → sorted CPUs.
fn parse_cpulist(s: &str) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    for part in s.split(',') {
        let (a, b): (u32, u32) = match part.split_once('-') {
            Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
            None => {
                let a = part.parse().ok()?;
                (a, a)
            }
        };
        if a > b || b - a > 4096 {
            return None;
        }
        v.extend(a..=b);
    }
    v.sort_unstable();
    v.dedup();
    Some(v)
}

#[cfg(test)]
mod tests;
