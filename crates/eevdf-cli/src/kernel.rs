//! `eevdf kernel ...`: real-kernel mode (fetch a Debian kernel, run a
//! scenario on it under QEMU -icount). Argument handling and printing
//! only; the work is in `eevdf-kernel`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use eevdf_kernel::qemu::Phase;
use eevdf_kernel::{run, select, KernelError};

use crate::{load, read_input, render, BadInput, Format, Overrides};

#[derive(Debug, Subcommand)]
pub enum KernelCmd {
    /// Download the newest Debian cloud kernel of a series (7.2, 6.18,
    /// 6.17, 6.16, 6.12) into the cache and say which version it got.
    Fetch { series: String },
    /// Build (or find, with `$EEVDF_GUEST`) the static guest runner and
    /// print its path and sha256.
    Guest,
    /// Run a scenario on a real kernel under deterministic QEMU and print
    /// the result in any report format (JSON gains a `source` block).
    Run(Box<RunArgs>),
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    scenario: String,
    #[command(flatten)]
    over: Overrides,
    /// A series fetched with `eevdf kernel fetch` (fetched now if
    /// missing), or the path of any bzImage.
    #[arg(long, default_value = "7.2", value_name = "SERIES|PATH")]
    kernel: String,
    /// The kernel's config, for `--kernel PATH` (default: beside it).
    #[arg(long, value_name = "FILE")]
    kernel_config: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Base address of share links (`--format mail`).
    #[arg(long, default_value = eevdf_scenario::link::DEFAULT_BASE)]
    base: String,
    /// Write the kernel's tracefs sched events (ftrace text).
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// `-icount shift=`: 2^N ns of virtual time per guest instruction.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=10))]
    shift: u32,
    /// Wall-clock limit in seconds (default: from the duration).
    #[arg(long)]
    timeout: Option<u64>,
    /// Keep the serial logs and initrd in this directory.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
}

/// A failure of a kernel command: bad input (exit 2) or a failed run (exit 1).
pub enum Failure {
    Bad(String),
    Run(String),
}

impl From<BadInput> for Failure {
    fn from(b: BadInput) -> Self {
        Failure::Bad(b.0)
    }
}

impl From<KernelError> for Failure {
    fn from(e: KernelError) -> Self {
        if e.bad_input {
            Failure::Bad(e.to_string())
        } else {
            Failure::Run(e.to_string())
        }
    }
}

fn say(msg: &str) {
    eprintln!("eevdf kernel: {msg}");
}

pub fn main(cmd: KernelCmd) -> Result<(), Failure> {
    match cmd {
        KernelCmd::Fetch { series } => {
            let img = eevdf_kernel::fetch::fetch(&series, &mut |m| say(m))
                .map_err(|e| Failure::Run(e.to_string()))?;
            println!("{} {}", img.release, img.vmlinuz.display());
            Ok(())
        }
        KernelCmd::Guest => {
            let g = eevdf_kernel::guest_bin::locate(&mut |m| say(m))?;
            println!("{} {}", g.path.display(), g.sha256);
            Ok(())
        }
        KernelCmd::Run(args) => {
            let RunArgs {
                scenario,
                over,
                kernel,
                kernel_config,
                format,
                base,
                trace,
                shift,
                timeout,
                keep,
            } = *args;
            let (_, text) = read_input(&scenario)?;
            let sc = load(&scenario, &over)?;
            let explicit_preempt = run::has_preempt_directive(&text)
                || over.set.iter().any(|kv| kv.starts_with("preempt="));
            let image = select::image(&kernel, kernel_config.as_deref(), &mut |m| say(m))?;
            let guest = eevdf_kernel::guest_bin::locate(&mut |m| say(m))?;
            let tmp = std::env::temp_dir().join(format!("eevdf-kernel-{}", std::process::id()));
            let mut opts = run::Options::new(keep.clone().unwrap_or_else(|| tmp.clone()));
            opts.seed = sc.sim.seed;
            opts.shift = shift;
            opts.trace = trace.is_some();
            opts.timeout = timeout.map(Duration::from_secs);
            for w in run::warnings(&sc, &image) {
                say(&format!("warning: {w}"));
            }
            let bar = progress_bar(&image.release, sc.sim.duration_ns);
            let out = run::run(
                &sc,
                explicit_preempt,
                &image,
                &guest,
                &opts,
                &mut |p, wall| {
                    if let Some(b) = &bar {
                        b.set_message(phase_text(p, wall));
                        b.tick();
                    }
                },
            );
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            if keep.is_none() {
                let _ = std::fs::remove_dir_all(&tmp);
            }
            let out = out?;
            say(&format!(
                "{}: {} guest s in {:.1} s wall",
                out.source.uname,
                out.result.sim_ns as f64 / 1e9,
                out.wall.as_secs_f64()
            ));
            if let (Some(path), Some(t)) = (&trace, &out.trace) {
                std::fs::write(path, t).map_err(|e| BadInput(format!("--trace {path}: {e}")))?;
            }
            let hists = out
                .report
                .threads
                .iter()
                .map(|t| t.latency.clone())
                .collect();
            print!(
                "{}",
                render(format, &sc, &out.result, hists, &base, Some(&out.source))?
            );
            Ok(())
        }
    }
}

fn phase_text(p: Phase, wall: Duration) -> String {
    let what = match p {
        Phase::Booting => "booting",
        Phase::Measuring => "measuring",
        Phase::Reporting => "reporting",
    };
    format!("{what} ({:.0} s)", wall.as_secs_f64())
}

/// A spinner on a terminal: QEMU does not say how far the guest's
/// virtual time has got, only which phase it is in.
fn progress_bar(release: &str, duration_ns: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new_spinner();
    b.set_prefix(format!(
        "{release}, {} s window",
        duration_ns / 1_000_000_000
    ));
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {prefix}: {msg}") {
        b.set_style(style);
    }
    Some(b)
}
