//! `eevdf-guest local`: the whole run on this host (one process per
//! directive), its report in the simulator's shape.

use std::process::Command;

use eevdf_scenario::guest::{GuestReport, BEGIN_MARK, END_MARK};
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::Sim;

const SCENARIO: &str = "eevdf-scenario v1\nmachine smp2\nduration 400ms\n\
    task ct count=2 kind=timer period=1ms run=10us\n\
    task hog kind=hog nice=5\n\
    task hb kind=hackbench fds=2 loops=20 ipc=pipe\n\
    task sb kind=schbench workers=2\n\
    end\n";

fn local(text: &str, name: &str) -> (GuestReport, i32) {
    let path = std::env::temp_dir().join(format!("eevdf-guest-{}-{name}.txt", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_eevdf-guest"))
        .arg("local")
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let json = String::from_utf8(out.stdout).unwrap();
    let log = format!("{BEGIN_MARK}\n{}\n{END_MARK}\n", json.trim_end());
    (
        GuestReport::parse(&log).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn a_local_run_reports_every_thread_in_the_simulators_order() {
    let (r, code) = local(SCENARIO, "all");
    assert_eq!((r.error.as_deref(), code), (None, 0), "{r:?}");
    let sc = Scenario::parse(SCENARIO).unwrap();
    let sim = Sim::new(sc.sim_config()).finish(0);
    let got: Vec<(&str, &str)> = r
        .threads
        .iter()
        .map(|t| (t.name.as_str(), t.role.as_str()))
        .collect();
    let want: Vec<(&str, &str)> = sim
        .tasks
        .iter()
        .map(|t| (t.name.as_str(), t.role.as_str()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(r.window_ns, 400_000_000);
    assert_eq!(r.hackbench[0].messages, 2 * 2 * 20);
    assert!(r.schbench[0].requests > 0);
    assert!(!r.cpus.is_empty());
    // The host report converts like a kernel run's.
    let res = r.to_sim_result(&sc).unwrap();
    assert_eq!(res.tasks.len(), sim.tasks.len());
}

#[test]
fn refusals_are_reports_with_an_error() {
    let too_many = "eevdf-scenario v1\ntask a count=4096 kind=hog\ntask b kind=hog\nend\n";
    let (r, code) = local(too_many, "big");
    assert!(r.error.unwrap().contains("4097 threads"));
    assert_eq!(code, 1);
    let (r, _) = local("not a scenario\n", "bad");
    assert!(r.error.unwrap().contains("scenario"));
}
