//! A directive's threads in one process: spawning them, the start gate,
//! the wait for the window's end and the report.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;

use eevdf_scenario::guest::{GuestHackbench, GuestReport, GuestSchbench, GuestThread};
use eevdf_sim::{LatencyHist, TaskSpec, Workload};

use super::record::Record;
use super::{Ctx, Mode, RunOpts, Work};
use crate::clock::{self, Burner, Nanos};
use crate::measure;
use crate::plan::{Planned, Role};
use crate::proto::{Handshake, Window};
use crate::setup;

/// What the threads of a directive share. Readiness, start and end go
/// through `park`/`unpark` (one futex per thread): a condition variable
/// broadcast to thousands of threads would make them all fight for its
/// mutex just before the window.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) records: Vec<Record>,
    /// Thread handles, to wake parked threads.
    pub(super) threads: Vec<OnceLock<Thread>>,
    main: Thread,
    ready: AtomicUsize,
    /// The window; `None` = the run was called off.
    go: OnceLock<Option<Window>>,
    done: AtomicUsize,
    pub(super) stop: AtomicBool,
    /// The scenario's `warmup` (see `Ctx::measure_from`).
    warmup_ns: Nanos,
}

impl Shared {
    fn wait_go(&self) -> Option<Window> {
        if self.ready.fetch_add(1, Ordering::AcqRel) + 1 == self.records.len() {
            self.main.unpark();
        }
        loop {
            if let Some(go) = self.go.get() {
                return *go;
            }
            std::thread::park();
        }
    }

    /// Main thread: waits until `spawned` threads are ready.
    fn wait_ready(&self, spawned: usize) {
        while self.ready.load(Ordering::Acquire) < spawned {
            // Only the last of all records unparks: time out in case
            // fewer were spawned.
            std::thread::park_timeout(std::time::Duration::from_millis(5));
        }
    }

    fn open(&self, go: Option<Window>) {
        let _ = self.go.set(go);
        self.unpark_all();
    }

    fn unpark_all(&self) {
        for t in self.threads.iter().filter_map(OnceLock::get) {
            t.unpark();
        }
    }

    /// Parks until the main thread has read the counters.
    fn park_until_stop(&self) {
        while !self.stop.load(Ordering::Acquire) {
            std::thread::park();
        }
    }

    /// Only the last thread wakes the main thread: one wakeup in the
    /// window instead of one per thread.
    fn one_done(&self) {
        if self.done.fetch_add(1, Ordering::AcqRel) + 1 == self.records.len() {
            self.main.unpark();
        }
    }
}

const STACK: usize = 256 << 10;

/// Runs `items` (planned thread, work) of directive `spec` and fills
/// `report`.
pub(super) fn run_threads(
    spec: &TaskSpec,
    items: Vec<(Planned, Work)>,
    opts: &RunOpts,
    hs: &mut dyn Handshake,
    report: &mut GuestReport,
) -> Result<(), String> {
    let n = items.len();
    // Calibrate before any thread runs, outside the measured window.
    let _ = Burner::calibrated();
    let (cpus, warn) = setup::allowed_cpus(spec, setup::online_cpus());
    report.warnings.extend(warn);
    let shared = Arc::new(Shared {
        records: (0..n).map(|_| Record::default()).collect(),
        threads: (0..n).map(|_| OnceLock::new()).collect(),
        main: std::thread::current(),
        ready: AtomicUsize::new(0),
        go: OnceLock::new(),
        done: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        warmup_ns: opts.warmup_ns,
    });
    let spec_arc = Arc::new(spec.clone());
    let cpus: Option<Arc<[u32]>> = cpus.map(Into::into);
    let mut planned = Vec::with_capacity(n);
    let mut spawned = 0;
    let mut spawn_error = None;
    for (i, (p, work)) in items.into_iter().enumerate() {
        let (sh, sp, cp) = (Arc::clone(&shared), Arc::clone(&spec_arc), cpus.clone());
        let (start, ordinal) = (p.start_ns, p.ordinal);
        let r = std::thread::Builder::new()
            .name(p.name.clone())
            .stack_size(STACK)
            .spawn(move || thread_main(&sh, i, &sp, cp.as_deref(), (start, ordinal), work));
        planned.push(p);
        match r {
            Ok(h) => {
                let _ = shared.threads[i].set(h.thread().clone());
                spawned += 1;
            }
            Err(e) => {
                spawn_error = Some(format!("creating thread {}: {e}", planned[i].name));
                break;
            }
        }
    }
    shared.wait_ready(spawned);
    let refused = spawn_error.or_else(|| setup_refusal(&shared, &planned, opts.mode, report));
    if let Some(e) = refused {
        shared.open(None);
        return Err(e);
    }
    let window = match hs.ready() {
        Ok(w) => w,
        Err(e) => {
            shared.open(None);
            return Err(e);
        }
    };
    shared.open(Some(window));
    wait_end(&shared, window, opts.hold_until_end);
    collect(spec, &shared, &planned, window, report);
    // Let parked threads go (in-process runs; a child process exits).
    shared.stop.store(true, Ordering::Release);
    shared.unpark_all();
    Ok(())
}

/// Setup failures: errors in a guest, warnings on the host.
fn setup_refusal(
    shared: &Shared,
    planned: &[Planned],
    mode: Mode,
    report: &mut GuestReport,
) -> Option<String> {
    let mut first = None;
    let mut count = 0;
    for (r, p) in shared.records.iter().zip(planned) {
        let st = r.lock();
        if let Some(f) = st.setup_failures.first() {
            count += 1;
            first.get_or_insert_with(|| format!("{}: {f}", p.name));
        }
    }
    let first = first?;
    match mode {
        Mode::Guest => Some(first),
        Mode::Local => {
            report.warnings.push(format!(
                "{first} ({count} threads; local mode goes on without it)"
            ));
            None
        }
    }
}

/// Child processes read the counters at `w.collect`, after PID 1's own
/// sample at the window's end.
fn wait_end(shared: &Shared, w: Window, hold: bool) {
    if hold {
        let _ = clock::sleep_until(w.collect);
        return;
    }
    loop {
        let now = clock::now();
        if shared.done.load(Ordering::Acquire) == shared.records.len() || now >= w.t1 {
            return;
        }
        std::thread::park_timeout(std::time::Duration::from_nanos(w.t1 - now));
    }
}

fn thread_main(
    sh: &Shared,
    me: usize,
    spec: &TaskSpec,
    cpus: Option<&[u32]>,
    (start, ordinal): (Option<Nanos>, u32),
    work: Work,
) {
    let rec = &sh.records[me];
    rec.tid
        .store(nix::unistd::gettid().as_raw(), Ordering::Release);
    let failures = setup::apply_thread_attrs(spec, cpus);
    {
        let mut st = rec.lock();
        st.setup_failures = failures;
        match measure::own_stats() {
            Ok(s) => st.start = Some(s),
            Err(e) => st.stats_error = Some(e),
        }
    }
    let Some(window) = sh.wait_go() else { return };
    let settled = settle(window, ordinal);
    {
        let mut st = rec.lock();
        st.settled = settled;
        st.late = clock::now() >= window.t0;
        // CPU time again, without the wakeup out of the gate (a system
        // call, where the `sched` file is a long read); threads with a
        // start read it once more when it comes.
        if let Some(s) = st.start.as_mut() {
            s.cpu_ns = clock::thread_cpu();
        }
    }
    let mut ctx = Ctx {
        window,
        measure_from: window.t0.saturating_add(sh.warmup_ns),
        start: start.map(|s| window.t0.saturating_add(s)),
        me,
        shared: sh,
        burner: Burner::calibrated(),
    };
    let r = work.run(&mut ctx);
    {
        let mut st = rec.lock();
        st.stopped_cpu = Some(clock::thread_cpu());
        match r {
            Ok(f) => st.finished = f,
            Err(e) => st.failure = Some(e),
        }
    }
    sh.one_done();
    // Stay alive (and off the CPU) until the counters are read.
    sh.park_until_stop();
}

/// Time between two threads' settles, and from the last settle to the
/// CPU sampling before the window.
const SETTLE_STEP_NS: Nanos = 100_000;
const SETTLE_MARGIN_NS: Nanos = 10_000_000;

/// Wakes the thread once more, alone on an idle CPU, before its start,
/// so it starts with no lag, as the simulator's threads do.
/// `place_entity()` applies no lag on an empty queue and the thread
/// then sleeps as the only queued entity, with lag 0. Without it a
/// thread carries the lag it gathered queued behind the others woken by
/// the start gate: on 7.2.13 hackbench threads started with up to 178 us
/// (ct-hackbench NEXT_BUDDY seed 1), and the first pick after a start
/// went to a different thread than in the simulator.
fn settle(w: Window, ordinal: u32) -> bool {
    let sample = w.collect.saturating_sub(w.t1);
    let back = SETTLE_MARGIN_NS + u64::from(ordinal) * SETTLE_STEP_NS;
    let at = w.t0.saturating_sub(sample).saturating_sub(back);
    clock::now() < at && clock::sleep_until(at).is_ok()
}

/// Builds the report from the records at the window's end.
fn collect(spec: &TaskSpec, sh: &Shared, planned: &[Planned], w: Window, report: &mut GuestReport) {
    let d = planned.first().map_or(0, |p| p.directive);
    let mut late = 0;
    let mut messages = 0;
    let mut all_finished = Some(0u64);
    let mut requests = LatencyHist::new();
    for (rec, p) in sh.records.iter().zip(planned) {
        let mut st = rec.lock();
        rec.close(&mut st);
        let (start, end) = (st.start.unwrap_or_default(), st.end.unwrap_or_default());
        let delta = end.since(&start);
        late += usize::from(st.late);
        // Not the wakeup out of the start gate or the settle, nor the
        // first activation (the simulator does not count a thread's start).
        let setup_wakeups = 1 + u64::from(st.settled) + u64::from(st.slept_to_start);
        let wakeups = delta.wakeups.saturating_sub(setup_wakeups);
        report.threads.push(GuestThread {
            name: p.name.clone(),
            directive: p.directive,
            role: p.role.name().to_string(),
            cpu_ns: delta.cpu_ns,
            wakeups,
            migrations: delta.migrations,
            latency: st.hist.buckets(),
        });
        if let Some(f) = &st.failure {
            report
                .error
                .get_or_insert_with(|| format!("{}: {f}", p.name));
        }
        if let Some(e) = &st.stats_error {
            report.warnings.push(format!("{}: counters: {e}", p.name));
        }
        let count = rec.count.load(Ordering::Acquire);
        match p.role {
            Role::Receiver { .. } => messages += count,
            Role::Worker { .. } => requests.merge(&st.requests),
            _ => {}
        }
        all_finished = match (all_finished, st.finished) {
            (Some(a), Some(f)) if f <= w.t1 => Some(a.max(f.saturating_sub(w.t0))),
            _ => None,
        };
    }
    dedup_warnings(&mut report.warnings);
    if late > 0 {
        report.warnings.push(format!(
            "{}: {late} threads were not ready when the window opened",
            spec.name
        ));
    }
    match spec.workload {
        Workload::Hackbench { .. } => report.hackbench.push(GuestHackbench {
            directive: d,
            messages,
            completion_ns: all_finished,
        }),
        Workload::Schbench { .. } => {
            let done = sh
                .records
                .iter()
                .zip(planned)
                .filter(|(_, p)| matches!(p.role, Role::Worker { .. }))
                .map(|(r, _)| r.count.load(Ordering::Acquire))
                .sum();
            report.schbench.push(GuestSchbench {
                directive: d,
                requests: done,
                request_latency: requests.buckets(),
            })
        }
        _ => {}
    }
}

/// Keeps the first few counter warnings of a directive: one per thread
/// would flood the report when a kernel lacks the files.
fn dedup_warnings(w: &mut Vec<String>) {
    const KEEP: usize = 4;
    let counters = w.iter().filter(|x| x.contains(": counters: ")).count();
    if counters > KEEP {
        let mut seen = 0;
        w.retain(|x| {
            if !x.contains(": counters: ") {
                return true;
            }
            seen += 1;
            seen <= KEEP
        });
        w.push(format!("... and {} more counter warnings", counters - KEEP));
    }
}
