//! Throughput against kernel references: hackbench's messages and
//! schbench's requests per second (`tests/kernel-ref/NAME.jsonl`, written
//! by `make throughput-ref`: an `eevdf sweep --kernel 7.2,6.12` of
//! `NAME.txt` over its axes, the kernel's default and feature flips, five
//! seeds). One CPU for `hackbench` and `schbench`, four for
//! `hackbench-smp4`, eight for `hackbench-numa2` (two NUMA nodes of two
//! cores with two threads each) and 64 for `hackbench-xeon` (Mel's
//! two-socket Xeon, `xeon-4314-2s`) and `hackbench-graviton3` (Ryan's
//! one-socket Graviton3), each booted as that machine
//! ([`crate::vm_topology`]). The fidelity rows judge cyclictest's latency; this
//! judges the numbers the NEXT_BUDDY threads argue with, with the same
//! level and direction rules ([`crate::fidelity`]).

use std::collections::BTreeMap;

use eevdf_scenario::scenario::Scenario;
use eevdf_sim::Workload;
use serde_json::Value;

use crate::fidelity::{effect_direction, median, within_2x, Direction, Verdict};
use crate::sweep_line::{self, axes, bare_text};

/// The references judged, by their file names.
pub const BENCHES: [&str; 6] = [
    "hackbench",
    "schbench",
    "hackbench-smp4",
    "hackbench-numa2",
    "hackbench-xeon",
    "hackbench-graviton3",
];

/// Whether a known-disagreements line is a throughput verdict's (its
/// row, `hackbench-pipe`, `hackbench-smp4-g4-socket`,
/// `hackbench-numa2-g1-pipe` or `schbench`, is no fidelity row's).
pub fn owns(key: &str) -> bool {
    BENCHES.iter().any(|b| key.starts_with(b))
}

/// What a benchmark's verdicts judge (the `pct` of a [`Verdict`]).
fn metric(bench: &str) -> &'static str {
    if bench == "schbench" {
        "req/s"
    } else {
        "msg/s"
    }
}

/// One kernel cell of the sweep.
#[derive(Clone, Debug)]
struct Cell {
    series: String,
    release: String,
    /// The reference's name and the axes' values: `hackbench-pipe`,
    /// `schbench`, `hackbench-smp4-g4-socket`.
    row: String,
    /// The features axis value (the first one in the file: the baseline).
    features: String,
    seed: u64,
    text: String,
    read_back: ReadBack,
    per_s: Rates,
}

/// The kernel's settings a twin copies (the cell's `source` block).
#[derive(Clone, Debug)]
struct ReadBack {
    features: String,
    base_slice_ns: u64,
    preempt: String,
    hz: Option<u32>,
}

/// Work done (hackbench messages, schbench requests) and context
/// switches per second of one run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rates {
    pub work: u64,
    pub switches: u64,
}

impl Rates {
    fn of(work: u64, switches: u64, ns: u64) -> Rates {
        let per_s = |n: u64| (u128::from(n) * 1_000_000_000 / u128::from(ns.max(1))) as u64;
        Rates {
            work: per_s(work),
            switches: per_s(switches),
        }
    }
}

/// One benchmark's reference: its committed scenario's kernel cells.
#[derive(Debug)]
pub struct ThroughputRef {
    bench: &'static str,
    baseline: String,
    cells: Vec<Cell>,
}

/// One (kernel, row, variant): both sides per seed.
#[derive(Clone, Debug)]
pub struct Judged {
    pub bench: &'static str,
    pub series: String,
    pub release: String,
    pub row: String,
    /// `default` for the baseline, else the features axis value.
    pub variant: String,
    pub kernel: Vec<Rates>,
    pub sim: Vec<Rates>,
}

impl Judged {
    fn work(v: &[Rates]) -> Vec<u64> {
        v.iter().map(|r| r.work).collect()
    }

    /// The kernel's (median, spread) of work per second.
    pub fn kernel_work(&self) -> (u64, u64) {
        med_spread(&Self::work(&self.kernel))
    }

    pub fn sim_work(&self) -> u64 {
        median(&Self::work(&self.sim))
    }
}

fn med_spread(v: &[u64]) -> (u64, u64) {
    let (lo, hi) = (v.iter().min(), v.iter().max());
    (median(v), hi.unwrap_or(&0) - lo.unwrap_or(&0))
}

impl ThroughputRef {
    /// Parses the sweep's JSON lines; every cell must be a kernel's run
    /// of `scenario` (the committed `name.txt`, its task keys varied).
    pub fn parse(name: &str, scenario: &str, jsonl: &str) -> Result<ThroughputRef, String> {
        let base = Scenario::parse(scenario).map_err(|e| format!("the scenario: {e}"))?;
        let bench = match base.sim.tasks.first().map(|t| &t.workload) {
            Some(Workload::Hackbench { .. }) if base.sim.tasks.len() == 1 => BENCHES[0],
            Some(Workload::Schbench { .. }) if base.sim.tasks.len() == 1 => BENCHES[1],
            _ => return Err("the scenario is not one hackbench or schbench task".into()),
        };
        let mut cells = Vec::new();
        for (n, v) in sweep_line::cells(jsonl) {
            let at = |e: String| format!("line {n}: {e}");
            let v = v.map_err(at)?;
            cells.push(cell(name, bench, &base, &v).map_err(at)?);
        }
        let baseline = cells.first().ok_or("no cells")?.features.clone();
        Ok(ThroughputRef {
            bench,
            baseline,
            cells,
        })
    }

    /// The twin of the sweep's cell `n` (its JSON line, counting from 0,
    /// blank lines skipped), to trace against a kernel run of that cell.
    pub fn twin(&self, n: usize) -> Result<Scenario, String> {
        let c = self
            .cells
            .get(n)
            .ok_or_else(|| format!("no cell {n} (the sweep has {})", self.cells.len()))?;
        twin_scenario(c)
    }

    /// Simulates every cell's twin and groups both sides.
    pub fn judge(&self) -> Result<Vec<Judged>, String> {
        let mut groups: BTreeMap<(String, String, String), Judged> = BTreeMap::new();
        for c in &self.cells {
            let variant = if c.features == self.baseline {
                "default".to_string()
            } else {
                c.features.clone()
            };
            let key = (c.series.clone(), c.row.clone(), variant.clone());
            let sim = twin_rates(c)?;
            let j = groups.entry(key).or_insert_with(|| Judged {
                bench: self.bench,
                series: c.series.clone(),
                release: c.release.clone(),
                row: c.row.clone(),
                variant,
                kernel: Vec::new(),
                sim: Vec::new(),
            });
            j.kernel.push(c.per_s);
            j.sim.push(sim);
        }
        Ok(groups.into_values().collect())
    }
}

/// One JSON line as a cell, checked against the committed scenario.
fn cell(name: &str, bench: &'static str, base: &Scenario, v: &Value) -> Result<Cell, String> {
    let axes = axes(v);
    let r = &v["result"];
    let src = &r["source"];
    if src["kind"] != "kernel" {
        return Err("not a kernel cell".into());
    }
    let text = r["scenario"].as_str().unwrap_or("").to_string();
    let mut want = base.clone();
    for (key, value) in axes.iter().filter(|(k, _)| k.starts_with("task.")) {
        // A row is named by these only, so another varied key would
        // pool different scenarios under one row.
        if !ROW_AXES.contains(&key.as_str()) {
            return Err(format!(
                "axis {key}: only task.hb.groups, task.hb.ipc and task.hb.mode name a row"
            ));
        }
        want.set(&format!("{key}={value}"))
            .map_err(|e| e.to_string())?;
    }
    if bare_text(&text) != bare_text(&want.to_text()) {
        return Err(format!(
            "not a run of tests/kernel-ref/{name}.txt (hint: make throughput-ref)"
        ));
    }
    let mode = axes.get("task.hb.mode").map(String::as_str);
    let row = row_name(name, &want, axes.contains_key("task.hb.groups"), mode);
    let work = if bench == "schbench" {
        r["schbench"][0]["requests"].as_u64()
    } else {
        r["hackbench"][0]["messages"].as_u64()
    };
    let work = work.ok_or("no messages or requests")?;
    let switches = r["totals"]["switches"].as_u64().ok_or("no switches")?;
    let ns = r["sim_ns"]
        .as_u64()
        .filter(|&n| n > 0)
        .ok_or("no duration")?;
    let release = src["kernel"].as_str().ok_or("no kernel")?.to_string();
    Ok(Cell {
        series: release.split('.').take(2).collect::<Vec<_>>().join("."),
        release,
        row,
        features: axes.get("features").cloned().unwrap_or_default(),
        seed: axes
            .get("seed")
            .and_then(|s| s.parse().ok())
            .ok_or("no seed")?,
        text,
        read_back: ReadBack {
            features: src["features"].as_str().ok_or("no features")?.to_string(),
            base_slice_ns: src["base_slice_ns"].as_u64().ok_or("no base slice")?,
            preempt: src["preempt"].as_str().ok_or("no preempt")?.to_string(),
            hz: src["hz"].as_u64().and_then(|h| u32::try_from(h).ok()),
        },
        per_s: Rates::of(work, switches, ns),
    })
}

/// The task keys a sweep may vary: each names part of a row.
const ROW_AXES: [&str; 3] = ["task.hb.groups", "task.hb.ipc", "task.hb.mode"];

/// A row's name: the reference's, then a hackbench's groups (when
/// varied), its channel and its mode (when varied): `hackbench-smp4-g4-pipe`,
/// `hackbench-graviton3-pipe-thread`.
fn row_name(name: &str, sc: &Scenario, groups_varied: bool, mode: Option<&str>) -> String {
    match sc.sim.tasks[0].workload {
        Workload::Hackbench { pipe, groups, .. } => {
            let g = if groups_varied {
                format!("-g{groups}")
            } else {
                String::new()
            };
            let m = mode.map(|m| format!("-{m}")).unwrap_or_default();
            format!("{name}{g}-{}{m}", if pipe { "pipe" } else { "socket" })
        }
        _ => name.to_string(),
    }
}

/// The twin's work and switches per second for a kernel cell.
fn twin_rates(c: &Cell) -> Result<Rates, String> {
    let r = eevdf_sim::simulate(twin_scenario(c)?.sim_config());
    let work = r.hackbench.iter().map(|h| h.messages).sum::<u64>()
        + r.schbench.iter().map(|s| s.requests).sum::<u64>();
    Ok(Rates::of(work, r.totals.switches, r.sim_ns))
}

/// The twin of a kernel cell, as the fidelity rows build it: the
/// kernel's read-back settings and guest costs, CPU 0's tick phase.
fn twin_scenario(c: &Cell) -> Result<Scenario, String> {
    let sc = Scenario::parse(&c.text).map_err(|e| e.to_string())?;
    let b = &c.read_back;
    let sc = crate::run::sim_twin(
        &sc,
        c.seed,
        &c.release,
        &b.features,
        b.base_slice_ns,
        &b.preempt,
        b.hz,
    )?;
    Ok(sc)
}

/// Level verdicts for every group, direction verdicts for every
/// variant whose kernel effect stands out of its seeds' spread.
pub fn verdicts(judged: &[Judged]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for j in judged {
        let v = |what, agrees| Verdict {
            row: j.row.clone(),
            variant: j.variant.clone(),
            series: j.series.clone(),
            pct: metric(j.bench),
            what,
            agrees,
        };
        let (k, _) = j.kernel_work();
        out.push(v("level", within_2x(j.sim_work(), k)));
        if let Some(d) = baseline_of(judged, j) {
            match effect_direction(
                d.kernel_work(),
                j.kernel_work(),
                (d.sim_work(), j.sim_work()),
            ) {
                Direction::Noise => {}
                dir => out.push(v("direction", dir == Direction::Agrees)),
            }
        }
    }
    out.sort();
    out
}

fn baseline_of<'a>(judged: &'a [Judged], j: &Judged) -> Option<&'a Judged> {
    if j.variant == "default" {
        return None;
    }
    judged
        .iter()
        .find(|d| d.series == j.series && d.row == j.row && d.variant == "default")
}

fn pct(a: u64, b: u64) -> String {
    if a == 0 {
        return "-".into();
    }
    format!("{:+.0} %", (b as f64 - a as f64) / a as f64 * 100.0)
}

/// A rate as the table shows it: thousands with a decimal from 10,000.
fn thousands(n: u64) -> String {
    if n < 10_000 {
        n.to_string()
    } else {
        format!("{:.1}k", n as f64 / 1e3)
    }
}

/// The `docs/fidelity.md` section, over every benchmark's groups.
pub fn markdown(judged: &[Judged], verdicts: &[Verdict]) -> String {
    let agree = |what: &str| {
        let sel: Vec<_> = verdicts.iter().filter(|v| v.what == what).collect();
        (sel.iter().filter(|v| v.agrees).count(), sel.len())
    };
    let ((la, ln), (da, dn)) = (agree("level"), agree("direction"));
    let seeds = judged.iter().map(|j| j.kernel.len()).min().unwrap_or(0);
    let mut o = format!(
        "\n## Throughput: hackbench and schbench alone\n\n\
         `tests/kernel-ref/hackbench.txt` (one CPU, one group: 20 senders, 20 receivers, \
         processes; over pipes and over sockets), `schbench.txt` (one CPU, one message \
         thread waking six workers for 150 us requests every 1 ms think) and \
         `hackbench-smp4.txt` (four CPUs, one and four groups, pipes and sockets, 1 s; \
         QEMU runs the vCPUs in turns, so a cross-CPU wakeup waits for its target's \
         turn, the busy vCPUs share one CPU's speed and a task is charged while its \
         vCPU stands still; the twin takes the same turns: docs/model.md §6) and \
         `hackbench-numa2.txt` (the same on eight vCPUs, 7.2 only: two NUMA nodes of \
         two cores with two SMT threads each, booted as that machine, the kernel's \
         sched domains checked against the simulator's) and `hackbench-xeon.txt` (one \
         group over pipes and sockets on the 64 vCPUs of `xeon-4314-2s`, two sockets \
         of 16 SMT cores, Mel's machine in seeds/004, 7.2 only) and \
         `hackbench-graviton3.txt` (seven groups over pipes, as processes and as \
         threads, on the 64 vCPUs of `graviton3`, one socket without SMT, Ryan's \
         machine in seeds/004, 7.2 only): the work done per second \
         (messages, requests), the kernel's median over {seeds} seeds and its spread (max \
         minus min), against the twin's median over the same seeds (the kernel's \
         read-back settings and guest costs, as in the rows above). Context switches per \
         second are shown, not judged: they tell whether both sides run in the same \
         regime. Level: the twin within 2x of the kernel; direction: the rule above on \
         the variant's effect against `default`. `make throughput-ref` reruns the kernel \
         side; `crates/eevdf-kernel/tests/throughput.rs` holds the verdicts.\n\n\
         Level: **{la} of {ln}** within 2x. Direction: **{da} of {dn}** judged effects agree.\n\n"
    );
    o.push_str(
        "| kernel | row | variant | unit | kernel | spread | kernel effect | sim | sim effect | level | direction | switches/s kernel / sim |\n\
         |---|---|---|---|---:|---:|---:|---:|---:|---|---|---:|\n",
    );
    for j in judged {
        o.push_str(&table_row(judged, verdicts, j));
    }
    o.push('\n');
    o
}

fn table_row(judged: &[Judged], verdicts: &[Verdict], j: &Judged) -> String {
    let (k, spread) = j.kernel_work();
    let s = j.sim_work();
    let find = |what: &str| {
        verdicts.iter().find(|v| {
            v.row == j.row && v.series == j.series && v.variant == j.variant && v.what == what
        })
    };
    let (ke, se) = match baseline_of(judged, j) {
        Some(d) => (pct(d.kernel_work().0, k), pct(d.sim_work(), s)),
        None => (String::new(), String::new()),
    };
    let dir = match find("direction") {
        Some(v) if v.agrees => "agrees",
        Some(_) => "**differs**",
        None if j.variant == "default" => "",
        None => "within spread",
    };
    let level = if find("level").is_some_and(|v| v.agrees) {
        "agrees"
    } else {
        "**differs**"
    };
    let switches = |v: &[Rates]| median(&v.iter().map(|r| r.switches).collect::<Vec<_>>());
    format!(
        "| {} | {} | {} | {} | {} | {} | {ke} | {} | {se} | {level} | {dir} | {} / {} |\n",
        j.release,
        j.row,
        j.variant,
        metric(j.bench),
        thousands(k),
        thousands(spread),
        thousands(s),
        thousands(switches(&j.kernel)),
        thousands(switches(&j.sim)),
    )
}
