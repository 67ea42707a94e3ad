//! Guided tours of teaching mode: a scenario, a CPU to watch, and steps
//! of (command, caption). A step runs to a typed [`Moment`] (a pick
//! for a reason, a wakeup with a verdict), never to words, and names a
//! phrase its picture must contain (a pick reason, a wakeup verdict, a
//! log line); a native test plays every tour through
//! [`crate::teach::Teacher`] and checks both, so a caption cannot drift
//! from what the engine does.

use std::borrow::Cow;

use crate::moment::{Moment, PickKind, Verdict};
use crate::teach::TeachCmd;

/// A tour command (a [`TeachCmd`] without the session plumbing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Go {
    NextPick,
    Step(u32),
    RunTo(u64),
    /// The worst wakeup of this task directive.
    Worst(u32),
    /// Until the CPU reaches this moment.
    Until(Moment),
}

impl Go {
    pub fn cmd(&self) -> TeachCmd {
        match *self {
            Go::NextPick => TeachCmd::NextPick,
            Go::Step(n) => TeachCmd::Step { events: n },
            Go::RunTo(ns) => TeachCmd::RunTo { ns },
            Go::Worst(task) => TeachCmd::Worst { task },
            Go::Until(ref m) => TeachCmd::Until { moment: m.clone() },
        }
    }
}

/// One step: what to do, what to read, what the picture must show.
#[derive(Clone, Debug)]
pub struct Step {
    pub go: Go,
    pub caption: &'static str,
    pub expect: &'static str,
}

const fn step(go: Go, caption: &'static str, expect: &'static str) -> Step {
    Step {
        go,
        caption,
        expect,
    }
}

#[derive(Clone, Debug)]
pub struct Tour {
    pub id: &'static str,
    pub title: &'static str,
    pub scenario: &'static str,
    pub cpu: u32,
    pub steps: &'static [Step],
}

const MS: u64 = 1_000_000;

/// curr kept by its protection, at a pick or against a wakee.
const PROTECTED: &[Moment] = &[
    Moment::pick(PickKind::Protected),
    Moment::wakeup(Verdict::ProtectedCurrWins),
];
/// The next buddy picked, or kept at a sync wakeup.
const NEXT_BUDDY: &[Moment] = &[
    Moment::pick(PickKind::NextBuddy),
    Moment::wakeup(Verdict::SyncNoPreempt),
];

/// A wakee that waits because another entity's deadline is earlier.
const WAITS_ITS_TURN: Moment = Moment::wakeup(Verdict::EarlierDeadlineWins);

pub const TOURS: &[Tour] = &[
    Tour {
        id: "weights",
        title: "Weights and shares",
        scenario: "eevdf-scenario v1\nmachine up\nhz 1000\nduration 1s\n\
                   task a kind=hog\ntask b kind=hog nice=5\nend\n",
        cpu: 0,
        steps: &[
            step(Go::NextPick, "Two CPU hogs: a at nice 0 (weight 1024), b at nice 5 (weight 335). The first pick takes the only task queued so far.", "the only queued entity"),
            step(Go::Until(Moment::woke("a.0")), "a starts. place_entity puts a newcomer at V with zero lag: it is owed nothing for the time before it existed. It is eligible, but b's current request ends first, so a does not preempt.", "a.0 woke"),
            step(Go::RunTo(20 * MS), "After 20 ms. vruntime advances by run time x 1024/weight: b's virtual clock runs about three times faster than a's. Both ask for a 0.7 ms slice of real time, so b's request spans about 2.1 ms of virtual time: its bar is three times as long.", "switch"),
            step(Go::Until(Moment::pick_of("a.0", PickKind::CurrEarlierDeadline)), "a finished a request and asked for the next; its new deadline is still the earliest, so the pick keeps a. A heavy task gets several slices in a row.", "earlier than any queued one"),
            step(Go::Until(Moment::pick_of("b.0", PickKind::EarliestDeadline)), "b's turn: a has run past V (right of the V line, not eligible), and b is eligible with the earliest deadline.", "b.0: eligible"),
            step(Go::RunTo(500 * MS), "Half a second in, the pattern holds: about 3 ms of a for every 1 ms of b, 75 % and 25 %, the ratio of the weights. Round-robin would give each 50 %.", "a.0"),
        ],
    },
    Tour {
        id: "lag",
        title: "Lag and placement after sleep",
        scenario: "eevdf-scenario v1\nmachine up\nhz 1000\nduration 1s\n\
                   task sleeper kind=periodic run=3ms sleep=7ms\ntask hog kind=hog\nend\n",
        cpu: 0,
        steps: &[
            step(Go::RunTo(7 * MS), "A task that runs 3 ms and sleeps 7 ms will share a CPU with a hog; so far only the hog runs. Lag is V - vruntime: positive means the task is owed service, negative that it had more than its share.", "hog.0"),
            step(Go::Until(Moment::woke("sleeper.0")), "The sleeper starts. It has no history, so its lag is 0 and place_entity puts it at V; it is eligible with the earliest deadline, so it preempts the hog.", "sleeper.0 woke"),
            step(Go::Until(Moment::pick_of("sleeper.0", PickKind::EarliestDeadline)), "The two take turns of one 0.7 ms slice: each pick takes the eligible entity (left of V) with the earliest deadline. Their lags swing around 0 by about half a slice.", "sleeper.0: eligible"),
            step(Go::RunTo(13_400_000), "After 3 ms of CPU the sleeper sleeps just right of V, with negative lag: it had a little more than its share. DELAY_DEQUEUE keeps it queued as delayed until that debt is paid, so it cannot sleep its debt away.", "sleeper"),
            step(Go::NextPick, "At the next pick the delayed sleeper is eligible again: the pick dequeues it (DELAY_ZERO clips its lag to 0) and looks again. The hog runs alone.", "DELAY_DEQUEUE"),
            step(Go::Until(Moment::woke("sleeper.0")), "It wakes with the lag it left with, 0, so place_entity (PLACE_LAG) puts it at V. This time the hog's request ends earlier, so the wakee does not preempt: it waits its turn, which comes within one slice.", "whose deadline is earlier"),
        ],
    },
    Tour {
        id: "eligibility",
        title: "Eligibility and the earliest deadline",
        scenario: "eevdf-scenario v1\nmachine up\nhz 1000\nduration 1s\n\
                   task long kind=hog slice=6ms\ntask short kind=hog slice=1ms\n\
                   task mid kind=hog slice=3ms\nend\n",
        cpu: 0,
        steps: &[
            step(Go::RunTo(25 * MS), "Three hogs with 6, 1 and 3 ms slices. Each request ends at a virtual deadline, vruntime + slice x 1024/weight: the bars.", "switch"),
            step(Go::Until(Moment::pick(PickKind::EarliestEligibleDeadline)), "Here the leftmost deadline belongs to an entity right of V (it had more than its share), so pick_eevdf searches for the earliest deadline among eligible entities.", "not eligible"),
            step(Go::Until(Moment::pick_of("short.0", PickKind::EarliestDeadline)), "Shorter slices mean earlier deadlines, so the 1 ms task runs more often, for shorter stretches; with equal weights the three shares stay equal.", "short.0"),
            step(Go::NextPick, "A pick comes every millisecond, even for long's 6 ms request: RUN_TO_PARITY protects curr only up to the shortest slice queued (short's 1 ms), so no request makes a shorter one wait long.", "long.0"),
            step(Go::Until(Moment::pick_of("mid.0", PickKind::CurrEarlierDeadline)), "When curr's protection runs out, the pick may still keep it: mid's deadline is the earliest, so it goes on with its request.", "earlier than any queued one"),
        ],
    },
    Tour {
        id: "run-to-parity",
        title: "RUN_TO_PARITY and why vprot exists",
        scenario: "eevdf-scenario v1\nmachine up\nhz 1000\nduration 1s\n\
                   task hog kind=hog count=2 slice=3ms\ntask w kind=periodic run=300us sleep=700us slice=3ms\nend\n",
        cpu: 0,
        steps: &[
            step(Go::RunTo(10 * MS), "Two hogs and a task waking every millisecond, all with 3 ms slices.", "ms"),
            step(Go::Until(Moment::AnyOf(Cow::Borrowed(PROTECTED))), "The wakee would be picked by deadline alone, but the running task is protected: RUN_TO_PARITY set vprot when it was picked, and it keeps the CPU while eligible until vprot. Without it (the v2 6/6 review) two tasks near V ping-pong at every tick.", "protected"),
            step(Go::Until(Moment::wakeup(Verdict::PickedWakee)), "Once curr's protection is over (or curr is past V), an eligible wakee with the earliest deadline preempts at once.", "wakee is eligible with the earliest deadline"),
            step(Go::Until(WAITS_ITS_TURN), "Not every wakeup preempts: here another entity's deadline is earlier than w's, so w does not preempt and waits its turn, protection or not.", "whose deadline is earlier"),
            step(Go::Worst(1), "w's worst wakeup in this run. Turn RUN_TO_PARITY off in the features and replay: a wakee then preempts whenever the pick would take it, and the hogs switch more often.", "worst wakeup"),
        ],
    },
    Tour {
        id: "preempt-short",
        title: "PREEMPT_SHORT in one picture",
        scenario: "eevdf-scenario v1\nmachine up\nhz 250\nduration 2s\n\
                   task ct kind=timer period=3777us slice=8ms\n\
                   task rt kind=periodic count=2 run=8177us sleep=17777us slice=16ms\nend\n",
        cpu: 0,
        steps: &[
            step(Go::RunTo(30 * MS), "cyclictest (8 ms slice) wakes every 3.777 ms while two rt-app tasks (16 ms slices) run. Watch the wakeup line.", "ms"),
            step(Go::Until(Moment::wakeup(Verdict::ShorterSlice)), "ct wakes while an rt task runs protected. Because ct's slice is shorter, PREEMPT_SHORT cancels curr's protection and ct preempts at once: this is why its p99 stays near the floor.", "shorter slice"),
            step(Go::NextPick, "ct runs for a few microseconds and sleeps just right of V (it ran a little more than its share), so DELAY_DEQUEUE keeps it queued as delayed. The pick goes back to an rt task.", "rt."),
            step(Go::Until(Moment::woke("rt.1")), "An rt task wakes on an idle CPU: there is no one to preempt. The rt tasks rarely overlap (8.2 ms on, 17.8 ms off), so most of ct's wakeups meet one rt task or none.", "CPU was idle"),
            step(Go::Worst(0), "The worst wakeup of ct in this run: PREEMPT_SHORT set curr's protection aside, yet the pick takes the other rt task, whose deadline is earlier, and ct waits its turn. The tail shrinks but does not vanish, as on a 7.2 kernel. Turn PREEMPT_SHORT off and replay: then most wakeups wait for the running task's protection to run out.", "worst wakeup"),
        ],
    },
    Tour {
        id: "group-buddy",
        title: "The group buddy that broke PREEMPT_SHORT (seed 000)",
        scenario: "eevdf-scenario v1\nmachine up\nhz 250\nduration 2s\nfeatures NO_PS_CLEAR_BUDDY\n\
                   group /A weight=100\ngroup /B weight=100\n\
                   task hb kind=periodic count=2 run=3ms sleep=1ms group=/A\n\
                   task ct kind=timer period=2777us slice=8ms group=/B\nend\n",
        cpu: 0,
        steps: &[
            step(Go::RunTo(30 * MS), "Tasks in cgroups /A and /B: each group is an entity of the root queue with its own queue below (two levels in the picture). This runs without the fix (NO_PS_CLEAR_BUDDY).", "/A"),
            step(Go::Until(Moment::pick_of("/B", PickKind::EarliestDeadline)), "A pick walks down the hierarchy: at the root it takes the group entity /B (eligible, earliest deadline), then ct inside it. Each level has its own V, lag and deadlines.", "/B: eligible"),
            step(Go::Until(Moment::AnyOf(Cow::Borrowed(NEXT_BUDDY))), "A task of /A went to sleep and its group became the root's next buddy. The pick honours an eligible buddy before deadlines, so /A can win over ct's group. Seed 000 clears buddies on a PREEMPT_SHORT preemption (PS_CLEAR_BUDDY, merged in 7.1).", "next buddy"),
            step(Go::Until(Moment::Wakeup { of: Some(Cow::Borrowed("ct.0")), verdict: None }), "ct wakes. A wakeup compares entities on the queue they share: for ct that is its group /B against /A at the root, whatever ct's own slice. /A, the next buddy, wins, so ct does not preempt.", "ct.0 woke"),
            step(Go::Worst(1), "ct's worst wakeup in this run: /A keeps the CPU until its pick comes, though it is no longer eligible. Turn PS_CLEAR_BUDDY on (the fix) and replay to compare.", "worst wakeup"),
        ],
    },
    Tour {
        id: "next-buddy",
        title: "NEXT_BUDDY and the CPU hog's share (seed 004)",
        scenario: "eevdf-scenario v1\nmachine up\nhz 250\nduration 1s\nfeatures NEXT_BUDDY\n\
                   task hog kind=hog\ntask pp kind=schbench workers=1 request=50us think=200us\nend\n",
        cpu: 0,
        steps: &[
            step(Go::RunTo(20 * MS), "A CPU hog and a schbench pair that wake each other. NEXT_BUDDY is on: a wakee that preempts becomes cfs_rq->next.", "ms"),
            step(Go::Until(Moment::AnyOf(Cow::Borrowed(NEXT_BUDDY))), "With PICK_BUDDY an eligible next buddy is picked ahead of the earliest deadline: the waking pair passes the CPU between them and the hog's share drops, the regression that got NEXT_BUDDY reverted.", "next buddy"),
            step(Go::Until(Moment::AnyOf(Cow::Borrowed(NEXT_BUDDY))), "The worker slept and the hog ran alone; now the pair's next wakeup makes the wakee the next buddy again, and it is picked ahead of the hog.", "PICK_BUDDY"),
            step(Go::Until(Moment::pick_of("hog.0", PickKind::EarliestDeadline)), "The hog runs when no buddy is eligible: the pair has run past V, so the pick falls back to the earliest deadline.", "hog.0: eligible"),
            step(Go::Worst(1), "The pair's worst wakeup. Turn NEXT_BUDDY off and replay: the wakee then goes by its deadline like everyone else.", "worst wakeup"),
        ],
    },
    Tour {
        id: "ta-tb-tc",
        title: "Vincent's TA/TB/TC (v2 2/6 review)",
        scenario: "eevdf-scenario v1\nmachine up\nhz 1000\nduration 1s\n\
                   task TA kind=hog slice=16ms\ntask keep kind=hog slice=16ms\n\
                   task TB kind=periodic run=16ms sleep=40ms slice=16ms start=20ms\n\
                   task TC kind=periodic run=1ms sleep=9ms slice=8ms start=30ms\nend\n",
        cpu: 0,
        steps: &[
            step(Go::RunTo(70 * MS), "TA (16 ms slice) runs with a third task that keeps it eligible; TB (16 ms) has run once and sleeps; TC (8 ms) wakes every 10 ms.", "TA"),
            step(Go::Until(Moment::woke("TB.0")), "TB wakes with positive lag. Its slice is not shorter than curr's, so PREEMPT_SHORT does not apply: read the verdict. A positive-lag wakee moves V backwards, so curr's protection can outlast its fair share.", "TB.0 woke"),
            step(Go::Until(Moment::wakeup(Verdict::ShorterSlice)), "TC (8 ms slice) wakes. Its slice is shorter than curr's, so PREEMPT_SHORT cancels curr's protection, and TC is eligible with the earliest deadline: it preempted under PREEMPT_SHORT.", "TC.0 woke"),
            step(Go::Until(WAITS_ITS_TURN), "TC wakes again, but now another entity's deadline is earlier: a shorter slice cancels protection, yet the pick still goes by deadline, so TC does not preempt.", "whose deadline is earlier"),
            step(Go::Worst(3), "TC's worst wakeup. PROT_LAG_AWARE (v2 2/6, a switch in the features) bounds curr's protection by its lag, keeping TB's lag within slice + tick. Flip it and replay.", "worst wakeup"),
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::teach::Teacher;

    /// What a caption may claim about the step's wakeup, and the words
    /// its verdict must then contain.
    const CLAIMS: &[(&str, &str)] = &[
        ("another entity won the pick", "does not preempt"),
        (
            "preempted under PREEMPT_SHORT",
            "preempts under PREEMPT_SHORT",
        ),
        ("preempts at once", "preempts"),
        ("but the running task is protected", "current and protected"),
        ("does not preempt", "does not preempt"),
        ("whose deadline is earlier", "whose deadline is earlier"),
        (
            "preempts under PREEMPT_SHORT",
            "preempts under PREEMPT_SHORT",
        ),
    ];

    /// Every tour plays through, and each step's picture contains its
    /// phrase (in the pick reasons, the wakeup verdict, the log, the
    /// note or an entity name).
    #[test]
    fn every_tour_plays_and_shows_what_its_captions_say() {
        for tour in TOURS {
            // Enough steps to carry a story, few enough for one sitting.
            assert!(
                (5..=10).contains(&tour.steps.len()),
                "tour {} has {} steps",
                tour.id,
                tour.steps.len()
            );
            let mut t = Teacher::open(tour.scenario, tour.cpu)
                .unwrap_or_else(|e| panic!("tour {}: {e}", tour.id));
            for (i, s) in tour.steps.iter().enumerate() {
                let v = t
                    .command(&s.go.cmd())
                    .unwrap_or_else(|e| panic!("tour {} step {i}: {e}", tour.id));
                // An "until" that gave up would still print its moment's
                // words in the note: it must have been reached.
                if matches!(s.go, Go::Until(_)) {
                    assert_eq!(v.note, None, "tour {} step {i}", tour.id);
                }
                let mut text = v.pick.join(" ");
                text.push(' ');
                text.push_str(v.wakeup.as_deref().unwrap_or(""));
                text.push(' ');
                text.push_str(&v.log.join(" "));
                text.push(' ');
                text.push_str(v.note.as_deref().unwrap_or(""));
                for q in &v.queues {
                    for e in &q.entities {
                        text.push(' ');
                        text.push_str(&e.name);
                    }
                }
                // A caption that says a task stays queued as delayed shows one.
                if s.caption.contains("queued as delayed") {
                    assert!(
                        v.queues.iter().flat_map(|q| &q.entities).any(|e| e.delayed),
                        "tour {} step {i}: no delayed entity",
                        tour.id
                    );
                }
                // A caption's claim about the wakeup agrees with the verdict.
                for (claim, verdict) in CLAIMS {
                    if s.caption.contains(claim) {
                        let said = v.wakeup.as_deref().unwrap_or("");
                        assert!(
                            said.contains(verdict),
                            "tour {} step {i} says `{claim}`, the verdict: {said}",
                            tour.id
                        );
                    }
                }
                assert!(
                    text.contains(s.expect),
                    "tour {} step {i}: `{}` not in: {text}",
                    tour.id,
                    s.expect
                );
                assert!(
                    s.caption.len() < 400,
                    "tour {} step {i}: caption too long",
                    tour.id
                );
            }
            let extra: u32 = std::env::var("PICKS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            for _ in 0..extra {
                let v = t.command(&TeachCmd::NextPick).unwrap();
                let ents: Vec<String> = v
                    .queues
                    .iter()
                    .flat_map(|q| {
                        q.entities.iter().map(|e| {
                            format!(
                                "{}:{}{}{}{}",
                                e.name,
                                e.lag / 1000,
                                if e.eligible { "E" } else { "" },
                                if e.curr { "*" } else { "" },
                                if e.delayed { "D" } else { "" }
                            )
                        })
                    })
                    .collect();
                println!(
                    "{:>9.3} {:?} | {:?} | {}",
                    v.now as f64 / 1e6,
                    v.pick,
                    v.wakeup,
                    ents.join(" ")
                );
            }
        }
    }
}
