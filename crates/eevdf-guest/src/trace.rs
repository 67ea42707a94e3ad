//! A tracefs capture of the window (`trace=1`): sched_switch,
//! sched_waking and sched_wakeup on the `mono` clock, so timestamps are
//! the `CLOCK_MONOTONIC` of the report; a marker before the window gives
//! its absolute start and end. Probes (`probe=` lines: fprobe or kprobe
//! definitions for `dynamic_events`) show the kernel's own values, e.g.
//! an entity's `vlag` at `check_preempt_wakeup_fair`, through BTF.

use std::fs::{self, File};
use std::io::Write;

use crate::proto::Window;

const DIR: &str = "/sys/kernel/tracing";
const EVENTS: [&str; 3] = ["sched_switch", "sched_waking", "sched_wakeup"];

/// The tracefs event directory of a probe definition: `f:NAME ...` is
/// `fprobes/NAME`, `p:` and `r:` are `kprobes/NAME`, `X:GROUP/NAME` is
/// `GROUP/NAME`.
pub fn probe_event(def: &str) -> Option<String> {
    let (kind, rest) = def.split_once(':')?;
    let name = rest.split_whitespace().next()?;
    if name.contains('/') {
        return Some(name.to_string());
    }
    let group = match kind.trim() {
        "f" => "fprobes",
        "p" | "r" => "kprobes",
        _ => return None,
    };
    Some(format!("{group}/{name}"))
}

fn add_probe(def: &str) -> Result<(), String> {
    let event = probe_event(def).ok_or_else(|| {
        format!("trace: probe {def:?} is not `f:NAME ...`, `p:NAME ...` or `r:NAME ...`")
    })?;
    // Appending: a plain write would clear the other definitions.
    let path = format!("{DIR}/dynamic_events");
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(def.as_bytes()))
        .map_err(|e| {
            // tracefs explains a refused definition in error_log.
            let log = fs::read_to_string(format!("{DIR}/error_log")).unwrap_or_default();
            format!(
                "trace: adding probe {def:?} to {path}: {e}\n{}",
                log.trim_end()
            )
        })?;
    write(&format!("events/{event}/enable"), "1")
}

/// An armed capture (tracing configured, not yet on).
#[derive(Debug)]
pub struct Capture;

fn write(file: &str, value: &str) -> Result<(), String> {
    let path = format!("{DIR}/{file}");
    fs::write(&path, value).map_err(|e| format!("trace: writing {value:?} to {path}: {e}"))
}

impl Capture {
    /// Configures tracefs with `buffer_kb` per CPU, adds and enables the
    /// probes, and clears the buffer.
    pub fn arm(buffer_kb: u32, probes: &[String]) -> Result<Capture, String> {
        write("tracing_on", "0")?;
        write("trace_clock", "mono")?;
        write("buffer_size_kb", &buffer_kb.max(64).to_string())?;
        for e in EVENTS {
            write(&format!("events/sched/{e}/enable"), "1")?;
        }
        for def in probes {
            add_probe(def)?;
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

#[cfg(test)]
mod tests {
    use super::probe_event;

    #[test]
    fn probe_event_directories() {
        let f = "f:wake check_preempt_wakeup_fair p->se.vlag";
        assert_eq!(probe_event(f).as_deref(), Some("fprobes/wake"));
        assert_eq!(probe_event("p:x f").as_deref(), Some("kprobes/x"));
        assert_eq!(probe_event("f:g/y f").as_deref(), Some("g/y"));
        assert_eq!(probe_event("bogus"), None);
        assert_eq!(probe_event("e:z f"), None);
    }
}
