//! A whole run: parse, set the kernel up (guest), start one process per
//! task directive, open the window once all are ready, sample the CPUs
//! around it and merge the processes' reports in directive order.

use std::fs;
use std::io::Write;
use std::path::Path;

use eevdf_scenario::guest::GuestReport;
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::SimConfig;

use crate::clock::{self, Nanos};
use crate::entry::DIRECTIVE_ARGS;
use crate::measure::{self, CpuSample};
use crate::plan;
use crate::proto::{merge, Peer, Window};
use crate::setup;
use crate::trace::Capture;
use crate::workload::Mode;

/// Time from "everyone is ready" to the window, plus per thread: every
/// thread must be asleep waiting for its start, and PID 1 must have
/// sampled the CPUs, before the window opens.
const LEAD_NS: Nanos = 250_000_000;
const LEAD_PER_THREAD_NS: Nanos = 600_000;
/// Time allowed for sampling the CPUs, plus per thread: debugfs
/// `sched/debug` lists every task (about 0.3 ms each under emulation
/// at 2 ns per instruction).
const SAMPLE_NS: Nanos = 50_000_000;
const SAMPLE_PER_THREAD_NS: Nanos = 500_000;

/// `/eevdf/options`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub trace: bool,
    pub trace_buffer_kb: u32,
    /// `dynamic_events` definitions (fprobes, kprobes) traced with the
    /// sched events, e.g. `f:wake check_preempt_wakeup_fair p->se.vlag`.
    pub probes: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            trace: false,
            trace_buffer_kb: 16 << 10,
            probes: Vec::new(),
        }
    }
}

impl Options {
    /// `key=value` lines; unknown keys become warnings.
    pub fn parse(text: &str, warnings: &mut Vec<String>) -> Options {
        let mut o = Options::default();
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            match line.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                Some(("trace", v)) => o.trace = v == "1",
                Some(("probe", v)) => o.probes.push(v.to_string()),
                Some(("trace_buffer_kb", v)) => match v.parse() {
                    Ok(kb) => o.trace_buffer_kb = kb,
                    Err(_) => warnings.push(format!("options: bad trace_buffer_kb {v:?}")),
                },
                _ => warnings.push(format!("options: ignored {line:?}")),
            }
        }
        o
    }
}

/// Something that wants to know when the run should be over (PID 1's
/// watchdog).
pub trait Deadline {
    fn set(&self, at: Nanos);
}

/// Console progress, never inside the window.
pub fn log(msg: &str) {
    let _ = writeln!(std::io::stderr(), "eevdf-guest: {msg}");
}

/// Reads and parses a scenario file.
pub fn load(path: &Path) -> Result<(String, Scenario), String> {
    let text = fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let sc = Scenario::parse(&text).map_err(|e| format!("scenario {}: {e}", path.display()))?;
    Ok((text, sc))
}

/// Runs the scenario at `scenario_path`, filling `report`; returns the
/// trace capture to dump after the report, if one was asked for.
pub fn run_scenario(
    mode: Mode,
    scenario_path: &Path,
    exe: &Path,
    options: &Options,
    report: &mut GuestReport,
    deadline: Option<&dyn Deadline>,
) -> Result<Option<Capture>, String> {
    let (text, sc) = load(scenario_path)?;
    let threads = plan::plan(&sc.sim_config())?.len() as u64;
    if let Some(d) = deadline {
        d.set(clock::now().saturating_add(120_000_000_000 + threads * 50_000_000));
    }
    report.nr_cpus = setup::online_cpus();
    if sc.machine.nr_cpus() != report.nr_cpus {
        report.warnings.push(format!(
            "the scenario's machine has {} CPUs, this one {}",
            sc.machine.nr_cpus(),
            report.nr_cpus
        ));
    }
    let guest = mode == Mode::Guest;
    if guest {
        setup::configure_kernel(&sc, &text, report)?;
    }
    let capture = match (options.trace, guest) {
        (true, true) => Some(Capture::arm(options.trace_buffer_kb, &options.probes)?),
        (true, false) => {
            report
                .warnings
                .push("trace needs a guest; not captured".into());
            None
        }
        _ => None,
    };
    let mut peers = start_directives(&sc.sim_config(), mode, scenario_path, exe)?;
    if guest {
        if let Err(e) = settle() {
            report.warnings.push(e);
        }
    }
    let lead = LEAD_NS + threads * LEAD_PER_THREAD_NS;
    let sample = SAMPLE_NS + threads * SAMPLE_PER_THREAD_NS;
    let mut w = Window::after(lead, sc.sim.duration_ns)?;
    w.collect = w.t1.saturating_add(sample);
    let (tick, phase) = plan::tick_phase_ns(&sc.sim_config());
    w.align_first_tick(tick, phase);
    if let Some(d) = deadline {
        d.set(
            w.collect
                .saturating_add(60_000_000_000 + threads * 5_000_000),
        );
    }
    if let Err(e) = peers.iter_mut().try_for_each(|p| p.send_window(w)) {
        peers.into_iter().for_each(Peer::kill);
        return Err(e);
    }
    log("window start");
    let _ = clock::sleep_until(w.t0.saturating_sub(sample));
    let sampling = clock::now();
    let before = measure::sample_cpus(guest);
    let started = capture.as_ref().map(|c| c.start(w));
    let sampled = clock::now();
    let _ = clock::sleep_until(w.t1);
    let stopped = capture.as_ref().map(Capture::stop);
    let after = measure::sample_cpus(guest);
    log("window end");
    if sampled > w.t0 {
        report.warnings.push(format!(
            "sampling the CPUs before the window ran {} us into it (it began {} us before)",
            (sampled - w.t0) / 1000,
            w.t0.saturating_sub(sampling) / 1000
        ));
    }
    for r in [started, stopped].into_iter().flatten() {
        if let Err(e) = r {
            report.warnings.push(e);
        }
    }
    for p in peers {
        match p.report() {
            Ok(part) => merge(report, part),
            Err(e) => {
                report.error.get_or_insert(e);
            }
        }
    }
    report.window_ns = w.len();
    report.cpus = cpus(before, after, report.nr_cpus, w.len(), &mut report.warnings);
    Ok(capture)
}

/// Waits until nothing but PID 1 has been runnable for a while: boot-time
/// kernel work (crypto self-tests, tracing's initialisation) can still
/// be running under emulation, and would run inside the window.
fn settle() -> Result<(), String> {
    const QUIET_POLLS: u32 = 10;
    const POLL_NS: Nanos = 10_000_000;
    const GIVE_UP_NS: Nanos = 60_000_000_000;
    let start = clock::now();
    let mut quiet = 0;
    while quiet < QUIET_POLLS {
        let stat = fs::read_to_string("/proc/stat").map_err(|e| format!("/proc/stat: {e}"))?;
        let running = stat
            .lines()
            .find_map(|l| l.strip_prefix("procs_running "))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(1);
        quiet = if running <= 1 { quiet + 1 } else { 0 };
        let now = clock::now();
        if now.saturating_sub(start) > GIVE_UP_NS {
            return Err(format!(
                "the system was still busy {} s after setup ({running} runnable)",
                GIVE_UP_NS / 1_000_000_000
            ));
        }
        let _ = clock::sleep_until(now.saturating_add(POLL_NS));
    }
    let waited = clock::now().saturating_sub(start);
    if waited > 1_000_000_000 {
        log(&format!(
            "waited {} ms for the system to settle",
            waited / 1_000_000
        ));
    }
    Ok(())
}

fn cpus(
    before: Result<CpuSample, String>,
    after: Result<CpuSample, String>,
    nr: u32,
    window_ns: Nanos,
    warnings: &mut Vec<String>,
) -> Vec<eevdf_scenario::guest::GuestCpu> {
    match (before, after) {
        (Ok(b), Ok(a)) => measure::cpu_deltas(&b, &a, nr, window_ns),
        (Err(e), _) | (_, Err(e)) => {
            warnings.push(format!("per-CPU counters: {e}"));
            Vec::new()
        }
    }
}

/// Starts one process per directive and waits until all are ready.
fn start_directives(
    cfg: &SimConfig,
    mode: Mode,
    scenario_path: &Path,
    exe: &Path,
) -> Result<Vec<Peer>, String> {
    let mut peers = Vec::with_capacity(cfg.tasks.len());
    let mut r = Ok(());
    for (d, t) in cfg.tasks.iter().enumerate() {
        let args = [
            DIRECTIVE_ARGS.to_string(),
            scenario_path.display().to_string(),
            mode.name().to_string(),
            d.to_string(),
        ];
        match Peer::spawn(exe, &args, format!("task {}", t.name)) {
            Ok(p) => peers.push(p),
            Err(e) => {
                r = Err(e);
                break;
            }
        }
    }
    let r = r.and_then(|()| peers.iter_mut().try_for_each(Peer::wait_ready));
    match r {
        Ok(()) => Ok(peers),
        Err(e) => {
            peers.into_iter().for_each(Peer::kill);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_lines() {
        let mut w = Vec::new();
        let o = Options::parse(
            "trace=1\n\n# c\ntrace_buffer_kb=2048\nfoo=bar\nprobe=f:w f +0(%di):u64\n",
            &mut w,
        );
        assert_eq!(o.probes, ["f:w f +0(%di):u64"]);
        assert_eq!((o.trace, o.trace_buffer_kb), (true, 2048));
        assert_eq!(w.len(), 1);
        assert!(!Options::parse("trace=0\n", &mut w).trace);
    }
}
