//! How the processes of a run agree on the measured window.
//!
//! A parent spawns a child (this binary with a subcommand); the child
//! sets up its threads and prints `ready`, the parent answers with the
//! window (`window T0 T1 TC`, absolute `CLOCK_MONOTONIC` ns) on the
//! child's stdin once every child is ready, and the child reads its
//! threads' counters at TC (after PID 1's own sample at T1) and prints
//! its part of the report between [`BEGIN_MARK`] and [`END_MARK`]. A
//! child that fails before it is ready prints the report (with `error`)
//! instead of `ready`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use eevdf_scenario::guest::{GuestReport, BEGIN_MARK, END_MARK};

use crate::clock::{self, Nanos};

/// The measured window, absolute `CLOCK_MONOTONIC` ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub t0: Nanos,
    pub t1: Nanos,
    /// When child processes read their threads' counters (≥ `t1`).
    pub collect: Nanos,
}

impl Window {
    /// A window of `duration` opening `lead` from now.
    pub fn after(lead: Nanos, duration: Nanos) -> Result<Window, String> {
        let t0 = clock::now().checked_add(lead);
        let t1 = t0.and_then(|t| t.checked_add(duration));
        match (t0, t1) {
            (Some(t0), Some(t1)) => Ok(Window {
                t0,
                t1,
                collect: t1,
            }),
            _ => Err("the window's end overflows the clock".into()),
        }
    }

    /// Delays the window (by less than `tick`) so the kernel's first tick
    /// after `t0` comes `phase` into it, where the simulation has it: the
    /// kernel's ticks sit at multiples of `TICK_NSEC` of this clock
    /// (`tick_init_jiffy_update`, all CPUs together without `skew_tick`).
    pub fn align_first_tick(&mut self, tick: Nanos, phase: Nanos) {
        if tick == 0 {
            return;
        }
        let at = (self.t0 % tick + phase % tick) % tick;
        let shift = (tick - at) % tick;
        self.t0 = self.t0.saturating_add(shift);
        self.t1 = self.t1.saturating_add(shift);
        self.collect = self.collect.saturating_add(shift);
        debug_assert!(shift == 0 || (self.t0 + phase) % tick == 0);
    }

    pub fn len(&self) -> Nanos {
        self.t1.saturating_sub(self.t0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn line(&self) -> String {
        format!("window {} {} {}\n", self.t0, self.t1, self.collect)
    }

    fn parse(line: &str) -> Option<Window> {
        let mut f = line.split_whitespace();
        (f.next() == Some("window")).then_some(())?;
        let t0 = f.next()?.parse().ok()?;
        let t1 = f.next()?.parse().ok()?;
        let collect = f.next()?.parse().ok()?;
        let ok = t0 <= t1 && t1 <= collect && f.next().is_none();
        ok.then_some(Window { t0, t1, collect })
    }
}

/// Called once every thread of a run is ready; returns the window.
pub trait Handshake {
    fn ready(&mut self) -> Result<Window, String>;
}

/// The child side: `ready` on stdout, the window from stdin.
#[derive(Debug, Default)]
pub struct StdioHandshake;

impl Handshake for StdioHandshake {
    fn ready(&mut self) -> Result<Window, String> {
        let mut out = std::io::stdout().lock();
        out.write_all(b"ready\n")
            .and_then(|()| out.flush())
            .map_err(|e| format!("telling the parent we are ready: {e}"))?;
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("reading the window: {e}"))?;
        Window::parse(&line).ok_or_else(|| format!("bad window line {line:?} from the parent"))
    }
}

/// In-process runs (tests): the window opens `lead_ns` after readiness.
#[derive(Debug)]
pub struct LeadHandshake {
    pub lead_ns: Nanos,
    pub duration_ns: Nanos,
}

impl Handshake for LeadHandshake {
    fn ready(&mut self) -> Result<Window, String> {
        Window::after(self.lead_ns, self.duration_ns)
    }
}

/// Prints a child's report on stdout between the marks.
pub fn print_report(r: &GuestReport) {
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{BEGIN_MARK}\n{}\n{END_MARK}\n", r.to_json());
    let _ = out.flush();
}

/// A child process we spawned, seen from the parent.
#[derive(Debug)]
pub struct Peer {
    /// What the child runs, for messages.
    pub label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
}

impl Peer {
    /// Runs `exe args...` with piped stdin and stdout (stderr is shared:
    /// the console).
    pub fn spawn(exe: &Path, args: &[String], label: String) -> Result<Peer, String> {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{label}: spawning {}: {e}", exe.display()))?;
        let stdin = child.stdin.take();
        let out = child.stdout.take().map(BufReader::new);
        match out {
            Some(out) => Ok(Peer {
                label,
                child,
                stdin,
                out,
            }),
            None => {
                let _ = child.kill();
                Err(format!("{label}: no stdout pipe"))
            }
        }
    }

    /// Waits for `ready`; a failure carries the child's own error.
    pub fn wait_ready(&mut self) -> Result<(), String> {
        let mut line = String::new();
        self.out
            .read_line(&mut line)
            .map_err(|e| format!("{}: {e}", self.label))?;
        match line.trim_end() {
            "ready" => Ok(()),
            "" => Err(format!("{}: exited before it was ready", self.label)),
            first => {
                let mut rest = String::new();
                let _ = self.out.read_to_string(&mut rest);
                let text = format!("{first}\n{rest}");
                let why = GuestReport::parse(&text)
                    .ok()
                    .and_then(|r| r.error)
                    .unwrap_or_else(|| format!("said {first:?} instead of ready"));
                Err(format!("{}: {why}", self.label))
            }
        }
    }

    /// Sends the window and closes the child's stdin.
    pub fn send_window(&mut self, w: Window) -> Result<(), String> {
        let mut stdin = self
            .stdin
            .take()
            .ok_or_else(|| format!("{}: window already sent", self.label))?;
        stdin
            .write_all(w.line().as_bytes())
            .map_err(|e| format!("{}: sending the window: {e}", self.label))
    }

    /// Reads the child's report to the end and reaps it.
    pub fn report(mut self) -> Result<GuestReport, String> {
        let mut text = String::new();
        let read = self.out.read_to_string(&mut text);
        let status = self.child.wait();
        read.map_err(|e| format!("{}: reading its report: {e}", self.label))?;
        GuestReport::parse(&text).map_err(|e| {
            let st = status.map_or_else(|e| e.to_string(), |s| s.to_string());
            format!("{}: {} (exit: {st})", self.label, e.message)
        })
    }

    /// Stops the child (after a failure elsewhere) and reaps it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Merges a child's part into `into`: threads and benchmark results in
/// order, warnings, and the first error.
pub fn merge(into: &mut GuestReport, part: GuestReport) {
    into.threads.extend(part.threads);
    into.hackbench.extend(part.hackbench);
    into.schbench.extend(part.schbench);
    into.warnings.extend(part.warnings);
    if into.error.is_none() {
        into.error = part.error;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_tick_lands_at_the_simulations_phase() {
        let tick = 4_000_000;
        for (t0, phase) in [(2_389_923_365, 2_345_678), (8_000_000, 0), (1, 3_999_999)] {
            let mut w = Window {
                t0,
                t1: t0 + 10,
                collect: t0 + 20,
            };
            w.align_first_tick(tick, phase);
            assert!(w.t0 >= t0 && w.t0 - t0 < tick);
            assert_eq!((w.t0 + phase) % tick, 0, "{t0} {phase}");
            assert_eq!((w.t1 - w.t0, w.collect - w.t0), (10, 20));
        }
    }

    #[test]
    fn window_lines_round_trip_and_bad_ones_are_refused() {
        let w = Window {
            t0: 5,
            t1: 9,
            collect: 12,
        };
        assert_eq!(Window::parse(&w.line()), Some(w));
        for bad in [
            "",
            "window 9 5 9",
            "window 1 2",
            "window 1 2 1",
            "win 1 2 3",
            "window 1 2 3 4",
        ] {
            assert_eq!(Window::parse(bad), None, "{bad}");
        }
    }
}
