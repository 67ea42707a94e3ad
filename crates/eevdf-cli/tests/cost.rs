//! The cost limits on the command line: an over-budget scenario is bad
//! input (exit 2, positioned, with the numbers), and `--max-events`
//! stops a run cleanly with a partial result. Bounded by event counts,
//! never by timers.

use std::process::{Command, Output};

fn eevdf(name: &str, args: &[&str], scenario: &str) -> Output {
    let dir = std::env::temp_dir().join(format!("eevdf-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.scn"));
    std::fs::write(&path, scenario).unwrap();
    let mut all: Vec<&str> = args.to_vec();
    let p = path.to_str().unwrap().to_string();
    all.insert(1, &p);
    Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(&all)
        .output()
        .unwrap()
}

#[test]
fn a_hackbench_of_131072_threads_is_refused_at_its_line() {
    let text = "eevdf-scenario v1\nmachine smp512\nduration 1s\n\
                task hb kind=hackbench groups=256 fds=256\nend\n";
    let out = eevdf("threads", &["run"], text);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(":4:1: the scenario has 131072 threads"),
        "{err}"
    );
    assert!(err.contains("over the limit of 16384"), "{err}");
}

#[test]
fn an_hour_of_4096_periodic_tasks_on_epyc_is_refused_at_its_duration() {
    let text = "eevdf-scenario v1\nmachine epyc-2x128c\nduration 3600s\n\
                task p kind=periodic count=4096 run=1ms sleep=9ms\nend\n";
    let out = eevdf("events", &["check"], text);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(":3:1: the scenario is estimated at"), "{err}");
}

#[test]
fn max_events_stops_a_run_with_a_partial_result() {
    let text = "eevdf-scenario v1\nmachine up\nduration 10s\n\
                task ct kind=timer period=1ms\ntask hog kind=hog\nend\n";
    let out = eevdf(
        "partial",
        &["run", "--format", "json", "--max-events", "5000"],
        text,
    );
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["events"], 5000);
    assert_eq!(json["partial"]["reason"], "max-events");
    assert_eq!(json["partial"]["max_events"], 5000);
    let sim_ns = json["sim_ns"].as_u64().unwrap();
    assert!(sim_ns > 0 && sim_ns < 10_000_000_000, "{sim_ns}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("the result is partial"));
    // The same budget stops at the same place: a partial result replays.
    let again = eevdf(
        "partial",
        &["run", "--format", "json", "--max-events", "5000"],
        text,
    );
    assert_eq!(out.stdout, again.stdout);
}

#[test]
fn trace_last_writes_only_the_end_of_the_run() {
    let text = "eevdf-scenario v1\nmachine up\nduration 4s\n\
                task ct kind=timer period=1ms\ntask hog kind=hog\nend\n";
    let dir = std::env::temp_dir().join(format!("eevdf-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (all, last) = (dir.join("all.trace"), dir.join("last.trace"));
    let out = eevdf("trace", &["run", "--trace", all.to_str().unwrap()], text);
    assert_eq!(out.status.code(), Some(0));
    let args = [
        "run",
        "--trace",
        last.to_str().unwrap(),
        "--trace-last",
        "1s",
    ];
    let out = eevdf("trace", &args, text);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("trace events to"));
    let count = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| l.contains("sched_switch"))
            .count()
    };
    let (n_all, n_last) = (count(&all), count(&last));
    // A quarter of the run, give or take the first events.
    assert!(
        n_last * 5 < n_all * 2 && n_last * 5 > n_all,
        "{n_last} of {n_all}"
    );
    let first = std::fs::read_to_string(&last).unwrap();
    let ts = first
        .lines()
        .find(|l| l.contains("sched_switch"))
        .and_then(|l| {
            l.split_whitespace()
                .find(|w| w.ends_with(':') && w.contains('.'))
        })
        .map(|w| w.trim_end_matches(':').parse::<f64>().unwrap())
        .unwrap();
    assert!(ts >= 2.99, "first traced event at {ts} s");
}
