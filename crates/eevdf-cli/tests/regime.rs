//! `eevdf import trace --regime`: a trace's scheduler regime, and two
//! side by side (a kernel run's against a twin's).

use std::process::{Command, Output};

fn eevdf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(args)
        .output()
        .unwrap()
}

fn words(table: &str, label: &str) -> Vec<String> {
    table
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label} in\n{table}"))
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_trace_against_itself_has_every_rate_at_one() {
    let dir = std::env::temp_dir().join(format!("eevdf-regime-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scn = dir.join("ct.scn");
    let trace = dir.join("ct.trace");
    std::fs::write(
        &scn,
        "eevdf-scenario v1\nmachine up\nduration 1s\n\
         task ct kind=timer period=1ms slice=100us\ntask hog kind=hog\nend\n",
    )
    .unwrap();
    let t = trace.to_str().unwrap();
    let run = eevdf(&["run", scn.to_str().unwrap(), "--trace", t]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = eevdf(&["import", "trace", t, "--regime", "--against", t]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    // ct wakes 1,000 times a second and preempts the hog each time: two
    // switches per wakeup.
    let sw = words(&table, "switches /s");
    assert_eq!(sw.len(), 5, "{table}");
    assert_eq!(sw[2], sw[3]);
    assert_eq!(sw[4], "1.00");
    let n: u64 = sw[2].replace(',', "").parse().unwrap();
    assert!((1_900..=2_100).contains(&n), "{table}");
    let lat = words(&table, "wakeup to run ct");
    assert_eq!(
        lat[lat.len() - 5..],
        lat[lat.len() - 10..lat.len() - 5],
        "{table}"
    );
    // One trace: no ratio column.
    let one = eevdf(&["import", "trace", t, "--regime"]);
    let one = String::from_utf8(one.stdout).unwrap();
    assert_eq!(words(&one, "switches /s").len(), 3, "{one}");
}

#[test]
fn against_needs_regime_and_a_bad_trace_is_refused() {
    let out = eevdf(&["import", "trace", "-", "--against", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let dir = std::env::temp_dir().join(format!("eevdf-regime-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.trace");
    std::fs::write(
        &bad,
        "x-1 [000] d..2. 1.0: sched_switch: prev_comm=x prev_pid=1\n",
    )
    .unwrap();
    let b = bad.to_str().unwrap();
    let out = eevdf(&["import", "trace", b, "--regime"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(":1:") || err.contains("line 1"), "{err}");
}
