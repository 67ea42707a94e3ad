//! Reports: text, JSON (eevdf.result.v1) and LKML tables.
//!
//! Every function here is a pure function of its inputs: identical inputs
//! give byte-identical output. Integer nanoseconds are converted with
//! integer arithmetic wherever a rounding rule is stated, so no report
//! depends on float formatting quirks:
//!
//! * JSON: µs and ms carry 3 decimals (µs exact, ms rounded half up from
//!   ns), seconds 6 decimals, rates 3 decimals.
//! * text: µs and ms with 3 decimals, lines ≤ [`TEXT_WIDTH`] columns.
//! * LKML tables: whole µs rounded half up, lines ≤ [`MAIL_WIDTH`] columns,
//!   spaces only.
//! * cyclictest and schbench blocks: whole µs truncated, as those tools
//!   count.

use eevdf_sim::{LatencyStats, NameResult, SimResult};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// The `schema` value of [`json`].
pub const SCHEMA: &str = "eevdf.result.v1";
/// Widest line of [`text`].
pub const TEXT_WIDTH: usize = 80;
/// Widest line of [`lkml`] and [`compare`] (quoted `> ` still fits 80).
pub const MAIL_WIDTH: usize = 72;

// ---------------------------------------------------------------------
// Number conversions
// ---------------------------------------------------------------------

/// ns → µs as a float with 3 decimals (exact for integer ns).
fn us3(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// ns → ms as a float, rounded half up to 3 decimals.
fn ms3(ns: u64) -> f64 {
    ((u128::from(ns) + 500) / 1000) as f64 / 1000.0
}

/// ns → s as a float, rounded half up to 6 decimals.
fn s6(ns: u64) -> f64 {
    ((u128::from(ns) + 500) / 1000) as f64 / 1_000_000.0
}

/// A float rounded to 3 decimals (non-finite values pass through).
fn round3(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1000.0).round() / 1000.0
    } else {
        x
    }
}

/// Mean latency in ns, rounded half up to a whole ns (0 without samples).
fn mean_ns_rounded(s: &LatencyStats) -> u128 {
    if s.samples == 0 {
        return 0;
    }
    let n = u128::from(s.samples);
    (s.sum_ns * 2 + n) / (2 * n)
}

/// ns → whole µs, rounded half up.
fn us_round(ns: u64) -> u64 {
    ns / 1000 + u64::from(ns % 1000 >= 500)
}

/// Mean → whole µs, rounded half up (0 without samples).
fn mean_us_round(s: &LatencyStats) -> u64 {
    if s.samples == 0 {
        return 0;
    }
    let n = u128::from(s.samples);
    let us = (s.sum_ns + 500 * n) / (1000 * n);
    u64::try_from(us).unwrap_or(u64::MAX)
}

/// ns as µs text with exactly 3 decimals (`1234.567`).
fn us_text(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// ns as ms text, rounded half up to 3 decimals.
fn ms_text(ns: u64) -> String {
    let us = (u128::from(ns) + 500) / 1000;
    format!("{}.{:03}", us / 1000, us % 1000)
}

/// ns as s text, rounded half up to 6 decimals.
fn s_text(ns: u64) -> String {
    let us = (u128::from(ns) + 500) / 1000;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// A rate for the text report: 3 decimals, or scientific when huge.
fn rate_text(x: f64) -> String {
    if !x.is_finite() {
        "-".to_string()
    } else if x.abs() >= 1e12 {
        format!("{x:.3e}")
    } else {
        format!("{x:.3}")
    }
}

/// `part / whole` as a percentage with one decimal, rounded half up.
fn percent_text(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.0".to_string();
    }
    let w = u128::from(whole);
    let tenths = (u128::from(part) * 2000 + w) / (2 * w);
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// Control characters (tabs, newlines) as spaces, so that a user-given
/// name or label cannot break a table's layout.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// [`clean`]s `s` and truncates it to `width` characters, marking a cut
/// with `~`.
fn fit(s: &str, width: usize) -> String {
    let s = clean(s);
    if s.chars().count() <= width {
        return s;
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(width - 1).collect();
    out.push('~');
    out
}

fn width_of(s: &str) -> usize {
    s.chars().count()
}

// ---------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------

#[derive(Serialize)]
struct JsonLatency {
    min: f64,
    mean: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    p99_9: f64,
    max: f64,
}

impl JsonLatency {
    fn new(s: &LatencyStats) -> Self {
        if s.samples == 0 {
            return JsonLatency {
                min: 0.0,
                mean: 0.0,
                p50: 0.0,
                p90: 0.0,
                p99: 0.0,
                p99_9: 0.0,
                max: 0.0,
            };
        }
        JsonLatency {
            min: us3(s.min),
            mean: mean_ns_rounded(s) as f64 / 1000.0,
            p50: us3(s.p50),
            p90: us3(s.p90),
            p99: us3(s.p99),
            p99_9: us3(s.p99_9),
            max: us3(s.max),
        }
    }
}

#[derive(Serialize)]
struct JsonName {
    tasks: u32,
    samples: u64,
    cpu_ms: f64,
    latency_us: JsonLatency,
}

/// `by_name`: an object keyed by name, in `SimResult` order.
struct JsonByName<'a>(&'a [NameResult]);

impl Serialize for JsonByName<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for n in self.0 {
            let entry = JsonName {
                tasks: n.tasks,
                samples: n.latency.samples,
                cpu_ms: ms3(n.cpu_ns),
                latency_us: JsonLatency::new(&n.latency),
            };
            map.serialize_entry(&n.name, &entry)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct JsonTask<'a> {
    name: &'a str,
    role: &'a str,
    cpu_ms: f64,
    samples: u64,
    wakeups: u64,
    migrations: u64,
    latency_us: JsonLatency,
}

#[derive(Serialize)]
struct JsonCpu {
    cpu: u32,
    busy_ms: f64,
    switches: u64,
    nr_running_avg: f64,
    util: u64,
    capacity: u32,
}

#[derive(Serialize)]
struct JsonDomain<'a> {
    level: &'a str,
    migrations: u64,
}

#[derive(Serialize)]
struct JsonTotals {
    switches: u64,
    migrations: u64,
    wakeups: u64,
}

#[derive(Serialize)]
struct JsonHackbench<'a> {
    name: &'a str,
    messages: u64,
    completion_s: Option<f64>,
    throughput: f64,
}

#[derive(Serialize)]
struct JsonSchbench<'a> {
    name: &'a str,
    requests: u64,
    rps: f64,
    request_latency_us: JsonLatency,
}

#[derive(Serialize)]
struct JsonPartial {
    reason: &'static str,
    max_events: u64,
}

#[derive(Serialize)]
struct JsonResult<'a> {
    schema: &'static str,
    /// The engine that computed the result (the scenario's own `engine`
    /// line says which one made it).
    engine: &'static str,
    scenario: &'a str,
    sim_ns: u64,
    /// Present only with a `warmup` (added compatibly): latencies count
    /// wakeups from here on.
    #[serde(skip_serializing_if = "is_zero")]
    warmup_ns: u64,
    events: u64,
    /// Present only when the event budget stopped the run before its
    /// duration (added compatibly): `sim_ns` says how far it got.
    #[serde(skip_serializing_if = "Option::is_none")]
    partial: Option<JsonPartial>,
    by_name: JsonByName<'a>,
    tasks: Vec<JsonTask<'a>>,
    cpus: Vec<JsonCpu>,
    totals: JsonTotals,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    domains: Vec<JsonDomain<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hackbench: Vec<JsonHackbench<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    schbench: Vec<JsonSchbench<'a>>,
    /// Present only on results measured on a real kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a Source>,
}

/// Where a result was measured, when it was not simulated: the `source`
/// block of `eevdf.result.v1` (added compatibly, absent for simulations).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Source {
    /// `kernel`.
    pub kind: String,
    /// `uname -r -v` in the guest.
    pub uname: String,
    /// `/sys/kernel/debug/sched/features` read back after setup.
    pub features: String,
    /// The preemption model in force, read back.
    pub preempt: String,
    /// The kernel's `CONFIG_HZ` (`None` when its config is unknown).
    pub hz: Option<u32>,
    /// `base_slice_ns` read back.
    pub base_slice_ns: u64,
    pub cpus: u32,
    /// The kernel release (`7.2.13+deb14-cloud-amd64`).
    pub kernel: String,
    /// The Debian package and its version (empty for `--kernel PATH`).
    pub package: String,
    pub package_version: String,
    /// sha256 of the booted image.
    pub kernel_sha256: String,
    /// `qemu-system-x86_64 --version`, first line.
    pub qemu: String,
    /// `-icount shift=`.
    pub icount_shift: u32,
    /// QEMU `-seed`.
    pub seed: u64,
    /// sha256 of the guest runner binary.
    pub guest_sha256: String,
    /// What the run could not honour or should be read with care.
    pub warnings: Vec<String>,
}

/// The mail-safe block (formats.md §7, `eevdf run --format mail` and the
/// page's "copy for email"): the scenario text (with its `baseline` block
/// for an A/B table), a line saying where the numbers come from
/// ([`simulated_by`], [`measured_on`]), the LKML table, and last the bare
/// link, the only line allowed over 72 columns. The canonical text ends
/// with `end` and a newline, so a blank line follows it.
pub fn mail(scenario_text: &str, provenance: &str, table: &str, link: &str) -> String {
    format!(
        "{}\n{}\n\n{}\n{}\n",
        scenario_text,
        provenance,
        table.trim_end(),
        link
    )
}

/// The mail's provenance line for simulated numbers (a constant, not a
/// `format!`: the page's wasm budget; a test keeps the version right).
pub const SIMULATED_BY: &str = "Simulated by eevdf-playground engine 0.7, not a kernel run.";

/// [`SIMULATED_BY`], for `map_or_else`.
pub fn simulated_by() -> String {
    SIMULATED_BY.to_string()
}

/// The mail's provenance line for a kernel run.
pub fn measured_on(source: &Source) -> String {
    format!("Measured on kernel {} under QEMU -icount.", source.kernel)
}

/// `--format json`: one compact JSON object (schema `eevdf.result.v1`)
/// plus a trailing newline; byte-identical for identical inputs.
///
/// Counts are integers; `*_ms` are ms rounded half up to 3 decimals;
/// `latency_us` values are µs with 3 decimals (the mean rounded half up
/// to a whole ns first); `completion_s` is seconds rounded half up to 6
/// decimals, or `null` when the run did not finish; `throughput` and `rps`
/// are rounded to 3 decimals (`null` if not finite). A name without
/// samples gets a `latency_us` of zeros. `hackbench` and `schbench` appear
/// only when non-empty.
pub fn json(scenario_text: &str, r: &SimResult) -> String {
    json_with_source(scenario_text, r, None)
}

/// [`json`] of an A/B run: B's object with A's, a whole
/// `eevdf.result.v1` object of its own, as its last member `baseline`.
pub fn json_with_baseline(b_text: &str, b: &SimResult, a_text: &str, a: &SimResult) -> String {
    let outer = json(b_text, b);
    let inner = json(a_text, a);
    let outer = outer.trim_end().strip_suffix('}').unwrap_or(&outer);
    format!("{outer},\"baseline\":{}}}\n", inner.trim_end())
}

/// [`json`] with a `source` block last, for results measured on a kernel.
pub fn json_with_source(scenario_text: &str, r: &SimResult, source: Option<&Source>) -> String {
    let doc = JsonResult {
        source,
        schema: SCHEMA,
        engine: crate::scenario::ENGINE_VERSION,
        scenario: scenario_text,
        sim_ns: r.sim_ns,
        warmup_ns: r.warmup_ns,
        events: r.events,
        partial: r.partial.map(|p| JsonPartial {
            reason: "max-events",
            max_events: p.max_events,
        }),
        by_name: JsonByName(&r.by_name),
        tasks: r
            .tasks
            .iter()
            .map(|t| JsonTask {
                name: &t.name,
                role: t.role.as_str(),
                cpu_ms: ms3(t.cpu_ns),
                samples: t.latency.samples,
                wakeups: t.wakeups,
                migrations: t.migrations,
                latency_us: JsonLatency::new(&t.latency),
            })
            .collect(),
        cpus: r
            .cpus
            .iter()
            .map(|c| JsonCpu {
                cpu: c.cpu,
                busy_ms: ms3(c.busy_ns),
                switches: c.switches,
                nr_running_avg: c.nr_running_milli as f64 / 1000.0,
                util: c.util,
                capacity: c.capacity,
            })
            .collect(),
        domains: r
            .domains
            .iter()
            .map(|d| JsonDomain {
                level: &d.level,
                migrations: d.migrations,
            })
            .collect(),
        totals: JsonTotals {
            switches: r.totals.switches,
            migrations: r.totals.migrations,
            wakeups: r.totals.wakeups,
        },
        hackbench: r
            .hackbench
            .iter()
            .map(|h| JsonHackbench {
                name: &h.name,
                messages: h.messages,
                completion_s: h.completion_ns.map(s6),
                throughput: round3(h.throughput),
            })
            .collect(),
        schbench: r
            .schbench
            .iter()
            .map(|s| JsonSchbench {
                name: &s.name,
                requests: s.requests,
                rps: round3(s.rps),
                request_latency_us: JsonLatency::new(&s.request_latency),
            })
            .collect(),
    };
    let mut out =
        serde_json::to_string(&doc).expect("plain structs with string keys always serialize");
    out.push('\n');
    out
}

// ---------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------

/// Renders a table: column 0 left-aligned, the others right-aligned, two
/// spaces apart. Column 0 is truncated (`~`) if the table would be wider
/// than `width`; if even that cannot fit, each row is printed as a list of
/// `header: value` lines instead.
fn table(out: &mut String, head: &[&str], rows: &[Vec<String>], width: usize) {
    let ncol = head.len();
    let mut w: Vec<usize> = head.iter().map(|h| width_of(h)).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(ncol) {
            w[i] = w[i].max(width_of(cell));
        }
    }
    let gaps = 2 * ncol.saturating_sub(1);
    let rest: usize = w.iter().skip(1).sum::<usize>() + gaps;
    const MIN_FIRST: usize = 6;
    if rest + w[0] > width {
        if rest + MIN_FIRST.min(w[0]) > width {
            // Values alone are too wide: one `header: value` per line.
            for row in rows {
                out.push_str(&fit(row.first().map_or("", |s| s), width));
                out.push('\n');
                for (h, cell) in head.iter().zip(row).skip(1) {
                    out.push_str(&fit(&format!("  {h}: {cell}"), width));
                    out.push('\n');
                }
            }
            return;
        }
        w[0] = width - rest;
    }
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut s = String::new();
        for (i, cell) in cells.enumerate().take(ncol) {
            if i == 0 {
                s.push_str(&format!("{:<1$}", fit(cell, w[0]), w[0]));
            } else {
                s.push_str(&format!("  {:>1$}", cell, w[i]));
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&mut head.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
}

/// Latency cells `min p50 p90 p99 p99.9 max` in µs with 3 decimals (`-`
/// without samples).
fn latency_cells(name: &str, s: &LatencyStats) -> Vec<String> {
    let mut row = vec![name.to_string()];
    if s.samples == 0 {
        row.extend(std::iter::repeat_n("-".to_string(), 6));
    } else {
        row.extend([s.min, s.p50, s.p90, s.p99, s.p99_9, s.max].map(us_text));
    }
    row
}

const LATENCY_HEAD: [&str; 6] = ["min", "p50", "p90", "p99", "p99.9", "max"];

fn latency_head(first: &str) -> Vec<&str> {
    let mut h = vec![first];
    h.extend(LATENCY_HEAD);
    h
}

/// `--format text`: a human-readable summary, every line ≤ [`TEXT_WIDTH`]
/// columns: a header line (simulated time, events), a table of task names
/// (tasks, samples, cpu ms), a table of their latencies (µs, 3 decimals,
/// `-` without samples), per-CPU busy time and switches, totals, and the
/// hackbench/schbench sections when present.
pub fn text(r: &SimResult) -> String {
    let mut out = String::new();
    out.push_str(&fit(
        &format!(
            "eevdf: simulated {} s, {} events{}{}",
            s_text(r.sim_ns),
            r.events,
            match r.partial {
                Some(p) => format!(" (partial: stopped at --max-events {})", p.max_events),
                None => String::new(),
            },
            warmup_phrase(r.warmup_ns)
                .map(|p| format!(", {p}"))
                .unwrap_or_default()
        ),
        TEXT_WIDTH,
    ));
    out.push_str("\n\n");

    let rows: Vec<Vec<String>> = r
        .by_name
        .iter()
        .map(|n| {
            vec![
                n.name.clone(),
                n.tasks.to_string(),
                n.latency.samples.to_string(),
                ms_text(n.cpu_ns),
            ]
        })
        .collect();
    table(
        &mut out,
        &["NAME", "tasks", "samples", "cpu ms"],
        &rows,
        TEXT_WIDTH,
    );
    out.push('\n');

    // When the worst wakeup was due, as `perf sched latency` prints it:
    // a max in the first milliseconds is start-up (see `warmup`).
    let rows: Vec<Vec<String>> = r
        .by_name
        .iter()
        .map(|n| {
            let mut row = latency_cells(&n.name, &n.latency);
            row.push(match n.latency.max_at {
                Some(at) if n.latency.samples > 0 => s_text(at),
                _ => "-".to_string(),
            });
            row
        })
        .collect();
    let mut head = latency_head("latency us");
    head.push("max at s");
    table(&mut out, &head, &rows, TEXT_WIDTH);
    out.push('\n');

    let rows: Vec<Vec<String>> = r
        .cpus
        .iter()
        .map(|c| {
            vec![
                c.cpu.to_string(),
                ms_text(c.busy_ns),
                percent_text(c.busy_ns, r.sim_ns),
                c.switches.to_string(),
            ]
        })
        .collect();
    table(
        &mut out,
        &["CPU", "busy ms", "busy %", "switches"],
        &rows,
        TEXT_WIDTH,
    );
    out.push('\n');

    out.push_str("totals\n");
    let t = &r.totals;
    for (k, v) in [
        ("switches", t.switches),
        ("migrations", t.migrations),
        ("wakeups", t.wakeups),
    ] {
        out.push_str(&format!("  {k:<10}  {v}\n"));
    }

    if !r.hackbench.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = r
            .hackbench
            .iter()
            .map(|h| {
                vec![
                    h.name.clone(),
                    h.messages.to_string(),
                    h.completion_ns.map_or("-".to_string(), s_text),
                    rate_text(h.throughput),
                ]
            })
            .collect();
        table(
            &mut out,
            &["hackbench", "messages", "time s", "msg/s"],
            &rows,
            TEXT_WIDTH,
        );
    }

    if !r.schbench.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = r
            .schbench
            .iter()
            .map(|s| vec![s.name.clone(), s.requests.to_string(), rate_text(s.rps)])
            .collect();
        table(
            &mut out,
            &["schbench", "requests", "rps"],
            &rows,
            TEXT_WIDTH,
        );
        out.push('\n');
        let rows: Vec<Vec<String>> = r
            .schbench
            .iter()
            .map(|s| latency_cells(&s.name, &s.request_latency))
            .collect();
        table(&mut out, &latency_head("request us"), &rows, TEXT_WIDTH);
    }
    out
}

// ---------------------------------------------------------------------
// LKML pipe tables (formats.md §6 A)
// ---------------------------------------------------------------------

const ROW_LABELS: [&str; 7] = [
    "Total Samples",
    "Average",
    "Median (P50)",
    "90th Percentile",
    "99th Percentile",
    "99.9th Percentile",
    "Maximum",
];
/// Width of the row-label column ("99.9th Percentile" plus a space).
const LABEL_W: usize = 18;
/// Room for the value columns: `LABEL_W + W + " |" + C ≤ MAIL_WIDTH`.
const VALUES_W: usize = MAIL_WIDTH - LABEL_W - 2;
/// Largest percentage shown as a number.
const PCT_CAP: u128 = 9999;

/// The seven row values in whole µs (samples as a count), or `None`
/// without samples.
fn row_values(s: Option<&LatencyStats>) -> Option<[u64; 7]> {
    let s = s.filter(|s| s.samples > 0)?;
    Some([
        s.samples,
        mean_us_round(s),
        us_round(s.p50),
        us_round(s.p90),
        us_round(s.p99),
        us_round(s.p99_9),
        us_round(s.max),
    ])
}

/// `(sign, magnitude)` of the change from `a` to `b`, `+` = better.
/// Latency rows: lower is better, pct = round((a-b)/a*100). The samples
/// row: higher is better, pct = round((b-a)/a*100). Rounded half away from
/// zero; `inf` when a = 0 < b; `>9999` above the cap.
fn pct(a: u64, b: u64, higher_better: bool) -> (char, String) {
    let (a, b) = (i128::from(a), i128::from(b));
    let better = if higher_better { b > a } else { b < a };
    if a == 0 {
        return if b == 0 {
            (' ', "0".to_string())
        } else {
            (if better { '+' } else { '-' }, "inf".to_string())
        };
    }
    let num = ((a - b).unsigned_abs()) * 100;
    let den = a.unsigned_abs();
    let q = (num * 2 + den) / (2 * den);
    let sign = if q == 0 {
        ' '
    } else if better {
        '+'
    } else {
        '-'
    };
    let n = if q > PCT_CAP {
        format!(">{PCT_CAP}")
    } else {
        q.to_string()
    };
    (sign, n)
}

fn value_text(v: Option<&[u64; 7]>, i: usize) -> String {
    v.map_or("-".to_string(), |v| v[i].to_string())
}

/// One block: `NAME latency (us)`, the header row, seven rows.
/// `b` = the comparison column (label, values), if any.
fn pipe_block(
    name: &str,
    a_label: &str,
    a: Option<[u64; 7]>,
    b: Option<(&str, Option<[u64; 7]>)>,
) -> Vec<String> {
    const SUFFIX: &str = " latency (us)";
    let mut lines = vec![format!("{}{SUFFIX}", fit(name, MAIL_WIDTH - SUFFIX.len()))];
    let a_vals: Vec<String> = (0..7).map(|i| value_text(a.as_ref(), i)).collect();
    let w_vals = a_vals.iter().map(|s| s.len()).max().unwrap_or(1);

    let Some((b_label, b)) = b else {
        let a_label = fit(a_label, VALUES_W.max(w_vals));
        let w = w_vals.max(width_of(&a_label));
        lines.push(format!("{:>1$}|", a_label, LABEL_W + w + 1));
        for (i, label) in ROW_LABELS.iter().enumerate() {
            lines.push(format!("{label:<LABEL_W$}{:>w$} |", a_vals[i]));
        }
        return lines;
    };

    let b_vals: Vec<String> = (0..7).map(|i| value_text(b.as_ref(), i)).collect();
    let pcts: Vec<Option<(char, String)>> = (0..7)
        .map(|i| match (a, b) {
            (Some(a), Some(b)) => Some(pct(a[i], b[i], i == 0)),
            _ => None,
        })
        .collect();
    let n_w = pcts
        .iter()
        .flatten()
        .map(|(_, n)| n.len())
        .max()
        .unwrap_or(0)
        .max(2);
    let v_vals = b_vals.iter().map(|s| s.len()).max().unwrap_or(1);
    let c_vals = v_vals + n_w + 7;
    // Labels give way to values: shorten them so the lines fit.
    let b_want = (width_of(b_label) + 1).min(VALUES_W / 2);
    let a_max = w_vals.max(VALUES_W.saturating_sub(c_vals.max(b_want)));
    let a_label = fit(a_label, a_max);
    let w = w_vals.max(width_of(&a_label));
    let b_label = fit(b_label, VALUES_W.saturating_sub(w + 1).max(1));
    let c = c_vals.max(width_of(&b_label) + 1);
    let v = c - n_w - 7;

    lines.push(format!(
        "{:>aw$}|{:>c$}",
        a_label,
        format!(" {b_label}"),
        aw = LABEL_W + w + 1
    ));
    for (i, label) in ROW_LABELS.iter().enumerate() {
        let mut line = format!("{label:<LABEL_W$}{:>w$} | {:>v$}", a_vals[i], b_vals[i]);
        if let Some((sign, n)) = &pcts[i] {
            line.push_str(&format!(" ({sign}{n:>n_w$} %)"));
        }
        lines.push(line.trim_end().to_string());
    }
    lines
}

fn join_blocks(blocks: Vec<Vec<String>>) -> String {
    let mut out = String::new();
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for line in block {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `--format lkml`: Vincent's pipe-style table (formats.md §6 A) for one
/// result, headed by `column`: one block per task name with latency
/// samples, rows Total Samples, Average, Median (P50), 90th, 99th and
/// 99.9th Percentile, Maximum, in whole µs rounded half up from ns. Lines
/// ≤ [`MAIL_WIDTH`] columns, spaces only; a label too long is cut (`~`).
pub fn lkml(r: &SimResult, column: &str) -> String {
    let blocks: Vec<Vec<String>> = r
        .by_name
        .iter()
        .filter(|n| n.latency.samples > 0)
        .map(|n| pipe_block(&n.name, column, row_values(Some(&n.latency)), None))
        .collect();
    if blocks.is_empty() {
        return "no latency samples\n".to_string();
    }
    let mut out = join_blocks(blocks);
    if let Some(p) = warmup_phrase(r.warmup_ns) {
        out.push_str(&format!("({p})\n"));
    }
    out
}

/// `latency after a 1s warmup` (`None` without one): every table that
/// leaves start-up out says so.
fn warmup_phrase(warmup_ns: u64) -> Option<String> {
    (warmup_ns > 0).then(|| {
        format!(
            "latency after a {} warmup",
            crate::scenario::fmt_duration(warmup_ns)
        )
    })
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Word-wraps `s` to `width` columns (words longer than that are split).
fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in s.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > width {
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            lines.push(word.drain(..width).collect());
        }
        let word: String = word.into_iter().collect();
        if cur.is_empty() {
            cur = word;
        } else if width_of(&cur) + 1 + width_of(&word) <= width {
            cur.push(' ');
            cur.push_str(&word);
        } else {
            lines.push(std::mem::replace(&mut cur, word));
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// How a comparison signs its change, in the words every A/B table
/// (CLI, mail, page) states it: LKML's, + for better.
pub const DELTA_CONVENTION: &str =
    "change in %: + is better, - is worse (latency: lower; samples: more)";

/// `eevdf compare`: `title` (word-wrapped), [`DELTA_CONVENTION`], a blank line, then one
/// pipe-style block per task name with samples in A or B (A's order, then
/// names only B has). Each block has the header row `a_label| b_label` and
/// rows as in [`lkml`]; each B value is followed by `(Sn %)`, S = `+` if
/// better, `-` if worse, ` ` if the rounded pct is 0, n right-aligned to
/// the block's widest (at least 2): `(  0 %)`, `(+25 %)`, `(-621 %)`.
/// Latency rows: pct = round((a-b)/a*100) over the shown whole µs; Total
/// Samples: more is better, pct = round((b-a)/a*100). A side without
/// samples for a name shows `-` and no pct. Lines ≤ [`MAIL_WIDTH`]
/// columns, spaces only.
pub fn compare(a: &SimResult, a_label: &str, b: &SimResult, b_label: &str, title: &str) -> String {
    compare_rows(&pipe_rows(a), a_label, &pipe_rows(b), b_label, title)
}

/// One name's values in a pipe table: Total Samples, Average, P50, P90,
/// P99, P99.9, Maximum (whole µs), `None` without samples.
pub type PipeRow = (String, Option<[u64; 7]>);

/// A result's [`PipeRow`]s, in its name order: what [`compare_rows`]
/// needs, small enough for the page's worker to send.
pub fn pipe_rows(r: &SimResult) -> Vec<PipeRow> {
    r.by_name
        .iter()
        .map(|n| (n.name.clone(), row_values(Some(&n.latency))))
        .collect()
}

/// The table title of an A/B run, in the CLI's and the page's mail.
pub const AB_TITLE: &str = "scheduling latency (us): A = baseline, B = scenario";

/// [`AB_TITLE`] with [`latency_title`]'s warmup note.
pub fn ab_title(a_warmup_ns: u64, b_warmup_ns: u64) -> String {
    latency_title(AB_TITLE, a_warmup_ns, b_warmup_ns)
}

/// A comparison's `title`, saying so when A or B leaves a warmup out.
pub fn latency_title(title: &str, a_warmup_ns: u64, b_warmup_ns: u64) -> String {
    if a_warmup_ns == b_warmup_ns {
        return match warmup_phrase(b_warmup_ns) {
            Some(p) => format!("{title}, {p}"),
            None => title.to_string(),
        };
    }
    let d = crate::scenario::fmt_duration;
    format!(
        "{title}, latency after a warmup of {} (A) and {} (B)",
        d(a_warmup_ns),
        d(b_warmup_ns)
    )
}

/// [`compare`] from [`pipe_rows`].
pub fn compare_rows(
    a: &[PipeRow],
    a_label: &str,
    b: &[PipeRow],
    b_label: &str,
    title: &str,
) -> String {
    let mut names: Vec<&str> = a.iter().map(|n| n.0.as_str()).collect();
    for n in b {
        if !names.contains(&n.0.as_str()) {
            names.push(&n.0);
        }
    }
    let find = |r: &[PipeRow], name: &str| -> Option<[u64; 7]> {
        r.iter().find(|n| n.0 == name).and_then(|n| n.1)
    };
    let blocks: Vec<Vec<String>> = names
        .iter()
        .filter_map(|name| {
            let (va, vb) = (find(a, name), find(b, name));
            if va.is_none() && vb.is_none() {
                return None;
            }
            Some(pipe_block(name, a_label, va, Some((b_label, vb))))
        })
        .collect();
    let mut out = String::new();
    let title = wrap(&clean(title), MAIL_WIDTH);
    for line in &title {
        out.push_str(line);
        out.push('\n');
    }
    // The page's A/B table says the same (eevdf-web results.rs).
    out.push_str(DELTA_CONVENTION);
    out.push_str("\n\n");
    if blocks.is_empty() {
        out.push_str("no latency samples\n");
    } else {
        out.push_str(&join_blocks(blocks));
    }
    out
}

// ---------------------------------------------------------------------
// cyclictest and schbench blocks
// ---------------------------------------------------------------------

/// `--format cyclictest`: cyclictest's `-h N -q` block (formats.md §2)
/// for the given threads, each a list of `(latency ns, count)` pairs (any
/// order, repeats add up). Buckets are whole µs, truncated; `buckets`
/// rows `%06d` with one `%06lu` column per thread, tab separated. `Total`
/// counts in-range samples; Min/Avg/Max cover all samples (Avg truncated;
/// a thread without samples shows cyclictest's initial Min of 1000000).
/// Cycle numbers of overflows are not known, so all overflows are listed
/// as `# NNNNN others`. Ends with cyclictest's blank line.
pub fn cyclictest(threads: &[Vec<(u64, u64)>], buckets: usize) -> String {
    struct Thread {
        hist: Vec<u64>,
        total: u64,
        cycles: u64,
        sum_us: u128,
        min_us: u64,
        max_us: u64,
        overflows: u64,
    }
    let stats: Vec<Thread> = threads
        .iter()
        .map(|pairs| {
            let mut t = Thread {
                hist: vec![0; buckets],
                total: 0,
                cycles: 0,
                sum_us: 0,
                min_us: 1_000_000,
                max_us: 0,
                overflows: 0,
            };
            for &(ns, count) in pairs {
                if count == 0 {
                    continue;
                }
                let us = ns / 1000;
                if t.cycles == 0 || us < t.min_us {
                    t.min_us = us;
                }
                t.max_us = t.max_us.max(us);
                t.cycles += count;
                t.sum_us += u128::from(us) * u128::from(count);
                match usize::try_from(us).ok().filter(|&i| i < buckets) {
                    Some(i) => {
                        t.hist[i] += count;
                        t.total += count;
                    }
                    None => t.overflows += count,
                }
            }
            t
        })
        .collect();

    let mut out = String::from("# Histogram\n");
    for i in 0..buckets {
        out.push_str(&format!("{i:06} "));
        let cells: Vec<String> = stats.iter().map(|t| format!("{:06}", t.hist[i])).collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    let mut footer = |label: &str, width: usize, f: &dyn Fn(&Thread) -> u128| {
        out.push_str(label);
        for t in &stats {
            out.push_str(&format!(" {:01$}", f(t), width));
        }
        out.push('\n');
    };
    footer("# Total:", 9, &|t| u128::from(t.total));
    footer("# Min Latencies:", 5, &|t| u128::from(t.min_us));
    footer("# Avg Latencies:", 5, &|t| {
        if t.cycles == 0 {
            0
        } else {
            t.sum_us / u128::from(t.cycles)
        }
    });
    footer("# Max Latencies:", 5, &|t| u128::from(t.max_us));
    footer("# Histogram Overflows:", 5, &|t| u128::from(t.overflows));
    out.push_str("# Histogram Overflow at cycle number:\n");
    for (i, t) in stats.iter().enumerate() {
        out.push_str(&format!("# Thread {i}:"));
        if t.overflows > 0 {
            out.push_str(&format!(" # {:05} others", t.overflows));
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

/// `--format schbench`: schbench's latency percentile block (formats.md
/// §3): `TITLE percentiles (usec) runtime R (s) (N total samples)`, rows
/// 50.0th, 90.0th, `*` 99.0th, 99.9th as `"\t%s%2.1fth: %-10u (%lu
/// samples)"`, then `\t  min=.., max=..`; values in whole µs, truncated.
/// A row's count is what its band holds by the rank rule: ceil(p·N) minus
/// the previous percentile's rank, the 50th's band starting, as in
/// schbench, after the (unprinted) 20th. Without samples only the min/max
/// line is printed, as schbench does.
pub fn schbench_block(title: &str, s: &LatencyStats, runtime_s: u64) -> String {
    let mut out = String::new();
    if s.samples > 0 {
        let n = u128::from(s.samples);
        let rank = |num: u128, den: u128| (n * num).div_ceil(den);
        out.push_str(&format!(
            "{title} percentiles (usec) runtime {runtime_s} (s) ({} total samples)\n",
            s.samples
        ));
        let rows = [
            (50.0, s.p50, rank(50, 100), rank(20, 100), false),
            (90.0, s.p90, rank(90, 100), rank(50, 100), false),
            (99.0, s.p99, rank(99, 100), rank(90, 100), true),
            (99.9, s.p99_9, rank(999, 1000), rank(99, 100), false),
        ];
        for (p, ns, hi, lo, star) in rows {
            let mark = if star { "* " } else { "  " };
            let us = (ns / 1000).to_string();
            out.push_str(&format!(
                "\t{mark}{p:.1}th: {us:<10} ({} samples)\n",
                hi - lo
            ));
        }
    }
    out.push_str(&format!("\t  min={}, max={}\n", s.min / 1000, s.max / 1000));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_titles_name_the_warmup_of_each_side() {
        assert_eq!(latency_title("t", 0, 0), "t");
        assert_eq!(
            latency_title("t", 1_000_000_000, 1_000_000_000),
            "t, latency after a 1s warmup"
        );
        assert_eq!(
            latency_title("t", 0, 500_000_000),
            "t, latency after a warmup of 0s (A) and 500ms (B)"
        );
        assert_eq!(ab_title(0, 0), AB_TITLE);
    }
    use eevdf_sim::{CpuResult, HackbenchResult, RoleKind, SchbenchResult, TaskResult, Totals};

    #[test]
    fn simulated_by_names_this_engine() {
        let v = crate::scenario::ENGINE_VERSION;
        assert!(
            SIMULATED_BY.contains(&format!(" engine {v}, ")),
            "{SIMULATED_BY}"
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn lat(
        samples: u64,
        sum_ns: u128,
        min: u64,
        p50: u64,
        p90: u64,
        p99: u64,
        p99_9: u64,
        max: u64,
    ) -> LatencyStats {
        LatencyStats {
            samples,
            sum_ns,
            min,
            p50,
            p90,
            p99,
            p99_9,
            max,
            max_at: None,
        }
    }

    fn name(name: &str, tasks: u32, cpu_ns: u64, latency: LatencyStats) -> NameResult {
        NameResult {
            name: name.to_string(),
            tasks,
            cpu_ns,
            latency,
        }
    }

    fn task(name: &str, role: RoleKind, cpu_ns: u64, latency: LatencyStats) -> TaskResult {
        TaskResult {
            name: name.to_string(),
            directive: 0,
            role,
            cpu_ns,
            wakeups: latency.samples,
            migrations: 0,
            latency,
        }
    }

    fn small() -> SimResult {
        let ct = lat(
            3, 6_227_511, 3012, 59_000, 6_165_499, 6_165_499, 6_165_499, 6_165_499,
        );
        SimResult {
            sim_ns: 1_000_000_000,
            warmup_ns: 0,
            partial: None,
            events: 12345,
            by_name: vec![
                name("cyclictest", 1, 2_650_400, ct),
                name("hog", 2, 998_000_500, LatencyStats::default()),
            ],
            tasks: vec![
                task("cyclictest.0", RoleKind::Timer, 2_650_400, ct),
                task("hog.0", RoleKind::Hog, 499_000_000, LatencyStats::default()),
                task("hog.1", RoleKind::Hog, 499_000_500, LatencyStats::default()),
            ],
            cpus: vec![
                CpuResult {
                    cpu: 0,
                    busy_ns: 1_000_000_000,
                    switches: 10,
                    nr_running_milli: 1500,
                    util: 1024,
                    capacity: 1024,
                },
                CpuResult {
                    cpu: 1,
                    busy_ns: 333_333_333,
                    switches: 0,
                    nr_running_milli: 333,
                    util: 300,
                    capacity: 1024,
                },
            ],
            totals: Totals {
                switches: 10,
                migrations: 1,
                wakeups: 3,
            },
            domains: vec![],
            hackbench: vec![],
            schbench: vec![],
        }
    }

    /// A = the baseline of formats.md §6 A, B = "this patchset".
    fn vincent(b_side: bool) -> SimResult {
        let s = if b_side {
            lat(
                34420,
                34420 * 60_000,
                2_000,
                56_000,
                60_000,
                65_700,
                832_000,
                3_041_000,
            )
        } else {
            lat(
                34419,
                34419 * 59_000 + 400,
                2_000,
                56_000,
                61_400,
                65_500,
                1_104_499,
                6_164_500,
            )
        };
        SimResult {
            sim_ns: 63_000_000_000,
            warmup_ns: 0,
            partial: None,
            events: 1,
            by_name: vec![
                name("cyclictest", 1, 1_000_000, s),
                name("hog", 1, 1_000_000, LatencyStats::default()),
            ],
            tasks: vec![],
            cpus: vec![],
            totals: Totals::default(),
            domains: vec![],
            hackbench: vec![],
            schbench: vec![],
        }
    }

    fn assert_width(s: &str, width: usize) {
        for line in s.lines() {
            assert!(
                line.chars().count() <= width,
                "{} > {width}: {line:?}",
                line.len()
            );
            assert!(!line.contains('\t'), "tab in {line:?}");
            assert_eq!(line, line.trim_end(), "trailing space in {line:?}");
        }
    }

    #[test]
    fn json_matches_the_schema_exactly() {
        let expected = concat!(
            r#"{"schema":"eevdf.result.v1","engine":"0.7","scenario":"cpus=2\ntask=x \"q\"","#,
            r#""sim_ns":1000000000,"events":12345,"by_name":{"#,
            r#""cyclictest":{"tasks":1,"samples":3,"cpu_ms":2.65,"latency_us":"#,
            r#"{"min":3.012,"mean":2075.837,"p50":59.0,"p90":6165.499,"p99":6165.499,"#,
            r#""p99_9":6165.499,"max":6165.499}},"#,
            r#""hog":{"tasks":2,"samples":0,"cpu_ms":998.001,"latency_us":"#,
            r#"{"min":0.0,"mean":0.0,"p50":0.0,"p90":0.0,"p99":0.0,"p99_9":0.0,"max":0.0}}},"#,
            r#""tasks":[{"name":"cyclictest.0","role":"timer","cpu_ms":2.65,"samples":3,"#,
            r#""wakeups":3,"migrations":0,"latency_us":{"min":3.012,"mean":2075.837,"#,
            r#""p50":59.0,"p90":6165.499,"p99":6165.499,"p99_9":6165.499,"max":6165.499}},"#,
            r#"{"name":"hog.0","role":"hog","cpu_ms":499.0,"samples":0,"wakeups":0,"#,
            r#""migrations":0,"latency_us":{"min":0.0,"mean":0.0,"p50":0.0,"p90":0.0,"#,
            r#""p99":0.0,"p99_9":0.0,"max":0.0}},"#,
            r#"{"name":"hog.1","role":"hog","cpu_ms":499.001,"samples":0,"wakeups":0,"#,
            r#""migrations":0,"latency_us":{"min":0.0,"mean":0.0,"p50":0.0,"p90":0.0,"#,
            r#""p99":0.0,"p99_9":0.0,"max":0.0}}],"#,
            r#""cpus":[{"cpu":0,"busy_ms":1000.0,"switches":10,"nr_running_avg":1.5,"util":1024,"capacity":1024},"#,
            r#"{"cpu":1,"busy_ms":333.333,"switches":0,"nr_running_avg":0.333,"util":300,"capacity":1024}],"#,
            r#""totals":{"switches":10,"migrations":1,"wakeups":3}}"#,
            "\n"
        );
        let r = small();
        let got = json("cpus=2\ntask=x \"q\"", &r);
        assert_eq!(got, expected);
        assert_eq!(got, json("cpus=2\ntask=x \"q\"", &r.clone()));
        let v: serde_json::Value = serde_json::from_str(&got).unwrap();
        assert_eq!(v["by_name"]["cyclictest"]["latency_us"]["p99_9"], 6165.499);
        assert_eq!(v["scenario"], "cpus=2\ntask=x \"q\"");
    }

    #[test]
    fn json_workload_sections_follow_totals() {
        let mut r = small();
        r.hackbench = vec![
            HackbenchResult {
                name: "hb".into(),
                messages: 4000,
                completion_ns: Some(12_345_678_901),
                throughput: 324.000_123_4,
            },
            HackbenchResult {
                name: "hb2".into(),
                messages: 7,
                completion_ns: None,
                throughput: 7.0,
            },
        ];
        r.schbench = vec![SchbenchResult {
            name: "sb".into(),
            requests: 10,
            rps: f64::NAN,
            request_latency: lat(2, 3001, 1000, 1000, 2001, 2001, 2001, 2001),
        }];
        let got = json("", &r);
        let tail = concat!(
            r#""totals":{"switches":10,"migrations":1,"wakeups":3},"#,
            r#""hackbench":[{"name":"hb","messages":4000,"completion_s":12.345679,"#,
            r#""throughput":324.0},"#,
            r#"{"name":"hb2","messages":7,"completion_s":null,"throughput":7.0}],"#,
            r#""schbench":[{"name":"sb","requests":10,"rps":null,"request_latency_us":"#,
            r#"{"min":1.0,"mean":1.501,"p50":1.0,"p90":2.001,"p99":2.001,"p99_9":2.001,"#,
            r#""max":2.001}}]}"#,
            "\n"
        );
        assert!(got.ends_with(tail), "{got}");
        serde_json::from_str::<serde_json::Value>(&got).unwrap();
    }

    /// Keys of a JSON object in document order (serde_json's own map sorts).
    struct Keys(Vec<String>);

    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut m: A,
                ) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some((k, _)) = m.next_entry::<String, serde::de::IgnoredAny>()? {
                        keys.push(k);
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(V)
        }
    }

    #[test]
    fn json_keys_come_in_schema_order() {
        let mut r = small();
        r.by_name.reverse();
        r.schbench = vec![SchbenchResult {
            name: "sb".into(),
            requests: 0,
            rps: 0.0,
            request_latency: LatencyStats::default(),
        }];
        let got = json("x", &r);
        let top: Keys = serde_json::from_str(&got).unwrap();
        let want = [
            "schema", "engine", "scenario", "sim_ns", "events", "by_name", "tasks", "cpus",
            "totals", "schbench",
        ];
        assert_eq!(top.0, want);
        // serde_json::Value sorts keys, so read by_name from the text itself.
        let start = got.find(r#""by_name":"#).unwrap() + r#""by_name":"#.len();
        let mut de = serde_json::Deserializer::from_str(&got[start..]);
        let names = <Keys as serde::Deserialize>::deserialize(&mut de).unwrap();
        assert_eq!(names.0, ["hog", "cyclictest"]);
        let mut de = serde_json::Deserializer::from_str(&got[got.find(r#"{"tasks":2"#).unwrap()..]);
        let entry = <Keys as serde::Deserialize>::deserialize(&mut de).unwrap();
        assert_eq!(entry.0, ["tasks", "samples", "cpu_ms", "latency_us"]);
        let i = got.find(r#""latency_us":"#).unwrap() + r#""latency_us":"#.len();
        let mut de = serde_json::Deserializer::from_str(&got[i..]);
        let l = <Keys as serde::Deserialize>::deserialize(&mut de).unwrap();
        assert_eq!(l.0, ["min", "mean", "p50", "p90", "p99", "p99_9", "max"]);
    }

    #[test]
    fn lkml_is_vincents_pipe_table() {
        let expected = "\
cyclictest latency (us)
                   tip/sched/core|
Total Samples              34419 |
Average                       59 |
Median (P50)                  56 |
90th Percentile               61 |
99th Percentile               66 |
99.9th Percentile           1104 |
Maximum                     6165 |
";
        let got = lkml(&vincent(false), "tip/sched/core");
        assert_eq!(got, expected);
        assert_width(&got, MAIL_WIDTH);
        assert_eq!(
            lkml(&small(), "x").lines().next(),
            Some("cyclictest latency (us)")
        );
        let mut none = small();
        none.by_name[0].latency = LatencyStats::default();
        assert_eq!(lkml(&none, "x"), "no latency samples\n");
    }

    /// formats.md's block, under the line that says how the change is
    /// signed (issue 16: every A/B table states it).
    #[test]
    fn compare_matches_formats_md() {
        let expected = "\
scheduling latency (us) for cyclictest and rt-app
change in %: + is better, - is worse (latency: lower; samples: more)

cyclictest latency (us)
                   tip/sched/core| this patchset
Total Samples              34419 | 34420 (  0 %)
Average                       59 |    60 (- 2 %)
Median (P50)                  56 |    56 (  0 %)
90th Percentile               61 |    60 (+ 2 %)
99th Percentile               66 |    66 (  0 %)
99.9th Percentile           1104 |   832 (+25 %)
Maximum                     6165 |  3041 (+51 %)
";
        let got = compare(
            &vincent(false),
            "tip/sched/core",
            &vincent(true),
            "this patchset",
            "scheduling latency (us) for cyclictest and rt-app",
        );
        assert_eq!(got, expected);
        assert_width(&got, MAIL_WIDTH);
    }

    #[test]
    fn compare_widens_the_percent_for_minus_621() {
        let a = vincent(false);
        let mut b = vincent(false);
        b.by_name[0].latency.max = 44_450_000; // 6165 -> 44450: -621.006 %
        let got = compare(&a, "base", &b, "new", "");
        // Short labels: the columns are as wide as the values.
        let expected = "\
change in %: + is better, - is worse (latency: lower; samples: more)

cyclictest latency (us)
                    base|            new
Total Samples     34419 | 34419 (   0 %)
Average              59 |    59 (   0 %)
Median (P50)         56 |    56 (   0 %)
90th Percentile      61 |    61 (   0 %)
99th Percentile      66 |    66 (   0 %)
99.9th Percentile  1104 |  1104 (   0 %)
Maximum            6165 | 44450 (-621 %)
";
        assert_eq!(got, expected);
        assert_width(&got, MAIL_WIDTH);
    }

    #[test]
    fn percent_signs_and_rounding() {
        assert_eq!(pct(66, 66, false), (' ', "0".into()));
        assert_eq!(pct(1104, 832, false), ('+', "25".into()));
        assert_eq!(pct(6165, 3041, false), ('+', "51".into()));
        assert_eq!(pct(100, 721, false), ('-', "621".into()));
        assert_eq!(pct(200, 201, false), ('-', "1".into())); // -0.5 -> -1
        assert_eq!(pct(300, 301, false), (' ', "0".into())); // -0.33 -> 0
        assert_eq!(pct(200, 199, false), ('+', "1".into()));
        assert_eq!(pct(1000, 1005, false), ('-', "1".into())); // -0.5 -> -1
        assert_eq!(pct(100, 110, true), ('+', "10".into()));
        assert_eq!(pct(0, 5, false), ('-', "inf".into()));
        assert_eq!(pct(1, 1_000_000, false), ('-', ">9999".into()));
    }

    #[test]
    fn compare_fits_72_columns_whatever_the_labels() {
        let mut a = vincent(false);
        let mut b = vincent(true);
        a.by_name[0].latency.max = u64::MAX;
        b.by_name[0].latency.max = 1;
        b.by_name[0].latency.samples = u64::MAX;
        b.by_name.push(name(
            "only-in-b",
            1,
            0,
            lat(1, 5000, 5000, 5000, 5000, 5000, 5000, 5000),
        ));
        let long = "a-very-long-kernel-name-tip-sched-core-2026-06-01-with-patches";
        let title = "word ".repeat(40) + &"x".repeat(100);
        let got = compare(&a, long, &b, "tab\there", &title);
        assert_width(&got, MAIL_WIDTH);
        assert!(got.contains(" tab here\n"), "{got}");
        let got = compare(&a, long, &b, long, &title);
        assert_width(&got, MAIL_WIDTH);
        assert!(got.contains("only-in-b latency (us)"), "{got}");
        let only_b: Vec<&str> = got
            .lines()
            .filter(|l| l.starts_with("Maximum"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .map(|l| if l == "Maximum - | 5" { "ok" } else { "other" })
            .collect();
        assert_eq!(only_b, ["other", "ok"], "{got}");
        let got = lkml(&a, long);
        assert_width(&got, MAIL_WIDTH);
    }

    #[test]
    fn cyclictest_block_layout() {
        let threads = vec![
            vec![(1999, 2), (0, 1), (3500, 4), (500, 1), (7, 0)],
            vec![(10_000, 3), (2_100, 1)],
        ];
        let expected = "\
# Histogram
000000 000002\t000000
000001 000002\t000000
000002 000000\t000001
000003 000004\t000000
# Total: 000000008 000000001
# Min Latencies: 00000 00002
# Avg Latencies: 00001 00008
# Max Latencies: 00003 00010
# Histogram Overflows: 00000 00003
# Histogram Overflow at cycle number:
# Thread 0:
# Thread 1: # 00003 others

";
        assert_eq!(cyclictest(&threads, 4), expected);
        let one = cyclictest(&[vec![(56_999, 4211), (3_000, 1), (2_273_000, 1)]], 57);
        assert!(
            one.contains("\n000056 004211\n# Total: 000004212\n"),
            "{one}"
        );
        assert!(one.ends_with(
            "# Total: 000004212\n# Min Latencies: 00003\n# Avg Latencies: 00056\n\
             # Max Latencies: 02273\n# Histogram Overflows: 00001\n\
             # Histogram Overflow at cycle number:\n# Thread 0: # 00001 others\n\n"
        ));
        assert_eq!(one.lines().count(), 1 + 57 + 7 + 1);
        let empty = cyclictest(&[vec![]], 1);
        assert!(empty.contains("# Min Latencies: 1000000\n# Avg Latencies: 00000\n"));
    }

    #[test]
    fn schbench_block_layout() {
        let s = lat(150_000, 0, 1_000, 7_900, 20_000, 90_000, 330_999, 3_195_000);
        let expected = "\
Wakeup Latencies percentiles (usec) runtime 30 (s) (150000 total samples)
\t  50.0th: 7          (45000 samples)
\t  90.0th: 20         (60000 samples)
\t* 99.0th: 90         (13500 samples)
\t  99.9th: 330        (1350 samples)
\t  min=1, max=3195
";
        let got = schbench_block("Wakeup Latencies", &s, 30);
        assert_eq!(got, expected);
        // The line of formats.md §3, byte for byte but for the count.
        assert!(got.contains("\t  50.0th: 7          (45"));
        let small = lat(3, 0, 1_000, 1_000, 3_000, 3_000, 3_000, 3_000);
        let got = schbench_block("Request Latencies", &small, 1);
        // ranks: 20th 1, 50th 2, 90th 3, 99th 3, 99.9th 3.
        assert!(got.contains("50.0th: 1          (1 samples)\n"), "{got}");
        assert!(got.contains("90.0th: 3          (1 samples)\n"), "{got}");
        assert!(got.contains("99.0th: 3          (0 samples)\n"), "{got}");
        assert_eq!(
            schbench_block("Wakeup Latencies", &LatencyStats::default(), 30),
            "\t  min=0, max=0\n"
        );
    }

    #[test]
    fn text_summary() {
        let mut r = small();
        r.hackbench = vec![HackbenchResult {
            name: "hb".into(),
            messages: 4000,
            completion_ns: None,
            throughput: 4000.0,
        }];
        r.schbench = vec![SchbenchResult {
            name: "sb".into(),
            requests: 10,
            rps: 10.5,
            request_latency: lat(2, 3001, 1000, 1000, 2001, 2001, 2001, 2001),
        }];
        let expected = "\
eevdf: simulated 1.000000 s, 12345 events

NAME        tasks  samples   cpu ms
cyclictest      1        3    2.650
hog             2        0  998.001

latency us    min     p50       p90       p99     p99.9       max  max at s
cyclictest  3.012  59.000  6165.499  6165.499  6165.499  6165.499         -
hog             -       -         -         -         -         -         -

CPU   busy ms  busy %  switches
0    1000.000   100.0        10
1     333.333    33.3         0

totals
  switches    10
  migrations  1
  wakeups     3

hackbench  messages  time s     msg/s
hb             4000       -  4000.000

schbench  requests     rps
sb              10  10.500

request us    min    p50    p90    p99  p99.9    max
sb          1.000  1.000  2.001  2.001  2.001  2.001
";
        let got = text(&r);
        assert_width(&got, TEXT_WIDTH);
        assert_eq!(got, expected);
    }

    #[test]
    fn text_fits_80_columns_with_extreme_values() {
        let mut r = small();
        let huge = lat(
            u64::MAX,
            u128::MAX / 2,
            u64::MAX,
            u64::MAX,
            u64::MAX,
            u64::MAX,
            u64::MAX,
            u64::MAX,
        );
        r.by_name
            .push(name(&"n".repeat(200), u32::MAX, u64::MAX, huge));
        r.cpus[0].switches = u64::MAX;
        r.totals.wakeups = u64::MAX;
        r.hackbench = vec![HackbenchResult {
            name: "h".repeat(100),
            messages: u64::MAX,
            completion_ns: Some(u64::MAX),
            throughput: f64::MAX,
        }];
        r.schbench = vec![SchbenchResult {
            name: "s".repeat(100),
            requests: u64::MAX,
            rps: f64::INFINITY,
            request_latency: huge,
        }];
        let got = text(&r);
        assert_width(&got, TEXT_WIDTH);
        assert!(got.contains("nnnnn~"), "{got}");
    }
}

/// `compare` in the mmtests compare-kernels style (formats.md §6 B): an
/// `Amean` row per latency percentile and task name, each column
/// `%12.2f (%7.2f%%)`, positive meaning better (lower latency). Two
/// header lines (the labels, right-aligned to the column ends).
pub fn compare_mmtests(a: &SimResult, a_label: &str, b: &SimResult, b_label: &str) -> String {
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut rows: Vec<(String, f64, f64)> = Vec::new();
    for n in &a.by_name {
        let Some(m) = b.by_name.iter().find(|x| x.name == n.name) else {
            continue;
        };
        if n.latency.samples == 0 || m.latency.samples == 0 {
            continue;
        }
        let (x, y) = (&n.latency, &m.latency);
        for (what, va, vb) in [
            ("50th", x.p50, y.p50),
            ("90th", x.p90, y.p90),
            ("99th", x.p99, y.p99),
            ("99.9th", x.p99_9, y.p99_9),
            ("max", x.max, y.max),
        ] {
            rows.push((format!("Wakeup-{what}-{}", n.name), us(va), us(vb)));
        }
    }
    if rows.is_empty() {
        return "no latency samples\n".to_string();
    }
    let pw = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    // Column: value (12) + " (" + pct (7) + "%)" = 22 chars.
    let col = 22;
    let lead = 10 + pw;
    let cut = |s: &str| s.chars().take(col).collect::<String>();
    let mut out = String::new();
    out.push_str(&format!(
        "{:lead$}{:>col$} {:>col$}\n",
        "",
        cut(a_label),
        cut(b_label)
    ));
    for (p, va, vb) in rows {
        let pct = if va == 0.0 {
            0.0
        } else {
            (va - vb) / va * 100.0
        };
        out.push_str(&format!(
            "{:<10}{:<pw$}{:12.2} ({:7.2}%){:12.2} ({:7.2}%)\n",
            "Amean", p, va, 0.0, vb, pct
        ));
    }
    out
}

#[cfg(test)]
mod mmtests_tests {
    use super::*;
    use eevdf_sim::{LatencyStats, NameResult, Totals};

    fn result(p999: u64) -> SimResult {
        let l = LatencyStats {
            samples: 10,
            sum_ns: 10,
            min: 1000,
            p50: 7_170,
            p90: 46_560,
            p99: 119_610,
            p99_9: p999,
            max: p999,
            max_at: None,
        };
        SimResult {
            sim_ns: 1,
            warmup_ns: 0,
            partial: None,
            events: 1,
            by_name: vec![NameResult {
                name: "80".into(),
                tasks: 1,
                cpu_ns: 1,
                latency: l,
            }],
            tasks: vec![],
            cpus: vec![],
            totals: Totals::default(),
            domains: vec![],
            hackbench: vec![],
            schbench: vec![],
        }
    }

    #[test]
    fn mmtests_rows_match_mels_layout() {
        let t = compare_mmtests(
            &result(3_193_780),
            "vanilla",
            &result(328_220),
            "sched-preemptnext-v5",
        );
        let row = t.lines().find(|l| l.contains("Wakeup-99.9th-80")).unwrap();
        assert_eq!(
            row,
            "Amean     Wakeup-99.9th-80     3193.78 (   0.00%)      328.22 (  89.72%)"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert!(t.lines().next().unwrap().ends_with("sched-preemptnext-v5"));
    }
}
