//! Sched features: kernel profiles, `SCHED_FEAT` booleans and the seed-patch
//! toggles, set with debugfs-style tokens (docs/model.md §8).
//!
//! The effective configuration is a [`Profile`]'s defaults (docs/model.md §8) with
//! tokens applied on top, in order. A boolean is written `NAME` (on) or
//! `NO_NAME` (off); an enum is written `NAME=VALUE`. Names use the kernel's
//! `SCHED_FEAT` spelling and are case-sensitive; enum values are not. Every
//! name is modelled (by the engine or by the simulator, see [`Status`]),
//! known but not modelled (accepted, kept and reported), or unknown (an
//! error with a spelling hint). A pasted `/sys/kernel/debug/sched/features`
//! line (formats.md §5) is accepted with warnings instead of errors.

use std::fmt;

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

/// Declares a feature enum with its canonical token spellings.
macro_rules! value_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident => $s:literal,)+ }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $var,)+ }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// Every value's canonical token spelling, in declaration order.
            pub const VALUES: &'static [&'static str] = &[$($s),+];

            /// The canonical token spelling.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$var => $s,)+ }
            }

            /// Parses a token value, ignoring ASCII case.
            pub fn parse(s: &str) -> Option<Self> {
                let s = s.trim();
                Self::ALL.iter().copied().find(|v| v.as_str().eq_ignore_ascii_case(s))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

value_enum! {
    /// The vprot rule in `set_protect_slice` (docs/model.md §3.5, §8).
    ProtSet {
        /// min(deadline, vruntime + min_slice/w) (~6.17 → 7.1).
        Mainline => "MAINLINE",
        /// v6.12–6.16: deadline stashed in vlag at pick.
        Stash => "STASH",
        /// v2 6/6: protect only until V when a shorter slice is queued.
        ShortAvg => "SHORT_AVG",
        /// Peter's review of 6/6: cap at the tree root's vruntime.
        PzRoot => "PZ_ROOT",
        /// Newest tip: cap at `ineligible_vruntime()`.
        Ineligible => "INELIGIBLE",
        /// 8-series 1/8: always cap at one min slice, then the ineligible cap.
        CapMinSlice => "CAP_MIN_SLICE",
    }
}

value_enum! {
    /// The vprot rule in `update_protect_slice` (docs/model.md §8).
    ProtUpdate {
        /// min(vprot, vruntime + min_slice/w).
        Mainline => "MAINLINE",
        /// Peter's review of 2/6: subtract the runtime of the current stint.
        PzRuntime => "PZ_RUNTIME",
        /// 8-series 2/8: same formula as `set_protect_slice`.
        Align => "ALIGN",
    }
}

value_enum! {
    /// Which wakeup-preemption / next-buddy code runs (docs/model.md §3.6).
    NbMode {
        /// v6.12–6.18: unconditional `set_next_buddy`, pick-based preemption.
        Legacy => "legacy",
        /// 6.19-rc1 (Mel Gorman v5): `preempt_wakeup_action`, ineligible-waker rule.
        MelV5 => "mel_v5",
        /// v7.1 step list (§8.3).
        Mainline => "mainline",
    }
}

value_enum! {
    /// The runtime `preempt_sync` compares with its threshold (docs/model.md §3.6).
    NbSyncDelta {
        /// `rq_clock_task − exec_start`, as written (≈ 0 after `update_curr`).
        ExecStart => "exec_start",
        /// `sum_exec_runtime − prev_sum_exec_runtime`, as intended.
        StintRuntime => "stint_runtime",
    }
}

value_enum! {
    /// The lag clamp in `update_entity_lag` (docs/model.md §3.2).
    LagClamp {
        /// `max(2·slice, TICK_NSEC)` (v6.6 … 6.19).
        TwoSliceTick => "2slice_tick",
        /// `cfs_rq_max_slice + TICK_NSEC` (v7.0+ and stable backports).
        MaxSliceTick => "maxslice_tick",
    }
}

value_enum! {
    /// How `hrtick_start_fair` sizes the HRTICK timer.
    HrtickArm {
        /// Up to 7.1: the real time left in the slice,
        /// `slice - (sum_exec - prev_sum_exec)`, re-armed on every enqueue.
        SliceLeft => "slice_left",
        /// 7.2: the time to the virtual deadline, `weight *
        /// (deadline - vruntime) / NICE_0_LOAD`; an enqueue arms it only
        /// when no HRTICK is pending (`hrtick_update`).
        Deadline => "deadline",
    }
}

value_enum! {
    /// Lag handling of a delayed entity that wakes (docs/model.md §3.7).
    DelayLag {
        /// 6.12–7.0: under DELAY_ZERO, re-place only when vlag > 0.
        V6_12 => "v6.12",
        /// 7.1: re-place whenever `update_entity_lag` modified the lag.
        V7_1 => "v7.1",
    }
}

/// The effective feature values of one runqueue configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Features {
    /// `PLACE_LAG`
    pub place_lag: bool,
    /// `PLACE_DEADLINE_INITIAL`
    pub place_deadline_initial: bool,
    /// `PLACE_REL_DEADLINE`
    pub place_rel_deadline: bool,
    /// `RUN_TO_PARITY`
    pub run_to_parity: bool,
    /// `PREEMPT_SHORT`
    pub preempt_short: bool,
    /// `NEXT_BUDDY`
    pub next_buddy: bool,
    /// `PICK_BUDDY`
    pub pick_buddy: bool,
    /// `CACHE_HOT_BUDDY`
    pub cache_hot_buddy: bool,
    /// `DELAY_DEQUEUE`
    pub delay_dequeue: bool,
    /// `DELAY_ZERO`
    pub delay_zero: bool,
    /// `WAKEUP_PREEMPTION`
    pub wakeup_preemption: bool,
    /// `HRTICK`
    pub hrtick: bool,
    /// `SIS_UTIL`
    pub sis_util: bool,
    /// `WA_IDLE`
    pub wa_idle: bool,
    /// `WA_WEIGHT`
    pub wa_weight: bool,
    /// `WA_BIAS`
    pub wa_bias: bool,
    /// `NI_RANDOM`
    pub ni_random: bool,
    /// `NI_RATE`
    pub ni_rate: bool,
    /// `PS_CLEAR_BUDDY`
    pub ps_clear_buddy: bool,
    /// `PS_SET_NEXT_BUDDY`
    pub ps_set_next_buddy: bool,
    /// `PS_IGNORE_NEED_RESCHED`
    pub ps_ignore_need_resched: bool,
    /// `PS_CANCEL_IF_ELIGIBLE`
    pub ps_cancel_if_eligible: bool,
    /// `PS_SHORT_BUDDY_TIE`
    pub ps_short_buddy_tie: bool,
    /// `PROT_LAG_AWARE`
    pub prot_lag_aware: bool,
    /// `PROT_ALWAYS_UPDATE`
    pub prot_always_update: bool,
    /// `LAG_DECAY_SLEEP`
    pub lag_decay_sleep: bool,
    /// `LAG_RESET_IDLE`
    pub lag_reset_idle: bool,
    /// `NB_RESCHED_INELIGIBLE_WAKER`
    pub nb_resched_ineligible_waker: bool,
    /// `WA_SLICE`
    pub wa_slice: bool,
    /// `SIS_SLICE`
    pub sis_slice: bool,
    /// `MINSLICE_PERCPU`
    pub minslice_percpu: bool,
    /// `PROT_SET`
    pub prot_set: ProtSet,
    /// `PROT_UPDATE`
    pub prot_update: ProtUpdate,
    /// `NB_MODE`
    pub nb_mode: NbMode,
    /// `NB_SYNC_DELTA`
    pub nb_sync_delta: NbSyncDelta,
    /// `LAG_CLAMP`
    pub lag_clamp: LagClamp,
    /// `DELAY_LAG`
    pub delay_lag: DelayLag,
    /// `HRTICK_ARM`: the HRTICK timer's length.
    pub hrtick_arm: HrtickArm,
    /// `normalized_sysctl_sched_base_slice` in ns (docs/model.md §2).
    pub normalized_base_slice_ns: u64,
}

impl Default for Features {
    fn default() -> Self {
        Features::for_profile(Profile::default())
    }
}

impl Features {
    /// Mainline v7.1 (docs/model.md §8 defaults; PS_CLEAR_BUDDY merged).
    const MAINLINE: Features = Features {
        place_lag: true,
        place_deadline_initial: true,
        place_rel_deadline: true,
        run_to_parity: true,
        preempt_short: true,
        next_buddy: false,
        pick_buddy: true,
        cache_hot_buddy: true,
        delay_dequeue: true,
        delay_zero: true,
        wakeup_preemption: true,
        hrtick: false,
        sis_util: true,
        wa_idle: true,
        wa_weight: true,
        wa_bias: true,
        ni_random: true,
        ni_rate: true,
        ps_clear_buddy: true,
        ps_set_next_buddy: false,
        ps_ignore_need_resched: false,
        ps_cancel_if_eligible: false,
        ps_short_buddy_tie: false,
        prot_lag_aware: false,
        prot_always_update: false,
        lag_decay_sleep: false,
        lag_reset_idle: false,
        nb_resched_ineligible_waker: false,
        wa_slice: false,
        sis_slice: false,
        minslice_percpu: false,
        prot_set: ProtSet::Mainline,
        prot_update: ProtUpdate::Mainline,
        nb_mode: NbMode::Mainline,
        nb_sync_delta: NbSyncDelta::ExecStart,
        lag_clamp: LagClamp::MaxSliceTick,
        delay_lag: DelayLag::V7_1,
        hrtick_arm: HrtickArm::SliceLeft,
        normalized_base_slice_ns: 700_000,
    };

    /// The defaults of a kernel profile (docs/model.md §8).
    pub const fn for_profile(p: Profile) -> Features {
        let m = Self::MAINLINE;
        match p {
            // NI_RANDOM is in 6.12.95's features.h (backported).
            Profile::V6_12 => Features {
                prot_set: ProtSet::Stash,
                nb_mode: NbMode::Legacy,
                lag_clamp: LagClamp::TwoSliceTick,
                delay_lag: DelayLag::V6_12,
                ps_clear_buddy: false,
                ni_rate: false,
                ..m
            },
            Profile::V6_18 => Features {
                nb_mode: NbMode::Legacy,
                lag_clamp: LagClamp::TwoSliceTick,
                delay_lag: DelayLag::V6_12,
                ps_clear_buddy: false,
                ni_random: false,
                ni_rate: false,
                ..m
            },
            Profile::V6_19Rc1 => Features {
                nb_mode: NbMode::MelV5,
                next_buddy: true,
                nb_resched_ineligible_waker: true,
                lag_clamp: LagClamp::TwoSliceTick,
                delay_lag: DelayLag::V6_12,
                ps_clear_buddy: false,
                ni_rate: false,
                ..m
            },
            Profile::V7_1 => m,
            Profile::V7_2 => Features {
                hrtick: true,
                hrtick_arm: HrtickArm::Deadline,
                ..m
            },
            Profile::Tip2026_09 => Features {
                ps_ignore_need_resched: true,
                ps_cancel_if_eligible: true,
                ps_short_buddy_tie: true,
                prot_always_update: true,
                prot_lag_aware: true,
                prot_set: ProtSet::CapMinSlice,
                prot_update: ProtUpdate::Align,
                ..m
            },
        }
    }

    /// `sysctl_sched_base_slice` under the default LOG tunable scaling:
    /// normalized × (1 + ilog2(min(nr_cpus, 8))), 0 CPUs counted as 1
    /// (docs/model.md §2).
    pub fn base_slice_ns(&self, nr_cpus: u32) -> u64 {
        let factor = 1 + u64::from(nr_cpus.clamp(1, 8).ilog2());
        self.normalized_base_slice_ns * factor
    }

    /// The value of a modelled boolean by its `SCHED_FEAT` name.
    pub fn get_bool(&self, name: &str) -> Option<bool> {
        let mut copy = *self;
        bool_slot(&mut copy, name).map(|b| *b)
    }

    /// The canonical value of an enum feature by name, e.g. `"legacy"`.
    pub fn get_enum(&self, name: &str) -> Option<&'static str> {
        Some(match name {
            "PROT_SET" => self.prot_set.as_str(),
            "PROT_UPDATE" => self.prot_update.as_str(),
            "NB_MODE" => self.nb_mode.as_str(),
            "NB_SYNC_DELTA" => self.nb_sync_delta.as_str(),
            "LAG_CLAMP" => self.lag_clamp.as_str(),
            "DELAY_LAG" => self.delay_lag.as_str(),
            "HRTICK_ARM" => self.hrtick_arm.as_str(),
            _ => return None,
        })
    }

    /// Sets an enum feature; `None` if the name or the value is not known.
    fn set_enum(&mut self, name: &str, value: &str) -> Option<()> {
        match name {
            "PROT_SET" => self.prot_set = ProtSet::parse(value)?,
            "PROT_UPDATE" => self.prot_update = ProtUpdate::parse(value)?,
            "NB_MODE" => self.nb_mode = NbMode::parse(value)?,
            "NB_SYNC_DELTA" => self.nb_sync_delta = NbSyncDelta::parse(value)?,
            "LAG_CLAMP" => self.lag_clamp = LagClamp::parse(value)?,
            "DELAY_LAG" => self.delay_lag = DelayLag::parse(value)?,
            "HRTICK_ARM" => self.hrtick_arm = HrtickArm::parse(value)?,
            _ => return None,
        }
        Some(())
    }
}

/// The field of a modelled boolean, by `SCHED_FEAT` name.
fn bool_slot<'a>(f: &'a mut Features, name: &str) -> Option<&'a mut bool> {
    Some(match name {
        "PLACE_LAG" => &mut f.place_lag,
        "PLACE_DEADLINE_INITIAL" => &mut f.place_deadline_initial,
        "PLACE_REL_DEADLINE" => &mut f.place_rel_deadline,
        "RUN_TO_PARITY" => &mut f.run_to_parity,
        "PREEMPT_SHORT" => &mut f.preempt_short,
        "NEXT_BUDDY" => &mut f.next_buddy,
        "PICK_BUDDY" => &mut f.pick_buddy,
        "CACHE_HOT_BUDDY" => &mut f.cache_hot_buddy,
        "DELAY_DEQUEUE" => &mut f.delay_dequeue,
        "DELAY_ZERO" => &mut f.delay_zero,
        "WAKEUP_PREEMPTION" => &mut f.wakeup_preemption,
        "HRTICK" => &mut f.hrtick,
        "SIS_UTIL" => &mut f.sis_util,
        "WA_IDLE" => &mut f.wa_idle,
        "WA_WEIGHT" => &mut f.wa_weight,
        "WA_BIAS" => &mut f.wa_bias,
        "NI_RANDOM" => &mut f.ni_random,
        "NI_RATE" => &mut f.ni_rate,
        "PS_CLEAR_BUDDY" => &mut f.ps_clear_buddy,
        "PS_SET_NEXT_BUDDY" => &mut f.ps_set_next_buddy,
        "PS_IGNORE_NEED_RESCHED" => &mut f.ps_ignore_need_resched,
        "PS_CANCEL_IF_ELIGIBLE" => &mut f.ps_cancel_if_eligible,
        "PS_SHORT_BUDDY_TIE" => &mut f.ps_short_buddy_tie,
        "PROT_LAG_AWARE" => &mut f.prot_lag_aware,
        "PROT_ALWAYS_UPDATE" => &mut f.prot_always_update,
        "LAG_DECAY_SLEEP" => &mut f.lag_decay_sleep,
        "LAG_RESET_IDLE" => &mut f.lag_reset_idle,
        "NB_RESCHED_INELIGIBLE_WAKER" => &mut f.nb_resched_ineligible_waker,
        "WA_SLICE" => &mut f.wa_slice,
        "SIS_SLICE" => &mut f.sis_slice,
        "MINSLICE_PERCPU" => &mut f.minslice_percpu,
        _ => return None,
    })
}

/// Whether a name is a boolean or an enum with its canonical values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureKind {
    /// Written `NAME` or `NO_NAME`.
    Bool,
    /// Written `NAME=VALUE`, one of these canonical values.
    Enum(&'static [&'static str]),
}

/// Who models a feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Modelled by this crate's runqueue engine.
    Engine,
    /// Stored here, modelled by the simulator's SMP / timer layer.
    Simulator,
    /// Accepted and kept, reported as not modelled.
    NotModelled,
}

/// One known feature name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureInfo {
    /// `SCHED_FEAT` spelling.
    pub name: &'static str,
    /// Boolean or enum.
    pub kind: FeatureKind,
    /// Who models it.
    pub status: Status,
    /// One short line (the patch subject for seed toggles).
    pub doc: &'static str,
}

const fn info(
    name: &'static str,
    kind: FeatureKind,
    status: Status,
    doc: &'static str,
) -> FeatureInfo {
    FeatureInfo {
        name,
        kind,
        status,
        doc,
    }
}
const fn engine(name: &'static str, doc: &'static str) -> FeatureInfo {
    info(name, FeatureKind::Bool, Status::Engine, doc)
}
const fn sim(name: &'static str, doc: &'static str) -> FeatureInfo {
    info(name, FeatureKind::Bool, Status::Simulator, doc)
}
const fn known(name: &'static str, doc: &'static str) -> FeatureInfo {
    info(name, FeatureKind::Bool, Status::NotModelled, doc)
}
const fn removed(name: &'static str) -> FeatureInfo {
    known(name, "removed from the kernel")
}
const fn enumf(
    name: &'static str,
    values: &'static [&'static str],
    doc: &'static str,
) -> FeatureInfo {
    info(name, FeatureKind::Enum(values), Status::Engine, doc)
}

/// Every known name except the aliases (see [`ALIASES`]): modelled
/// booleans (kernel, then seed toggles), enums, then known-not-modelled
/// (current kernel names, then removed ones). This is the order of
/// [`FeatureSet::canonical_tokens`].
#[rustfmt::skip]
pub static FEATURES: &[FeatureInfo] = &[
    engine("PLACE_LAG", "restore saved lag at enqueue"),
    engine("PLACE_DEADLINE_INITIAL", "half-slice first deadline for new tasks"),
    engine("PLACE_REL_DEADLINE", "keep the relative deadline over a non-sleep dequeue"),
    engine("RUN_TO_PARITY", "slice protection uses the queue's min slice"),
    engine("PREEMPT_SHORT", "a shorter-slice wakee bypasses slice protection"),
    engine("NEXT_BUDDY", "wakeup nominates the wakee as cfs_rq->next"),
    engine("PICK_BUDDY", "pick honours an eligible next buddy"),
    sim("CACHE_HOT_BUDDY", "load balancer treats the next buddy as cache-hot"),
    engine("DELAY_DEQUEUE", "ineligible sleepers stay queued to burn negative lag"),
    engine("DELAY_ZERO", "clip lag to 0 when a delayed dequeue completes"),
    engine("WAKEUP_PREEMPTION", "master switch for wakeup preemption"),
    sim("HRTICK", "high-resolution tick at slice expiry"),
    sim("SIS_UTIL", "limit the LLC idle scan by utilisation"),
    sim("WA_IDLE", "wake_affine: prefer an idle CPU"),
    sim("WA_WEIGHT", "wake_affine: compare CPU loads"),
    sim("WA_BIAS", "wake_affine: bias towards the previous CPU"),
    sim("NI_RANDOM", "randomly skip newidle balance by its success rate"),
    sim("NI_RATE", "time-based newidle success-rate update"),
    engine("PS_CLEAR_BUDDY", "clear buddies for preempt_short"),
    engine("PS_SET_NEXT_BUDDY", "Set next buddy for preempt short"),
    engine("PS_IGNORE_NEED_RESCHED", "Update slice protection even when resched is already set"),
    engine("PS_CANCEL_IF_ELIGIBLE", "Cancel slice protection if short slice task is eligible"),
    engine("PS_SHORT_BUDDY_TIE", "Handle more short slice waking cases"),
    engine("PROT_LAG_AWARE", "Take into account current's lag when updating slice protection"),
    engine("PROT_ALWAYS_UPDATE", "Always update slice protection"),
    engine("LAG_DECAY_SLEEP", "Decay positive lag of sleeping entities"),
    engine("LAG_RESET_IDLE", "Reset lag when waking up on idle cpu"),
    engine("NB_RESCHED_INELIGIBLE_WAKER", "6.19-rc1: reschedule if the waker is no longer eligible"),
    sim("WA_SLICE", "Compare min slice during wake_affine"),
    sim("SIS_SLICE", "Add min slice check when selecting CPU"),
    sim("MINSLICE_PERCPU", "Add per cpu cached min_slice"),
    enumf("PROT_SET", ProtSet::VALUES, "vprot rule at pick (set_protect_slice)"),
    enumf("PROT_UPDATE", ProtUpdate::VALUES, "vprot rule on a failed wakeup preemption"),
    enumf("NB_MODE", NbMode::VALUES, "wakeup-preemption code: 6.12-6.18, 6.19-rc1 or 7.1"),
    enumf("NB_SYNC_DELTA", NbSyncDelta::VALUES, "waker runtime tested by preempt_sync"),
    enumf("LAG_CLAMP", LagClamp::VALUES, "lag clamp: max(2*slice, tick) or max_slice + tick"),
    enumf("DELAY_LAG", DelayLag::VALUES, "lag of a delayed entity that wakes up"),
    enumf("HRTICK_ARM", HrtickArm::VALUES, "HRTICK length: slice left (<= 7.1) or to the deadline (7.2)"),
    known("PARANOID_AVG", "overflow-checked avg_vruntime sums"),
    known("HRTICK_DL", "high-resolution tick for the deadline class"),
    known("NONTASK_CAPACITY", "subtract IRQ/steal time from CPU capacity"),
    known("TTWU_QUEUE", "queue remote wakeups to the target CPU"),
    known("WARN_DOUBLE_CLOCK", "debug: warn on a double rq clock update"),
    known("RT_PUSH_IPI", "RT class: push tasks via IPI"),
    known("RT_RUNTIME_SHARE", "RT class: borrow runtime from other CPUs"),
    known("LB_MIN", "load balancer skips tiny-load tasks"),
    known("ATTACH_AGE_LOAD", "PELT: age the load on attach"),
    known("UTIL_EST", "estimated utilisation"),
    known("LATENCY_WARN", "debug: warn on long resched latency"),
    removed("START_DEBIT"),
    removed("LAST_BUDDY"),
    removed("GENTLE_FAIR_SLEEPERS"),
    removed("WAKEUP_GRANULARITY"),
    removed("ALT_PERIOD"),
    removed("BASE_SLICE"),
    removed("UTIL_EST_FASTUP"),
    removed("SIS_PROP"),
    removed("SIS_AVG_CPU"),
    removed("SIS_LB_MIN"),
    removed("DOUBLE_TICK"),
    removed("HZ_BW"),
];

/// The newest mainline debugfs line with the `features.h` defaults
/// (formats.md §5): the names, order and not-modelled defaults of
/// [`FeatureSet::debugfs_line`].
const KERNEL_DEFAULT_LINE: &str = "PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY \
    PREEMPT_SHORT NO_NEXT_BUDDY PICK_BUDDY CACHE_HOT_BUDDY DELAY_DEQUEUE DELAY_ZERO NO_PARANOID_AVG \
    WAKEUP_PREEMPTION NO_HRTICK NO_HRTICK_DL NONTASK_CAPACITY TTWU_QUEUE SIS_UTIL NO_WARN_DOUBLE_CLOCK \
    NO_RT_PUSH_IPI NO_RT_RUNTIME_SHARE NO_LB_MIN ATTACH_AGE_LOAD WA_IDLE WA_WEIGHT WA_BIAS UTIL_EST \
    NO_LATENCY_WARN NI_RANDOM NI_RATE";

/// `(name, default)` of [`KERNEL_DEFAULT_LINE`], in order.
fn kernel_features_h() -> impl Iterator<Item = (&'static str, bool)> {
    KERNEL_DEFAULT_LINE
        .split_whitespace()
        .map(|t| match t.strip_prefix("NO_") {
            Some(name) => (name, false),
            None => (t, true),
        })
}

/// A boolean spelling of one enum value (the spec's single-name PROT
/// toggles). `NAME` sets the enum; `NO_NAME` resets it to `MAINLINE` only
/// if it currently has this value. Never printed by
/// [`FeatureSet::canonical_tokens`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AliasInfo {
    /// The alias, e.g. `PROT_INELIGIBLE`.
    pub name: &'static str,
    /// The enum feature it sets, e.g. `PROT_SET`.
    pub target: &'static str,
    /// The canonical value it sets, e.g. `INELIGIBLE`.
    pub value: &'static str,
}

const fn alias(name: &'static str, target: &'static str, value: &'static str) -> AliasInfo {
    AliasInfo {
        name,
        target,
        value,
    }
}

/// Every alias.
pub static ALIASES: &[AliasInfo] = &[
    alias("PROT_SHORT_AVG", "PROT_SET", "SHORT_AVG"),
    alias("PROT_PZ_ROOT", "PROT_SET", "PZ_ROOT"),
    alias("PROT_INELIGIBLE", "PROT_SET", "INELIGIBLE"),
    alias("PROT_CAP_MIN_SLICE", "PROT_SET", "CAP_MIN_SLICE"),
    alias("PROT_STASH", "PROT_SET", "STASH"),
    alias("PROT_PZ_RUNTIME", "PROT_UPDATE", "PZ_RUNTIME"),
    alias("PROT_ALIGN_UPDATE", "PROT_UPDATE", "ALIGN"),
];

/// The table entry of a (non-alias) name, exact spelling.
pub fn feature_info(name: &str) -> Option<&'static FeatureInfo> {
    FEATURES.iter().find(|i| i.name == name)
}

/// The alias entry of a name, exact spelling.
pub fn alias_info(name: &str) -> Option<&'static AliasInfo> {
    ALIASES.iter().find(|a| a.name == name)
}

#[derive(Clone, Copy)]
enum Known {
    Feature(&'static FeatureInfo),
    Alias(&'static AliasInfo),
}

fn lookup(name: &str) -> Option<Known> {
    feature_info(name)
        .map(Known::Feature)
        .or_else(|| alias_info(name).map(Known::Alias))
}

/// What [`FeatureSet::apply`] did with a valid token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Applied {
    /// The token changed (or confirmed) a modelled value.
    Modelled,
    /// Accepted and kept, but nothing models it.
    NotModelled,
}

/// Why a token was rejected. The [`fmt::Display`] text carries a hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FeatureError {
    /// No such name; `suggestion` is the closest known name (without `NO_`).
    Unknown {
        name: String,
        suggestion: Option<&'static str>,
    },
    /// `NAME=VALUE` with a value the enum does not have.
    BadValue {
        name: &'static str,
        value: String,
        expected: &'static [&'static str],
    },
    /// An enum written without `=VALUE`.
    MissingValue { name: &'static str },
    /// `NAME=VALUE` on a boolean (or an alias).
    UnexpectedValue { name: String },
    /// `NO_NAME` on an enum.
    NoPrefixOnEnum { name: &'static str },
}

impl fmt::Display for FeatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = |name: &str| match feature_info(name).map(|i| i.kind) {
            Some(FeatureKind::Enum(v)) => v.join(", "),
            _ => String::new(),
        };
        match self {
            FeatureError::Unknown { name, suggestion } => {
                write!(f, "unknown sched feature `{name}`")?;
                if let Some(s) = suggestion {
                    let no = has_no_prefix(name) && matches!(lookup(s), Some(k) if !is_enum(k));
                    write!(f, "; did you mean {}{s}?", if no { "NO_" } else { "" })?;
                }
                Ok(())
            }
            FeatureError::BadValue { name, value, expected } => write!(
                f,
                "`{value}` is not a value of {name}; expected one of {}",
                expected.join(", ")
            ),
            FeatureError::MissingValue { name } => write!(
                f,
                "{name} needs a value: write {name}=VALUE with VALUE one of {}",
                values(name)
            ),
            FeatureError::UnexpectedValue { name } => {
                let base = name.strip_prefix("NO_").filter(|b| lookup(b).is_some()).unwrap_or(name);
                write!(f, "{name} is a boolean and takes no value; write {base} or NO_{base}")
            }
            FeatureError::NoPrefixOnEnum { name } => write!(
                f,
                "{name} is not a boolean, so NO_{name} is not allowed; write {name}=VALUE with VALUE one of {}",
                values(name)
            ),
        }
    }
}

impl std::error::Error for FeatureError {}

/// A token of a pasted debugfs line that was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureWarning {
    /// The token as pasted.
    pub token: String,
    /// Why it was skipped (the [`FeatureError`] text).
    pub message: String,
}

impl fmt::Display for FeatureWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ignored `{}`: {}", self.token, self.message)
    }
}

fn is_enum(k: Known) -> bool {
    matches!(
        k,
        Known::Feature(FeatureInfo {
            kind: FeatureKind::Enum(_),
            ..
        })
    )
}

fn has_no_prefix(name: &str) -> bool {
    name.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("NO_"))
}

/// Levenshtein distance over ASCII-uppercased bytes.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(!ca.eq_ignore_ascii_case(&cb));
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known name (or alias) closest to `name`, ignoring case and a `NO_`
/// prefix, if it is close enough to be a plausible typo.
fn suggest(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.len() > 64 {
        return None;
    }
    let stripped = if has_no_prefix(name) {
        Some(&name[3..])
    } else {
        None
    };
    let candidates = FEATURES
        .iter()
        .map(|i| i.name)
        .chain(ALIASES.iter().map(|a| a.name));
    candidates
        .map(|c| {
            let d = stripped.map_or(usize::MAX, |s| edit_distance(s, c));
            (d.min(edit_distance(name, c)), c)
        })
        .filter(|&(d, c)| d <= (c.len() / 4).max(2))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// A profile plus the tokens applied over it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureSet {
    /// The base profile.
    pub profile: Profile,
    /// The effective values. Direct edits here are not re-based by
    /// [`FeatureSet::set_profile`]; use [`FeatureSet::apply`].
    pub features: Features,
    /// Known-but-not-modelled names with their value; last write wins,
    /// kept in first-seen order.
    pub not_modelled: Vec<(String, bool)>,
    /// Every successfully applied token, in order (replayed on re-base).
    tokens: Vec<String>,
}

impl Default for FeatureSet {
    fn default() -> Self {
        FeatureSet::new(Profile::default())
    }
}

impl FeatureSet {
    /// The profile's defaults, no tokens.
    pub fn new(profile: Profile) -> Self {
        FeatureSet {
            profile,
            features: Features::for_profile(profile),
            not_modelled: Vec::new(),
            tokens: Vec::new(),
        }
    }

    /// Every token applied so far, in order.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Applies one token: `"NAME"`, `"NO_NAME"` or `"NAME=VALUE"`.
    /// Case-sensitive names (`SCHED_FEAT` spelling), case-insensitive enum
    /// values. On error nothing changes.
    pub fn apply(&mut self, token: &str) -> Result<Applied, FeatureError> {
        let applied = self.apply_unrecorded(token)?;
        self.tokens.push(token.trim().to_string());
        Ok(applied)
    }

    fn apply_unrecorded(&mut self, token: &str) -> Result<Applied, FeatureError> {
        let token = token.trim();
        let (name, value) = match token.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (token, None),
        };
        let (known, on) = match lookup(name) {
            Some(k) => (k, true),
            None => match name.strip_prefix("NO_").and_then(lookup) {
                Some(k) => (k, false),
                None => {
                    let suggestion = suggest(name);
                    return Err(FeatureError::Unknown {
                        name: name.to_string(),
                        suggestion,
                    });
                }
            },
        };
        let info = match known {
            Known::Alias(a) => {
                if value.is_some() {
                    return Err(FeatureError::UnexpectedValue {
                        name: name.to_string(),
                    });
                }
                if on {
                    self.features.set_enum(a.target, a.value);
                } else if self.features.get_enum(a.target) == Some(a.value) {
                    self.features.set_enum(a.target, "MAINLINE");
                }
                return Ok(Applied::Modelled);
            }
            Known::Feature(info) => info,
        };
        match (info.kind, value) {
            (FeatureKind::Enum(_), _) if !on => {
                Err(FeatureError::NoPrefixOnEnum { name: info.name })
            }
            (FeatureKind::Enum(_), None | Some("")) => {
                Err(FeatureError::MissingValue { name: info.name })
            }
            (FeatureKind::Enum(expected), Some(v)) => match self.features.set_enum(info.name, v) {
                Some(()) => Ok(Applied::Modelled),
                None => Err(FeatureError::BadValue {
                    name: info.name,
                    value: v.to_string(),
                    expected,
                }),
            },
            (FeatureKind::Bool, Some(_)) => Err(FeatureError::UnexpectedValue {
                name: name.to_string(),
            }),
            (FeatureKind::Bool, None) if info.status == Status::NotModelled => {
                match self.not_modelled.iter_mut().find(|(n, _)| n == info.name) {
                    Some(entry) => entry.1 = on,
                    None => self.not_modelled.push((info.name.to_string(), on)),
                }
                Ok(Applied::NotModelled)
            }
            (FeatureKind::Bool, None) => {
                if let Some(slot) = bool_slot(&mut self.features, info.name) {
                    *slot = on;
                }
                Ok(Applied::Modelled)
            }
        }
    }

    /// Changes the profile and re-bases: every token applied so far is
    /// replayed, in order, over the new profile's defaults.
    pub fn set_profile(&mut self, p: Profile) {
        let tokens = std::mem::take(&mut self.tokens);
        *self = FeatureSet::new(p);
        for t in &tokens {
            // Every recorded token was valid, and validity does not depend
            // on the profile.
            let _ = self.apply_unrecorded(t);
        }
        self.tokens = tokens;
    }

    /// The shortest token list reproducing this set over its profile: the
    /// differences from the profile defaults in [`FEATURES`] order
    /// (booleans as `NAME`/`NO_NAME`, enums as `NAME=VALUE`, never
    /// aliases), then the not-modelled names as given.
    pub fn canonical_tokens(&self) -> Vec<String> {
        let (cur, base) = (&self.features, Features::for_profile(self.profile));
        let mut out = Vec::new();
        for info in FEATURES.iter().filter(|i| i.status != Status::NotModelled) {
            match info.kind {
                FeatureKind::Bool => {
                    if let Some(on) = cur
                        .get_bool(info.name)
                        .filter(|&v| Some(v) != base.get_bool(info.name))
                    {
                        out.push(bool_token(info.name, on));
                    }
                }
                FeatureKind::Enum(_) => {
                    if let Some(v) = cur
                        .get_enum(info.name)
                        .filter(|&v| Some(v) != base.get_enum(info.name))
                    {
                        out.push(format!("{}={v}", info.name));
                    }
                }
            }
        }
        out.extend(self.not_modelled.iter().map(|(n, on)| bool_token(n, *on)));
        out
    }

    /// The `/sys/kernel/debug/sched/features` line of this configuration:
    /// the kernel's `features.h` names in order, modelled ones from
    /// [`Features`], the others from the user's tokens or their kernel
    /// default; each token followed by one space (formats.md §5).
    pub fn debugfs_line(&self) -> String {
        let mut line = String::new();
        for (name, default) in kernel_features_h() {
            let on = self
                .features
                .get_bool(name)
                .or_else(|| {
                    self.not_modelled
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|e| e.1)
                })
                .unwrap_or(default);
            line.push_str(&bool_token(name, on));
            line.push(' ');
        }
        line
    }

    /// Applies a pasted debugfs line or list (tokens separated by
    /// whitespace or commas). Invalid tokens, e.g. names of another
    /// kernel version, are skipped with a warning; the removed CFS-era
    /// names are accepted as not modelled.
    pub fn apply_debugfs_line(&mut self, line: &str) -> Vec<FeatureWarning> {
        self.apply_debugfs_line_noting(line).0
    }

    /// [`apply_debugfs_line`](Self::apply_debugfs_line), also returning
    /// the tokens accepted but not modelled ([`Applied::NotModelled`]),
    /// as written, so a paste can say which of its tokens do nothing.
    pub fn apply_debugfs_line_noting(&mut self, line: &str) -> (Vec<FeatureWarning>, Vec<String>) {
        let mut warnings = Vec::new();
        let mut not_modelled = Vec::new();
        for t in line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
        {
            match self.apply(t) {
                Ok(Applied::NotModelled) => not_modelled.push(t.to_string()),
                Ok(Applied::Modelled) => {}
                Err(e) => warnings.push(FeatureWarning {
                    token: t.to_string(),
                    message: e.to_string(),
                }),
            }
        }
        (warnings, not_modelled)
    }
}

fn bool_token(name: &str, on: bool) -> String {
    if on {
        name.to_string()
    } else {
        format!("NO_{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V7_1_LINE: &str = "PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT NO_NEXT_BUDDY PICK_BUDDY CACHE_HOT_BUDDY DELAY_DEQUEUE DELAY_ZERO NO_PARANOID_AVG WAKEUP_PREEMPTION NO_HRTICK NO_HRTICK_DL NONTASK_CAPACITY TTWU_QUEUE SIS_UTIL NO_WARN_DOUBLE_CLOCK NO_RT_PUSH_IPI NO_RT_RUNTIME_SHARE NO_LB_MIN ATTACH_AGE_LOAD WA_IDLE WA_WEIGHT WA_BIAS UTIL_EST NO_LATENCY_WARN NI_RANDOM NI_RATE ";

    fn set(p: Profile, tokens: &[&str]) -> FeatureSet {
        let mut s = FeatureSet::new(p);
        for t in tokens {
            s.apply(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        }
        s
    }

    #[test]
    fn table_is_consistent() {
        let mut names: Vec<&str> = FEATURES
            .iter()
            .map(|i| i.name)
            .chain(ALIASES.iter().map(|a| a.name))
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate names");
        let f = Features::for_profile(Profile::V7_1);
        let mut nbool = 0;
        for i in FEATURES {
            assert!(
                !i.name.starts_with("NO_") && !i.doc.is_empty(),
                "{}",
                i.name
            );
            match (i.kind, i.status) {
                (FeatureKind::Bool, Status::NotModelled) => {
                    assert_eq!(f.get_bool(i.name), None, "{}", i.name)
                }
                (FeatureKind::Bool, _) => {
                    nbool += 1;
                    assert!(f.get_bool(i.name).is_some(), "{} has no field", i.name);
                }
                (FeatureKind::Enum(values), status) => {
                    assert_eq!(status, Status::Engine);
                    assert!(values.contains(&f.get_enum(i.name).unwrap()), "{}", i.name);
                }
            }
        }
        assert_eq!(nbool, 31);
        for a in ALIASES {
            let Some(FeatureKind::Enum(values)) = feature_info(a.target).map(|i| i.kind) else {
                panic!("{} targets {}", a.name, a.target)
            };
            assert!(
                values.contains(&a.value) && values.contains(&"MAINLINE"),
                "{}",
                a.name
            );
        }
        // Kernel names in features.h order: modelled defaults agree with v7.1.
        for (name, default) in kernel_features_h() {
            let info = feature_info(name).unwrap_or_else(|| panic!("{name} not in FEATURES"));
            assert_eq!(info.kind, FeatureKind::Bool);
            if info.status != Status::NotModelled {
                assert_eq!(f.get_bool(name), Some(default), "{name}");
            }
        }
        let sim: Vec<&str> = FEATURES
            .iter()
            .filter(|i| i.status == Status::Simulator)
            .map(|i| i.name)
            .collect();
        assert_eq!(
            sim,
            [
                "CACHE_HOT_BUDDY",
                "HRTICK",
                "SIS_UTIL",
                "WA_IDLE",
                "WA_WEIGHT",
                "WA_BIAS",
                "NI_RANDOM",
                "NI_RATE",
                "WA_SLICE",
                "SIS_SLICE",
                "MINSLICE_PERCPU"
            ]
        );
        assert_eq!(
            feature_info("START_DEBIT").unwrap().doc,
            "removed from the kernel"
        );
    }

    #[test]
    fn v7_1_debugfs_line_is_the_kernel_line() {
        assert_eq!(FeatureSet::new(Profile::V7_1).debugfs_line(), V7_1_LINE);
        // The seed toggles never appear; not-modelled values follow the user.
        let s = set(
            Profile::V7_1,
            &[
                "NO_PLACE_LAG",
                "NO_TTWU_QUEUE",
                "PARANOID_AVG",
                "WA_SLICE",
                "START_DEBIT",
            ],
        );
        let line = s.debugfs_line();
        assert!(line.starts_with("NO_PLACE_LAG PLACE_DEADLINE_INITIAL "));
        assert!(line.contains(" DELAY_ZERO PARANOID_AVG WAKEUP_PREEMPTION "));
        assert!(line.contains(" NONTASK_CAPACITY NO_TTWU_QUEUE SIS_UTIL "));
        assert!(!line.contains("SLICE") && !line.contains("PS_") && !line.contains("START_DEBIT"));
        assert!(FeatureSet::new(Profile::V6_12)
            .debugfs_line()
            .ends_with(" NI_RANDOM NO_NI_RATE "));
        assert!(FeatureSet::new(Profile::V6_19Rc1)
            .debugfs_line()
            .contains(" NEXT_BUDDY PICK_BUDDY "));
    }

    #[test]
    fn debugfs_line_round_trips() {
        let src = set(
            Profile::V7_1,
            &["NO_RUN_TO_PARITY", "HRTICK", "NO_UTIL_EST", "NO_NI_RATE"],
        );
        let mut dst = FeatureSet::new(Profile::V6_12);
        assert_eq!(dst.apply_debugfs_line(&src.debugfs_line()), vec![]);
        assert_eq!(dst.debugfs_line(), src.debugfs_line());
        assert!(dst.features.hrtick && !dst.features.run_to_parity && dst.features.ni_random);
        // Profile parameters are not part of the line.
        assert_eq!(dst.features.prot_set, ProtSet::Stash);
    }

    #[test]
    fn apply_booleans_and_enums() {
        let mut s = FeatureSet::new(Profile::V7_1);
        assert_eq!(s.apply("NO_RUN_TO_PARITY"), Ok(Applied::Modelled));
        assert!(!s.features.run_to_parity);
        assert_eq!(s.apply(" RUN_TO_PARITY "), Ok(Applied::Modelled));
        assert!(s.features.run_to_parity);
        s.apply("NB_MODE=mel_v5").unwrap();
        assert_eq!(s.features.nb_mode, NbMode::MelV5);
        s.apply("NB_MODE=LEGACY").unwrap();
        assert_eq!(s.features.nb_mode, NbMode::Legacy);
        s.apply("PROT_SET=ineligible").unwrap();
        assert_eq!(s.features.prot_set, ProtSet::Ineligible);
        s.apply("PROT_UPDATE = pz_runtime").unwrap();
        assert_eq!(s.features.prot_update, ProtUpdate::PzRuntime);
        s.apply("LAG_CLAMP=2SLICE_TICK").unwrap();
        assert_eq!(s.features.lag_clamp, LagClamp::TwoSliceTick);
        s.apply("DELAY_LAG=V6.12").unwrap();
        assert_eq!(s.features.delay_lag, DelayLag::V6_12);
        s.apply("NB_SYNC_DELTA=Stint_Runtime").unwrap();
        assert_eq!(s.features.nb_sync_delta, NbSyncDelta::StintRuntime);
        s.apply("NB_RESCHED_INELIGIBLE_WAKER").unwrap();
        assert!(s.features.nb_resched_ineligible_waker);
        assert_eq!(s.tokens().len(), 10);
    }

    #[test]
    fn apply_errors() {
        let mut s = FeatureSet::new(Profile::V7_1);
        let before = s.clone();
        assert_eq!(
            s.apply("nb_mode=MEL_V5"),
            Err(FeatureError::Unknown {
                name: "nb_mode".into(),
                suggestion: Some("NB_MODE")
            })
        );
        assert_eq!(
            s.apply("PREEMPT_SHORT=1"),
            Err(FeatureError::UnexpectedValue {
                name: "PREEMPT_SHORT".into()
            })
        );
        assert_eq!(
            s.apply("PROT_INELIGIBLE=1"),
            Err(FeatureError::UnexpectedValue {
                name: "PROT_INELIGIBLE".into()
            })
        );
        assert_eq!(
            s.apply("NO_PROT_SET"),
            Err(FeatureError::NoPrefixOnEnum { name: "PROT_SET" })
        );
        assert_eq!(
            s.apply("NO_PROT_SET=STASH"),
            Err(FeatureError::NoPrefixOnEnum { name: "PROT_SET" })
        );
        assert_eq!(
            s.apply("PROT_SET"),
            Err(FeatureError::MissingValue { name: "PROT_SET" })
        );
        assert_eq!(
            s.apply("PROT_SET="),
            Err(FeatureError::MissingValue { name: "PROT_SET" })
        );
        assert_eq!(
            s.apply("PROT_SET=bogus"),
            Err(FeatureError::BadValue {
                name: "PROT_SET",
                value: "bogus".into(),
                expected: ProtSet::VALUES
            })
        );
        assert_eq!(
            s.apply("PREEMT_SHORT"),
            Err(FeatureError::Unknown {
                name: "PREEMT_SHORT".into(),
                suggestion: Some("PREEMPT_SHORT")
            })
        );
        assert_eq!(
            s.apply("place_lag"),
            Err(FeatureError::Unknown {
                name: "place_lag".into(),
                suggestion: Some("PLACE_LAG")
            })
        );
        assert_eq!(
            s.apply("FOO_BAR"),
            Err(FeatureError::Unknown {
                name: "FOO_BAR".into(),
                suggestion: None
            })
        );
        assert_eq!(
            s.apply(""),
            Err(FeatureError::Unknown {
                name: String::new(),
                suggestion: None
            })
        );
        assert_eq!(
            s.apply("NO_"),
            Err(FeatureError::Unknown {
                name: "NO_".into(),
                suggestion: None
            })
        );
        let lb = s.apply("NO_LB_MNI").unwrap_err();
        assert!(lb.to_string().ends_with("did you mean NO_LB_MIN?"), "{lb}");
        let long = "X".repeat(10_000);
        assert!(matches!(
            s.apply(&long),
            Err(FeatureError::Unknown {
                suggestion: None,
                ..
            })
        ));
        assert_eq!(s, before, "errors change nothing");
    }

    #[test]
    fn error_messages_carry_hints() {
        let mut s = FeatureSet::default();
        let msg = |s: &mut FeatureSet, t: &str| s.apply(t).unwrap_err().to_string();
        assert!(msg(&mut s, "PREEMT_SHORT").ends_with("did you mean PREEMPT_SHORT?"));
        assert!(msg(&mut s, "NO_PREEMT_SHORT").ends_with("did you mean NO_PREEMPT_SHORT?"));
        assert!(msg(&mut s, "no_next_buddy").ends_with("did you mean NO_NEXT_BUDDY?"));
        assert!(msg(&mut s, "nb_mode=x").ends_with("did you mean NB_MODE?"));
        assert!(!msg(&mut s, "FOO_BAR").contains("did you mean"));
        assert!(msg(&mut s, "NB_MODE=v5").contains("expected one of legacy, mel_v5, mainline"));
        assert!(msg(&mut s, "LAG_CLAMP")
            .contains("LAG_CLAMP=VALUE with VALUE one of 2slice_tick, maxslice_tick"));
        assert!(
            msg(&mut s, "NO_PREEMPT_SHORT=0").contains("write PREEMPT_SHORT or NO_PREEMPT_SHORT")
        );
        assert!(msg(&mut s, "NO_DELAY_LAG").contains("DELAY_LAG=VALUE"));
        let e: Box<dyn std::error::Error> =
            Box::new(FeatureError::MissingValue { name: "NB_MODE" });
        assert!(e.to_string().starts_with("NB_MODE needs a value"));
    }

    #[test]
    fn not_modelled_names_are_kept() {
        let mut s = FeatureSet::new(Profile::V7_1);
        let before = s.features;
        assert_eq!(s.apply("TTWU_QUEUE"), Ok(Applied::NotModelled));
        assert_eq!(s.apply("UTIL_EST"), Ok(Applied::NotModelled));
        assert_eq!(s.apply("NO_TTWU_QUEUE"), Ok(Applied::NotModelled));
        assert_eq!(s.apply("NO_GENTLE_FAIR_SLEEPERS"), Ok(Applied::NotModelled));
        assert_eq!(s.features, before);
        let expect = [
            ("TTWU_QUEUE", false),
            ("UTIL_EST", true),
            ("GENTLE_FAIR_SLEEPERS", false),
        ];
        assert_eq!(s.not_modelled, expect.map(|(n, v)| (n.to_string(), v)));
        assert_eq!(
            s.canonical_tokens(),
            ["NO_TTWU_QUEUE", "UTIL_EST", "NO_GENTLE_FAIR_SLEEPERS"]
        );
        assert_eq!(
            s.apply("TTWU_QUEUE=1"),
            Err(FeatureError::UnexpectedValue {
                name: "TTWU_QUEUE".into()
            })
        );
    }

    #[test]
    fn aliases_set_and_reset_the_enum() {
        let mut s = FeatureSet::new(Profile::V7_1);
        s.apply("PROT_INELIGIBLE").unwrap();
        assert_eq!(s.features.prot_set, ProtSet::Ineligible);
        assert_eq!(s.canonical_tokens(), ["PROT_SET=INELIGIBLE"]);
        s.apply("NO_PROT_STASH").unwrap(); // other value: no-op
        assert_eq!(s.features.prot_set, ProtSet::Ineligible);
        s.apply("NO_PROT_INELIGIBLE").unwrap();
        assert_eq!(s.features.prot_set, ProtSet::Mainline);
        assert!(s.canonical_tokens().is_empty());
        s.apply("PROT_ALIGN_UPDATE").unwrap();
        s.apply("PROT_CAP_MIN_SLICE").unwrap();
        assert_eq!(
            s.canonical_tokens(),
            ["PROT_SET=CAP_MIN_SLICE", "PROT_UPDATE=ALIGN"]
        );
        s.apply("NO_PROT_PZ_RUNTIME").unwrap();
        assert_eq!(s.features.prot_update, ProtUpdate::Align);
        s.apply("NO_PROT_ALIGN_UPDATE").unwrap();
        assert_eq!(s.features.prot_update, ProtUpdate::Mainline);
        // On v6.12 (default STASH) NO_PROT_STASH resets to MAINLINE.
        let s = set(Profile::V6_12, &["NO_PROT_STASH"]);
        assert_eq!(s.canonical_tokens(), ["PROT_SET=MAINLINE"]);
        for a in ["NB_LEGACY", "NB_MEL_V5"] {
            assert!(matches!(
                FeatureSet::default().apply(a),
                Err(FeatureError::Unknown { .. })
            ));
        }
    }

    #[test]
    fn canonical_tokens_and_rebase() {
        assert!(FeatureSet::default().canonical_tokens().is_empty());
        for p in Profile::ALL {
            assert!(FeatureSet::new(p).canonical_tokens().is_empty(), "{p}");
        }
        let mut s = set(
            Profile::V7_1,
            &[
                "NEXT_BUDDY",
                "NO_RUN_TO_PARITY",
                "NB_MODE=MAINLINE",
                "LAG_CLAMP=2slice_tick",
            ],
        );
        assert_eq!(
            s.canonical_tokens(),
            ["NO_RUN_TO_PARITY", "NEXT_BUDDY", "LAG_CLAMP=2slice_tick"]
        );
        s.set_profile(Profile::V6_19Rc1);
        assert_eq!(s.profile, Profile::V6_19Rc1);
        assert!(s.features.next_buddy && !s.features.run_to_parity);
        // NB_MODE=MAINLINE now differs from 6.19's mel_v5; LAG_CLAMP matches.
        assert_eq!(
            s.canonical_tokens(),
            ["NO_RUN_TO_PARITY", "NB_MODE=mainline"]
        );
        assert_eq!(s.tokens().len(), 4);
        let mut s = set(
            Profile::V7_1,
            &["NEXT_BUDDY", "NO_RUN_TO_PARITY", "TTWU_QUEUE"],
        );
        s.set_profile(Profile::V6_19Rc1);
        assert_eq!(s.canonical_tokens(), ["NO_RUN_TO_PARITY", "TTWU_QUEUE"]);
        s.set_profile(Profile::V7_1);
        assert_eq!(
            s.canonical_tokens(),
            ["NO_RUN_TO_PARITY", "NEXT_BUDDY", "TTWU_QUEUE"]
        );
        // Replay order matters: a later token wins.
        let mut s = set(Profile::V6_19Rc1, &["NO_NEXT_BUDDY", "NEXT_BUDDY"]);
        s.set_profile(Profile::V6_18);
        assert_eq!(s.canonical_tokens(), ["NEXT_BUDDY"]);
    }

    #[test]
    fn profile_defaults() {
        let d = |p| Features::for_profile(p);
        assert_eq!(Features::default(), d(Profile::V7_2));
        // 7.2.13 differs from 7.1 only in HRTICK (features.h under
        // CONFIG_HRTIMER_REARM_DEFERRED) and how it is armed.
        assert_eq!(
            d(Profile::V7_2),
            Features {
                hrtick: true,
                hrtick_arm: HrtickArm::Deadline,
                ..d(Profile::V7_1)
            }
        );
        let m = d(Profile::V7_1);
        assert!(
            m.place_lag && m.run_to_parity && m.preempt_short && !m.next_buddy && m.ps_clear_buddy
        );
        assert!(!m.hrtick && m.ni_random && m.ni_rate && !m.prot_lag_aware && !m.wa_slice);
        assert_eq!(
            (m.lag_clamp, m.delay_lag, m.nb_mode),
            (LagClamp::MaxSliceTick, DelayLag::V7_1, NbMode::Mainline)
        );
        assert_eq!(m.normalized_base_slice_ns, 700_000);

        let a = d(Profile::V6_12);
        assert_eq!(
            (a.prot_set, a.nb_mode, a.normalized_base_slice_ns),
            (ProtSet::Stash, NbMode::Legacy, 700_000)
        );
        assert_eq!(
            (a.lag_clamp, a.delay_lag),
            (LagClamp::TwoSliceTick, DelayLag::V6_12)
        );
        assert!(!a.ps_clear_buddy && a.ni_random && !a.ni_rate && !a.next_buddy);

        let b = d(Profile::V6_18);
        assert_eq!(
            (b.prot_set, b.nb_mode, b.normalized_base_slice_ns),
            (ProtSet::Mainline, NbMode::Legacy, 700_000)
        );
        assert!(!b.ps_clear_buddy && !b.ni_random && !b.ni_rate);

        let c = d(Profile::V6_19Rc1);
        assert_eq!(
            (c.nb_mode, c.lag_clamp, c.delay_lag),
            (NbMode::MelV5, LagClamp::TwoSliceTick, DelayLag::V6_12)
        );
        assert!(
            c.next_buddy
                && c.nb_resched_ineligible_waker
                && c.ni_random
                && !c.ni_rate
                && !c.ps_clear_buddy
        );

        let t = d(Profile::Tip2026_09);
        assert!(
            t.ps_ignore_need_resched
                && t.ps_cancel_if_eligible
                && t.prot_always_update
                && t.prot_lag_aware
        );
        assert!(t.ps_short_buddy_tie && t.ps_clear_buddy && !t.lag_decay_sleep && !t.next_buddy);
        assert_eq!(
            (t.prot_set, t.prot_update),
            (ProtSet::CapMinSlice, ProtUpdate::Align)
        );
        assert_eq!(
            FeatureSet::new(Profile::Tip2026_09).debugfs_line(),
            V7_1_LINE
        );

        for (i, p) in Profile::ALL.into_iter().enumerate() {
            for q in &Profile::ALL[..i] {
                assert_ne!(d(p), d(*q), "{p} == {q}");
            }
        }
    }

    #[test]
    fn profile_names() {
        for p in Profile::ALL {
            assert_eq!(Profile::parse(p.name()), Some(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!(Profile::default(), Profile::V7_2);
        assert_eq!(Profile::parse("6.18"), Some(Profile::V6_18));
        assert_eq!(Profile::parse(" V6.19-RC1 "), Some(Profile::V6_19Rc1));
        assert_eq!(Profile::parse("TIP-2026-09"), Some(Profile::Tip2026_09));
        assert_eq!(Profile::parse("v6.6"), None);
        assert_eq!(Profile::parse(""), None);
        assert_eq!(NbMode::parse("MEL_V5"), Some(NbMode::MelV5));
        assert_eq!(LagClamp::MaxSliceTick.to_string(), "maxslice_tick");
        assert_eq!(DelayLag::VALUES, ["v6.12", "v7.1"]);
    }

    #[test]
    fn pasted_old_line_warns_only_on_unknown_names() {
        let old = "GENTLE_FAIR_SLEEPERS START_DEBIT NO_NEXT_BUDDY LAST_BUDDY CACHE_HOT_BUDDY WAKEUP_PREEMPTION \
                   NO_HRTICK NO_HRTICK_DL NO_DOUBLE_TICK NONTASK_CAPACITY TTWU_QUEUE NO_SIS_PROP SIS_UTIL \
                   NO_WARN_DOUBLE_CLOCK RT_PUSH_IPI NO_RT_RUNTIME_SHARE NO_LB_MIN ATTACH_AGE_LOAD NO_WA_IDLE \
                   WA_WEIGHT WA_BIAS UTIL_EST UTIL_EST_FASTUP NO_LATENCY_WARN ALT_PERIOD BASE_SLICE FOO_BAR \n";
        let mut s = FeatureSet::new(Profile::V6_18);
        let w = s.apply_debugfs_line(old);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].token, "FOO_BAR");
        assert!(w[0].message.contains("unknown sched feature `FOO_BAR`"));
        assert!(w[0].to_string().starts_with("ignored `FOO_BAR`"));
        assert!(!s.features.wa_idle && s.features.wa_bias);
        let nm = |n: &str| s.not_modelled.iter().find(|(m, _)| m == n).map(|e| e.1);
        assert_eq!(nm("START_DEBIT"), Some(true));
        assert_eq!(nm("SIS_PROP"), Some(false));
        assert_eq!(nm("RT_PUSH_IPI"), Some(true));
        assert_eq!(s.not_modelled.len(), 18);
        assert_eq!(s.canonical_tokens()[0], "NO_WA_IDLE");
        assert!(s
            .debugfs_line()
            .contains(" NO_WARN_DOUBLE_CLOCK RT_PUSH_IPI NO_RT_RUNTIME_SHARE "));
        // Commas work too.
        let mut s = FeatureSet::default();
        assert_eq!(
            s.apply_debugfs_line("NO_PLACE_LAG,,NB_MODE=legacy, PROT_SET=nope")
                .len(),
            1
        );
        assert!(!s.features.place_lag && s.features.nb_mode == NbMode::Legacy);
    }

    #[test]
    fn base_slice_scales_with_cpus() {
        let f = Features::default();
        let got: Vec<u64> = [0, 1, 2, 3, 4, 7, 8, 64]
            .map(|n| f.base_slice_ns(n))
            .to_vec();
        assert_eq!(
            got,
            [700_000, 700_000, 1_400_000, 1_400_000, 2_100_000, 2_100_000, 2_800_000, 2_800_000]
        );
        assert_eq!(
            Features::for_profile(Profile::V6_12).base_slice_ns(8),
            2_800_000
        );
        assert_eq!(Features::default().base_slice_ns(u32::MAX), 2_800_000);
    }

    #[test]
    fn canonical_tokens_round_trip() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rand = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for p in Profile::ALL {
            for _ in 0..200 {
                let mut s = FeatureSet::new(p);
                for _ in 0..rand(12) {
                    let t = if rand(5) == 0 {
                        let a = &ALIASES[rand(ALIASES.len())];
                        format!("{}{}", ["", "NO_"][rand(2)], a.name)
                    } else {
                        let i = &FEATURES[rand(FEATURES.len())];
                        match i.kind {
                            FeatureKind::Bool => format!("{}{}", ["", "NO_"][rand(2)], i.name),
                            FeatureKind::Enum(v) => {
                                let v = v[rand(v.len())];
                                let v = if rand(2) == 0 {
                                    v.to_ascii_lowercase()
                                } else {
                                    v.to_ascii_uppercase()
                                };
                                format!("{}={v}", i.name)
                            }
                        }
                    };
                    s.apply(&t).unwrap_or_else(|e| panic!("{t}: {e}"));
                }
                let canon = s.canonical_tokens();
                let mut r = FeatureSet::new(p);
                for t in &canon {
                    r.apply(t).unwrap();
                }
                assert_eq!(r.features, s.features, "{p} {canon:?}");
                assert_eq!(r.not_modelled, s.not_modelled);
                assert_eq!(r.canonical_tokens(), canon);
                assert!(canon
                    .iter()
                    .all(|t| alias_info(t.trim_start_matches("NO_")).is_none()));
                // Re-basing onto the same profile is the identity.
                let mut same = s.clone();
                same.set_profile(p);
                assert_eq!(same, s);
            }
        }
    }
}
