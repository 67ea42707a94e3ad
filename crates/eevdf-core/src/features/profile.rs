//! [`Profile`]: the kernel versions whose defaults are the base of a
//! feature set, with their canonical names.

use std::fmt;

#[cfg(doc)]
use super::FeatureSet;

/// A kernel version whose defaults form the base of a [`FeatureSet`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Profile {
    /// "Completing EEVDF" as Debian's 6.12.95: DELAY_DEQUEUE, PREEMPT_SHORT, deadline-stash protection, PICK_BUDDY, 0.70 ms base slice.
    V6_12,
    /// vprot-based slice protection (~6.17), legacy NEXT_BUDDY code, 2·slice lag clamp.
    V6_18,
    /// Mel Gorman's NEXT_BUDDY rework, enabled, with the "ineligible waker" resched rule.
    V6_19Rc1,
    /// Mainline v7.1: max_slice lag clamp, NI_RATE, "clear buddies for preempt_short" merged.
    V7_1,
    /// Debian's 7.2.13: v7.1 plus HRTICK on (CONFIG_HRTIMER_REARM_DEFERRED), armed for the time to the virtual deadline.
    #[default]
    V7_2,
    /// tip/sched/core after the v2 short-slice series and 8-series 1/8–3/8 (digest: 25 Sep 2026).
    Tip2026_09,
}

impl Profile {
    /// Every profile, oldest first.
    pub const ALL: [Profile; 6] = [
        Profile::V6_12,
        Profile::V6_18,
        Profile::V6_19Rc1,
        Profile::V7_1,
        Profile::V7_2,
        Profile::Tip2026_09,
    ];

    /// The canonical name, e.g. `"v6.19-rc1"` or `"tip-2026-09"`.
    pub const fn name(self) -> &'static str {
        match self {
            Profile::V6_12 => "v6.12",
            Profile::V6_18 => "v6.18",
            Profile::V6_19Rc1 => "v6.19-rc1",
            Profile::V7_1 => "v7.1",
            Profile::V7_2 => "v7.2",
            Profile::Tip2026_09 => "tip-2026-09",
        }
    }

    /// Parses a profile name, ignoring ASCII case and a leading `v`
    /// (`"6.18"`, `"V7.1"` and `"v7.1"` are all accepted).
    pub fn parse(s: &str) -> Option<Profile> {
        let s = s.trim();
        let s = s.strip_prefix(|c| c == 'v' || c == 'V').unwrap_or(s);
        Self::ALL
            .into_iter()
            .find(|p| p.name().trim_start_matches('v').eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
