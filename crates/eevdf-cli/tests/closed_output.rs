//! Output into a reader that stops early (`eevdf ... | head -1`) ends
//! the program quietly with exit 0, as `head` expects; a full disk is a
//! failed run (exit 1) with one `error:` line (README "CLI").

use std::io::Read;
use std::process::{Command, Stdio};

/// Runs `eevdf args`, reads `keep` bytes of its standard output and
/// closes the pipe; returns the exit code, the bytes and stderr. The
/// output must exceed a pipe's buffer (64 KiB), so the program is still
/// writing when the pipe closes, whatever the timing.
fn head(args: &[&str], keep: usize) -> (Option<i32>, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn eevdf");
    let mut kept = vec![0; keep];
    let mut stdout = child.stdout.take().expect("stdout");
    stdout.read_exact(&mut kept).expect("the first bytes");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), kept, stderr)
}

#[test]
fn a_closed_pipe_ends_a_long_output_quietly() {
    // The cyclictest histogram of 100 ms is about 280 KB.
    let args = [
        "run",
        "fidelity-ct-alone",
        "--duration",
        "100ms",
        "--format",
        "cyclictest",
    ];
    let (code, kept, stderr) = head(&args, 12);
    assert_eq!(kept, b"# Histogram\n");
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "", "no panic, no backtrace");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_a_failed_run() {
    let full = std::fs::File::create("/dev/full").expect("/dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(["presets"])
        .stdout(full)
        .output()
        .expect("run eevdf");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        ["error: writing to standard output: No space left on device (os error 28)"]
    );
}

/// A standard error nobody can read (full, closed) never turns an error
/// into a panic: the exit code stays the documented one.
#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_stderr_keeps_the_exit_code() {
    let full = std::fs::File::create("/dev/full").expect("/dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(["run", "no-such-preset"])
        .stdout(Stdio::null())
        .stderr(full)
        .status()
        .expect("run eevdf");
    assert_eq!(out.code(), Some(2), "a usage error, not a panic (101)");
}
