//! The format's unit tests. They reach the private lexing and building
//! helpers, so they stay a child module; the property tests are in
//! `props.rs` beside them.

use super::*;
use eevdf_core::features::{NbMode, ProtSet};

pub(super) const EXAMPLE: &str = "\
eevdf-scenario v1
engine 0.1
machine smp4
kernel v7.1
hz 250
duration 130s
seed 1
preempt full
features NO_RUN_TO_PARITY PREEMPT_SHORT PS_SET_NEXT_BUDDY
sysctl base_slice_ns=2800000 migration_cost_ns=500000
costs switch=2us wake=5us migrate=20us
group /test-B weight=100
task ct kind=timer period=3777us run=20us slice=8ms group=/test-B
task rtapp count=16 kind=periodic run=8177us sleep=17777us slice=16ms
task hb kind=hackbench groups=1 fds=20 mode=thread ipc=pipe slice=16ms
task hog count=2 kind=hog nice=5 cpus=0-3
end
";

pub(super) const EXAMPLE_CANONICAL: &str = "\
eevdf-scenario v1
engine 0.1
machine smp4
kernel v7.1
hz 250
duration 130s
seed 1
preempt full
features NO_RUN_TO_PARITY PS_SET_NEXT_BUDDY
sysctl base_slice_ns=2800000 migration_cost_ns=500000
group /test-B weight=100
task ct kind=timer period=3777us slice=8ms group=/test-B
task rtapp kind=periodic count=16 run=8177us sleep=17777us slice=16ms
task hb kind=hackbench mode=thread ipc=pipe slice=16ms
task hog kind=hog count=2 nice=5 cpus=0-3
end
";

/// A minimal scenario around some body lines.
fn wrap(body: &str) -> String {
    format!("{HEADER}\n{body}\nend\n")
}

fn err(text: &str) -> ParseError {
    match Scenario::parse(text) {
        Ok(s) => panic!("parsed:\n{text}\nas\n{}", s.to_text()),
        Err(e) => e,
    }
}

#[track_caller]
fn err_at(text: &str, line: usize, column: usize, words: &[&str]) -> ParseError {
    let e = err(text);
    assert_eq!((e.line, e.column), (line, column), "{e}");
    let all = format!("{} {}", e.message, e.hint);
    for w in words {
        assert!(all.contains(w), "`{w}` not in: {e}");
    }
    assert!(!e.message.is_empty() && !e.hint.is_empty(), "{e}");
    e
}

#[test]
fn warmup_is_canonical_after_duration_and_left_out_at_zero() {
    let s = Scenario::parse(&wrap("seed 2\nwarmup 1500ms\nduration 3s")).unwrap();
    assert_eq!(s.sim.warmup_ns, 1_500_000_000);
    let t = s.to_text();
    assert!(t.contains("duration 3s\nwarmup 1500ms\nseed 2\n"), "{t}");
    assert_eq!(Scenario::parse(&t).unwrap(), s);
    let none = Scenario::parse(&wrap("warmup 0")).unwrap();
    assert_eq!(none.sim.warmup_ns, 0);
    assert!(!none.to_text().contains("warmup"));
    let mut set = Scenario::parse(&wrap("duration 2s")).unwrap();
    set.set("warmup=500ms").unwrap();
    assert_eq!(set.sim.warmup_ns, 500_000_000);
}

#[test]
fn warmup_must_leave_something_to_measure() {
    err_at(
        &wrap("duration 2s\nwarmup 2s"),
        3,
        1,
        &["warmup 2s", "duration 2s", "shorter"],
    );
    err_at(&wrap("warmup 1s\nwarmup 1s"), 3, 1, &["duplicate `warmup`"]);
    err_at(&wrap("warmup 1"), 2, 8, &["unit"]);
    let mut sc = Scenario::parse(&wrap("duration 2s")).unwrap();
    assert!(sc.set("warmup=3s").is_err());
}

#[test]
fn example_parses_to_the_expected_config() {
    let s = Scenario::parse(EXAMPLE).unwrap();
    let sim = &s.sim_config();
    assert_eq!(s.engine, "0.1");
    assert_eq!(s.machine, Machine::Smp(4));
    assert_eq!(sim.nr_cpus, 4);
    assert_eq!(sim.hz, 250);
    assert_eq!(sim.duration_ns, 130 * S);
    assert_eq!(sim.seed, 1);
    assert_eq!(sim.preempt, PreemptModel::Full);
    assert_eq!(sim.profile, Profile::V7_1);
    assert_eq!(s.features.profile, Profile::V7_1);
    assert_eq!(sim.features, s.features.features);
    assert!(!sim.features.run_to_parity);
    assert!(sim.features.preempt_short && sim.features.ps_set_next_buddy);
    assert!(sim.features.place_lag && !sim.features.next_buddy);
    assert_eq!(sim.sysctl.base_slice_ns, Some(2_800_000));
    assert_eq!(sim.sysctl.migration_cost_ns, Some(500_000));
    assert_eq!(sim.costs, Costs::default());
    assert_eq!(
        sim.groups,
        [GroupSpec {
            path: "/test-B".into(),
            weight: 100,
            idle: false
        }]
    );
    let t = &sim.tasks;
    assert_eq!(t.len(), 4);
    assert_eq!(t[0].name, "ct");
    assert_eq!(
        t[0].workload,
        Workload::Timer {
            period_ns: 3_777_000,
            run_ns: 20_000
        }
    );
    assert_eq!(t[0].slice_ns, Some(8 * MS));
    assert_eq!(t[0].group.as_deref(), Some("/test-B"));
    assert_eq!((t[0].count, t[0].nice, t[0].cpus.as_ref()), (1, 0, None));
    assert_eq!(t[1].count, 16);
    assert_eq!(
        t[1].workload,
        Workload::Periodic {
            run_ns: 8_177_000,
            sleep_ns: 17_777_000,
            period_ns: None
        }
    );
    assert_eq!(t[1].slice_ns, Some(16 * MS));
    assert_eq!(
        t[2].workload,
        Workload::Hackbench {
            groups: 1,
            fds: 20,
            threads: true,
            pipe: true,
            loops: 0,
            send_ns: 2_000,
            recv_ns: 2_000,
            pipe_msgs: 655
        }
    );
    assert_eq!((t[3].count, t[3].nice), (2, 5));
    assert_eq!(t[3].workload, Workload::Hog);
    assert_eq!(t[3].cpus, Some(vec![0, 1, 2, 3]));
    assert_eq!(t[3].policy, Policy::Normal);
    assert_eq!(
        (t[3].slack_ns, t[3].start_ns, t[3].group.as_ref()),
        (None, 0, None)
    );
}

#[test]
fn example_prints_canonically_and_round_trips() {
    let s = Scenario::parse(EXAMPLE).unwrap();
    assert_eq!(s.to_text(), EXAMPLE_CANONICAL);
    let back = Scenario::parse(EXAMPLE_CANONICAL).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.to_text(), EXAMPLE_CANONICAL);
    assert!(s.validate().is_ok());
}

#[test]
fn defaults_and_leniency() {
    let s = Scenario::parse("# a comment\n\n  eevdf-scenario   v1  # hi\r\nend\n# bye\n").unwrap();
    assert_eq!(s, Scenario::default());
    assert_eq!(s.engine, ENGINE_VERSION);
    assert_eq!(s.machine, Machine::Smp(1));
    let sim = &s.sim_config();
    assert_eq!((sim.nr_cpus, sim.hz, sim.seed), (1, 250, 1));
    // No `preempt` line: the default profile's model.
    assert_eq!((sim.duration_ns, sim.preempt), (10 * S, PreemptModel::Lazy));
    assert_eq!(sim.profile, Profile::V7_2);
    assert!(sim.tasks.is_empty() && sim.groups.is_empty());
    assert_eq!(
        s.to_text(),
        "eevdf-scenario v1\nengine 0.12\nmachine up\nkernel v7.2\nhz 250\n\
         duration 10s\nseed 1\nend\n"
    );
    // Machine may come after the tasks; features before the kernel.
    let s = Scenario::parse(&wrap(
        "task a kind=hog cpus=7,0-2,1\nfeatures NB_MODE=mainline\nkernel 6.19-rc1\n\
         machine smp8 # eight",
    ))
    .unwrap();
    assert_eq!(s.sim.tasks[0].cpus, Some(vec![0, 1, 2, 7]));
    assert_eq!(s.features.features.nb_mode, NbMode::Mainline);
    assert_eq!(s.features.profile, Profile::V6_19Rc1);
    assert!(s.to_text().contains("\nkernel v6.19-rc1\n"));
    assert!(s.to_text().contains("cpus=0-2,7"));
    assert!(s.to_text().contains("\nfeatures NB_MODE=mainline\n"));
}

#[test]
fn every_key_round_trips() {
    let text = wrap(
        "machine smp16\nkernel tip-2026-09\nhz 1000\nduration 1.5s\nseed 18446744073709551615\n\
         preempt lazy\nfeatures PROT_INELIGIBLE,TTWU_QUEUE NO_UTIL_EST\n\
         features LAG_CLAMP=2SLICE_TICK\nsysctl base_slice_ns=2.8ms\n\
         sysctl migration_cost_ns=0\ncosts switch=0 migrate=1.5us\n\
         group /a weight=50 idle\ngroup /b idle=0 weight=10000\n\
         task t kind=timer period=1ms run=0.05ms policy=batch slack=0s\n\
         task p kind=periodic run=1ms period=10ms start=5ms group=/a\n\
         task q kind=periodic run=1ms period=10ms sleep=2ms nice=-20\n\
         task h kind=hackbench groups=2 fds=4 loops=100 send=1us recv=3us\n\
         task h2 kind=hackbench pipe_msgs=10 mode=process ipc=socket\n\
         task s kind=schbench messages=2 workers=8 request=50us think=0\n\
         task i kind=hog policy=idle cpus=15 group=/b count=4096 slice=0.1ms",
    );
    let s = Scenario::parse(&text).unwrap();
    let sim = &s.sim_config();
    assert_eq!((sim.nr_cpus, sim.hz, sim.seed), (16, 1000, u64::MAX));
    assert_eq!(sim.duration_ns, 1_500 * MS);
    assert_eq!(sim.preempt, PreemptModel::Lazy);
    assert_eq!(sim.features.prot_set, ProtSet::Ineligible);
    assert_eq!(
        s.features.not_modelled,
        [
            ("TTWU_QUEUE".to_string(), true),
            ("UTIL_EST".to_string(), false)
        ]
    );
    assert_eq!(sim.sysctl.base_slice_ns, Some(2_800_000));
    assert_eq!(sim.sysctl.migration_cost_ns, Some(0));
    assert_eq!(
        (sim.costs.switch_ns, sim.costs.wake_ns, sim.costs.migrate_ns),
        (0, 5_000, 1_500)
    );
    assert!(sim.groups[0].idle && !sim.groups[1].idle);
    assert_eq!(sim.groups[1].weight, 10_000);
    let t = &sim.tasks;
    assert_eq!(
        t[0].workload,
        Workload::Timer {
            period_ns: MS,
            run_ns: 50_000
        }
    );
    assert_eq!((t[0].policy, t[0].slack_ns), (Policy::Batch, Some(0)));
    assert_eq!(
        t[1].workload,
        Workload::Periodic {
            run_ns: MS,
            sleep_ns: 0,
            period_ns: Some(10 * MS)
        }
    );
    assert_eq!(t[1].start_ns, 5 * MS);
    assert_eq!(t[2].nice, -20);
    assert!(matches!(
        t[3].workload,
        Workload::Hackbench {
            groups: 2,
            fds: 4,
            loops: 100,
            send_ns: 1_000,
            recv_ns: 3_000,
            ..
        }
    ));
    assert!(matches!(
        t[4].workload,
        Workload::Hackbench {
            threads: false,
            pipe: false,
            pipe_msgs: 10,
            ..
        }
    ));
    assert_eq!(
        t[5].workload,
        Workload::Schbench {
            message_threads: 2,
            workers: 8,
            request_ns: 50_000,
            sleep_ns: 0
        }
    );
    assert_eq!((t[6].count, t[6].policy), (4096, Policy::Idle));
    assert_eq!(t[6].slice_ns, Some(100_000));
    let printed = s.to_text();
    let expected_tail = "\
preempt lazy
features PROT_SET=INELIGIBLE LAG_CLAMP=2slice_tick TTWU_QUEUE
features NO_UTIL_EST
sysctl base_slice_ns=2800000 migration_cost_ns=0
costs switch=0s migrate=1500ns
group /a weight=50 idle
group /b weight=10000
task t kind=timer period=1ms run=50us policy=batch slack=0s
task p kind=periodic run=1ms period=10ms group=/a start=5ms
task q kind=periodic run=1ms sleep=2ms period=10ms nice=-20
task h kind=hackbench groups=2 fds=4 loops=100 send=1us recv=3us
task h2 kind=hackbench pipe_msgs=10
task s kind=schbench messages=2 workers=8 request=50us think=0s
task i kind=hog count=4096 policy=idle slice=100us cpus=15 group=/b
end
";
    assert!(printed.ends_with(expected_tail), "{printed}");
    assert!(printed.starts_with(
        "eevdf-scenario v1\nengine 0.12\nmachine smp16\nkernel tip-2026-09\nhz 1000\n\
         duration 1500ms\nseed 18446744073709551615\n"
    ));
    let back = Scenario::parse(&printed).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.to_text(), printed);
}

#[test]
fn durations() {
    let ok = [
        ("0", 0),
        ("0s", 0),
        ("1ns", 1),
        ("2.8ms", 2_800_000),
        ("0.5s", 500_000_000),
        ("3777us", 3_777_000),
        ("1.000000001s", 1_000_000_001),
        ("1.50000000000000s", 1_500_000_000),
        ("007ms", 7_000_000),
        ("18446744073709551615ns", u64::MAX),
    ];
    for (s, v) in ok {
        assert_eq!(parse_duration(s), Ok(v), "{s}");
    }
    for s in [
        "10xs",
        "1.5ns",
        "5",
        "ms",
        "1.ms",
        ".5ms",
        "1..5ms",
        "1.2.3s",
        "-1ms",
        "1e3us",
        "18446744073709551616ns",
        "99999999999999999999999s",
        "1.0000000001s",
        "",
    ] {
        assert!(parse_duration(s).is_err(), "{s}");
    }
    let fmt = [
        (0, "0s"),
        (1, "1ns"),
        (2_800_000, "2800us"),
        (130 * S, "130s"),
        (8 * MS, "8ms"),
        (1_500, "1500ns"),
    ];
    for (v, s) in fmt {
        assert_eq!(fmt_duration(v), s);
        assert_eq!(parse_duration(s), Ok(v));
    }
}

#[test]
fn the_qemu_icount_machine_brings_measured_costs() {
    use eevdf_sim::topology::QEMU_ICOUNT_COSTS as Q;
    let s = Scenario::parse(&wrap("machine qemu-icount\ntask a kind=hog")).unwrap();
    assert_eq!((s.machine.nr_cpus(), s.machine.nr_cpus()), (1, 1));
    assert_eq!(s.machine.default_costs(), Q);
    assert_eq!(s.sim.costs, Q, "the machine's costs apply");
    let text = s.to_text();
    assert!(text.contains("\nmachine qemu-icount\n"), "{text}");
    assert!(!text.contains("costs"), "defaults are not printed: {text}");
    assert_eq!(Scenario::parse(&text).unwrap(), s);
    s.validate().unwrap();
    // Explicit keys win, whether `costs` comes before or after `machine`.
    for body in [
        "costs switch=3us\nmachine qemu-icount",
        "machine qemu-icount\ncosts switch=3us",
    ] {
        let s = Scenario::parse(&wrap(body)).unwrap();
        assert_eq!(
            s.sim.costs,
            Costs {
                switch_ns: 3_000,
                ..Q
            }
        );
        assert!(s.to_text().contains("\ncosts switch=3us\n"));
        assert_eq!(Scenario::parse(&s.to_text()).unwrap(), s);
    }
    // A key equal to the usual default is still explicit here.
    let d = Costs::default();
    let s = Scenario::parse(&wrap("machine qemu-icount\ncosts wake=5us")).unwrap();
    assert_eq!(s.sim.costs.wake_ns, d.wake_ns);
    assert!(
        s.to_text().contains("\ncosts wake=5us\n"),
        "{}",
        s.to_text()
    );
    assert_eq!(Scenario::parse(&s.to_text()).unwrap(), s);
    // Other machines keep the usual defaults.
    for m in ["up", "smp4", "rb5"] {
        let s = Scenario::parse(&wrap(&format!("machine {m}"))).unwrap();
        assert_eq!(s.sim.costs, d, "{m}");
    }
    // `--set machine=` swaps the defaults and keeps explicit keys.
    let mut s = Scenario::parse(&wrap("costs migrate=1us")).unwrap();
    s.set("machine=qemu-icount").unwrap();
    assert_eq!(
        s.sim.costs,
        Costs {
            migrate_ns: 1_000,
            ..Q
        }
    );
    s.set("costs.wake=1us").unwrap();
    s.set("machine=up").unwrap();
    assert_eq!(
        s.sim.costs,
        Costs {
            wake_ns: 1_000,
            migrate_ns: 1_000,
            ..d
        }
    );
    // The simulator runs it.
    let s = Scenario::parse(&wrap(
        "machine qemu-icount\nduration 50ms\ntask ct kind=timer period=1ms run=10us",
    ))
    .unwrap();
    let r = eevdf_sim::simulate(s.sim_config());
    assert!(r.sim_ns > 0);
}

/// `costs sleep=` (a timed sleep's own CPU) prints, parses back and
/// lengthens every activation of a timer task by its value.
#[test]
fn costs_sleep_key() {
    let s = Scenario::parse(&wrap(
        "costs switch=5us sleep=5390ns\nduration 20ms\n\
         task ct kind=timer period=1ms run=20us",
    ))
    .unwrap();
    assert_eq!(s.sim.costs.sleep_ns, 5_390);
    assert!(s.to_text().contains("\ncosts switch=5us sleep=5390ns\n"));
    assert_eq!(Scenario::parse(&s.to_text()).unwrap(), s);
    let cpu = |sc: &Scenario| eevdf_sim::simulate(sc.sim_config()).by_name[0].cpu_ns;
    let mut none = s.clone();
    none.set("costs.sleep=0").unwrap();
    assert!(!none.to_text().contains("sleep="));
    let (with, without) = (cpu(&s), cpu(&none));
    assert_eq!(with - without, 20 * 5_390, "{with} {without}");
}

#[test]
fn machines() {
    for (s, n, back) in [
        ("up", 1, "up"),
        ("smp1", 1, "up"),
        ("smp2", 2, "smp2"),
        ("smp8", 8, "smp8"),
        ("smp512", 512, "smp512"),
        ("smp06", 6, "smp6"),
    ] {
        let m = Machine::parse(s).unwrap();
        assert_eq!(m.nr_cpus(), n);
        assert_eq!(m.to_string(), back);
    }
    for s in [
        "smp0", "smp513", "smp", "smp+4", "SMP4", "numa2", "smp-1", "",
    ] {
        assert_eq!(Machine::parse(s), None, "{s}");
    }
}

#[test]
fn error_positions() {
    // Line 4 of wrap("machine smp4\nhz 250\n...") is the third body line.
    err_at(
        &wrap("machine smp4\nhz 250\ntask ct kind=timer peroid=1ms"),
        4,
        20,
        &["peroid", "period", "timer"],
    );
    err_at(&wrap("duration 10xs"), 2, 10, &["unit", "xs", "ms"]);
    err_at(
        &wrap("task a kind=timer period=1.5ns"),
        2,
        26,
        &["whole", "nanoseconds"],
    );
    err_at(&wrap("task a kind=hog start=5"), 2, 23, &["unit"]);
    err_at(
        &format!("{HEADER}\nmachine smp2\n# the end is missing\n"),
        3,
        21,
        &["missing `end`", "add `end`"],
    );
    err_at(&format!("{HEADER}\nhz 250"), 2, 7, &["add `end`"]);
    err_at(
        &wrap("machin smp2"),
        2,
        1,
        &["unknown directive", "machine"],
    );
    err_at(
        &wrap("  bogus 1"),
        2,
        3,
        &["unknown directive", "directives:"],
    );
    err_at(
        &wrap("task a kind=hog group=/nope"),
        2,
        23,
        &["unknown group", "/nope", "group /nope weight=100"],
    );
    err_at(
        &wrap("group /nop\ntask a kind=hog group=/nope"),
        3,
        23,
        &["unknown group", "did you mean `/nop`"],
    );
    err_at(
        &wrap("machine smp4\ntask a kind=hog cpus=0-3\ntask b kind=hog cpus=1,4"),
        4,
        22,
        &["CPU 4", "smp4", "0-3"],
    );
    err_at(
        &wrap("task a kind=hog cpus=1"),
        2,
        22,
        &["CPU 1", "machine up", "only CPU 0"],
    );
    err_at(&wrap("task a kind=hog cpus=0-512"), 2, 22, &["CPU list"]);
    err_at(&wrap("task a kind=hog cpus=0,,2"), 2, 24, &["empty"]);
    err_at(&wrap("task a kind=hog cpus=0,3-1"), 2, 24, &["backwards"]);
    err_at(
        &wrap("task a kind=hog\n\ntask a kind=timer period=1ms"),
        4,
        6,
        &["duplicate task name", "line 2"],
    );
    let long = format!("task a kind=hog # {}", "x".repeat(60));
    err_at(&wrap(&long), 2, 73, &["78 columns", "72"]);
    err_at(
        "eevdf-scenario v2\nend\n",
        1,
        16,
        &["unsupported version", "v1"],
    );
    err_at("\n# c\nmachine up\nend\n", 3, 1, &["eevdf-scenario v1"]);
    err_at("eevdf-scenario\nend\n", 1, 16, &["missing version"]);
    err_at("eevdf-scenario v1 x\nend\n", 1, 19, &["unexpected"]);
    err_at("", 1, 1, &["empty"]);
    err_at("  # only a comment\n", 1, 1, &["empty"]);
    err_at(&format!("{}\nhz 250\n", wrap("")), 5, 1, &["after `end`"]);
    err_at(&format!("{HEADER}\nend now\n"), 2, 5, &["after `end`"]);
    err_at(&wrap("hz 251"), 2, 4, &["hz", "100, 250, 300 or 1000"]);
    err_at(&wrap("hz"), 2, 4, &["needs a value"]);
    err_at(&wrap("hz 250 300"), 2, 8, &["unexpected `300`"]);
    err_at(&wrap("hz 250\nhz 250"), 3, 1, &["duplicate `hz`", "line 2"]);
    err_at(&wrap("duration 0s"), 2, 10, &["more than 0"]);
    err_at(&wrap("duration 3601s"), 2, 10, &["at most 3600s"]);
    err_at(&wrap("seed -1"), 2, 6, &["seed"]);
    err_at(
        &wrap("preempt rt"),
        2,
        9,
        &["none, voluntary, full or lazy"],
    );
    err_at(&wrap("kernel v6.6"), 2, 8, &["unknown kernel", "v6.12"]);
    err_at(&wrap("machine smp0"), 2, 9, &["unknown machine", "smpN"]);
    err_at(&wrap("engine 1"), 2, 8, &["X.Y"]);
    err_at(
        &wrap("features NO_RUN_TO_PARITY NO_RUN_TO_PRITY"),
        2,
        27,
        &["unknown sched feature", "did you mean NO_RUN_TO_PARITY"],
    );
    err_at(&wrap("features A,NO_PLACE_LAG"), 2, 10, &["`A`"]);
    err_at(
        &wrap("features PLACE_LAG,NB_MODE=x"),
        2,
        20,
        &["NB_MODE", "legacy"],
    );
    err_at(&wrap("features NB_MODE"), 2, 10, &["needs a value"]);
    err_at(&wrap("features # none"), 2, 10, &["at least one"]);
    err_at(&wrap("sysctl base_slice=3ms"), 2, 8, &["base_slice_ns"]);
    err_at(&wrap("sysctl base_slice_ns=0"), 2, 22, &["out of range"]);
    err_at(
        &wrap("sysctl base_slice_ns=1ms\nsysctl base_slice_ns=2ms"),
        3,
        8,
        &["duplicate", "line 2"],
    );
    err_at(&wrap("costs switch=2"), 2, 14, &["unit"]);
    err_at(&wrap("costs switch=2s"), 2, 14, &["at most 1s"]);
    err_at(&wrap("costs"), 2, 7, &["key=value"]);
    err_at(&wrap("costs wake"), 2, 7, &["key=value"]);
    err_at(&wrap("costs wake="), 2, 12, &["needs a value"]);
    err_at(&wrap("group /a/b"), 2, 9, &["one level of groups"]);
    err_at(&wrap("group a"), 2, 7, &["start with `/`"]);
    err_at(&wrap("group /"), 2, 8, &["0 characters"]);
    err_at(&wrap("group /a weight=0"), 2, 17, &["1 to 10000"]);
    err_at(&wrap("group /a wieght=5"), 2, 10, &["weight"]);
    err_at(&wrap("group /a idle=2"), 2, 15, &["0 or 1"]);
    err_at(
        &wrap("group /a\ngroup /a"),
        3,
        7,
        &["duplicate group", "line 2"],
    );
    err_at(&wrap("group /a idle idle"), 2, 15, &["duplicate"]);
    err_at(&wrap("task"), 2, 6, &["needs a name"]);
    err_at(
        &wrap("task a.b kind=hog"),
        2,
        7,
        &["unexpected character", "`a.b`"],
    );
    err_at(
        &wrap(&format!("task {} kind=hog", "n".repeat(33))),
        2,
        6,
        &["33"],
    );
    err_at(&wrap("task a count=2"), 2, 6, &["no `kind`", "timer"]);
    err_at(
        &wrap("task a kind=hogg"),
        2,
        13,
        &["unknown kind", "did you mean `hog`"],
    );
    err_at(
        &wrap("task a kind=hog kind=hog"),
        2,
        17,
        &["duplicate key `kind`", "column 8"],
    );
    err_at(
        &wrap("task a kind=hog period=1ms"),
        2,
        17,
        &["for a hog task", "kind, count"],
    );
    err_at(&wrap("task a kind=hog nice"), 2, 17, &["key=value"]);
    err_at(&wrap("task a kind=timer"), 2, 6, &["needs `period`"]);
    err_at(
        &wrap("task a kind=periodic sleep=1ms"),
        2,
        6,
        &["needs `run`"],
    );
    err_at(
        &wrap("task a kind=periodic run=1ms"),
        2,
        6,
        &["`sleep` or `period`"],
    );
    err_at(&wrap("task a kind=hog count=0"), 2, 23, &["1 to 4096"]);
    err_at(&wrap("task a kind=hog count=4097"), 2, 23, &["1 to 4096"]);
    err_at(&wrap("task a kind=hog nice=20"), 2, 22, &["-20 to 19"]);
    err_at(&wrap("task a kind=hog nice=+1"), 2, 22, &["-20 to 19"]);
    err_at(
        &wrap("task a kind=hog policy=fifo"),
        2,
        24,
        &["normal, batch, idle"],
    );
    err_at(&wrap("task a kind=hog slice=0"), 2, 23, &["more than 0"]);
    err_at(
        &wrap("task a kind=hackbench mode=threads"),
        2,
        28,
        &["did you mean `thread`"],
    );
    err_at(&wrap("task a kind=hackbench fds=257"), 2, 27, &["1 to 256"]);
    err_at(&wrap("task a kind=schbench think=1"), 2, 28, &["unit"]);
    // A line that fits, whose canonical form would not.
    let ok = "task abcdefghijklmnopqrstuvwxyz012345 kind=periodic run=1.1s sleep=2.2s";
    assert_eq!(ok.len(), 71);
    err_at(&wrap(ok), 2, 6, &["75 columns", "2800us"]);
    let fits = ok.replace("2.2s", "2s");
    assert!(Scenario::parse(&wrap(&fits)).is_ok());
}

#[test]
fn bounded_input() {
    let big = format!(
        "{HEADER}\n{}end\n",
        "# padding padding padding\n".repeat(3000)
    );
    err_at(&big, 1, 1, &["bytes"]);
    let many = format!("{HEADER}\n{}end\n", "\n".repeat(1000));
    err_at(&many, 1001, 1, &["1000 lines"]);
    let fine = format!("{HEADER}\n{}end\n", "\n".repeat(997));
    assert!(Scenario::parse(&fine).is_ok());
}

#[test]
fn set_replaces_directives() {
    let mut s = Scenario::parse(EXAMPLE).unwrap();
    s.set("hz=1000").unwrap();
    s.set("duration=0.5s").unwrap();
    s.set("seed=42").unwrap();
    s.set("preempt=lazy").unwrap();
    s.set("machine=smp8").unwrap();
    s.set("sysctl.base_slice_ns=3ms").unwrap();
    s.set("costs.switch=1us").unwrap();
    s.set("costs=wake=0 migrate=1us").unwrap();
    s.set("features=NEXT_BUDDY,TTWU_QUEUE").unwrap();
    let sim = &s.sim_config();
    assert_eq!((sim.hz, sim.seed, sim.nr_cpus), (1000, 42, 8));
    assert_eq!(s.machine, Machine::Smp(8));
    assert_eq!(sim.duration_ns, 500 * MS);
    assert_eq!(sim.preempt, PreemptModel::Lazy);
    assert_eq!(sim.sysctl.base_slice_ns, Some(3 * MS));
    assert_eq!(sim.sysctl.migration_cost_ns, Some(500_000));
    assert_eq!(
        (sim.costs.switch_ns, sim.costs.wake_ns, sim.costs.migrate_ns),
        (1_000, 0, 1_000)
    );
    assert!(sim.features.next_buddy && !sim.features.run_to_parity);
    assert_eq!(sim.features, s.features.features);
    assert_eq!(s.features.not_modelled, [("TTWU_QUEUE".to_string(), true)]);

    // Re-basing keeps the tokens: NO_RUN_TO_PARITY survives a new
    // kernel, NEXT_BUDDY becomes the default of 6.19-rc1.
    s.set("kernel=v6.19-rc1").unwrap();
    assert_eq!(s.features.profile, Profile::V6_19Rc1);
    assert_eq!(s.features.features, s.features.features);
    assert!(!s.features.features.run_to_parity && s.features.features.next_buddy);
    assert_eq!(s.features.features.nb_mode, NbMode::MelV5);
    assert_eq!(
        s.features.canonical_tokens(),
        ["NO_RUN_TO_PARITY", "PS_SET_NEXT_BUDDY", "TTWU_QUEUE"]
    );
    let text = s.to_text();
    assert_eq!(Scenario::parse(&text).unwrap(), s);
    assert!(text.contains("\nsysctl base_slice_ns=3000000 migration_cost_ns=500000\n"));
    assert!(text.contains("\ncosts switch=1us wake=0s migrate=1us\n"));
}

#[test]
fn set_errors_leave_the_scenario_alone() {
    let s0 = Scenario::parse(EXAMPLE).unwrap();
    let mut s = s0.clone();
    let cases: &[(&str, usize, &str)] = &[
        ("hz", 1, "KEY=VALUE"),
        ("hz=99", 4, "hz"),
        ("hz=", 4, "needs a value"),
        ("=1", 1, "missing key"),
        ("hx=250", 1, "did you mean `hz`"),
        ("task=x kind=hog", 1, "cannot be set"),
        ("group=/x", 1, "cannot be set"),
        ("end=1", 1, "cannot be set"),
        ("hz.x=1", 1, "no sub-keys"),
        ("sysctl.base_slice=1ms", 8, "base_slice_ns"),
        ("costs.switch=1", 14, "unit"),
        (
            "features=NO_PLACE_LAG,NO_BOGUS",
            23,
            "unknown sched feature",
        ),
        ("machine=smp2", 9, "CPU 2"),
        ("machine=smp9999", 9, "unknown machine"),
        ("kernel=v5.0", 8, "unknown kernel"),
        ("duration=1h", 10, "unit"),
    ];
    for (arg, col, word) in cases {
        let e = s.set(arg).unwrap_err();
        assert_eq!((e.line, e.column), (0, *col), "{arg}: {e}");
        assert!(
            format!("{} {}", e.message, e.hint).contains(word),
            "{arg}: {e}"
        );
        assert_eq!(s, s0, "{arg} changed the scenario");
    }
    assert_eq!(s.to_text(), s0.to_text());
}

#[test]
fn apply_features_over_the_scenario() {
    let mut s = Scenario::parse(EXAMPLE).unwrap();
    s.apply_features("RUN_TO_PARITY, NO_PLACE_LAG\nLAG_CLAMP=2slice_tick ")
        .unwrap();
    assert!(s.features.features.run_to_parity && !s.features.features.place_lag);
    assert_eq!(s.features.features, s.features.features);
    assert_eq!(
        s.features.canonical_tokens(),
        ["NO_PLACE_LAG", "PS_SET_NEXT_BUDDY", "LAG_CLAMP=2slice_tick"]
    );
    let before = s.clone();
    let e = s.apply_features("NO_PLACE_LAG NEXT_BUDY").unwrap_err();
    assert_eq!((e.line, e.column), (0, 14));
    assert!(e.hint.contains("NEXT_BUDDY"), "{e}");
    assert_eq!(s, before);
    assert!(s.apply_features("").is_ok());
    assert_eq!(s, before);
    assert!(s.apply_features(&"A".repeat(20_000)).is_err());
}

#[test]
fn features_wrap_at_72_columns() {
    let mut s = Scenario::default();
    s.apply_features(
        "NO_PLACE_LAG NO_PLACE_DEADLINE_INITIAL NO_PLACE_REL_DEADLINE NO_RUN_TO_PARITY \
         NO_PREEMPT_SHORT NEXT_BUDDY NO_PICK_BUDDY NO_DELAY_DEQUEUE NO_DELAY_ZERO \
         PS_IGNORE_NEED_RESCHED NB_RESCHED_INELIGIBLE_WAKER PROT_SET=PZ_ROOT \
         NB_MODE=legacy TTWU_QUEUE START_DEBIT",
    )
    .unwrap();
    let text = s.to_text();
    let features: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("features "))
        .collect();
    assert!(features.len() >= 3, "{text}");
    assert!(
        text.lines().all(|l| l.chars().count() <= MAX_COLUMNS),
        "{text}"
    );
    // Greedy: the next line's first token would not have fitted.
    for w in features.windows(2) {
        let next = w[1].split(' ').nth(1).unwrap();
        assert!(w[0].len() + 1 + next.len() > MAX_COLUMNS);
    }
    assert_eq!(Scenario::parse(&text).unwrap(), s);
}

/// A run's configuration is built from the scenario's fields, also
/// after a direct edit of them (nothing holds a copy to go stale).
#[test]
fn sim_config_takes_the_machine_and_features_from_the_scenario() {
    let mut s = Scenario::parse(&wrap("machine smp4\ntask a kind=hog")).unwrap();
    s.machine = Machine::Smp(2);
    s.features.set_profile(Profile::V6_12);
    let c = s.sim_config();
    assert_eq!((c.nr_cpus, c.profile), (2, Profile::V6_12));
    assert_eq!(c.features, s.features.features);
    assert_eq!(c.preempt, PreemptModel::for_profile(Profile::V6_12));
}
