//! The fuzz corpus (`fuzz/corpus/`, kept in the repo for `cargo fuzz`)
//! replayed in `cargo test`: every target's corpus passes that target's
//! own checks (`eevdf_scenario::fuzz_checks`, which the fuzz targets call),
//! and the seeds made from our own presets and links still parse and
//! round-trip.

use std::fs;
use std::path::Path;

use eevdf_scenario::fuzz_checks;
use eevdf_scenario::scenario::Scenario;

/// A fuzz target's check: panics when a property fails.
type Check = fn(&[u8]);

/// Every fuzz target (`fuzz/Cargo.toml`) and its check.
const TARGETS: &[(&str, Check)] = &[
    ("scenario", fuzz_checks::scenario),
    ("link", fuzz_checks::link),
    ("rtapp", fuzz_checks::rtapp),
    ("ftrace", fuzz_checks::ftrace),
    ("debugfs", fuzz_checks::debugfs),
    ("features_line", fuzz_checks::features_line),
    ("paste", fuzz_checks::paste),
];

fn corpus_dir(dir: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(dir)
}

/// The files of one corpus, by name, as bytes.
fn raw_files(dir: &str) -> Vec<(String, Vec<u8>)> {
    let root = corpus_dir(dir);
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("dir entry").path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read(&p).expect("corpus file"))
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no corpus in {dir}");
    out
}

#[test]
fn every_corpus_passes_its_targets_checks() {
    for (target, check) in TARGETS {
        for (name, bytes) in raw_files(target) {
            let run = std::panic::catch_unwind(|| check(&bytes));
            assert!(run.is_ok(), "fuzz/corpus/{target}/{name} fails its check");
        }
    }
}

/// Every corpus directory belongs to a target (a renamed target keeps
/// its corpus replayed).
#[test]
fn every_corpus_directory_is_a_target() {
    let root = corpus_dir("");
    for e in fs::read_dir(&root).expect("fuzz/corpus") {
        let name = e
            .expect("dir entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        assert!(
            TARGETS.iter().any(|(t, _)| *t == name),
            "fuzz/corpus/{name}: no target"
        );
    }
    let manifest = fs::read_to_string(root.join("../Cargo.toml")).expect("fuzz/Cargo.toml");
    for (t, _) in TARGETS {
        assert!(
            manifest.contains(&format!("name = \"{t}\"")),
            "{t} not in fuzz/Cargo.toml"
        );
    }
}

fn files(dir: &str) -> Vec<(String, String)> {
    raw_files(dir)
        .into_iter()
        .map(|(n, b)| (n, String::from_utf8_lossy(&b).into_owned()))
        .collect()
}

#[test]
fn scenario_corpus_parses_and_presets_round_trip() {
    for (name, text) in files("scenario") {
        let parsed = Scenario::parse(&text);
        if name.starts_with("preset-") {
            let sc = parsed.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(Scenario::parse(&sc.to_text()).as_ref(), Ok(&sc), "{name}");
        }
    }
}

#[test]
fn link_corpus_decodes_and_preset_links_replay_their_text() {
    for (name, text) in files("link") {
        let decoded = eevdf_scenario::link::decode(text.trim());
        if name.starts_with("preset-") {
            let sc = decoded.unwrap_or_else(|e| panic!("{name}: {e}"));
            let preset = name.trim_start_matches("preset-").trim_end_matches(".txt");
            let want = eevdf_scenario::presets::preset(preset).expect("preset exists");
            assert_eq!(sc.to_text(), want.text, "{name}");
        }
    }
}

/// Links saved from engines 0.2 to 0.11 (the presets of those versions)
/// replay the preset's text as that engine wrote it: the same scenario
/// with its `engine` line.
#[test]
fn engine_0_2_to_0_11_preset_links_replay_their_text() {
    for version in [
        "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.10", "0.11",
    ] {
        let prefix = format!("v{version}-preset-");
        let mut n = 0;
        for (name, text) in files("link") {
            let Some(preset) = name.strip_prefix(&prefix) else {
                continue;
            };
            let preset = preset.trim_end_matches(".txt");
            let sc =
                eevdf_scenario::link::decode(text.trim()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(sc.engine, version, "{name}");
            let want = eevdf_scenario::presets::preset(preset)
                .expect("preset")
                .text;
            let want = want.replacen(
                &format!("engine {}\n", eevdf_scenario::scenario::ENGINE_VERSION),
                &format!("engine {version}\n"),
                1,
            );
            assert_eq!(sc.to_text(), want, "{name}");
            n += 1;
        }
        assert!(n >= 20, "{n} engine {version} preset links");
    }
}

/// Links saved from engine 0.1 (the presets of that version) replay
/// what 0.1 ran: the preset's text with `engine 0.1`, and `preempt full`
/// where the text had no `preempt` line (0.1's default, whatever the
/// kernel profile).
#[test]
fn engine_0_1_preset_links_keep_their_preemption_model() {
    let mut n = 0;
    for (name, text) in files("link") {
        let Some(preset) = name.strip_prefix("v0.1-preset-") else {
            continue;
        };
        let preset = preset.trim_end_matches(".txt");
        let sc =
            eevdf_scenario::link::decode(text.trim()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(sc.engine, "0.1", "{name}");
        let now = Scenario::parse(
            eevdf_scenario::presets::preset(preset)
                .expect("preset")
                .text,
        )
        .unwrap();
        let want = now.preempt.unwrap_or(eevdf_sim::PreemptModel::Full);
        assert_eq!(sc.preempt, Some(want), "{name}");
        assert_eq!(sc.preempt_model(), want, "{name}");
        n += 1;
    }
    assert!(n >= 20, "{n} engine 0.1 preset links");
}
