//! The engine's decisions as ftrace-style lines (`eevdf run
//! --decisions`): every `wakeup_preempt` with both sides' lag,
//! eligibility and deadline against V, and every pick with the picked
//! task's, the queue's length and the reason. Values are the engine's
//! virtual nanoseconds, as kernel probes on `wakeup_preempt_fair` and
//! `pick_eevdf%return` read them, so the two can be held side by side.

use std::fmt::Write as _;

use eevdf_sim::trace::TraceTask;
use eevdf_sim::{observer_any, LagAt, Observer, SimEvent};

/// Lines kept at most; beyond, the log says it was cut.
pub const MAX_LINES: usize = 4_000_000;

/// An observer that writes decision lines as the run goes.
#[derive(Clone, Debug)]
pub struct DecisionLog {
    tasks: Vec<TraceTask>,
    lines: Vec<String>,
    truncated: bool,
}

impl DecisionLog {
    pub fn new(tasks: Vec<TraceTask>) -> DecisionLog {
        DecisionLog {
            tasks,
            lines: Vec::new(),
            truncated: false,
        }
    }

    /// The log: a header, then one line per decision.
    pub fn text(&self) -> String {
        let mut out = String::from(
            "# tracer: nop\n# eevdf decisions: lag = V - v, dl_v = deadline - V (virtual ns)\n#\n",
        );
        if self.truncated {
            out.push_str("# (cut: line limit reached)\n");
        }
        for l in &self.lines {
            out.push_str(l);
            out.push('\n');
        }
        out
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    fn who(&self, t: Option<usize>, cpu: u32) -> (String, u32) {
        match t.and_then(|i| self.tasks.get(i)) {
            Some(k) => (k.comm.clone(), k.pid),
            None => (format!("swapper/{cpu}"), 0),
        }
    }

    fn line(&self, ts: u64, cpu: u32, on: Option<usize>, body: &str) -> String {
        let (comm, pid) = self.who(on, cpu);
        let ctx = if on.is_some() {
            format!("{comm}-{pid}")
        } else {
            "<idle>-0".to_string()
        };
        format!(
            "{ctx:>16} [{cpu:03}] d..2. {:5}.{:06}: {body}",
            ts / 1_000_000_000,
            (ts % 1_000_000_000) / 1000
        )
    }
}

/// A variant's name without its fields (`EarliestDeadline { .. }` ->
/// `EarliestDeadline`).
fn token(debug: String) -> String {
    debug
        .split([' ', '{', '('])
        .next()
        .unwrap_or_default()
        .to_string()
}

fn lag_fields(out: &mut String, prefix: &str, l: &LagAt) {
    let _ = write!(
        out,
        " {prefix}lag={} {prefix}eligible={} {prefix}dl_v={}",
        l.lag,
        u8::from(l.eligible),
        l.deadline_to_v
    );
}

impl Observer for DecisionLog {
    fn event(&mut self, e: &SimEvent) {
        let line = match *e {
            SimEvent::WakeupPreempt {
                ts,
                cpu,
                task,
                curr,
                decision,
                wakee,
                curr_lag,
                nr_queued,
            } => {
                let (comm, pid) = self.who(Some(task), cpu);
                let mut body = format!("eevdf_wakeup_preempt: comm={comm} pid={pid}");
                lag_fields(&mut body, "", &wakee);
                let (cc, cp) = self.who(curr, cpu);
                let _ = write!(body, " curr_comm={cc} curr_pid={cp}");
                if let Some(l) = curr_lag {
                    lag_fields(&mut body, "curr_", &l);
                }
                let _ = write!(
                    body,
                    " nr_queued={nr_queued} preempt={} action={} reason={}",
                    u8::from(decision.preempt),
                    token(format!("{:?}", decision.action)),
                    token(format!("{:?}", decision.reason))
                );
                self.line(ts, cpu, curr, &body)
            }
            SimEvent::Pick {
                ts,
                cpu,
                next,
                reason,
                picked,
                nr_queued,
            } => {
                let (nc, np) = self.who(next, cpu);
                let why = reason.map_or("Idle".to_string(), |r| token(format!("{r:?}")));
                let mut body = format!("eevdf_pick: next_comm={nc} next_pid={np}");
                if let Some(l) = picked {
                    lag_fields(&mut body, "", &l);
                }
                let _ = write!(body, " nr_queued={nr_queued} reason={why}");
                self.line(ts, cpu, next, &body)
            }
            _ => return,
        };
        if self.lines.len() >= MAX_LINES {
            self.truncated = true;
            return;
        }
        self.lines.push(line);
    }
    observer_any!();
}
