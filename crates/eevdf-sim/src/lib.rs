//! Discrete-event machine simulator around the EEVDF engine: time, CPUs, workloads, metrics.
//!
//! Time is integer nanoseconds; equal-time events fire in insertion order;
//! all randomness comes from one seeded [`rng::SimRng`].

#![forbid(unsafe_code)]

pub mod event;
pub mod rng;
pub mod shares;

pub use event::{EventQueue, Nanos};
pub use rng::SimRng;
