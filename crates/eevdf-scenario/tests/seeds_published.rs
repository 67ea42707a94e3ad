//! The seed threads as a second referee (issue "fidelity report", item 6).
//!
//! `tests/seeds/published.txt` holds the published comparisons of the
//! seed threads (`/work/shared/seeds/*.txt`), one a line, copied as
//! published. This file has two tests:
//!
//! - `published_table_parses` (always run, no simulation): every line
//!   has its fields, every preset exists, every run edit applies.
//! - `fidelity_seeds_report` (`#[ignore]`d: it simulates): runs the A and
//!   B side of every simulable line over several seeds and writes
//!   `docs/fidelity-seeds.md` (published B/A against simulated B/A, and
//!   whether the direction agrees). Run it with
//!
//!   ```text
//!   cargo test --release -p eevdf-scenario --test seeds_published -- --ignored --nocapture
//!   ```
//!
//!   `EEVDF_FIDELITY_SEEDS` (default 9: bimodal rows need them) sets the number of seeds,
//!   `EEVDF_FIDELITY_JOBS` (default 2) the worker threads,
//!   `EEVDF_FIDELITY_OUT` the output path.
//!
//! The line format is documented at the top of `published.txt`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use eevdf_scenario::presets::preset;
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::{LatencyHist, RoleKind, Sim};

/// Relative change under which a simulated change counts as flat.
const FLAT: f64 = 0.01;
/// Published changes over this are the ones the summary counts.
const BIG: f64 = 0.05;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[derive(Clone, Debug)]
struct Entry {
    line: usize,
    thread: String,
    table: String,
    metric: String,
    a_label: String,
    a_val: String,
    b_label: String,
    b_val: String,
    better: String,
    preset: String,
    sim: String,
    a_ops: String,
    b_ops: String,
    reason: String,
}

/// The data lines of a `" | "`-separated file (blank lines and `#`
/// comments skipped): (0-based line index, the line, its fields).
fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, raw)| {
        let line = raw.trim();
        (!line.is_empty() && !line.starts_with('#'))
            .then(|| (i, line, line.split(" | ").map(str::trim).collect()))
    })
}

fn parse_file(text: &str) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for (i, line, f) in data_lines(text) {
        if f.len() != 13 {
            return Err(format!(
                "line {}: {} fields, want 13: {line}",
                i + 1,
                f.len()
            ));
        }
        let e = Entry {
            line: i + 1,
            thread: f[0].into(),
            table: f[1].into(),
            metric: f[2].into(),
            a_label: f[3].into(),
            a_val: f[4].into(),
            b_label: f[5].into(),
            b_val: f[6].into(),
            better: f[7].into(),
            preset: f[8].into(),
            sim: f[9].into(),
            a_ops: f[10].into(),
            b_ops: f[11].into(),
            reason: f[12].into(),
        };
        if !matches!(e.better.as_str(), "lower" | "higher") {
            return Err(format!("line {}: better is `{}`", e.line, e.better));
        }
        if published_ratio(&e).is_none() {
            return Err(format!(
                "line {}: values `{}` / `{}`",
                e.line, e.a_val, e.b_val
            ));
        }
        if e.preset != "-" && preset(&e.preset).is_none() {
            return Err(format!("line {}: no preset `{}`", e.line, e.preset));
        }
        if differs_why(&e) == Some("") {
            return Err(format!(
                "line {}: a `differs:` reason without a why",
                e.line
            ));
        }
        if is_simulated(&e) && (e.preset == "-" || e.sim == "-") {
            return Err(format!(
                "line {}: simulable line without preset/sim",
                e.line
            ));
        }
        out.push(e);
    }
    Ok(out)
}

/// A published number: `0,863` (decimal comma) or `1273`.
fn num(s: &str) -> Option<f64> {
    s.replace(',', ".").parse::<f64>().ok()
}

/// Whether a line is simulated: its reason is `-`, or `differs: WHY`
/// (simulated, and WHY says why its direction differs).
fn is_simulated(e: &Entry) -> bool {
    e.reason == "-" || e.reason.starts_with("differs:")
}

/// A simulated line's `differs:` note: why its direction differs.
fn differs_why(e: &Entry) -> Option<&str> {
    e.reason.strip_prefix("differs:").map(str::trim)
}

/// A percent column as the thread prints it (`-19.89%`), as a factor
/// against the table's base: mmtests and Ryan's tables give
/// "improvement" percents, so 1 - p/100 when lower is better and
/// 1 + p/100 when higher is better. `None` when `v` is not a percent.
fn percent_factor(v: &str, better: &str) -> Option<f64> {
    let p = num(v.strip_suffix('%')?)? / 100.0;
    let f = if better == "lower" { 1.0 - p } else { 1.0 + p };
    (f > 0.0).then_some(f)
}

/// Published B/A: values as printed; a percent B is B's factor against
/// the base (A then may be `-`); with A a percent too, both are against
/// the same base and B/A is the ratio of their factors.
fn published_ratio(e: &Entry) -> Option<f64> {
    let factor = |v: &str| percent_factor(v, &e.better);
    match (e.a_val.ends_with('%'), e.b_val.ends_with('%')) {
        (false, true) => factor(&e.b_val),
        (true, true) => Some(factor(&e.b_val)? / factor(&e.a_val)?),
        (true, false) => None,
        (false, false) => {
            let a = num(&e.a_val)?;
            (a != 0.0).then_some(num(&e.b_val)? / a)
        }
    }
}

/// Applies a run's edits: `f:TOKENS` (features), `s:KEY=VALUE` (the
/// CLI's `--set`), `r:OLD=>NEW` (replace text in the preset's scenario
/// text, e.g. `r:groups=12=>groups=1`), separated by `;`; `-` is none.
fn build(preset_name: &str, ops: &str, seed: u64) -> Result<Scenario, String> {
    let p = preset(preset_name).ok_or(format!("no preset {preset_name}"))?;
    let mut text = p.text.to_string();
    let ops: Vec<&str> = if ops == "-" {
        Vec::new()
    } else {
        ops.split(';')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .collect()
    };
    for op in &ops {
        if let Some(r) = op.strip_prefix("r:") {
            let (old, new) = r.split_once("=>").ok_or(format!("bad replace {op}"))?;
            if !text.contains(old) {
                return Err(format!("{preset_name}: `{old}` not in the preset text"));
            }
            text = text.replace(old, new);
        }
    }
    let mut sc = Scenario::parse(&text).map_err(|e| format!("{preset_name} {ops:?}: {e}"))?;
    for op in &ops {
        if let Some(f) = op.strip_prefix("f:") {
            sc.apply_features(f).map_err(|e| format!("{op}: {e}"))?;
        } else if let Some(s) = op.strip_prefix("s:") {
            sc.set(s).map_err(|e| format!("{op}: {e}"))?;
        } else if !op.starts_with("r:") {
            return Err(format!("unknown edit {op}"));
        }
    }
    sc.set(&format!("seed={seed}")).map_err(|e| e.to_string())?;
    Ok(sc)
}

/// Every metric one run offers, by key:
/// `lat:NAME:P` (P = p50 p90 p99 p99.9 max mean, µs, all threads of the
/// directive), `wlat:NAME:P` (schbench workers only, µs),
/// `hbtime:NAME` (seconds per million messages, i.e. 1/throughput, the
/// shape of hackbench's completion time), `rps:NAME`, `reqlat:NAME:P`
/// (schbench request latency, µs), `cpu:NAME` (CPU ms).
fn run_metrics(sc: &Scenario) -> HashMap<String, f64> {
    let mut sim = Sim::new(sc.sim_config());
    let end = sim.duration();
    sim.run_until(end);
    let hists = sim.histograms();
    let r = sim.finish(end);
    let mut m = HashMap::new();
    let us = |ns: u64| ns as f64 / 1000.0;
    let put_lat = |m: &mut HashMap<String, f64>, pre: &str, l: &eevdf_sim::LatencyStats| {
        m.insert(format!("{pre}:p50"), us(l.p50));
        m.insert(format!("{pre}:p90"), us(l.p90));
        m.insert(format!("{pre}:p99"), us(l.p99));
        m.insert(format!("{pre}:p99.9"), us(l.p99_9));
        m.insert(format!("{pre}:max"), us(l.max));
        m.insert(format!("{pre}:mean"), l.mean_ns() / 1000.0);
    };
    for n in &r.by_name {
        put_lat(&mut m, &format!("lat:{}", n.name), &n.latency);
        m.insert(format!("cpu:{}", n.name), n.cpu_ns as f64 / 1e6);
    }
    for h in &r.hackbench {
        if h.throughput > 0.0 {
            m.insert(format!("hbtime:{}", h.name), 1e6 / h.throughput);
        }
    }
    for s in &r.schbench {
        m.insert(format!("rps:{}", s.name), s.rps);
        put_lat(&mut m, &format!("reqlat:{}", s.name), &s.request_latency);
    }
    // schbench reports the workers' wakeup latency: merge their histograms.
    let mut workers: BTreeMap<String, LatencyHist> = BTreeMap::new();
    if hists.len() == r.tasks.len() {
        for (t, h) in r.tasks.iter().zip(&hists) {
            if t.role != RoleKind::Worker {
                continue;
            }
            let name = t.name.rsplit_once('.').map_or(t.name.as_str(), |x| x.0);
            let hist = workers.entry(name.to_string()).or_default();
            for &(v, c) in h {
                hist.record_n(v, c);
            }
        }
    }
    for (name, h) in workers {
        put_lat(&mut m, &format!("wlat:{name}"), &h.stats());
    }
    m
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn dir(r: f64) -> i8 {
    if r > 1.0 + FLAT {
        1
    } else if r < 1.0 - FLAT {
        -1
    } else {
        0
    }
}

fn arrow(d: i8) -> &'static str {
    match d {
        1 => "up",
        -1 => "down",
        _ => "flat",
    }
}

fn env_num(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v| v > 0)
        .unwrap_or(d)
}

fn load() -> Vec<Entry> {
    let path = root().join("tests/seeds/published.txt");
    let text = std::fs::read_to_string(&path).expect("tests/seeds/published.txt");
    parse_file(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// A comparison checked on real kernels (`tests/seeds/kernel.txt`).
#[derive(Clone, Debug)]
struct Check {
    line: usize,
    /// thread, table, metric, A label, B label: the comparison's key.
    key: [String; 5],
    refs: Refs,
    a_variant: String,
    b_variant: String,
    /// The kernel series the check reads.
    series: Vec<String>,
}

/// Where a check's kernel numbers are.
#[derive(Clone, Debug)]
enum Refs {
    /// A one-CPU fidelity row's files, `tests/kernel-ref/ROW.VARIANT.SERIES.json`,
    /// and their field: p50 p90 p99 p99_9 max.
    Latency { row: String, field: &'static str },
    /// A throughput sweep, `tests/kernel-ref/NAME.jsonl`: the cells with
    /// these task axes; B/A of hackbench's seconds per message.
    Hackbench {
        name: String,
        axes: Vec<(String, String)>,
    },
}

/// The kernel series a check reads unless its line names them
/// (`eevdf kernel fidelity` runs both).
const CHECK_SERIES: [&str; 2] = ["7.2", "6.12"];

fn parse_checks(text: &str) -> Result<Vec<Check>, String> {
    let mut out = Vec::new();
    for (i, _, f) in data_lines(text) {
        let at = |m: String| format!("kernel.txt line {}: {m}", i + 1);
        let (fields, series) = match f.len() {
            9 => (&f[..9], CHECK_SERIES.join(" ")),
            10 if !f[9].trim().is_empty() => (&f[..9], f[9].to_string()),
            10 => return Err(at("an empty series field".into())),
            n => return Err(at(format!("{n} fields, want 9 or 10"))),
        };
        let &[th, ta, me, al, bl, row, av, bv, metric] = fields else {
            unreachable!("nine fields")
        };
        let field = match metric {
            "p50" => Some("p50"),
            "p90" => Some("p90"),
            "p99" => Some("p99"),
            "p99.9" => Some("p99_9"),
            "max" => Some("max"),
            "hbtime" => None,
            _ => return Err(at(format!("metric `{metric}`"))),
        };
        let refs = match field {
            Some(field) => Refs::Latency {
                row: row.into(),
                field,
            },
            None => {
                let mut words = row.split_whitespace();
                let name = words.next().ok_or_else(|| at("no reference".into()))?;
                let axes = words
                    .map(|w| {
                        w.split_once('=')
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .ok_or_else(|| at(format!("axis `{w}`: want KEY=VALUE")))
                    })
                    .collect::<Result<_, _>>()?;
                Refs::Hackbench {
                    name: name.into(),
                    axes,
                }
            }
        };
        out.push(Check {
            line: i + 1,
            key: [th, ta, me, al, bl].map(String::from),
            refs,
            a_variant: av.into(),
            b_variant: bv.into(),
            series: series.split_whitespace().map(String::from).collect(),
        });
    }
    Ok(out)
}

fn load_checks() -> Vec<Check> {
    let path = root().join("tests/seeds/kernel.txt");
    let text = std::fs::read_to_string(&path).expect("tests/seeds/kernel.txt");
    parse_checks(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn entry_key(e: &Entry) -> [String; 5] {
    [&e.thread, &e.table, &e.metric, &e.a_label, &e.b_label].map(|s| s.clone())
}

/// One side of a latency check on one series: (kernel release, median
/// over seeds of the field, ns), from the committed reference file.
fn kernel_side(
    row: &str,
    variant: &str,
    series: &str,
    field: &str,
) -> Result<(String, f64), String> {
    let path = root().join(format!("tests/kernel-ref/{row}.{variant}.{series}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let release = v["kernel"].as_str().unwrap_or("?").to_string();
    let vals: Option<Vec<f64>> = v["seeds"]
        .as_array()
        .map(|a| a.iter().map(|s| s[field].as_f64()).collect())
        .unwrap_or_default();
    match vals {
        Some(vals) if !vals.is_empty() => Ok((release, median(vals))),
        _ => Err(format!("{}: no seeds with {field}", path.display())),
    }
}

/// One side of a hackbench check on one series: (kernel release, its
/// vCPUs and machine, median over seeds of messages per second), from the sweep's
/// kernel cells with the check's axes and `features` = `variant`.
fn hackbench_side(
    name: &str,
    axes: &[(String, String)],
    variant: &str,
    series: &str,
) -> Result<(String, String, f64), String> {
    let path = root().join(format!("tests/kernel-ref/{name}.jsonl"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut release = None;
    let mut rates = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{}: {e}", path.display()))?;
        let cell: HashMap<&str, &str> = v["axes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| Some((a[0].as_str()?, a[1].as_str()?)))
            .collect();
        let wanted = [("kernel", series), ("features", variant)]
            .into_iter()
            .chain(axes.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .all(|(k, want)| cell.get(k) == Some(&want));
        if !wanted {
            continue;
        }
        // Every varied axis must be named, or the median pools scenarios.
        let named = |k: &str| {
            ["kernel", "features", "seed"].contains(&k) || axes.iter().any(|(a, _)| a == k)
        };
        if let Some(k) = cell.keys().find(|k| !named(k)) {
            return Err(format!(
                "{}: axis {k} is varied but not named",
                path.display()
            ));
        }
        let r = &v["result"];
        let src = &r["source"];
        let messages: Option<u64> = r["hackbench"]
            .as_array()
            .map(|h| h.iter().filter_map(|g| g["messages"].as_u64()).sum());
        let (Some(messages), Some(ns)) = (messages, r["sim_ns"].as_u64().filter(|&n| n > 0)) else {
            return Err(format!("{}: a cell without messages", path.display()));
        };
        rates.push(messages as f64 * 1e9 / ns as f64);
        let (Some(kernel), Some(cpus)) = (src["kernel"].as_str(), src["cpus"].as_u64()) else {
            return Err(format!(
                "{}: a cell without its kernel or CPUs",
                path.display()
            ));
        };
        // A machine with a topology is named: `8 vCPUs (custom nodes=2 ...)`.
        let machine = r["scenario"]
            .as_str()
            .and_then(|t| t.lines().find_map(|l| l.strip_prefix("machine ")))
            .filter(|m| !m.starts_with("smp") && *m != "up");
        let cpus = match machine {
            Some(m) => format!("{cpus} vCPUs ({m})"),
            None => format!("{cpus} vCPUs"),
        };
        release = Some((kernel.to_string(), cpus));
    }
    match release {
        Some((release, cpus)) => Ok((release, cpus, median(rates))),
        None => Err(format!(
            "{}: no {series} cell with {variant} and {axes:?}",
            path.display()
        )),
    }
}

/// Each series' (kernel and its CPUs, kernel B/A) for a check.
fn kernel_ratios(c: &Check) -> Result<Vec<(String, f64)>, String> {
    let short = |release: &str| release.split('+').next().unwrap_or(release).to_string();
    c.series
        .iter()
        .map(|series| match &c.refs {
            Refs::Latency { row, field } => {
                let (release, a) = kernel_side(row, &c.a_variant, series, field)?;
                let (_, b) = kernel_side(row, &c.b_variant, series, field)?;
                if a <= 0.0 {
                    return Err(format!("{row} {series}: A is 0"));
                }
                Ok((format!("{} on 1 CPU", short(&release)), b / a))
            }
            Refs::Hackbench { name, axes } => {
                let (release, cpus, a) = hackbench_side(name, axes, &c.a_variant, series)?;
                let (_, _, b) = hackbench_side(name, axes, &c.b_variant, series)?;
                if a <= 0.0 || b <= 0.0 {
                    return Err(format!("{name} {series}: a side did no work"));
                }
                // Seconds per message: B/A of the time is A/B of the rate.
                Ok((format!("{} on {cpus}", short(&release)), a / b))
            }
        })
        .collect()
}

#[test]
fn published_table_parses() {
    let entries = load();
    assert!(entries.len() >= 100, "{} lines", entries.len());
    for e in entries.iter().filter(|e| is_simulated(e)) {
        for ops in [&e.a_ops, &e.b_ops] {
            build(&e.preset, ops, 1).unwrap_or_else(|err| panic!("line {}: {err}", e.line));
        }
    }
}

#[test]
fn published_ratio_reads_values_and_percents() {
    let line = |a: &str, b: &str, better: &str| {
        format!("t | T | m | A | {a} | B | {b} | {better} | - | - | - | - | hw: x")
    };
    let ratio = |a, b, better| {
        let es = parse_file(&line(a, b, better)).map_err(|e| e.to_string())?;
        published_ratio(&es[0]).ok_or_else(|| "no ratio".to_string())
    };
    let near = |r: Result<f64, String>, want: f64| (r.unwrap() - want).abs() < 1e-9;
    assert!(near(ratio("0,863", "0,764", "lower"), 0.764 / 0.863));
    // Ryan's improvement percents: -18.36 % is 18.36 % more seconds.
    assert!(near(ratio("-", "-18.36%", "lower"), 1.1836));
    assert!(near(ratio("5085.92", "0.27%", "higher"), 1.0027));
    // Two columns against the same base: their factors' ratio.
    assert!(near(ratio("-0.41%", "-18.36%", "lower"), 1.1836 / 1.0041));
    assert!(near(ratio("7.63%", "-1.33%", "higher"), 0.9867 / 1.0763));
    // A percent A needs a percent B; a factor must stay positive.
    assert!(ratio("5%", "12", "lower").is_err());
    assert!(ratio("-", "100%", "lower").is_err());
    let simulated_line =
        "t | T | m | A | 1 | B | 2 | lower | nb-v5-hackbench | hbtime:hb | - | - | differs: why";
    assert!(is_simulated(&parse_file(simulated_line).unwrap()[0]));
    assert!(parse_file(&simulated_line.replace("differs: why", "differs:")).is_err());
}

#[test]
fn every_kernel_check_names_a_comparison_and_its_references() {
    let entries = load();
    let checks = load_checks();
    assert!(!checks.is_empty());
    for c in &checks {
        let n = entries.iter().filter(|e| entry_key(e) == c.key).count();
        assert_eq!(n, 1, "kernel.txt line {}: {n} comparisons match", c.line);
        let r = kernel_ratios(c).unwrap_or_else(|e| panic!("kernel.txt line {}: {e}", c.line));
        assert!(
            r.iter().all(|(_, x)| x.is_finite() && *x > 0.0),
            "kernel.txt line {}: B/A {r:?}",
            c.line
        );
    }
    assert!(parse_checks("a | b").is_err());
    assert!(parse_checks("a | b | c | d | e | f | g | h | p42").is_err());
    assert!(parse_checks("a | b | c | d | e | f groups | g | h | hbtime").is_err());
    assert!(parse_checks("a | b | c | d | e | f | g | h | p99 | 7.2 | x").is_err());
    assert!(parse_checks("a | b | c | d | e | f | g | h | p99 | ").is_err());
}

fn status(e: &Entry) -> (&'static str, String) {
    let r = e.reason.as_str();
    for (pre, label) in [
        ("hw:", "hardware"),
        ("nopreset:", "no preset"),
        ("notmodelled:", "not modelled"),
        ("cost:", "not run"),
    ] {
        if let Some(rest) = r.strip_prefix(pre) {
            return (label, rest.trim().to_string());
        }
    }
    ("other", r.to_string())
}

/// Every checking kernel moves the published way.
fn kernels_side_with(pub_r: f64, kernel: &[(String, f64)]) -> bool {
    !kernel.is_empty() && kernel.iter().all(|k| dir(k.1) == dir(pub_r))
}

/// No checking kernel moves the published way.
fn kernels_contradict(pub_r: f64, kernel: &[(String, f64)]) -> bool {
    !kernel.is_empty() && kernel.iter().all(|k| dir(k.1) != dir(pub_r))
}

/// The direction cell's kernel part: each kernel's B/A and what it says
/// of the thread.
fn kernel_note(pub_r: f64, kernel: &[(String, f64)]) -> String {
    if kernel.is_empty() {
        return String::new();
    }
    let each: Vec<String> = kernel
        .iter()
        .map(|(k, r)| format!("{k} {r:.3} ({})", arrow(dir(*r))))
        .collect();
    let verdict = if kernels_side_with(pub_r, kernel) {
        "the kernels agree with the thread"
    } else if kernels_contradict(pub_r, kernel) {
        "the kernels contradict the thread"
    } else {
        "the kernels disagree with each other"
    };
    format!("<br>kernel B/A {}: {verdict}", each.join(", "))
}

fn fmt(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// One run's metrics, or the simulator's panic message.
type RunOut = Result<HashMap<String, f64>, String>;
/// A run: (preset, edits, seed).
type RunKey = (String, String, u64);

/// The distinct runs the simulated entries need, in file order.
fn run_keys(entries: &[Entry], nseeds: u64) -> Vec<RunKey> {
    let mut keys: Vec<RunKey> = Vec::new();
    let mut seen: HashSet<RunKey> = HashSet::new();
    for e in entries.iter().filter(|e| is_simulated(e)) {
        for ops in [&e.a_ops, &e.b_ops] {
            for s in 1..=nseeds {
                let k = (e.preset.clone(), ops.clone(), s);
                if seen.insert(k.clone()) {
                    keys.push(k);
                }
            }
        }
    }
    keys
}

/// Runs every key on `jobs` threads. A run that panics (a simulator
/// bug) is recorded, not fatal.
fn run_all(keys: &[RunKey], jobs: usize) -> HashMap<RunKey, RunOut> {
    let results: Mutex<HashMap<RunKey, RunOut>> = Mutex::new(HashMap::new());
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(k) = keys.get(i) else { break };
                let t = Instant::now();
                let sc = build(&k.0, &k.1, k.2).unwrap_or_else(|e| panic!("{e}"));
                let m = std::panic::catch_unwind(|| run_metrics(&sc)).map_err(|p| {
                    p.downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "panic".into())
                });
                eprintln!(
                    "[{}/{}] {} {} seed {} {:.1}s",
                    i + 1,
                    keys.len(),
                    k.0,
                    k.1,
                    k.2,
                    t.elapsed().as_secs_f64()
                );
                results.lock().unwrap().insert(k.clone(), m);
            });
        }
    });
    results.into_inner().unwrap()
}

/// B/A, with a side at 0 kept finite where both are.
fn ratio(a: f64, b: f64) -> f64 {
    if a > 0.0 {
        b / a
    } else if b == 0.0 {
        1.0
    } else {
        f64::INFINITY
    }
}

/// One comparison of the report with both sides' numbers.
struct Row<'a> {
    e: &'a Entry,
    pub_r: f64,
    /// Simulated medians of A and B, and their B/A.
    sim: Option<(f64, f64, f64)>,
    /// Seeds whose own B/A moves the published way, of all seeds.
    votes: (usize, usize),
    panic: Option<String>,
    /// Each kernel's (release, B/A) where the comparison is checked.
    kernel: Vec<(String, f64)>,
}

impl Row<'_> {
    fn agrees(&self) -> bool {
        self.sim.is_some_and(|s| dir(self.pub_r) == dir(s.2))
    }

    fn big(&self) -> bool {
        (self.pub_r - 1.0).abs() > BIG
    }

    /// The verdict holds when at least two thirds of the seeds, each by
    /// its own B/A, give it: bimodal rows can flip with the median seed.
    fn holds(&self) -> bool {
        let (with, n) = self.votes;
        let same = if self.agrees() { with } else { n - with };
        same * 3 >= n * 2
    }
}

/// Each seed's value of one side, seed 1 first; `Ok(None)` when a run
/// lacks the metric, `Err` when the simulator panicked on a seed.
fn sim_side(
    results: &HashMap<RunKey, RunOut>,
    e: &Entry,
    ops: &str,
    nseeds: u64,
) -> Result<Option<Vec<f64>>, String> {
    let mut v = Vec::new();
    for s in 1..=nseeds {
        match results.get(&(e.preset.clone(), ops.to_string(), s)) {
            Some(Ok(m)) => match m.get(&e.sim) {
                Some(x) => v.push(*x),
                None => return Ok(None),
            },
            Some(Err(msg)) => return Err(format!("simulator panicked (seed {s}): {msg}")),
            None => return Ok(None),
        }
    }
    Ok(Some(v))
}

fn report_row<'a>(
    e: &'a Entry,
    results: &HashMap<RunKey, RunOut>,
    nseeds: u64,
    checks: &[Check],
) -> Row<'a> {
    let pub_r = published_ratio(e).unwrap();
    let mut panic = None;
    let mut votes = (0, 0);
    let sim = if is_simulated(e) {
        match (
            sim_side(results, e, &e.a_ops, nseeds),
            sim_side(results, e, &e.b_ops, nseeds),
        ) {
            (Err(m), _) | (_, Err(m)) => {
                panic = Some(m);
                None
            }
            (Ok(Some(a)), Ok(Some(b))) => {
                let with = a
                    .iter()
                    .zip(&b)
                    .filter(|(x, y)| dir(ratio(**x, **y)) == dir(pub_r))
                    .count();
                votes = (with, a.len());
                let (a, b) = (median(a), median(b));
                Some((a, b, ratio(a, b)))
            }
            _ => panic!("line {}: metric {} missing", e.line, e.sim),
        }
    } else {
        None
    };
    let key = entry_key(e);
    // Every line that checks this comparison: each adds its kernels.
    let kernel = checks
        .iter()
        .filter(|c| c.key == key)
        .flat_map(|c| {
            kernel_ratios(c).unwrap_or_else(|m| panic!("kernel.txt line {}: {m}", c.line))
        })
        .collect();
    Row {
        e,
        pub_r,
        sim,
        votes,
        panic,
        kernel,
    }
}

#[test]
#[ignore = "simulates every published comparison; writes docs/fidelity-seeds.md"]
fn fidelity_seeds_report() {
    let t0 = Instant::now();
    let entries = load();
    let nseeds = env_num("EEVDF_FIDELITY_SEEDS", 9) as u64;
    let jobs_n = env_num("EEVDF_FIDELITY_JOBS", 2);
    let keys = run_keys(&entries, nseeds);
    let results = run_all(&keys, jobs_n);
    let checks = load_checks();
    let rows: Vec<Row> = entries
        .iter()
        .map(|e| report_row(e, &results, nseeds, &checks))
        .collect();

    let mut md = String::new();
    summary(&mut md, &rows, nseeds);
    let simulated = rows.iter().filter(|r| r.sim.is_some()).count();
    let big = rows.iter().filter(|r| r.sim.is_some() && r.big()).count();
    let big_agree = rows.iter().filter(|r| r.agrees() && r.big()).count();
    let _ = writeln!(
        md,
        "- Run time: {:.0} s for {} simulations ({} worker threads).\n",
        t0.elapsed().as_secs_f64(),
        keys.len(),
        jobs_n
    );
    coverage_and_presets(&mut md, &rows);
    for th in threads(&rows) {
        thread_table(&mut md, &rows, &th);
    }
    let out = std::env::var("EEVDF_FIDELITY_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join("docs/fidelity-seeds.md"));
    std::fs::write(&out, md).expect("write the report");
    eprintln!(
        "wrote {} ({} comparisons, {simulated} simulated, {big_agree}/{big} >5 % agree) in {:.0} s",
        out.display(),
        rows.len(),
        t0.elapsed().as_secs_f64()
    );
}

/// The threads, in file order.
fn threads(rows: &[Row]) -> Vec<String> {
    let mut threads: Vec<String> = Vec::new();
    for r in rows {
        if !threads.contains(&r.e.thread) {
            threads.push(r.e.thread.clone());
        }
    }
    threads
}

/// The report's head: method, then the summary counts (up to the run
/// time, which the caller adds).
fn summary(md: &mut String, rows: &[Row], nseeds: u64) {
    let n = rows.len();
    let simulated: Vec<&Row> = rows.iter().filter(|r| r.sim.is_some()).collect();
    let big: Vec<&Row> = simulated.iter().copied().filter(|r| r.big()).collect();
    let big_agree = big.iter().filter(|r| r.agrees()).count();
    let all_agree = simulated.iter().filter(|r| r.agrees()).count();
    let all_big = rows.iter().filter(|r| r.big()).count();
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        if r.panic.is_some() {
            *by_status.entry("simulator panic").or_default() += 1;
        } else if r.sim.is_none() {
            *by_status.entry(status(r.e).0).or_default() += 1;
        }
    }
    let mut tables: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        let t = (r.e.thread.as_str(), r.e.table.as_str());
        if !tables.contains(&t) {
            tables.push(t);
        }
    }
    let _ = writeln!(md, "# Fidelity against the seed threads\n");
    let _ = writeln!(
        md,
        "Generated by `cargo test --release -p eevdf-scenario --test seeds_published -- \
         --ignored` from `tests/seeds/published.txt`; do not edit by hand. Each simulated \
         side is the median over seeds 1..={nseeds} of the preset with the line's edits. \
         A direction agrees when published and simulated B/A move the same way; a \
         simulated change within ±{:.0} % counts as flat (it agrees only with a flat \
         published change). Simulated `hbtime` values are seconds per million \
         messages (1/throughput), not the benchmark's run time: only their B/A \
         compares with the published seconds. Where a comparison is also checked \
         on real kernels (`tests/seeds/kernel.txt`), the direction cell adds each \
         kernel's B/A, the median over the reference's seeds: a one-CPU fidelity row's, \
         or hackbench on four vCPUs, on eight booted as two NUMA nodes of two SMT cores and on Mel's 64-vCPU Xeon, under QEMU (docs/fidelity.md has both sides of \
         those).\n",
        FLAT * 100.0
    );
    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(
        md,
        "- Comparisons transcribed: **{n}**, from {} tables in {} threads.",
        tables.len(),
        threads(rows).len()
    );
    let _ = writeln!(
        md,
        "- Simulated: **{}**; not simulated: {}.",
        simulated.len(),
        by_status
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        md,
        "- Published change over {:.0} %: **{all_big}** comparisons, of which **{}** simulated; \
         the simulated direction agrees on **{big_agree} of {}**.",
        BIG * 100.0,
        big.len(),
        big.len()
    );
    let big_differ: Vec<&Row> = big.iter().copied().filter(|r| !r.agrees()).collect();
    let _ = writeln!(
        md,
        "- Seed by seed (each seed's own B/A against the published direction): \
         {} of the {big_agree} agreements and {} of the {} disagreements hold \
         on at least two thirds of the seeds; the rest hang on which seed is the median.",
        big.iter().filter(|r| r.agrees() && r.holds()).count(),
        big_differ.iter().filter(|r| r.holds()).count(),
        big_differ.len(),
    );
    let _ = writeln!(
        md,
        "- All simulated comparisons: direction agrees on {all_agree} of {}.",
        simulated.len()
    );
    let checked = rows.iter().filter(|r| !r.kernel.is_empty()).count();
    let with_thread = rows
        .iter()
        .filter(|r| !r.kernel.is_empty() && kernels_side_with(r.pub_r, &r.kernel))
        .count();
    let contradicted = big_differ
        .iter()
        .filter(|r| kernels_contradict(r.pub_r, &r.kernel))
        .count();
    let explained = big_differ
        .iter()
        .filter(|r| differs_why(r.e).is_some())
        .count();
    // Disjoint: a reason first, then every kernel against the thread.
    let contradicted_only = big_differ
        .iter()
        .filter(|r| differs_why(r.e).is_none() && kernels_contradict(r.pub_r, &r.kernel))
        .count();
    let unexplained = big_differ.len() - explained - contradicted_only;
    let stale: Vec<usize> = simulated
        .iter()
        .filter(|r| r.agrees() && differs_why(r.e).is_some())
        .map(|r| r.e.line)
        .collect();
    let _ = writeln!(
        md,
        "- Checked on real kernels (`tests/seeds/kernel.txt`; the one-CPU fidelity \
         rows and hackbench on 4, 8 and 64 vCPUs): **{checked}** comparisons; every kernel moves the thread's way on \
         {with_thread}. Of the {} simulated disagreements over {:.0} %, **{contradicted}** \
         are contradicted by every kernel (the kernels move the other way or stay flat).",
        big_differ.len(),
        BIG * 100.0
    );
    let _ = writeln!(
        md,
        "- Of those {} disagreements, **{explained}** carry a reason (`differs:` in \
         `published.txt`, shown in their direction cell), {contradicted_only} more are \
         contradicted by every kernel, and **{unexplained}** {} neither.{}",
        big_differ.len(),
        if unexplained == 1 { "has" } else { "have" },
        if stale.is_empty() {
            String::new()
        } else {
            format!(" Lines whose `differs:` reason is stale (they agree now): {stale:?}.")
        }
    );
}

/// The data file's coverage lines and the agreement per preset.
fn coverage_and_presets(md: &mut String, rows: &[Row]) {
    let coverage = std::fs::read_to_string(root().join("tests/seeds/published.txt"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("#! "))
        .map(|l| format!("- {l}\n"))
        .collect::<String>();
    if !coverage.is_empty() {
        let _ = writeln!(md, "### Coverage (from the data file)\n\n{coverage}");
    }
    let mut per: BTreeMap<&str, (usize, usize, usize, usize)> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.sim.is_some()) {
        let x = per.entry(&r.e.preset).or_default();
        x.0 += 1;
        if r.agrees() {
            x.1 += 1;
        }
        if r.big() {
            x.2 += 1;
            if r.agrees() {
                x.3 += 1;
            }
        }
    }
    let _ = writeln!(md, "### By preset\n");
    let _ = writeln!(
        md,
        "| Preset | Simulated | Agree | Published >5 % | Agree (>5 %) |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|");
    for (p, (a, b, c, d)) in &per {
        let _ = writeln!(md, "| `{p}` | {a} | {b} | {c} | {d} |");
    }
    let _ = writeln!(md);
}

/// One thread's section: a table row per comparison.
fn thread_table(md: &mut String, rows: &[Row], th: &str) {
    let _ = writeln!(md, "## {th}\n");
    let _ = writeln!(
        md,
        "| Table | Metric | A | B | Pub. B/A | Preset | Sim A | Sim B | Sim B/A | Direction |"
    );
    let _ = writeln!(md, "|---|---|---|---|---:|---|---:|---:|---:|---|");
    for r in rows.iter().filter(|r| r.e.thread == th) {
        let e = r.e;
        let a = format!("{}: {}", e.a_label, e.a_val);
        let b = format!("{}: {}", e.b_label, e.b_val);
        let (sa, sb, sr, d) = match r.sim {
            Some((sa, sb, sr)) => (fmt(sa), fmt(sb), format!("{sr:.3}"), direction_cell(r, sr)),
            None => match &r.panic {
                Some(m) => ("".into(), "".into(), "".into(), format!("**{m}**")),
                None => {
                    let (s, why) = status(e);
                    ("".into(), "".into(), "".into(), format!("{s}: {why}"))
                }
            },
        };
        let p = if e.preset == "-" {
            "-".to_string()
        } else {
            format!("`{}`", e.preset)
        };
        let runs = if is_simulated(e) || e.sim != "-" {
            format!(" <br>`{}`; A `{}`, B `{}`", e.sim, e.a_ops, e.b_ops)
        } else {
            String::new()
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.3} | {}{} | {} | {} | {} | {} |",
            e.table,
            e.metric,
            a.replace('|', "/"),
            b.replace('|', "/"),
            r.pub_r,
            p,
            runs.replace('|', "/"),
            sa,
            sb,
            sr,
            d
        );
    }
    let _ = writeln!(md);
}

/// A simulated row's verdict, seed votes, reason and kernel note.
fn direction_cell(r: &Row, sr: f64) -> String {
    let ok = r.agrees();
    format!(
        "{} / {}: {} ({} of {} seeds the published way){}{}",
        arrow(dir(r.pub_r)),
        arrow(dir(sr)),
        if ok { "**agrees**" } else { "differs" },
        r.votes.0,
        r.votes.1,
        match (differs_why(r.e), ok) {
            (Some(why), false) => format!("<br>why: {why}"),
            (Some(why), true) => format!("<br>stale `differs:` reason: {why}"),
            (None, _) => String::new(),
        },
        kernel_note(r.pub_r, &r.kernel)
    )
}
