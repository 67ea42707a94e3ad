//! `mode=calibrate` (a line of `/eevdf/options`): instead of a scenario,
//! PID 1 measures what the machine's basic operations cost in virtual
//! time and prints them on ttyS1, one JSON object per line between the
//! report's [`BEGIN_MARK`] and [`END_MARK`] (schema
//! [`CALIBRATE_SCHEMA`]); `eevdf kernel calibrate` reads them back
//! (`eevdf_kernel::calibrate`). `eevdf-guest calibrate` runs the same
//! measurements on the host, on stdout.
//!
//! The first line names the schema, the kernel and the defaults seen;
//! each further line is one quantity: `{"name":..,"unit":"ns"|"ps",
//! "samples":N,"min":..,"median":..,"p90":..,"max":..}`.
//!
//! - `insn_ps`: picoseconds per instruction: pairs of exact spin loops
//!   (`dec; jnz`) of two lengths, the difference over
//!   `CLOCK_MONOTONIC` (which cancels the clock reads); under
//!   `-icount shift=S` it is 1000 * 2^S.
//! - `tick_ns`: time a CPU hog loses per local timer interrupt: a long
//!   exact spin's elapsed time minus its instructions' time, over the
//!   `LOC` count of `/proc/interrupts` (every interrupt and anything
//!   else that ran counts, so it is an upper bound).
//! - `timer_wake_ns`: an absolute `clock_nanosleep` on an idle CPU with
//!   timer slack 1 ns (0 would mean "the default"): woken − expiry.
//! - `timer_wake_default_slack_ns`: the same with the default slack.
//! - `timer_loop_ns`: a timer thread's own CPU time per period (absolute
//!   sleeps 1 ms apart with the timer workload's clock reads and no
//!   burn), from its CPU clock over batches: what one activation of a
//!   timer or periodic task costs it beyond its run.
//! - `pipe_write_ns`, `pipe_read_ns`: one message of the guest's
//!   hackbench loop (`workload::send_one`, `recv_one`: a 100-byte `write`
//!   to a pipe nobody waits on or a `read` of available data, with the
//!   loop's clock read), per message, from batches.
//! - `socket_write_ns`, `socket_read_ns`: the same over a UNIX stream
//!   socket pair (`ipc=socket`).
//! - `pingpong_leg_ns`: two threads on one CPU passing a 100-byte
//!   message back and forth over two pipes: round trip / 2, from batches
//!   (one write, one wakeup, one context switch, one read).
//! - `syscall_ns`: one `getppid`, from batches.
//! - `yield_switch_ns`: two threads on one CPU calling `sched_yield` in
//!   turn: elapsed time over the `ctxt` count of `/proc/stat` (a context
//!   switch with no wakeup, plus one system call).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;

use eevdf_scenario::guest::{BEGIN_MARK, END_MARK};

use crate::clock::{self, Nanos};
use crate::run::log;
use crate::sys::spin_exact;
use crate::workload::{recv_one, send_one};

/// The option line that selects calibration.
pub const OPTION: &str = "mode=calibrate";
/// The `schema` of the first line.
pub const CALIBRATE_SCHEMA: &str = "eevdf.calibrate.v1";
/// hackbench's message size.
const MSG: usize = 100;

/// Whether `/eevdf/options` asks for calibration.
pub fn requested(options: &str) -> bool {
    options.lines().any(|l| {
        l.split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect::<String>()
            == OPTION
    })
}

/// One measured quantity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    pub name: &'static str,
    pub unit: &'static str,
    pub samples: usize,
    pub min: u64,
    pub median: u64,
    pub p90: u64,
    pub max: u64,
}

impl Stat {
    /// Order statistics of `v` (empty: all zero).
    pub fn of(name: &'static str, unit: &'static str, mut v: Vec<u64>) -> Stat {
        v.sort_unstable();
        let at = |q: usize| {
            v.get((v.len().saturating_sub(1) * q) / 100)
                .copied()
                .unwrap_or(0)
        };
        Stat {
            name,
            unit,
            samples: v.len(),
            min: v.first().copied().unwrap_or(0),
            median: at(50),
            p90: at(90),
            max: v.last().copied().unwrap_or(0),
        }
    }

    fn json(&self) -> String {
        format!(
            "{{\"name\":\"{}\",\"unit\":\"{}\",\"samples\":{},\"min\":{},\"median\":{},\"p90\":{},\"max\":{}}}",
            self.name, self.unit, self.samples, self.min, self.median, self.p90, self.max
        )
    }
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The whole report, marks included.
pub fn report_text(
    uname: &str,
    default_slack_ns: i64,
    stats: &[Stat],
    errors: &[String],
) -> String {
    let errs: Vec<String> = errors.iter().map(|e| json_str(e)).collect();
    let mut out = format!(
        "{BEGIN_MARK}\n{{\"schema\":\"{CALIBRATE_SCHEMA}\",\"uname\":{},\"nr_cpus\":{},\"default_slack_ns\":{default_slack_ns},\"errors\":[{}]}}\n",
        json_str(uname),
        crate::setup::online_cpus(),
        errs.join(",")
    );
    for s in stats {
        out.push_str(&s.json());
        out.push('\n');
    }
    out.push_str(END_MARK);
    out.push('\n');
    out
}

/// Local timer interrupts so far, summed over CPUs (`LOC:` of
/// `/proc/interrupts`).
fn local_timer_irqs() -> Result<u64, String> {
    let t = std::fs::read_to_string("/proc/interrupts")
        .map_err(|e| format!("/proc/interrupts: {e}"))?;
    let line = t
        .lines()
        .find(|l| l.trim_start().starts_with("LOC:"))
        .ok_or("/proc/interrupts has no LOC line")?;
    Ok(line
        .split_whitespace()
        .skip(1)
        .map_while(|w| w.parse::<u64>().ok())
        .sum())
}

fn timed(f: impl FnOnce()) -> Nanos {
    let t0 = clock::now();
    f();
    clock::now().saturating_sub(t0)
}

/// Picoseconds per instruction.
fn insn_ps() -> Stat {
    const SHORT: u64 = 10_000;
    const LONG: u64 = 60_000;
    let mut v = Vec::new();
    for _ in 0..40 {
        let a = timed(|| spin_exact(SHORT));
        let b = timed(|| spin_exact(LONG));
        v.push(b.saturating_sub(a).saturating_mul(1000) / (2 * (LONG - SHORT)));
    }
    Stat::of("insn_ps", "ps", v)
}

/// Time lost per local timer interrupt by a hog (see the module docs).
fn tick_ns(insn_ps: u64) -> Result<Stat, String> {
    // 2 * ITERS instructions: 200 ms at 2 ns each.
    const ITERS: u64 = 50_000_000;
    let mut v = Vec::new();
    for _ in 0..3 {
        let irq0 = local_timer_irqs()?;
        let dt = timed(|| spin_exact(ITERS));
        let irqs = local_timer_irqs()?.saturating_sub(irq0);
        let want = 2 * ITERS * insn_ps / 1000;
        v.extend(dt.saturating_sub(want).checked_div(irqs));
    }
    Ok(Stat::of("tick_ns", "ns", v))
}

/// Absolute sleeps on an idle CPU: woken − expiry.
fn timer_wake(name: &'static str, n: u64) -> Stat {
    let mut v = Vec::new();
    for i in 0..n {
        // 1 to 2 ms ahead, at a varying phase against the tick.
        let at = clock::now() + 1_000_000 + (i * 37_013) % 1_000_000;
        if clock::sleep_until(at).is_ok() {
            v.push(clock::now().saturating_sub(at));
        }
    }
    Stat::of(name, "ns", v)
}

/// CPU time per period of an absolute-sleep loop, per batch of periods
/// (one CPU-clock read, a system call, per batch).
fn timer_loop(batches: u64, per_batch: u64) -> Stat {
    let mut v = Vec::new();
    let mut expiry = clock::now() + 1_000_000;
    'batches: for _ in 0..batches {
        let cpu0 = clock::thread_cpu();
        for _ in 0..per_batch {
            if clock::sleep_until(expiry).is_err() {
                break 'batches;
            }
            // The timer workload reads the clock at the wakeup and after
            // its run (`workload::timer`).
            std::hint::black_box(clock::now());
            std::hint::black_box(clock::now());
            expiry += 1_000_000;
        }
        v.push(clock::thread_cpu().saturating_sub(cpu0) / per_batch.max(1));
    }
    Stat::of("timer_loop_ns", "ns", v)
}

fn pipe() -> Result<(File, File), String> {
    let (r, w): (OwnedFd, OwnedFd) = nix::unistd::pipe().map_err(|e| format!("pipe: {e}"))?;
    Ok((File::from(r), File::from(w)))
}

/// Per-message write and read costs over a pipe, from batches.
fn pipe_costs() -> Result<(Stat, Stat), String> {
    let (r, w) = pipe()?;
    message_costs(&r, &w, 200, ["pipe_write_ns", "pipe_read_ns"])
}

/// The same over a UNIX stream socket pair, hackbench's `ipc=socket`
/// channel. A batch stays under the socket's buffer (about 277 such
/// messages), so no write blocks.
fn socket_costs() -> Result<(Stat, Stat), String> {
    let (r, w) = std::os::unix::net::UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let (r, w) = (File::from(OwnedFd::from(r)), File::from(OwnedFd::from(w)));
    message_costs(&r, &w, 100, ["socket_write_ns", "socket_read_ns"])
}

/// `batch` messages written to `w`, then read from `r`, 30 times: the
/// per-message medians of the guest's hackbench loop.
fn message_costs(
    r: &File,
    w: &File,
    batch: u64,
    names: [&'static str; 2],
) -> Result<(Stat, Stat), String> {
    let msg = [0x5au8; MSG];
    let mut buf = [0u8; MSG];
    let (mut wv, mut rv) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        let mut err = None;
        let tw = timed(|| {
            for _ in 0..batch {
                if let Err(e) = send_one(w, &msg, Nanos::MAX) {
                    err = Some(e);
                }
            }
        });
        let tr = timed(|| {
            for _ in 0..batch {
                if let Err(e) = recv_one(r, &mut buf, Nanos::MAX) {
                    err = Some(e);
                }
            }
        });
        if let Some(e) = err {
            return Err(format!("{}: {e}", names[0]));
        }
        wv.push(tw / batch);
        rv.push(tr / batch);
    }
    Ok((Stat::of(names[0], "ns", wv), Stat::of(names[1], "ns", rv)))
}

/// Round trip / 2 of a 100-byte message between two threads, from batches.
fn pingpong() -> Result<Stat, String> {
    const BATCH: u64 = 200;
    const ROUNDS: u64 = 30;
    let (mut r1, mut w1) = pipe()?;
    let (mut r2, mut w2) = pipe()?;
    let echo = std::thread::Builder::new()
        .name("pong".into())
        .spawn(move || -> std::io::Result<()> {
            let mut buf = [0u8; MSG];
            for _ in 0..(BATCH * ROUNDS + 1) {
                r1.read_exact(&mut buf)?;
                w2.write_all(&buf)?;
            }
            Ok(())
        })
        .map_err(|e| format!("spawning the ping-pong thread: {e}"))?;
    let msg = [0xa5u8; MSG];
    let mut buf = [0u8; MSG];
    let mut trip = || w1.write_all(&msg).and_then(|()| r2.read_exact(&mut buf));
    let mut v = Vec::new();
    // One warm-up trip: the echo thread has run once and sleeps in read.
    let mut res = trip();
    for _ in 0..ROUNDS {
        let t = timed(|| {
            for _ in 0..BATCH {
                if res.is_ok() {
                    res = trip();
                }
            }
        });
        v.push(t / (2 * BATCH));
    }
    // On an error the echo thread is left blocked; PID 1 powers off.
    res.map_err(|e| format!("ping-pong: {e}"))?;
    echo.join()
        .map_err(|_| "the ping-pong thread panicked".to_string())?
        .map_err(|e| format!("ping-pong echo: {e}"))?;
    Ok(Stat::of("pingpong_leg_ns", "ns", v))
}

/// Context switches so far (`ctxt` of `/proc/stat`).
fn context_switches() -> Result<u64, String> {
    let t = std::fs::read_to_string("/proc/stat").map_err(|e| format!("/proc/stat: {e}"))?;
    t.lines()
        .find_map(|l| l.strip_prefix("ctxt "))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| "/proc/stat has no ctxt line".to_string())
}

/// A null system call, per call, from batches.
fn syscall_ns() -> Stat {
    const BATCH: u64 = 1000;
    let v = (0..20)
        .map(|_| {
            timed(|| {
                for _ in 0..BATCH {
                    std::hint::black_box(nix::unistd::getppid());
                }
            }) / BATCH
        })
        .collect();
    Stat::of("syscall_ns", "ns", v)
}

/// Time per context switch between two threads yielding in turn.
fn yield_switch() -> Result<Stat, String> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    const BATCH: u64 = 500;
    let stop = Arc::new(AtomicBool::new(false));
    let partner = {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("yield".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = nix::sched::sched_yield();
                }
            })
            .map_err(|e| format!("spawning the yield thread: {e}"))?
    };
    let mut v = Vec::new();
    let mut r = Ok(());
    for _ in 0..20 {
        let c0 = match context_switches() {
            Ok(c) => c,
            Err(e) => {
                r = Err(e);
                break;
            }
        };
        let dt = timed(|| {
            for _ in 0..BATCH {
                let _ = nix::sched::sched_yield();
            }
        });
        match context_switches() {
            Ok(c1) => v.extend(dt.checked_div(c1.saturating_sub(c0))),
            Err(e) => {
                r = Err(e);
                break;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = partner.join();
    r.map(|()| Stat::of("yield_switch_ns", "ns", v))
}

/// Runs every measurement; returns the default slack seen, the stats
/// and the errors of those that failed.
pub fn measure() -> (i64, Vec<Stat>, Vec<String>) {
    let mut stats = Vec::new();
    let mut errors = Vec::new();
    let default_slack = nix::sys::prctl::get_timerslack().map_or(-1, i64::from);
    let insn = insn_ps();
    let ps = insn.median.max(1);
    stats.push(insn);
    match tick_ns(ps) {
        Ok(s) => stats.push(s),
        Err(e) => errors.push(e),
    }
    stats.push(timer_wake("timer_wake_default_slack_ns", 200));
    match nix::sys::prctl::set_timerslack(1) {
        Ok(()) => stats.push(timer_wake("timer_wake_ns", 400)),
        Err(e) => errors.push(format!("PR_SET_TIMERSLACK 1: {e}")),
    }
    stats.push(timer_loop(20, 20));
    for costs in [pipe_costs, socket_costs] {
        match costs() {
            Ok((w, r)) => stats.extend([w, r]),
            Err(e) => errors.push(e),
        }
    }
    match pingpong() {
        Ok(s) => stats.push(s),
        Err(e) => errors.push(e),
    }
    stats.push(syscall_ns());
    match yield_switch() {
        Ok(s) => stats.push(s),
        Err(e) => errors.push(e),
    }
    (default_slack, stats, errors)
}

/// PID 1 in calibration mode: measure, print on `port`, power off.
pub fn main(uname: &str, port: &str) -> ! {
    log("calibrating");
    let (slack, stats, errors) = measure();
    let text = report_text(uname, slack, &stats, &errors);
    match crate::guest::open_port(port) {
        Ok(mut f) => {
            if let Err(e) = f.write_all(text.as_bytes()) {
                log(&format!("{port}: {e}"));
            }
            let _ = nix::sys::termios::tcdrain(&f);
        }
        Err(e) => {
            log(&format!("{e}; the report follows on the console"));
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
    }
    log("report written");
    crate::guest::power_off()
}

/// `eevdf-guest calibrate`: the same measurements on this host, on stdout.
pub fn local_main() -> i32 {
    let (slack, stats, errors) = measure();
    let text = report_text(&crate::setup::uname(), slack, &stats, &errors);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    i32::from(!errors.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_line() {
        assert!(requested("trace=0\nmode=calibrate\n"));
        assert!(requested(" mode = calibrate # c\n"));
        assert!(!requested("trace=0\n# mode=calibrate\n"));
        assert!(!requested("mode=run\n"));
    }

    #[test]
    fn stats_and_lines() {
        let s = Stat::of("x", "ns", vec![5, 1, 4, 2, 3]);
        assert_eq!((s.samples, s.min, s.median, s.p90, s.max), (5, 1, 3, 4, 5));
        assert_eq!(Stat::of("e", "ns", vec![]).median, 0);
        let t = report_text("7.2 \"#1\"", 50_000, &[s], &["bad\n".into()]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], BEGIN_MARK);
        assert!(
            lines[1].contains(r##""uname":"7.2 \"#1\"""##),
            "{}",
            lines[1]
        );
        assert!(
            lines[1].contains(r#""errors":["bad\u000a"]"#),
            "{}",
            lines[1]
        );
        assert_eq!(
            lines[2],
            r#"{"name":"x","unit":"ns","samples":5,"min":1,"median":3,"p90":4,"max":5}"#
        );
        assert_eq!(lines[3], END_MARK);
    }

    #[test]
    fn an_exact_spin_takes_time() {
        let a = timed(|| spin_exact(1_000_000));
        assert!(a > 0);
    }
}
