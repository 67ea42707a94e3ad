//! What both front ends do without a UI: input resolution, stepped runs, teaching and typed scenario edits.
//!
//! The layer between the format crate (`eevdf-scenario`) and the front
//! ends: the CLI is clap plus printing, the web crate components plus a
//! worker protocol, and both call this crate for the logic they share,
//! so it cannot drift between them. No I/O and no clock: readers hand
//! in text, and a stepped run asks its caller for the time.

#![forbid(unsafe_code)]

pub mod batch;
pub mod edit;
pub mod glossary;
pub mod input;
pub mod live;
pub mod moment;
pub mod share;
pub mod sweep;
pub mod teach;
pub mod timeline;
pub mod tours;
pub mod wakeups;
