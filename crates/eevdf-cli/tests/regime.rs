//! `eevdf import trace --regime`: a trace's scheduler regime, and two
//! side by side (a kernel run's against a twin's).

use std::path::PathBuf;
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

/// A temporary directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("eevdf-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Traces a cyclictest-style task waking every `period` beside a hog.
fn traced(dir: &Dir, period: &str) -> String {
    let scn = dir.0.join(format!("ct{period}.scn"));
    let trace = dir.0.join(format!("ct{period}.trace"));
    std::fs::write(
        &scn,
        format!(
            "eevdf-scenario v1\nmachine up\nduration 1s\n\
             task ct kind=timer period={period} slice=100us\ntask hog kind=hog\nend\n"
        ),
    )
    .unwrap();
    let t = trace.to_str().unwrap().to_string();
    let run = eevdf(&["run", scn.to_str().unwrap(), "--trace", &t]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    t
}

#[test]
fn two_traces_side_by_side_with_the_ratio_of_their_rates() {
    let dir = Dir::new("regime");
    let (fast, slow) = (traced(&dir, "1ms"), traced(&dir, "2ms"));
    let out = eevdf(&["import", "trace", &fast, "--regime", "--against", &slow]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    // ct preempts the hog at each wakeup: two switches per wakeup, and
    // half as many wakeups every 2 ms.
    let sw = words(&table, "switches /s");
    let n = |s: &str| s.replace(',', "").parse::<u64>().unwrap();
    assert!((1_900..=2_100).contains(&n(&sw[2])), "{table}");
    assert!((900..=1_100).contains(&n(&sw[3])), "{table}");
    assert_eq!(sw[4], "0.50", "{table}");
    assert_eq!(words(&table, "wakeup to run ct").len(), 16, "{table}");
    let one = eevdf(&["import", "trace", &fast, "--regime"]);
    assert_eq!(one.status.code(), Some(0));
    let one = String::from_utf8(one.stdout).unwrap();
    assert_eq!(words(&one, "switches /s").len(), 3, "{one}");
}

#[test]
fn against_needs_regime_and_bad_input_is_refused() {
    let out = eevdf(&["import", "trace", "-", "--against", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let out = eevdf(&["import", "trace", "-", "--regime", "--against", "-"]);
    assert_eq!(out.status.code(), Some(2));
    let dir = Dir::new("regime-bad");
    let bad = dir.0.join("bad.trace");
    std::fs::write(
        &bad,
        "x-1 [000] d..2. 1.0: sched_switch: prev_comm=x prev_pid=1\n",
    )
    .unwrap();
    let out = eevdf(&["import", "trace", bad.to_str().unwrap(), "--regime"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(":1:1:"), "{err}");
}
