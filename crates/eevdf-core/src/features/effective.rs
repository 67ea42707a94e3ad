//! [`Features`]: the effective values of one configuration, each profile's
//! defaults, and access to a value by its `SCHED_FEAT` name.

use super::{DelayLag, HrtickArm, LagClamp, NbMode, NbSyncDelta, Profile, ProtSet, ProtUpdate};

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
    pub(super) fn set_enum(&mut self, name: &str, value: &str) -> Option<()> {
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
pub(super) fn bool_slot<'a>(f: &'a mut Features, name: &str) -> Option<&'a mut bool> {
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
