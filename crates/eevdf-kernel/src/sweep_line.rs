//! Reading an `eevdf sweep` JSON line back (the kernel references made
//! by `make default-ref` and `make throughput-ref`): its axis values, and
//! its scenario text without what the sweep and the engine add.

use std::collections::BTreeMap;

use serde_json::Value;

/// The line's `axes`, by axis name (`features`, `seed`, `kernel`, a
/// `--vary` key).
pub fn axes(line: &Value) -> BTreeMap<String, String> {
    line["axes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| Some((a[0].as_str()?.to_string(), a[1].as_str()?.to_string())))
        .collect()
}

/// A sweep file's cells: each non-blank line's number (from 1) and its
/// JSON, or the parse error.
pub fn cells(jsonl: &str) -> impl Iterator<Item = (usize, Result<Value, String>)> + '_ {
    jsonl
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, serde_json::from_str(l).map_err(|e| e.to_string())))
}

/// The guest runner a kernel cell was made with (`result.source`'s
/// `guest_sha256`); `None` for a simulator or skipped cell, which has no
/// kernel source.
pub fn kernel_guest(line: &Value) -> Result<Option<&str>, String> {
    let source = &line["result"]["source"];
    match (source["kind"].as_str(), source["guest_sha256"].as_str()) {
        (_, Some(g)) => Ok(Some(g)),
        (Some("kernel"), None) => Err("a kernel run without guest_sha256".into()),
        _ => Ok(None),
    }
}

/// A cell's scenario text without the lines the sweep adds (seed,
/// features) and the engine line: a kernel runs the same scenario
/// whatever engine wrote it.
pub fn bare_text(text: &str) -> String {
    text.lines()
        .filter(|l| {
            !["seed ", "features ", "engine "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back() {
        let v: Value = serde_json::from_str(
            r#"{"axes":[["features","NEXT_BUDDY"],["seed","2"],["kernel","7.2"]]}"#,
        )
        .unwrap();
        let a = axes(&v);
        assert_eq!(a["features"], "NEXT_BUDDY");
        assert_eq!((a["seed"].as_str(), a.len()), ("2", 3));
        let t = "eevdf-scenario v1\nengine 0.7\nmachine up\nseed 3\nfeatures NEXT_BUDDY\nend\n";
        assert_eq!(bare_text(t), "eevdf-scenario v1\nmachine up\nend");
    }

    #[test]
    fn cells_skip_blank_lines_and_count_every_line() {
        let got: Vec<_> = cells("{\"a\":1}\n\n  \nnot json\n{}").collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], (1, Ok(serde_json::json!({"a": 1}))));
        assert_eq!(got[1].0, 4);
        assert!(got[1].1.is_err());
        assert_eq!(got[2], (5, Ok(serde_json::json!({}))));
    }

    #[test]
    fn a_kernel_cell_names_its_guest() {
        let cell = |src: &str| -> Value {
            serde_json::from_str(&format!(r#"{{"axes":[],"result":{{{src}}}}}"#)).unwrap()
        };
        let k = cell(r#""source":{"kind":"kernel","guest_sha256":"abc"}"#);
        assert_eq!(kernel_guest(&k), Ok(Some("abc")));
        assert_eq!(kernel_guest(&cell(r#""sim_ns":1"#)), Ok(None));
        let skipped: Value = serde_json::from_str(r#"{"axes":[],"skipped":"x"}"#).unwrap();
        assert_eq!(kernel_guest(&skipped), Ok(None));
        assert!(kernel_guest(&cell(r#""source":{"kind":"kernel"}"#)).is_err());
    }
}
