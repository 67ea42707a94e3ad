//! Text formats of eevdf-playground: scenarios, features lines, links and reports.
//!
//! Every parser returns a typed [`ParseError`] with line, column and a hint,
//! bounds its input size, and never panics.

#![forbid(unsafe_code)]

pub mod baseline;
pub mod debugfs;
pub mod decisions;
pub mod display;
pub mod error;
pub mod features_line;
pub mod ftrace;
pub mod ftrace_regime;
pub mod fuzz_checks;
pub mod guest;
pub mod kernel_ref;
pub mod limits;
pub mod link;
pub mod paste;
pub mod presets;
pub mod report;
pub mod rtapp;
pub mod scenario;

pub use error::ParseError;
pub use features_line::{parse_features_line, FeatureToken};
