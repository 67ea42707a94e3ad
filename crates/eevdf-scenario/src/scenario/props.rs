//! Property tests of the format: printed scenarios parse back equal, and
//! no text, mutated example, `--set` or features argument panics or
//! leaves an invalid scenario behind.

use super::tests::{EXAMPLE, EXAMPLE_CANONICAL};
use super::*;
use proptest::prelude::*;

const TOKENS: &[&str] = &[
    "NO_RUN_TO_PARITY",
    "RUN_TO_PARITY",
    "PREEMPT_SHORT",
    "NO_PREEMPT_SHORT",
    "PS_SET_NEXT_BUDDY",
    "NEXT_BUDDY",
    "NO_NEXT_BUDDY",
    "NO_PLACE_LAG",
    "NO_DELAY_DEQUEUE",
    "HRTICK",
    "LAG_CLAMP=2slice_tick",
    "LAG_CLAMP=MAXSLICE_TICK",
    "NB_MODE=legacy",
    "NB_MODE=mel_v5",
    "PROT_SET=PZ_ROOT",
    "PROT_INELIGIBLE",
    "NO_PROT_STASH",
    "DELAY_LAG=v6.12",
    "TTWU_QUEUE",
    "NO_TTWU_QUEUE",
    "START_DEBIT",
    "NO_UTIL_EST",
    "NB_RESCHED_INELIGIBLE_WAKER",
    "NO_PS_CLEAR_BUDDY",
    "PROT_ALWAYS_UPDATE",
    "NO_PROT_LAG_AWARE",
    "NB_SYNC_DELTA=stint_runtime",
    "PROT_UPDATE=ALIGN",
    "NO_WA_IDLE",
    "MINSLICE_PERCPU",
];

/// Durations of every granularity up to `max`.
fn dur(min: Nanos, max: Nanos) -> impl Strategy<Value = Nanos> {
    prop_oneof![
        (min.div_ceil(S)..=max / S).prop_map(|v| v * S),
        (min.div_ceil(MS)..=max / MS).prop_map(|v| v * MS),
        (min.div_ceil(US)..=(max / US).min(100_000)).prop_map(|v| v * US),
        min..=max.min(10 * MS),
    ]
}

fn opt_dur(min: Nanos) -> impl Strategy<Value = Option<Nanos>> {
    prop::option::weighted(0.2, dur(min, MAX_DURATION_NS))
}

fn workload() -> impl Strategy<Value = Workload> {
    let d = |min| dur(min, MAX_DURATION_NS);
    prop_oneof![
        (d(1), d(1)).prop_map(|(period_ns, run_ns)| Workload::Timer { period_ns, run_ns }),
        (d(1), d(0), prop::option::of(d(1))).prop_map(|(run_ns, sleep_ns, period_ns)| {
            Workload::Periodic {
                run_ns,
                sleep_ns,
                period_ns,
            }
        }),
        (
            (1u32..=256, 1u32..=256, any::<bool>(), any::<bool>()),
            (0u64..=1_000_000_000, d(1), d(1), 1u32..=1_000_000)
        )
            .prop_map(
                |((groups, fds, threads, pipe), (loops, send_ns, recv_ns, pipe_msgs))| {
                    Workload::Hackbench {
                        groups,
                        fds,
                        threads,
                        pipe,
                        loops,
                        send_ns,
                        recv_ns,
                        pipe_msgs,
                    }
                }
            ),
        (1u32..=256, 1u32..=1024, d(1), d(0)).prop_map(
            |(message_threads, workers, request_ns, sleep_ns)| Workload::Schbench {
                message_threads,
                workers,
                request_ns,
                sleep_ns,
            }
        ),
        Just(Workload::Hog),
    ]
}

/// Raw task fields; CPU numbers and the group are fitted later.
type RawTask = (
    Workload,
    (u32, i32, u8, Option<Nanos>),
    (
        Option<Vec<u32>>,
        Option<usize>,
        Option<Nanos>,
        Option<Nanos>,
    ),
);

fn raw_task() -> impl Strategy<Value = RawTask> {
    (
        workload(),
        (
            prop_oneof![Just(1u32), 1u32..=4096],
            prop_oneof![Just(0i32), -20i32..=19],
            0u8..3,
            opt_dur(1),
        ),
        (
            prop::option::weighted(0.2, prop::collection::vec(0u32..512, 1..4)),
            prop::option::weighted(0.3, any::<usize>()),
            opt_dur(0),
            opt_dur(0),
        ),
    )
}

prop_compose! {
    fn scenario()(
        engine in prop_oneof![Just(ENGINE_VERSION.to_string()), (0u32..100, 0u32..100).prop_map(|(a, b)| format!("{a}.{b}"))],
        cpus in prop_oneof![Just(1u32), Just(2), Just(4), Just(8), 1u32..=512],
        profile in prop::sample::select(Profile::ALL.to_vec()),
        hz in prop::sample::select(vec![100u32, 250, 300, 1000]),
        duration in dur(1, MAX_DURATION_NS),
        seed in any::<u64>(),
        preempt in prop::option::of(prop::sample::select(PreemptModel::ALL.to_vec())),
        tokens in prop::collection::vec(prop::sample::select(TOKENS), 0..16),
        sysctl in (prop::option::of(US..=S), prop::option::of(0..=S)),
        costs in prop::option::of((dur(0, S), dur(0, S), dur(0, S), dur(0, S), dur(0, S))),
        groups in prop::collection::vec((1u32..=10_000, any::<bool>(), "[a-zA-Z0-9_-]{1,8}"), 0..=2),
        tasks in prop::collection::vec(raw_task(), 1..=5),
    ) -> Scenario {
        let mut s = Scenario {
            engine,
            machine: Machine::Smp(cpus),
            features: FeatureSet::new(profile),
            ..Scenario::default()
        };
        for t in tokens {
            s.features.apply(t).unwrap();
        }
        s.sim.hz = hz;
        s.sim.duration_ns = duration;
        s.sim.seed = seed;
        // (Under sync_sim this value was overwritten: explicit `preempt`
        // lines were never generated.)
        s.preempt = preempt;
        s.sim.sysctl.base_slice_ns = sysctl.0;
        s.sim.sysctl.migration_cost_ns = sysctl.1;
        if let Some((switch_ns, wake_ns, migrate_ns, sleep_ns, tick_ns)) = costs {
            s.sim.costs = Costs { switch_ns, wake_ns, migrate_ns, sleep_ns, tick_ns };
        }
        for (i, (weight, idle, name)) in groups.into_iter().enumerate() {
            s.sim.groups.push(GroupSpec { path: format!("/{name}{i}"), weight, idle });
        }
        for (i, (workload, (count, nice, policy, slice), (cpu_list, group, slack, start))) in
            tasks.into_iter().enumerate()
        {
            let mut t = TaskSpec::new(&format!("t{i}"), workload);
            t.count = count;
            t.nice = nice;
            t.policy = [Policy::Normal, Policy::Batch, Policy::Idle][usize::from(policy)];
            t.slice_ns = slice;
            t.cpus = cpu_list.map(|mut l| {
                for c in &mut l {
                    *c %= cpus;
                }
                l.sort_unstable();
                l.dedup();
                l
            });
            let ng = s.sim.groups.len();
            t.group = group.filter(|_| ng > 0).map(|g| s.sim.groups[g % ng].path.clone());
            t.slack_ns = slack;
            t.start_ns = start.unwrap_or(0);
            // Keep only tasks whose line fits; a hog always does.
            if task_line(&t).chars().count() > MAX_COLUMNS {
                t = TaskSpec::new(&format!("t{i}"), Workload::Hog);
            }
            s.sim.tasks.push(t);
        }
        // What `finish` does: an engine 0.1 text without `preempt`
        // ran under full.
        if s.preempt.is_none() && engine_before(&s.engine, (0, 2)) {
            s.preempt = Some(PreemptModel::Full);
        }
        s
    }
}

const MUTATION_CHARS: &[char] = &[
    ' ', '=', '#', '\n', '.', ',', '-', '/', '0', '1', '9', 's', 'm', 'u', 'n', 'x', 'A', '_',
    '\t', 'é', '\r',
];

/// Applies edit operations (delete, duplicate, swap, insert) to `base`.
fn mutate(base: &str, ops: &[(u8, usize, usize)]) -> String {
    let mut v: Vec<char> = base.chars().collect();
    for &(op, at, c) in ops {
        if v.is_empty() {
            break;
        }
        let i = at % v.len();
        match op % 4 {
            0 => {
                v.remove(i);
            }
            1 => {
                let c = v[i];
                v.insert(i, c);
            }
            2 => {
                let j = (i + 1) % v.len();
                v.swap(i, j);
            }
            _ => v.insert(i, MUTATION_CHARS[c % MUTATION_CHARS.len()]),
        }
    }
    v.into_iter().collect()
}

/// What every accepted text must satisfy.
fn check_accepted(s: &Scenario) -> Result<(), TestCaseError> {
    let text = s.to_text();
    for l in text.lines() {
        prop_assert!(l.chars().count() <= MAX_COLUMNS, "{l}");
    }
    let back = Scenario::parse(&text);
    prop_assert!(back.is_ok(), "{:?}\n{text}", back.err());
    let back = back.unwrap_or_default();
    prop_assert_eq!(&back, s);
    prop_assert_eq!(back.to_text(), text);
    prop_assert_eq!(back.features.features, back.features.features);
    prop_assert_eq!(back.features.profile, back.features.profile);
    prop_assert_eq!(back.machine.nr_cpus(), back.machine.nr_cpus());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn printed_scenarios_parse_back_equal(s in scenario()) {
        // The generator can build scenarios over the cost limits; the
        // parser refuses those (tests/cost.rs), so skip them here.
        let threads: u64 = s.sim.tasks.iter().map(TaskSpec::nr_threads).sum();
        let cost = Cost::of(&s.sim_config(), s.machine.nr_cpus());
        prop_assume!(threads <= MAX_THREADS && cost.events <= MAX_EVENTS);
        check_accepted(&s)?;
        prop_assert!(s.validate().is_ok());
    }

    #[test]
    fn parse_never_panics_on_arbitrary_text(t in "\\PC{0,300}") {
        if let Ok(s) = Scenario::parse(&t) {
            check_accepted(&s)?;
        }
    }

    #[test]
    fn parse_never_panics_on_format_like_text(
        t in "(eevdf-scenario v1\n)?([a-z]{1,8}( [a-z0-9_/=.,-]{1,10}){0,4}\n){0,8}(end\n)?"
    ) {
        if let Ok(s) = Scenario::parse(&t) {
            check_accepted(&s)?;
        }
    }

    #[test]
    fn parse_never_panics_on_mutated_examples(
        which in 0usize..2,
        ops in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..8),
    ) {
        let base = [EXAMPLE, EXAMPLE_CANONICAL][which];
        let text = mutate(base, &ops);
        if let Ok(s) = Scenario::parse(&text) {
            check_accepted(&s)?;
        }
    }

    #[test]
    fn set_and_apply_features_never_panic(
        arg in "(hz|kernel|machine|duration|seed|preempt|features|sysctl|costs|engine|task)?[.=]?\\PC{0,40}",
        f in "\\PC{0,60}",
    ) {
        let mut s = Scenario::parse(EXAMPLE).unwrap();
        let before = s.clone();
        if s.set(&arg).is_err() {
            prop_assert_eq!(&s, &before);
        }
        if s.apply_features(&f).is_err() {
            prop_assert_eq!(&s, &before.clone().tap_set(&arg));
        }
        check_accepted(&s)?;
    }
}

trait TapSet {
    fn tap_set(self, arg: &str) -> Self;
}
impl TapSet for Scenario {
    fn tap_set(mut self, arg: &str) -> Self {
        let _ = self.set(arg);
        self
    }
}
