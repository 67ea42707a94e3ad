//! Importing what `/sys/kernel/debug/sched/` shows (formats.md §5): a
//! pasted `features` line, and tunables as `name value`, `name=value` or
//! `…/sched/name: value` lines (`base_slice_ns`, `migration_cost_ns`,
//! `preempt` with the current model in parentheses). Unknown feature
//! names and tunables are warnings, not errors, so an older kernel's
//! paste still imports.

use crate::display::{shown, shown_max, MAX_SHOWN_MESSAGE};
use crate::limits::DEBUGFS_BYTES;
use crate::scenario::Scenario;
use crate::ParseError;

/// Applies a debugfs paste over `sc`; returns the warnings.
pub fn apply(sc: &mut Scenario, text: &str) -> Result<Vec<String>, ParseError> {
    if text.len() as u64 > DEBUGFS_BYTES {
        return Err(ParseError::new(
            1,
            1,
            format!("paste is over {DEBUGFS_BYTES} bytes"),
            "paste the features line and tunables only",
        ));
    }
    let mut warnings = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // `path/name: value`, `name=value` or `name value`.
        let (name, value) = match line.split_once(':').or_else(|| line.split_once('=')) {
            Some((k, v)) if !k.contains(' ') => (k.rsplit('/').next().unwrap_or(k), v.trim()),
            _ => match line.split_once(' ') {
                Some((k, v)) if k.ends_with("_ns") || k == "preempt" => (k, v.trim()),
                _ => ("features", line),
            },
        };
        let set = |sc: &mut Scenario, kv: String| {
            sc.set(&kv).map_err(|mut e| {
                e.line = n + 1;
                e
            })
        };
        match name {
            "features" => {
                let mut fs = sc.features.clone();
                let (rejected, unmodelled) = fs.apply_debugfs_line_noting(value);
                for w in rejected {
                    warnings.push(format!(
                        "line {}: ignored `{}`: {}",
                        n + 1,
                        shown(&w.token),
                        shown_max(&w.message, MAX_SHOWN_MESSAGE)
                    ));
                }
                if !unmodelled.is_empty() {
                    warnings.push(format!(
                        "line {}: accepted, not modelled (kept in the scenario, no effect on it): {}",
                        n + 1,
                        shown_max(&unmodelled.join(" "), MAX_SHOWN_MESSAGE)
                    ));
                }
                sc.features = fs;
            }
            "base_slice_ns" | "migration_cost_ns" => set(sc, format!("sysctl.{name}={value}"))?,
            "preempt" => {
                // "none voluntary (full) lazy": the current one is bracketed.
                let cur = value
                    .split_whitespace()
                    .find(|t| t.starts_with('('))
                    .map(|t| t.trim_matches(|c| c == '(' || c == ')'))
                    .unwrap_or(value);
                set(sc, format!("preempt={cur}"))?;
            }
            other => warnings.push(format!(
                "line {}: `{}` is not imported",
                n + 1,
                shown(other)
            )),
        }
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_debugfs_paste_imports() {
        let mut sc = Scenario::parse("eevdf-scenario v1\nend\n").unwrap();
        let paste = "PLACE_LAG NO_RUN_TO_PARITY NEXT_BUDDY START_DEBIT FOO_BAR \n\
                     /sys/kernel/debug/sched/base_slice_ns: 3000000\n\
                     migration_cost_ns 250000\n\
                     preempt: none voluntary (full) lazy\n\
                     nr_migrate: 32\n";
        let w = apply(&mut sc, paste).unwrap();
        let t = sc.to_text();
        assert!(
            t.contains("features NO_RUN_TO_PARITY NEXT_BUDDY START_DEBIT"),
            "{t}"
        );
        assert!(
            t.contains("sysctl base_slice_ns=3000000 migration_cost_ns=250000"),
            "{t}"
        );
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("FOO_BAR") && w[2].contains("nr_migrate"));
        // A token the engine keeps without modelling is said to be so.
        assert_eq!(
            w[1],
            "line 1: accepted, not modelled (kept in the scenario, no effect on it): START_DEBIT"
        );
        // Echoed tokens are escaped and cut short.
        let long = "Y".repeat(5000);
        let w = apply(&mut sc, &format!("nr_\x1b[31m: 5\nPLACE_LAG {long}\x07\n")).unwrap();
        assert_eq!(w[0], "line 1: `nr_\\x1b[31m` is not imported");
        assert!(w[1].len() < 400 && !w[1].contains('\x07'), "{}", w[1]);
        let e = apply(&mut sc, "base_slice_ns: 3xs").unwrap_err();
        assert_eq!(e.line, 1);
    }
}
