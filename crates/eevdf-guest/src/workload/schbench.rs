//! schbench as the simulator models it: each message thread, in rounds,
//! wakes every one of its workers that is idle (stamping the wake call),
//! then thinks `sleep_ns` (a timed sleep; its lateness is the message
//! thread's latency) without waiting for them. A woken worker records
//! its wakeup latency (first running time - stamp), does `request_ns` of
//! CPU work and records the request latency (completion - stamp).
//!
//! The stamp is the worker's futex-backed mailbox: 0 = idle, otherwise
//! the time of the wake call; `thread::park`/`unpark` do the sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use eevdf_sim::{TaskSpec, Workload};

use super::{wait_start_on_time, Ctx, Work};
use crate::clock::{self, Nanos};
use crate::plan::{Planned, Role};

/// Every worker's stamp, indexed like the directive's threads.
#[derive(Debug)]
pub(super) struct Board {
    stamps: Vec<AtomicU64>,
}

#[derive(Debug)]
pub(super) struct Message {
    workers: Vec<usize>,
    think_ns: Nanos,
    board: Arc<Board>,
}

#[derive(Debug)]
pub(super) struct Worker {
    request_ns: Nanos,
    board: Arc<Board>,
}

pub(super) fn works(spec: &TaskSpec, threads: &[Planned]) -> Vec<Work> {
    let (request_ns, think_ns) = match spec.workload {
        Workload::Schbench {
            request_ns,
            sleep_ns,
            ..
        } => (request_ns.max(1), sleep_ns),
        _ => (1, 0),
    };
    let board = Arc::new(Board {
        stamps: threads.iter().map(|_| AtomicU64::new(0)).collect(),
    });
    threads
        .iter()
        .enumerate()
        .map(|(i, t)| match t.role {
            Role::Message { workers } => Work::Message(Message {
                workers: (i + 1..=i + workers as usize).collect(),
                think_ns,
                board: Arc::clone(&board),
            }),
            _ => Work::Worker(Worker {
                request_ns,
                board: Arc::clone(&board),
            }),
        })
        .collect()
}

impl Message {
    pub(super) fn run(self, ctx: &mut Ctx) -> Result<Option<Nanos>, String> {
        if wait_start_on_time(ctx)?.is_none() {
            return Ok(None);
        }
        let t1 = ctx.window.t1;
        loop {
            for &w in &self.workers {
                let Some(stamp) = self.board.stamps.get(w) else {
                    continue;
                };
                let now = clock::now().max(1);
                if stamp
                    .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    if let Some(t) = ctx.shared.threads.get(w).and_then(|t| t.get()) {
                        t.unpark();
                    }
                }
            }
            let next = clock::now().saturating_add(self.think_ns);
            if next > t1 {
                return Ok(None);
            }
            clock::sleep_until(next).map_err(|e| format!("clock_nanosleep: {e}"))?;
            let woke = clock::now();
            if woke > t1 {
                return Ok(None);
            }
            ctx.sample(next, woke);
        }
    }
}

impl Worker {
    pub(super) fn run(self, ctx: &mut Ctx) -> Result<Option<Nanos>, String> {
        let t1 = ctx.window.t1;
        let Some(stamp) = self.board.stamps.get(ctx.me) else {
            return Ok(None);
        };
        // Its first wakeup is its first request.
        ctx.record().lock().slept_to_start = true;
        loop {
            std::thread::park();
            if ctx.shared.stop.load(Ordering::Acquire) {
                return Ok(None);
            }
            let asked = stamp.load(Ordering::Acquire);
            if asked == 0 {
                continue; // a spurious wakeup
            }
            let woke = clock::now();
            if woke > t1 {
                return Ok(None);
            }
            ctx.sample(asked, woke);
            ctx.burner.burn(self.request_ns);
            let done = clock::now();
            if done <= t1 {
                if asked >= ctx.measure_from {
                    ctx.record()
                        .lock()
                        .requests
                        .record(done.saturating_sub(asked));
                }
                ctx.record().count.fetch_add(1, Ordering::AcqRel);
            }
            stamp.store(0, Ordering::Release);
        }
    }
}
