//! `eevdf kernel ...`: real-kernel mode (fetch a Debian kernel, run a
//! scenario on it under QEMU -icount). Argument handling and printing
//! only; the work is in `eevdf-kernel`.

use crate::out::{errln, out, outln};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Subcommand;
use eevdf_kernel::qemu::Phase;
use eevdf_kernel::{run, select, KernelError};

use crate::{load, render, BadInput, Format, Overrides};

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
    /// Measure the QEMU machine's costs inside the guest (one CPU), then
    /// what a running hackbench pays per message (two 2 s runs), and
    /// print them with the scenario keys they map onto.
    Calibrate {
        /// A series (fetched now if missing), or the path of any bzImage.
        #[arg(long, default_value = "7.2", value_name = "SERIES|PATH")]
        kernel: String,
        /// `-icount shift=`.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=10))]
        shift: u32,
        /// Keep the serial logs and initrd in this directory.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
    },
    /// Simulate the committed fidelity references and write
    /// docs/fidelity.md, the known-disagreements list and the page's data.
    FidelityDoc {
        #[arg(long, default_value = "tests/kernel-ref")]
        refs: PathBuf,
        #[arg(long, default_value = "docs/fidelity.md")]
        out: PathBuf,
        #[arg(long, default_value = "crates/eevdf-scenario/data/kernel_ref.txt")]
        page_data: PathBuf,
    },
    /// Run the fidelity set on kernels (cached per boot, resumable) and
    /// write the reference files (`make fidelity`).
    Fidelity {
        /// Comma-separated rows (default: all; `eevdf kernel fidelity --list`).
        #[arg(long, value_delimiter = ',')]
        rows: Vec<String>,
        #[arg(long, value_delimiter = ',')]
        variants: Vec<String>,
        #[arg(long, value_delimiter = ',', default_values_t = ["7.2".to_string(), "6.12".to_string()])]
        kernels: Vec<String>,
        /// Seeds 1..=N.
        #[arg(long, default_value_t = 5)]
        seeds: u64,
        /// Parallel QEMUs. Keep it at most the host's cores: with 4 QEMUs
        /// and a build on 2 cores, 7 of 242 boots were not bit-identical to
        /// their references (a boot that disagrees with its reference is
        /// booted a third time).
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        #[arg(long, default_value = "tests/kernel-ref")]
        out: PathBuf,
        /// List the rows and variants and stop.
        #[arg(long)]
        list: bool,
    },
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
    /// Write the kernel's tracefs sched events (ftrace text). Each event
    /// costs the guest about 1.7 us: traced wakeup latencies are about
    /// 5 us longer than untraced ones.
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// Also trace a `dynamic_events` probe (with `--trace`; repeatable),
    /// e.g. `f:wake check_preempt_wakeup_fair p->se.vlag p->se.deadline`:
    /// the kernel's own values, read through BTF.
    #[arg(long, value_name = "DEF", requires = "trace")]
    probe: Vec<String>,
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
    errln!("eevdf kernel: {msg}");
}

pub fn main(cmd: KernelCmd) -> Result<(), Failure> {
    match cmd {
        KernelCmd::Fetch { series } => {
            let img = eevdf_kernel::fetch::fetch(&series, &mut |m| say(m))
                .map_err(|e| Failure::Run(e.to_string()))?;
            outln!("{} {}", img.release, img.vmlinuz.display());
            Ok(())
        }
        KernelCmd::Fidelity {
            rows,
            variants,
            kernels,
            seeds,
            jobs,
            out,
            list,
        } => fidelity(rows, variants, kernels, seeds, jobs, out, list),
        KernelCmd::FidelityDoc {
            refs,
            out,
            page_data,
        } => fidelity_doc(&refs, &out, &page_data),
        KernelCmd::Calibrate {
            kernel,
            shift,
            keep,
        } => calibrate(&kernel, shift, keep),
        KernelCmd::Guest => {
            let g = eevdf_kernel::guest_bin::locate(&mut |m| say(m))?;
            outln!("{} {}", g.path.display(), g.sha256);
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
                probe,
                shift,
                timeout,
                keep,
            } = *args;
            let sc = load(&scenario, &over)?;
            let image = select::image(&kernel, kernel_config.as_deref(), &mut |m| say(m))?;
            let guest = eevdf_kernel::guest_bin::locate(&mut |m| say(m))?;
            let tmp = std::env::temp_dir().join(format!("eevdf-kernel-{}", std::process::id()));
            let mut opts = run::Options::new(keep.clone().unwrap_or_else(|| tmp.clone()));
            opts.seed = sc.sim.seed;
            opts.shift = shift;
            opts.trace = trace.is_some();
            opts.probes = probe;
            opts.timeout = timeout.map(Duration::from_secs);
            for w in run::warnings(&sc, &image) {
                say(&format!("warning: {w}"));
            }
            let bar = progress_bar(&image.release, sc.sim.duration_ns);
            let out = run::run(&sc, &image, &guest, &opts, &mut |p, wall| {
                if let Some(b) = &bar {
                    b.set_message(phase_text(p, wall));
                    b.tick();
                }
            });
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
            out!(
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

/// Items by name from a table, all of it when `names` is empty.
fn pick<T>(
    names: &[String],
    all: &'static [T],
    name: fn(&T) -> &str,
    what: &str,
) -> Result<Vec<&'static T>, Failure> {
    if names.is_empty() {
        return Ok(all.iter().collect());
    }
    names
        .iter()
        .map(|n| {
            all.iter().find(|t| name(t) == n).ok_or_else(|| {
                let known: Vec<&str> = all.iter().map(name).collect();
                Failure::Bad(format!("no {what} `{n}` (hint: {})", known.join(", ")))
            })
        })
        .collect()
}

fn fidelity(
    rows: Vec<String>,
    variants: Vec<String>,
    kernels: Vec<String>,
    seeds: u64,
    jobs: usize,
    out: PathBuf,
    list: bool,
) -> Result<(), Failure> {
    use eevdf_kernel::fidelity::{ROWS, VARIANTS};
    if list {
        for r in &ROWS {
            outln!(
                "row     {:<14} {} (variants {})",
                r.name,
                r.title,
                r.variants.map_or("all".to_string(), |v| v.join(", "))
            );
        }
        for v in &VARIANTS {
            outln!("variant {}", v.name);
        }
        return Ok(());
    }
    let rows = pick(&rows, &ROWS, |r| r.name, "row")?;
    let variants = pick(&variants, &VARIANTS, |v| v.name, "variant")?;
    if !(1..=100).contains(&seeds) {
        return Err(Failure::Bad(format!("--seeds {seeds}: use 1 to 100")));
    }
    let mut images = Vec::new();
    for k in &kernels {
        images.push((k.clone(), select::image(k, None, &mut |m| say(m))?));
    }
    let guest = eevdf_kernel::guest_bin::locate(&mut |m| say(m))?;
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let plan = eevdf_kernel::fidelity_run::Plan {
        rows,
        variants,
        kernels: images,
        seeds: (1..=seeds).collect(),
        jobs,
        out,
        cache: eevdf_kernel::fetch::cache_root().join("runs"),
        qemu: "qemu-system-x86_64".into(),
        commit,
    };
    let n = eevdf_kernel::fidelity_run::run_plan(&plan, &guest, &|m| say(m))?;
    say(&format!(
        "wrote {n} reference files to {}",
        plan.out.display()
    ));
    Ok(())
}

fn fidelity_doc(refs: &Path, out: &Path, page_data: &Path) -> Result<(), Failure> {
    use eevdf_kernel::fidelity;
    let refs_v = fidelity::load_references(refs).map_err(Failure::Bad)?;
    if refs_v.is_empty() {
        return Err(Failure::Bad(format!(
            "{}: no reference files (hint: make fidelity runs the kernels first)",
            refs.display()
        )));
    }
    let judged = fidelity::judge_all(&refs_v).map_err(Failure::Run)?;
    let verdicts = fidelity::verdicts(&judged);
    let write = |p: &Path, text: String| {
        std::fs::write(p, text).map_err(|e| Failure::Run(format!("{}: {e}", p.display())))
    };
    let why = std::fs::read_to_string(refs.join("why.md")).unwrap_or_default();
    // The page's default preset and its flips (make default-ref), if run.
    let default = match std::fs::read_to_string(refs.join("default.7.2.jsonl")) {
        Ok(t) => Some(
            eevdf_kernel::default_ref::DefaultRef::parse(&t)
                .map_err(|e| Failure::Bad(format!("default.7.2.jsonl: {e}")))?,
        ),
        Err(_) => None,
    };
    let mut doc = fidelity::markdown_with(&judged, &verdicts, &why);
    let mut page = fidelity::page_data(&judged);
    if let Some(d) = &default {
        doc.push_str(&d.markdown());
        page.push_str(&d.page_rows());
    }
    // Throughput alone (make throughput-ref), if run.
    let mut known = verdicts.clone();
    if let Some((judged, tv)) = throughput(refs)? {
        doc.push_str(&eevdf_kernel::throughput_ref::markdown(&judged, &tv));
        known.extend(tv);
    }
    write(out, doc)?;
    write(
        &refs.join("known-disagreements.txt"),
        fidelity::known_text(&known),
    )?;
    write(page_data, page)?;
    let agree = verdicts.iter().filter(|v| v.agrees).count();
    say(&format!(
        "{} references, {agree} of {} cells agree; wrote {}",
        refs_v.len(),
        verdicts.len(),
        out.display()
    ));
    Ok(())
}

/// The throughput references' groups and verdicts (every benchmark
/// whose `BENCH.jsonl` is there).
type Throughput = (
    Vec<eevdf_kernel::throughput_ref::Judged>,
    Vec<eevdf_kernel::fidelity::Verdict>,
);

fn throughput(refs: &Path) -> Result<Option<Throughput>, Failure> {
    use eevdf_kernel::throughput_ref::{verdicts, ThroughputRef, BENCHES};
    let mut judged = Vec::new();
    for bench in BENCHES {
        let Ok(jsonl) = std::fs::read_to_string(refs.join(format!("{bench}.jsonl"))) else {
            continue;
        };
        let path = refs.join(format!("{bench}.txt"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Failure::Bad(format!("{}: {e}", path.display())))?;
        let r = ThroughputRef::parse(bench, &text, &jsonl)
            .map_err(|e| Failure::Bad(format!("{bench}.jsonl: {e}")))?;
        judged.extend(r.judge().map_err(Failure::Run)?);
    }
    if judged.is_empty() {
        return Ok(None);
    }
    let v = verdicts(&judged);
    Ok(Some((judged, v)))
}

/// Prints a failure and gives its exit code.
pub fn exit(f: Failure) -> std::process::ExitCode {
    let (msg, code) = match f {
        Failure::Bad(m) => (m, crate::EXIT_BAD_INPUT),
        Failure::Run(m) => (m, crate::EXIT_RUN_FAILED),
    };
    errln!("error: {}", eevdf_scenario::display::escape_controls(&msg));
    std::process::ExitCode::from(code)
}

/// `eevdf compare ... --kernel K`.
#[derive(Debug)]
pub struct CompareArgs<'a> {
    pub a: &'a str,
    pub b: Option<&'a str>,
    pub a_features: Option<&'a str>,
    pub b_features: Option<&'a str>,
    pub over: &'a Overrides,
    pub kernel: &'a str,
}

/// One side on both: the kernel's result and its simulator twin's.
fn both(
    sc: &eevdf_scenario::scenario::Scenario,
    image: &run::Image,
    guest: &eevdf_kernel::guest_bin::GuestBinary,
) -> Result<(eevdf_sim::SimResult, run::KernelRun, String), Failure> {
    let tmp = std::env::temp_dir().join(format!("eevdf-compare-{}", std::process::id()));
    let mut opts = run::Options::new(tmp.clone());
    opts.seed = sc.sim.seed;
    let k = run::run(sc, image, guest, &opts, &mut |_, _| {});
    let _ = std::fs::remove_dir_all(&tmp);
    let k = k?;
    let s = &k.source;
    let twin = run::sim_twin(
        sc,
        sc.sim.seed,
        &image.release,
        &s.features,
        s.base_slice_ns,
        &s.preempt,
        s.hz,
    )
    .map_err(Failure::Run)?;
    let line = twin.features.debugfs_line().trim_end().to_string();
    let mut sim = eevdf_sim::simulate(twin.sim_config());
    run::drop_guest_kthreads(&mut sim, sc);
    Ok((sim, k, line))
}

pub fn compare(a: &CompareArgs) -> Result<(), Failure> {
    let mut sa = load(a.a, a.over)?;
    let mut sb = load(a.b.unwrap_or(a.a), a.over)?;
    for (sc, f, flag) in [
        (&mut sa, a.a_features, "--a-features"),
        (&mut sb, a.b_features, "--b-features"),
    ] {
        if let Some(f) = f {
            sc.apply_features(f).map_err(|e| BadInput::parse(flag, e))?;
        }
    }
    let ab = a.b.is_some() || a.a_features.is_some() || a.b_features.is_some();
    let image = select::image(a.kernel, None, &mut |m| say(m))?;
    let guest = eevdf_kernel::guest_bin::locate(&mut |m| say(m))?;
    for w in run::warnings(&sa, &image) {
        say(&format!("warning: {w}"));
    }
    say(&format!("running A on {}", image.release));
    let (sim_a, k_a, line_a) = both(&sa, &image, &guest)?;
    let kernel_label = format!("kernel {}", image.release.split('+').next().unwrap_or(""));
    let mut out = String::new();
    if !ab {
        out.push_str(&eevdf_scenario::report::compare(
            &sim_a,
            "simulator",
            &k_a.result,
            &kernel_label,
            "scheduling latency (us): simulator (kernel's settings) against the kernel",
        ));
        out.push_str(&format!(
            "\nfeatures (simulator): {line_a}\nfeatures (kernel):    {}\n",
            k_a.source.features
        ));
    } else {
        say(&format!("running B on {}", image.release));
        let (sim_b, k_b, line_b) = both(&sb, &image, &guest)?;
        let la = a.a_features.unwrap_or("A");
        let lb = a.b_features.unwrap_or("B");
        out.push_str(&eevdf_scenario::report::compare(
            &sim_a,
            la,
            &sim_b,
            lb,
            "simulator, scheduling latency (us)",
        ));
        out.push('\n');
        out.push_str(&eevdf_scenario::report::compare(
            &k_a.result,
            la,
            &k_b.result,
            lb,
            &format!("{kernel_label}, scheduling latency (us)"),
        ));
        out.push_str(&format!(
            "\nfeatures A (simulator): {line_a}\nfeatures A (kernel):    {}\n\
             features B (simulator): {line_b}\nfeatures B (kernel):    {}\n",
            k_a.source.features, k_b.source.features
        ));
    }
    out!("{out}");
    Ok(())
}

fn calibrate(kernel: &str, shift: u32, keep: Option<PathBuf>) -> Result<(), Failure> {
    let image = select::image(kernel, None, &mut |m| say(m))?;
    let guest = eevdf_kernel::guest_bin::locate(&mut |m| say(m))?;
    let tmp = std::env::temp_dir().join(format!("eevdf-calibrate-{}", std::process::id()));
    let mut opts = run::Options::new(keep.clone().unwrap_or_else(|| tmp.clone()));
    opts.shift = shift;
    let out = eevdf_kernel::calibrate::run(&image, &guest, &opts, &mut |_, _| {});
    // Then what a running hackbench pays per message, which the batch
    // underestimates (eevdf_kernel::steady).
    let steady = out.as_ref().ok().map(|(cal, _)| {
        eevdf_kernel::steady::measure(&image, &guest, &opts, &cal.derived(), &mut |_, _| {})
    });
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let (cal, wall) = out?;
    say(&format!(
        "{}: calibrated in {:.1} s wall",
        image.release,
        wall.as_secs_f64()
    ));
    let steady = match steady {
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            say(&format!(
                "the steady-state hackbench runs failed ({}); the keys hold the batch's \
                 message costs",
                e.message
            ));
            Vec::new()
        }
        None => Vec::new(),
    };
    out!("{}", cal.render(shift, &steady));
    Ok(())
}
