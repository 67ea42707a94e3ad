//! The fuzz corpus (`fuzz/corpus/`, kept in the repo for `cargo fuzz`)
//! replayed in `cargo test`: no input panics any parser, and the seeds
//! made from our own presets and links still parse and round-trip.

use std::fs;
use std::path::Path;

use eevdf_scenario::scenario::Scenario;

fn files(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(dir);
    let mut out: Vec<(String, String)> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("dir entry").path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = fs::read(&p).expect("corpus file");
            (name, String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no corpus in {dir}");
    out
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
        assert_eq!(sc.sim.preempt, want, "{name}");
        n += 1;
    }
    assert!(n >= 20, "{n} engine 0.1 preset links");
}

#[test]
fn other_corpora_never_panic() {
    for (_, text) in files("rtapp") {
        let _ = eevdf_scenario::rtapp::import(&text, "up");
    }
    for (_, text) in files("features") {
        let mut sc = Scenario::default();
        let _ = eevdf_scenario::debugfs::apply(&mut sc, &text);
    }
    for (_, text) in files("ftrace") {
        let _ = eevdf_scenario::ftrace::import(&text);
    }
}
