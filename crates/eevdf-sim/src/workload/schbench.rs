//! schbench: a message thread wakes its workers, each worker serves one
//! request and sleeps, and the message thread thinks before the next
//! round. A request's latency runs from the wakeup that asks for it to
//! the end of the worker's burst.

use crate::config::Nanos;
use crate::workload::Tid;

/// Cost per message a schbench message thread spends waking a worker.
pub const SCHBENCH_WAKE_CPU_NS: Nanos = 1_000;

/// A message thread and the workers it wakes every round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub workers: Vec<Tid>,
    /// Sleep between rounds.
    pub think: Nanos,
}

impl Message {
    /// The fan-out burst: one wakeup's cost per worker.
    pub fn fan_out(&self) -> Nanos {
        SCHBENCH_WAKE_CPU_NS.saturating_mul(self.workers.len() as u64)
    }

    /// The fan-out ended at `now`: when the next round starts.
    pub fn next_round(&self, now: Nanos) -> Nanos {
        now.saturating_add(self.think)
    }
}

/// A worker: one request of `request` work per wakeup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worker {
    pub request: Nanos,
    /// When the current request was asked for.
    pub asked: Option<Nanos>,
}

impl Worker {
    /// A message thread asks for a request at `now`.
    pub fn ask(&mut self, now: Nanos) {
        self.asked = Some(now);
    }

    /// The request is served: when it was asked for (`None` for the
    /// first burst, which nobody asked for).
    pub fn serve(&mut self) -> Option<Nanos> {
        self.asked.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_costs_a_wakeup_per_worker_and_thinks_from_its_end() {
        let m = Message {
            workers: vec![1, 2, 3],
            think: 10_000,
        };
        assert_eq!(m.fan_out(), 3 * SCHBENCH_WAKE_CPU_NS);
        assert_eq!(m.next_round(5_000), 15_000);
    }

    #[test]
    fn a_worker_serves_each_request_once() {
        let mut w = Worker {
            request: 100,
            asked: None,
        };
        assert_eq!(w.serve(), None);
        w.ask(42);
        assert_eq!(w.serve(), Some(42));
        assert_eq!(w.serve(), None, "served requests are not counted twice");
    }
}
