//! The mail-safe block and its provenance lines.

use super::*;

/// The mail-safe block (formats.md §7, `eevdf run --format mail` and the
/// page's "copy for email"): the scenario text (with its `baseline` block
/// for an A/B table), a line saying where the numbers come from
/// ([`simulated_by`], [`measured_on`]), the LKML table, and last the bare
/// link, the only line allowed over 72 columns. The canonical text ends
/// with `end` and a newline, so a blank line follows it.
pub fn mail(scenario_text: &str, provenance: &str, table: &str, link: &str) -> String {
    format!(
        "{}\n{}\n\n{}\n{}\n",
        scenario_text,
        provenance,
        table.trim_end(),
        link
    )
}

/// The mail's provenance line for simulated numbers (a constant, not a
/// `format!`: the page's wasm budget; a test keeps the version right).
pub const SIMULATED_BY: &str = "Simulated by eevdf-playground engine 0.12, not a kernel run.";

/// [`SIMULATED_BY`], for `map_or_else`.
pub fn simulated_by() -> String {
    SIMULATED_BY.to_string()
}

/// The mail's provenance line for a kernel run.
pub fn measured_on(source: &Source) -> String {
    format!("Measured on kernel {} under QEMU -icount.", source.kernel)
}
