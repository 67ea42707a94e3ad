//! The eevdf-playground web app: a Yew front end and its simulation Web Worker.
//!
//! Thin by design: simulation lives in `eevdf-sim`, formats in
//! `eevdf-scenario`. The page never simulates on its main thread; it asks
//! the worker ([`worker::SimWorker`]) and renders what comes back.
//! Gestures become scenario edits in [`edit`], the one module with logic
//! of its own (tested natively).

#![forbid(unsafe_code)]

pub mod app;
pub mod charts;
pub mod edit;
pub mod features;
pub mod machine;
pub mod results;
pub mod teach;
pub mod teaching;
pub mod tours;
pub mod wakeups;
pub mod worker;

pub use app::App;
