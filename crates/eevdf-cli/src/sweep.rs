//! `eevdf sweep`: a scenario over a grid of axis values, every cell on
//! its own core (rayon), on the simulator or a real kernel, as JSON
//! lines, a summary table or a chart; and `eevdf sweep merge` for shards
//! run elsewhere.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use eevdf_driver::sweep::{self, Axis, Engine, Grid, Line, PERCENTILES, SIM};
use eevdf_kernel::run::{Image, Options};
use eevdf_kernel::{cell, guest_bin, qemu, select};
use eevdf_scenario::report;
use eevdf_scenario::scenario::Scenario;
use rayon::prelude::*;

use crate::kernel::Failure;
use crate::out::{errln, out};
use crate::{load, BadInput, Overrides};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    merge: Option<SweepCmd>,
    /// The scenario (file, `-`, preset or link).
    #[arg(required = true)]
    scenario: Option<String>,
    /// An axis of `--set` values, e.g. `task.hb.slice=1ms,2ms,4ms`
    /// (repeatable; the first one is the chart's x axis).
    #[arg(long, value_name = "KEY=V1,V2,...")]
    vary: Vec<String>,
    /// An axis of feature sets, e.g. `PREEMPT_SHORT,NO_PREEMPT_SHORT`
    /// (`+` joins tokens within one value).
    #[arg(long, value_name = "A,B,...")]
    features_axis: Option<String>,
    /// An axis of machines, e.g. `smp2,smp4,smp8`.
    #[arg(long, value_name = "M1,M2,...")]
    machine: Option<String>,
    /// An axis of seeds: `1..10` (both included) or `1,5,9`; the table
    /// and chart show medians and spread over them.
    #[arg(long, value_name = "A..B")]
    seeds: Option<String>,
    /// An axis of where cells run: `sim` (the simulator) and real
    /// kernels under QEMU (a series such as `7.2`, fetched if missing, or
    /// a bzImage path), e.g. `sim,7.2`. Kernel boots are cached by their
    /// inputs; a simulator-only feature skips the kernel's cell.
    #[arg(long, value_name = "sim,SERIES|PATH,...")]
    kernel: Option<String>,
    /// Where kernel boots are cached (default: runs/sweep in eevdf's
    /// cache, `$EEVDF_CACHE` or `~/.cache/eevdf`).
    #[arg(long, value_name = "DIR", requires = "kernel")]
    kernel_cache: Option<PathBuf>,
    /// Run only shard I of N (0 <= I < N): cells I, I+N, I+2N, ...;
    /// `eevdf sweep merge` joins the shards' lines.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Runs at once (default: every core).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    #[command(flatten)]
    over: Overrides,
    #[command(flatten)]
    show: Show,
}

#[derive(Debug, clap::Subcommand)]
enum SweepCmd {
    /// Join shards' JSON lines into the whole grid's (in cell order),
    /// refusing a missing or duplicated cell or a second grid.
    Merge {
        /// The shards' outputs (`-` for stdin).
        #[arg(required = true)]
        files: Vec<String>,
        #[command(flatten)]
        show: Show,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum SweepFormat {
    /// One `eevdf.sweep.v1` JSON object per cell, in cell order.
    Jsonl,
    /// Medians and spread over the seeds, per task and axis values.
    Table,
}

#[derive(Debug, clap::Args)]
struct Show {
    #[arg(long, value_enum, default_value = "jsonl")]
    format: SweepFormat,
    /// The percentile the table and chart show.
    #[arg(long, default_value = "p99", value_parser = clap::builder::PossibleValuesParser::new(PERCENTILES))]
    percentile: String,
    /// Also draw the percentile against the first axis as SVG (one line
    /// per combination of the other axes, a band for the seed spread).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<String>,
    /// The task the chart shows (default: the first with samples).
    #[arg(long, value_name = "NAME")]
    task: Option<String>,
}

/// Exit 2 for bad input; exit 1 when a kernel cell failed to run (its
/// line says why, and every other cell's line is still printed).
pub fn sweep(args: SweepArgs) -> Result<(), Failure> {
    if let Some(SweepCmd::Merge { files, show }) = args.merge {
        return Ok(merge(&files, &show)?);
    }
    let scenario = args.scenario.clone().unwrap_or_default();
    let grid = grid(&scenario, &args)?;
    let (index, count) = match &args.shard {
        Some(s) => parse_shard(s)?,
        None => (0, 1),
    };
    let cells = grid.shard(index, count);
    let budget = grid.budget(&cells).map_err(BadInput)?;
    let kernels = match budget.kernel_runs {
        0 => String::new(),
        n => format!(
            ", {n} kernel boots of {} guest s",
            budget.guest_ns.div_ceil(1_000_000_000)
        ),
    };
    errln!(
        "note: {} of {} runs (grid {}{}), about {} M events{kernels}",
        cells.len(),
        grid.cells(),
        grid.id(),
        args.shard
            .as_deref()
            .map_or(String::new(), |s| format!(", shard {s}")),
        budget.events.div_ceil(1_000_000)
    );
    let cache = args
        .kernel_cache
        .clone()
        .unwrap_or_else(|| eevdf_kernel::fetch::cache_root().join("runs").join("sweep"));
    let referee = Referee::new(&grid, &cells, cache)?;
    let text = run_cells(&grid, &cells, args.jobs, &referee)?;
    show(&text, &args.show)?;
    match referee.failed.load(Ordering::Relaxed) {
        0 => Ok(()),
        n => Err(Failure::Run(format!(
            "{n} kernel run(s) failed; their lines say why (kernel boots that \
             finished are cached: a rerun boots only these)"
        ))),
    }
}

fn grid(scenario: &str, args: &SweepArgs) -> Result<Grid, BadInput> {
    let sc = load(scenario, &args.over)?;
    let list =
        |flag: &str, v: &str| sweep::parse_values(v).map_err(|e| BadInput(format!("{flag}: {e}")));
    let mut axes = Vec::new();
    for v in &args.vary {
        let Some((key, values)) = v.split_once('=') else {
            return Err(BadInput(format!(
                "--vary {v}: expected KEY=V1,V2,... (hint: e.g. --vary task.hb.slice=1ms,2ms)"
            )));
        };
        axes.push(Axis::Set {
            key: key.trim().to_string(),
            values: list("--vary", values)?,
        });
    }
    if let Some(f) = &args.features_axis {
        axes.push(Axis::Features(list("--features-axis", f)?));
    }
    if let Some(m) = &args.machine {
        axes.push(Axis::Machine(list("--machine", m)?));
    }
    if let Some(s) = &args.seeds {
        let seeds = sweep::parse_seeds(s).map_err(|e| BadInput(format!("--seeds: {e}")))?;
        axes.push(Axis::Seeds(seeds));
    }
    if let Some(k) = &args.kernel {
        let values = list("--kernel", k)?;
        if let Some(v) = values
            .iter()
            .find(|v| *v != SIM && !select::is_series(v) && !Path::new(v).is_file())
        {
            return Err(BadInput(format!(
                "--kernel: `{v}` is neither `{SIM}`, a series nor a file \
                 (hint: e.g. --kernel {SIM},7.2)"
            )));
        }
        axes.push(Axis::Kernel(values));
    }
    if axes.is_empty() {
        axes = link_axes(scenario)?;
    }
    Grid::new(sc, axes).map_err(BadInput)
}

/// The axes of a link's sweep (the page's `&sweep=`), for a sweep given
/// no axis flag: the page's grid, byte for byte. Anything else keeps
/// no axes (one cell, the scenario itself).
fn link_axes(scenario: &str) -> Result<Vec<Axis>, BadInput> {
    if !eevdf_scenario::link::looks_like_link(scenario) {
        return Ok(Vec::new());
    }
    let Some(args) = eevdf_driver::share::sweep_of(scenario) else {
        return Ok(Vec::new());
    };
    let args = args.map_err(BadInput)?;
    let spec = sweep::Spec::parse(&args).map_err(BadInput)?;
    errln!("note: the link's sweep: {args}");
    Ok(spec.axes)
}

/// What kernel cells need, found once before any cell runs: each
/// kernel's image (fetched if missing), the guest runner, QEMU's version.
struct Referee {
    images: BTreeMap<String, Image>,
    guest: Option<guest_bin::GuestBinary>,
    qemu: PathBuf,
    qemu_version: String,
    cache: PathBuf,
    /// Kernel cells whose boot failed (not refused).
    failed: AtomicUsize,
    /// Numbers the cells' work directories.
    started: AtomicUsize,
}

impl Referee {
    fn new(grid: &Grid, cells: &[usize], cache: PathBuf) -> Result<Referee, Failure> {
        let mut r = Referee {
            images: BTreeMap::new(),
            guest: None,
            qemu: "qemu-system-x86_64".into(),
            qemu_version: String::new(),
            cache,
            failed: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
        };
        let say = &mut |m: &str| errln!("eevdf sweep: {m}");
        for &i in cells {
            if let Engine::Kernel(k) = grid.engine(i) {
                if !r.images.contains_key(k) {
                    r.images.insert(k.to_string(), select::image(k, None, say)?);
                }
            }
        }
        if !r.images.is_empty() {
            r.guest = Some(guest_bin::locate(say)?);
            r.qemu_version = qemu::version(&r.qemu)?;
        }
        Ok(r)
    }

    /// Runs `sc` on kernel `k`: the result's JSON with its `source`
    /// block, or why the cell is skipped.
    fn run(&self, sc: &Scenario, k: &str) -> Result<String, String> {
        if let Some(why) = cell::simulator_only(sc) {
            return Err(format!("kernel {k}: {why}"));
        }
        let (Some(image), Some(guest)) = (self.images.get(k), &self.guest) else {
            return Err(format!("kernel {k}: not resolved before the run"));
        };
        let n = self.started.fetch_add(1, Ordering::Relaxed);
        let tmp = std::env::temp_dir().join(format!("eevdf-sweep-{}-{n}", std::process::id()));
        let mut opts = Options::new(tmp.clone());
        opts.qemu = self.qemu.clone();
        opts.seed = sc.sim.seed;
        let out = cell::run_cached(sc, image, guest, &opts, &self.qemu_version, &self.cache);
        let _ = std::fs::remove_dir_all(&tmp);
        match out {
            Ok(run) => Ok(report::json_with_source(
                &sc.to_text(),
                &run.result,
                Some(&run.source),
            )),
            Err(e) if e.bad_input => Err(format!("kernel {k}: {}", e.message)),
            Err(e) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                Err(format!("kernel {k}: the run failed: {}", e.message))
            }
        }
    }
}

fn parse_shard(s: &str) -> Result<(usize, usize), BadInput> {
    let bad = || {
        BadInput(format!(
            "--shard {s}: expected I/N with 0 <= I < N, e.g. 0/4"
        ))
    };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Runs the cells in parallel; lines come back in cell order whatever
/// finished first. Progress (with an ETA) on a terminal.
fn run_cells(
    grid: &Grid,
    cells: &[usize],
    jobs: Option<usize>,
    referee: &Referee,
) -> Result<String, BadInput> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .map_err(|e| BadInput(format!("--jobs: {e}")))?;
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(cells.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} runs, {eta} left")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let lines: Vec<String> = pool.install(|| {
        cells
            .par_iter()
            .map(|&i| {
                let line = grid.run_cell_on(i, &mut |_| {}, &|sc, k| referee.run(sc, k));
                if let Some(b) = &bar {
                    b.inc(1);
                }
                line
            })
            .collect()
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(lines.concat())
}

fn merge(files: &[String], show_args: &Show) -> Result<(), BadInput> {
    let mut texts = Vec::new();
    for f in files {
        // A cell's line is 1-20 KB (its result lists every thread).
        let limit = 16 * 1024 * sweep::MAX_CELLS as u64;
        let (_, t) = crate::read_bounded(f, limit, "a shard's output is one JSON line per cell")?;
        texts.push(t);
    }
    let text = sweep::merge(&texts).map_err(|e| BadInput(format!("merge: {e}")))?;
    show(&text, show_args)
}

fn show(text: &str, args: &Show) -> Result<(), BadInput> {
    let lines: Vec<Line> = text
        .lines()
        .enumerate()
        .map(|(n, l)| sweep::read_line(n + 1, l))
        .collect::<Result<_, _>>()
        .map_err(BadInput)?;
    if let Some(path) = &args.plot {
        crate::plot::sweep_svg(path, &lines, args.task.as_deref(), &args.percentile)?;
        errln!("note: wrote {path}");
    }
    match args.format {
        SweepFormat::Jsonl => out!("{text}"),
        SweepFormat::Table => out!("{}", sweep::summary(&lines, &args.percentile)),
    }
    Ok(())
}
