//! Golden runs: every `tests/golden/*.scn` at the workspace root is run by
//! the `eevdf` binary with `--format json` and compared byte for byte with
//! the committed `*.json` next to it (determinism: same scenario and seed,
//! same bytes). `UPDATE_GOLDEN=1 cargo test -p eevdf-cli --test golden`
//! rewrites them after an intended behaviour change; review the diff.

use std::path::PathBuf;
use std::process::Command;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn run_json(scn: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(["run", scn.to_str().unwrap(), "--format", "json"])
        .output()
        .expect("run eevdf");
    assert!(
        out.status.success(),
        "{}: {}",
        scn.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 json")
}

#[test]
fn golden_json_is_byte_identical() {
    let mut scns: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("tests/golden")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "scn"))
        .collect();
    scns.sort();
    assert!(scns.len() >= 5, "at least 5 golden scenarios");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for scn in &scns {
        let got = run_json(scn);
        let json = scn.with_extension("json");
        if update {
            std::fs::write(&json, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&json).unwrap_or_default();
        if got != want {
            failures.push(format!("{} differs from {}", scn.display(), json.display()));
        }
        // And a second run in the same process gives the same bytes.
        assert_eq!(got, run_json(scn), "{} is not deterministic", scn.display());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_input_exits_2_with_one_error_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(["check", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(b"eevdf-scenario v1\nhz 7\nend\n")?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: <stdin>:2:"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(["run", "no-such-preset"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_older_engines_scenario_says_so_and_keeps_its_model() {
    // A link saved from engine 0.1 (its default preset, no `preempt`
    // line): 0.1 ran it under `full`, and the note names both versions.
    let link = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus/link/v0.1-preset-default.txt");
    let link = std::fs::read_to_string(link).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(["check", link.trim()])
        .output()
        .expect("run eevdf");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "note: made with engine 0.1, computed by {}",
        eevdf_scenario::scenario::ENGINE_VERSION
    );
    assert!(stderr.contains(&want), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\npreempt full\n"));
}
