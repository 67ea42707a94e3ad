//! Built-in scenarios (presets): small, fast, canonical scenario texts.

/// A built-in scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// Short identifier, e.g. `default`.
    pub name: &'static str,
    /// One line for menus.
    pub title: &'static str,
    /// The thread it reproduces and the published numbers beside it
    /// (empty for teaching presets without a source).
    pub source: &'static str,
    /// Canonical scenario text (what [`crate::scenario::Scenario::to_text`] prints).
    pub text: &'static str,
    /// The changes that show what the preset is about, if it has any
    /// (a test runs every flip and checks its claim).
    pub flips: &'static [Flip],
}

/// A feature token and the percentile it moves by at least a fifth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flip {
    /// Applied over the preset's features, e.g. `NO_PREEMPT_SHORT`.
    pub token: &'static str,
    /// The task name whose latency moves.
    pub task: &'static str,
    /// `p90`, `p99` or `p99.9`.
    pub pct: &'static str,
    /// Whether the percentile rises (gets worse) with the token.
    pub rises: bool,
}

const fn rises(token: &'static str, task: &'static str, pct: &'static str) -> Flip {
    Flip {
        token,
        task,
        pct,
        rises: true,
    }
}

const fn falls(token: &'static str, task: &'static str, pct: &'static str) -> Flip {
    Flip {
        rises: false,
        ..rises(token, task, pct)
    }
}

/// Every preset; the first is the one the web page opens with.
// The 0/8 series and its v2 ran the same three setups on the RB5, so
// each pair of presets shares one text: a link carries only the text,
// and the page shows both threads' numbers for it.
const RB5_CT_ALONE: &str = "\
eevdf-scenario v1
engine 0.12
machine rb5
kernel v7.1
hz 250
duration 130s
seed 1
task ct kind=timer period=3777us slice=8ms
end
";
const RB5_CT_RTAPP: &str = "\
eevdf-scenario v1
engine 0.12
machine rb5
kernel v7.1
hz 250
duration 130s
seed 1
task ct kind=timer period=3777us slice=8ms
task rt kind=periodic count=16 run=8177us sleep=17777us slice=16ms
end
";
const RB5_CT_HACKBENCH: &str = "\
eevdf-scenario v1
engine 0.12
machine rb5
kernel v7.1
hz 250
duration 130s
seed 1
task ct kind=timer period=3777us slice=8ms
task hb kind=hackbench mode=thread ipc=pipe slice=16ms
end
";

pub static PRESETS: &[Preset] = &[
    Preset {
        name: "default",
        title: "One CPU: ct (500 us slice) and tt (16 ms slice) wake on timers beside two 16 ms hogs",
        source: "Each Try button flips one feature. On a real 7.2.13 kernel (five seeds, tests/kernel-ref/default.7.2.jsonl, `make default-ref`) NO_PREEMPT_SHORT raises ct's p99 from 1.36 to 2.98 ms; NO_RUN_TO_PARITY lowers it to 0.67 ms (a picked hog is no longer protected for up to its 16 ms request, only for the 0.7 ms base slice); NEXT_BUDDY lowers tt's p99 from 1.25 ms to 97 us (the woken tt is picked first). The simulator moves each the same way.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.2
hz 250
duration 10s
seed 1
task ct kind=timer period=1ms slice=500us
task tt kind=timer period=3777us slice=16ms
task hog kind=hog count=2 slice=16ms
end
",
        flips: &[
            rises("NO_PREEMPT_SHORT", "ct", "p99"),
            falls("NO_RUN_TO_PARITY", "ct", "p99"),
            falls("NEXT_BUDDY", "tt", "p99"),
        ],
    },
    Preset {
        name: "smp4-hogs",
        title: "cyclictest (8 ms slice) next to four 16 ms hogs on 4 CPUs",
        source: "",
        text: "\
eevdf-scenario v1
engine 0.12
machine smp4
kernel v7.1
hz 250
duration 10s
seed 1
task ct kind=timer period=3777us slice=8ms
task hog kind=hog count=4 slice=16ms
end
",
        flips: &[],
    },
    Preset {
        name: "two-tasks",
        title: "Two hogs on one CPU, nice 0 and nice 5",
        source: "",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.1
hz 1000
duration 2s
seed 1
task a kind=hog
task b kind=hog nice=5
end
",
        flips: &[],
    },
    Preset {
        name: "preempt-short",
        title: "PREEMPT_SHORT: cyclictest (8 ms slice) against two 16 ms rt-app tasks",
        source: "Teaching preset: flip PREEMPT_SHORT and watch ct's p99 go from near the floor to the competitors' protection window.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.1
hz 250
duration 10s
seed 1
task ct kind=timer period=3777us slice=8ms
task rt kind=periodic count=2 run=8177us sleep=17777us slice=16ms
end
",
        flips: &[rises("NO_PREEMPT_SHORT", "ct", "p99")],
    },
    Preset {
        name: "hackbench-1g",
        title: "cyclictest next to one hackbench group (threads, pipes) on 8 CPUs",
        source: "",
        text: "\
eevdf-scenario v1
engine 0.12
machine smp8
kernel v7.1
hz 250
duration 10s
seed 1
task ct kind=timer period=3777us slice=8ms
task hb kind=hackbench mode=thread ipc=pipe slice=16ms
end
",
        flips: &[rises("NO_PREEMPT_SHORT", "ct", "p99")],
    },
    Preset {
        name: "t1-clear-buddies",
        title: "Seed 000 T1: hackbench in /test-A, cyclictest in /test-B, 8/20 ms slices",
        source: "[PATCH] sched/fair: clear buddies for preempt_short (Vincent Guittot, 10 Apr 2026). Published, cyclictest us, tip 8/20 vs tip+patch: P99 1273 / 74, P99.9 4751 / 663, Max 8655 / 3934; default 2.8 ms slices: P99 1047, P99.9 2431, Max 4694. Toggle: PS_CLEAR_BUDDY (on in v7.1; NO_PS_CLEAR_BUDDY for tip).",
        text: "\
eevdf-scenario v1
engine 0.12
machine rb5
kernel v7.1
hz 250
duration 63s
seed 1
group /A weight=100
group /B weight=100
task hb kind=hackbench groups=2 mode=thread ipc=pipe slice=20ms group=/A
task ct kind=timer period=2777us slice=8ms group=/B
end
",
        flips: &[rises("NO_PS_CLEAR_BUDDY", "ct", "p99")],
    },
    Preset {
        name: "s08-ct-alone",
        title: "0/8 series: cyclictest alone, 8 ms slice",
        source: "[PATCH 0/8] sched/fair: Improving latency of short slice tasks. Published tip vs series: P99 91 / 90, P99.9 126 / 108, Max 2273 / 1018. Series toggles: PROT_SET=CAP_MIN_SLICE PROT_UPDATE=ALIGN PS_SHORT_BUDDY_TIE LAG_DECAY_SLEEP LAG_RESET_IDLE MINSLICE_PERCPU WA_SLICE SIS_SLICE.",
        text: RB5_CT_ALONE,
        flips: &[],
    },
    Preset {
        name: "s08-ct-rtapp",
        title: "0/8 series: cyclictest 8 ms + 16 rt-app tasks 16 ms",
        source: "[PATCH 0/8] Improving latency of short slice tasks. Published tip vs series: P99 66 / 66, P99.9 1104 / 832, Max 6165 / 3041.",
        text: RB5_CT_RTAPP,
        flips: &[rises("NO_PREEMPT_SHORT", "ct", "p99")],
    },
    Preset {
        name: "s08-ct-hackbench",
        title: "0/8 series: cyclictest 8 ms + hackbench 1 group 16 ms",
        source: "[PATCH 0/8] Improving latency of short slice tasks. Published tip vs series: P99 75 / 75, P99.9 730 / 637, Max 15996 / 8124.",
        text: RB5_CT_HACKBENCH,
        flips: &[rises("NO_PREEMPT_SHORT", "ct", "p99")],
    },
    Preset {
        name: "v2-ct-alone",
        title: "v2 0/6 series: cyclictest alone, 8 ms slice",
        source: "[PATCH v2 0/6] sched/fair: Improve scheduling latency of short slice task. Published tip 8 ms / series 8 ms / tip 2.8 ms: P90 80/79/56, P99 93/90/60, P99.9 184/145/67, Max 7526/2649/2647. Series toggles: PS_SET_NEXT_BUDDY PROT_LAG_AWARE PS_IGNORE_NEED_RESCHED PS_CANCEL_IF_ELIGIBLE PROT_ALWAYS_UPDATE PROT_SET=SHORT_AVG.",
        text: RB5_CT_ALONE,
        flips: &[],
    },
    Preset {
        name: "v2-ct-rtapp",
        title: "v2 0/6 series: cyclictest 8 ms + 16 rt-app 16 ms",
        source: "[PATCH v2 0/6] Improve scheduling latency of short slice task. Published tip 8/16, series 8/16, tip 2.8/2.8: P90 61/66/440, P99 8453/2359/3167, P99.9 14053/5026/5290, Max 20924/7851/8727.",
        text: RB5_CT_RTAPP,
        flips: &[rises("NO_PREEMPT_SHORT", "ct", "p99")],
    },
    Preset {
        name: "v2-ct-hackbench",
        title: "v2 0/6 series: cyclictest 8 ms + hackbench 16 ms",
        source: "[PATCH v2 0/6] Improve scheduling latency of short slice task. Published tip 8/16, series 8/16, tip 2.8/2.8: P90 63/63/1237, P99 76/79/4575, P99.9 2827/1021/8312, Max 15795/4766/14519.",
        text: RB5_CT_HACKBENCH,
        flips: &[rises("NO_PREEMPT_SHORT", "ct", "p99")],
    },
    Preset {
        name: "v2-ct-rtapp-default",
        title: "v2 0/6 default-slice column: cyclictest + rt-app, 2.8 ms",
        source: "[PATCH v2 0/6] default-slice column (tip 2.8/2.8): P90 440, P99 3167, P99.9 5290, Max 8727.",
        text: "\
eevdf-scenario v1
engine 0.12
machine rb5
kernel v7.1
hz 250
duration 130s
seed 1
task ct kind=timer period=3777us
task rt kind=periodic count=16 run=8177us sleep=17777us
end
",
        flips: &[],
    },
    Preset {
        name: "nb-v5-schbench",
        title: "NEXT_BUDDY v5 (6.19-rc1): schbench on a 2-socket Xeon",
        source: "[PATCH v5] sched/fair: Reimplement NEXT_BUDDY (Mel Gorman). Published schbench wakeup latency us (80 workers), vanilla 6.18-rc1 vs v5: p50 7.17/6.00, p90 46.56/19.78, p99 119.61/89.94, p99.9 3193.78/328.22; RPS 8987/9218. Two message threads (one per node) of 40 workers; the request and think times give the published RPS (about 9,900 simulated) and let requests queue. The simulator wakes a message thread's workers together. Compare A --set kernel=v6.18 with B --set kernel=v6.18 --features 'NEXT_BUDDY NB_MODE=MEL_V5 NB_RESCHED_INELIGIBLE_WAKER' (--set kernel alone also flips NI_RANDOM).",
        text: "\
eevdf-scenario v1
engine 0.12
machine xeon-4314-2s
kernel v6.19-rc1
hz 250
duration 30s
seed 1
task sb kind=schbench messages=2 workers=40 request=4ms think=8ms
end
",
        flips: &[rises("NO_NEXT_BUDDY", "sb", "p99.9")],
    },
    Preset {
        name: "nb-v5-hackbench",
        title: "NEXT_BUDDY v5 (6.19-rc1): hackbench process pipes on a 2-socket Xeon",
        source: "[PATCH v5] Reimplement NEXT_BUDDY. Published hackbench-process-pipes seconds, 6.18-rc1 vs v5: 1 group 0.2657/0.2150, 12 groups 1.1500/1.1263, 30 groups 2.3207/2.5053 (-8 %); Graviton3 (Ryan): process-pipes-12 -19.89 %.",
        text: "\
eevdf-scenario v1
engine 0.12
machine xeon-4314-2s
kernel v6.19-rc1
hz 250
duration 10s
seed 1
task hb kind=hackbench groups=12 ipc=pipe
end
",
        flips: &[],
    },
    Preset {
        name: "madadi-starvation",
        title: "NEXT_BUDDY (6.19-rc1): schbench next to CPU hogs (after Madadi's report)",
        source: "Madadi Vineeth Reddy on the NEXT_BUDDY thread measured stress-ng bogo-ops -64 % next to schbench with v4 of the patch on IBM Power, and bisected a DayTrader regression to the merged v5. This runs v5 (the engine has no v4) on a symmetric SMT laptop stand-in (the thread does not describe the Power machine), so it shows what v5 does there, not his numbers. Since engine 0.8 the hogs here gain CPU with NEXT_BUDDY (a worker woken on the message thread's CPU runs before its next wake call, so the message thread runs fewer rounds), while on one CPU they lose it, as on a real 7.2 kernel (tests/seeds.rs). Compare with --features NO_NEXT_BUDDY.",
        text: "\
eevdf-scenario v1
engine 0.12
machine laptop-4c8t
kernel v6.19-rc1
hz 250
duration 30s
seed 1
task sb kind=schbench messages=4 workers=16 request=50us think=200us
task hog kind=hog count=8
end
",
        flips: &[],
    },
    Preset {
        name: "flatten-hackbench",
        title: "Flatten the pick v2 review: hackbench 8 groups on rb5",
        source: "[PATCH v2] sched/fair: Flatten the pick (review, May 2026). Published seconds on RB5 with EAS: tip 2.8 ms 0.748, tip 16 ms 0.621, +flatten 2.8 ms 1.915, +flatten 16 ms 0.689. The flattened hierarchy is not modelled yet; this runs the tip side.",
        text: "\
eevdf-scenario v1
engine 0.12
machine rb5
kernel v7.1
hz 250
duration 10s
seed 1
task hb kind=hackbench groups=8 mode=thread ipc=pipe
end
",
        flips: &[],
    },
    Preset {
        name: "lag-across-sleep",
        title: "Teaching: a task keeps its lag across a sleep",
        source: "Teaching preset: the sleeper saves its lag when it sleeps and gets it back (inflated by (W + w) / W) when it wakes.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.1
hz 1000
duration 2s
seed 1
task sleeper kind=periodic run=3ms sleep=7ms
task hog kind=hog
end
",
        flips: &[rises("NO_PLACE_LAG", "sleeper", "p90")],
    },
    Preset {
        name: "run-to-parity",
        title: "Teaching: RUN_TO_PARITY and the ping-pong vprot prevents",
        source: "Teaching preset (v2 6/6 review): two tasks near V; with NO_RUN_TO_PARITY or PROT_SET=SHORT_AVG they are re-evaluated every tick. Compare switches with --features PROT_SET=SHORT_AVG.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.1
hz 1000
duration 2s
seed 1
task a kind=hog slice=3ms
task b kind=hog slice=2ms
end
",
        flips: &[],
    },
    Preset {
        name: "fidelity-ct-alone",
        title: "Fidelity row: cyclictest alone (one CPU; kernel reference data)",
        source: "Fidelity set: these numbers are checked against Debian's 7.2 and 6.12 kernels under QEMU -icount (eevdf kernel run, seeds 1-5); see docs/fidelity.md.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.2
hz 250
duration 10s
seed 1
task ct kind=timer period=1ms slice=100us
end
",
        flips: &[],
    },
    Preset {
        name: "fidelity-ct-1hog",
        title: "Fidelity row: cyclictest against one CPU hog (one CPU; kernel reference data)",
        source: "Fidelity set: these numbers are checked against Debian's 7.2 and 6.12 kernels under QEMU -icount (eevdf kernel run, seeds 1-5); see docs/fidelity.md.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.2
hz 250
duration 10s
seed 1
task ct kind=timer period=1ms slice=100us
task hog kind=hog
end
",
        flips: &[],
    },
    Preset {
        name: "fidelity-ct-4hog",
        title: "Fidelity row: cyclictest against four CPU hogs (one CPU; kernel reference data)",
        source: "Fidelity set: these numbers are checked against Debian's 7.2 and 6.12 kernels under QEMU -icount (eevdf kernel run, seeds 1-5); see docs/fidelity.md.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.2
hz 250
duration 10s
seed 1
task ct kind=timer period=1ms slice=100us
task hog kind=hog count=4
end
",
        flips: &[rises("NO_PREEMPT_SHORT", "ct", "p90")],
    },
    Preset {
        name: "fidelity-ct-rtapp",
        title: "Fidelity row: cyclictest against two rt-app tasks (8.2/17.8 ms) (one CPU; kernel reference data)",
        source: "Fidelity set: these numbers are checked against Debian's 7.2 and 6.12 kernels under QEMU -icount (eevdf kernel run, seeds 1-5); see docs/fidelity.md.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.2
hz 250
duration 10s
seed 1
task ct kind=timer period=1ms slice=100us
task rt kind=periodic count=2 run=8177us sleep=17777us
end
",
        flips: &[rises("NO_PREEMPT_SHORT", "ct", "p99")],
    },
    Preset {
        name: "fidelity-ct-hackbench",
        title: "Fidelity row: cyclictest against hackbench (1 group, 10 fds, threads, pipes) (one CPU; kernel reference data)",
        source: "Fidelity set: these numbers are checked against Debian's 7.2 and 6.12 kernels under QEMU -icount (eevdf kernel run, seeds 1-5); see docs/fidelity.md.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.2
hz 250
duration 10s
seed 1
task ct kind=timer period=1ms slice=100us
task hb kind=hackbench fds=10 mode=thread ipc=pipe
end
",
        flips: &[rises("NO_PREEMPT_SHORT", "ct", "p99")],
    },    Preset {
        name: "fidelity-v2-rtapp",
        title: "Fidelity row: the v2 thread's cyclictest (3777 us, 8 ms slice) against two rt-app tasks with 16 ms slices (one CPU; kernel reference data)",
        source: "Fidelity set: these numbers are checked against Debian's 7.2 and 6.12 kernels under QEMU -icount (eevdf kernel run, seeds 1-5); see docs/fidelity.md. The setup of the 0/6 v2 thread (seeds/002) on one CPU: 2xNR_CPUS rt-app tasks, its hackbench with fewer fds.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.2
hz 250
duration 38s
seed 1
task ct kind=timer period=3777us slice=8ms
task rt kind=periodic count=2 run=8177us sleep=17777us slice=16ms
end
",
        flips: &[],
    },
    Preset {
        name: "fidelity-v2-hackbench",
        title: "Fidelity row: the v2 thread's cyclictest (3777 us, 8 ms slice) against hackbench with 16 ms slices (one CPU; kernel reference data)",
        source: "Fidelity set: these numbers are checked against Debian's 7.2 and 6.12 kernels under QEMU -icount (eevdf kernel run, seeds 1-5); see docs/fidelity.md. The setup of the 0/6 v2 thread (seeds/002) on one CPU: 2xNR_CPUS rt-app tasks, its hackbench with fewer fds.",
        text: "\
eevdf-scenario v1
engine 0.12
machine up
kernel v7.2
hz 250
duration 38s
seed 1
task ct kind=timer period=3777us slice=8ms
task hb kind=hackbench fds=10 mode=thread ipc=pipe slice=16ms
end
",
        flips: &[],
    },
];

/// The preset called `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Every preset whose text is `text` (canonical text: print a parsed
/// scenario first). Twins that share a text come in table order.
pub fn presets_with_text(text: &str) -> impl Iterator<Item = &'static Preset> + '_ {
    PRESETS.iter().filter(move |p| p.text == text)
}

/// The presets to show beside `text`: all its twins, the one picked by
/// name (`chosen`, the menu's last choice) first, as the menu's value.
pub fn presets_for(text: &str, chosen: Option<&str>) -> Vec<&'static Preset> {
    let mut twins: Vec<&'static Preset> = presets_with_text(text).collect();
    if let Some(i) = chosen.and_then(|c| twins.iter().position(|p| p.name == c)) {
        let p = twins.remove(i);
        twins.insert(0, p);
    }
    twins
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
            // Seed presets keep the published run length (130 s at most).
            assert!(s.sim.duration_ns <= 130_000_000_000, "{} is slow", p.name);
        }
    }

    #[test]
    fn seed_presets_cite_their_thread_and_run() {
        for p in PRESETS.iter().filter(|p| !p.source.is_empty()) {
            // `eevdf presets` lists names in a 20-column field; the
            // fidelity rows keep the report's names (one is 21).
            assert!(p.name.len() <= 21, "{}", p.name);
            let mut s = Scenario::parse(p.text).unwrap();
            s.set("duration=200ms").unwrap();
            let r = eevdf_sim::simulate(s.sim_config());
            assert!(r.events > 0, "{} does not run", p.name);
        }
        let seeds = PRESETS
            .iter()
            .filter(|p| p.source.contains("Published"))
            .count();
        assert!(seeds >= 10, "{seeds} presets with published numbers");
    }

    #[test]
    fn twins_are_found_by_their_shared_text() {
        let names = |p: &str| -> Vec<&str> {
            presets_with_text(preset(p).unwrap().text)
                .map(|p| p.name)
                .collect()
        };
        for (a, b) in [
            ("s08-ct-alone", "v2-ct-alone"),
            ("s08-ct-rtapp", "v2-ct-rtapp"),
            ("s08-ct-hackbench", "v2-ct-hackbench"),
        ] {
            assert_eq!(names(a), [a, b]);
            assert_eq!(names(b), [a, b]);
        }
        let twins = PRESETS.iter().filter(|p| names(p.name).len() > 1).count();
        assert_eq!(twins, 6, "a new pair of presets with one text");
        let text = preset("v2-ct-rtapp").unwrap().text;
        let shown = |c| -> Vec<&str> { presets_for(text, c).iter().map(|p| p.name).collect() };
        assert_eq!(shown(Some("v2-ct-rtapp")), ["v2-ct-rtapp", "s08-ct-rtapp"]);
        assert_eq!(shown(Some("s08-ct-rtapp")), ["s08-ct-rtapp", "v2-ct-rtapp"]);
        assert_eq!(shown(None), ["s08-ct-rtapp", "v2-ct-rtapp"]);
        assert_eq!(shown(Some("smp4-hogs")), ["s08-ct-rtapp", "v2-ct-rtapp"]);
        assert!(presets_for("eevdf-scenario v1\nend\n", None).is_empty());
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
        // The default is one CPU (the kernel reference covers it) and
        // shows the three features people flip first.
        let d = get("default");
        assert_eq!(d.machine.nr_cpus(), 1);
        let tokens: Vec<&str> = preset("default")
            .unwrap()
            .flips
            .iter()
            .map(|f| f.token)
            .collect();
        for t in ["NO_PREEMPT_SHORT", "NO_RUN_TO_PARITY", "NEXT_BUDDY"] {
            assert!(tokens.contains(&t), "the default flips {t}");
        }

        let d = get("smp4-hogs");
        assert_eq!(d.machine, Machine::Smp(4));
        assert_eq!((d.sim.hz, d.machine.nr_cpus()), (250, 4));
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
        assert_eq!((t.machine.nr_cpus(), t.sim.hz), (1, 1000));
        assert_eq!(t.sim.duration_ns, 2_000_000_000);
        assert_eq!(
            t.sim.tasks.iter().map(|t| t.nice).collect::<Vec<_>>(),
            [0, 5]
        );

        let p = get("preempt-short");
        assert_eq!(p.machine.nr_cpus(), 1);
        assert_eq!(p.sim.tasks[1].slice_ns, Some(16_000_000));

        let h = get("hackbench-1g");
        assert_eq!(h.machine.nr_cpus(), 8);
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
