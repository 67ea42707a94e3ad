//! `eevdf run --decisions`: the engine's wakeup and pick decisions as
//! ftrace-style lines. Observing a run changes nothing in it, every
//! switch of the trace has its pick, a pick's lag and deadline are an
//! EEVDF pick's, and the reasons follow the features.

use std::path::{Path, PathBuf};
use std::process::Command;

const CT_HOG: &str = "eevdf-scenario v1\nmachine up\nduration 1s\n\
    task ct kind=timer period=1ms slice=100us\ntask hog kind=hog\nend\n";

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("eevdf-decisions-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the scenario with `args` and returns stdout.
fn run(name: &str, text: &str, args: &[&str]) -> String {
    let scn = dir().join(format!("{name}.scn"));
    std::fs::write(&scn, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .arg("run")
        .arg(&scn)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn lines(p: &Path, what: &str) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| l.contains(what))
        .map(str::to_string)
        .collect()
}

/// The value of `key=` in a line.
fn field<'a>(l: &'a str, key: &str) -> &'a str {
    l.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key} in {l}"))
}

fn ts(l: &str) -> &str {
    l.split_whitespace()
        .find(|w| w.ends_with(':') && w.contains('.'))
        .unwrap()
}

#[test]
fn decisions_change_nothing_and_every_switch_has_its_pick() {
    let (d, t) = (dir().join("a.dec"), dir().join("a.trace"));
    let plain = run("plain", CT_HOG, &["--format", "json"]);
    let args = [
        "--format",
        "json",
        "--decisions",
        d.to_str().unwrap(),
        "--trace",
        t.to_str().unwrap(),
    ];
    assert_eq!(run("observed", CT_HOG, &args), plain);
    let switches = lines(&t, "sched_switch");
    let picks = lines(&d, "eevdf_pick");
    assert!(switches.len() > 1000, "{}", switches.len());
    let mut p = picks.iter();
    for s in &switches {
        let pick = p
            .find(|l| ts(l) == ts(s) && field(l, "next_pid") == field(s, "next_pid"))
            .unwrap_or_else(|| panic!("no pick for {s}"));
        assert!(!field(pick, "reason").is_empty());
        if field(pick, "next_pid") == "0" {
            continue;
        }
        // pick_eevdf() returns an eligible entity whose deadline lies
        // ahead of its vruntime by at most its request (100 us for ct,
        // the 700 us base slice for the hog).
        let num = |k| field(pick, k).parse::<i64>().unwrap();
        let (lag, dl_v) = (num("lag"), num("dl_v"));
        let request = if field(pick, "next_comm") == "ct" {
            100_000
        } else {
            700_000
        };
        assert_eq!(field(pick, "eligible"), "1", "{pick}");
        assert!(
            lag >= 0 && lag + dl_v > 0 && lag + dl_v <= request,
            "{pick}"
        );
        assert!((1..=2).contains(&num("nr_queued")), "{pick}");
    }
    // One wakeup_preempt per wakeup.
    let wakeups = lines(&t, "sched_wakeup:").len();
    assert_eq!(lines(&d, "eevdf_wakeup_preempt").len(), wakeups);
}

#[test]
fn preempt_short_shows_in_the_reasons() {
    let count = |name: &str, features: &str| {
        let d = dir().join(format!("{name}.dec"));
        run(
            name,
            CT_HOG,
            &["--features", features, "--decisions", d.to_str().unwrap()],
        );
        let w = lines(&d, "curr_comm=hog");
        let short = w
            .iter()
            .filter(|l| field(l, "reason") == "ShorterSlicePicked")
            .inspect(|l| assert_eq!(field(l, "preempt"), "1", "{l}"))
            .count();
        (w.len(), short)
    };
    let (woke, short) = count("ps", "PREEMPT_SHORT");
    // cyclictest wakes against the hog about 1,000 times in 1 s, and
    // PREEMPT_SHORT wins nearly all of them.
    assert!(woke > 900 && short * 10 > woke * 9, "{short} of {woke}");
    let (woke, short) = count("nops", "NO_PREEMPT_SHORT");
    assert!(woke > 900 && short == 0, "{short} of {woke}");
}
