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

mod effective;
mod error;
mod profile;
mod set;
mod table;
mod value;

#[cfg(test)]
mod tests;

pub use effective::Features;
pub use error::{FeatureError, FeatureWarning};
pub use profile::Profile;
pub use set::{Applied, FeatureSet};
pub use table::{
    alias_info, feature_info, in_features_h, AliasInfo, FeatureInfo, FeatureKind, Status, ALIASES,
    FEATURES,
};
pub use value::{DelayLag, HrtickArm, LagClamp, NbMode, NbSyncDelta, ProtSet, ProtUpdate};
