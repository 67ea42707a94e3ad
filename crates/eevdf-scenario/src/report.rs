//! Reports: text, JSON (eevdf.result.v1) and LKML tables.
//!
//! Every function here is a pure function of its inputs: identical inputs
//! give byte-identical output. Integer nanoseconds are converted with
//! integer arithmetic wherever a rounding rule is stated, so no report
//! depends on float formatting quirks:
//!
//! * JSON: µs and ms carry 3 decimals (µs exact, ms rounded half up from
//!   ns), seconds 6 decimals, rates 3 decimals.
//! * text: µs and ms with 3 decimals, lines ≤ [`TEXT_WIDTH`] columns.
//! * LKML tables: whole µs rounded half up, lines ≤ [`MAIL_WIDTH`] columns,
//!   spaces only.
//! * cyclictest and schbench blocks: whole µs truncated, as those tools
//!   count.

use eevdf_sim::{LatencyStats, NameResult, SimResult};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// The `schema` value of [`json`].
pub const SCHEMA: &str = "eevdf.result.v1";
/// Widest line of [`text`].
pub const TEXT_WIDTH: usize = 80;
/// Widest line of [`lkml`] and [`compare`] (quoted `> ` still fits 80).
pub const MAIL_WIDTH: usize = 72;

// ---------------------------------------------------------------------
// Number conversions
// ---------------------------------------------------------------------

/// ns → µs as a float with 3 decimals (exact for integer ns).
fn us3(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// ns → ms as a float, rounded half up to 3 decimals.
fn ms3(ns: u64) -> f64 {
    ((u128::from(ns) + 500) / 1000) as f64 / 1000.0
}

/// ns → s as a float, rounded half up to 6 decimals.
fn s6(ns: u64) -> f64 {
    ((u128::from(ns) + 500) / 1000) as f64 / 1_000_000.0
}

/// A float rounded to 3 decimals (non-finite values pass through).
fn round3(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1000.0).round() / 1000.0
    } else {
        x
    }
}

/// Mean latency in ns, rounded half up to a whole ns (0 without samples).
pub fn mean_ns_rounded(s: &LatencyStats) -> u128 {
    if s.samples == 0 {
        return 0;
    }
    let n = u128::from(s.samples);
    (s.sum_ns * 2 + n) / (2 * n)
}

/// ns → whole µs, rounded half up.
fn us_round(ns: u64) -> u64 {
    ns / 1000 + u64::from(ns % 1000 >= 500)
}

/// Mean → whole µs, rounded half up (0 without samples).
fn mean_us_round(s: &LatencyStats) -> u64 {
    if s.samples == 0 {
        return 0;
    }
    let n = u128::from(s.samples);
    let us = (s.sum_ns + 500 * n) / (1000 * n);
    u64::try_from(us).unwrap_or(u64::MAX)
}

/// ns as µs text with exactly 3 decimals (`1234.567`).
fn us_text(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// ns as ms text, rounded half up to 3 decimals.
fn ms_text(ns: u64) -> String {
    let us = (u128::from(ns) + 500) / 1000;
    format!("{}.{:03}", us / 1000, us % 1000)
}

/// ns as s text, rounded half up to 6 decimals.
fn s_text(ns: u64) -> String {
    let us = (u128::from(ns) + 500) / 1000;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// A rate for the text report: 3 decimals, or scientific when huge.
fn rate_text(x: f64) -> String {
    if !x.is_finite() {
        "-".to_string()
    } else if x.abs() >= 1e12 {
        format!("{x:.3e}")
    } else {
        format!("{x:.3}")
    }
}

/// `part / whole` as a percentage with one decimal, rounded half up.
fn percent_text(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.0".to_string();
    }
    let w = u128::from(whole);
    let tenths = (u128::from(part) * 2000 + w) / (2 * w);
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// Control characters (tabs, newlines) as spaces, so that a user-given
/// name or label cannot break a table's layout.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// [`clean`]s `s` and truncates it to `width` characters, marking a cut
/// with `~`.
fn fit(s: &str, width: usize) -> String {
    let s = clean(s);
    if s.chars().count() <= width {
        return s;
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(width - 1).collect();
    out.push('~');
    out
}

fn width_of(s: &str) -> usize {
    s.chars().count()
}
/// `latency after a 1s warmup` (`None` without one): every table that
/// leaves start-up out says so.
fn warmup_phrase(warmup_ns: u64) -> Option<String> {
    (warmup_ns > 0).then(|| {
        format!(
            "latency after a {} warmup",
            crate::scenario::fmt_duration(warmup_ns)
        )
    })
}

mod json;
mod lkml;
mod mail;
mod mmtests;
mod text;
mod tools;

pub use json::{json, json_with_baseline, json_with_source, Source};
pub use lkml::{
    ab_title, compare, compare_rows, latency_title, lkml, pipe_rows, PipeRow, AB_TITLE,
    DELTA_CONVENTION,
};
pub use mail::{mail, measured_on, simulated_by, SIMULATED_BY};
pub use mmtests::compare_mmtests;
pub use text::text;
pub use tools::{cyclictest, schbench_block};

#[cfg(test)]
mod tests;
