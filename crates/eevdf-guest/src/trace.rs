//! A tracefs capture of the window (`trace=1`): sched_switch,
//! sched_waking and sched_wakeup on the `mono` clock, so timestamps are
//! the `CLOCK_MONOTONIC` of the report; a marker before the window gives
//! its absolute start and end.

use std::fs::{self, File};
use std::io::Write;

use crate::proto::Window;

const DIR: &str = "/sys/kernel/tracing";
const EVENTS: [&str; 3] = ["sched_switch", "sched_waking", "sched_wakeup"];

/// An armed capture (tracing configured, not yet on).
#[derive(Debug)]
pub struct Capture;

fn write(file: &str, value: &str) -> Result<(), String> {
    let path = format!("{DIR}/{file}");
    fs::write(&path, value).map_err(|e| format!("trace: writing {value:?} to {path}: {e}"))
}

impl Capture {
    /// Configures tracefs with `buffer_kb` per CPU and clears the buffer.
    pub fn arm(buffer_kb: u32) -> Result<Capture, String> {
        write("tracing_on", "0")?;
        write("trace_clock", "mono")?;
        write("buffer_size_kb", &buffer_kb.max(64).to_string())?;
        for e in EVENTS {
            write(&format!("events/sched/{e}/enable"), "1")?;
        }
        write("trace", "")?;
        Ok(Capture)
    }

    /// Turns tracing on just before the window and marks it.
    pub fn start(&self, w: Window) -> Result<(), String> {
        write("tracing_on", "1")?;
        write(
            "trace_marker",
            &format!("eevdf-guest window t0={} t1={}", w.t0, w.t1),
        )
    }

    pub fn stop(&self) -> Result<(), String> {
        write("tracing_on", "0")
    }

    /// Copies the trace text to `out`.
    pub fn dump(&self, out: &mut File) -> Result<u64, String> {
        let path = format!("{DIR}/trace");
        let mut f = File::open(&path).map_err(|e| format!("trace: {path}: {e}"))?;
        let n = std::io::copy(&mut f, out).map_err(|e| format!("trace: copying {path}: {e}"))?;
        out.flush().map_err(|e| format!("trace: {e}"))?;
        Ok(n)
    }
}
