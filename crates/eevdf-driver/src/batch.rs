//! A run to its end, as the CLI makes it: in steps, so the caller can
//! show progress on its own clock, recording a trace and the decision
//! log from a given time when asked. Stepping cannot change results
//! (`Sim::run_until` in steps processes exactly the events `Sim::run`
//! does).

use eevdf_scenario::decisions::DecisionLog;
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::trace::Trace;
use eevdf_sim::{Nanos, Sim, SimResult};

/// Steps a run is cut into for progress reports.
pub const STEPS: u64 = 200;

/// What a run records, from when (simulated ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recording {
    pub from: Nanos,
    pub trace: bool,
    pub decisions: bool,
}

/// What a run produced.
#[derive(Debug)]
pub struct Batch {
    pub result: SimResult,
    /// Per thread: the exact latency histogram, (ns, count).
    pub hists: Vec<Vec<(Nanos, u64)>>,
    /// The trace, empty unless recorded.
    pub trace: Trace,
    pub decisions: Option<DecisionLog>,
}

fn start_recording(sim: &mut Sim, rec: Recording) {
    if rec.trace {
        sim.record_trace();
    }
    if rec.decisions {
        sim.observe(Box::new(DecisionLog::new(sim.trace_tasks())));
    }
}

/// Runs `sc` to its end (or its event budget), recording what `rec`
/// asks for. After each of the [`STEPS`] steps, `progress(step)` is
/// called; it may look at a clock, the run never does.
pub fn run(sc: &Scenario, rec: Option<Recording>, progress: &mut dyn FnMut(u64)) -> Batch {
    let mut sim = Sim::new(sc.sim_config());
    let mut pending = rec;
    if let Some(r) = pending.filter(|r| r.from == 0) {
        start_recording(&mut sim, r);
        pending = None;
    }
    let end = sim.duration();
    for i in 1..=STEPS {
        let until = end / STEPS * i;
        if let Some(r) = pending.filter(|r| r.from <= until) {
            sim.run_until(r.from.saturating_sub(1));
            start_recording(&mut sim, r);
            pending = None;
        }
        sim.run_until(until);
        if sim.stopped_at().is_some() {
            break;
        }
        progress(i);
    }
    sim.run_until(end);
    let hists = sim.histograms();
    let trace = sim.take_trace();
    let decisions = sim.detach_observer::<DecisionLog>();
    let end = sim.stopped_at().unwrap_or(end);
    Batch {
        result: sim.finish(end),
        hists,
        trace,
        decisions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(name: &str) -> Scenario {
        Scenario::parse(eevdf_scenario::presets::preset(name).unwrap().text).unwrap()
    }

    #[test]
    fn a_batch_run_is_the_golden_result_and_reports_every_step() {
        let sc = scenario("default");
        let mut steps = Vec::new();
        let b = run(&sc, None, &mut |i| steps.push(i));
        assert_eq!(steps, (1..=STEPS).collect::<Vec<_>>());
        let json = eevdf_scenario::report::json(&sc.to_text(), &b.result);
        assert_eq!(json, include_str!("../../../tests/golden/default.json"));
        assert!(b.trace.events.is_empty() && b.decisions.is_none());
    }

    #[test]
    fn recording_starts_at_its_time_and_changes_nothing() {
        let sc = scenario("two-tasks");
        let plain = run(&sc, None, &mut |_| {});
        let from = sc.sim.duration_ns / 2;
        let rec = Recording {
            from,
            trace: true,
            decisions: true,
        };
        let b = run(&sc, Some(rec), &mut |_| {});
        let json = |b: &Batch| eevdf_scenario::report::json(&sc.to_text(), &b.result);
        assert_eq!(json(&b), json(&plain));
        assert_eq!(b.hists, plain.hists);
        let first = b.trace.events.first().expect("a recorded trace");
        assert!(first.ts() + 1 >= from, "{} before {from}", first.ts());
        assert!(!b.decisions.expect("a decision log").is_empty());
    }
}
