//! `eevdf sweep` (issue 20): shards plus `merge` equal the unsharded run
//! byte for byte, merge refuses an incomplete grid, and bad axes are
//! exit 2 before anything runs.

use std::process::{Command, Output};

fn eevdf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(args)
        .output()
        .expect("spawn eevdf")
}

fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

const GRID: &[&str] = &[
    "sweep",
    "default",
    "--duration",
    "300ms",
    "--vary",
    "task.hog.slice=1ms,4ms",
    "--features-axis",
    "PREEMPT_SHORT,NO_PREEMPT_SHORT",
    "--seeds",
    "1..3",
];

fn with(extra: &[&str]) -> Vec<String> {
    GRID.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run(args: &[String]) -> String {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(eevdf(&a))
}

#[test]
fn shards_merged_equal_the_unsharded_sweep() {
    let whole = run(&with(&[]));
    assert_eq!(whole.lines().count(), 12);
    let dir = std::env::temp_dir().join(format!("eevdf-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for i in 0..5 {
        let shard = run(&with(&["--shard", &format!("{i}/5"), "--jobs", "1"]));
        let f = dir.join(format!("{i}.jsonl"));
        std::fs::write(&f, shard).unwrap();
        files.push(f.to_string_lossy().into_owned());
    }
    let merge = |fs: &[String], extra: &[&str]| {
        let mut a = vec!["sweep", "merge"];
        a.extend(fs.iter().map(String::as_str));
        a.extend(extra);
        eevdf(&a)
    };
    assert_eq!(ok(merge(&files, &[])), whole);
    let table = ok(merge(&files, &["--format", "table"]));
    assert_eq!(table, run(&with(&["--format", "table"])));
    assert!(table.starts_with("task.hog.slice  features"), "{table}");
    let missing = merge(&files[1..], &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cells missing"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_axes_are_exit_2_before_any_run() {
    for (args, wants) in [
        (
            vec!["--vary", "task.hog.slice=1ms,4"],
            "task.hog.slice = 4: duration `4` has no unit",
        ),
        (vec!["--vary", "slice"], "--vary slice: expected KEY=V1,V2"),
        (vec!["--seeds", "3..1"], "--seeds: `3..1` is empty"),
        (vec!["--shard", "3/3"], "--shard 3/3: expected I/N"),
        (
            vec!["--machine", "smp2,,smp4"],
            "--machine: `smp2,,smp4` has an empty value",
        ),
        (
            vec!["--kernel", "sim,linux"],
            "--kernel: `linux` is neither `sim`, a series nor a file",
        ),
    ] {
        let mut a = vec!["sweep", "default"];
        a.extend(&args);
        let o = eevdf(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(wants), "{args:?}: {err}");
        assert!(o.stdout.is_empty());
    }
}

/// A playground link with a `&sweep=` section, given no axis flag, runs
/// the link's sweep: the grid its flags give, byte for byte.
#[test]
fn a_links_sweep_runs_as_its_flags() {
    let url = ok(eevdf(&["url", "default"]));
    let link = format!(
        "{}&sweep=--seeds+1..2+--vary+task.hog.slice=1ms,4ms",
        url.trim()
    );
    let from_link = eevdf(&["sweep", &link, "--duration", "300ms"]);
    let note = String::from_utf8_lossy(&from_link.stderr).into_owned();
    assert!(
        note.contains("the link's sweep: --vary task.hog.slice=1ms,4ms --seeds 1..2"),
        "{note}"
    );
    let flags = [
        "sweep",
        &link,
        "--duration",
        "300ms",
        "--vary",
        "task.hog.slice=1ms,4ms",
        "--seeds",
        "1..2",
    ];
    let out = ok(from_link);
    assert_eq!(out.lines().count(), 4);
    assert_eq!(out, ok(eevdf(&flags)));
    let bad = eevdf(&["sweep", &format!("{}&sweep=--jobs+2", url.trim())]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown flag `--jobs`"));
}
