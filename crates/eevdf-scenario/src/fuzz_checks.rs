//! The properties the fuzz targets (`fuzz/fuzz_targets/`) check, shared
//! with the corpus replay test (`tests/corpus.rs`), so `cargo test` holds
//! every corpus file to the fuzzer's own checks. Each function panics when
//! a property fails (the fuzzer's signal): call them from tests and fuzz
//! targets only. Every parser must also not panic on its own.

use crate::scenario::Scenario;
use crate::{debugfs, display, ftrace, ftrace_regime, limits, link, paste, report, rtapp};

/// A message shown to a user carries no raw control character and no
/// unbounded echo (for the formats that escape their tokens).
fn safe(what: &str, msg: &str) {
    assert_eq!(
        msg,
        display::escape_controls(msg),
        "{what}: raw control character"
    );
    assert!(msg.len() <= 2000, "{what}: {} bytes of message", msg.len());
}

/// Scenario text v1: whatever parses prints canonical text that parses
/// to the same scenario.
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(sc) = Scenario::parse(text) {
        let canon = sc.to_text();
        let back = Scenario::parse(&canon).expect("canonical text parses");
        assert_eq!(back.to_text(), canon);
    }
    // The same text read as an A/B pair (a `baseline` block); its
    // errors are B's or A's scenario errors, safe to print.
    match crate::baseline::Pair::parse(text) {
        Ok(p) => {
            let canon = p.to_text();
            let back = crate::baseline::Pair::parse(&canon).expect("canonical pair parses");
            assert_eq!(back, p);
            let _ = p.labels();
        }
        Err(e) => safe("scenario", &e.to_string()),
    }
}

/// Share links: a decoded scenario's own link decodes back to it; the
/// link layer's errors are safe to print.
pub fn link(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = link::decode_text(text) {
        safe("link", &e.to_string());
    }
    if let Ok(p) = link::decode_pair(text) {
        let url = link::pair_url(&p, "https://x/");
        let back = link::decode_pair(&url).expect("our own link decodes");
        assert_eq!(back, p);
    }
}

/// rt-app JSON: an import is a valid canonical scenario; warnings and
/// errors are safe to print.
pub fn rtapp(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match rtapp::import(text, "smp4") {
        Ok(i) => {
            let canon = i.scenario.to_text();
            let back = Scenario::parse(&canon).expect("imported text parses");
            assert_eq!(back.to_text(), canon);
            i.warnings.iter().for_each(|w| safe("rtapp warning", w));
        }
        Err(e) => safe("rtapp", &e.to_string()),
    }
}

/// ftrace text: the streaming reader agrees with the text reader, and
/// errors are safe to print; the regime reader's too, and its table
/// prints.
pub fn ftrace(data: &[u8]) {
    match ftrace_regime::regime_reader(data) {
        Ok(r) => {
            let t = ftrace_regime::table(&[("a", &r), ("b", &r)]);
            assert!(t.lines().count() >= 8, "{t}");
        }
        Err(e) => safe("ftrace regime", &e.to_string()),
    }
    let streamed = ftrace::import_reader(data);
    if let Err(e) = &streamed {
        safe("ftrace", &e.to_string());
    }
    let Ok(text) = std::str::from_utf8(data) else {
        assert!(streamed.is_err(), "non-UTF-8 input imported");
        return;
    };
    if text.lines().any(|l| l.len() > limits::TRACE_LINE_BYTES) {
        return;
    }
    match (ftrace::import(text), streamed) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(limits::ReadError::Parse(b))) => assert_eq!(a, b),
        (a, b) => panic!("text reader {a:?}, stream reader {b:?}"),
    }
}

/// A debugfs paste over the default scenario: the result survives
/// printing and parsing; warnings are safe to print.
pub fn debugfs(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sc = Scenario::default();
    if let Ok(warnings) = debugfs::apply(&mut sc, text) {
        sc.validate().expect("a debugfs import survives printing");
        warnings.iter().for_each(|w| safe("debugfs warning", w));
    }
}

/// A features line: its tokens printed back tokenise to the same tokens,
/// each at a column where it starts; errors are safe to print.
pub fn features_line(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let toks = match crate::parse_features_line(text) {
        Ok(t) => t,
        Err(e) => return safe("features line", &e.to_string()),
    };
    let lines: Vec<&str> = text.lines().collect();
    for t in &toks {
        let rest: String = lines[t.line - 1].chars().skip(t.column - 1).collect();
        let printed = if t.enabled {
            t.name.clone()
        } else {
            format!("NO_{}", t.name)
        };
        assert!(
            rest.starts_with(&printed),
            "token {printed} at {}:{}",
            t.line,
            t.column
        );
    }
    let printed: Vec<String> = toks
        .iter()
        .map(|t| format!("{}{}", if t.enabled { "" } else { "NO_" }, t.name))
        .collect();
    let back = crate::parse_features_line(&printed.join(" ")).expect("printed tokens parse");
    let key = |v: &[crate::FeatureToken]| -> Vec<(String, bool)> {
        v.iter().map(|t| (t.name.clone(), t.enabled)).collect()
    };
    assert_eq!(key(&back), key(&toks));
}

/// A mail paste: what parses, sent again as our mail block (plain and
/// quoted), pastes back to the same scenario.
pub fn paste(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(p) = paste::parse_pasted_pair(text) else {
        return;
    };
    let canon = p.to_text();
    let table = "| task | p99 |\n| ct   | 42  |\n";
    let link = link::pair_url(&p, link::DEFAULT_BASE);
    let mail = report::mail(&canon, &report::simulated_by(), table, &link);
    let back = paste::parse_pasted_pair(&mail).expect("our mail pastes back");
    assert_eq!(back.to_text(), canon);
    let quoted: String = mail.lines().map(|l| format!("> {l}\n")).collect();
    let back = paste::parse_pasted_pair(&quoted).expect("our quoted mail pastes back");
    assert_eq!(back.to_text(), canon);
}
