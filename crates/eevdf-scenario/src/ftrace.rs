//! Trace export and import (formats.md §4): ftrace text as
//! `/sys/kernel/tracing/trace` prints it (Perfetto opens it with CPU
//! tracks), Chrome trace JSON, and an importer for ftrace text that turns
//! a trace (ours or a real one) into per-task run, sleep and wakeup
//! latency statistics.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use eevdf_sim::trace::{PrevState, Trace, TraceEvent};

use crate::ParseError;

fn ts(ns: u64) -> String {
    format!(
        "{:5}.{:06}",
        ns / 1_000_000_000,
        (ns % 1_000_000_000) / 1000
    )
}

/// ftrace text: `# tracer: nop`, then one line per event.
pub fn to_ftrace(t: &Trace) -> String {
    let mut out = String::from("# tracer: nop\n#\n");
    if t.truncated {
        out.push_str("# (trace truncated: event limit reached)\n");
    }
    // What runs on each CPU, for the line's leading task field.
    let mut running: Vec<Option<usize>> = vec![None; t.nr_cpus as usize];
    let who = |task: Option<usize>| match task {
        Some(i) => (t.tasks[i].comm.clone(), t.tasks[i].pid),
        None => ("<idle>".to_string(), 0),
    };
    for e in &t.events {
        let (cpu, body) = match *e {
            TraceEvent::Switch {
                cpu,
                prev,
                prev_state,
                next,
                ..
            } => {
                let (pc, pp) = match prev {
                    Some(i) => (t.tasks[i].comm.clone(), t.tasks[i].pid),
                    None => (format!("swapper/{cpu}"), 0),
                };
                let pprio = prev.map_or(120, |i| t.tasks[i].prio);
                let (nc, np) = match next {
                    Some(i) => (t.tasks[i].comm.clone(), t.tasks[i].pid),
                    None => (format!("swapper/{cpu}"), 0),
                };
                let nprio = next.map_or(120, |i| t.tasks[i].prio);
                let state = match (prev, prev_state) {
                    (None, _) => "R",
                    (_, PrevState::Preempted) => "R+",
                    (_, PrevState::Sleeping) => "S",
                };
                (
                    cpu,
                    format!(
                        "sched_switch: prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={state} ==> next_comm={nc} next_pid={np} next_prio={nprio}"
                    ),
                )
            }
            TraceEvent::Waking {
                cpu,
                task,
                target_cpu,
                ..
            } => {
                let k = &t.tasks[task];
                (
                    cpu,
                    format!(
                        "sched_waking: comm={} pid={} prio={} target_cpu={target_cpu:03}",
                        k.comm, k.pid, k.prio
                    ),
                )
            }
            TraceEvent::Wakeup { cpu, task, .. } => {
                let k = &t.tasks[task];
                (
                    cpu,
                    format!(
                        "sched_wakeup: comm={} pid={} prio={} target_cpu={cpu:03}",
                        k.comm, k.pid, k.prio
                    ),
                )
            }
            TraceEvent::Migrate {
                cpu,
                task,
                orig_cpu,
                dest_cpu,
                ..
            } => {
                let k = &t.tasks[task];
                (
                    cpu,
                    format!(
                        "sched_migrate_task: comm={} pid={} prio={} orig_cpu={orig_cpu} dest_cpu={dest_cpu}",
                        k.comm, k.pid, k.prio
                    ),
                )
            }
        };
        let (comm, pid) = who(running[cpu as usize]);
        let _ = writeln!(
            out,
            "{comm:>16}-{pid:<7} [{cpu:03}] d..2. {}: {body}",
            ts(e.ts())
        );
        if let TraceEvent::Switch { next, .. } = *e {
            running[cpu as usize] = next;
        }
    }
    out
}

/// Chrome trace JSON (`traceEvents` first, times in µs): one pseudo
/// process "CPUs" with a track per CPU and a slice per run.
pub fn to_chrome_json(t: &Trace) -> String {
    let mut out = String::from("{\"traceEvents\":[\n");
    let _ = write!(
        out,
        "{{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"CPUs\"}}}}"
    );
    for c in 0..t.nr_cpus {
        let _ = write!(out, ",\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{c},\"name\":\"thread_name\",\"args\":{{\"name\":\"CPU {c}\"}}}}");
    }
    let mut start: Vec<Option<(u64, usize)>> = vec![None; t.nr_cpus as usize];
    let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
    for e in &t.events {
        if let TraceEvent::Switch { ts, cpu, next, .. } = *e {
            if let Some((s, i)) = start[cpu as usize].take() {
                let k = &t.tasks[i];
                let name = format!("{}-{}", k.comm, k.pid).replace('"', "'");
                let _ = write!(
                    out,
                    ",\n{{\"ph\":\"X\",\"pid\":0,\"tid\":{cpu},\"ts\":{},\"dur\":{},\"name\":\"{name}\",\"cat\":\"sched\"}}",
                    us(s),
                    us(ts - s)
                );
            }
            start[cpu as usize] = next.map(|i| (ts, i));
        }
    }
    out.push_str("\n],\"displayTimeUnit\":\"ns\"}\n");
    out
}

/// Per-task statistics recovered from a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskTraceStats {
    pub comm: String,
    /// Total time on a CPU, ns.
    pub run_ns: u64,
    /// Run bursts that ended in a sleep.
    pub bursts: u64,
    /// Sleeps (switch-out `S`/`D` to the next `sched_waking`).
    pub sleeps: u64,
    pub sleep_ns: u64,
    /// Wakeup latencies (`sched_waking` to switch-in), ns.
    pub wakeup_latency: Vec<u64>,
}

fn field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    body.split_whitespace().find_map(|w| w.strip_prefix(key))
}

fn parse_ts(s: &str) -> Option<u64> {
    let (sec, frac) = s.split_once('.')?;
    let sec: u64 = sec.trim().parse().ok()?;
    let frac = format!("{frac:0<9}");
    let ns: u64 = frac.get(..9)?.parse().ok()?;
    Some(sec * 1_000_000_000 + ns)
}

/// Imports ftrace text (ours, or `trace-cmd report` / tracefs output) and
/// computes per-pid run/sleep/latency statistics. Lines that are not
/// sched events are skipped; malformed sched lines are errors.
pub fn import(text: &str) -> Result<BTreeMap<u32, TaskTraceStats>, ParseError> {
    if text.len() > 512 << 20 {
        return Err(ParseError::new(
            1,
            1,
            "trace is over 512 MiB",
            "cut the trace to a window",
        ));
    }
    let mut stats: BTreeMap<u32, TaskTraceStats> = BTreeMap::new();
    // pid -> (switch-in time) while running; pid -> sleep start; pid -> waking time.
    let mut on_cpu: BTreeMap<u32, u64> = BTreeMap::new();
    let mut asleep: BTreeMap<u32, u64> = BTreeMap::new();
    let mut woken: BTreeMap<u32, u64> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let Some((head, rest)) = line.split_once(": ") else {
            continue;
        };
        let Some((event, body)) = rest.split_once(": ") else {
            continue;
        };
        let event = event.trim();
        if !event.starts_with("sched_") {
            continue;
        }
        let bad = |what: &str| {
            ParseError::new(
                n + 1,
                1,
                format!("malformed {event} line: {what}"),
                "expected ftrace text as /sys/kernel/tracing/trace prints it",
            )
        };
        let t = head
            .split_whitespace()
            .last()
            .and_then(parse_ts)
            .ok_or_else(|| bad("no timestamp"))?;
        let pid = |key: &str| field(body, key).and_then(|v| v.parse::<u32>().ok());
        match event {
            "sched_switch" => {
                let (Some(pp), Some(np)) = (pid("prev_pid="), pid("next_pid=")) else {
                    return Err(bad("no prev_pid/next_pid"));
                };
                let state = field(body, "prev_state=").ok_or_else(|| bad("no prev_state"))?;
                if pp != 0 {
                    let s = stats.entry(pp).or_default();
                    s.comm = field(body, "prev_comm=").unwrap_or("").to_string();
                    if let Some(start) = on_cpu.remove(&pp) {
                        s.run_ns += t.saturating_sub(start);
                    }
                    if state.starts_with('S') || state.starts_with('D') {
                        s.bursts += 1;
                        asleep.insert(pp, t);
                    }
                }
                if np != 0 {
                    let s = stats.entry(np).or_default();
                    s.comm = field(body, "next_comm=").unwrap_or("").to_string();
                    on_cpu.insert(np, t);
                    if let Some(w) = woken.remove(&np) {
                        s.wakeup_latency.push(t.saturating_sub(w));
                    }
                }
            }
            "sched_waking" => {
                let p = pid("pid=").ok_or_else(|| bad("no pid"))?;
                woken.insert(p, t);
                if let Some(since) = asleep.remove(&p) {
                    let s = stats.entry(p).or_default();
                    s.sleeps += 1;
                    s.sleep_ns += t.saturating_sub(since);
                }
            }
            _ => {}
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use proptest::prelude::*;

    fn traced(text: &str) -> (eevdf_sim::SimResult, Trace) {
        let sc = Scenario::parse(text).unwrap();
        let mut sim = eevdf_sim::Sim::new(sc.sim.clone());
        sim.record_trace();
        let end = sim.duration();
        sim.run_until(end);
        let t = sim.take_trace();
        (sim.finish(end), t)
    }

    #[test]
    fn exported_ftrace_imports_back_to_the_same_numbers() {
        let (r, t) = traced(
            "eevdf-scenario v1\nmachine smp2\nhz 1000\nduration 1s\n\
             task ct kind=timer period=1ms slice=1ms\ntask rt kind=periodic count=3 run=2ms sleep=3ms\nend\n",
        );
        let text = to_ftrace(&t);
        assert!(text.starts_with("# tracer: nop"));
        let line = text.lines().find(|l| l.contains("sched_switch:")).unwrap();
        assert!(
            line.contains(" [00") && line.contains("] d..2. ") && line.contains(" ==> next_comm="),
            "{line}"
        );
        let stats = import(&text).unwrap();
        // Run time per task: the trace's bursts add up to what the engine
        // charged, but for bursts still open at the end.
        for (i, task) in r.tasks.iter().enumerate() {
            let s = &stats[&(1000 + i as u32)];
            let diff = task.cpu_ns.abs_diff(s.run_ns);
            assert!(
                diff <= 3_000_000,
                "{}: sim {} ns, trace {} ns",
                task.name,
                task.cpu_ns,
                s.run_ns
            );
            // Each wakeup sample of the sim appears in the trace.
            assert!(
                s.wakeup_latency.len() as u64 + 1 >= task.latency.samples.min(task.wakeups),
                "{}",
                task.name
            );
        }
        let json = to_chrome_json(&t);
        assert!(json.starts_with("{\"traceEvents\":["));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(v["traceEvents"].as_array().unwrap().len() > 10);
    }

    proptest! {
        #[test]
        fn import_never_panics(s in "\\PC{0,400}") {
            let _ = import(&s);
            let _ = import(&format!("x-1 [000] d..2. 1.000000: sched_switch: {s}"));
        }
    }
}
