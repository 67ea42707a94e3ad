//! Teaching's wakeup observers: each thread's slowest wakeup, and the
//! first wakeup of a task at least this slow. They only watch the run's
//! latency samples; attaching them changes nothing in it.

use eevdf_sim::{observer_any, Nanos, Observer, SimEvent};

/// One wakeup as teaching mode jumps to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowWakeup {
    /// From the wakeup being asked for to the task running, switch and
    /// migration costs included.
    pub latency: Nanos,
    /// When the wakeup was asked for.
    pub woke: Nanos,
    /// When the CPU picked the task (the switch; it runs after its cost).
    pub picked: Nanos,
    /// The CPU that picked it.
    pub cpu: u32,
    /// The thread (creation order).
    pub tid: usize,
}

impl SlowWakeup {
    fn of(e: &SimEvent) -> Option<SlowWakeup> {
        match *e {
            SimEvent::Latency {
                ts,
                cpu,
                task,
                woke,
                latency,
            } => Some(SlowWakeup {
                latency,
                woke,
                picked: ts,
                cpu,
                tid: task,
            }),
            _ => None,
        }
    }
}

/// Per thread (creation order), its slowest wakeup; the first of equal
/// ones, so a replay lands on the same one.
#[derive(Clone, Debug, Default)]
pub struct WorstWakeups(pub Vec<Option<SlowWakeup>>);

impl Observer for WorstWakeups {
    fn event(&mut self, e: &SimEvent) {
        let Some(w) = SlowWakeup::of(e) else { return };
        if self.0.len() <= w.tid {
            self.0.resize(w.tid + 1, None);
        }
        let slot = &mut self.0[w.tid];
        if slot.is_none_or(|old| w.latency > old.latency) {
            *slot = Some(w);
        }
    }
    observer_any!();
}

/// The first wakeup of a thread of one `task` directive that took at
/// least `threshold`.
#[derive(Clone, Debug)]
pub struct LatencyWatch {
    /// Each thread's directive (`Sim::thread_directives`).
    pub directives: Vec<usize>,
    pub task: usize,
    pub threshold: Nanos,
    pub hit: Option<SlowWakeup>,
}

impl Observer for LatencyWatch {
    fn event(&mut self, e: &SimEvent) {
        let Some(w) = SlowWakeup::of(e) else { return };
        if self.hit.is_none()
            && self.directives.get(w.tid) == Some(&self.task)
            && w.latency >= self.threshold
        {
            self.hit = Some(w);
        }
    }
    observer_any!();
}
