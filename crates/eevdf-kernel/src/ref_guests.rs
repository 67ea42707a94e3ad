//! Which guest runner made each committed kernel reference. The guest is
//! an input of every kernel run: a rebuilt guest moves bimodal seeds
//! between regimes (docs/fidelity.md), so the references must all come
//! from the guest this checkout builds, and a change to the guest's
//! binary must come with fresh references.

use std::collections::BTreeMap;
use std::path::Path;

use crate::fidelity::{self, Reference};
use crate::sweep_line;

/// The commands that refresh every kernel reference, in order, for
/// messages: `fidelity` ends by rewriting docs/fidelity.md from all of
/// them, and the seeds report shows their kernels' B/A.
pub const REFRESH: &str = "make throughput-ref default-ref steady-ref fidelity fidelity-seeds";

/// Each reference file in `dir` with the guests its runs name: a fidelity
/// row's `*.json` (read by [`fidelity::load_references`]) and a sweep's
/// `*.jsonl` (each kernel cell's, [`sweep_line::kernel_guest`]). Files
/// are sorted by name, guests within a file too.
pub fn reference_guests(dir: &Path) -> Result<BTreeMap<String, Vec<String>>, String> {
    let mut out = BTreeMap::new();
    for r in fidelity::load_references(dir)? {
        let name = Reference::file_name(&r.row, &r.variant, &r.series);
        out.insert(name, vec![r.guest_sha256]);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut guests = Vec::new();
        for (n, v) in sweep_line::cells(&text) {
            let at = |e: String| format!("{name} line {n}: {e}");
            let v = v.map_err(at)?;
            if let Some(g) = sweep_line::kernel_guest(&v).map_err(at)? {
                guests.push(g.to_string());
            }
        }
        guests.sort();
        guests.dedup();
        if !guests.is_empty() {
            out.insert(name.to_string(), guests);
        }
    }
    Ok(out)
}

/// The guests the reference files in `dir` name, each with its files
/// (sorted).
pub fn files_by_guest(dir: &Path) -> Result<BTreeMap<String, Vec<String>>, String> {
    let mut by_guest: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (file, guests) in reference_guests(dir)? {
        for g in guests {
            by_guest.entry(g).or_default().push(file.clone());
        }
    }
    Ok(by_guest)
}

/// A guest and its files for messages: `PREFIX: N files (FIRST, SECOND, ...)`.
pub fn describe(guest: &str, files: &[String]) -> String {
    let prefix: String = guest.chars().take(8).collect();
    let more = if files.len() > 2 { ", ..." } else { "" };
    let first: Vec<&str> = files.iter().take(2).map(String::as_str).collect();
    let n = match files.len() {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    format!("{prefix}: {n} ({}{more})", first.join(", "))
}

/// The other guests the reference files in `dir` name, each as
/// [`describe`] puts it; empty when every reference comes from `guest`.
pub fn stale_references(dir: &Path, guest: &str) -> Result<Vec<String>, String> {
    Ok(files_by_guest(dir)?
        .into_iter()
        .filter(|(g, _)| g != guest)
        .map(|(g, files)| describe(&g, &files))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fidelity row's reference file, made with `guest`.
    fn row(name: &str, guest: &str) -> String {
        serde_json::json!({
            "row": name, "variant": "default", "series": "7.2", "kernel": "7.2.13",
            "package": "p", "package_version": "1", "kernel_sha256": "k",
            "qemu": "q", "icount_shift": 1, "guest_sha256": guest,
            "commit": "c", "command": "eevdf kernel fidelity", "seeds": [],
        })
        .to_string()
    }

    fn dir_with(tag: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("eevdf-ref-guests-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn rows_and_sweep_cells_name_their_guests() {
        let dir = dir_with(
            "rows",
            &[
                ("a.default.7.2.json", &row("a", "aaaa1111")),
                (
                    "b.jsonl",
                    "{\"axes\":[],\"result\":{\"source\":{\"kind\":\"kernel\",\"guest_sha256\":\"bbbb2222\"}}}\n\
                 {\"axes\":[],\"result\":{}}\n\
                 {\"axes\":[],\"skipped\":\"simulator-only\"}\n\
                 {\"axes\":[],\"result\":{\"source\":{\"kind\":\"kernel\",\"guest_sha256\":\"aaaa1111\"}}}\n",
                ),
                ("why.md", "not a reference"),
            ],
        );
        let got = reference_guests(&dir).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got["a.default.7.2.json"], ["aaaa1111"]);
        assert_eq!(got["b.jsonl"], ["aaaa1111", "bbbb2222"]);
        assert_eq!(
            stale_references(&dir, "aaaa1111").unwrap(),
            ["bbbb2222: 1 file (b.jsonl)"]
        );
        assert_eq!(
            stale_references(&dir, "bbbb2222").unwrap(),
            ["aaaa1111: 2 files (a.default.7.2.json, b.jsonl)"]
        );
        assert!(stale_references(&dir, "cccc").unwrap().len() == 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_kernel_run_without_its_guest_is_an_error() {
        let dir = dir_with("no-guest", &[("c.json", r#"{"seeds": []}"#)]);
        assert!(reference_guests(&dir).unwrap_err().contains("c.json"));
        let _ = std::fs::remove_dir_all(&dir);
        let cell = r#"{"axes":[],"result":{"source":{"kind":"kernel"}}}"#;
        let dir = dir_with("no-guest-cell", &[("d.jsonl", &format!("\n{cell}\n"))]);
        assert!(reference_guests(&dir)
            .unwrap_err()
            .contains("d.jsonl line 2"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
