//! One thread's measurements, written by the thread during the window
//! and read by the directive's main thread after it.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use eevdf_sim::LatencyHist;

use crate::clock::Nanos;
use crate::measure::{self, ThreadStats};

/// One thread's measurements.
#[derive(Debug, Default)]
pub(super) struct Record {
    pub(super) tid: AtomicI32,
    /// Receiver: messages read in the window; worker: requests done.
    pub(super) count: AtomicU64,
    state: Mutex<RecState>,
}

#[derive(Debug)]
pub(super) struct RecState {
    pub(super) start: Option<ThreadStats>,
    pub(super) end: Option<ThreadStats>,
    pub(super) hist: LatencyHist,
    /// schbench workers: request latencies.
    pub(super) requests: LatencyHist,
    pub(super) finished: Option<Nanos>,
    pub(super) setup_failures: Vec<String>,
    pub(super) failure: Option<String>,
    /// Counters could not be read.
    pub(super) stats_error: Option<String>,
    /// Not ready when the window opened.
    pub(super) late: bool,
    /// Slept until its start, or was first woken by a request.
    pub(super) slept_to_start: bool,
    /// Slept once more before the window to start without lag
    /// (`threads::settle`).
    pub(super) settled: bool,
    /// CPU time when its work stopped (an overloaded CPU runs threads
    /// for a while after the window until each notices the end).
    pub(super) stopped_cpu: Option<Nanos>,
}

// Not derived: `LatencyHist::default()` keeps 0 significant bits (every
// sample becomes 0); `LatencyHist::new()` is exact.
impl Default for RecState {
    fn default() -> Self {
        RecState {
            start: None,
            end: None,
            hist: LatencyHist::new(),
            requests: LatencyHist::new(),
            finished: None,
            setup_failures: Vec::new(),
            failure: None,
            stats_error: None,
            late: false,
            slept_to_start: false,
            settled: false,
            stopped_cpu: None,
        }
    }
}

impl Record {
    pub(super) fn lock(&self) -> MutexGuard<'_, RecState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads thread `tid`'s end counters.
    pub(super) fn close(&self, st: &mut RecState) {
        if st.end.is_some() || st.start.is_none() {
            return;
        }
        match measure::task_stats(self.tid.load(Ordering::Acquire)) {
            Ok(mut s) => {
                s.cpu_ns = st.stopped_cpu.unwrap_or(s.cpu_ns);
                st.end = Some(s);
            }
            Err(e) => {
                st.stats_error.get_or_insert(e);
                st.end = st.start;
            }
        }
    }
}
