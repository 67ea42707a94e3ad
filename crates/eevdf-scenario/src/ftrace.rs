//! Trace export and import (formats.md §4): ftrace text as
//! `/sys/kernel/tracing/trace` prints it (Perfetto opens it with CPU
//! tracks), Chrome trace JSON, and an importer for ftrace text that turns
//! a trace (ours or a real one) into per-task run, sleep and wakeup
//! latency statistics.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::BufRead;

use eevdf_sim::trace::{PrevState, Trace, TraceEvent};

use crate::display::shown;
use crate::limits::{self, BoundedLines, ReadError};
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
                    (_, PrevState::Runnable) => "R",
                    (_, PrevState::Sleeping) => "S",
                    (_, PrevState::Uninterruptible) => "D",
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
            TraceEvent::Wakeup { cpu, task, on, .. } => {
                let k = &t.tasks[task];
                (
                    on,
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

pub(crate) fn field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    body.split_whitespace().find_map(|w| w.strip_prefix(key))
}

/// `SECONDS.FRACTION` in ns: `None` if malformed, `Some(None)` if it
/// does not fit in u64 ns (about 584 years).
pub(crate) fn parse_ts(s: &str) -> Option<Option<u64>> {
    let (sec, frac) = s.split_once('.')?;
    let sec = sec.trim();
    if sec.is_empty() || !sec.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Digits past nanoseconds are dropped.
    let ns: u64 = format!("{:0<9}", frac.get(..9).unwrap_or(frac))
        .parse()
        .ok()?;
    let Ok(sec) = sec.parse::<u64>() else {
        return Some(None);
    };
    Some(
        sec.checked_mul(1_000_000_000)
            .and_then(|v| v.checked_add(ns)),
    )
}

/// The per-pid state of an import, fed one line at a time.
#[derive(Debug, Default)]
struct Importer {
    stats: BTreeMap<u32, TaskTraceStats>,
    /// pid -> switch-in time while running.
    on_cpu: BTreeMap<u32, u64>,
    /// pid -> the time it went to sleep.
    asleep: BTreeMap<u32, u64>,
    /// pid -> the time of its `sched_waking`.
    woken: BTreeMap<u32, u64>,
    /// Whether any sched event was seen.
    sched: bool,
}

/// An event line split at its event: the head (task, `[CPU]`, flags,
/// timestamp), the event's name and its fields.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EventLine<'a> {
    pub head: &'a str,
    pub event: &'a str,
    pub body: &'a str,
}

/// `None` for comments, blank lines and lines that are no event.
pub(crate) fn event_line(line: &str) -> Option<EventLine<'_>> {
    if line.starts_with('#') || line.trim().is_empty() {
        return None;
    }
    let (head, rest) = line.split_once(": ")?;
    let (event, body) = rest.split_once(": ")?;
    Some(EventLine {
        head,
        event: event.trim(),
        body,
    })
}

/// A malformed line of `event`.
pub(crate) fn malformed(n: usize, event: &str, what: &str) -> ParseError {
    ParseError::new(
        n,
        1,
        format!("malformed {} line: {what}", shown(event)),
        "expected ftrace text as /sys/kernel/tracing/trace prints it",
    )
}

impl EventLine<'_> {
    /// The timestamp in ns and its column; an error names line `n`.
    pub(crate) fn ts(&self, n: usize) -> Result<(u64, usize), ParseError> {
        let head = self.head;
        let ts_text = head.split_whitespace().last().unwrap_or("");
        let ts_col = head
            .rfind(ts_text)
            .map_or(1, |b| head[..b].chars().count() + 1);
        match parse_ts(ts_text) {
            Some(Some(t)) => Ok((t, ts_col)),
            Some(None) => Err(ParseError::new(
                n,
                ts_col,
                format!("timestamp {} overflows 64-bit nanoseconds", shown(ts_text)),
                "timestamps are seconds since boot",
            )),
            None => Err(malformed(n, self.event, "no timestamp")),
        }
    }
}

/// The error of a stream with no sched event in its first
/// [`limits::TRACE_PROBE_BYTES`] (line `n`).
fn no_sched_event(n: usize) -> ReadError {
    ReadError::Parse(ParseError::new(
        n,
        1,
        format!(
            "no sched event in the first {} bytes",
            limits::TRACE_PROBE_BYTES
        ),
        "this reads ftrace text with sched_switch and sched_waking lines",
    ))
}

/// `acc += add`, or an overflow error at `at`.
pub(crate) fn add(
    acc: &mut u64,
    add: u64,
    at: (usize, usize),
    what: &str,
) -> Result<(), ParseError> {
    *acc = acc.checked_add(add).ok_or_else(|| {
        ParseError::new(
            at.0,
            at.1,
            format!("total {what} overflows 64-bit nanoseconds"),
            "is the trace corrupt? timestamps are seconds since boot",
        )
    })?;
    Ok(())
}

impl Importer {
    /// One line of trace text (line `n`); non-sched lines are skipped.
    fn line(&mut self, n: usize, line: &str) -> Result<(), ParseError> {
        let Some(l) = event_line(line) else {
            return Ok(());
        };
        let (event, body) = (l.event, l.body);
        if !event.starts_with("sched_") {
            return Ok(());
        }
        self.sched = true;
        let bad = |what: &str| malformed(n, event, what);
        let (t, ts_col) = l.ts(n)?;
        let at = (n, ts_col);
        let pid = |key: &str| field(body, key).and_then(|v| v.parse::<u32>().ok());
        match event {
            "sched_switch" => {
                let (Some(pp), Some(np)) = (pid("prev_pid="), pid("next_pid=")) else {
                    return Err(bad("no prev_pid/next_pid"));
                };
                let state = field(body, "prev_state=").ok_or_else(|| bad("no prev_state"))?;
                let sleeping = state.starts_with('S') || state.starts_with('D');
                self.switch_out(pp, field(body, "prev_comm="), sleeping, t, at)?;
                self.switch_in(np, field(body, "next_comm="), t);
            }
            "sched_waking" => {
                let p = pid("pid=").ok_or_else(|| bad("no pid"))?;
                self.woken.insert(p, t);
                if let Some(since) = self.asleep.remove(&p) {
                    let s = self.stats.entry(p).or_default();
                    s.sleeps += 1;
                    add(&mut s.sleep_ns, t.saturating_sub(since), at, "sleep time")?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn switch_out(
        &mut self,
        pid: u32,
        comm: Option<&str>,
        sleeping: bool,
        t: u64,
        at: (usize, usize),
    ) -> Result<(), ParseError> {
        if pid == 0 {
            return Ok(());
        }
        let s = self.stats.entry(pid).or_default();
        s.comm = comm.unwrap_or("").to_string();
        if let Some(start) = self.on_cpu.remove(&pid) {
            add(&mut s.run_ns, t.saturating_sub(start), at, "run time")?;
        }
        if sleeping {
            s.bursts += 1;
            self.asleep.insert(pid, t);
        }
        Ok(())
    }

    fn switch_in(&mut self, pid: u32, comm: Option<&str>, t: u64) {
        if pid == 0 {
            return;
        }
        let s = self.stats.entry(pid).or_default();
        s.comm = comm.unwrap_or("").to_string();
        self.on_cpu.insert(pid, t);
        if let Some(w) = self.woken.remove(&pid) {
            s.wakeup_latency.push(t.saturating_sub(w));
        }
    }
}

/// Per-pid statistics of a trace, by pid.
pub type TraceStats = BTreeMap<u32, TaskTraceStats>;

const TRACE_HINT: &str = "cut the trace to a window";

/// Imports ftrace text (ours, or `trace-cmd report` / tracefs output) and
/// computes per-pid run/sleep/latency statistics. Lines that are not
/// sched events are skipped; malformed sched lines are errors.
pub fn import(text: &str) -> Result<TraceStats, ParseError> {
    if text.len() as u64 > limits::TRACE_BYTES {
        return Err(ParseError::new(
            1,
            1,
            format!("trace is over {} bytes", limits::TRACE_BYTES),
            TRACE_HINT,
        ));
    }
    let mut imp = Importer::default();
    for (i, line) in text.lines().enumerate() {
        imp.line(i + 1, line)?;
    }
    Ok(imp.stats)
}

/// [`import`] from a stream, line by line: memory is one line (at most
/// [`limits::TRACE_LINE_BYTES`]) plus the per-pid statistics, and the
/// stream is read to its end or to [`limits::TRACE_BYTES`]; a stream
/// with no sched event in its first [`limits::TRACE_PROBE_BYTES`] is an
/// error.
pub fn import_reader(r: impl BufRead) -> Result<TraceStats, ReadError> {
    let mut imp = Importer::default();
    read_lines(r, |n, line| {
        imp.line(n, line)?;
        Ok(imp.sched)
    })?;
    Ok(imp.stats)
}

/// Feeds `line` each line of a trace stream within the trace bounds;
/// `line` says whether a sched event was seen so far, and a stream with
/// none in its first [`limits::TRACE_PROBE_BYTES`] is refused.
pub(crate) fn read_lines(
    r: impl BufRead,
    mut line: impl FnMut(usize, &str) -> Result<bool, ParseError>,
) -> Result<(), ReadError> {
    let mut lines = BoundedLines::new(r, limits::TRACE_LINE_BYTES, limits::TRACE_BYTES, TRACE_HINT);
    while let Some((n, text)) = lines.next_line()? {
        let sched = line(n, text)?;
        if !sched && lines.bytes_read() > limits::TRACE_PROBE_BYTES {
            return Err(no_sched_event(n));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use proptest::prelude::*;

    fn traced(text: &str) -> (eevdf_sim::SimResult, Trace) {
        let sc = Scenario::parse(text).unwrap();
        let mut sim = eevdf_sim::Sim::new(sc.sim_config());
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

    const WAKING: &str =
        "a-5 [000] d..2. {T}: sched_waking: comm=a pid=5 prio=120 target_cpu=000\n";
    const IN: &str = "x-0 [000] d..2. {T}: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=5 next_prio=120\n";
    const OUT: &str = "a-5 [000] d..2. {T}: sched_switch: prev_comm=a prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";

    fn at(line: &str, t: &str) -> String {
        line.replace("{T}", t)
    }

    #[test]
    fn overflowing_timestamps_and_totals_are_positioned_errors() {
        // 1e11 s does not fit in u64 ns.
        let e = import(&at(WAKING, "99999999999.000000")).unwrap_err();
        assert_eq!((e.line, e.column), (1, 17), "{e}");
        assert!(e.message.contains("timestamp"), "{e}");
        // 18e9 s fits, twice does not: a run total that would wrap.
        let big = "18000000000.000000";
        let t = [
            at(IN, "0.000000"),
            at(OUT, big),
            at(IN, "0.000000"),
            at(OUT, big),
        ]
        .concat();
        let e = import(&t).unwrap_err();
        assert_eq!((e.line, e.column), (4, 17), "{e}");
        assert!(e.message.contains("run time"), "{e}");
        let t = [
            at(OUT, "0.000000"),
            at(WAKING, big),
            at(OUT, "0.000000"),
            at(WAKING, big),
        ];
        let e = import(&t.concat()).unwrap_err();
        assert!(e.message.contains("sleep time") && e.line == 4, "{e}");
        assert_eq!(parse_ts("1.5"), Some(Some(1_500_000_000)));
        assert_eq!(parse_ts("1.0000000019"), Some(Some(1_000_000_001)));
        assert_eq!(parse_ts("x.5"), None);
    }

    /// An endless reader repeating a pattern.
    struct Cycle(Vec<u8>, usize);

    impl std::io::Read for Cycle {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            for b in out.iter_mut() {
                *b = self.0[self.1 % self.0.len()];
                self.1 += 1;
            }
            Ok(out.len())
        }
    }

    #[test]
    fn the_stream_reader_reads_what_the_text_reader_reads() {
        let t: String = (0..100)
            .flat_map(|i| {
                [
                    at(IN, &format!("{i}.000000")),
                    at(OUT, &format!("{i}.001000")),
                ]
            })
            .collect();
        let want = import(&t).unwrap();
        assert_eq!(want[&5].run_ns, 100_000_000);
        assert_eq!(import_reader(t.as_bytes()).unwrap(), want);
        // Endless text without a sched event (`yes`, in long lines to be quick).
        let mut line = vec![b'y'; 4095];
        line.push(b'\n');
        let endless = std::io::BufReader::new(Cycle(line, 0));
        let e = import_reader(endless).unwrap_err();
        assert!(e.to_string().contains("no sched event"), "{e}");
        let e = import_reader(&b"x\n\xff\n"[..]).unwrap_err();
        assert!(matches!(e, ReadError::Parse(ref p) if p.line == 2), "{e}");
        let e = import(&at(WAKING, "bad").replace("sched_waking", "sched_\x1b[2J")).unwrap_err();
        assert!(e.message.contains("sched_\\x1b[2J"), "{e}");
    }

    proptest! {
        #[test]
        fn import_never_panics(s in "\\PC{0,400}") {
            let _ = import(&s);
            let _ = import(&format!("x-1 [000] d..2. 1.000000: sched_switch: {s}"));
        }
    }
}
