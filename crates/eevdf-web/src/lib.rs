//! The eevdf-playground web app: a Yew front end and its simulation Web Worker.
//!
//! Thin by design: simulation lives in `eevdf-sim`, formats in
//! `eevdf-scenario`. The page never simulates on its main thread; it asks
//! the worker ([`worker::SimWorker`]) and renders what comes back.
//! Gestures become scenario edits in [`edit`], and what the page shares
//! (links, mail, a pinned baseline) is built in [`share`]: the modules
//! with logic of their own (tested natively).

#![forbid(unsafe_code)]

pub mod app;
pub mod charts;
pub mod edit;
pub mod features;
pub mod machine;
pub mod moment;
pub mod results;
pub mod share;
pub mod teach;
pub mod teaching;
pub mod tours;
pub mod wakeups;
pub mod worker;

pub use app::App;
