//! A live run: the simulator stepped in chunks of wall time that its
//! caller measures (the worker's clock, a test's counter), streaming
//! [`Live`] snapshots (latency rows, per-CPU state, the latency CDF, the
//! rolling timeline) and ending with the `eevdf.result.v1` JSON,
//! byte-identical to the CLI's.
//!
//! Chunking cannot change results: `Sim::run_until` in steps processes
//! exactly the events `Sim::run` does, and the last snapshot comes from
//! a clone.

use eevdf_scenario::report;
use eevdf_scenario::scenario::Scenario;
use eevdf_scenario::ParseError;
use eevdf_sim::live::LiveLatency;
use eevdf_sim::{LatencyStats, Nanos, Sim, SimResult};
use serde::{Deserialize, Serialize};

use crate::timeline::{Rolling, Timeline, WINDOW_NS};

/// Wall time one chunk of simulation may take before the caller yields.
pub const CHUNK_MS: f64 = 40.0;
/// Snapshots go out at most this often (the first one at once).
pub const REPORT_MS: f64 = 200.0;
/// Bounds on what a snapshot carries.
const MAX_CDF_POINTS: usize = 160;

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
    /// The JSON's `mean`: µs of the mean rounded half up to a whole ns.
    #[serde(default)]
    pub mean: f64,
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
        mean: eevdf_scenario::report::mean_ns_rounded(l) as f64 / 1000.0,
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

/// What a finished run hands over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    pub live: Live,
    /// The `eevdf.result.v1` JSON, byte-identical to the CLI's.
    pub json: String,
    /// The LKML pipe table (`eevdf run --format lkml`), for mail.
    pub lkml: String,
    /// The pipe rows, for an A/B mail's comparison table.
    pub rows: Vec<report::PipeRow>,
}

/// One scenario being simulated chunk by chunk.
#[derive(Debug)]
pub struct LiveRun {
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
    /// A snapshot while the run goes on.
    Progress(Live),
    /// The run is over; the next chunk is never asked for.
    Finished(Box<Finished>),
}

impl LiveRun {
    /// Parses `scenario` and sets up its run.
    pub fn new(scenario: &str) -> Result<LiveRun, ParseError> {
        let sc = Scenario::parse(scenario)?;
        let mut sim = Sim::new(sc.sim_config());
        let names = sc.sim.tasks.len();
        sim.observe(Box::new(LiveLatency::new(sim.thread_directives(), names)));
        Ok(LiveRun {
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

    /// Runs to the end in one go (tests, and callers without an event
    /// loop): a clock that never advances makes one chunk of it all.
    pub fn finish(mut self) -> Finished {
        loop {
            if let Chunk::Finished(f) = self.chunk(&|| 0.0) {
                return *f;
            }
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
                return Chunk::Finished(Box::new(Finished {
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
        Chunk::Progress(live)
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

#[cfg(test)]
mod tests;
