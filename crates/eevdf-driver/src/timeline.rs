//! The page's rolling timeline: which thread ran where over the last
//! [`WINDOW_NS`] of a live run, and its wakeup and preemption marks, from
//! the simulator's trace events.

use eevdf_sim::trace::{PrevState, TraceEvent};
use eevdf_sim::Nanos;
use serde::{Deserialize, Serialize};

/// The timeline shows this much simulated time before "now" at most.
pub const WINDOW_NS: Nanos = 40_000_000;
/// Bounds on what a snapshot carries.
const MAX_SEGMENTS: usize = 20_000;
const MAX_MARKS: usize = 20_000;

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
/// A scheduler timeline kept for the last [`WINDOW_NS`].
#[derive(Clone, Debug, Default)]
pub(crate) struct Rolling {
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
    pub(crate) fn begin(&mut self, t0: Nanos, curr: &[Option<u32>]) {
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

    pub(crate) fn event(&mut self, e: &TraceEvent, directive: &[usize]) {
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
            TraceEvent::Wakeup { ts, cpu, task, .. } => self.marks.push(Mark {
                cpu,
                ts,
                kind: MarkKind::Wakeup,
                task: d(task),
            }),
            TraceEvent::Waking { .. } | TraceEvent::Migrate { .. } => {}
        }
    }

    /// Ends a traced stretch at `t1` and forgets what fell out of the window.
    pub(crate) fn end(&mut self, t1: Nanos) {
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

    pub(crate) fn snapshot(&self, now: Nanos) -> Timeline {
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
