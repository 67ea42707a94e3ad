//! The fidelity set: published one-CPU scenarios run on the simulator and
//! on real kernels, and the rules that say whether they agree.
//!
//! A *row* is a workload, a *variant* a feature change over it. For every
//! (row, variant, kernel) the kernel is run over several seeds; the
//! simulator runs the same scenario with the kernel's read-back features
//! line, base slice, HZ and preemption model. Agreement is judged on the
//! timer task (`ct`) at p50, p90, p99 and p99.9:
//!
//! * level: the simulator's median over seeds is within 2x of the
//!   kernel's median over seeds;
//! * direction: where the kernel's effect of a variant (variant median
//!   minus default median) is larger than its spread over seeds (max minus
//!   min of either side's seeds), the simulator's effect has the same sign.

use eevdf_scenario::scenario::Scenario;
use eevdf_sim::LatencyStats;
use serde::{Deserialize, Serialize};

/// Guest (and simulated) duration of a row with the 1 ms cyclictest:
/// 10,000 timer samples, so p99.9 rests on the 10 slowest.
pub const DURATION: &str = "10s";
/// The same for the thread rows' 3,777 us cyclictest: 38 s / 3,777 us
/// = 10,060 periods.
pub const DURATION_CT8: &str = "38s";
/// Seeds per (row, variant, kernel).
pub const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];
/// Kernel series of the set.
pub const KERNELS: [&str; 2] = ["7.2", "6.12"];
/// The name whose latency is judged.
pub const JUDGED: &str = "ct";

/// One workload.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub name: &'static str,
    pub title: &'static str,
    /// The judged timer task's line ([`CT`] unless the row copies a
    /// thread's cyclictest).
    pub ct: &'static str,
    /// Task lines after the timer's.
    pub tasks: &'static str,
    /// Guest and simulated time: about 10,000 wakeups of the timer.
    pub duration: &'static str,
    /// The variants the set runs on this row (`None`: every one).
    pub variants: Option<&'static [&'static str]>,
}

/// The cyclictest-style timer every row has: 1 ms, 20 µs of work, a
/// 100 µs custom slice (shorter than the 700 µs base slice, so
/// PREEMPT_SHORT matters).
pub const CT: &str = "task ct kind=timer period=1ms run=20us slice=100us";

/// The 0/6 v2 thread's cyclictest (seeds/002): 3,777 us period, 8 ms
/// slice, against competitors with 16 ms slices; its "tip 2.8/2.8"
/// column is this row's `equal-slices`.
const CT8: &str = "task ct kind=timer period=3777us run=20us slice=8ms";
const SLICES: Option<&[&str]> = Some(&["default", "equal-slices"]);

pub const ROWS: [Row; 7] = [
    Row {
        name: "ct-alone",
        title: "cyclictest alone",
        ct: CT,
        tasks: "",
        duration: DURATION,
        variants: None,
    },
    Row {
        name: "ct-1hog",
        title: "cyclictest against one CPU hog",
        ct: CT,
        tasks: "task hog kind=hog",
        duration: DURATION,
        variants: None,
    },
    Row {
        name: "ct-4hog",
        title: "cyclictest against four CPU hogs",
        ct: CT,
        tasks: "task hog kind=hog count=4",
        duration: DURATION,
        variants: None,
    },
    Row {
        name: "ct-rtapp",
        title: "cyclictest against two rt-app tasks (8.2/17.8 ms)",
        ct: CT,
        tasks: "task rt kind=periodic count=2 run=8177us sleep=17777us",
        duration: DURATION,
        variants: None,
    },
    Row {
        name: "ct-hackbench",
        title: "cyclictest against hackbench (1 group, 10 fds, threads, pipes)",
        ct: CT,
        tasks: "task hb kind=hackbench groups=1 fds=10 mode=thread ipc=pipe loops=0",
        duration: DURATION,
        variants: None,
    },
    Row {
        name: "v2-rtapp",
        title: "the v2 thread's cyclictest (3777 us, 8 ms slice) against two rt-app tasks with 16 ms slices",
        ct: CT8,
        tasks: "task rt kind=periodic count=2 run=8177us sleep=17777us slice=16ms",
        duration: DURATION_CT8,
        variants: SLICES,
    },
    Row {
        name: "v2-hackbench",
        title: "the v2 thread's cyclictest (3777 us, 8 ms slice) against hackbench with 16 ms slices",
        ct: CT8,
        tasks: "task hb kind=hackbench fds=10 mode=thread ipc=pipe slice=16ms",
        duration: DURATION_CT8,
        variants: SLICES,
    },
];

/// One feature change over a row.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub name: &'static str,
    /// Feature tokens written to debugfs (empty = the kernel's defaults).
    pub features: &'static str,
    /// Drop every custom slice (every task on the base slice).
    pub equal_slices: bool,
}

pub const VARIANTS: [Variant; 5] = [
    Variant {
        name: "default",
        features: "",
        equal_slices: false,
    },
    Variant {
        name: "NO_PREEMPT_SHORT",
        features: "NO_PREEMPT_SHORT",
        equal_slices: false,
    },
    Variant {
        name: "NO_RUN_TO_PARITY",
        features: "NO_RUN_TO_PARITY",
        equal_slices: false,
    },
    Variant {
        name: "NEXT_BUDDY",
        features: "NEXT_BUDDY",
        equal_slices: false,
    },
    Variant {
        name: "equal-slices",
        features: "",
        equal_slices: true,
    },
];

pub fn row(name: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.name == name)
}

pub fn variant(name: &str) -> Option<&'static Variant> {
    VARIANTS.iter().find(|v| v.name == name)
}

impl Row {
    /// Whether the set runs `v` on this row.
    pub fn has(&self, v: &Variant) -> bool {
        self.variants.is_none_or(|names| names.contains(&v.name))
    }
}

/// A task line without its `slice=` key.
fn without_slice(line: &str) -> String {
    line.split(' ')
        .filter(|w| !w.starts_with("slice="))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The scenario text of a row under a variant (seed 1; runs set theirs).
pub fn scenario_text(row: &Row, v: &Variant) -> String {
    let (ct, tasks) = if v.equal_slices {
        (without_slice(row.ct), without_slice(row.tasks))
    } else {
        (row.ct.to_string(), row.tasks.to_string())
    };
    let mut t = format!(
        "eevdf-scenario v1\n# fidelity row {} ({})\nmachine up\n",
        row.name, v.name
    );
    t.push_str(&format!("duration {}\n", row.duration));
    if !v.features.is_empty() {
        t.push_str(&format!("features {}\n", v.features));
    }
    t.push_str(&ct);
    t.push('\n');
    if !tasks.is_empty() {
        t.push_str(&tasks);
        t.push('\n');
    }
    t.push_str("end\n");
    t
}

/// The kernel side of one seed: what the kernel read back and the judged
/// latencies (ns).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSeed {
    pub seed: u64,
    pub features: String,
    pub preempt: String,
    pub base_slice_ns: u64,
    pub hz: Option<u32>,
    pub samples: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
    /// The boot's cache key (`run::boot_key`): a fresh boot with the same
    /// key should give the same numbers. Absent in references made before
    /// stop 49.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_key: Option<String>,
}

impl KernelSeed {
    pub fn from_stats(seed: u64, src: &eevdf_scenario::report::Source, s: &LatencyStats) -> Self {
        KernelSeed {
            seed,
            features: src.features.clone(),
            preempt: src.preempt.clone(),
            base_slice_ns: src.base_slice_ns,
            hz: src.hz,
            samples: s.samples,
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
            p99_9: s.p99_9,
            max: s.max,
            boot_key: None,
        }
    }

    fn pcts(&self) -> [u64; 4] {
        [self.p50, self.p90, self.p99, self.p99_9]
    }
}

/// The committed reference file of one (row, variant, kernel):
/// `tests/kernel-ref/ROW.VARIANT.KERNEL.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub row: String,
    pub variant: String,
    /// Kernel series and exact release.
    pub series: String,
    pub kernel: String,
    pub package: String,
    pub package_version: String,
    pub kernel_sha256: String,
    pub qemu: String,
    pub icount_shift: u32,
    pub guest_sha256: String,
    /// The commit of this repository the runs were made with.
    pub commit: String,
    /// How to make one seed's run again.
    pub command: String,
    pub seeds: Vec<KernelSeed>,
}

impl Reference {
    pub fn file_name(row: &str, variant: &str, series: &str) -> String {
        format!("{row}.{variant}.{series}.json")
    }

    /// The scenario the simulator runs for `seed`: the row's text with the
    /// kernel's read-back features line, base slice, HZ and preemption
    /// model applied over the profile closest to the kernel, and the
    /// guest's kernel threads (`run::sim_twin`).
    pub fn sim_scenario(&self, seed: &KernelSeed) -> Result<Scenario, String> {
        let row = row(&self.row).ok_or_else(|| format!("unknown row {}", self.row))?;
        let v =
            variant(&self.variant).ok_or_else(|| format!("unknown variant {}", self.variant))?;
        let sc = Scenario::parse(&scenario_text(row, v)).map_err(|e| e.to_string())?;
        let sc = crate::run::sim_twin(
            &sc,
            seed.seed,
            &self.kernel,
            &seed.features,
            seed.base_slice_ns,
            &seed.preempt,
            seed.hz,
        )?;
        Ok(sc)
    }
}

/// Percentile names, in [`KernelSeed::pcts`] order.
pub const PCTS: [&str; 4] = ["p50", "p90", "p99", "p99.9"];

/// Median of a non-empty list (the lower middle for even lengths).
pub fn median(v: &[u64]) -> u64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    s[(s.len() - 1) / 2]
}

/// Per-percentile medians and spreads (max - min) over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Summary {
    pub median: [u64; 4],
    pub spread: [u64; 4],
}

pub fn summarize(seeds: &[[u64; 4]]) -> Summary {
    let mut s = Summary::default();
    for i in 0..4 {
        let col: Vec<u64> = seeds.iter().map(|p| p[i]).collect();
        if col.is_empty() {
            continue;
        }
        s.median[i] = median(&col);
        s.spread[i] = col.iter().max().unwrap_or(&0) - col.iter().min().unwrap_or(&0);
    }
    s
}

pub fn kernel_summary(r: &Reference) -> Summary {
    let p: Vec<[u64; 4]> = r.seeds.iter().map(KernelSeed::pcts).collect();
    summarize(&p)
}

/// Whether `sim` is within 2x of `kernel` (both in ns).
pub fn within_2x(sim: u64, kernel: u64) -> bool {
    let (s, k) = (u128::from(sim), u128::from(kernel));
    s * 2 >= k && s <= k * 2
}

/// The direction verdict of one variant's effect at one percentile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The kernel's effect is within its spread over seeds: not judged.
    Noise,
    Agrees,
    Differs,
}

/// `kd`, `kv`: kernel default and variant summaries; `sd`, `sv`: the
/// simulator's; `i`: the percentile.
pub fn direction(kd: &Summary, kv: &Summary, sd: &Summary, sv: &Summary, i: usize) -> Direction {
    effect_direction(
        (kd.median[i], kd.spread[i]),
        (kv.median[i], kv.spread[i]),
        (sd.median[i], sv.median[i]),
    )
}

/// The direction rule on one number: the kernel's default and variant
/// (median, spread over seeds) and the simulator's (default, variant)
/// medians.
pub fn effect_direction(kd: (u64, u64), kv: (u64, u64), sim: (u64, u64)) -> Direction {
    let ke = kv.0 as i128 - kd.0 as i128;
    // An effect must stand out of the seeds' spread and be at least 5 %
    // of the default (the threshold the seeds section uses too): a 0.1 µs
    // shift over a zero spread is no feature effect.
    let spread = kd.1.max(kv.1) as i128;
    let floor = (kd.0 as i128 / 20).max(spread);
    if ke.abs() <= floor {
        return Direction::Noise;
    }
    let se = sim.1 as i128 - sim.0 as i128;
    if se.signum() == ke.signum() {
        Direction::Agrees
    } else {
        Direction::Differs
    }
}

/// The simulator's side of a reference: the judged latencies per seed,
/// each run with that seed's read-back kernel settings.
pub fn simulate(r: &Reference) -> Result<Vec<[u64; 4]>, String> {
    let mut out = Vec::with_capacity(r.seeds.len());
    for seed in &r.seeds {
        let sc = r.sim_scenario(seed)?;
        let res = eevdf_sim::simulate(sc.sim_config());
        let ct = res
            .by_name
            .iter()
            .find(|n| n.name == JUDGED)
            .ok_or_else(|| format!("{}: no {JUDGED} in the result", r.row))?;
        let l = &ct.latency;
        out.push([l.p50, l.p90, l.p99, l.p99_9]);
    }
    Ok(out)
}

/// One judged cell: a (row, variant, kernel, percentile) and its verdict.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Verdict {
    pub row: String,
    pub variant: String,
    pub series: String,
    pub pct: &'static str,
    /// `level` (within 2x) or `direction` (the variant's effect).
    pub what: &'static str,
    pub agrees: bool,
}

impl Verdict {
    /// The line naming it in the known-disagreements list.
    pub fn key(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.row, self.variant, self.series, self.pct, self.what
        )
    }
}

/// Kernel and simulator summaries of one reference.
#[derive(Clone, Debug)]
pub struct Judged {
    pub reference: Reference,
    pub kernel: Summary,
    pub sim: Summary,
}

/// Simulates every reference and summarizes both sides.
pub fn judge_all(refs: &[Reference]) -> Result<Vec<Judged>, String> {
    refs.iter()
        .map(|r| {
            Ok(Judged {
                kernel: kernel_summary(r),
                sim: summarize(&simulate(r)?),
                reference: r.clone(),
            })
        })
        .collect()
}

/// Every level and direction verdict over judged references.
pub fn verdicts(judged: &[Judged]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for j in judged {
        let r = &j.reference;
        let v = |pct, what, agrees| Verdict {
            row: r.row.clone(),
            variant: r.variant.clone(),
            series: r.series.clone(),
            pct,
            what,
            agrees,
        };
        for (i, pct) in PCTS.iter().enumerate() {
            out.push(v(
                pct,
                "level",
                within_2x(j.sim.median[i], j.kernel.median[i]),
            ));
        }
        if r.variant == "default" {
            continue;
        }
        let Some(d) = judged.iter().find(|d| {
            d.reference.row == r.row
                && d.reference.series == r.series
                && d.reference.variant == "default"
        }) else {
            continue;
        };
        for (i, pct) in PCTS.iter().enumerate() {
            match direction(&d.kernel, &j.kernel, &d.sim, &j.sim, i) {
                Direction::Noise => {}
                dir => out.push(v(pct, "direction", dir == Direction::Agrees)),
            }
        }
    }
    out.sort();
    out
}

/// Reads every `*.json` reference in a directory, sorted by file name.
pub fn load_references(dir: &std::path::Path) -> Result<Vec<Reference>, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect()
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

fn ratio(sim: u64, kernel: u64) -> String {
    if kernel == 0 {
        "-".into()
    } else {
        format!("{:.2}", sim as f64 / kernel as f64)
    }
}

fn mark(agrees: bool) -> &'static str {
    if agrees {
        "agrees"
    } else {
        "**differs**"
    }
}

/// Reads the known-disagreements list: one verdict key a line, `#` comments.
pub fn parse_known(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            l.split('#')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Verdicts held against the known-disagreements lines `known` (those
/// of their kind): what disagrees unlisted, what is listed but agrees,
/// and listed lines no verdict has. A test fails on any of the three.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mismatches {
    pub regressions: Vec<String>,
    pub mended: Vec<String>,
    pub unjudged: Vec<String>,
}

impl Mismatches {
    pub fn of(verdicts: &[Verdict], known: &[String]) -> Mismatches {
        let listed = |v: &Verdict| known.contains(&v.key());
        let keys = |agrees: bool| {
            verdicts
                .iter()
                .filter(|v| v.agrees == agrees && listed(v) == agrees)
                .map(Verdict::key)
                .collect()
        };
        Mismatches {
            regressions: keys(false),
            mended: keys(true),
            unjudged: known
                .iter()
                .filter(|k| !verdicts.iter().any(|v| &v.key() == *k))
                .cloned()
                .collect(),
        }
    }

    /// Panics with what is wrong, if anything (at the caller's line).
    #[track_caller]
    pub fn assert_none(&self) {
        let list = |v: &[String]| v.join("\n  ");
        assert!(
            self.unjudged.is_empty(),
            "known-disagreements.txt names cells that are not judged:\n  {}",
            list(&self.unjudged)
        );
        assert!(
            self.regressions.is_empty(),
            "newly disagreeing with the kernel:\n  {}",
            list(&self.regressions)
        );
        assert!(
            self.mended.is_empty(),
            "these agree now; remove them from known-disagreements.txt \
             (eevdf kernel fidelity-doc rewrites it):\n  {}",
            list(&self.mended)
        );
    }
}

/// The known-disagreements list for a set of verdicts.
pub fn known_text(verdicts: &[Verdict]) -> String {
    let mut out = String::from(
        "# Fidelity cells where the simulator disagrees with the kernel today\n\
         # (generated by `eevdf kernel fidelity-doc`; docs/fidelity.md has the numbers).\n\
         # The reference test fails on a disagreement missing here and on a\n\
         # line here that agrees again, so this list only shrinks on purpose.\n",
    );
    for v in verdicts.iter().filter(|v| !v.agrees) {
        out.push_str(&v.key());
        out.push('\n');
    }
    out
}

/// Counts (agreeing, judged) verdicts of one kind.
fn count(verdicts: &[Verdict], what: &str, series: Option<&str>) -> (usize, usize) {
    let sel: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| v.what == what && series.is_none_or(|s| v.series == s))
        .collect();
    (sel.iter().filter(|v| v.agrees).count(), sel.len())
}

/// `docs/fidelity.md`: method, headline, then per row and kernel the
/// level table (every variant) and the direction table.
pub fn markdown(judged: &[Judged], verdicts: &[Verdict]) -> String {
    markdown_with(judged, verdicts, "")
}

/// [`markdown`] with `why` (the hand-written `tests/kernel-ref/why.md`:
/// what explains the cells that still differ) after the headline.
pub fn markdown_with(judged: &[Judged], verdicts: &[Verdict], why: &str) -> String {
    let mut o = String::new();
    o.push_str("# Fidelity: the simulator against real kernels\n\n");
    o.push_str(
        "Generated by `make fidelity` (`eevdf kernel fidelity`, then `eevdf kernel \
         fidelity-doc`) from the reference data in `tests/kernel-ref/`; do not edit.\n\n",
    );
    o.push_str("## Method\n\n");
    o.push_str(&format!(
        "- Every row is one CPU (`machine up`), {DURATION} of guest time, with the \
         cyclictest-style task `{CT}` (10,000 wakeups: p99.9 rests on the 10 slowest) \
         and the row's competitors. The `v2-*` rows copy the 0/6 v2 thread's setup \
         instead (seeds/002: `{CT8}`, competitors with 16 ms slices) for \
         {DURATION_CT8}, so they too judge about 10,000 wakeups; their `equal-slices` is the \
         thread's \"tip 2.8/2.8\" column, every task on the base slice.\n"
    ));
    o.push_str(
        "- Kernel: Debian's packaged image booted under QEMU `-icount shift=1` (1 guest \
         instruction = 2 ns), the guest runner measuring with real threads; one run per \
         seed (QEMU `-seed` and the scenario's start offsets). The guest delays its \
         window so the kernel's first tick (ticks sit at multiples of `TICK_NSEC`) comes \
         where the simulation has it, and starts hogs without timer slack: the tick's \
         phase against cyclictest's timer decides whether a waiting hog's deadline beats \
         cyclictest's (6.12 ct-4hog: p99 57 or 980 us by seed, on both sides).\n\
         - Simulator: the same scenario with the kernel's read-back features line, \
         `base_slice_ns`, HZ and preemption model applied (profile v6.12 for 6.x kernels, \
         v7.2 for 7.x) and the guest's measured costs (`eevdf kernel calibrate`: switch, \
         wakeup, a timed sleep's CPU, the tick's interrupt; hackbench's messages as a \
         running hackbench pays them, `tests/kernel-ref/steady.jsonl`) and \
         the guest's kernel threads (a `kworker` woken in a tick's interrupt every 400 ms, as traced), one run per seed.\n\
         - Level: the simulator's median over seeds within 2x of the kernel's median over \
         seeds (p50 to p99.9; max is shown, not judged).\n\
         - Direction: for a variant whose kernel effect (variant median minus default \
         median) is larger than the kernel's spread over seeds (max minus min, either side) \
         and than 5 % of the default, the simulator's effect has the same sign. Smaller \
         effects are not judged.\n\n",
    );
    let (la, lt) = count(verdicts, "level", None);
    let (da, dt) = count(verdicts, "direction", None);
    o.push_str("## Headline\n\n");
    o.push_str(&format!(
        "- Level: **{la} of {lt}** cells within 2x.\n- Direction: **{da} of {dt}** judged \
         feature effects agree.\n"
    ));
    let mut series: Vec<&str> = judged.iter().map(|j| j.reference.series.as_str()).collect();
    series.dedup();
    series.sort_unstable();
    series.dedup();
    for s in &series {
        let (la, lt) = count(verdicts, "level", Some(s));
        let (da, dt) = count(verdicts, "direction", Some(s));
        let kernel = judged
            .iter()
            .find(|j| j.reference.series == *s)
            .map(|j| j.reference.kernel.as_str())
            .unwrap_or("");
        o.push_str(&format!(
            "- {kernel}: level {la}/{lt}, direction {da}/{dt}.\n"
        ));
    }
    o.push('\n');
    if !why.trim().is_empty() {
        o.push_str(why.trim_end());
        o.push_str("\n\n");
    }
    for row in &ROWS {
        let of_row: Vec<&Judged> = judged
            .iter()
            .filter(|j| j.reference.row == row.name)
            .collect();
        if of_row.is_empty() {
            continue;
        }
        o.push_str(&format!("## {}: {}\n\n", row.name, row.title));
        for s in &series {
            let mut js: Vec<&&Judged> =
                of_row.iter().filter(|j| j.reference.series == *s).collect();
            js.sort_by_key(|j| VARIANTS.iter().position(|v| v.name == j.reference.variant));
            let Some(first) = js.first() else { continue };
            let r = &first.reference;
            let samples: Vec<u64> = r.seeds.iter().map(|k| k.samples).collect();
            o.push_str(&format!(
                "### {} ({} {}), {} seeds, min {} samples of ct\n\n",
                r.kernel,
                r.package,
                r.package_version,
                r.seeds.len(),
                samples.iter().min().unwrap_or(&0)
            ));
            if let Some(k) = r.seeds.first() {
                o.push_str(&format!(
                    "Read back: preempt `{}`, base_slice_ns {}, HZ {}.\n\n",
                    k.preempt,
                    k.base_slice_ns,
                    k.hz.map_or("unknown".to_string(), |h| h.to_string())
                ));
            }
            o.push_str(
                "| variant | pct | kernel µs | kernel spread µs | sim µs | sim/kernel | level |\n",
            );
            o.push_str("|---|---|---:|---:|---:|---:|---|\n");
            for j in &js {
                for (i, pct) in PCTS.iter().enumerate() {
                    let agrees = within_2x(j.sim.median[i], j.kernel.median[i]);
                    o.push_str(&format!(
                        "| {} | {pct} | {} | {} | {} | {} | {} |\n",
                        j.reference.variant,
                        us(j.kernel.median[i]),
                        us(j.kernel.spread[i]),
                        us(j.sim.median[i]),
                        ratio(j.sim.median[i], j.kernel.median[i]),
                        mark(agrees)
                    ));
                }
            }
            o.push('\n');
            let dirs: Vec<&Verdict> = verdicts
                .iter()
                .filter(|v| v.row == row.name && v.series == *s && v.what == "direction")
                .collect();
            let d = js.iter().find(|j| j.reference.variant == "default");
            let others: Vec<&&&Judged> = js
                .iter()
                .filter(|j| j.reference.variant != "default")
                .collect();
            if let (Some(d), false) = (d, others.is_empty()) {
                o.push_str("| variant | pct | kernel effect µs | sim effect µs | direction |\n");
                o.push_str("|---|---|---:|---:|---|\n");
                for j in others {
                    for (i, pct) in PCTS.iter().enumerate() {
                        let ke = j.kernel.median[i] as f64 - d.kernel.median[i] as f64;
                        let se = j.sim.median[i] as f64 - d.sim.median[i] as f64;
                        let verdict = dirs
                            .iter()
                            .find(|v| v.variant == j.reference.variant && v.pct == *pct)
                            .map_or("within spread", |v| mark(v.agrees));
                        o.push_str(&format!(
                            "| {} | {pct} | {:+.1} | {:+.1} | {verdict} |\n",
                            j.reference.variant,
                            ke / 1e3,
                            se / 1e3
                        ));
                    }
                }
                o.push('\n');
            }
        }
    }
    o.push_str(SEEDS_SECTION);
    o
}

/// The closing section: the seed threads, a second referee.
const SEEDS_SECTION: &str = "## The seed threads\n\n\
    The published comparisons of the LKML threads the project comes from are the \
    second referee: `make fidelity-seeds` simulates every transcribed one \
    (`tests/seeds/published.txt`) and writes [fidelity-seeds.md](fidelity-seeds.md), \
    with the thread, table, metric, published values, the preset that models it, and \
    the direction and ratio on both sides. Comparisons that hang on hardware are \
    listed with that reason; those that one-CPU rows here can run (`tests/seeds/kernel.txt`: \
    the v2 thread's slice columns, rows `v2-*`) also show each kernel's B/A.\n";

/// The page's data file (`eevdf-scenario/data/kernel_ref.txt`): each
/// row's default variant as preset `fidelity-ROW`, one line per kernel.
pub fn page_data(judged: &[Judged]) -> String {
    let mut o = String::from(
        "# generated by `eevdf kernel fidelity-doc`; do not edit\n\
         # preset task series release seeds samples p50 p90 p99 p99_9 max verdict (ns)\n",
    );
    for j in judged.iter().filter(|j| j.reference.variant == "default") {
        let r = &j.reference;
        let col = |f: fn(&KernelSeed) -> u64| median(&r.seeds.iter().map(f).collect::<Vec<_>>());
        let agrees = (0..4).all(|i| within_2x(j.sim.median[i], j.kernel.median[i]));
        o.push_str(&format!(
            "fidelity-{} {JUDGED} {} {} {} {} {} {} {} {} {} {}\n",
            r.row,
            r.series,
            r.kernel,
            r.seeds.len(),
            col(|k| k.samples),
            j.kernel.median[0],
            j.kernel.median[1],
            j.kernel.median[2],
            j.kernel.median[3],
            col(|k| k.max),
            if agrees { "agrees" } else { "differs" }
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatches_name_what_the_known_list_misses() {
        let v = |variant: &str, agrees| Verdict {
            row: "ct-1hog".into(),
            variant: variant.into(),
            series: "7.2".into(),
            pct: "p99",
            what: "level",
            agrees,
        };
        let verdicts = [
            v("default", false),
            v("NEXT_BUDDY", true),
            v("equal-slices", false),
        ];
        let known = [
            "ct-1hog equal-slices 7.2 p99 level".to_string(),
            "ct-1hog NEXT_BUDDY 7.2 p99 level".to_string(),
            "ct-9hog default 7.2 p99 level".to_string(),
        ];
        let m = Mismatches::of(&verdicts, &known);
        assert_eq!(m.regressions, ["ct-1hog default 7.2 p99 level"]);
        assert_eq!(m.mended, ["ct-1hog NEXT_BUDDY 7.2 p99 level"]);
        assert_eq!(m.unjudged, ["ct-9hog default 7.2 p99 level"]);
        let listed = Mismatches::of(&verdicts[2..], &known[..1]);
        assert_eq!(
            listed,
            Mismatches::default(),
            "a listed disagreement is fine"
        );
        listed.assert_none();
    }

    #[test]
    fn every_row_and_variant_is_a_valid_one_cpu_scenario() {
        for r in &ROWS {
            assert!(
                r.variants
                    .unwrap_or_default()
                    .iter()
                    .all(|n| variant(n).is_some()),
                "{}",
                r.name
            );
            for v in VARIANTS.iter().filter(|v| r.has(v)) {
                let t = scenario_text(r, v);
                let sc =
                    Scenario::parse(&t).unwrap_or_else(|e| panic!("{}/{}: {e}", r.name, v.name));
                assert_eq!(sc.machine.nr_cpus(), 1);
                assert_eq!(sc.sim.tasks[0].name, JUDGED);
                assert_eq!(sc.sim.tasks[0].slice_ns.is_none(), v.equal_slices);
                if v.equal_slices {
                    assert!(sc.sim.tasks.iter().all(|t| t.slice_ns.is_none()));
                }
            }
        }
    }

    #[test]
    fn the_rules_judge_level_and_direction() {
        assert!(within_2x(100, 200) && within_2x(200, 100) && !within_2x(99, 200));
        assert!(!within_2x(0, 1) && within_2x(0, 0));
        assert_eq!(median(&[5, 1, 3]), 3);
        assert_eq!(median(&[4, 1, 3, 2]), 2);
        let s = |m: u64, sp: u64| Summary {
            median: [m; 4],
            spread: [sp; 4],
        };
        // Kernel effect +50 over a spread of 10: judged.
        assert_eq!(
            direction(&s(100, 10), &s(150, 5), &s(10, 0), &s(20, 0), 0),
            Direction::Agrees
        );
        assert_eq!(
            direction(&s(100, 10), &s(150, 5), &s(10, 0), &s(5, 0), 0),
            Direction::Differs
        );
        assert_eq!(
            direction(&s(100, 10), &s(150, 5), &s(10, 0), &s(10, 0), 0),
            Direction::Differs
        );
        // Within the spread: noise.
        assert_eq!(
            direction(&s(100, 60), &s(150, 5), &s(10, 0), &s(5, 0), 0),
            Direction::Noise
        );
        // No spread, but under 5 % of the default: noise too.
        let (small, big) = (s(104, 0), s(106, 0));
        assert_eq!(
            direction(&s(100, 0), &small, &s(10, 0), &s(5, 0), 0),
            Direction::Noise
        );
        assert_eq!(
            direction(&s(100, 0), &big, &s(10, 0), &s(5, 0), 0),
            Direction::Differs
        );
    }
}
