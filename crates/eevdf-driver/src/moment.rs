//! Typed moments teaching mode runs to: a pick for a reason (of a named
//! entity), or a wakeup with a verdict. Tours name them instead of
//! matching the sentences the page prints, so rewording a sentence
//! cannot move where a tour stops.

use std::borrow::Cow;

use eevdf_core::{EntityId, PickReason, PickStep, WakeupDecision, WakeupReason};
use eevdf_sim::Sim;
use serde::{Deserialize, Serialize};

/// Why a pick went the way it did ([`PickReason`] without its numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PickKind {
    Only,
    NextBuddy,
    Protected,
    EarliestDeadline,
    EarliestEligibleDeadline,
    CurrEarlierDeadline,
}

impl PickKind {
    pub fn of(r: &PickReason) -> PickKind {
        match r {
            PickReason::Only => PickKind::Only,
            PickReason::NextBuddy => PickKind::NextBuddy,
            PickReason::Protected { .. } => PickKind::Protected,
            PickReason::EarliestDeadline { .. } => PickKind::EarliestDeadline,
            PickReason::EarliestEligibleDeadline { .. } => PickKind::EarliestEligibleDeadline,
            PickReason::CurrEarlierDeadline { .. } => PickKind::CurrEarlierDeadline,
        }
    }
}

/// A wakeup decision's verdict, as far as the tours ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The wakee is eligible with the earliest deadline.
    PickedWakee,
    /// PREEMPT_SHORT: the shorter slice preempts.
    ShorterSlice,
    /// NEXT_BUDDY kept its buddy, or a sync wakeup did not preempt.
    SyncNoPreempt,
    /// curr keeps the CPU only by its protection: the wakee is eligible
    /// with an earlier deadline, but curr is still protected.
    ProtectedCurrWins,
    /// The wakee is eligible, but another entity's deadline is earlier
    /// (not curr's protection): it waits its turn.
    EarlierDeadlineWins,
}

/// Whether `p` is the CPU's current entity and still protected
/// (RUN_TO_PARITY), as a snapshot would draw it.
pub fn protected_curr(sim: &Sim, cpu: u32, p: EntityId) -> bool {
    let rq = sim.rq(cpu);
    rq.get_se(p)
        .is_some_and(|se| se.on_rq && rq.cfs(se.cfs_rq).curr == Some(p))
        && rq.protect_slice(p)
}

/// Why a wakee lost the pick to `winner` at its wakeup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lost {
    /// The wakee is not eligible (it had more than its share).
    Ineligible,
    /// The wakee is eligible with the earlier deadline, but the winner
    /// is curr, still protected (RUN_TO_PARITY).
    Protection,
    /// The winner's deadline is not later than the wakee's.
    EarlierDeadline,
    /// They sit on different queues of the hierarchy.
    OtherQueue,
}

/// Why `wakee` lost the pick to `winner` (read right after the decision).
pub fn why_lost(sim: &Sim, cpu: u32, wakee: EntityId, winner: EntityId) -> Lost {
    let rq = sim.rq(cpu);
    let (Some(w), Some(c)) = (rq.get_se(wakee), rq.get_se(winner)) else {
        return Lost::OtherQueue;
    };
    if w.cfs_rq != c.cfs_rq {
        return Lost::OtherQueue;
    }
    if !rq.entity_eligible(w.cfs_rq, wakee) {
        return Lost::Ineligible;
    }
    // Virtual times wrap as the kernel's do: compare their difference.
    let earlier = (w.deadline.wrapping_sub(c.deadline) as i64) < 0;
    if earlier && protected_curr(sim, cpu, winner) {
        Lost::Protection
    } else {
        Lost::EarlierDeadline
    }
}

impl Verdict {
    fn holds(self, sim: &Sim, cpu: u32, wakee: EntityId, d: &WakeupDecision) -> bool {
        match (self, d.reason) {
            (Verdict::PickedWakee, WakeupReason::PickedWakee) => true,
            (
                Verdict::ShorterSlice,
                WakeupReason::ShorterSlicePicked | WakeupReason::ShorterSliceEligible,
            ) => true,
            (Verdict::SyncNoPreempt, WakeupReason::SyncNoPreempt) => true,
            (Verdict::ProtectedCurrWins, WakeupReason::PickedOther { picked: Some(p) }) => {
                why_lost(sim, cpu, wakee, p) == Lost::Protection
            }
            (Verdict::EarlierDeadlineWins, WakeupReason::PickedOther { picked: Some(p) }) => {
                why_lost(sim, cpu, wakee, p) == Lost::EarlierDeadline
            }
            _ => false,
        }
    }
}

/// A moment on the CPU teaching mode looks at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Moment {
    /// A pick, at some level, of the entity named `of` (any if `None`)
    /// for the reason `why` (any if `None`).
    Pick {
        of: Option<Cow<'static, str>>,
        why: Option<PickKind>,
    },
    /// A wakeup of the entity named `of` (any if `None`) with `verdict`
    /// (any if `None`).
    Wakeup {
        of: Option<Cow<'static, str>>,
        verdict: Option<Verdict>,
    },
    /// Whichever comes first.
    AnyOf(Cow<'static, [Moment]>),
}

impl Moment {
    /// A pick for `why`.
    pub const fn pick(why: PickKind) -> Moment {
        Moment::Pick {
            of: None,
            why: Some(why),
        }
    }

    /// A pick of `name` for `why`.
    pub const fn pick_of(name: &'static str, why: PickKind) -> Moment {
        Moment::Pick {
            of: Some(Cow::Borrowed(name)),
            why: Some(why),
        }
    }

    /// Any wakeup of `name`.
    pub const fn woke(name: &'static str) -> Moment {
        Moment::Wakeup {
            of: Some(Cow::Borrowed(name)),
            verdict: None,
        }
    }

    /// Any wakeup decided with `verdict`.
    pub const fn wakeup(verdict: Verdict) -> Moment {
        Moment::Wakeup {
            of: None,
            verdict: Some(verdict),
        }
    }

    /// Whether the CPU's newest pick (`pick`, when it has just changed)
    /// or wakeup decision (`wakeup`, likewise) is this moment.
    pub fn reached(
        &self,
        sim: &Sim,
        cpu: u32,
        pick: Option<&[PickStep]>,
        wakeup: Option<(EntityId, WakeupDecision)>,
    ) -> bool {
        let named = |of: &Option<Cow<'static, str>>, e: EntityId| {
            of.as_deref().is_none_or(|n| sim.entity_name(cpu, e) == n)
        };
        match self {
            Moment::Pick { of, why } => pick.is_some_and(|steps| {
                steps.iter().any(|st| {
                    why.is_none_or(|w| PickKind::of(&st.reason) == w) && named(of, st.picked)
                })
            }),
            Moment::Wakeup { of, verdict } => wakeup.is_some_and(|(e, d)| {
                named(of, e) && verdict.is_none_or(|v| v.holds(sim, cpu, e, &d))
            }),
            Moment::AnyOf(ms) => ms.iter().any(|m| m.reached(sim, cpu, pick, wakeup)),
        }
    }
}

impl std::fmt::Display for Moment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name =
            |of: &Option<Cow<'static, str>>| of.as_deref().unwrap_or("any entity").to_string();
        let why = |w: Option<String>| w.map_or(String::new(), |w| format!(" ({w})"));
        match self {
            Moment::Pick { of, why: w } => {
                write!(
                    f,
                    "pick of {}{}",
                    name(of),
                    why(w.map(|w| format!("{w:?}")))
                )
            }
            Moment::Wakeup { of, verdict } => write!(
                f,
                "wakeup of {}{}",
                name(of),
                why(verdict.map(|v| format!("{v:?}")))
            ),
            Moment::AnyOf(ms) => {
                let parts: Vec<String> = ms.iter().map(|m| m.to_string()).collect();
                write!(f, "{}", parts.join(" or "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eevdf_scenario::scenario::Scenario;

    /// Steps `text` on CPU 0 for 200 ms and returns, for every new wakeup
    /// decision, the moments of `probe` that held.
    fn wakeups(text: &str, probe: &[Moment]) -> Vec<(WakeupDecision, Vec<bool>, String)> {
        let mut sim = Sim::new(Scenario::parse(text).unwrap().sim_config());
        let mut last = None;
        let mut out = Vec::new();
        while sim.step().is_some_and(|t| t < 200_000_000) {
            let w = sim.rq(0).last_wakeup;
            if w != last {
                last = w;
                let (e, d) = w.unwrap();
                let held = probe
                    .iter()
                    .map(|m| m.reached(&sim, 0, None, Some((e, d))))
                    .collect();
                out.push((d, held, crate::teach::describe_wakeup(&sim, 0, e, d)));
            }
        }
        out
    }

    #[test]
    fn protection_wins_only_against_an_eligible_earlier_wakee() {
        let text = "eevdf-scenario v1\nmachine up\nhz 1000\nduration 200ms\n\
                    task hog kind=hog count=2 slice=3ms\n\
                    task w kind=periodic run=300us sleep=700us slice=3ms\nend\n";
        let probe = [
            Moment::wakeup(Verdict::ProtectedCurrWins),
            Moment::wakeup(Verdict::PickedWakee),
            Moment::woke("w.0"),
        ];
        let seen = wakeups(text, &probe);
        // Equal decisions in a row read as one (as teaching mode sees them).
        assert!(seen.len() >= 10, "{} wakeups", seen.len());
        let protected = seen.iter().filter(|(_, h, _)| h[0]).count();
        assert!(protected > 0, "no wakeup lost to a protected curr");
        for (d, held, said) in &seen {
            if held[0] {
                // Only w sleeps, so only w can lose to a protected hog.
                assert!(held[2]);
                assert!(!d.preempt && matches!(d.reason, WakeupReason::PickedOther { .. }));
                assert!(said.contains("current and protected"), "{said}");
            }
            if held[1] {
                assert!(d.preempt && !held[0]);
            }
        }
    }

    #[test]
    fn an_ineligible_wakee_does_not_lose_to_protection() {
        // w overruns its share, so it often wakes ineligible: the protected
        // hog keeps the CPU, but not because of its protection. (A delayed
        // w whose lag turned positive while the hog ran is placed afresh
        // at V and wakes eligible, engine 0.9; it may lose to protection.)
        let text = "eevdf-scenario v1\nmachine up\nhz 1000\nduration 200ms\n\
                    features NO_PREEMPT_SHORT\ntask hog kind=hog slice=3ms\n\
                    task w kind=periodic run=700us sleep=300us slice=1ms\nend\n";
        let probe = [Moment::wakeup(Verdict::ProtectedCurrWins)];
        let seen = wakeups(text, &probe);
        let ineligible: Vec<_> = seen
            .iter()
            .filter(|(d, _, said)| {
                matches!(d.reason, WakeupReason::PickedOther { .. })
                    && said.starts_with("w.0")
                    && said.contains("not eligible")
            })
            .collect();
        assert!(
            !ineligible.is_empty(),
            "w never lost a pick while ineligible"
        );
        // Neither the moment nor the sentence blames protection.
        for (_, held, said) in ineligible {
            assert!(!held[0], "{said}");
            assert!(!said.contains("protected"), "{said}");
        }
    }

    #[test]
    fn a_pick_moment_matches_its_reason_and_name() {
        let text = "eevdf-scenario v1\nmachine up\nduration 20ms\n\
                    task a kind=hog\ntask b kind=hog nice=5\nend\n";
        let mut sim = Sim::new(Scenario::parse(text).unwrap().sim_config());
        let mut picks = sim.rq(0).picks;
        let (mut of_a, mut any) = (0, 0);
        while sim.step().is_some_and(|t| t < 20_000_000) {
            let rq = sim.rq(0);
            if rq.picks == picks {
                continue;
            }
            picks = rq.picks;
            let steps = rq.last_pick.clone();
            let name = sim.entity_name(0, steps[0].picked);
            let why = PickKind::of(&steps[0].reason);
            let m = Moment::pick_of("a.0", why);
            assert_eq!(m.reached(&sim, 0, Some(&steps), None), name == "a.0");
            assert!(Moment::pick(why).reached(&sim, 0, Some(&steps), None));
            assert!(!Moment::woke("a.0").reached(&sim, 0, Some(&steps), None));
            of_a += usize::from(name == "a.0");
            any += 1;
        }
        assert!(of_a > 0 && of_a < any, "{of_a} of {any} picks are a's");
    }
}
