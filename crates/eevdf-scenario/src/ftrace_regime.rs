//! The regime of an ftrace text trace, to hold a simulator's trace
//! against a kernel's (`eevdf import trace --regime`): how often tasks
//! switch and why (`prev_state`), how long they ran before, where
//! wakeups land and how long they wait, and each CPU's idle share.
//! Tasks are grouped by name with a `.N` suffix dropped, so a kernel
//! run's `hb.11` and the simulator's `hb` fall in one group. A kernel
//! run's trace (`eevdf kernel run --trace`) is cut to the measured
//! window its guest marks (`eevdf-guest window t0=.. t1=..`).

use std::collections::BTreeMap;
use std::io::BufRead;

use crate::ftrace::{field, parse_ts};
use crate::limits::{self, BoundedLines, ReadError};
use crate::ParseError;

/// Log-linear buckets: 2^SUB_BITS per power of two, so a quantile is
/// within 1/2^SUB_BITS (3 %) of the true value, in fixed memory however
/// long the trace.
const SUB_BITS: u32 = 5;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) << SUB_BITS;

/// Durations (ns) in fixed memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Durations {
    counts: Vec<u64>,
    n: u64,
    max: u64,
}

impl Default for Durations {
    fn default() -> Self {
        Durations {
            counts: vec![0; BUCKETS],
            n: 0,
            max: 0,
        }
    }
}

fn bucket(v: u64) -> usize {
    let top = 64 - v.leading_zeros();
    if top <= SUB_BITS {
        return v as usize;
    }
    let shift = top - SUB_BITS - 1;
    let sub = (v >> shift) as usize & ((1 << SUB_BITS) - 1);
    (((shift + 1) as usize) << SUB_BITS) + sub
}

/// The smallest value of bucket `b`.
fn floor(b: usize) -> u64 {
    let exp = b >> SUB_BITS;
    let sub = (b & ((1 << SUB_BITS) - 1)) as u64;
    if exp == 0 {
        return sub;
    }
    ((1u64 << SUB_BITS) | sub) << (exp - 1)
}

impl Durations {
    pub fn add(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.n += 1;
        self.max = self.max.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The `q` quantile (0..=1), to within 3 % below; the maximum is
    /// exact. `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        if q >= 1.0 {
            return Some(self.max);
        }
        // The rank of the nearest-rank quantile, 1-based.
        let rank = ((q.max(0.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(floor(b).min(self.max));
            }
        }
        Some(self.max)
    }
}

/// One CPU's switches and idle time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuRegime {
    pub switches: u64,
    pub idle_ns: u64,
}

/// What a trace shows of the scheduler's regime.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Regime {
    /// From the first sched event to the last, ns.
    pub span_ns: u64,
    pub cpus: BTreeMap<u32, CpuRegime>,
    /// Switches away from a task by its `prev_state` (`R`, `R+`, `S`,
    /// `D`, ...), with how long it had run since it was switched in.
    pub switched_out: BTreeMap<String, Durations>,
    /// Switches away from the idle task.
    pub idle_exits: u64,
    /// `sched_wakeup`s: the task is queued on `target_cpu`.
    pub wakeups: u64,
    /// Wakeups queued on the CPU of the waker (where its `sched_waking`
    /// is logged: a kernel's `sched_waking` still names the old CPU).
    pub wakeups_local: u64,
    /// Wakeups queued elsewhere than the CPU the task last ran on.
    pub wakeups_moved: u64,
    /// From `sched_waking` to the switch in, by task group.
    pub latency: BTreeMap<String, Durations>,
}

/// `hb.11` -> `hb`; names without a numeric suffix stay.
pub fn group_of(comm: &str) -> &str {
    match comm.rsplit_once('.') {
        Some((base, n))
            if !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            base
        }
        _ => comm,
    }
}

fn is_idle(pid: u32) -> bool {
    pid == 0
}

#[derive(Debug, Default)]
struct Reader {
    r: Regime,
    first: Option<u64>,
    last: u64,
    /// pid -> (switch-in time).
    on_cpu: BTreeMap<u32, u64>,
    /// cpu -> when it went idle.
    idle_since: BTreeMap<u32, u64>,
    /// pid -> the CPU it last ran on.
    ran_on: BTreeMap<u32, u32>,
    /// pid -> (waking time, the waker's CPU, group).
    waking: BTreeMap<u32, (u64, u32, String)>,
    /// The guest's measured window, once its mark is seen.
    window: Option<(u64, u64)>,
}

/// `eevdf-guest window t0=NS t1=NS` (CLOCK_MONOTONIC ns, as the trace's
/// `mono` clock).
fn window_mark(body: &str) -> Option<(u64, u64)> {
    let rest = body.split("eevdf-guest window ").nth(1)?;
    let t0 = field(rest, "t0=")?.parse().ok()?;
    let t1 = field(rest, "t1=")?.parse().ok()?;
    (t0 <= t1).then_some((t0, t1))
}

impl Reader {
    fn line(&mut self, n: usize, line: &str) -> Result<(), ParseError> {
        if line.starts_with('#') {
            return Ok(());
        }
        let Some((head, rest)) = line.split_once(": ") else {
            return Ok(());
        };
        let Some((event, body)) = rest.split_once(": ") else {
            return Ok(());
        };
        let event = event.trim();
        if event == "tracing_mark_write" {
            self.window = self.window.or(window_mark(body));
            return Ok(());
        }
        if !matches!(event, "sched_switch" | "sched_waking" | "sched_wakeup") {
            return Ok(());
        }
        let bad = |what: &str| {
            ParseError::new(
                n,
                1,
                format!("malformed {event} line: {what}"),
                "expected ftrace text as /sys/kernel/tracing/trace prints it",
            )
        };
        let t = head
            .split_whitespace()
            .last()
            .and_then(parse_ts)
            .flatten()
            .ok_or_else(|| bad("no timestamp"))?;
        let cpu = head
            .split_once('[')
            .and_then(|(_, r)| r.split_once(']'))
            .and_then(|(c, _)| c.trim().parse::<u32>().ok())
            .ok_or_else(|| bad("no [CPU]"))?;
        if self.window.is_some_and(|(t0, t1)| t < t0 || t > t1) {
            return Ok(());
        }
        self.first.get_or_insert(t);
        self.last = self.last.max(t);
        let num = |key: &str| field(body, key).and_then(|v| v.parse::<u32>().ok());
        match event {
            "sched_switch" => {
                let (Some(pp), Some(np)) = (num("prev_pid="), num("next_pid=")) else {
                    return Err(bad("no prev_pid/next_pid"));
                };
                let state = field(body, "prev_state=").ok_or_else(|| bad("no prev_state"))?;
                self.switch(cpu, pp, state, np, t);
            }
            "sched_waking" => {
                let p = num("pid=").ok_or_else(|| bad("no pid"))?;
                let comm = field(body, "comm=").unwrap_or("");
                // The waker runs where the event is logged.
                self.waking.insert(p, (t, cpu, group_of(comm).to_string()));
            }
            _ => {
                let p = num("pid=").ok_or_else(|| bad("no pid"))?;
                let target = num("target_cpu=").ok_or_else(|| bad("no target_cpu"))?;
                let waker = self.waking.get(&p).map_or(cpu, |w| w.1);
                self.r.wakeups += 1;
                self.r.wakeups_local += u64::from(target == waker);
                let moved = self.ran_on.get(&p).is_some_and(|&c| c != target);
                self.r.wakeups_moved += u64::from(moved);
            }
        }
        Ok(())
    }

    fn switch(&mut self, cpu: u32, prev: u32, state: &str, next: u32, t: u64) {
        self.r.cpus.entry(cpu).or_default().switches += 1;
        if is_idle(prev) {
            self.r.idle_exits += 1;
            if let Some(since) = self.idle_since.remove(&cpu) {
                self.r.cpus.entry(cpu).or_default().idle_ns += t.saturating_sub(since);
            }
        } else {
            let ran = self.on_cpu.remove(&prev).map(|s| t.saturating_sub(s));
            let d = self.r.switched_out.entry(state.to_string()).or_default();
            if let Some(ran) = ran {
                d.add(ran);
            }
        }
        if is_idle(next) {
            self.idle_since.insert(cpu, t);
        } else {
            self.on_cpu.insert(next, t);
            self.ran_on.insert(next, cpu);
            if let Some((w, _, group)) = self.waking.remove(&next) {
                self.r
                    .latency
                    .entry(group)
                    .or_default()
                    .add(t.saturating_sub(w));
            }
        }
    }

    fn finish(mut self) -> Regime {
        self.r.span_ns = match self.window {
            Some((t0, t1)) => t1 - t0,
            None => self.last.saturating_sub(self.first.unwrap_or(self.last)),
        };
        // Idle until the end counts.
        let end = self.window.map_or(self.last, |w| w.1);
        for (cpu, since) in std::mem::take(&mut self.idle_since) {
            self.r.cpus.entry(cpu).or_default().idle_ns += end.saturating_sub(since);
        }
        self.r
    }
}

/// The regime of ftrace text read from a stream, line by line (memory:
/// one line, the per-pid state and fixed-size histograms), bounded as
/// [`crate::ftrace::import_reader`] is.
pub fn regime_reader(r: impl BufRead) -> Result<Regime, ReadError> {
    let hint = "cut the trace to a window";
    let mut lines = BoundedLines::new(r, limits::TRACE_LINE_BYTES, limits::TRACE_BYTES, hint);
    let mut rd = Reader::default();
    while let Some((n, line)) = lines.next_line()? {
        rd.line(n, line)?;
        if rd.first.is_none() && lines.bytes_read() > limits::TRACE_PROBE_BYTES {
            return Err(ReadError::Parse(ParseError::new(
                n,
                1,
                format!(
                    "no sched event in the first {} bytes",
                    limits::TRACE_PROBE_BYTES
                ),
                "this reads ftrace text with sched_switch and sched_waking lines",
            )));
        }
    }
    Ok(rd.finish())
}

fn per_s(count: u64, span_ns: u64) -> f64 {
    if span_ns == 0 {
        return 0.0;
    }
    count as f64 * 1e9 / span_ns as f64
}

fn rate(v: f64) -> String {
    let r = v.round() as u64;
    let s = r.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn us(v: Option<u64>) -> String {
    v.map_or("-".into(), |ns| rate(ns as f64 / 1e3))
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}", part as f64 * 100.0 / whole as f64)
}

type Row = (String, Vec<String>, Option<f64>);

/// One row: a label, one cell per regime and, for two, their ratio.
fn row(out: &mut Vec<Row>, label: &str, cells: &[String], ratio: Option<f64>) {
    out.push((
        label.to_string(),
        cells.to_vec(),
        ratio.filter(|r| r.is_finite()),
    ));
}

/// The rows as columns as wide as their widest cell.
fn layout(rows: &[Row]) -> String {
    let label_w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let cols = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.1.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (label, cells, ratio) in rows {
        let mut line = format!("{label:<label_w$}");
        for (c, w) in cells.iter().zip(&widths) {
            line.push_str(&format!("  {c:>w$}"));
        }
        if let Some(r) = ratio {
            line.push_str(&format!("  {r:>5.2}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The regimes side by side (one or two, each with its name); with two,
/// the last column is the second's rate over the first's.
pub fn table(runs: &[(&str, &Regime)]) -> String {
    let mut out = Vec::new();
    let names: Vec<String> = runs.iter().map(|(n, _)| n.to_string()).collect();
    row(&mut out, "", &names, None);
    let two = runs.len() == 2;
    let ratio = |a: f64, b: f64| (two && a > 0.0).then(|| b / a);
    let rates = |f: &dyn Fn(&Regime) -> u64| -> (Vec<String>, Option<f64>) {
        let v: Vec<f64> = runs.iter().map(|(_, r)| per_s(f(r), r.span_ns)).collect();
        let r = if two { ratio(v[0], v[1]) } else { None };
        (v.into_iter().map(rate).collect(), r)
    };
    let spans: Vec<String> = runs
        .iter()
        .map(|(_, r)| format!("{:.3}", r.span_ns as f64 / 1e9))
        .collect();
    row(&mut out, "span s", &spans, None);
    let (c, r) = rates(&|g| g.cpus.values().map(|c| c.switches).sum());
    row(&mut out, "switches /s", &c, r);
    let mut states: Vec<&String> = runs
        .iter()
        .flat_map(|(_, g)| g.switched_out.keys())
        .collect();
    states.sort();
    states.dedup();
    for st in states {
        let count = |g: &Regime| g.switched_out.get(st).map_or(0, Durations::count);
        let (c, r) = rates(&count);
        row(
            &mut out,
            &format!("  from a task, prev_state {st} /s"),
            &c,
            r,
        );
        let runs_q: Vec<String> = runs
            .iter()
            .map(|(_, g)| {
                let d = g.switched_out.get(st);
                format!(
                    "{} / {}",
                    us(d.and_then(|d| d.quantile(0.5))),
                    us(d.and_then(|d| d.quantile(0.9)))
                )
            })
            .collect();
        row(&mut out, "    its run before, p50 / p90 us", &runs_q, None);
    }
    let (c, r) = rates(&|g| g.idle_exits);
    row(&mut out, "  from idle /s", &c, r);
    let (c, r) = rates(&|g| g.wakeups);
    row(&mut out, "wakeups /s", &c, r);
    let local: Vec<String> = runs
        .iter()
        .map(|(_, g)| pct(g.wakeups_local, g.wakeups))
        .collect();
    row(&mut out, "  on the waker's CPU %", &local, None);
    let moved: Vec<String> = runs
        .iter()
        .map(|(_, g)| pct(g.wakeups_moved, g.wakeups))
        .collect();
    row(&mut out, "  not where it last ran %", &moved, None);
    let mut groups: Vec<&String> = runs.iter().flat_map(|(_, g)| g.latency.keys()).collect();
    groups.sort();
    groups.dedup();
    for grp in groups {
        let cells: Vec<String> = runs
            .iter()
            .map(|(_, g)| {
                g.latency.get(grp).map_or("-".into(), |d| {
                    format!(
                        "{} / {} / {}",
                        us(d.quantile(0.5)),
                        us(d.quantile(0.99)),
                        us(d.quantile(1.0))
                    )
                })
            })
            .collect();
        row(
            &mut out,
            &format!("wakeup to run {grp}, p50/p99/max us"),
            &cells,
            None,
        );
    }
    let idle: Vec<String> = runs
        .iter()
        .map(|(_, g)| {
            g.cpus
                .values()
                .map(|c| pct(c.idle_ns, g.span_ns))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    row(&mut out, "idle % by CPU", &idle, None);
    layout(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_are_ordered_and_close() {
        let mut last = 0;
        for v in (0..200_000u64).chain([u64::MAX / 3, u64::MAX]) {
            let b = bucket(v);
            assert!(b < BUCKETS, "{v}");
            assert!(b >= last || v < 200_000, "{v}");
            last = b;
            let f = floor(b);
            assert!(f <= v, "{v}: floor {f}");
            assert!((v - f) as f64 <= v as f64 / 32.0 + 1.0, "{v}: floor {f}");
        }
    }

    proptest! {
        #[test]
        fn quantiles_are_near_the_exact_ones(mut v in prop::collection::vec(0u64..50_000_000, 1..400), q in 0.0f64..1.0) {
            let mut d = Durations::default();
            for &x in &v {
                d.add(x);
            }
            v.sort_unstable();
            let rank = ((q * v.len() as f64).ceil() as usize).max(1);
            let exact = v[rank - 1];
            let got = d.quantile(q).unwrap();
            prop_assert!(got <= exact && exact - got <= exact / 32 + 1, "q {q}: {got} against {exact}");
            prop_assert_eq!(d.quantile(1.0), v.last().copied());
        }
    }

    #[test]
    fn groups_drop_a_numeric_suffix() {
        assert_eq!(group_of("hb.11"), "hb");
        assert_eq!(group_of("hb"), "hb");
        assert_eq!(group_of("kworker/0:1"), "kworker/0:1");
        assert_eq!(group_of("a.b"), "a.b");
        assert_eq!(group_of(".3"), ".3");
        assert_eq!(group_of("x."), "x.");
    }

    const TRACE: &str = "\
# tracer: nop
            hb.0-10      [000] d..2.     1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hb.0 next_pid=10 next_prio=120
            hb.0-10      [000] d..3.     1.000010: sched_waking: comm=hb.1 pid=11 prio=120 target_cpu=000
            hb.0-10      [000] dl.4.     1.000012: sched_wakeup: comm=hb.1 pid=11 prio=120 target_cpu=000
            hb.0-10      [000] d..2.     1.000020: sched_switch: prev_comm=hb.0 prev_pid=10 prev_prio=120 prev_state=R ==> next_comm=hb.1 next_pid=11 next_prio=120
            hb.1-11      [000] d..2.     1.000050: sched_switch: prev_comm=hb.1 prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
            hb.0-10      [001] d..3.     1.000060: sched_waking: comm=hb.1 pid=11 prio=120 target_cpu=001
          <idle>-0       [001] d..2.     1.000100: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hb.1 next_pid=11 next_prio=120
";

    #[test]
    fn a_small_trace_reads_as_written() {
        let r = regime_reader(TRACE.as_bytes()).unwrap();
        assert_eq!(r.span_ns, 100_000);
        assert_eq!(r.cpus[&0].switches, 3);
        assert_eq!(
            r.cpus[&0].idle_ns, 50_000,
            "CPU 0 idle from 1.000050 to the end"
        );
        assert_eq!(r.cpus[&1].switches, 1);
        assert_eq!(r.idle_exits, 2);
        assert_eq!(r.switched_out["R"].count(), 1);
        // Quantiles are bucket floors (within 1/32 below), the maximum exact.
        let near =
            |got: Option<u64>, want: u64| got.is_some_and(|g| g <= want && want - g <= want / 32);
        assert!(near(r.switched_out["R"].quantile(0.5), 20_000));
        assert_eq!(r.switched_out["S"].quantile(1.0), Some(30_000));
        assert_eq!((r.wakeups, r.wakeups_local, r.wakeups_moved), (1, 1, 0));
        let lat = &r.latency["hb"];
        assert_eq!(lat.count(), 2);
        assert_eq!(lat.quantile(1.0), Some(40_000));
        assert!(near(lat.quantile(0.0), 10_000));
    }

    #[test]
    fn the_table_puts_two_traces_side_by_side() {
        let r = regime_reader(TRACE.as_bytes()).unwrap();
        let t = table(&[("kernel", &r), ("twin", &r)]);
        let line = |label: &str| {
            t.lines()
                .find(|l| l.starts_with(label))
                .unwrap_or_else(|| panic!("no {label} in\n{t}"))
                .to_string()
        };
        // 4 switches in 100 us: 40,000 a second, the same on both sides.
        let words = |l: String| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            words(line("switches /s")),
            ["switches", "/s", "40,000", "40,000", "1.00"],
            "{t}"
        );
        assert!(line("  on the waker's CPU %").contains("100.0"), "{t}");
        assert!(line("wakeup to run hb").contains(" / 40 "), "{t}");
        let one = table(&[("kernel", &r)]);
        assert!(!one.lines().any(|l| l.ends_with("1.00")), "{one}");
    }

    #[test]
    fn a_malformed_switch_names_its_line() {
        let text = "x-1 [000] d..2. 1.0: sched_switch: prev_comm=x prev_pid=1\n";
        let Err(ReadError::Parse(e)) = regime_reader(text.as_bytes()) else {
            panic!("no error");
        };
        assert_eq!(e.line, 1);
    }
}
