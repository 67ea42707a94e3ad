//! Tokenising a pasted `/sys/kernel/debug/sched/features` line (formats.md
//! §5): `NAME` or `NO_NAME` tokens separated by spaces, commas or newlines.
//! Name validation against the engine's feature table happens one layer up;
//! this layer only checks the token shape, so a 6.6 line still pastes.

use crate::display::shown;
use crate::ParseError;

/// Longest input accepted, far above any real features line.
pub const MAX_LEN: usize = crate::limits::FEATURES_BYTES as usize;
/// Longest token: a debugfs write takes at most 63 bytes.
pub const MAX_TOKEN: usize = 63;

/// One `NAME` / `NO_NAME` token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureToken {
    /// The feature name without any `NO_` prefix.
    pub name: String,
    pub enabled: bool,
    pub line: usize,
    pub column: usize,
}

/// Splits a features line into tokens, in order.
pub fn parse_features_line(text: &str) -> Result<Vec<FeatureToken>, ParseError> {
    if text.len() > MAX_LEN {
        return Err(ParseError::new(
            1,
            1,
            format!("features text is {} bytes, over {MAX_LEN}", text.len()),
            "paste one features line",
        ));
    }
    let mut out = Vec::new();
    for (li, line) in text.lines().enumerate() {
        let mut tok_start = None;
        let chars: Vec<char> = line.chars().collect();
        for (ci, c) in chars.iter().chain(std::iter::once(&' ')).enumerate() {
            let col = ci + 1;
            let sep = c.is_whitespace() || *c == ',';
            match (sep, tok_start) {
                (false, None) => tok_start = Some((ci, col)),
                (true, Some((start, start_col))) => {
                    let tok: String = chars[start..ci].iter().collect();
                    out.push(token(&tok, li + 1, start_col)?);
                    tok_start = None;
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

fn token(tok: &str, line: usize, column: usize) -> Result<FeatureToken, ParseError> {
    if tok.len() > MAX_TOKEN {
        return Err(ParseError::new(
            line,
            column,
            format!("token is {} bytes, over {MAX_TOKEN}", tok.len()),
            "feature names are short SCHED_FEAT names",
        ));
    }
    if let Some(bad) = tok
        .chars()
        .position(|c| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
    {
        return Err(ParseError::new(
            line,
            column + bad,
            format!("unexpected character in feature token `{}`", shown(tok)),
            "feature names are upper case, e.g. NO_NEXT_BUDDY",
        ));
    }
    let (name, enabled) = match tok.strip_prefix("NO_") {
        Some(rest) => (rest, false),
        None => (tok, true),
    };
    if name.is_empty() {
        return Err(ParseError::new(
            line,
            column,
            "empty feature name",
            "write NO_NAME or NAME",
        ));
    }
    Ok(FeatureToken {
        name: name.to_string(),
        enabled,
        line,
        column,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_a_debugfs_line_with_trailing_space() {
        let t = parse_features_line("PLACE_LAG NO_NEXT_BUDDY PICK_BUDDY \n").unwrap();
        let got: Vec<_> = t
            .iter()
            .map(|t| (t.name.as_str(), t.enabled, t.column))
            .collect();
        assert_eq!(
            got,
            vec![
                ("PLACE_LAG", true, 1),
                ("NEXT_BUDDY", false, 11),
                ("PICK_BUDDY", true, 25)
            ]
        );
    }

    #[test]
    fn accepts_commas_and_reports_bad_characters_with_position() {
        assert_eq!(parse_features_line("A,NO_B").unwrap().len(), 2);
        let e = parse_features_line("PLACE_LAG\n  no_delay").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
        assert!(parse_features_line("NO_").is_err());
        let e = parse_features_line("A\x1b[31m").unwrap_err();
        assert_eq!(e.column, 2);
        assert!(e.message.contains("`A\\x1b[31m`"), "{e}");
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = parse_features_line(&s);
        }
    }
}
