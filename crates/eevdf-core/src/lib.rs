//! The Linux EEVDF fair-class runqueue engine, faithful to `kernel/sched/fair.c`.
//!
//! One [`Rq`] is one CPU's fair class: task-group queues, the augmented
//! timeline, `avg_vruntime`, `pick_eevdf`, placement, protection, delayed
//! dequeue, wakeup preemption and the tick, with every feature of
//! `features.h` and every seed-thread variant as a toggle ([`Features`]).
//!
//! No I/O, no serde, no clock and no randomness: callers set the clock
//! ([`Rq::set_clock`]) and drive the operations; each decision comes back
//! with its reason. All state is `Clone` (checkpoints for replay).
//! Names follow fair.c so kernel developers can map code to code; module
//! docs cite the sections of `shared/docs/eevdf-spec.md` they implement.

#![forbid(unsafe_code)]

mod check;
pub mod enqueue;
pub mod entity;
pub mod features;
pub mod pick;
mod protect;
pub mod rq;
pub mod snapshot;
mod tick;
pub mod tree;
pub mod wakeup;
pub mod weight;

pub use enqueue::{DequeueFlags, DequeueResult, EnqueueFlags};
pub use entity::{CfsRqId, EntityId, Policy, SchedEntity};
pub use features::{FeatureSet, Features, HrtickArm, Profile};
pub use pick::{PickOutcome, PickReason, PickStep};
pub use rq::{Resched, Rq, RqConfig};
pub use snapshot::{CfsRqSnapshot, EntitySnapshot, RqSnapshot};
pub use wakeup::{WakeFlags, WakeupAction, WakeupDecision, WakeupReason};
pub use weight::{calc_delta_fair, nice_to_weight, LoadWeight, NICE_0_LOAD};
