//! Share links (issue "Sharing"): the URL fragment carries the scenario.
//!
//! `#v1;` + the canonical scenario text without its header and `end`
//! lines, lines joined by `;` and spaces written `+`: readable in a plain
//! text mail, no percent-escapes for anything canonical text contains.
//! `#z1.` + base64url (no padding) of the raw-deflated same lines joined
//! by newlines, used only when it is shorter. The `engine` line travels
//! inside, so a link replays the behaviour it was made with.
//!
//! Decoding is for links from strangers: whitespace a mailer inserted is
//! dropped, sizes are bounded before anything is allocated, errors are
//! typed, and nothing panics. Unknown versions are errors with a hint;
//! the version prefix is where a migration path for older formats goes.
//!
//! A pinned A/B baseline travels inside the text, as its `baseline`
//! block ([`crate::baseline`]), so mail and link carry the same thing.
//! State that is not scenario text (a teaching tour and its step, a
//! sweep's axes) goes after the payload in `&KEY=VALUE` sections: `&`
//! never occurs in either payload (`v1` escapes it, base64url lacks
//! it). Decoders read the sections they know and ignore the rest, so a
//! newer link still opens its scenario in an older playground.

use base64::Engine as _;

use crate::display::shown;
use crate::scenario::{Scenario, HEADER, MAX_BYTES};
use crate::ParseError;

/// Where the playground lives unless `--base` says otherwise.
pub const DEFAULT_BASE: &str = "https://eevdf-playground.github.io/play/";

/// Longest fragment accepted (browsers allow ~2 MB; scenarios are small).
pub const MAX_FRAGMENT: usize = crate::limits::LINK_FRAGMENT_BYTES;

/// Characters that travel as themselves in a `v1` fragment.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "=,:/*._-!~()'@".contains(c)
}

/// The `v1;` payload of canonical text.
fn encode_v1(lines: &[&str]) -> String {
    let mut out = String::from("v1;");
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push(';');
        }
        escape_into(&mut out, line);
    }
    out
}

/// A line as `v1` writes it: a space is `+`, [`plain`] characters are
/// themselves, every other byte is `%XX`.
fn escape_into(out: &mut String, line: &str) {
    for c in line.chars() {
        match c {
            ' ' => out.push('+'),
            c if plain(c) => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
        }
    }
}

/// A `&KEY=VALUE` section's value for one line of text, escaped as `v1`
/// escapes a line (so `&`, `#` and whitespace never appear raw).
pub fn encode_section(line: &str) -> String {
    let mut out = String::new();
    escape_into(&mut out, line);
    out
}

/// The text of a section value written by [`encode_section`].
pub fn decode_section(value: &str) -> Result<String, ParseError> {
    if value.len() > MAX_FRAGMENT {
        return Err(err(
            1,
            format!(
                "a link section of {} bytes, over {MAX_FRAGMENT}",
                value.len()
            ),
            "copy the whole link",
        ));
    }
    decode_v1(value)
}

/// The `z1.` payload of canonical text.
fn encode_z1(lines: &[&str]) -> String {
    let raw = lines.join("\n");
    let packed = miniz_oxide::deflate::compress_to_vec(raw.as_bytes(), 9);
    format!(
        "z1.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(packed)
    )
}

/// The lines of a scenario's canonical text that a link carries.
fn payload_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| *l != HEADER && *l != "end" && !l.is_empty())
        .collect()
}

/// The fragment (without `#`) for a scenario: `v1;...`, or `z1....`
/// when that is shorter.
pub fn fragment(sc: &Scenario) -> String {
    fragment_of_text(&sc.to_text())
}

/// [`fragment`] of an A/B pair: its text with the `baseline` block.
pub fn pair_fragment(p: &crate::baseline::Pair) -> String {
    fragment_of_text(&p.to_text())
}

/// The fragment of a canonical text.
fn fragment_of_text(text: &str) -> String {
    let lines = payload_lines(text);
    let v1 = encode_v1(&lines);
    let z1 = encode_z1(&lines);
    if z1.len() < v1.len() {
        z1
    } else {
        v1
    }
}

/// A whole link: `base` + `#` + fragment.
pub fn url(sc: &Scenario, base: &str) -> String {
    format!("{}#{}", base.trim_end_matches('#'), fragment(sc))
}

/// [`url`] of an A/B pair.
pub fn pair_url(p: &crate::baseline::Pair, base: &str) -> String {
    format!("{}#{}", base.trim_end_matches('#'), pair_fragment(p))
}

fn err(column: usize, message: impl Into<String>, hint: impl Into<String>) -> ParseError {
    ParseError::new(1, column, message, hint)
}

fn decode_v1(payload: &str) -> Result<String, ParseError> {
    let mut bytes = Vec::with_capacity(payload.len());
    let b = payload.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => bytes.push(b' '),
            b';' => bytes.push(b'\n'),
            b'%' => {
                let hex = payload
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        bytes.push(v);
                        i += 2;
                    }
                    None => {
                        return Err(err(
                            i + 4,
                            "bad percent-escape in the link",
                            "a `%` must be followed by two hex digits; was the link cut?",
                        ))
                    }
                }
            }
            c => bytes.push(c),
        }
        i += 1;
    }
    String::from_utf8(bytes).map_err(|_| {
        err(
            4,
            "the link does not decode to UTF-8 text",
            "copy the whole link",
        )
    })
}

fn decode_z1(payload: &str) -> Result<String, ParseError> {
    let packed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|e| {
            err(
                4,
                format!("bad base64 in the link: {e}"),
                "copy the whole link; mailers may cut long lines",
            )
        })?;
    let raw =
        miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_BYTES).map_err(|_| {
            err(
                4,
                "the compressed link is damaged or too large",
                "copy the whole link",
            )
        })?;
    String::from_utf8(raw).map_err(|_| {
        err(
            4,
            "the link does not decode to UTF-8 text",
            "copy the whole link",
        )
    })
}

/// The scenario text a link (or a bare fragment) carries.
pub fn decode_text(link: &str) -> Result<String, ParseError> {
    if link.len() > MAX_FRAGMENT + 4096 {
        return Err(err(
            1,
            format!("link is {} bytes, over {MAX_FRAGMENT}", link.len()),
            "share the scenario text instead",
        ));
    }
    // Mailers wrap long links and quote them; whitespace is never part
    // of a fragment.
    let compact: String = link.chars().filter(|c| !c.is_whitespace()).collect();
    let frag = match compact.split_once('#') {
        Some((_, f)) => f,
        None => compact.as_str(),
    };
    // `&KEY=VALUE` state sections follow the payload.
    let frag = frag.split('&').next().unwrap_or_default();
    if let Some(p) = frag.strip_prefix("v1;") {
        let body = decode_v1(p)?;
        Ok(format!("{HEADER}\n{body}\nend\n"))
    } else if let Some(p) = frag.strip_prefix("z1.") {
        let body = decode_z1(p)?;
        Ok(format!("{HEADER}\n{body}\nend\n"))
    } else {
        let head: String = frag.chars().take(8).collect();
        Err(err(
            1,
            format!("not a scenario link (fragment starts `{}`)", shown(&head)),
            "links start with #v1; or #z1. ; a newer playground may be needed",
        ))
    }
}

/// The scenario a link carries.
pub fn decode(link: &str) -> Result<Scenario, ParseError> {
    Scenario::parse(&decode_text(link)?)
}

/// The scenario and pinned baseline a link carries.
pub fn decode_pair(link: &str) -> Result<crate::baseline::Pair, ParseError> {
    crate::baseline::Pair::parse(&decode_text(link)?)
}

/// A link's `&KEY=VALUE` state sections, in order (a section without
/// `=` has an empty value). Defined keys: `sweep` (the page's sweep, its
/// `eevdf sweep` axis flags as an [`encode_section`] value).
pub fn state_sections(link: &str) -> Vec<(String, String)> {
    let compact: String = link.chars().filter(|c| !c.is_whitespace()).collect();
    let frag = compact.split_once('#').map_or(compact.as_str(), |(_, f)| f);
    frag.split('&')
        .skip(1)
        .filter(|s| !s.is_empty())
        .map(|s| match s.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (s.to_string(), String::new()),
        })
        .collect()
}

/// Whether a command-line argument looks like a link rather than a path.
pub fn looks_like_link(arg: &str) -> bool {
    arg.starts_with("http://")
        || arg.starts_with("https://")
        || arg.contains("#v1;")
        || arg.contains("#z1.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T: &str = "eevdf-scenario v1
engine 0.12
machine rb5
kernel v7.1
hz 250
duration 130s
seed 1
features NO_RUN_TO_PARITY PS_SET_NEXT_BUDDY
group /B weight=100
task ct kind=timer period=3777us slice=8ms group=/B
task rt kind=periodic count=16 run=8177us sleep=17777us slice=16ms
end
";

    #[test]
    fn v1_links_are_readable_and_round_trip() {
        let sc = Scenario::parse(T).unwrap();
        let f = fragment(&sc);
        assert!(f.starts_with("v1;engine+0.12;machine+rb5;"), "{f}");
        assert!(!f.contains('%'), "no escapes for canonical text: {f}");
        assert!(f.len() <= 260, "{} chars", f.len());
        let back = decode(&url(&sc, DEFAULT_BASE)).unwrap();
        assert_eq!(back.to_text(), sc.to_text());
    }

    #[test]
    fn long_scenarios_compress_and_mangled_links_still_decode() {
        let mut text = String::from("eevdf-scenario v1\nmachine smp8\n");
        for i in 0..40 {
            text.push_str(&format!(
                "task t{i} kind=periodic run=1ms sleep=2ms slice=3ms\n"
            ));
        }
        text.push_str("end\n");
        let sc = Scenario::parse(&text).unwrap();
        let f = fragment(&sc);
        assert!(f.starts_with("z1."), "{}", &f[..20]);
        // A mailer wrapped and indented the link.
        let link = url(&sc, DEFAULT_BASE);
        let wrapped: String = link
            .chars()
            .enumerate()
            .flat_map(|(i, c)| {
                if i % 60 == 59 {
                    vec![c, '\n', ' ', ' ']
                } else {
                    vec![c]
                }
            })
            .collect();
        assert_eq!(decode(&wrapped).unwrap().to_text(), sc.to_text());
    }

    #[test]
    fn baselines_travel_and_state_sections_are_skipped() {
        let text = T.replace("end\n", "baseline\nfeatures RUN_TO_PARITY\nend\n");
        let p = crate::baseline::Pair::parse(&text).unwrap();
        let link = pair_url(&p, DEFAULT_BASE);
        assert!(link.ends_with(";baseline;without+features"), "{link}");
        assert_eq!(decode_pair(&link).unwrap(), p);
        // A newer link's state does not stop this version opening it.
        let newer = format!("{link}&tour=preempt-short&step=12");
        assert_eq!(decode_pair(&newer).unwrap(), p);
        assert_eq!(
            state_sections(&newer),
            vec![
                ("tour".into(), "preempt-short".into()),
                ("step".into(), "12".into())
            ]
        );
        let sc = Scenario::parse(T).unwrap();
        assert_eq!(
            decode(&format!("{}&x", url(&sc, DEFAULT_BASE))).unwrap(),
            sc
        );
        assert!(state_sections(&url(&sc, DEFAULT_BASE)).is_empty());
    }

    #[test]
    fn bad_links_are_typed_errors() {
        for bad in [
            "https://x/#v2;hz+250",
            "https://x/#z1.!!!",
            "#v1;hz+%G1",
            "#z1.AAAA",
            "plain",
        ] {
            assert!(decode(bad).is_err(), "{bad}");
        }
        let e = decode("https://x/#v9;x").unwrap_err();
        assert!(e.hint.contains("#v1;"), "{e}");
        let e = decode("https://x/#v9;\x1b[2J").unwrap_err();
        assert!(e.message.contains("`v9;\\x1b[2J`"), "{e}");
    }

    proptest! {
        #[test]
        fn decoding_never_panics(s in "\\PC{0,300}") {
            let _ = decode(&s);
            let _ = decode(&format!("#v1;{s}"));
            let _ = decode(&format!("#z1.{s}"));
        }

        #[test]
        fn text_to_link_to_text_is_identity(hz in prop::sample::select(vec![100u32, 250, 1000]),
                                            n in 1u32..20, slice in 1u32..50, seed in any::<u64>()) {
            let text = format!("eevdf-scenario v1\nhz {hz}\nseed {seed}\ntask a count={n} kind=hog slice={slice}ms\ntask b kind=timer period=1ms\nend\n");
            let sc = Scenario::parse(&text).unwrap();
            let canon = sc.to_text();
            prop_assert_eq!(decode(&url(&sc, DEFAULT_BASE)).unwrap().to_text(), canon.clone());
            // Both encodings decode, whichever is chosen.
            let lines = payload_lines(&canon);
            prop_assert_eq!(decode(&format!("#{}", encode_z1(&lines))).unwrap().to_text(), canon.clone());
            prop_assert_eq!(decode(&format!("#{}", encode_v1(&lines))).unwrap().to_text(), canon);
        }
    }
}
