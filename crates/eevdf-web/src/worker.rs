//! The simulation Web Worker and its message protocol.
//!
//! The page sends scenario text on one of two lanes (the live
//! configuration and the pinned A/B baseline); the worker parses it and
//! runs the simulator in chunks of a few tens of milliseconds, yielding
//! to its event loop between chunks so a newer request on the same lane
//! replaces the running one at once (no queue of stale runs, no extra
//! workers). While a run is under way it streams [`Live`] snapshots
//! (latency rows, per-CPU state, the latency CDF, a timeline of the last
//! window) several times a second; the last answer is `Done`, with the
//! `eevdf.result.v1` JSON, byte-identical to the CLI's.
//!
//! Chunking cannot change results: `Sim::run_until` in steps processes
//! exactly the events `Sim::run` does, and snapshots come from a clone.
//! Messages cross with `serde-wasm-bindgen` (the [`Swb`] codec) rather
//! than gloo's default bincode, so they are plain JS objects in devtools.

use eevdf_scenario::report;
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::live::LiveLatency;
use eevdf_sim::trace::{PrevState, TraceEvent};
use eevdf_sim::{LatencyStats, Nanos, Sim, SimResult};

use eevdf_driver::teach::{TeachCmd, TeachView, Teacher};
use gloo::worker::{Codec, HandlerId, Worker, WorkerScope};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// Which conversation a request or an answer belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lane {
    /// The live configuration.
    Live,
    /// The pinned baseline (A in the A/B table).
    Baseline,
    /// Teaching mode's commands and answers.
    Teach,
}

impl Lane {
    /// The index of a run lane's state (`None`: teaching runs no
    /// scenario of its own).
    pub fn run_slot(self) -> Option<usize> {
        match self {
            Lane::Live => Some(0),
            Lane::Baseline => Some(1),
            Lane::Teach => None,
        }
    }
}

const LANES: usize = 2;

/// What a request asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// Run this scenario text (it replaces the lane's run).
    Run(String),
    /// Stop the lane's run; its last snapshot stays the page's.
    Cancel,
    /// A teaching-mode command.
    Teach(TeachCmd),
}

/// Wall time one chunk of simulation may take before the worker yields.
const CHUNK_MS: f64 = 40.0;
/// Snapshots go out at most this often (the first one at once).
const REPORT_MS: f64 = 200.0;
/// The timeline shows this much simulated time before "now" at most.
pub const WINDOW_NS: Nanos = 40_000_000;
/// Bounds on what a snapshot carries.
const MAX_SEGMENTS: usize = 20_000;
const MAX_MARKS: usize = 20_000;
const MAX_CDF_POINTS: usize = 160;

/// A request from the page. `id` lets the page drop answers to stale
/// requests after an edit; a new request on a run lane cancels that
/// lane's run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: u32,
    pub lane: Lane,
    pub job: Job,
}

/// Latency summary of one task name, in µs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub name: String,
    pub tasks: u32,
    pub samples: u64,
    pub cpu_ms: f64,
    /// Percent of the machine's CPU time (all CPUs) so far.
    pub share: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
    /// When the max's wakeup was due, seconds (`perf sched latency`).
    #[serde(default)]
    pub max_at_s: Option<f64>,
    /// cyclictest's Min and Avg, µs.
    pub min: f64,
    pub avg: f64,
}

/// One CPU right now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuLive {
    /// Directive index of the running thread, if any.
    pub running: Option<u32>,
    /// `NAME.I` of the running thread.
    pub running_name: Option<String>,
    /// Tasks queued (running and delayed ones included).
    pub queued: u32,
    /// PELT utilisation, 0..=1024 of this CPU's capacity.
    pub util: u64,
    /// Percent of the time so far this CPU was busy.
    pub busy_pct: f64,
}

/// The latency distribution of one task name: (µs, fraction ≤ µs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cdf {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A thread on a CPU from `start` to `end` (ns), `task` its directive.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub cpu: u32,
    pub start: Nanos,
    pub end: Nanos,
    pub task: u32,
}

/// What a timeline mark shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MarkKind {
    /// `sched_wakeup`: the task is queued on the CPU.
    Wakeup,
    /// The task left the CPU still runnable.
    Preempt,
}

/// A wakeup or a preemption on a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    pub cpu: u32,
    pub ts: Nanos,
    pub kind: MarkKind,
    pub task: u32,
}

/// The last window of the schedule, per CPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub start: Nanos,
    pub end: Nanos,
    pub segments: Vec<Segment>,
    pub marks: Vec<Mark>,
}

/// A snapshot of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Live {
    pub rows: Vec<Row>,
    pub sim_ns: Nanos,
    pub duration_ns: Nanos,
    pub events: u64,
    /// Wall time the worker has spent simulating this run so far, ms
    /// (the speed budget; never part of the result).
    pub wall_ms: f64,
    pub cpus: Vec<CpuLive>,
    pub cdf: Vec<Cdf>,
    pub timeline: Timeline,
}

/// What the worker computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    /// A snapshot while the run goes on.
    Progress(Live),
    Done {
        live: Live,
        /// The `eevdf.result.v1` JSON, byte-identical to the CLI's.
        json: String,
        /// The LKML pipe table (`eevdf run --format lkml`), for mail.
        lkml: String,
        /// The pipe rows, for an A/B mail's comparison table.
        rows: Vec<report::PipeRow>,
    },
    Invalid {
        line: usize,
        column: usize,
        message: String,
        hint: String,
    },
    /// Teaching mode's picture after a command.
    Teach(Box<TeachView>),
    /// A teaching command could not be carried out.
    TeachError(String),
}

/// The worker's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: u32,
    pub lane: Lane,
    pub outcome: Outcome,
}

/// Latencies in the result rows are the JSON's: µs rounded to 3 decimals.
fn us(ns: u64) -> f64 {
    (ns as f64).round() / 1000.0
}

/// The table row of one task name.
fn row(name: &str, tasks: u32, cpu_ns: u64, machine_ns: f64, l: &LatencyStats) -> Row {
    Row {
        name: name.to_string(),
        tasks,
        samples: l.samples,
        cpu_ms: cpu_ns as f64 / 1e6,
        share: cpu_ns as f64 * 100.0 / machine_ns,
        p50: us(l.p50),
        p90: us(l.p90),
        p99: us(l.p99),
        p99_9: us(l.p99_9),
        max: us(l.max),
        max_at_s: l.max_at.filter(|_| l.samples > 0).map(|at| at as f64 / 1e9),
        min: us(l.min),
        avg: (l.mean_ns() * 1000.0).round() / 1e6,
    }
}

/// A scheduler timeline kept for the last [`WINDOW_NS`].
#[derive(Clone, Debug, Default)]
struct Rolling {
    segments: Vec<Segment>,
    marks: Vec<Mark>,
    /// Per CPU: the running directive and since when, while traced.
    open: Vec<Option<(Nanos, u32)>>,
    /// The trace covers time up to here without a gap.
    traced_until: Option<Nanos>,
}

impl Rolling {
    fn close(&mut self, cpu: usize, at: Nanos) {
        if let Some((start, task)) = self.open[cpu].take() {
            if at > start {
                self.segments.push(Segment {
                    cpu: cpu as u32,
                    start,
                    end: at,
                    task,
                });
            }
        }
    }

    /// Starts tracing at `t0`; `curr[cpu]` is who runs there now.
    fn begin(&mut self, t0: Nanos, curr: &[Option<u32>]) {
        let contiguous = self.traced_until == Some(t0);
        if self.open.len() != curr.len() {
            self.open = vec![None; curr.len()];
        }
        for (cpu, c) in curr.iter().enumerate() {
            let same = contiguous && self.open[cpu].map(|o| o.1) == *c;
            if !same {
                let end = if contiguous {
                    t0
                } else {
                    self.traced_until.unwrap_or(t0)
                };
                self.close(cpu, end);
                self.open[cpu] = c.map(|task| (t0, task));
            }
        }
    }

    fn event(&mut self, e: &TraceEvent, directive: &[usize]) {
        let d = |tid: usize| directive.get(tid).copied().unwrap_or(0) as u32;
        match *e {
            TraceEvent::Switch {
                ts,
                cpu,
                prev,
                prev_state,
                next,
            } => {
                self.close(cpu as usize, ts);
                if let (Some(p), PrevState::Preempted | PrevState::Runnable) = (prev, prev_state) {
                    self.marks.push(Mark {
                        cpu,
                        ts,
                        kind: MarkKind::Preempt,
                        task: d(p),
                    });
                }
                self.open[cpu as usize] = next.map(|n| (ts, d(n)));
            }
            TraceEvent::Wakeup { ts, cpu, task } => self.marks.push(Mark {
                cpu,
                ts,
                kind: MarkKind::Wakeup,
                task: d(task),
            }),
            TraceEvent::Waking { .. } | TraceEvent::Migrate { .. } => {}
        }
    }

    /// Ends a traced stretch at `t1` and forgets what fell out of the window.
    fn end(&mut self, t1: Nanos) {
        self.traced_until = Some(t1);
        let from = t1.saturating_sub(WINDOW_NS);
        self.segments.retain(|s| s.end > from);
        self.marks.retain(|m| m.ts >= from);
        if self.segments.len() > MAX_SEGMENTS {
            self.segments.drain(..self.segments.len() - MAX_SEGMENTS);
        }
        if self.marks.len() > MAX_MARKS {
            self.marks.drain(..self.marks.len() - MAX_MARKS);
        }
    }

    fn snapshot(&self, now: Nanos) -> Timeline {
        let start = now.saturating_sub(WINDOW_NS);
        let mut segments = self.segments.clone();
        for (cpu, o) in self.open.iter().enumerate() {
            if let Some((s, task)) = *o {
                if now > s {
                    segments.push(Segment {
                        cpu: cpu as u32,
                        start: s,
                        end: now,
                        task,
                    });
                }
            }
        }
        for s in &mut segments {
            s.start = s.start.max(start);
        }
        Timeline {
            start,
            end: now,
            segments,
            marks: self.marks.clone(),
        }
    }
}

/// Cumulative distribution of merged histograms, thinned to at most
/// [`MAX_CDF_POINTS`] points spread evenly on a log axis.
fn cdf(name: &str, hists: &[&Vec<(Nanos, u64)>]) -> Cdf {
    let mut all: Vec<(Nanos, u64)> = hists.iter().flat_map(|h| h.iter().copied()).collect();
    all.sort_unstable_by_key(|b| b.0);
    let total: u64 = all.iter().map(|b| b.1).sum();
    let mut points = Vec::new();
    if total > 0 {
        let lo = (all[0].0.max(1) as f64).ln();
        let hi = (all[all.len() - 1].0.max(1) as f64).ln();
        let step = ((hi - lo) / MAX_CDF_POINTS as f64).max(1e-9);
        let mut next = f64::NEG_INFINITY;
        let mut cum = 0u64;
        for (i, &(v, c)) in all.iter().enumerate() {
            cum += c;
            let x = (v.max(1) as f64).ln();
            let last = i + 1 == all.len();
            let same_as_next = !last && all[i + 1].0 == v;
            if same_as_next {
                continue;
            }
            if x >= next || last {
                points.push((v as f64 / 1000.0, cum as f64 / total as f64));
                next = x + step;
            }
        }
    }
    Cdf {
        name: name.to_string(),
        points,
    }
}

/// One scenario being simulated chunk by chunk.
#[derive(Debug)]
pub struct Runner {
    id: u32,
    lane: Lane,
    text: String,
    profile: String,
    /// `None` once finished.
    sim: Option<Sim>,
    names: Vec<String>,
    directive: Vec<usize>,
    now: Nanos,
    end: Nanos,
    /// Simulated time per sub-step, adapted to the wall-time budget.
    step: Nanos,
    rolling: Rolling,
    last_report: Option<f64>,
    wall_ms: f64,
    /// Counters the last progress snapshot read (histogram buckets,
    /// threads, CPUs): bounded by the scenario, not by its samples.
    snapshot_work: usize,
}

/// What a chunk produced.
#[derive(Debug)]
pub enum Chunk {
    /// Nothing to report yet.
    Quiet,
    Report(Response),
    Finished(Response),
}

impl Runner {
    /// Parses the scenario of request `id` on `lane`; a bad scenario
    /// comes back as the response.
    pub fn new(id: u32, lane: Lane, scenario: &str) -> Result<Runner, Box<Response>> {
        let sc = Scenario::parse(scenario).map_err(|e| {
            Box::new(Response {
                id,
                lane,
                outcome: Outcome::Invalid {
                    line: e.line,
                    column: e.column,
                    message: e.message,
                    hint: e.hint,
                },
            })
        })?;
        let mut sim = Sim::new(sc.sim.clone());
        let names = sc.sim.tasks.len();
        sim.observe(Box::new(LiveLatency::new(sim.thread_directives(), names)));
        Ok(Runner {
            id,
            lane,
            text: sc.to_text(),
            profile: sc.features.profile.to_string(),
            names: sc.sim.tasks.iter().map(|t| t.name.clone()).collect(),
            directive: sim.thread_directives(),
            end: sim.duration(),
            sim: Some(sim),
            now: 0,
            step: 1_000_000,
            rolling: Rolling::default(),
            last_report: None,
            wall_ms: 0.0,
            snapshot_work: 0,
        })
    }

    /// What the last progress snapshot read (see `snapshot_work`).
    pub fn snapshot_work(&self) -> usize {
        self.snapshot_work
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// Runs one sub-step of `self.step` simulated ns, tracing the part
    /// that falls in the last window.
    fn sub_step(&mut self) {
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        let next = self.now.saturating_add(self.step).min(self.end);
        let from = next.saturating_sub(WINDOW_NS).max(self.now);
        if from > self.now {
            sim.run_until(from);
        }
        let nr = sim.topology().nr_cpus();
        let curr: Vec<Option<u32>> = (0..nr)
            .map(|c| sim.cpu_curr(c).map(|t| self.directive[t] as u32))
            .collect();
        self.rolling.begin(from, &curr);
        sim.record_trace();
        // Events at exactly `from` ran already; the trace starts after.
        sim.run_until(next);
        let trace = sim.take_trace();
        for e in &trace.events {
            self.rolling.event(e, &self.directive);
        }
        self.rolling.end(next);
        self.now = next;
        // The event budget stopped the run: it ends there, partial.
        if let Some(at) = sim.stopped_at() {
            self.end = at.min(self.end);
            self.now = self.end;
        }
    }

    /// Simulates for about [`CHUNK_MS`] of wall time (`clock` gives ms)
    /// and says whether a snapshot is due.
    pub fn chunk(&mut self, clock: &dyn Fn() -> f64) -> Chunk {
        let t0 = clock();
        loop {
            let s0 = clock();
            self.sub_step();
            let took = clock() - s0;
            // Aim sub-steps at a quarter of the chunk budget.
            if took < CHUNK_MS / 8.0 {
                self.step = self.step.saturating_mul(2).min(1 << 40);
            } else if took > CHUNK_MS / 2.0 {
                self.step = (self.step / 2).max(100_000);
            }
            if self.now >= self.end {
                self.wall_ms += clock() - t0;
                // Finish a copy: the final CPU states stay readable.
                let Some(sim) = self.sim.as_ref() else {
                    unreachable!("a finished run is never stepped again");
                };
                let hists = sim.histograms();
                let r = sim.clone().finish(self.end);
                let live = self.live(&r, &hists);
                let json = report::json(&self.text, &r);
                let lkml = report::lkml(&r, &self.profile);
                let rows = report::pipe_rows(&r);
                self.sim = None;
                return Chunk::Finished(self.respond(Outcome::Done {
                    live,
                    json,
                    lkml,
                    rows,
                }));
            }
            if clock() - t0 >= CHUNK_MS {
                break;
            }
        }
        let now = clock();
        self.wall_ms += now - t0;
        let due = self.last_report.is_none_or(|t| now - t >= REPORT_MS);
        if !due {
            return Chunk::Quiet;
        }
        self.last_report = Some(now);
        let Some(live) = self.progress() else {
            return Chunk::Quiet;
        };
        Chunk::Report(self.respond(Outcome::Progress(live)))
    }

    /// A snapshot of the running simulation from what it keeps as it
    /// goes (the [`LiveLatency`] observer, per-thread CPU time, per-CPU
    /// counters): no clone, no finish, so its cost does not grow with
    /// the samples. Percentiles keep 9 significant bits until `Done`.
    fn progress(&mut self) -> Option<Live> {
        let sim = self.sim.as_ref()?;
        let watch = sim.observer::<LiveLatency>()?;
        let cpu_ns = sim.thread_cpu_ns();
        let mut work = cpu_ns.len();
        let names: Vec<(usize, &String)> = self.names.iter().enumerate().collect();
        let mut tasks = vec![0u32; self.names.len()];
        let mut name_ns = vec![0u64; self.names.len()];
        for (t, &d) in self.directive.iter().enumerate() {
            tasks[d] += 1;
            name_ns[d] += cpu_ns[t];
        }
        let stats: Vec<LatencyStats> = names
            .iter()
            .map(|(d, _)| {
                work += watch.hist(*d).width();
                watch.hist(*d).stats()
            })
            .collect();
        let nr = sim.topology().nr_cpus();
        work += nr as usize;
        let machine_ns = (self.now.max(1) as f64) * f64::from(nr.max(1));
        let rows = names
            .iter()
            .map(|(d, name)| row(name, tasks[*d], name_ns[*d], machine_ns, &stats[*d]))
            .collect();
        let cdf = names
            .iter()
            .map(|(d, name)| cdf(name, &[&watch.hist(*d).buckets()]))
            .collect();
        let cpus = (0..nr)
            .map(|c| {
                let (busy, util) = sim.cpu_busy_util(c, self.now);
                self.cpu_live(c, util, busy as f64 * 100.0 / self.now.max(1) as f64)
            })
            .collect();
        let live = Live {
            rows,
            sim_ns: self.now,
            duration_ns: self.end,
            events: sim.events(),
            wall_ms: self.wall_ms,
            cpus,
            cdf,
            timeline: self.rolling.snapshot(self.now),
        };
        self.snapshot_work = work;
        Some(live)
    }

    /// One CPU's state now: name and colour come from the simulation's
    /// running thread, not a search of the timeline.
    fn cpu_live(&self, cpu: u32, util: u64, busy_pct: f64) -> CpuLive {
        let tid = self.sim_running(cpu);
        CpuLive {
            running: tid.map(|t| self.directive[t] as u32),
            running_name: tid.and_then(|t| self.sim.as_ref().map(|s| s.thread_name(t))),
            queued: self.queued(cpu),
            util,
            busy_pct,
        }
    }

    fn respond(&self, outcome: Outcome) -> Response {
        Response {
            id: self.id,
            lane: self.lane,
            outcome,
        }
    }

    fn live(&self, r: &SimResult, hists: &[Vec<(Nanos, u64)>]) -> Live {
        let machine_ns = (r.sim_ns.max(1) as f64) * r.cpus.len().max(1) as f64;
        let rows = r
            .by_name
            .iter()
            .map(|n| row(&n.name, n.tasks, n.cpu_ns, machine_ns, &n.latency))
            .collect();
        let cdf = self
            .names
            .iter()
            .enumerate()
            .map(|(d, name)| {
                let hs: Vec<&Vec<(Nanos, u64)>> = hists
                    .iter()
                    .zip(&self.directive)
                    .filter(|(_, &dd)| dd == d)
                    .map(|(h, _)| h)
                    .collect();
                cdf(name, &hs)
            })
            .collect();
        let timeline = self.rolling.snapshot(r.sim_ns);
        let cpus = r
            .cpus
            .iter()
            .map(|c| {
                self.cpu_live(
                    c.cpu,
                    c.util,
                    c.busy_ns as f64 * 100.0 / r.sim_ns.max(1) as f64,
                )
            })
            .collect();
        Live {
            rows,
            sim_ns: r.sim_ns,
            duration_ns: self.end,
            events: r.events,
            wall_ms: self.wall_ms,
            cpus,
            cdf,
            timeline,
        }
    }

    /// `None` once the run is over (the last snapshot is taken before).
    fn sim_running(&self, cpu: u32) -> Option<usize> {
        self.sim.as_ref().and_then(|s| s.cpu_curr(cpu))
    }

    fn queued(&self, cpu: u32) -> u32 {
        self.sim.as_ref().map_or(0, |s| s.cpu_queued(cpu))
    }
}

/// Runs a request to its end in one go (tests, and callers without an
/// event loop); returns the last response.
pub fn answer(id: u32, lane: Lane, scenario: &str) -> Response {
    let mut run = match Runner::new(id, lane, scenario) {
        Ok(r) => r,
        Err(resp) => return *resp,
    };
    // A clock that never advances: one chunk runs everything.
    loop {
        if let Chunk::Finished(resp) = run.chunk(&|| 0.0) {
            return resp;
        }
    }
}

/// Wall-clock milliseconds (the worker's only clock; never reaches the
/// simulation).
fn wall_ms() -> f64 {
    js_sys::Date::now()
}

/// A macrotask boundary: lets queued messages in before the next chunk.
/// A `MessageChannel` round trip, not `setTimeout(0)`, which browsers
/// clamp to 4 ms when nested.
async fn yield_to_event_loop() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Ok(ch) = web_sys::MessageChannel::new() {
            ch.port1().set_onmessage(Some(&resolve));
            let _ = ch.port2().post_message(&JsValue::NULL);
        } else {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// The worker's internal message: run the next chunk.
#[derive(Debug)]
pub struct Step;

/// The worker itself: at most one run per lane.
#[derive(Debug, Default)]
pub struct SimWorker {
    runs: [Option<(Runner, HandlerId)>; LANES],
    /// Teaching mode's session, driven command by command.
    teacher: Option<Teacher>,
    scheduled: bool,
    turn: usize,
}

impl SimWorker {
    fn schedule(&mut self, scope: &WorkerScope<Self>) {
        if !self.scheduled && self.runs.iter().any(Option::is_some) {
            self.scheduled = true;
            scope.send_future(async {
                yield_to_event_loop().await;
                Step
            });
        }
    }
}

impl Worker for SimWorker {
    type Message = Step;
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        SimWorker::default()
    }

    fn update(&mut self, scope: &WorkerScope<Self>, _msg: Step) {
        self.scheduled = false;
        // Lanes take turns, so a baseline run never starves the live one.
        let lane = (0..LANES)
            .map(|i| (self.turn + i) % LANES)
            .find(|&l| self.runs[l].is_some());
        if let Some(l) = lane {
            self.turn = (l + 1) % LANES;
            let (run, who) = self.runs[l].as_mut().expect("found above");
            let who = *who;
            match run.chunk(&wall_ms) {
                Chunk::Quiet => {}
                Chunk::Report(resp) => scope.respond(who, resp),
                Chunk::Finished(resp) => {
                    self.runs[l] = None;
                    scope.respond(who, resp);
                }
            }
        }
        self.schedule(scope);
    }

    fn received(&mut self, scope: &WorkerScope<Self>, msg: Self::Input, id: HandlerId) {
        let answer = |outcome| Response {
            id: msg.id,
            lane: msg.lane,
            outcome,
        };
        let slot = msg.lane.run_slot();
        match (&msg.job, slot) {
            (Job::Teach(cmd), _) => scope.respond(id, answer(teach(&mut self.teacher, cmd))),
            (Job::Run(_) | Job::Cancel, None) => scope.respond(
                id,
                answer(Outcome::TeachError(
                    "runs go on the live or the baseline lane".into(),
                )),
            ),
            // A new request on a lane cancels its run: dropping it is all.
            (Job::Cancel, Some(l)) => self.runs[l] = None,
            (Job::Run(text), Some(l)) => {
                self.runs[l] = None;
                match Runner::new(msg.id, msg.lane, text) {
                    Ok(run) => self.runs[l] = Some((run, id)),
                    Err(resp) => scope.respond(id, *resp),
                }
                self.schedule(scope);
            }
        }
    }
}

/// Carries out a teaching command on the session (opening one if asked).
pub fn teach(session: &mut Option<Teacher>, cmd: &TeachCmd) -> Outcome {
    let result = match (session.as_mut(), cmd) {
        (_, TeachCmd::Open { scenario, cpu }) => Teacher::open(scenario, *cpu).map(|t| {
            let view = t.view();
            *session = Some(t);
            view
        }),
        (Some(t), cmd) => t.command(cmd),
        (None, _) => Err("teaching mode has no scenario open".into()),
    };
    match result {
        Ok(v) => Outcome::Teach(Box::new(v)),
        Err(e) => Outcome::TeachError(e),
    }
}

/// serde-wasm-bindgen codec for gloo-worker.
#[derive(Debug)]
pub struct Swb;

impl Codec for Swb {
    fn encode<I: Serialize>(input: I) -> JsValue {
        // Our message types are plain structs of strings and numbers;
        // serialising them cannot fail.
        serde_wasm_bindgen::to_value(&input).expect("worker message serialises")
    }

    fn decode<O: for<'de> Deserialize<'de>>(input: JsValue) -> O {
        serde_wasm_bindgen::from_value(input).expect("worker message deserialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn runner(text: &str) -> Result<Runner, Box<Response>> {
        Runner::new(7, Lane::Live, text)
    }

    #[test]
    fn answer_runs_the_default_preset_like_the_cli() {
        let text = eevdf_scenario::presets::preset("default").unwrap().text;
        assert_eq!(text, include_str!("../../../tests/golden/default.scn"));
        let r = answer(7, Lane::Live, text);
        assert_eq!(r.id, 7);
        let Outcome::Done { live, json, .. } = r.outcome else {
            panic!("default preset must run");
        };
        assert_eq!(live.rows[0].name, "ct");
        assert!(live.rows[0].samples > 0);
        assert_eq!(json, include_str!("../../../tests/golden/default.json"));
    }

    /// Small chunks (a clock that jumps 10 ms per reading) stream several
    /// snapshots and still end with the golden JSON.
    /// Runs `text` in chunks; after each progress snapshot, `look` sees
    /// the runner. Returns the number of snapshots.
    fn snapshots(text: &str, mut look: impl FnMut(&Runner, &Live)) -> usize {
        let mut run = runner(text).unwrap();
        let t = Cell::new(0.0);
        let clock = || {
            t.set(t.get() + 10.0);
            t.get()
        };
        let mut n = 0;
        loop {
            match run.chunk(&clock) {
                Chunk::Quiet => {}
                Chunk::Report(r) => {
                    let Outcome::Progress(l) = &r.outcome else {
                        panic!("progress expected");
                    };
                    look(&run, l);
                    n += 1;
                }
                Chunk::Finished(_) => return n,
            }
        }
    }

    /// Issue 16: a snapshot reads what the scenario has (its threads,
    /// CPUs and one fixed-size histogram per name), not its samples. Ten
    /// times the run, ten times the samples, the same work.
    #[test]
    fn snapshot_work_does_not_grow_with_the_samples() {
        let base = include_str!("../../../tests/golden/preempt-short.scn");
        let last = |duration: &str| {
            let text = base.replace("duration 5s", duration);
            let mut at_end = (0u64, 0usize);
            let n = snapshots(&text, |run, l| {
                let samples = l.rows.iter().map(|r| r.samples).sum();
                at_end = (samples, run.snapshot_work());
            });
            assert!(n >= 3, "{n} snapshots");
            at_end
        };
        let (short_samples, short_work) = last("duration 2s");
        let (long_samples, long_work) = last("duration 20s");
        assert!(
            long_samples >= 8 * short_samples,
            "{short_samples} -> {long_samples}"
        );
        // Three threads, one CPU, two names of at most LIVE_BUCKETS each;
        // a longer run may widen a histogram by its new maxima only.
        let bound = 3 + 1 + 2 * eevdf_sim::live::LIVE_BUCKETS;
        assert!(
            short_work > 4 && long_work <= bound,
            "{short_work} {long_work}"
        );
        assert!(
            long_work <= short_work + 2 * 512,
            "{short_work} -> {long_work}"
        );
    }

    /// A snapshot's percentiles are the finished result's at the same
    /// moment, with the low bits cleared (`LIVE_BITS`).
    #[test]
    fn progress_rows_are_the_exact_rows_quantized() {
        let text = include_str!("../../../tests/golden/preempt-short.scn");
        let q = |v: f64, exact_ns: u64, l: &LatencyStats| {
            let want = eevdf_sim::metrics::quantize(exact_ns, eevdf_sim::live::LIVE_BITS);
            (v - us(want.clamp(l.min, l.max))).abs() < 1e-9
        };
        let mut checked = 0;
        snapshots(text, |run, l| {
            let sim = run.sim.as_ref().unwrap();
            let r = sim.clone().finish(l.sim_ns);
            for (row, n) in l.rows.iter().zip(&r.by_name) {
                assert_eq!(
                    (row.name.as_str(), row.samples),
                    (n.name.as_str(), n.latency.samples)
                );
                assert_eq!(row.max, us(n.latency.max));
                let l8 = &n.latency;
                assert!(
                    q(row.p50, l8.p50, l8) && q(row.p99, l8.p99, l8),
                    "{row:?} {l8:?}"
                );
                assert!(
                    q(row.p90, l8.p90, l8) && q(row.p99_9, l8.p99_9, l8),
                    "{row:?} {l8:?}"
                );
                checked += 1;
            }
        });
        assert!(checked >= 6, "{checked} rows");
    }

    #[test]
    fn chunked_runs_stream_snapshots_and_end_with_the_same_result() {
        let text = include_str!("../../../tests/golden/preempt-short.scn");
        let mut run = runner(text).unwrap();
        let t = Cell::new(0.0);
        let clock = || {
            t.set(t.get() + 10.0);
            t.get()
        };
        let mut reports = Vec::new();
        let done = loop {
            match run.chunk(&clock) {
                Chunk::Quiet => {}
                Chunk::Report(r) => reports.push(r),
                Chunk::Finished(r) => break r,
            }
        };
        assert!(reports.len() >= 3, "{} snapshots", reports.len());
        let mut last = 0;
        for r in &reports {
            let Outcome::Progress(l) = &r.outcome else {
                panic!("progress expected");
            };
            assert!(l.sim_ns > last && l.sim_ns < l.duration_ns);
            last = l.sim_ns;
            let tl = &l.timeline;
            assert!(tl.end - tl.start <= WINDOW_NS);
            // Three tasks keep the one CPU busy once they have started.
            if l.sim_ns > 100_000_000 {
                assert!(!tl.segments.is_empty(), "at {} ns", l.sim_ns);
            }
            for s in &tl.segments {
                assert!(s.start < s.end && s.start >= tl.start && s.end <= tl.end);
            }
        }
        let Outcome::Done { json, live, .. } = done.outcome else {
            panic!("done expected");
        };
        assert_eq!(
            json,
            include_str!("../../../tests/golden/preempt-short.json")
        );
        let ct = &live.cdf[0];
        assert_eq!(ct.name, "ct");
        assert!(ct.points.len() <= MAX_CDF_POINTS + 1);
        assert!(ct
            .points
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        assert_eq!(ct.points.last().unwrap().1, 1.0);
        // Two rt-app tasks at 8177/(8177+17777) duty and a 20 us timer:
        // at most about 63 % of the one CPU, less by what the rt tasks
        // wait (they sleep a fixed time after each run; engine 0.2, where
        // threads start by a wakeup: 52.3 %).
        let total: f64 = live.rows.iter().map(|r| r.share).sum();
        assert!((45.0..=66.0).contains(&total), "{total}");
    }

    /// On one CPU the timeline's segments never overlap.
    #[test]
    fn timeline_segments_do_not_overlap_on_a_cpu() {
        let text = include_str!("../../../tests/golden/two-tasks.scn");
        let r = answer(7, Lane::Live, text);
        let Outcome::Done { live, .. } = r.outcome else {
            panic!()
        };
        let mut segs = live.timeline.segments.clone();
        segs.sort_by_key(|s| (s.cpu, s.start));
        for w in segs.windows(2) {
            if w[0].cpu == w[1].cpu {
                assert!(w[0].end <= w[1].start, "{w:?}");
            }
        }
    }

    #[test]
    fn bad_scenarios_come_back_with_their_position() {
        let r = answer(7, Lane::Live, "eevdf-scenario v1\nhz 7\nend\n");
        match r.outcome {
            Outcome::Invalid { line, column, .. } => assert_eq!((line, column), (2, 4)),
            o => panic!("{o:?}"),
        }
    }
}
