//! The table of known names ([`FEATURES`], [`ALIASES`]), the kernel's
//! `features.h` debugfs line, and lookup of a name in them.

use super::{DelayLag, HrtickArm, LagClamp, NbMode, NbSyncDelta, ProtSet, ProtUpdate};

#[cfg(doc)]
use super::FeatureSet;

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
pub(super) fn kernel_features_h() -> impl Iterator<Item = (&'static str, bool)> {
    KERNEL_DEFAULT_LINE
        .split_whitespace()
        .map(|t| match t.strip_prefix("NO_") {
            Some(name) => (name, false),
            None => (t, true),
        })
}

/// Whether `name` (without `NO_`) is in mainline `features.h`: a kernel's
/// debugfs takes it. Seed toggles, enums and removed names are not.
pub fn in_features_h(name: &str) -> bool {
    kernel_features_h().any(|(n, _)| n == name)
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
pub(super) enum Known {
    Feature(&'static FeatureInfo),
    Alias(&'static AliasInfo),
}

pub(super) fn lookup(name: &str) -> Option<Known> {
    feature_info(name)
        .map(Known::Feature)
        .or_else(|| alias_info(name).map(Known::Alias))
}
