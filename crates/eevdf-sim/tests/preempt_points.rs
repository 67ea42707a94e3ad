//! Where a reschedule request stops a hackbench thread, by preemption
//! model (docs/model.md §6, "Preemption points"). A message is one
//! `write()` or `read()`: a lazy request waits for its return to user,
//! voluntary also stops at `might_resched()` in `mutex_lock()`, and only
//! a full request under `CONFIG_PREEMPTION` stops it anywhere, a few of
//! those inside the pipe's mutex. Kernel runs of ct-hackbench (seed 1,
//! 1 s, traced) hold the counts and delays the tests below bound:
//! - 7.2.13 (lazy): 4,528 `R` and 379 `R+` switches of hackbench
//!   threads and 890 `D` sleeps; a lazy request after a wakeup is
//!   honoured 6 to 9 us later in the trace (its own events included);
//! - 6.12.95 (voluntary): of 769 preemptions after a cyclictest
//!   wakeup, 277 (36 %) were `R+`: at a `might_resched()` in the kernel.

mod common;

use common::{ct_hackbench, SEND_NS, WAKE_NS};
use eevdf_core::FeatureSet;
use eevdf_core::Profile;
use eevdf_sim::trace::{PrevState, Trace, TraceEvent};
use eevdf_sim::{PreemptModel, Sim, SimConfig, TaskSpec, Workload};

fn trace_of(c: SimConfig) -> Trace {
    let end = c.duration_ns;
    let mut sim = Sim::new(c);
    sim.record_trace();
    sim.run_until(end);
    sim.check_threads().unwrap();
    sim.take_trace()
}

/// How the threads other than cyclictest (hackbench's, or hogs) left
/// the CPU: (`R`, `R+`, `D`).
fn hackbench_switch_states(t: &Trace) -> (usize, usize, usize) {
    let ct = t.tasks.iter().position(|k| k.comm == "ct");
    let mut n = (0, 0, 0);
    for e in &t.events {
        if let TraceEvent::Switch {
            prev: Some(p),
            prev_state,
            ..
        } = *e
        {
            if Some(p) == ct {
                continue;
            }
            match prev_state {
                PrevState::Runnable => n.0 += 1,
                PrevState::Preempted => n.1 += 1,
                PrevState::Uninterruptible => n.2 += 1,
                PrevState::Sleeping => {}
            }
        }
    }
    n
}

/// For each cyclictest wakeup that switches to it next: the delay from
/// the wakeup to that switch and how the thread it preempts left.
fn cyclictest_preemptions(t: &Trace) -> Vec<(u64, PrevState)> {
    let ct = t.tasks.iter().position(|k| k.comm == "ct");
    let mut woke = None;
    let mut out = Vec::new();
    for e in &t.events {
        match *e {
            TraceEvent::Wakeup { ts, task, .. } if Some(task) == ct => woke = Some(ts),
            TraceEvent::Switch {
                ts,
                prev: Some(_),
                prev_state,
                next,
                ..
            } if next == ct => {
                if let Some(w) = woke.take() {
                    if prev_state != PrevState::Sleeping {
                        out.push((ts - w, prev_state));
                    }
                }
            }
            TraceEvent::Switch { .. } => woke = None,
            _ => {}
        }
    }
    out
}

/// At least 99 % of the preemptions come within one message's work of
/// the wakeup, and the two wakeups at most that it ends with (a few
/// wakeups do not preempt, and cyclictest waits for a later pick).
fn assert_within_a_message(p: &[(u64, PrevState)]) {
    assert!(p.len() > 500, "{} preemptions", p.len());
    let late = p
        .iter()
        .filter(|&&(dt, _)| dt > SEND_NS + 2 * WAKE_NS)
        .count();
    assert!(
        late * 100 <= p.len(),
        "{late} of {} past a message",
        p.len()
    );
}

#[test]
fn lazy_stops_hackbench_at_the_return_to_user() {
    let t = trace_of(ct_hackbench(Profile::V7_2, PreemptModel::Lazy));
    let (r, r_plus, d) = hackbench_switch_states(&t);
    // Kernel: 4,528 R, 379 R+, 890 D (within 2x here). Kernel
    // preemptions (the tick's upgrade, the HRTICK) are the few, and only
    // those inside the mutex leave others in D.
    assert!(r > 5 * r_plus, "R {r}, R+ {r_plus}");
    assert!((190..=758).contains(&r_plus), "R+ {r_plus}");
    assert!((445..=1_780).contains(&d), "D {d}");
    let p = cyclictest_preemptions(&t);
    assert_within_a_message(&p);
}

#[test]
fn voluntary_stops_hackbench_at_might_resched_too() {
    let t = trace_of(ct_hackbench(Profile::V6_12, PreemptModel::Voluntary));
    let (_, _, d) = hackbench_switch_states(&t);
    assert_eq!(d, 0, "voluntary never preempts a mutex holder");
    let p = cyclictest_preemptions(&t);
    assert!(p.len() > 500, "{} preemptions", p.len());
    let in_kernel = p
        .iter()
        .filter(|&&(_, s)| s == PrevState::Preempted)
        .count();
    // Kernel: 36 %; the message's layout puts mutex_lock() there.
    let share = in_kernel * 100 / p.len();
    assert!((25..=50).contains(&share), "{in_kernel} of {} R+", p.len());
    assert_within_a_message(&p);
}

#[test]
fn full_stops_hackbench_anywhere_in_the_kernel() {
    let t = trace_of(ct_hackbench(Profile::V7_2, PreemptModel::Full));
    let p = cyclictest_preemptions(&t);
    assert!(p.len() > 500, "{} preemptions", p.len());
    // At once, unless the thread is inside `try_to_wake_up()` (the
    // reader and a mutex waiter it wakes), which no model preempts; the
    // timer's interrupt itself makes those wakeups end later. A waker
    // that sleeps when they end leaves the choice to that pick (the
    // odd later switch).
    let at_once = p.iter().filter(|&&(dt, _)| dt == 0).count();
    let in_wakeups = p.iter().filter(|&&(dt, _)| dt <= 3 * WAKE_NS).count();
    assert!(
        in_wakeups * 100 >= p.len() * 99,
        "{in_wakeups} of {} in the wakeups",
        p.len()
    );
    assert!(
        at_once * 10 > p.len() * 9,
        "{at_once} of {} at once",
        p.len()
    );
    // In a message, else between messages (or paying a switch).
    let in_kernel = p
        .iter()
        .filter(|&&(_, s)| s == PrevState::Preempted)
        .count();
    assert!(in_kernel * 3 > p.len() * 2, "{in_kernel} of {} R+", p.len());
}

/// Two hogs that never leave the kernel, under lazy, without HRTICK:
/// the tick's `update_deadline()` raises a lazy request that only the
/// next tick's upgrade makes a kernel preemption (`R+`). With the tick's
/// interrupt taking time (`costs tick`), that request is decided when
/// the interrupt returns, to kernel code, so it still waits: the same
/// switches as without the cost, all `R+`. (Taken at the interrupt's
/// end as a return to user, it preempted at the first tick: twice the
/// switches, all `R`.)
#[test]
fn an_interrupt_returns_to_the_code_it_interrupted() {
    let states = |tick_ns| two_hogs_lazy(true, tick_ns);
    let (r, r_plus, d) = states(0);
    assert_eq!((r, d), (0, 0));
    // One switch every other tick: 125 in 1 s at HZ 250.
    assert!((120..=130).contains(&r_plus), "R+ {r_plus}");
    assert_eq!(states(10_000), (0, r_plus, 0));
}

/// A tick's interrupt time comes out of the work of the task it
/// interrupts: alone, a periodic task's 10 ms runs hold the CPU 2.5
/// ticks' longer on average (the switch in to the switch out).
#[test]
fn a_tick_takes_its_time_from_the_task_it_interrupts() {
    let mean_hold = |tick_ns| {
        let mut c = ct_hackbench(Profile::V7_2, PreemptModel::Lazy);
        c.tasks = vec![TaskSpec::new(
            "rt",
            Workload::Periodic {
                run_ns: 10_000_000,
                sleep_ns: 10_000_000,
                period_ns: None,
            },
        )];
        c.costs.tick_ns = tick_ns;
        let mut since = None;
        let mut holds = Vec::new();
        for e in &trace_of(c).events {
            if let TraceEvent::Switch { ts, prev, next, .. } = *e {
                if let (Some(_), Some(t0)) = (prev, since.take()) {
                    holds.push(ts - t0);
                }
                if next.is_some() {
                    since = Some(ts);
                }
            }
        }
        assert!(holds.len() > 40, "{} runs", holds.len());
        holds.iter().sum::<u64>() / holds.len() as u64
    };
    let extra = mean_hold(10_000) - mean_hold(0);
    assert!((20_000..=30_000).contains(&extra), "{extra} ns a run");
}

/// The same two hogs in user code: the tick's lazy request is taken
/// where its interrupt returns to user mode, at every tick (250 `R`
/// switches in 1 s), with or without the interrupt's time. (Held for the
/// next tick's upgrade, as for kernel code, they would switch half as
/// often, as `R+`.)
#[test]
fn an_interrupt_returning_to_user_code_takes_a_lazy_request() {
    let states = |tick_ns| two_hogs_lazy(false, tick_ns);
    let (r, r_plus, d) = states(0);
    assert_eq!((r_plus, d), (0, 0));
    assert!((245..=255).contains(&r), "R {r}");
    assert_eq!(states(10_000), (r, 0, 0));
}

/// The switch states (`R`, `R+`, `D`) of two hogs on one CPU under lazy
/// without HRTICK, for 1 s: in kernel code all the time (`in_kernel`) or
/// in user code, with the tick's interrupt taking `tick_ns`.
fn two_hogs_lazy(in_kernel: bool, tick_ns: u64) -> (usize, usize, usize) {
    let mut c = ct_hackbench(Profile::V7_2, PreemptModel::Lazy);
    let mut fs = FeatureSet::new(Profile::V7_2);
    fs.apply("NO_HRTICK").unwrap();
    c.features = fs.features;
    let mut hog = TaskSpec::new("hog", Workload::Hog);
    hog.count = 2;
    if in_kernel {
        hog.kernel_pct = Some(100);
        hog.ksection_ns = Some(10 * c.duration_ns);
    } else {
        hog.kernel_pct = Some(0);
    }
    c.tasks = vec![hog];
    c.costs.tick_ns = tick_ns;
    hackbench_switch_states(&trace_of(c))
}
