//! The `eevdf` command: run eevdf-playground scenarios headless from a terminal or CI.
//!
//! Exit codes are a contract (README "CLI"): 0 success, 1 a run failed,
//! 2 bad command line or bad input (one line: `error: ...` with
//! `line:column: message (hint: ...)`). No command panics on any input.

#![forbid(unsafe_code)]

mod kernel;
mod out;
mod plot;
mod sweep;

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use eevdf_driver::batch::{self, Batch, Recording};
use eevdf_driver::input;
use eevdf_scenario::baseline::Pair;
use eevdf_scenario::display::{escape_controls, shown};
use eevdf_scenario::ftrace_regime::Regime;
use eevdf_scenario::scenario::Scenario;
use eevdf_scenario::{limits, presets, report, ParseError};
use eevdf_sim::{RoleKind, SimResult};
use out::{errln, out, outln};

/// Exit code for bad input (matches clap's own usage-error code).
const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for a run that failed (a kernel that did not boot, ...).
const EXIT_RUN_FAILED: u8 = 1;

#[derive(Debug, Parser)]
#[command(
    name = "eevdf",
    version,
    about = "EEVDF scheduler playground, headless"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A human-readable summary.
    Text,
    /// One JSON object, schema `eevdf.result.v1`.
    Json,
    /// LKML pipe-style latency table.
    Lkml,
    /// cyclictest's `-h 20000 -q` histogram block (timer tasks).
    Cyclictest,
    /// schbench's wakeup-latency percentile block, per task name.
    Schbench,
    /// For a mail: the scenario block, the LKML table, then the link.
    Mail,
}

#[derive(Debug, clap::Args)]
struct Overrides {
    /// Replace a top-level directive, e.g. `hz=1000`, `kernel=v6.19-rc1`,
    /// or one task key, `task.NAME.KEY=VALUE` (docs/scenario-keys.md).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Feature tokens applied over the scenario's (a debugfs line or list).
    #[arg(long, value_name = "LINE")]
    features: Option<String>,
    /// Seed for tick phases and start offsets.
    #[arg(long)]
    seed: Option<u64>,
    /// Simulated duration, e.g. `10s`, `500ms`.
    #[arg(long)]
    duration: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scenario: a file, `-` for stdin (a pasted mail works, quoted
    /// or not), a share link, or a preset name.
    #[command(group(clap::ArgGroup::new("recording").multiple(true)))]
    Run {
        scenario: String,
        #[command(flatten)]
        over: Overrides,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Base address of share links (`--format mail`).
        #[arg(long, default_value = eevdf_scenario::link::DEFAULT_BASE)]
        base: String,
        /// Write a scheduler trace: ftrace text (Perfetto opens it), or
        /// Chrome trace JSON when the file name ends in `.json`.
        #[arg(long, value_name = "FILE", group = "recording")]
        trace: Option<String>,
        /// Write the engine's decisions as ftrace-style lines: each
        /// wakeup_preempt with both sides' lag, eligibility, deadline
        /// against V and reason, and each pick with the picked task's
        /// lag, eligibility and deadline against V at the pick, the
        /// queue's length and the reason (virtual ns, as a kernel probe
        /// reads them).
        #[arg(long, value_name = "FILE", group = "recording")]
        decisions: Option<String>,
        /// Record (`--trace`, `--decisions`) only the run's last DURATION
        /// (e.g. `2s`): a long run's whole trace is hundreds of MB.
        #[arg(long, value_name = "DURATION", requires = "recording")]
        trace_last: Option<String>,
        /// Stop after this many events with a result marked partial
        /// (default: four times the scenario's cost estimate plus a
        /// million, a function of the input only).
        #[arg(long, value_name = "N")]
        max_events: Option<u64>,
    },
    /// Import another format and print the scenario text.
    Import {
        #[command(subcommand)]
        what: ImportKind,
    },
    /// Print the share link of a scenario.
    Url {
        scenario: String,
        #[command(flatten)]
        over: Overrides,
        /// Base address of the playground.
        #[arg(long, default_value = eevdf_scenario::link::DEFAULT_BASE)]
        base: String,
    },
    /// Validate a scenario and print its canonical text.
    Check {
        scenario: String,
        #[command(flatten)]
        over: Overrides,
        /// Print the effective debugfs features line instead.
        #[arg(long)]
        print_features: bool,
    },
    /// Run A and B and print the LKML table with percent deltas. Either
    /// one scenario with `--a-features`/`--b-features`, or two scenarios.
    Compare {
        scenario: String,
        /// A second scenario (B); without it B is the first one.
        scenario_b: Option<String>,
        #[arg(long, value_name = "LINE")]
        a_features: Option<String>,
        #[arg(long, value_name = "LINE")]
        b_features: Option<String>,
        /// Table style: `lkml` (pipe style) or `mmtests` (compare-kernels).
        #[arg(long, default_value = "lkml")]
        style: String,
        #[command(flatten)]
        over: Overrides,
        /// The simulator's side (the default; with `--kernel`, beside it).
        #[arg(long)]
        sim: bool,
        /// Also run on a real kernel (a series or a bzImage path): the
        /// simulator column then uses the kernel's read-back features,
        /// base slice, HZ and preemption model.
        #[arg(long, value_name = "SERIES|PATH")]
        kernel: Option<String>,
    },
    /// List the built-in scenarios, or show one (its source thread, the
    /// published numbers and its text).
    Presets { name: Option<String> },
    /// Apply a pasted debugfs features line (or tokens) over a kernel
    /// profile; print the effective debugfs line and the canonical tokens.
    Features {
        /// The line, e.g. "PLACE_LAG NO_NEXT_BUDDY"; `-` reads stdin.
        line: String,
        /// Kernel profile: v6.12, v6.18, v6.19-rc1, v7.1, tip-2026-09.
        #[arg(long, default_value = "v7.1")]
        profile: String,
    },
    /// Real-kernel mode: fetch Debian kernels, run a scenario on one
    /// under deterministic QEMU.
    Kernel {
        #[command(subcommand)]
        what: kernel::KernelCmd,
    },
    /// Run a scenario over a grid of axis values (`--vary`, `--features-axis`,
    /// `--machine`, `--seeds`) on every core: JSON lines, a summary table
    /// or a chart. `--shard I/N` runs a part; `eevdf sweep merge` joins.
    Sweep(Box<sweep::SweepArgs>),
    /// Ideal long-run CPU shares of always-runnable tasks at the given nice levels.
    Shares {
        /// Nice levels, -20..=19.
        #[arg(required = true, allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
        nice: Vec<i32>,
    },
}

#[derive(Debug, Subcommand)]
enum ImportKind {
    /// An rt-app JSON file (`-` for stdin).
    Rtapp {
        file: String,
        /// The machine to put the tasks on.
        #[arg(long, default_value = "smp8")]
        machine: String,
    },
    /// An ftrace text trace (ours or a real one): per-task run, sleep and
    /// wakeup-latency statistics.
    Trace {
        file: String,
        /// Print the scheduler's regime instead: switches a second by
        /// `prev_state` and the runs before them, where wakeups land, the
        /// wait from wakeup to run by task name, idle by CPU, and the
        /// handovers between CPUs (a vCPU's turns under QEMU) by the
        /// event before each.
        #[arg(long)]
        regime: bool,
        /// A second trace (a kernel run's against a twin's, say) beside
        /// the first in the regime table, with the ratio of their rates.
        #[arg(long, value_name = "FILE", requires = "regime")]
        against: Option<String>,
    },
    /// A paste of /sys/kernel/debug/sched/ (features line, base_slice_ns,
    /// migration_cost_ns, preempt) applied over a scenario.
    Debugfs {
        file: String,
        /// The scenario to apply it to (file, preset or link).
        #[arg(long, default_value = "default")]
        into: String,
    },
}

/// A user-facing failure: printed as one `error:` line, exit 2.
struct BadInput(String);

impl BadInput {
    fn read(source: &str, e: limits::ReadError) -> Self {
        match e {
            limits::ReadError::Parse(e) => BadInput::parse(source, e),
            e => BadInput(format!("{source}: {e}")),
        }
    }

    fn parse(source: &str, e: ParseError) -> Self {
        if e.line == 0 {
            BadInput(format!("{source}: {}", e.message_with_hint()))
        } else {
            BadInput(format!("{source}:{e}"))
        }
    }
}

trait MessageWithHint {
    fn message_with_hint(&self) -> String;
}

impl MessageWithHint for ParseError {
    fn message_with_hint(&self) -> String {
        if self.hint.is_empty() {
            format!("column {}: {}", self.column, self.message)
        } else {
            format!(
                "column {}: {} (hint: {})",
                self.column, self.message, self.hint
            )
        }
    }
}

const SCENARIO_HINT: &str =
    "a scenario, a mail holding one or a link is small; is this the right file?";

/// Opens `arg` for a streaming read: `-` is stdin, anything else a path
/// (which may be a pipe or a device: nothing trusts its length).
fn open(arg: &str) -> Result<(String, Box<dyn BufRead>), BadInput> {
    if arg == "-" {
        return Ok(("<stdin>".into(), Box::new(std::io::stdin().lock())));
    }
    let f = std::fs::File::open(arg).map_err(|e| BadInput(format!("{arg}: {e}")))?;
    Ok((arg.to_string(), Box::new(std::io::BufReader::new(f))))
}

fn read_regime(arg: &str) -> Result<Regime, BadInput> {
    let (source, r) = open(arg)?;
    eevdf_scenario::ftrace_regime::regime_reader(r).map_err(|e| BadInput::read(&source, e))
}

/// All of `arg` (`-` or a path) as text of at most `limit` bytes.
fn read_bounded(arg: &str, limit: u64, hint: &'static str) -> Result<(String, String), BadInput> {
    let (source, r) = open(arg)?;
    let text = limits::read_text(r, limit, hint).map_err(|e| BadInput::read(&source, e))?;
    Ok((source, text))
}

fn read_input(arg: &str) -> Result<(String, String), BadInput> {
    if arg == "-" || std::path::Path::new(arg).exists() {
        return read_bounded(arg, limits::SCENARIO_BYTES, SCENARIO_HINT);
    }
    match input::named(arg) {
        Some(Ok(n)) => return Ok((n.source, n.text)),
        Some(Err(e)) => return Err(BadInput::parse("link", e)),
        None => {}
    }
    Err(BadInput(format!(
        "{}: no such file or preset (hint: `eevdf presets` lists the presets)",
        shown(arg)
    )))
}

/// A scenario argument and its pinned baseline A (a `baseline` block),
/// with the overrides applied to both sides.
fn load_pair(arg: &str, over: &Overrides) -> Result<Pair, BadInput> {
    let (source, text) = read_input(arg)?;
    // A file or stdin may hold a pasted mail: quoting and prose around
    // the block are fine.
    let mut p = input::pair(&text).map_err(|e| BadInput::parse(&source, e))?;
    apply_overrides(&mut p.b, over)?;
    if let Some(a) = &mut p.a {
        apply_overrides(a, over)?;
    }
    for note in p.b.engine_note().into_iter().chain(p.b.slice_notes()) {
        errln!("note: {note}");
    }
    Ok(p)
}

/// [`load_pair`] for commands that run one scenario: a baseline block
/// is noted and left out.
fn load(arg: &str, over: &Overrides) -> Result<Scenario, BadInput> {
    let p = load_pair(arg, over)?;
    if p.a.is_some() {
        errln!("note: this command runs the scenario only; its `baseline` block (A) is left out (`eevdf run` and `eevdf compare` run both)");
    }
    Ok(p.b)
}

fn apply_overrides(sc: &mut Scenario, over: &Overrides) -> Result<(), BadInput> {
    for kv in &over.set {
        sc.set(kv)
            .map_err(|e| BadInput::parse(&format!("--set {}", shown(kv)), e))?;
    }
    if let Some(f) = &over.features {
        sc.apply_features(f)
            .map_err(|e| BadInput::parse("--features", e))?;
    }
    if let Some(seed) = over.seed {
        sc.set(&format!("seed={seed}"))
            .map_err(|e| BadInput::parse("--seed", e))?;
    }
    if let Some(d) = &over.duration {
        sc.set(&format!("duration={d}"))
            .map_err(|e| BadInput::parse("--duration", e))?;
    }
    Ok(())
}

/// Runs a scenario, with a progress bar on a terminal once the run has
/// taken more than a second.
fn run_sim(sc: &Scenario) -> (SimResult, Vec<Vec<(u64, u64)>>) {
    let b = run_sim_traced(sc, None);
    (b.result, b.hists)
}

/// Runs a scenario, recording what `rec` asks for, with the progress
/// bar of [`run_sim`] (the CLI's clock; the run never reads one).
fn run_sim_traced(sc: &Scenario, rec: Option<Recording>) -> Batch {
    let started = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let b = batch::run(sc, rec, &mut |i| {
        if tty && bar.is_none() && started.elapsed() > Duration::from_secs(1) {
            let b = indicatif::ProgressBar::new(batch::STEPS);
            b.set_message("simulating");
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(i);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    b
}

/// `--trace`, `--decisions` and `--trace-last`.
#[derive(Debug)]
struct RecordArgs {
    trace: Option<String>,
    decisions: Option<String>,
    last: Option<String>,
}

fn run(
    scenario: &str,
    over: &Overrides,
    format: Format,
    base: &str,
    record: &RecordArgs,
    max_events: Option<u64>,
) -> Result<(), BadInput> {
    let mut pair = load_pair(scenario, over)?;
    pair.b.sim.max_events = max_events;
    if let Some(a) = &mut pair.a {
        a.sim.max_events = max_events;
    }
    let sc = &pair.b;
    let from = match record.last.as_deref() {
        Some(last) => sc.sim.duration_ns.saturating_sub(duration_arg(last)?),
        None => 0,
    };
    let rec = (record.trace.is_some() || record.decisions.is_some()).then_some(Recording {
        from,
        trace: record.trace.is_some(),
        decisions: record.decisions.is_some(),
    });
    let Batch {
        result: r,
        hists,
        trace: t,
        decisions,
    } = run_sim_traced(sc, rec);
    let trace = record.trace.as_deref();
    if let Some(p) = r.partial {
        errln!(
            "note: stopped at --max-events {} after {} of {} simulated ns; the result is partial",
            p.max_events,
            r.sim_ns,
            sc.sim.duration_ns
        );
    }
    if let Some(path) = trace {
        // About 120 bytes an event in either format.
        errln!(
            "note: writing {} trace events to {path} (about {} MB)",
            t.events.len(),
            (t.events.len() as u64 * 120).div_ceil(1 << 20)
        );
        let body = if path.ends_with(".json") {
            eevdf_scenario::ftrace::to_chrome_json(&t)
        } else {
            eevdf_scenario::ftrace::to_ftrace(&t)
        };
        std::fs::write(path, body).map_err(|e| BadInput(format!("--trace {path}: {e}")))?;
    }
    if let (Some(path), Some(log)) = (record.decisions.as_deref(), decisions) {
        errln!("note: writing {} decisions to {path}", log.len());
        std::fs::write(path, log.text())
            .map_err(|e| BadInput(format!("--decisions {path}: {e}")))?;
    }
    match &pair.a {
        None => out!("{}", render(format, sc, &r, hists, base, None)?),
        Some(a) => {
            let (ra, _) = run_sim(a);
            out!("{}", render_ab(format, &pair, a, &ra, &r, hists, base)?);
        }
    }
    Ok(())
}

/// An A/B pair's results: the comparison table (text, lkml, mail), or
/// B's JSON with A's as its `baseline` member. Formats of one result
/// (cyclictest, schbench) print B's.
fn render_ab(
    format: Format,
    pair: &Pair,
    a: &Scenario,
    ra: &SimResult,
    rb: &SimResult,
    hists: Vec<Vec<(u64, u64)>>,
    base: &str,
) -> Result<String, BadInput> {
    let (la, lb) = pair.labels();
    let title = report::ab_title(ra.warmup_ns, rb.warmup_ns);
    let table = report::compare(ra, &la, rb, &lb, &title);
    Ok(match format {
        Format::Text => format!("{}\n{table}", report::text(rb)),
        Format::Lkml => table,
        Format::Mail => report::mail(
            &pair.to_text(),
            &report::simulated_by(),
            &table,
            &eevdf_scenario::link::pair_url(pair, base),
        ),
        Format::Json => report::json_with_baseline(&pair.b.to_text(), rb, &a.to_text(), ra),
        Format::Cyclictest | Format::Schbench => {
            errln!("note: --format {format:?} prints the scenario's (B's) result; the baseline's is left out");
            render(format, &pair.b, rb, hists, base, None)?
        }
    })
}

/// A command-line duration (`2s`, `500ms`), read as the scenario's
/// `duration` is.
fn duration_arg(text: &str) -> Result<u64, BadInput> {
    let mut sc = Scenario::default();
    sc.set(&format!("duration={text}"))
        .map_err(|e| BadInput(format!("--trace-last {}: {}", shown(text), e.message)))?;
    Ok(sc.sim.duration_ns)
}

/// A result in the chosen format; `hists` are the threads' latency
/// histograms in `r.tasks` order, `source` the kernel run's block.
fn render(
    format: Format,
    sc: &Scenario,
    r: &SimResult,
    hists: Vec<Vec<(u64, u64)>>,
    base: &str,
    source: Option<&report::Source>,
) -> Result<String, BadInput> {
    // A kernel run's column is the kernel, not the simulator's profile.
    let column = source.map_or_else(
        || sc.features.profile.to_string(),
        |s| format!("kernel {}", s.kernel.split('+').next().unwrap_or(&s.kernel)),
    );
    let out = match format {
        Format::Text => report::text(r),
        Format::Json => report::json_with_source(&sc.to_text(), r, source),
        Format::Lkml => report::lkml(r, &column),
        Format::Mail => report::mail(
            &sc.to_text(),
            &source.map_or_else(report::simulated_by, report::measured_on),
            &report::lkml(r, &column),
            &eevdf_scenario::link::url(sc, base),
        ),
        Format::Cyclictest => {
            let threads: Vec<Vec<(u64, u64)>> = r
                .tasks
                .iter()
                .zip(hists)
                .filter(|(t, _)| t.role == RoleKind::Timer)
                .map(|(_, h)| h)
                .collect();
            if threads.is_empty() {
                return Err(BadInput(
                    "--format cyclictest: the scenario has no timer task".into(),
                ));
            }
            report::cyclictest(&threads, 20_000)
        }
        Format::Schbench => r
            .by_name
            .iter()
            .filter(|n| n.latency.samples > 0)
            .map(|n| {
                report::schbench_block(
                    &format!("{}: Wakeup Latencies", n.name),
                    &n.latency,
                    r.sim_ns / 1_000_000_000,
                )
            })
            .collect::<Vec<_>>()
            .join(""),
    };
    Ok(out)
}

fn check(scenario: &str, over: &Overrides, print_features: bool) -> Result<(), BadInput> {
    let p = load_pair(scenario, over)?;
    if print_features {
        outln!("{}", p.b.features.debugfs_line().trim_end());
    } else {
        out!("{}", p.to_text());
    }
    Ok(())
}

fn compare(
    style: &str,
    a: &str,
    b: Option<&str>,
    a_features: Option<&str>,
    b_features: Option<&str>,
    over: &Overrides,
) -> Result<(), BadInput> {
    // Read once: `-` is stdin.
    let pair = load_pair(a, over)?;
    // One scenario with a baseline block and nothing else: its A and B.
    if let (Some(sa), None, None, None) = (&pair.a, b, a_features, b_features) {
        let (la, lb) = pair.labels();
        let (ra, _) = run_sim(sa);
        let (rb, _) = run_sim(&pair.b);
        let title = report::ab_title(ra.warmup_ns, rb.warmup_ns);
        return compare_out(style, &ra, &la, &rb, &lb, &title);
    }
    if pair.a.is_some() {
        errln!("note: with a second scenario or --a/--b-features, the `baseline` block (A) is left out");
    }
    let mut sa = pair.b;
    let mut sb = match b {
        Some(b) => load(b, over)?,
        None => sa.clone(),
    };
    if let Some(f) = a_features {
        sa.apply_features(f)
            .map_err(|e| BadInput::parse("--a-features", e))?;
    }
    if let Some(f) = b_features {
        sb.apply_features(f)
            .map_err(|e| BadInput::parse("--b-features", e))?;
    }
    let label = |sc: &Scenario, f: Option<&str>, dflt: &str| match f {
        Some(f) => f
            .split([' ', ','])
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
        None => {
            let t = sc.features.canonical_tokens().join(" ");
            if t.is_empty() {
                dflt.to_string()
            } else {
                t
            }
        }
    };
    let la = label(&sa, a_features, &sa.features.profile.to_string());
    let lb = label(&sb, b_features, &sb.features.profile.to_string());
    let (ra, _) = run_sim(&sa);
    let (rb, _) = run_sim(&sb);
    let title = report::latency_title("scheduling latency (us)", ra.warmup_ns, rb.warmup_ns);
    compare_out(style, &ra, &la, &rb, &lb, &title)
}

fn compare_out(
    style: &str,
    ra: &SimResult,
    la: &str,
    rb: &SimResult,
    lb: &str,
    title: &str,
) -> Result<(), BadInput> {
    match style {
        "lkml" => out!("{}", report::compare(ra, la, rb, lb, title)),
        "mmtests" => out!("{}", report::compare_mmtests(ra, la, rb, lb)),
        other => {
            return Err(BadInput(format!(
                "--style {}: use lkml or mmtests",
                shown(other)
            )))
        }
    }
    Ok(())
}

fn import(what: ImportKind) -> Result<(), BadInput> {
    match what {
        ImportKind::Rtapp { file, machine } => {
            let (source, text) =
                read_bounded(&file, limits::RTAPP_BYTES, "rt-app files are small")?;
            let i = eevdf_scenario::rtapp::import(&text, &machine)
                .map_err(|e| BadInput::parse(&source, e))?;
            for w in &i.warnings {
                warn(&format!("{source}: {w}"));
            }
            out!("{}", i.scenario.to_text());
        }
        ImportKind::Trace {
            file,
            regime: true,
            against,
        } => {
            if file == "-" && against.as_deref() == Some("-") {
                return Err(BadInput(
                    "--against -: standard input can be read once; give one trace as a file".into(),
                ));
            }
            let a = read_regime(&file)?;
            let mut runs = vec![(file, a)];
            if let Some(name) = against {
                let b = read_regime(&name)?;
                runs.push((name, b));
            }
            let named: Vec<(&str, &Regime)> = runs.iter().map(|(n, r)| (n.as_str(), r)).collect();
            out!("{}", eevdf_scenario::ftrace_regime::table(&named));
        }
        ImportKind::Trace { file, .. } => {
            let (source, r) = open(&file)?;
            let stats =
                eevdf_scenario::ftrace::import_reader(r).map_err(|e| BadInput::read(&source, e))?;
            outln!(
                "{:>7} {:<16} {:>11} {:>7} {:>7} {:>11} {:>11}",
                "pid",
                "comm",
                "run ms",
                "bursts",
                "sleeps",
                "lat p50 us",
                "lat max us"
            );
            for (pid, s) in stats {
                let mut l = s.wakeup_latency.clone();
                l.sort_unstable();
                let p50 = l.get(l.len().saturating_sub(1) / 2).copied().unwrap_or(0);
                let max = l.last().copied().unwrap_or(0);
                outln!(
                    "{pid:>7} {:<16} {:>11.3} {:>7} {:>7} {:>11.3} {:>11.3}",
                    shown(&s.comm),
                    s.run_ns as f64 / 1e6,
                    s.bursts,
                    s.sleeps,
                    p50 as f64 / 1e3,
                    max as f64 / 1e3
                );
            }
        }
        ImportKind::Debugfs { file, into } => {
            let hint = "paste the features line and tunables only";
            let (source, text) = read_bounded(&file, limits::DEBUGFS_BYTES, hint)?;
            let none = Overrides {
                set: Vec::new(),
                features: None,
                seed: None,
                duration: None,
            };
            let mut sc = load(&into, &none)?;
            let warnings = eevdf_scenario::debugfs::apply(&mut sc, &text)
                .map_err(|e| BadInput::parse(&source, e))?;
            for w in &warnings {
                warn(&format!("{source}: {w}"));
            }
            out!("{}", sc.to_text());
        }
    }
    Ok(())
}

fn features_cmd(line: String, profile: String) -> Result<(), BadInput> {
    let Some(profile) = eevdf_core::Profile::parse(&profile) else {
        return Err(BadInput(format!(
            "unknown profile `{}` (hint: v6.12, v6.18, v6.19-rc1, v7.1, tip-2026-09)",
            shown(&profile)
        )));
    };
    let text = if line == "-" {
        read_bounded("-", limits::FEATURES_BYTES, "paste one features line")?.1
    } else {
        line
    };
    eevdf_scenario::parse_features_line(&text).map_err(|e| BadInput(format!("features: {e}")))?;
    let mut set = eevdf_core::FeatureSet::new(profile);
    for w in set.apply_debugfs_line(&text) {
        warn(&w.to_string());
    }
    outln!("profile   {}", set.profile.name());
    outln!("debugfs   {}", set.debugfs_line().trim_end());
    outln!("canonical {}", set.canonical_tokens().join(" "));
    for (name, on) in &set.not_modelled {
        let prefix = if *on { "" } else { "NO_" };
        outln!("not modelled: {prefix}{name}");
    }
    Ok(())
}

// One arm per subcommand, each only calling its command (ripgrep's
// shape): longer than 100 lines, split by nothing but the subcommands.
fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Kernel { what } => {
            return match kernel::main(what) {
                Ok(()) => ExitCode::SUCCESS,
                Err(f) => kernel::exit(f),
            }
        }
        Command::Run {
            scenario,
            over,
            format,
            base,
            trace,
            decisions,
            trace_last,
            max_events,
        } => run(
            &scenario,
            &over,
            format,
            &base,
            &RecordArgs {
                trace,
                decisions,
                last: trace_last,
            },
            max_events,
        ),
        Command::Import { what } => import(what),
        Command::Url {
            scenario,
            over,
            base,
        } => load_pair(&scenario, &over).map(|p| {
            outln!("{}", eevdf_scenario::link::pair_url(&p, &base));
        }),
        Command::Check {
            scenario,
            over,
            print_features,
        } => check(&scenario, &over, print_features),
        Command::Compare {
            scenario,
            scenario_b,
            a_features,
            b_features,
            over,
            style,
            sim: _,
            kernel,
        } => match kernel {
            Some(k) if style != "lkml" => Err(BadInput(format!(
                "--style {} with --kernel {}: only lkml is supported",
                shown(&style),
                shown(&k)
            ))),
            Some(k) => {
                let ab = kernel::CompareArgs {
                    a: &scenario,
                    b: scenario_b.as_deref(),
                    a_features: a_features.as_deref(),
                    b_features: b_features.as_deref(),
                    over: &over,
                    kernel: &k,
                };
                return match kernel::compare(&ab) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(f) => kernel::exit(f),
                };
            }
            None => compare(
                &style,
                &scenario,
                scenario_b.as_deref(),
                a_features.as_deref(),
                b_features.as_deref(),
                &over,
            ),
        },
        Command::Sweep(args) => {
            return match sweep::sweep(*args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(f) => kernel::exit(f),
            }
        }
        Command::Presets { name: None } => {
            for p in presets::PRESETS {
                outln!("{:<21} {}", p.name, p.title);
            }
            Ok(())
        }
        Command::Presets { name: Some(n) } => match presets::preset(&n) {
            Some(p) => {
                // Comments wrapped to the format's 72 columns, so the
                // output is itself a valid scenario file.
                out!("{}", comment_lines(p.title));
                if !p.source.is_empty() {
                    out!("{}", comment_lines(p.source));
                }
                out!("{}", p.text);
                Ok(())
            }
            None => Err(BadInput(format!(
                "no preset `{}` (hint: `eevdf presets` lists them)",
                shown(&n)
            ))),
        },
        Command::Features { line, profile } => features_cmd(line, profile),
        Command::Shares { nice } => {
            let shares = eevdf_sim::shares::ideal_shares_ppm(&nice);
            outln!("{:>5} {:>7} {:>8}", "nice", "weight", "share");
            for (n, s) in nice.iter().zip(shares) {
                let w = eevdf_core::nice_to_weight(*n);
                outln!("{n:>5} {w:>7} {:>7.3}%", s as f64 / 10_000.0);
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(BadInput(msg)) => {
            // Messages echo untrusted tokens; no raw control character
            // reaches the terminal.
            errln!("error: {}", escape_controls(&msg));
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

/// A warning line on stderr, control characters escaped.
fn warn(msg: &str) {
    errln!("warning: {}", escape_controls(msg));
}

/// `text` as `# ` comment lines of at most 72 columns (words longer
/// than a line stay whole; the scenario parser reports those).
fn comment_lines(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for word in text.split_whitespace() {
        if line.len() > 1 && line.chars().count() + 1 + word.chars().count() > 72 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::comment_lines;

    /// `eevdf presets NAME > my.scn` gives a file that parses: comments
    /// wrapped to 72 columns, then the scenario.
    #[test]
    fn preset_output_is_a_valid_scenario() {
        for p in eevdf_scenario::presets::PRESETS {
            let mut out = comment_lines(p.title);
            if !p.source.is_empty() {
                out.push_str(&comment_lines(p.source));
            }
            out.push_str(p.text);
            assert!(out.lines().all(|l| l.chars().count() <= 72), "{}", p.name);
            let sc = eevdf_scenario::scenario::Scenario::parse(&out)
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(sc.to_text(), p.text, "{}", p.name);
        }
        assert_eq!(comment_lines("a b"), "# a b\n");
    }
}
