//! The eevdf-playground web app: a Yew front end and its simulation Web Worker.
//!
//! Thin by design: simulation lives in `eevdf-sim`, formats in
//! `eevdf-scenario`. The page never computes on its main thread; it asks
//! the worker ([`worker::SimWorker`]) and renders what comes back.

#![forbid(unsafe_code)]

pub mod app;
pub mod worker;

pub use app::App;
