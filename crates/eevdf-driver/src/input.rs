//! What an input names and what a text holds, the same for both front
//! ends: a preset name, a share link, a scenario with or without its
//! `baseline` block, or a mail with one pasted in it. Reading files and
//! the address bar stays with the caller (this crate does no I/O).

use eevdf_scenario::baseline::Pair;
use eevdf_scenario::scenario::Scenario;
use eevdf_scenario::{link, paste, presets, ParseError};

/// A named input's text and where it came from (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// `preset NAME` or `link`.
    pub source: String,
    pub text: String,
}

/// The text `arg` names if it is a preset's name or a share link
/// (`None`: neither; a file, then, or nothing). A link that does not
/// decode is its error.
pub fn named(arg: &str) -> Option<Result<Named, ParseError>> {
    if let Some(p) = presets::preset(arg) {
        return Some(Ok(Named {
            source: format!("preset {arg}"),
            text: p.text.to_string(),
        }));
    }
    link::looks_like_link(arg).then(|| {
        link::decode_text(arg).map(|text| Named {
            source: "link".into(),
            text,
        })
    })
}

/// The scenario a text holds and its pinned baseline, if any: the text
/// itself, or a mail with the block pasted in it (quoted, with prose
/// around). The error is the text's own, not the mail search's.
pub fn pair(text: &str) -> Result<Pair, ParseError> {
    Pair::parse(text).or_else(|e| paste::parse_pasted_pair(text).map_err(|_| e))
}

/// What the page's editor keeps after an input: the text as typed, or,
/// for a pasted mail or a pasted text with a `baseline` block, the
/// scenario's canonical text and the pin (`Some` when the block had one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditorText {
    pub text: String,
    pub pin: Option<String>,
}

/// The editor's text after an input of `typed`; `pasted` says the input
/// was a paste rather than typing. A typed text with a `baseline` block
/// stays as typed (the block would vanish into the pin at its first
/// line), and a half-typed scenario is left alone: it fails every parse.
pub fn editor_text(typed: String, pasted: bool) -> EditorText {
    let keep = |text| EditorText { text, pin: None };
    if Scenario::parse(&typed).is_ok() {
        return keep(typed);
    }
    let bare = Pair::parse(&typed).is_ok();
    match paste::parse_pasted_pair(&typed) {
        Ok(p) if !bare || pasted || p.a.is_none() => EditorText {
            text: p.b.to_text(),
            pin: p.a.map(|a| a.to_text()),
        },
        _ => keep(typed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_text() -> &'static str {
        presets::preset("default").unwrap().text
    }

    #[test]
    fn presets_and_links_are_named() {
        let p = named("default").unwrap().unwrap();
        assert_eq!(
            (p.source.as_str(), p.text.as_str()),
            ("preset default", default_text())
        );
        let sc = Scenario::parse(default_text()).unwrap();
        let url = link::url(&sc, link::DEFAULT_BASE);
        let l = named(&url).unwrap().unwrap();
        assert_eq!(l.source, "link");
        assert_eq!(Scenario::parse(&l.text).unwrap(), sc);
        assert!(named("no-such-preset").is_none());
        assert!(named("scenario.txt").is_none());
        let bad = named("https://x/#z1.!!!").unwrap().unwrap_err();
        assert!(!bad.message.is_empty());
    }

    #[test]
    fn a_pasted_mail_is_its_block() {
        let mail = format!(
            "Hi,\n\nthe numbers below come from:\n\n{}\nThanks\n",
            default_text()
                .lines()
                .map(|l| format!("> {l}\n"))
                .collect::<String>()
        );
        let p = pair(&mail).unwrap();
        assert_eq!(p.b.to_text(), default_text());
        assert!(p.a.is_none());
        // A text that holds no block keeps its own error.
        let e = pair("eevdf-scenario v1\nhz 7\nend\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 4));
    }

    #[test]
    fn the_editor_opens_pastes_and_leaves_typing_alone() {
        let typed = editor_text(default_text().to_string(), false);
        assert_eq!((typed.text.as_str(), typed.pin), (default_text(), None));
        let half = "eevdf-scenario v1\nmach".to_string();
        assert_eq!(editor_text(half.clone(), true).text, half);
        let quoted: String = default_text().lines().map(|l| format!("> {l}\n")).collect();
        assert_eq!(editor_text(quoted, false).text, default_text());
        // A text with a baseline block: typed, it stays; pasted, the
        // block becomes the pin.
        let with_pin = default_text().replace("end\n", "baseline\nhz 1000\nend\n");
        let typed = editor_text(with_pin.clone(), false);
        assert_eq!((typed.text.as_str(), typed.pin), (with_pin.as_str(), None));
        let pasted = editor_text(with_pin, true);
        assert_eq!(pasted.text, default_text());
        let pin = Scenario::parse(&pasted.pin.expect("the block's pin")).unwrap();
        assert_eq!(pin.sim.hz, 1000);
    }
}
