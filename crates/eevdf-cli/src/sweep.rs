//! `eevdf sweep`: a scenario over a grid of axis values, every cell on
//! its own core (rayon), as JSON lines, a summary table or a chart; and
//! `eevdf sweep merge` for shards run elsewhere.

use std::io::IsTerminal;

use eevdf_driver::sweep::{self, Axis, Grid, Line, PERCENTILES};
use rayon::prelude::*;

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

pub fn sweep(args: SweepArgs) -> Result<(), BadInput> {
    if let Some(SweepCmd::Merge { files, show }) = args.merge {
        return merge(&files, &show);
    }
    let scenario = args.scenario.clone().unwrap_or_default();
    let grid = grid(&scenario, &args)?;
    let (index, count) = match &args.shard {
        Some(s) => parse_shard(s)?,
        None => (0, 1),
    };
    let cells = grid.shard(index, count);
    let events = grid.budget(&cells).map_err(BadInput)?;
    errln!(
        "note: {} of {} runs (grid {}{}), about {} M events",
        cells.len(),
        grid.cells(),
        grid.id(),
        args.shard
            .as_deref()
            .map_or(String::new(), |s| format!(", shard {s}")),
        events.div_ceil(1_000_000)
    );
    let text = run_cells(&grid, &cells, args.jobs)?;
    show(&text, &args.show)
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
    Grid::new(sc, axes).map_err(BadInput)
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
fn run_cells(grid: &Grid, cells: &[usize], jobs: Option<usize>) -> Result<String, BadInput> {
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
                let line = grid.run_cell(i, &mut |_| {});
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
