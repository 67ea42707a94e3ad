//! The Linux EEVDF fair-class runqueue engine, faithful to `kernel/sched/fair.c`.
//!
//! No I/O, no serde, no clock and no randomness: callers pass time in and
//! read decisions out. See `ARCHITECTURE.md` for the crate's invariants.

#![forbid(unsafe_code)]

pub mod weight;

pub use weight::{calc_delta_fair, nice_to_weight, LoadWeight, NICE_0_LOAD};
