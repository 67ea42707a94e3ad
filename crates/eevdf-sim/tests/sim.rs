//! What one CPU can show (issue "Simulator" item 7) and the long-run
//! invariants 10 and 11 of docs/model.md §9, on short runs.

use eevdf_core::{FeatureSet, Policy, Profile};
use eevdf_sim::{simulate, Costs, GroupSpec, RoleKind, SimConfig, SimResult, TaskSpec, Workload};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn cfg(cpus: u32, hz: u32, secs: u64, tokens: &[&str]) -> SimConfig {
    let mut fs = FeatureSet::new(Profile::V7_1);
    for t in tokens {
        fs.apply(t).unwrap();
    }
    SimConfig {
        nr_cpus: cpus,
        hz,
        features: fs.features,
        profile: fs.profile,
        duration_ns: secs * S,
        costs: Costs::default(),
        // These tests were written for the full model; the lazy one has
        // its own test below.
        preempt: eevdf_sim::PreemptModel::Full,
        ..SimConfig::default()
    }
}

fn hog(name: &str, nice: i32, slice: Option<u64>) -> TaskSpec {
    let mut t = TaskSpec::new(name, Workload::Hog);
    t.nice = nice;
    t.slice_ns = slice;
    t
}

fn timer(name: &str, period: u64, slice: Option<u64>) -> TaskSpec {
    let mut t = TaskSpec::new(
        name,
        Workload::Timer {
            period_ns: period,
            run_ns: 20_000,
        },
    );
    t.slice_ns = slice;
    t
}

fn share(r: &SimResult, name: &str) -> f64 {
    let n = r.by_name.iter().find(|n| n.name == name).unwrap();
    n.cpu_ns as f64 / r.sim_ns as f64
}

fn p99_us(r: &SimResult, name: &str) -> f64 {
    r.by_name
        .iter()
        .find(|n| n.name == name)
        .unwrap()
        .latency
        .p99 as f64
        / 1000.0
}

#[test]
fn shares_follow_weights_not_slices() {
    let mut c = cfg(1, 1000, 5, &[]);
    c.tasks = vec![hog("a", 0, None), hog("b", 5, None)];
    let r = simulate(c);
    assert!(
        (share(&r, "a") - 0.7535).abs() < 0.01,
        "a {}",
        share(&r, "a")
    );
    assert!(
        (share(&r, "b") - 0.2465).abs() < 0.01,
        "b {}",
        share(&r, "b")
    );

    let mut c = cfg(1, 1000, 5, &[]);
    c.tasks = vec![hog("short", 0, Some(MS / 2)), hog("long", 0, Some(20 * MS))];
    let r = simulate(c);
    assert!(
        (share(&r, "short") - 0.5).abs() < 0.01,
        "short {}",
        share(&r, "short")
    );
}

#[test]
fn service_error_stays_bounded() {
    // Invariant 10/11: |service_i(T) - T*w_i/W| stays bounded (by about a
    // slice plus a tick), not growing with T.
    let mut c = cfg(1, 1000, 20, &[]);
    c.costs = Costs::ZERO;
    c.tasks = vec![
        hog("a", 0, Some(3 * MS)),
        hog("b", 2, None),
        hog("c", -3, Some(MS)),
    ];
    let weights = [1024f64, 655.0, 1991.0];
    let total: f64 = weights.iter().sum();
    let mut sim = eevdf_sim::Sim::new(c);
    let mut worst = [0f64; 2];
    for step in 1..=20u64 {
        let t = step * S;
        sim.run_until(t);
        let run = sim.thread_runtimes();
        let elapsed: f64 = run.iter().map(|r| *r as f64).sum();
        for (i, w) in weights.iter().enumerate() {
            let err = (run[i] as f64 - elapsed * w / total).abs();
            let half = usize::from(step > 10);
            worst[half] = worst[half].max(err);
        }
    }
    // Bounded by max slice + tick (3 ms + 1 ms) with margin, and the
    // second half is not worse than the first by more than a tick.
    assert!(worst[1] < 6.0 * MS as f64, "error {:?}", worst);
    assert!(worst[1] <= worst[0] + MS as f64, "error grows {:?}", worst);
}

#[test]
fn switch_rate_follows_slice_and_hz() {
    let rate = |hz: u32, slice: Option<u64>| {
        let mut c = cfg(1, hz, 2, &[]);
        c.tasks = vec![hog("a", 0, slice), hog("b", 0, slice)];
        let r = simulate(c);
        r.totals.switches as f64 / 2.0
    };
    // Base slice 0.70 ms on one CPU: every tick ends a request.
    let r1000 = rate(1000, None);
    let r250 = rate(250, None);
    let r_long = rate(1000, Some(10 * MS));
    assert!((r1000 - 1000.0).abs() < 50.0, "HZ=1000: {r1000}/s");
    assert!((r250 - 250.0).abs() < 20.0, "HZ=250: {r250}/s");
    assert!((r_long - 100.0).abs() < 15.0, "10 ms slices: {r_long}/s");
}

#[test]
fn preempt_short_gives_short_slices_low_latency() {
    let run = |tokens: &[&str], ct_slice: u64| {
        let mut c = cfg(1, 250, 10, tokens);
        // rt-app competitors (0/8 series, T4): they wake with positive
        // lag, so the running one is eligible and protected. (Against
        // pure hogs the running hog is soon ineligible, and a waking
        // cyclictest preempts it whatever the rules.)
        let mut rt = TaskSpec::new(
            "rt",
            Workload::Periodic {
                run_ns: 8_177_000,
                sleep_ns: 17_777_000,
                period_ns: None,
            },
        );
        rt.slice_ns = Some(16 * MS);
        rt.count = 2;
        c.tasks = vec![timer("ct", 3_777_000, Some(ct_slice)), rt];
        p99_us(&simulate(c), "ct")
    };
    let short = run(&[], 8 * MS);
    let no_short = run(&["NO_PREEMPT_SHORT"], 8 * MS);
    let equal = run(&[], 16 * MS);
    let no_parity = run(&["NO_RUN_TO_PARITY"], 16 * MS);
    // Floor: slack 50 us + wake 5 us + switch 2 us; a delayed
    // cyclictest placed afresh can lose a pick (engine 0.9: 113 us; the
    // 7.2.13 kernel's p99 on the v2-rtapp row is 64 to 68 us on four
    // seeds and 187 on one).
    assert!(short < 200.0, "PREEMPT_SHORT p99 {short} us");
    // Without it, curr's protection (up to its 8.2 ms run) bounds the wait.
    assert!(
        no_short > 1000.0 && no_short < 8_300.0,
        "NO_PREEMPT_SHORT p99 {no_short} us"
    );
    assert!(
        equal > 1000.0 && equal < 8_300.0,
        "equal slices p99 {equal} us"
    );
    // NO_RUN_TO_PARITY: a 0.7 ms quantum, detected at the next 4 ms tick.
    assert!(
        no_parity < equal && no_parity < 4_100.0,
        "NO_RUN_TO_PARITY p99 {no_parity} us"
    );
}

#[test]
fn group_buddy_defeats_preempt_short_without_ps_clear_buddy() {
    // T1's mechanism (seed 000): hackbench in /test-A, cyclictest in
    // /test-B with a shorter slice.
    let run = |seed: u64, tokens: &[&str]| {
        let mut c = cfg(1, 250, 10, tokens);
        c.seed = seed;
        c.groups = vec![
            GroupSpec {
                path: "/test-A".into(),
                weight: 100,
                idle: false,
            },
            GroupSpec {
                path: "/test-B".into(),
                weight: 100,
                idle: false,
            },
        ];
        let mut hb = TaskSpec::new(
            "hb",
            Workload::Hackbench {
                groups: 1,
                fds: 10,
                threads: true,
                pipe: false,
                loops: 0,
                send_ns: 2_000,
                recv_ns: 2_000,
                pipe_msgs: 655,
            },
        );
        hb.slice_ns = Some(20 * MS);
        hb.group = Some("/test-A".into());
        let mut ct = timer("ct", 2_777_000, Some(8 * MS));
        ct.group = Some("/test-B".into());
        c.tasks = vec![hb, ct];
        let r = simulate(c);
        (p99_us(&r, "ct"), r.by_name[1].latency.p99_9 as f64 / 1000.0)
    };
    // On one CPU the buddy outlives a pick only when ct wakes while the
    // hackbench group is current and eligible after one of its threads
    // slept, which happens on some seeds only. With pipes it no longer
    // shows on one CPU since engine 0.5's pipe mutex (seeds 1-8, p99 with
    // the bug: 64, 60, 57, 60, 66, 64, 60, 65 us; 57-63 fixed): threads
    // blocked behind a preempted holder change who is current when ct
    // wakes. Sockets have no such mutex. Since a waker sleeps only after
    // its wakeups (engine 0.7), seeds 1-12 showed it on seed 9 (275 us
    // with the bug, else 57 to 70; fixed 57 on all). Since a delayed
    // wakee's lag is taken after update_curr() (engine 0.9, 7.2.13's
    // requeue_delayed_entity()), it shows on 8 of 12 (132 to 555 us),
    // and the fixed form has slow seeds too (1, 4, 5: 236 to 331 us; the
    // median stays at 62). The rb5 seed test (t1_clear_buddies_on_rb5)
    // carries the magnitude.
    let mut worst_buggy: f64 = 0.0;
    let mut fixed = Vec::new();
    for seed in 1..=12 {
        let (p99_fixed, _) = run(seed, &[]);
        let (p99_buggy, _) = run(seed, &["NO_PS_CLEAR_BUDDY"]);
        fixed.push(p99_fixed);
        worst_buggy = worst_buggy.max(p99_buggy / p99_fixed);
    }
    fixed.sort_by(f64::total_cmp);
    let median_fixed = (fixed[5] + fixed[6]) / 2.0;
    assert!(median_fixed < 100.0, "fixed p99 by seed {fixed:?} us");
    let slow = fixed.iter().filter(|&&p| p >= 100.0).count();
    assert!(slow <= 4, "fixed p99 by seed {fixed:?} us");
    assert!(worst_buggy > 2.0, "buggy at most {worst_buggy}x fixed");
    // Whether 6.19's form (NB_MODE=mel_v5) is worse still than the
    // buggy one depends on the seed since threads start by a wakeup
    // (seeds 1-5: 320, 185, 258, 519, 761 us against 513, 298, 374, 450,
    // 261), so it is not asserted.
}

#[test]
fn same_seed_same_result_other_seed_other_phases() {
    let mk = |seed| {
        let mut c = cfg(2, 250, 2, &[]);
        c.seed = seed;
        let mut b = TaskSpec::new(
            "hb",
            Workload::Hackbench {
                groups: 1,
                fds: 4,
                threads: true,
                pipe: true,
                loops: 0,
                send_ns: 2_000,
                recv_ns: 3_000,
                pipe_msgs: 32,
            },
        );
        b.policy = Policy::Normal;
        c.tasks = vec![timer("ct", 1_000_000, None), b, hog("h", 0, None)];
        format!("{:?}", simulate(c))
    };
    assert_eq!(mk(7), mk(7));
    assert_ne!(mk(7), mk(8));
}

#[test]
fn preemption_models_delay_in_kernel_victims() {
    // A hog that spends most of its time in long kernel sections: under
    // `none` a waking timer waits for the section's end, under `full` not.
    let run = |model: eevdf_sim::PreemptModel| {
        let mut c = cfg(1, 250, 5, &[]);
        c.preempt = model;
        let mut h = hog("k", 0, Some(16 * MS));
        h.kernel_pct = Some(90);
        h.ksection_ns = Some(200_000);
        let mut rt = TaskSpec::new(
            "rt",
            Workload::Periodic {
                run_ns: 3_000_000,
                sleep_ns: 5_000_000,
                period_ns: None,
            },
        );
        rt.slice_ns = Some(16 * MS);
        c.tasks = vec![timer("ct", 1_000_000, Some(MS)), h, rt];
        let r = simulate(c);
        r.by_name[0].latency.p90 as f64 / 1000.0
    };
    let full = run(eevdf_sim::PreemptModel::Full);
    let none = run(eevdf_sim::PreemptModel::None);
    let voluntary = run(eevdf_sim::PreemptModel::Voluntary);
    assert!(none > full + 50.0, "none {none} us vs full {full} us");
    assert!(
        voluntary < none,
        "voluntary {voluntary} us vs none {none} us"
    );
}

#[test]
fn lazy_requests_wait_only_for_kernel_mode() {
    // PREEMPT_LAZY (7.2's default): a wakeup's lazy request is honoured
    // at the next return to user mode (exit_to_user_mode_loop tests both
    // TIF bits), so a user-mode hog yields at the end of the waking
    // interrupt, as under `full`; only kernel sections make it wait, for
    // their end or the tick's upgrade.
    let run = |model: eevdf_sim::PreemptModel, kernel_pct: u32| {
        let mut c = cfg(1, 250, 5, &[]);
        c.preempt = model;
        let mut h = hog("k", 0, None);
        h.kernel_pct = Some(kernel_pct);
        h.ksection_ns = Some(2_000_000);
        c.tasks = vec![timer("ct", 1_000_000, Some(100_000)), h];
        let r = simulate(c);
        r.by_name[0].latency.p90 as f64 / 1000.0
    };
    let lazy_user = run(eevdf_sim::PreemptModel::Lazy, 0);
    let full_user = run(eevdf_sim::PreemptModel::Full, 0);
    let lazy_kernel = run(eevdf_sim::PreemptModel::Lazy, 90);
    assert!(lazy_user < 100.0, "lazy, user-mode hog: p90 {lazy_user} us");
    assert!(
        (lazy_user - full_user).abs() < 5.0,
        "lazy {lazy_user} us vs full {full_user} us"
    );
    assert!(
        lazy_kernel > lazy_user + 200.0,
        "lazy, kernel-mode hog: p90 {lazy_kernel} us vs user {lazy_user} us"
    );
}

#[test]
fn load_balancing_spreads_hogs_after_a_cpu_frees_up() {
    // smp2: a pinned hackbench keeps CPU 1 busy for a while, so the four
    // forked hogs land on CPU 0; once hackbench is done, CPU 1 goes idle
    // and the balancer (newidle, then periodic) pulls two hogs over.
    let mut c = cfg(2, 250, 4, &[]);
    let mut hb = TaskSpec::new(
        "hb",
        Workload::Hackbench {
            groups: 1,
            fds: 4,
            threads: true,
            pipe: true,
            loops: 2_000,
            send_ns: 2_000,
            recv_ns: 2_000,
            pipe_msgs: 16,
        },
    );
    hb.cpus = Some(vec![1]);
    let mut hogs = hog("hog", 0, None);
    hogs.count = 4;
    hogs.start_ns = 2 * MS;
    c.tasks = vec![hb, hogs];
    let r = simulate(c);
    let hb_done = r.hackbench[0].completion_ns.expect("hackbench finishes");
    assert!(hb_done < S, "hackbench done at {hb_done}");
    assert!(
        r.totals.migrations >= 2,
        "migrations {}",
        r.totals.migrations
    );
    // After the pull both CPUs are busy to the end.
    assert!(
        r.cpus[1].busy_ns > 3 * S,
        "CPU 1 busy {} ns",
        r.cpus[1].busy_ns
    );
    // Each hog got about a quarter of the 2 CPUs over the run.
    for t in r.tasks.iter().filter(|t| t.role == RoleKind::Hog) {
        assert!(t.cpu_ns > 3 * S / 2, "{} ran {} ns", t.name, t.cpu_ns);
    }
}

#[test]
fn a_misfit_hog_moves_to_a_big_cpu_on_rb5() {
    // The fork path leaves a lone hog on little CPU 0; once its
    // utilisation no longer fits there, an idle big CPU pulls it by
    // active balance (migrate_misfit).
    let mut c = cfg(1, 250, 4, &[]);
    c.machine = Some(eevdf_sim::topology::MachineSpec::Preset("rb5".into()));
    c.tasks = vec![hog("h", 0, None)];
    let r = simulate(c);
    assert!(
        r.totals.migrations >= 1,
        "migrations {}",
        r.totals.migrations
    );
    let little: u64 = r.cpus[..4].iter().map(|c| c.busy_ns).sum();
    let big: u64 = r.cpus[4..].iter().map(|c| c.busy_ns).sum();
    assert!(
        little < S / 2 && big > 3 * S,
        "little {little} ns, big {big} ns"
    );
}

#[test]
fn a_little_cpu_takes_longer_for_the_same_work() {
    // Issue 15 item 9: bursts are work at capacity 1024, so the same
    // periodic task pinned to an RB5 little core (284) runs
    // 1024/284 = 3.6 times as long per activation as on the prime core.
    let mut c = cfg(1, 250, 1, &[]);
    c.machine = Some(eevdf_sim::topology::MachineSpec::Preset("rb5".into()));
    let periodic = |name: &str, cpu: u32| {
        let mut t = TaskSpec::new(
            name,
            Workload::Periodic {
                run_ns: 1_000_000,
                sleep_ns: 9_000_000,
                period_ns: None,
            },
        );
        t.cpus = Some(vec![cpu]);
        t
    };
    c.tasks = vec![periodic("little", 0), periodic("prime", 7)];
    let r = simulate(c);
    let task = |n: &str| r.tasks.iter().find(|t| t.name == n).unwrap();
    let (little, prime) = (task("little.0"), task("prime.0"));
    let per_run = |t: &eevdf_sim::result::TaskResult| t.cpu_ns / t.wakeups.max(1);
    // About 100 activations of 1 ms on the prime core; the little one
    // has time for about 79 (each cycle is 3.6 + 9 ms, not 1 + 9).
    assert!((990_000..1_100_000).contains(&per_run(prime)), "{prime:?}");
    let ratio = per_run(little) * 100 / per_run(prime);
    assert!((340..=375).contains(&ratio), "little/prime = {ratio}%");
    assert!(little.wakeups * 100 < prime.wakeups * 85, "{little:?}");
}

#[test]
fn a_thread_starts_by_a_wakeup_with_a_full_slice() {
    // Threads exist before the window and are released at their start,
    // as in a kernel run: the first enqueue is ENQUEUE_WAKEUP, so
    // PLACE_DEADLINE_INITIAL's half slice does not apply. Two hogs from
    // t=0 with HZ=1000 (ticks every 1 ms) and a 3 ms slice: the first
    // switch between them comes when the first one's whole slice ends.
    let mut c = cfg(1, 1000, 1, &["NO_HRTICK"]);
    c.sysctl.base_slice_ns = Some(3 * MS);
    c.tasks = vec![hog("a", 0, None), hog("b", 0, None)];
    c.costs = Costs::ZERO;
    let mut sim = eevdf_sim::Sim::new(c);
    sim.record_trace();
    sim.run_until(20 * MS);
    let switches: Vec<u64> = sim
        .take_trace()
        .events
        .iter()
        .filter_map(|e| match e {
            eevdf_sim::trace::TraceEvent::Switch {
                ts,
                prev: Some(_),
                next: Some(_),
                ..
            } => Some(*ts),
            _ => None,
        })
        .collect();
    let first = switches[0];
    // Fork semantics would end it at the first tick past 1.5 ms.
    assert!(first >= 3 * MS, "first hog-to-hog switch at {first} ns");
}

#[test]
fn an_invalid_machine_is_an_error_not_a_flat_one() {
    let mut c = cfg(2, 250, 1, &[]);
    c.tasks = vec![hog("h", 0, None)];
    c.machine = Some(eevdf_sim::topology::MachineSpec::Preset("pdp-11".into()));
    let Err(e) = eevdf_sim::Sim::try_new(c.clone()) else {
        panic!("an unknown preset must not build");
    };
    assert!(e.contains("pdp-11"), "{e}");
    c.machine = Some(eevdf_sim::topology::MachineSpec::Preset("rb5".into()));
    let sim = eevdf_sim::Sim::try_new(c).expect("rb5 builds");
    assert_eq!(sim.topology().nr_cpus(), 8);
}

#[test]
fn warmup_leaves_out_early_wakeups_and_changes_nothing_else() {
    let mk = |warmup_ns| {
        let mut c = cfg(1, 250, 2, &["NO_PREEMPT_SHORT"]);
        c.warmup_ns = warmup_ns;
        c.tasks = vec![timer("ct", 1_000_000, Some(100_000)), hog("h", 0, None)];
        simulate(c)
    };
    let (all, warm) = (mk(0), mk(1_500_000_000));
    let lat = |r: &SimResult| r.by_name.iter().find(|n| n.name == "ct").unwrap().latency;
    let (la, lw) = (lat(&all), lat(&warm));
    // A quarter of the 2 s remains: about 500 of about 2000 wakeups.
    assert!(
        (450..=550).contains(&lw.samples),
        "{} of {}",
        lw.samples,
        la.samples
    );
    assert!(la.samples > 3 * lw.samples);
    assert!(lw.max <= la.max);
    // The schedule itself is untouched.
    assert_eq!(all.totals.switches, warm.totals.switches);
    assert_eq!(all.events, warm.events);
    let cpu = |r: &SimResult| r.by_name.iter().map(|n| n.cpu_ns).collect::<Vec<_>>();
    assert_eq!(cpu(&all), cpu(&warm));
}
