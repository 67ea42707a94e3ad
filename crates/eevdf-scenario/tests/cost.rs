//! The cost model (`eevdf_sim::cost`) against measured runs: its event
//! estimate is within 3x of the events every preset really takes (one
//! preset excepted, below), and the limits refuse what they should with
//! a positioned error.

use eevdf_scenario::presets::PRESETS;
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::cost::Cost;

#[test]
fn the_estimate_is_within_3x_of_every_preset() {
    let mut report = Vec::new();
    for p in PRESETS {
        let mut sc = Scenario::parse(p.text).unwrap();
        // A second is enough to measure a rate; the estimate scales.
        sc.set("duration=1s").unwrap();
        let cost = Cost::of(&sc.sim_config(), sc.machine.nr_cpus());
        let r = eevdf_sim::simulate(sc.sim_config());
        assert!(r.partial.is_none(), "{}: stopped early", p.name);
        let ratio = cost.events as f64 / r.events.max(1) as f64;
        report.push(format!(
            "{:24} estimated {:>9} measured {:>9} x{ratio:.2}",
            p.name, cost.events, r.events
        ));
        // flatten-hackbench may be over by up to 4x: engine 0.11's PELT,
        // which follows a migration, cut its events on rb5 by 14 % in
        // the first second (56,105 to 48,046 against 154,000 estimated)
        // and by 43 % over 3 s. The estimate is in the scenario parser,
        // which the guest links, so retuning it waits for the next
        // reference refresh; an over-estimate only refuses early.
        let over = if p.name == "flatten-hackbench" {
            4.0
        } else {
            3.0
        };
        assert!(
            (1.0 / 3.0..=over).contains(&ratio),
            "{}: estimated {} events, measured {}\n{}",
            p.name,
            cost.events,
            r.events,
            report.join("\n")
        );
    }
    eprintln!("{}", report.join("\n"));
}
