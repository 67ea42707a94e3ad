//! Throughput figures of hackbench and schbench directives, kept from
//! the simulator's workload events (`SimEvent::Messages`,
//! `HackbenchDone`, `Request`), which observers receive too.

use crate::config::Nanos;
use crate::metrics::LatencyHist;
use crate::observe::SimEvent;

/// Per task directive: hackbench messages and completion, schbench
/// requests and their latencies.
#[derive(Clone, Debug)]
pub struct WorkloadStats {
    /// Requests asked for before it count, but stay out of the latency
    /// histogram (the scenario's `warmup`).
    warmup: Nanos,
    pub messages: Vec<u64>,
    pub done: Vec<Option<Nanos>>,
    pub requests: Vec<u64>,
    pub request_hist: Vec<LatencyHist>,
}

impl WorkloadStats {
    pub fn new(directives: usize, warmup: Nanos) -> WorkloadStats {
        WorkloadStats {
            warmup,
            messages: vec![0; directives],
            done: vec![None; directives],
            requests: vec![0; directives],
            request_hist: vec![LatencyHist::new(); directives],
        }
    }

    /// Takes one workload event; the simulator calls it directly, inlined
    /// on its hot path (it sees every hackbench burst), before any
    /// attached observer.
    #[inline(always)]
    pub fn take(&mut self, e: &SimEvent) {
        match *e {
            SimEvent::Messages {
                directive, count, ..
            } => self.messages[directive] += count,
            SimEvent::HackbenchDone { ts, directive } => {
                debug_assert!(self.done[directive].is_none(), "a directive ends once");
                self.done[directive] = Some(ts);
            }
            SimEvent::Request {
                ts,
                directive,
                asked,
            } => {
                self.requests[directive] += 1;
                if asked >= self.warmup {
                    self.request_hist[directive].record(ts - asked);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_asked_before_the_warmup_count_but_are_not_timed() {
        let mut s = WorkloadStats::new(2, 1_000);
        s.take(&SimEvent::Request {
            ts: 1_500,
            directive: 1,
            asked: 900,
        });
        s.take(&SimEvent::Request {
            ts: 2_500,
            directive: 1,
            asked: 2_000,
        });
        assert_eq!(s.requests, vec![0, 2]);
        assert_eq!(s.request_hist[1].stats().samples, 1);
        assert_eq!(s.request_hist[0].stats().samples, 0);
    }

    #[test]
    fn messages_add_up_and_a_group_ends_at_its_last_message() {
        let mut s = WorkloadStats::new(1, 0);
        for ts in [10, 20] {
            s.take(&SimEvent::Messages {
                ts,
                directive: 0,
                count: 40,
            });
        }
        s.take(&SimEvent::HackbenchDone {
            ts: 20,
            directive: 0,
        });
        assert_eq!((s.messages[0], s.done[0]), (80, Some(20)));
    }
}
