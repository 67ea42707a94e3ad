//! Running one task directive's threads for the window, as library
//! functions (tests call them in-process; the guest calls them in one
//! child process per directive).
//!
//! Every thread applies its scheduling attributes, reads its counters,
//! reports ready, waits for the window (and reads its CPU clock once
//! more, outside the window), sleeps until its start (the
//! simulator's offset from the window start) and runs its role; when
//! done it parks without a timer. Just after the window's end the
//! directive's main thread reads every thread's counters (all are still
//! alive, blocked or parked) and builds the report: nothing reads
//! `/proc` inside the window.

mod hackbench;
pub use hackbench::{recv_one, send_one};
mod hog;
mod members;
mod periodic;
mod record;
mod schbench;
mod threads;
mod timer;

use std::path::PathBuf;

use eevdf_scenario::guest::GuestReport;
use eevdf_sim::{SimConfig, TaskSpec, Workload};

use crate::clock::{self, Burner, Nanos};
use crate::plan::{self, Planned, Role};
use crate::proto::{Handshake, Window};
use crate::setup;
use record::Record;
use threads::{run_threads, Shared};

pub use members::{member_fds, run_member, MEMBER_ARGS};

/// Whether the run is a guest's (strict: every attribute must apply) or
/// a development run on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Guest,
    Local,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Guest => "guest",
            Mode::Local => "local",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        [Mode::Guest, Mode::Local]
            .into_iter()
            .find(|m| m.name() == s)
    }
}

/// How a directive runs.
#[derive(Clone, Debug)]
pub struct RunOpts {
    pub mode: Mode,
    /// This binary, for hackbench's process mode.
    pub exe: PathBuf,
    /// The scenario file, passed on to hackbench's processes.
    pub scenario_path: PathBuf,
    /// Report only after the window's end, even when every thread is
    /// done earlier (child processes: exiting would perturb the run).
    pub hold_until_end: bool,
    /// Wakeups that began this long after the window opened or later
    /// are measured (the scenario's `warmup`; set by [`run_directive`]).
    pub warmup_ns: Nanos,
}

/// Runs directive `d` of `cfg` and returns its part of the report
/// (threads, benchmark results, warnings, error).
pub fn run_directive(
    cfg: &SimConfig,
    d: usize,
    opts: &RunOpts,
    hs: &mut dyn Handshake,
) -> GuestReport {
    let mut report = GuestReport::new();
    let opts = &RunOpts {
        warmup_ns: cfg.warmup_ns,
        ..opts.clone()
    };
    if let Err(e) = try_directive(cfg, d, opts, hs, &mut report) {
        report.error.get_or_insert(e);
    }
    report
}

fn try_directive(
    cfg: &SimConfig,
    d: usize,
    opts: &RunOpts,
    hs: &mut dyn Handshake,
    report: &mut GuestReport,
) -> Result<(), String> {
    let spec = cfg
        .tasks
        .get(d)
        .ok_or_else(|| format!("the scenario has no task directive {d}"))?;
    let threads: Vec<Planned> = plan::plan(cfg)?
        .into_iter()
        .filter(|t| t.directive == d)
        .collect();
    enter_group(spec, opts.mode, report)?;
    if let Workload::Hackbench { threads: false, .. } = spec.workload {
        return members::run_processes(spec, &threads, opts, hs, report);
    }
    let works = works_for(spec, &threads, report)?;
    run_threads(
        spec,
        threads.into_iter().zip(works).collect(),
        opts,
        hs,
        report,
    )
}

/// Joins the directive's cgroup (guest) or says it is ignored (local).
fn enter_group(spec: &TaskSpec, mode: Mode, report: &mut GuestReport) -> Result<(), String> {
    match (&spec.group, mode) {
        (None, _) => Ok(()),
        (Some(g), Mode::Guest) => setup::join_group(g),
        (Some(g), Mode::Local) => {
            report
                .warnings
                .push(format!("{}: group {g} ignored in local mode", spec.name));
            Ok(())
        }
    }
}

/// What each planned thread runs.
fn works_for(
    spec: &TaskSpec,
    threads: &[Planned],
    report: &mut GuestReport,
) -> Result<Vec<Work>, String> {
    match &spec.workload {
        Workload::Hackbench { .. } => hackbench::thread_works(spec, threads, report),
        Workload::Schbench { .. } => Ok(schbench::works(spec, threads)),
        _ => Ok(threads
            .iter()
            .map(|t| match t.role {
                Role::Timer { period_ns, run_ns } => Work::Timer { period_ns, run_ns },
                Role::Periodic {
                    run_ns,
                    sleep_ns,
                    period_ns,
                } => Work::Periodic {
                    run_ns,
                    sleep_ns,
                    period_ns,
                },
                _ => Work::Hog,
            })
            .collect()),
    }
}

/// One thread's job, with what it shares with the others.
#[derive(Debug)]
enum Work {
    Timer {
        period_ns: Nanos,
        run_ns: Nanos,
    },
    Periodic {
        run_ns: Nanos,
        sleep_ns: Nanos,
        period_ns: Option<Nanos>,
    },
    Hog,
    Sender(hackbench::Sender),
    Receiver(hackbench::Receiver),
    Message(schbench::Message),
    Worker(schbench::Worker),
}

/// What a thread sees while it runs.
struct Ctx<'a> {
    window: Window,
    /// Wakeups due before this are not measured (the `warmup`).
    measure_from: Nanos,
    /// Absolute start; `None` = runs only when woken.
    start: Option<Nanos>,
    me: usize,
    shared: &'a Shared,
    burner: Burner,
}

impl Ctx<'_> {
    fn record(&self) -> &Record {
        &self.shared.records[self.me]
    }

    /// Records the latency of one wakeup due at `due`, unless it was due
    /// before the warmup's end (as the simulator leaves it out).
    fn sample(&self, due: Nanos, woke: Nanos) {
        if due >= self.measure_from {
            self.record().lock().hist.record(woke.saturating_sub(due));
        }
    }
}

impl Work {
    /// Runs to the window's end; `Some(t)` = finished its finite work at `t`.
    fn run(self, ctx: &mut Ctx) -> Result<Option<Nanos>, String> {
        match self {
            Work::Timer { period_ns, run_ns } => timer::run(ctx, period_ns, run_ns),
            Work::Periodic {
                run_ns,
                sleep_ns,
                period_ns,
            } => periodic::run(ctx, run_ns, sleep_ns, period_ns),
            Work::Hog => hog::run(ctx),
            Work::Sender(s) => s.run(ctx),
            Work::Receiver(r) => r.run(ctx),
            Work::Message(m) => m.run(ctx),
            Work::Worker(w) => w.run(ctx),
        }
    }
}

/// Sleeps until the thread's start; `None` if it starts after the window.
// The closure is the form the reference guest (465324ee) was built from.
#[allow(clippy::redundant_closure)]
fn wait_start(ctx: &Ctx) -> Result<Option<Nanos>, String> {
    wait_start_with(ctx, |s| clock::sleep_until(s))
}

/// [`wait_start`] without the thread's timer slack: the simulator starts
/// a hog, a hackbench thread or a schbench message thread at its offset,
/// where a timer or periodic task's first expiry includes the slack.
/// (A kernel run of ct-4hog on 6.12.95 started every hog 50 us late,
/// which changed the first pick after ct's first sleep.)
fn wait_start_on_time(ctx: &Ctx) -> Result<Option<Nanos>, String> {
    wait_start_with(ctx, |s| {
        let slack = nix::sys::prctl::get_timerslack();
        let _ = nix::sys::prctl::set_timerslack(1);
        let r = clock::sleep_until(s);
        if let Ok(ns) = slack {
            let _ = nix::sys::prctl::set_timerslack(ns as libc::c_ulong);
        }
        r
    })
}

fn wait_start_with(
    ctx: &Ctx,
    sleep: impl FnOnce(Nanos) -> Result<(), nix::errno::Errno>,
) -> Result<Option<Nanos>, String> {
    let Some(s) = ctx.start else { return Ok(None) };
    if s > ctx.window.t1 {
        return Ok(None);
    }
    let slept = clock::now() < s;
    sleep(s).map_err(|e| format!("clock_nanosleep: {e}"))?;
    let mut st = ctx.record().lock();
    st.slept_to_start = slept;
    // The window's CPU time starts here, without the way to sleep.
    if let Some(start) = st.start.as_mut() {
        start.cpu_ns = clock::thread_cpu();
    }
    Ok(Some(s))
}
