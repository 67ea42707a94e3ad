//! Built-in scenarios (presets): small, fast, canonical scenario texts.

/// A built-in scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// Short identifier, e.g. `default`.
    pub name: &'static str,
    /// One line for menus.
    pub title: &'static str,
    /// Canonical scenario text (what [`crate::scenario::Scenario::to_text`] prints).
    pub text: &'static str,
}

/// Every preset; the first is the one the web page opens with.
pub static PRESETS: &[Preset] = &[
    Preset {
        name: "default",
        title: "cyclictest (8 ms slice) next to four 16 ms hogs on 4 CPUs",
        text: "\
eevdf-scenario v1
engine 0.1
machine smp4
kernel v7.1
hz 250
duration 10s
seed 1
task ct kind=timer period=3777us slice=8ms
task hog kind=hog count=4 slice=16ms
end
",
    },
    Preset {
        name: "two-tasks",
        title: "Two hogs on one CPU, nice 0 and nice 5",
        text: "\
eevdf-scenario v1
engine 0.1
machine up
kernel v7.1
hz 1000
duration 2s
seed 1
task a kind=hog
task b kind=hog nice=5
end
",
    },
    Preset {
        name: "preempt-short",
        title: "PREEMPT_SHORT: cyclictest with an 8 ms slice against a 16 ms hog",
        text: "\
eevdf-scenario v1
engine 0.1
machine up
kernel v7.1
hz 250
duration 10s
seed 1
task ct kind=timer period=3777us slice=8ms
task hog kind=hog slice=16ms
end
",
    },
    Preset {
        name: "hackbench-1g",
        title: "cyclictest next to one hackbench group (threads, pipes) on 8 CPUs",
        text: "\
eevdf-scenario v1
engine 0.1
machine smp8
kernel v7.1
hz 250
duration 10s
seed 1
task ct kind=timer period=3777us slice=8ms
task hb kind=hackbench mode=thread ipc=pipe slice=16ms
end
",
    },
];

/// The preset called `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Machine, Scenario, MAX_COLUMNS};
    use eevdf_sim::Workload;

    #[test]
    fn every_preset_parses_and_is_canonical() {
        for p in PRESETS {
            let s = Scenario::parse(p.text).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(s.to_text(), p.text, "{} is not canonical", p.name);
            assert!(p.text.lines().all(|l| l.chars().count() <= MAX_COLUMNS));
            assert!(!s.sim.tasks.is_empty(), "{}", p.name);
            assert!(s.sim.duration_ns <= 10_000_000_000, "{} is slow", p.name);
        }
    }

    #[test]
    fn names_are_unique_and_found() {
        for (i, p) in PRESETS.iter().enumerate() {
            assert!(PRESETS[..i].iter().all(|q| q.name != p.name), "{}", p.name);
            assert_eq!(preset(p.name), Some(p));
            assert!(!p.title.is_empty());
        }
        assert_eq!(PRESETS[0].name, "default");
        assert_eq!(preset("nope"), None);
    }

    #[test]
    fn presets_say_what_they_promise() {
        let get = |n: &str| Scenario::parse(preset(n).unwrap().text).unwrap();
        let d = get("default");
        assert_eq!(d.machine, Machine::Smp(4));
        assert_eq!((d.sim.hz, d.sim.nr_cpus), (250, 4));
        let ct = &d.sim.tasks[0];
        assert_eq!(
            ct.workload,
            Workload::Timer {
                period_ns: 3_777_000,
                run_ns: 20_000
            }
        );
        assert_eq!(ct.slice_ns, Some(8_000_000));
        assert_eq!(d.sim.tasks[1].count, 4);

        let t = get("two-tasks");
        assert_eq!((t.sim.nr_cpus, t.sim.hz), (1, 1000));
        assert_eq!(t.sim.duration_ns, 2_000_000_000);
        assert_eq!(
            t.sim.tasks.iter().map(|t| t.nice).collect::<Vec<_>>(),
            [0, 5]
        );

        let p = get("preempt-short");
        assert_eq!(p.sim.nr_cpus, 1);
        assert_eq!(p.sim.tasks[1].slice_ns, Some(16_000_000));

        let h = get("hackbench-1g");
        assert_eq!(h.sim.nr_cpus, 8);
        assert!(matches!(
            h.sim.tasks[1].workload,
            Workload::Hackbench {
                groups: 1,
                fds: 20,
                threads: true,
                pipe: true,
                ..
            }
        ));
    }
}
