//! The eevdf-playground web app: a Yew front end and its simulation Web Worker.
//!
//! Thin by design: simulation lives in `eevdf-sim`, formats in
//! `eevdf-scenario`, and the logic without a UI (gestures as scenario
//! edits, what the page shares, teaching and tours, the stepped live
//! run) in `eevdf-driver`. The page never simulates on its main thread;
//! it asks the worker ([`worker::SimWorker`]) and renders what comes
//! back.

#![forbid(unsafe_code)]

pub mod app;
pub mod charts;
pub mod export;
pub mod features;
mod lanes;
pub mod machine;
mod page;
pub mod results;
pub mod sweep;
pub mod teaching;
pub mod worker;

pub use app::App;
