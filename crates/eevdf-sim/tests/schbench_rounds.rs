//! A schbench message thread asks its workers one wake call at a time,
//! each its own system call, and thinks only once the last call has
//! returned. A worker that a call makes the next buddy (NEXT_BUDDY, so
//! PICK_BUDDY passes over the caller's protection) runs before the next
//! call, and the round lasts as long as its requests. On a 7.2.13 kernel
//! (one CPU, `tests/kernel-ref/schbench.txt`, seed 1) NEXT_BUDDY took
//! schbench from 5,488 to 2,871 requests per second; engine 0.7 asked
//! every worker at once and started the think at the round's start, so
//! it stayed at 5,628 with and without.

use eevdf_core::{FeatureSet, Profile};
use eevdf_sim::trace::{PrevState, TraceEvent};
use eevdf_sim::{Costs, PreemptModel, Sim, SimConfig, TaskSpec, Workload};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const WORKERS: usize = 4;
const THINK: u64 = MS;

fn schbench(next_buddy: bool) -> SimConfig {
    let mut fs = FeatureSet::new(Profile::V7_2);
    if next_buddy {
        fs.apply("NEXT_BUDDY").unwrap();
    }
    let sb = TaskSpec::new(
        "sb",
        Workload::Schbench {
            message_threads: 1,
            workers: WORKERS as u32,
            request_ns: 150 * US,
            sleep_ns: THINK,
        },
    );
    SimConfig {
        nr_cpus: 1,
        hz: 250,
        features: fs.features,
        profile: fs.profile,
        duration_ns: 200 * MS,
        costs: Costs {
            switch_ns: 5_244,
            wake_ns: 3_298,
            ..Costs::ZERO
        },
        preempt: PreemptModel::Lazy,
        tasks: vec![sb],
        ..SimConfig::default()
    }
}

/// Per round (from one sleep of the message thread to the next): for
/// each wake call after the first, whether the previous call's worker
/// had run by then; and the gap from a round's last worker wakeup to
/// the next round's first call.
fn rounds(next_buddy: bool) -> (Vec<Vec<bool>>, Vec<u64>) {
    let c = schbench(next_buddy);
    let end = c.duration_ns;
    let mut sim = Sim::new(c);
    sim.record_trace();
    sim.run_until(end);
    sim.check_threads().unwrap();
    let message = 0; // the directive's first thread
    let (mut rounds, mut gaps) = (Vec::new(), Vec::new());
    let mut round: Vec<bool> = Vec::new();
    let (mut asked, mut ran) = (None, false);
    let (mut last_wakeup, mut ended_at) = (None, None);
    for e in &sim.take_trace().events {
        match *e {
            TraceEvent::Waking { ts, task, .. } if task != message => {
                if asked.is_some() {
                    round.push(ran);
                } else if let Some(w) = ended_at.take() {
                    gaps.push(ts - w);
                }
                (asked, ran) = (Some(task), false);
            }
            TraceEvent::Wakeup { ts, task, .. } if task != message => last_wakeup = Some(ts),
            TraceEvent::Switch {
                prev: Some(p),
                prev_state: PrevState::Sleeping,
                ..
            } if p == message && asked.is_some() => {
                rounds.push(std::mem::take(&mut round));
                (asked, ended_at) = (None, last_wakeup);
            }
            TraceEvent::Switch { next, .. } if next.is_some() && next == asked => ran = true,
            _ => {}
        }
    }
    (rounds, gaps)
}

#[test]
fn a_next_buddy_worker_runs_before_the_next_wake_call() {
    let (rounds, gaps) = rounds(true);
    assert!(rounds.len() > 50, "{} rounds", rounds.len());
    let serial = rounds.iter().filter(|r| r.iter().all(|&ran| ran)).count();
    assert!(
        serial * 10 >= rounds.len() * 9,
        "{serial} of {} rounds ask each worker after the previous one ran",
        rounds.len()
    );
    // The think starts when the last call returns: the next round comes
    // a think after the round's last wakeup, not a think after its start.
    let short = gaps.iter().filter(|&&g| g < THINK).count();
    assert_eq!(short, 0, "{short} of {} rounds came early", gaps.len());
}

#[test]
fn a_protected_message_thread_asks_every_worker_first() {
    let (rounds, _) = rounds(false);
    assert!(rounds.len() > 50, "{} rounds", rounds.len());
    let batched = rounds.iter().filter(|r| r.iter().all(|&ran| !ran)).count();
    assert!(
        batched * 10 >= rounds.len() * 9,
        "{batched} of {} rounds ask every worker before any runs",
        rounds.len()
    );
}
