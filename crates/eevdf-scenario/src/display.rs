//! Showing untrusted text: names, tokens and values from a file, a link
//! or a trace go into messages and tables that land on a terminal. A raw
//! ESC there can recolour or rewrite the screen, and one huge token can
//! make a megabyte error line, so every echo goes through [`shown`].

/// Longest echoed token, in characters, before the ellipsis.
pub const MAX_SHOWN: usize = 80;
/// Longest echoed message from another layer (which may quote a token).
pub const MAX_SHOWN_MESSAGE: usize = 240;

/// `s` with control characters escaped and cut to [`MAX_SHOWN`]
/// characters (then `…`). For tokens inside a message.
pub fn shown(s: &str) -> String {
    shown_max(s, MAX_SHOWN)
}

/// [`shown`] with a limit of `max` characters.
pub fn shown_max(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        push_escaped(&mut out, c);
    }
    out
}

/// `s` with control characters escaped, not shortened. For a whole
/// message whose parts are already bounded.
pub fn escape_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    s.chars().for_each(|c| push_escaped(&mut out, c));
    out
}

/// Whether `c` would act on a terminal or reorder text rather than show:
/// C0, DEL, C1, and the bidirectional overrides and isolates.
pub fn is_hostile(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if is_hostile(c) && (c as u32) < 0x80 => {
            out.push_str(&format!("\\x{:02x}", c as u32));
        }
        c if is_hostile(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_long_tokens_cut() {
        assert_eq!(shown("a\x1b[31mb\x07"), "a\\x1b[31mb\\x07");
        assert_eq!(shown("x\u{202e}y\u{85}"), "x\\u{202e}y\\u{85}");
        assert_eq!(shown("tab\tnl\n"), "tab\\tnl\\n");
        let long = "9".repeat(500_000);
        let s = shown(&long);
        assert_eq!(s.chars().count(), MAX_SHOWN + 1);
        assert!(s.ends_with('…'));
        assert_eq!(shown("né"), "né");
        assert_eq!(escape_controls(&"\x1b".repeat(100)).len(), 400);
    }
}
