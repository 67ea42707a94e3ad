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
