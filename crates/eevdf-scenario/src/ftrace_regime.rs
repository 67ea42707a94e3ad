//! The regime of an ftrace text trace, to hold a simulator's trace
//! against a kernel's (`eevdf import trace --regime`): how often tasks
//! switch and why (`prev_state`), how long they ran before, where
//! wakeups land and how long they wait, each CPU's idle share, and
//! where the events pass from one CPU to another (under QEMU's
//! single-threaded TCG one vCPU runs at a time, so each such handover
//! ends a vCPU's turn; docs/model.md, "A vCPU that spins hands its turn
//! over").
//! Tasks are grouped by name with a `.N` suffix dropped, so a kernel
//! run's `hb.11` and the simulator's `hb` fall in one group (the kernel
//! cuts a name to 15 bytes, so a longer task name does not group). A
//! kernel run's trace (`eevdf kernel run --trace`) counts only inside
//! the window its guest marks (`eevdf-guest window t0=.. t1=..`); the
//! events before it still say who runs and which CPUs are idle at t0.

use std::collections::BTreeMap;
use std::io::BufRead;

use crate::display::shown;
use crate::ftrace::{add, event_line, field, malformed, read_lines};
use crate::limits::ReadError;
use crate::ParseError;

/// Log-linear buckets: 2^SUB_BITS per power of two, so a quantile is
/// within 1/2^SUB_BITS (3 %) below the true value.
const SUB_BITS: u32 = 5;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) << SUB_BITS;

/// Most distinct `prev_state`s and task groups kept apart; the rest
/// count as [`OTHER`], so no trace grows the table or the memory
/// without bound.
pub const MAX_STATES: usize = 64;
pub const MAX_GROUPS: usize = 256;
pub const OTHER: &str = "(other)";

/// Durations (ns) in sparse log-linear buckets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Durations {
    counts: BTreeMap<u16, u64>,
    n: u64,
    max: u64,
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
        let b = bucket(ns);
        debug_assert!(
            b < BUCKETS && BUCKETS <= usize::from(u16::MAX),
            "bucket {b}"
        );
        *self.counts.entry(b as u16).or_default() += 1;
        self.n += 1;
        self.max = self.max.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The `q` quantile (0..=1, nearest rank) as its bucket's floor:
    /// within 3 % below; the maximum is exact. `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        if q >= 1.0 {
            return Some(self.max);
        }
        let rank = ((q.max(0.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (&b, &c) in &self.counts {
            seen += c;
            if seen >= rank {
                return Some(floor(usize::from(b)).min(self.max));
            }
        }
        Some(self.max)
    }
}

/// Switches away from a task in one `prev_state`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    pub count: u64,
    /// How long the task had run, when its switch in was seen.
    pub runs: Durations,
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
    /// The marked window, or the first counted event to the last, ns.
    pub span_ns: u64,
    pub cpus: BTreeMap<u32, CpuRegime>,
    /// Switches away from a task by its `prev_state` (`R`, `R+`, `S`, ...).
    pub switched_out: BTreeMap<String, Switches>,
    /// Switches away from the idle task.
    pub idle_exits: u64,
    /// `sched_wakeup`s: the task is queued on `target_cpu`.
    pub wakeups: u64,
    /// Wakeups whose `sched_waking` was seen: it is logged where the
    /// waker runs (a kernel's `sched_waking` names the old CPU in its
    /// `target_cpu` field), and how many were queued on that CPU.
    pub wakeups_with_waker: u64,
    pub wakeups_local: u64,
    /// Wakeups of a task seen running, and how many were queued on
    /// another CPU than the one it last ran on.
    pub wakeups_with_last_cpu: u64,
    pub wakeups_moved: u64,
    /// From `sched_waking` to the switch in, by task group.
    pub latency: BTreeMap<String, Durations>,
    /// `# entries-in-buffer/entries-written`: fewer in the buffer than
    /// written means the ring buffer overran and events are missing.
    pub entries: Option<(u64, u64)>,
    /// Consecutive events (of any kind, probes too) on different CPUs.
    pub handovers: u64,
    /// The event each handover came after, by name (a probe's name, say
    /// `native_queued_spin_lock_slowpath`'s, tells a spin).
    pub handover_after: BTreeMap<String, u64>,
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

/// `key`, or [`OTHER`] once `map` holds `cap` other keys.
fn capped<V>(map: &BTreeMap<String, V>, key: &str, cap: usize) -> String {
    if map.contains_key(key) || map.len() < cap {
        key.to_string()
    } else {
        OTHER.to_string()
    }
}

/// The CPU of an event line's head: the last `[N]`, as a task's name
/// may hold brackets too.
fn cpu_of(head: &str) -> Option<u32> {
    let open = head.rfind('[')?;
    let (cpu, _) = head[open + 1..].split_once(']')?;
    cpu.trim().parse().ok()
}

/// `eevdf-guest window t0=NS t1=NS` (CLOCK_MONOTONIC ns, as the trace's
/// `mono` clock).
fn window_mark(body: &str) -> Option<(u64, u64)> {
    let rest = body.split("eevdf-guest window ").nth(1)?;
    let t0 = field(rest, "t0=")?.parse().ok()?;
    let t1 = field(rest, "t1=")?.parse().ok()?;
    (t0 <= t1).then_some((t0, t1))
}

/// `# entries-in-buffer/entries-written: A/B   #P:4`.
fn entries(line: &str) -> Option<(u64, u64)> {
    let rest = line.strip_prefix("# entries-in-buffer/entries-written:")?;
    let (a, b) = rest.split_whitespace().next()?.split_once('/')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[derive(Debug)]
struct Waking {
    at: u64,
    cpu: u32,
    group: String,
}

#[derive(Debug, Default)]
struct Reader {
    r: Regime,
    first: Option<u64>,
    last: u64,
    /// pid -> its switch-in time.
    on_cpu: BTreeMap<u32, u64>,
    /// cpu -> when it went idle.
    idle_since: BTreeMap<u32, u64>,
    /// pid -> the CPU it last ran on.
    ran_on: BTreeMap<u32, u32>,
    waking: BTreeMap<u32, Waking>,
    window: Option<(u64, u64)>,
    sched: bool,
    /// The CPU and name of the last event read.
    last_cpu: Option<u32>,
    last_event: String,
}

impl Reader {
    fn counted(&self, t: u64) -> bool {
        self.window.is_none_or(|(t0, t1)| t0 <= t && t <= t1)
    }

    fn line(&mut self, n: usize, line: &str) -> Result<(), ParseError> {
        let Some(l) = event_line(line) else {
            self.r.entries = self.r.entries.or(entries(line));
            return Ok(());
        };
        // Only sched events' timestamps must parse: another's that does
        // not is no handover.
        let ts = l.ts(n);
        self.handover(cpu_of(l.head), l.event, ts.as_ref().ok().map(|&(t, _)| t));
        if l.event == "tracing_mark_write" {
            if let (None, Some(w)) = (self.window, window_mark(l.body)) {
                // What came before the mark only sets the state.
                self.window = Some(w);
                self.r = Regime {
                    entries: self.r.entries,
                    ..Regime::default()
                };
                self.first = None;
                self.last = 0;
            }
            return Ok(());
        }
        if !matches!(l.event, "sched_switch" | "sched_waking" | "sched_wakeup") {
            return Ok(());
        }
        self.sched = true;
        let bad = |what: &str| malformed(n, l.event, what);
        let (t, ts_col) = ts?;
        let cpu = cpu_of(l.head).ok_or_else(|| bad("no [CPU]"))?;
        let counted = self.counted(t);
        if counted {
            self.first.get_or_insert(t);
            self.last = self.last.max(t);
        }
        let num = |key: &str| field(l.body, key).and_then(|v| v.parse::<u32>().ok());
        match l.event {
            "sched_switch" => {
                let (Some(prev), Some(next)) = (num("prev_pid="), num("next_pid=")) else {
                    return Err(bad("no prev_pid/next_pid"));
                };
                let state = field(l.body, "prev_state=").ok_or_else(|| bad("no prev_state"))?;
                self.switch_out(cpu, prev, state, t, counted, (n, ts_col))?;
                self.switch_in(cpu, next, t, counted);
            }
            "sched_waking" => {
                let pid = num("pid=").ok_or_else(|| bad("no pid"))?;
                let group = group_of(field(l.body, "comm=").unwrap_or("")).to_string();
                self.waking.insert(pid, Waking { at: t, cpu, group });
            }
            _ => {
                let pid = num("pid=").ok_or_else(|| bad("no pid"))?;
                let target = num("target_cpu=").ok_or_else(|| bad("no target_cpu"))?;
                if counted {
                    self.wakeup(pid, target);
                }
            }
        }
        Ok(())
    }

    /// An event on `cpu` after one on another CPU is a handover.
    fn handover(&mut self, cpu: Option<u32>, event: &str, t: Option<u64>) {
        let (Some(cpu), Some(t)) = (cpu, t) else {
            return;
        };
        if self.last_cpu.is_some_and(|c| c != cpu) && self.counted(t) {
            self.r.handovers += 1;
            let key = capped(&self.r.handover_after, &self.last_event, MAX_STATES);
            *self.r.handover_after.entry(key).or_default() += 1;
        }
        self.last_cpu = Some(cpu);
        self.last_event.clear();
        self.last_event.push_str(event);
    }

    fn wakeup(&mut self, pid: u32, target: u32) {
        let r = &mut self.r;
        r.wakeups += 1;
        if let Some(w) = self.waking.get(&pid) {
            r.wakeups_with_waker += 1;
            r.wakeups_local += u64::from(w.cpu == target);
        }
        if let Some(&last) = self.ran_on.get(&pid) {
            r.wakeups_with_last_cpu += 1;
            r.wakeups_moved += u64::from(last != target);
        }
    }

    /// Idle on `cpu` from `from` to `to`, the part inside the window.
    fn idle(&mut self, cpu: u32, from: u64, to: u64, at: (usize, usize)) -> Result<(), ParseError> {
        let (lo, hi) = self.window.unwrap_or((0, u64::MAX));
        let ns = to.min(hi).saturating_sub(from.max(lo));
        let c = self.r.cpus.entry(cpu).or_default();
        add(&mut c.idle_ns, ns, at, "idle time")
    }

    fn switch_out(
        &mut self,
        cpu: u32,
        prev: u32,
        state: &str,
        t: u64,
        counted: bool,
        at: (usize, usize),
    ) -> Result<(), ParseError> {
        if counted {
            self.r.cpus.entry(cpu).or_default().switches += 1;
        }
        if prev == 0 {
            self.r.idle_exits += u64::from(counted);
            if let Some(since) = self.idle_since.remove(&cpu) {
                self.idle(cpu, since, t, at)?;
            }
            return Ok(());
        }
        let ran = self.on_cpu.remove(&prev).map(|s| t.saturating_sub(s));
        if counted {
            let key = capped(&self.r.switched_out, state, MAX_STATES);
            let s = self.r.switched_out.entry(key).or_default();
            s.count += 1;
            if let Some(ran) = ran {
                s.runs.add(ran);
            }
        }
        Ok(())
    }

    fn switch_in(&mut self, cpu: u32, next: u32, t: u64, counted: bool) {
        if next == 0 {
            self.idle_since.insert(cpu, t);
            self.r.cpus.entry(cpu).or_default();
            return;
        }
        self.on_cpu.insert(next, t);
        self.ran_on.insert(next, cpu);
        if let Some(w) = self.waking.remove(&next) {
            if counted {
                let group = capped(&self.r.latency, &w.group, MAX_GROUPS);
                self.r
                    .latency
                    .entry(group)
                    .or_default()
                    .add(t.saturating_sub(w.at));
            }
        }
    }

    fn finish(mut self) -> Regime {
        let (start, end) = match self.window {
            Some(w) => w,
            None => (self.first.unwrap_or(0), self.last),
        };
        self.r.span_ns = end.saturating_sub(start);
        for (cpu, since) in std::mem::take(&mut self.idle_since) {
            let ns = end.saturating_sub(since.max(start));
            let c = self.r.cpus.entry(cpu).or_default();
            c.idle_ns = c.idle_ns.saturating_add(ns);
        }
        let span = self.r.span_ns;
        for c in self.r.cpus.values_mut() {
            c.idle_ns = c.idle_ns.min(span);
        }
        self.r
    }
}

/// The regime of ftrace text read from a stream, line by line (memory:
/// one line, the per-pid state and at most [`MAX_STATES`] and
/// [`MAX_GROUPS`] sparse histograms), bounded as
/// [`crate::ftrace::import_reader`] is.
pub fn regime_reader(r: impl BufRead) -> Result<Regime, ReadError> {
    let mut rd = Reader::default();
    read_lines(r, |n, line| {
        rd.line(n, line)?;
        Ok(rd.sched)
    })?;
    Ok(rd.finish())
}

fn per_s(count: u64, span_ns: u64) -> f64 {
    if span_ns == 0 {
        return 0.0;
    }
    count as f64 * 1e9 / span_ns as f64
}

/// `1234567.8` -> `1,234,568`.
fn thousands(v: f64) -> String {
    let s = (v.round() as u64).to_string();
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
    v.map_or("-".into(), |ns| thousands(ns as f64 / 1e3))
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}", part as f64 * 100.0 / whole as f64)
}

/// A table row: a label, one cell per regime and, for two, a ratio.
#[derive(Debug)]
struct Row {
    label: String,
    cells: Vec<String>,
}

/// Builds the rows of [`table`] for one or two regimes.
struct Rows<'a> {
    runs: &'a [(&'a str, &'a Regime)],
    rows: Vec<Row>,
}

impl Rows<'_> {
    fn push(&mut self, label: &str, cells: Vec<String>, ratio: Option<f64>) {
        let mut cells: Vec<String> = cells.iter().map(|c| shown(c).to_string()).collect();
        if let Some(r) = ratio.filter(|r| r.is_finite()) {
            cells.push(format!("{r:.2}"));
        }
        self.rows.push(Row {
            label: shown(label).to_string(),
            cells,
        });
    }

    /// Cells of `f` for each regime.
    fn each(&self, f: impl Fn(&Regime) -> String) -> Vec<String> {
        self.runs.iter().map(|(_, r)| f(r)).collect()
    }

    /// A count a second for each regime, and B/A for two.
    fn rate(&mut self, label: &str, count: impl Fn(&Regime) -> u64) {
        let v: Vec<f64> = self
            .runs
            .iter()
            .map(|(_, r)| per_s(count(r), r.span_ns))
            .collect();
        let ratio = match v[..] {
            [a, b] if a > 0.0 => Some(b / a),
            _ => None,
        };
        self.push(label, v.into_iter().map(thousands).collect(), ratio);
    }

    /// The union of the regimes' keys of `map`, sorted.
    fn keys<V>(&self, map: impl Fn(&Regime) -> &BTreeMap<String, V>) -> Vec<String> {
        let mut k: Vec<String> = self
            .runs
            .iter()
            .flat_map(|(_, r)| map(r).keys().cloned())
            .collect();
        k.sort();
        k.dedup();
        k
    }

    fn switches(&mut self) {
        self.rate("switches /s", |g| g.cpus.values().map(|c| c.switches).sum());
        for st in self.keys(|g| &g.switched_out) {
            self.rate(&format!("  from a task, prev_state {st} /s"), |g| {
                g.switched_out.get(&st).map_or(0, |s| s.count)
            });
            let runs = self.each(|g| {
                let d = g.switched_out.get(&st).map(|s| &s.runs);
                let q = |q| us(d.and_then(|d| d.quantile(q)));
                format!("{} / {}", q(0.5), q(0.9))
            });
            self.push("    its run before, p50 / p90 us", runs, None);
        }
        self.rate("  from idle /s", |g| g.idle_exits);
    }

    fn wakeups(&mut self) {
        self.rate("wakeups /s", |g| g.wakeups);
        let local = self.each(|g| pct(g.wakeups_local, g.wakeups_with_waker));
        self.push("  on the waker's CPU %", local, None);
        let moved = self.each(|g| pct(g.wakeups_moved, g.wakeups_with_last_cpu));
        self.push("  not where it last ran %", moved, None);
        for grp in self.keys(|g| &g.latency) {
            let cells = self.each(|g| {
                g.latency.get(&grp).map_or("-".into(), |d| {
                    let q = |q| us(d.quantile(q));
                    format!("{} / {} / {}", q(0.5), q(0.99), q(1.0))
                })
            });
            self.push(&format!("wakeup to run {grp}, p50/p99/max us"), cells, None);
        }
    }

    /// Shown when some trace has handovers (more than one CPU).
    fn handovers(&mut self) {
        if self.runs.iter().all(|(_, g)| g.handovers == 0) {
            return;
        }
        self.rate("CPU handovers /s (QEMU: turns)", |g| g.handovers);
        for ev in self.keys(|g| &g.handover_after) {
            self.rate(&format!("  after {ev} /s"), |g| {
                g.handover_after.get(&ev).copied().unwrap_or(0)
            });
        }
    }

    fn idle_and_losses(&mut self) {
        let idle = self.each(|g| {
            let by_cpu = g
                .cpus
                .iter()
                .map(|(c, r)| format!("{c}:{}", pct(r.idle_ns, g.span_ns)));
            by_cpu.collect::<Vec<_>>().join(" ")
        });
        self.push("idle % by CPU", idle, None);
        if self
            .runs
            .iter()
            .any(|(_, g)| g.entries.is_some_and(|(a, b)| a < b))
        {
            let lost = self.each(|g| {
                g.entries
                    .map_or("-".into(), |(a, b)| thousands(b.saturating_sub(a) as f64))
            });
            self.push("events lost (ring buffer overran)", lost, None);
        }
    }
}

/// The rows as columns as wide as their widest cell.
fn layout(rows: &[Row]) -> String {
    let width = |s: &str| s.chars().count();
    let label_w = rows.iter().map(|r| width(&r.label)).max().unwrap_or(0);
    let cols = rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.cells.get(i))
                .map(|c| width(c))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = format!("{:<label_w$}", r.label);
        for (c, w) in r.cells.iter().zip(&widths) {
            line.push_str(&format!("  {c:>w$}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The regimes side by side (one or two, each with its name); with two,
/// the last column is the second's rate over the first's (`B/A`).
pub fn table(runs: &[(&str, &Regime)]) -> String {
    let mut t = Rows {
        runs,
        rows: Vec::new(),
    };
    let mut names: Vec<String> = runs.iter().map(|(n, _)| n.to_string()).collect();
    if runs.len() == 2 {
        names.push("B/A".into());
    }
    t.push("", names, None);
    let spans = t.each(|g| format!("{:.3}", g.span_ns as f64 / 1e9));
    t.push("span s", spans, None);
    t.switches();
    t.wakeups();
    t.handovers();
    t.idle_and_losses();
    layout(&t.rows)
}

#[cfg(test)]
mod tests;
