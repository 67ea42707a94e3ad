//! Property tests: random sequences of enqueue, sleep, wakeup, tick, pick,
//! reweight and slice changes, under random kernel profiles and feature
//! sets, with one level of task groups. After every operation the engine
//! must satisfy docs/model.md §9 invariants 1-9, 12 and 13 (checked from scratch
//! by `check_invariants` plus the operation-specific checks below).

use eevdf_core::features::{ProtSet, ProtUpdate};
use eevdf_core::{
    calc_delta_fair, CfsRqId, DequeueFlags, DequeueResult, EnqueueFlags, EntityId, FeatureSet,
    LoadWeight, Policy, Profile, Rq, RqConfig, WakeFlags,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Wake { task: usize, sync: bool, fork: bool },
    Sleep { task: usize },
    Run { ns: u64 },
    Tick,
    Schedule,
    Renice { task: usize, nice: i32 },
    Slice { task: usize, slice: Option<u64> },
    GroupWeight { group: usize, weight: u64 },
}

#[derive(Clone, Debug)]
struct TaskSpec {
    nice: i32,
    slice: Option<u64>,
    policy: Policy,
    group: Option<usize>,
}

fn task_spec() -> impl Strategy<Value = TaskSpec> {
    (
        -20i32..20,
        prop_oneof![Just(None), (100_000u64..20_000_000).prop_map(Some)],
        prop_oneof![8 => Just(Policy::Normal), 1 => Just(Policy::Batch), 1 => Just(Policy::Idle)],
        prop_oneof![Just(None), (0usize..2).prop_map(Some)],
    )
        .prop_map(|(nice, slice, policy, group)| TaskSpec {
            nice,
            slice,
            policy,
            group,
        })
}

fn op(ntasks: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..ntasks, any::<bool>(), prop::bool::weighted(0.1)).prop_map(|(task, sync, fork)| Op::Wake { task, sync, fork }),
        3 => (0..ntasks).prop_map(|task| Op::Sleep { task }),
        3 => (1u64..5_000_000).prop_map(|ns| Op::Run { ns }),
        2 => Just(Op::Tick),
        3 => Just(Op::Schedule),
        1 => (0..ntasks, -20i32..20).prop_map(|(task, nice)| Op::Renice { task, nice }),
        1 => (0..ntasks, prop_oneof![Just(None), (1u64..200_000_000).prop_map(Some)]).prop_map(|(task, slice)| Op::Slice { task, slice }),
        1 => (0usize..2, 2u64..4096).prop_map(|(group, weight)| Op::GroupWeight { group, weight }),
    ]
}

fn features() -> impl Strategy<Value = FeatureSet> {
    let profile = prop::sample::select(Profile::ALL.to_vec());
    let toggles = prop::collection::vec(
        prop::sample::select(vec![
            "NO_RUN_TO_PARITY",
            "NO_PREEMPT_SHORT",
            "NO_DELAY_DEQUEUE",
            "NO_DELAY_ZERO",
            "NO_PLACE_LAG",
            "NO_PLACE_REL_DEADLINE",
            "NEXT_BUDDY",
            "NO_PICK_BUDDY",
            "NO_WAKEUP_PREEMPTION",
            "PS_SET_NEXT_BUDDY",
            "PS_CANCEL_IF_ELIGIBLE",
            "PS_IGNORE_NEED_RESCHED",
            "PS_SHORT_BUDDY_TIE",
            "PROT_LAG_AWARE",
            "PROT_ALWAYS_UPDATE",
            "PROT_SET=STASH",
            "PROT_SET=SHORT_AVG",
            "PROT_SET=PZ_ROOT",
            "PROT_SET=INELIGIBLE",
            "PROT_SET=CAP_MIN_SLICE",
            "PROT_UPDATE=PZ_RUNTIME",
            "PROT_UPDATE=ALIGN",
            "LAG_DECAY_SLEEP",
            "LAG_RESET_IDLE",
            "NB_MODE=legacy",
            "NB_MODE=mel_v5",
            "NB_SYNC_DELTA=stint_runtime",
            "LAG_CLAMP=2slice_tick",
            "DELAY_LAG=v6.12",
        ]),
        0..4,
    );
    (profile, toggles).prop_map(|(p, ts)| {
        let mut fs = FeatureSet::new(p);
        for t in ts {
            fs.apply(t).expect("known token");
        }
        fs
    })
}

struct World {
    rq: Rq,
    tasks: Vec<EntityId>,
    groups: Vec<(EntityId, CfsRqId)>,
}

fn build(fs: &FeatureSet, specs: &[TaskSpec], hz: u32, cpus: u32) -> World {
    let mut rq = Rq::new(RqConfig::new(fs.features, cpus, hz));
    let groups: Vec<_> = (0..2)
        .map(|i| rq.create_group(CfsRqId::ROOT, 1024, i == 1 && hz == 100))
        .collect();
    let tasks = specs
        .iter()
        .map(|s| {
            let q = s.group.map_or(CfsRqId::ROOT, |g| groups[g].1);
            rq.create_task(q, LoadWeight::from_nice(s.nice), s.policy, s.slice)
        })
        .collect();
    World { rq, tasks, groups }
}

fn lag_limit(rq: &Rq, id: EntityId) -> i64 {
    // The largest clamp either rule can give: max slice is at most 100 ms.
    let span = 2 * eevdf_core::entity::SLICE_MAX_NS + rq.config.tick_nsec + rq.config.base_slice_ns;
    calc_delta_fair(span, &rq.se(id).load) as i64
}

fn apply(w: &mut World, op: &Op) -> Result<(), TestCaseError> {
    let rq = &mut w.rq;
    match *op {
        Op::Wake { task, sync, fork } => {
            let id = w.tasks[task];
            let se = rq.se(id).clone();
            if se.on_rq && !se.sched_delayed {
                return Ok(());
            }
            let plain = !se.on_rq;
            let f = *rq.features();
            let parent_queued = rq
                .parent_entity(id)
                .is_none_or(|g| rq.se(g).on_rq && !rq.se(g).sched_delayed);
            let others = rq.cfs(se.cfs_rq).nr_queued;
            let flags = if fork {
                EnqueueFlags::INITIAL
            } else {
                EnqueueFlags::WAKEUP
            };
            rq.enqueue_task(id, flags);
            // Invariant 8: lag conservation across sleep.
            let simple =
                plain && f.place_lag && !f.lag_decay_sleep && !f.lag_reset_idle && parent_queued;
            if simple && others > 0 && rq.cfs(se.cfs_rq).curr != Some(id) {
                let lag = rq.entity_lag_now(se.cfs_rq, id);
                let w_se = i128::from(se.load.weight);
                let wq = i128::from(rq.cfs(se.cfs_rq).load_weight) - w_se;
                let tol = ((wq + w_se) / wq.max(1)) as i64 + 2;
                prop_assert!(
                    (lag - se.vlag).abs() <= tol,
                    "lag {} after wake, saved {} (tol {})",
                    lag,
                    se.vlag,
                    tol
                );
            }
            let d = rq.wakeup_preempt(
                id,
                WakeFlags {
                    sync,
                    fork,
                    rq_selected: false,
                    from_task: true,
                },
            );
            if d.preempt {
                prop_assert!(rq.resched.is_some());
            }
        }
        Op::Sleep { task } => {
            let id = w.tasks[task];
            if !rq.se(id).on_rq || rq.se(id).sched_delayed {
                return Ok(());
            }
            let r = rq.dequeue_task(id, DequeueFlags::SLEEP);
            // A task sleeps by calling schedule().
            let was_curr = rq.curr_task == Some(id);
            // Invariant 7: the saved lag is clamped.
            let limit = lag_limit(rq, id);
            prop_assert!(rq.se(id).vlag.abs() <= limit);
            if r == DequeueResult::Delayed {
                prop_assert!(rq.se(id).on_rq && rq.se(id).sched_delayed);
            }
            if was_curr {
                rq.pick_next_task();
            }
        }
        Op::Run { ns } => {
            let now = rq.clock + ns;
            rq.set_clock(now);
        }
        Op::Tick => rq.task_tick(false),
        Op::Schedule => {
            let delayed_before: Vec<_> = w
                .tasks
                .iter()
                .copied()
                .filter(|t| rq.se(*t).sched_delayed)
                .collect();
            let out = rq.pick_next_task();
            prop_assert_eq!(out.next, rq.curr_task);
            if let Some(n) = out.next {
                prop_assert!(
                    rq.se(n).on_rq && !rq.se(n).sched_delayed,
                    "picked a delayed or dequeued task"
                );
            }
            // Invariant 12/7: a completed delayed dequeue under DELAY_ZERO leaves vlag <= 0.
            for t in delayed_before {
                if !rq.se(t).on_rq && rq.features().delay_zero {
                    prop_assert!(
                        rq.se(t).vlag <= 0,
                        "delayed dequeue left vlag {}",
                        rq.se(t).vlag
                    );
                }
            }
        }
        Op::Renice { task, nice } => {
            let id = w.tasks[task];
            if rq.se(id).policy == Policy::Idle {
                return Ok(());
            }
            let q = rq.se(id).cfs_rq;
            rq.update_curr_all();
            let before = rq.entity_lag_now(q, id);
            let w_old = rq.se(id).load.weight as i64;
            let queued = rq.se(id).on_rq && !rq.se(id).sched_delayed && rq.cfs(q).curr != Some(id);
            let lw = LoadWeight::from_nice(nice);
            rq.reweight_entity(id, lw);
            // Invariant 9: w * lag is conserved (within truncation), when
            // the clamp did not cut the lag.
            // Both clamp rules allow at least one tick of lag.
            let unclamped =
                calc_delta_fair(rq.config.tick_nsec, &LoadWeight::new(w_old as u64)) as i64;
            if queued
                && before.abs() < unclamped
                && rq.features().place_lag
                && rq.cfs(q).nr_queued > 1
            {
                let after = rq.entity_lag_now(q, id);
                let w_new = lw.weight as i64;
                let lhs = i128::from(before) * i128::from(w_old);
                let rhs = i128::from(after) * i128::from(w_new);
                // Truncations in the lag scaling and the inflated placement
                // are amplified by (W + w) / W.
                let wq = (i128::from(rq.cfs(q).load_weight) - i128::from(w_new)).max(1);
                let amp = (wq + i128::from(w_new)) / wq + 2;
                let tol = i128::from(w_new.max(w_old)) * 4 * amp;
                prop_assert!((lhs - rhs).abs() <= tol, "w*lag {} -> {}", lhs, rhs);
            }
        }
        Op::Slice { task, slice } => {
            let id = w.tasks[task];
            rq.set_custom_slice(id, slice);
        }
        Op::GroupWeight { group, weight } => {
            let (gse, _) = w.groups[group];
            rq.reweight_entity(gse, LoadWeight::new(weight));
        }
    }
    Ok(())
}

/// Invariant 4: with protection and buddies off, the pick is eligible and
/// no eligible entity has a strictly earlier deadline.
fn check_pick(rq: &Rq) -> Result<(), TestCaseError> {
    let f = rq.features();
    if !f.ps_clear_buddy {
        return Ok(());
    }
    for q in rq.queue_ids() {
        let cfs = rq.cfs(q);
        if cfs.nr_queued < 2 {
            continue;
        }
        let Some((p, _)) = rq.pick_eevdf(q, false) else {
            return Err(TestCaseError::fail("no pick from a non-empty queue"));
        };
        prop_assert!(rq.entity_eligible(q, p), "picked an ineligible entity");
        let snap = rq.snapshot();
        let qs = snap.queues.iter().find(|s| s.id == q).expect("queue");
        let pd = rq.se(p).deadline;
        for e in &qs.entities {
            if e.eligible && e.id != p {
                let earlier = (e.deadline.wrapping_sub(pd) as i64) < 0;
                prop_assert!(
                    !earlier,
                    "{:?} eligible with an earlier deadline than the pick",
                    e.id
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn invariants_hold_under_random_operations(
        fs in features(),
        specs in prop::collection::vec(task_spec(), 1..7),
        hz in prop::sample::select(vec![100u32, 250, 300, 1000]),
        cpus in 1u32..16,
        ops in prop::collection::vec(op(6), 1..80),
    ) {
        let mut w = build(&fs, &specs, hz, cpus);
        let n = w.tasks.len();
        for o in &ops {
            let o = match o.clone() {
                Op::Wake { task, sync, fork } => Op::Wake { task: task % n, sync, fork },
                Op::Sleep { task } => Op::Sleep { task: task % n },
                Op::Renice { task, nice } => Op::Renice { task: task % n, nice },
                Op::Slice { task, slice } => Op::Slice { task: task % n, slice },
                other => other,
            };
            apply(&mut w, &o)?;
            if let Err(e) = w.rq.check_invariants() {
                return Err(TestCaseError::fail(format!("after {o:?}: {e}")));
            }
            check_pick(&w.rq)?;
        }
        // Replay from a clone gives the same state (Clone is a checkpoint).
        let copy = w.rq.clone();
        prop_assert_eq!(copy.snapshot(), w.rq.snapshot());
    }

    #[test]
    fn mainline_protection_stays_within_one_quantum(
        specs in prop::collection::vec(task_spec(), 2..6),
        ops in prop::collection::vec(op(5), 1..60),
    ) {
        // Invariant 6 is a debug assertion inside set_protect_slice; this
        // drives many switch-ins under the mainline rules to exercise it.
        let fs = FeatureSet::new(Profile::V7_1);
        prop_assume!(fs.features.prot_set == ProtSet::Mainline && fs.features.prot_update == ProtUpdate::Mainline);
        let mut w = build(&fs, &specs, 1000, 8);
        let n = w.tasks.len();
        for o in &ops {
            let o = match o.clone() {
                Op::Wake { task, sync, fork } => Op::Wake { task: task % n, sync, fork },
                Op::Sleep { task } => Op::Sleep { task: task % n },
                Op::Renice { .. } | Op::Slice { .. } | Op::GroupWeight { .. } => Op::Schedule,
                other => other,
            };
            apply(&mut w, &o)?;
            if let Some(c) = w.rq.curr_task {
                let se = w.rq.se(c);
                if w.rq.protect_slice(c) {
                    let span = se.vprot.wrapping_sub(se.vruntime) as i64;
                    prop_assert!(span <= calc_delta_fair(se.slice, &se.load) as i64 + 1);
                }
            }
        }
    }
}
