//! Hostile input (issue 17): endless devices and pipes, oversized files,
//! overflowing numbers and terminal escapes all end as exit 2 with one
//! clear `error:` line, in memory bounded by the per-format limits of
//! `eevdf_scenario::limits`. Nothing here waits on a timer: endless
//! inputs are bounded by byte counts (a writer that stops after N bytes).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use eevdf_scenario::limits;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `eevdf args`, writing `stdin` (if any) from a thread that stops at
/// the first write error (the binary closed its end) or after all bytes.
fn eevdf(args: &[&str], stdin: Option<Box<dyn Iterator<Item = Vec<u8>> + Send>>) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn eevdf");
    let writer = stdin.map(|chunks| {
        let mut pipe = child.stdin.take().expect("stdin");
        std::thread::spawn(move || {
            for c in chunks {
                if pipe.write_all(&c).is_err() {
                    return;
                }
            }
        })
    });
    let out = child.wait_with_output().expect("wait eevdf");
    if let Some(w) = writer {
        w.join().expect("writer");
    }
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `total` bytes of `unit` repeated, in chunks of about 64 KiB.
fn repeated(unit: &[u8], total: usize) -> Box<dyn Iterator<Item = Vec<u8>> + Send> {
    let per = (65536 / unit.len()).max(1);
    let chunk: Vec<u8> = unit.repeat(per);
    let n = total / chunk.len() + 1;
    Box::new(std::iter::repeat_n(chunk, n))
}

/// Writes `bytes` to a file called `name` in a directory of its own:
/// tests run in parallel, and several write a file of the same name
/// (the errors they check quote it).
fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile")
        .join(n.to_string());
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Exit 2, one `error:` line containing `want`, no raw control character.
fn bad(o: &Out, want: &str) {
    assert_eq!(o.code, 2, "stderr: {}", o.stderr);
    assert!(o.stderr.contains(want), "want `{want}` in: {}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(o.stderr.len() < 1000, "{} bytes of error", o.stderr.len());
    no_controls(&o.stderr);
}

fn no_controls(s: &str) {
    let bad = s.chars().find(|c| c.is_control() && *c != '\n');
    assert_eq!(bad, None, "raw control character in {s:?}");
}

fn too_large(limit: u64) -> String {
    format!("too large (limit {limit} bytes)")
}

#[test]
fn run_dev_zero_is_too_large() {
    let o = eevdf(&["run", "/dev/zero"], None);
    bad(&o, &too_large(limits::SCENARIO_BYTES));
}

#[test]
fn run_an_endless_pipe_path_is_too_large() {
    // `eevdf run <(yes)`: a path whose metadata says 0 bytes.
    let o = eevdf(&["run", "/dev/stdin"], Some(repeated(b"y\n", 16 << 20)));
    bad(&o, &too_large(limits::SCENARIO_BYTES));
}

#[test]
fn run_endless_stdin_is_too_large() {
    let o = eevdf(&["run", "-"], Some(repeated(b"y\n", 16 << 20)));
    bad(&o, &too_large(limits::SCENARIO_BYTES));
}

#[test]
fn import_trace_dev_urandom_is_not_text() {
    let o = eevdf(&["import", "trace", "/dev/urandom"], None);
    bad(&o, "not UTF-8");
}

#[test]
fn import_trace_dev_zero_has_a_line_too_long() {
    let o = eevdf(&["import", "trace", "/dev/zero"], None);
    bad(
        &o,
        &format!(":1:1: line is over {} bytes", limits::TRACE_LINE_BYTES),
    );
}

#[test]
fn oversized_files_are_too_large() {
    let big = vec![b' '; limits::SCENARIO_BYTES as usize + 1];
    let p = tmp("big.scn", &big);
    bad(
        &eevdf(&["run", p.to_str().unwrap()], None),
        &too_large(limits::SCENARIO_BYTES),
    );
    let p = tmp("big.json", &big);
    bad(
        &eevdf(&["import", "rtapp", p.to_str().unwrap()], None),
        &too_large(limits::RTAPP_BYTES),
    );
    let p = tmp(
        "big.debugfs",
        &vec![b' '; limits::DEBUGFS_BYTES as usize + 1],
    );
    bad(
        &eevdf(&["import", "debugfs", p.to_str().unwrap()], None),
        &too_large(limits::DEBUGFS_BYTES),
    );
    // Exactly at the limit is not too large (it fails later, as text).
    let p = tmp("limit.debugfs", &vec![b' '; limits::DEBUGFS_BYTES as usize]);
    let o = eevdf(&["import", "debugfs", p.to_str().unwrap()], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

/// One burst of pid 5: switched in at `ms`, out (sleeping) 1 ms later;
/// each line padded to 256 bytes, so 1 MiB ends exactly on a line.
fn burst(ms: u64) -> Vec<u8> {
    let line = |t: u64, body: &str| {
        let mut l = format!(
            "          <idle>-0       [000] d..2. {:5}.{:06}: {body}",
            t / 1000,
            (t % 1000) * 1000
        );
        l.push_str(&" ".repeat(255 - l.len()));
        l.push('\n');
        l
    };
    let mut s = line(
        2 * ms,
        "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=5 next_prio=120",
    );
    s.push_str(&line(
        2 * ms + 1,
        "sched_switch: prev_comm=a prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
    ));
    s.into_bytes()
}

#[test]
fn import_trace_on_stdin_reads_all_of_a_big_trace() {
    // 16 MiB: far over the old 1 MiB stdin cut, which analysed a prefix.
    let bursts = 32 * 1024;
    let chunks = (0..bursts).map(burst);
    let o = eevdf(&["import", "trace", "-"], Some(Box::new(chunks)));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let row = o.stdout.lines().nth(1).expect("a row");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[..4], ["5", "a", "32768.000", "32768"], "{row}");
}

#[test]
fn import_trace_line_too_long_is_positioned() {
    let mut t = burst(0);
    t.extend(vec![b'x'; limits::TRACE_LINE_BYTES + 1]);
    let p = tmp("long-line.trace", &t);
    bad(
        &eevdf(&["import", "trace", p.to_str().unwrap()], None),
        ":3:1: line is over",
    );
}

#[test]
fn import_trace_timestamp_overflow_is_an_error() {
    let t =
        "a-5 [000] d..2. 99999999999.000000: sched_waking: comm=a pid=5 prio=120 target_cpu=000\n";
    let p = tmp("overflow.trace", t.as_bytes());
    bad(
        &eevdf(&["import", "trace", p.to_str().unwrap()], None),
        ":1:17: timestamp",
    );
}

#[test]
fn import_trace_escapes_the_comm_column() {
    let t = "x-0 [000] d..2. 1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=\x1b[31mred next_pid=7 next_prio=120\n";
    let p = tmp("esc.trace", t.as_bytes());
    let o = eevdf(&["import", "trace", p.to_str().unwrap()], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    no_controls(&o.stdout);
    assert!(o.stdout.contains("\\x1b[31mred"), "{}", o.stdout);
}

fn rtapp(json: &str) -> Out {
    let p = tmp("t.json", json.as_bytes());
    eevdf(&["import", "rtapp", p.to_str().unwrap()], None)
}

#[test]
fn rtapp_overflowing_run_is_an_error() {
    let o = rtapp(r#"{"tasks":{"a":{"run":1e20,"run1":1}}}"#);
    bad(&o, "t.json:1:16: task `a`: `run` is over");
}

#[test]
fn rtapp_negative_sleep_is_an_error() {
    let o = rtapp(r#"{"tasks":{"a":{"run":100,"sleep":-5}}}"#);
    bad(&o, "t.json:1:26: task `a`: `sleep` is negative");
}

#[test]
fn rtapp_errors_point_into_the_json() {
    let o = rtapp(r#"{"tasks":{"a":{"instance":100000,"run":100,"sleep":100}}}"#);
    bad(&o, "t.json:1:16: task `a`: `instance` must be");
}

#[test]
fn rtapp_huge_numbers_give_short_errors() {
    let o = rtapp(&format!(
        r#"{{"tasks":{{"a":{{"run":{}}}}}}}"#,
        "9".repeat(500_000)
    ));
    bad(&o, "bad number");
}

#[test]
fn rtapp_unicode_escapes_are_decoded_and_warnings_escaped() {
    let o = rtapp(r#"{"tasks":{"\u0061\u001b[31m":{"run":100,"sleep":100,"util_min":1}}}"#);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("task a__31m kind=periodic"),
        "{}",
        o.stdout
    );
    no_controls(&o.stderr);
    assert!(o.stderr.contains("task `a\\x1b[31m`"), "{}", o.stderr);
}

#[test]
fn link_escapes_are_not_echoed_raw() {
    let o = eevdf(&["run", "https://x/#v1;task+a%1B[31m+kind=hog"], None);
    bad(&o, "\\x1b[31m");
    let o = eevdf(&["run", "https://x/#v9;\x1b[31m"], None);
    bad(&o, "\\x1b");
}

#[test]
fn set_values_are_escaped() {
    let o = eevdf(&["check", "default", "--set", "hz=1\x1b[31m"], None);
    bad(&o, "\\x1b[31m");
    let o = eevdf(&["check", "no-such-\x1b[2J"], None);
    bad(&o, "no-such-\\x1b[2J");
}

#[test]
fn debugfs_warnings_are_escaped() {
    let p = tmp("esc.debugfs", b"nr_\x1b[31m: 5\nPLACE_LAG FOO\x07\n");
    let o = eevdf(&["import", "debugfs", p.to_str().unwrap()], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    no_controls(&o.stderr);
    assert!(o.stderr.contains("nr_\\x1b[31m"), "{}", o.stderr);
    assert!(o.stderr.contains("FOO\\x07"), "{}", o.stderr);
}

#[test]
fn import_trace_of_endless_text_stops_at_the_probe() {
    // `eevdf import trace <(yes)`: valid lines, none a sched event
    // (long ones, so that the debug build is quick).
    let total = 2 * limits::TRACE_PROBE_BYTES as usize;
    let mut line = vec![b'y'; 999];
    line.push(b'\n');
    let o = eevdf(&["import", "trace", "-"], Some(repeated(&line, total)));
    bad(&o, "no sched event in the first");
}
