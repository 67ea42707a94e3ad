//! The value types of the enum features (`PROT_SET`, `NB_MODE`, …), declared
//! with their canonical token spellings by `value_enum!`.

use std::fmt;

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
        /// Up to 7.0: the real time left in the slice,
        /// `slice - (sum_exec - prev_sum_exec)`, re-armed on every enqueue.
        SliceLeft => "slice_left",
        /// 7.1 on: the time to the virtual deadline, `weight *
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
