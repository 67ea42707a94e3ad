//! schbench: a message thread wakes its workers, each worker serves one
//! request and sleeps, and the message thread thinks before the next
//! round. A request's latency runs from the wakeup that asks for it to
//! the end of the worker's burst.

use crate::config::Nanos;
use crate::workload::Tid;

/// The message thread's own loop work per worker (user space: the
/// mailbox check before the wake call, if any).
pub const SCHBENCH_WAKE_CPU_NS: Nanos = 1_000;

/// A message thread and the workers it wakes every round.
///
/// A round asks the workers one by one, each wake call its own system
/// call (`futex_wake`), so a reschedule that a woken worker asks for is
/// honoured when that call returns, before the next worker is asked;
/// the think time starts when the last call has returned (the guest's
/// `Message::run`, and schbench's message thread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub workers: Vec<Tid>,
    /// Sleep between rounds.
    pub think: Nanos,
    /// The worker this round asks next.
    pub next: usize,
}

impl Message {
    /// The burst before each worker's mailbox check and wake call.
    pub fn step(&self) -> Nanos {
        SCHBENCH_WAKE_CPU_NS
    }

    /// The worker to ask at the end of this step, and whether the round
    /// goes on after it (`false`: the round's last call; the next one
    /// starts from the first worker).
    pub fn ask_next(&mut self) -> (Option<Tid>, bool) {
        let w = self.workers.get(self.next).copied();
        self.next += 1;
        let more = self.next < self.workers.len();
        if !more {
            self.next = 0;
        }
        (w, more)
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
    fn a_round_asks_each_worker_in_turn() {
        let mut m = Message {
            workers: vec![1, 2, 3],
            think: 10_000,
            next: 0,
        };
        assert_eq!(m.step(), SCHBENCH_WAKE_CPU_NS);
        assert_eq!(m.ask_next(), (Some(1), true));
        assert_eq!(m.ask_next(), (Some(2), true));
        assert_eq!(m.ask_next(), (Some(3), false), "the round's last call");
        assert_eq!(m.ask_next(), (Some(1), true), "the next round starts over");
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
