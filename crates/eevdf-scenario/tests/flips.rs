//! Every preset's "try this" flip does what the page says it does: its
//! token moves the named task's percentile by at least a fifth, in the
//! stated direction (presets run at most 10 s here, as `eevdf run
//! PRESET --duration 10s`).

use eevdf_scenario::presets::{Flip, PRESETS};
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::{simulate, Nanos, SimResult};

fn run(text: &str, token: Option<&str>) -> SimResult {
    let mut sc = Scenario::parse(text).unwrap();
    if sc.sim.duration_ns > 10_000_000_000 {
        sc.set("duration=10s").unwrap();
    }
    if let Some(t) = token {
        sc.apply_features(t).unwrap();
    }
    simulate(sc.sim_config())
}

fn pct(r: &SimResult, f: &Flip) -> Nanos {
    let n = r.by_name.iter().find(|n| n.name == f.task);
    let l = n.unwrap_or_else(|| panic!("no task {}", f.task)).latency;
    match f.pct {
        "p90" => l.p90,
        "p99" => l.p99,
        "p99.9" => l.p99_9,
        other => panic!("unknown percentile {other}"),
    }
}

#[test]
fn every_flip_moves_its_percentile_as_stated() {
    let flips: Vec<_> = PRESETS
        .iter()
        .flat_map(|p| p.flips.iter().map(move |f| (p, *f)))
        .collect();
    assert!(flips.len() >= 10, "{} presets with a flip", flips.len());
    for (p, f) in flips {
        let (a, b) = (
            pct(&run(p.text, None), &f),
            pct(&run(p.text, Some(f.token)), &f),
        );
        let (lo, hi) = if f.rises { (a, b) } else { (b, a) };
        assert!(
            hi * 4 >= lo * 5 && hi > lo,
            "{}: {} moves {}'s {} from {a} to {b} ns, not {} by a fifth",
            p.name,
            f.token,
            f.task,
            f.pct,
            if f.rises { "up" } else { "down" }
        );
    }
}
