//! Lexing scenario text: tokens with their columns, feature tokens,
//! numbers and durations, and the "did you mean" suggestions.

use super::*;

/// A whitespace-separated token and its 1-based character column.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tok<'a> {
    pub(super) s: &'a str,
    pub(super) col: usize,
}

impl Tok<'_> {
    /// The column just after the token.
    pub(super) fn end_col(&self) -> usize {
        self.col + self.s.chars().count()
    }
}

/// Splits a line into tokens, stopping at `#`.
pub(super) fn tokenize(line: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    let mut end = line.len();
    for (i, (b, c)) in line.char_indices().enumerate() {
        if c == '#' {
            end = b;
            break;
        }
        if c.is_whitespace() {
            if let Some((sb, col)) = start.take() {
                out.push(Tok {
                    s: line.get(sb..b).unwrap_or_default(),
                    col,
                });
            }
        } else if start.is_none() {
            start = Some((b, i + 1));
        }
    }
    if let Some((sb, col)) = start {
        out.push(Tok {
            s: line.get(sb..end).unwrap_or_default(),
            col,
        });
    }
    out
}

/// Feature tokens separated by whitespace or commas, with their columns
/// (`first_col` is the column of the first character of `s`).
pub(super) fn feature_tokens(s: &str, first_col: usize) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    for (col, (b, c)) in (first_col..).zip(s.char_indices()) {
        if c.is_whitespace() || c == ',' {
            if let Some((sb, sc)) = start.take() {
                out.push((sc, s.get(sb..b).unwrap_or_default()));
            }
        } else if start.is_none() {
            start = Some((b, col));
        }
    }
    if let Some((sb, sc)) = start {
        out.push((sc, s.get(sb..).unwrap_or_default()));
    }
    out
}

/// A user token in backquotes, shortened if long.
/// An echoed token: control characters escaped, at most 40 characters
/// (errors reach terminals and pages; see `display`).
pub(super) fn quote(s: &str) -> String {
    format!("`{}`", crate::display::shown_max(s, 40))
}

/// Edit distance, for "did you mean" hints (inputs are short).
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            let best = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
            cur.push(best);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is a plausible typo.
pub(super) fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    if word.is_empty() || word.len() > 64 {
        return None;
    }
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|&(d, c)| d <= (c.len() / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// `hint` prefixed with a "did you mean" for `word`, if any.
pub(super) fn with_suggestion(word: &str, candidates: &[&str], hint: String) -> String {
    match closest(word, candidates) {
        Some(c) => format!("did you mean `{c}`? {hint}"),
        None => hint,
    }
}

/// A string of ASCII digits as a `u64`.
pub(super) fn parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// An optional `-` and ASCII digits as an `i64`.
pub(super) fn parse_int(s: &str) -> Option<i64> {
    match s.strip_prefix('-') {
        Some(rest) => parse_uint(rest)
            .and_then(|v| i64::try_from(v).ok())
            .map(|v| -v),
        None => parse_uint(s).and_then(|v| i64::try_from(v).ok()),
    }
}

/// Parses a duration such as `20us`, `2.8ms` or `0.5s` (or a bare `0`).
/// The error is a message and a hint.
pub(super) fn parse_duration(s: &str) -> Result<Nanos, (String, String)> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if num.is_empty() {
        return Err((
            format!("expected a duration such as 20us, found {}", quote(s)),
            UNIT_HINT.to_string(),
        ));
    }
    let mult: u128 = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "" if num.bytes().all(|b| b == b'0') => return Ok(0),
        "" => {
            return Err((
                format!("duration {} has no unit", quote(s)),
                UNIT_HINT.to_string(),
            ))
        }
        _ => {
            return Err((
                format!("unknown unit {} in duration {}", quote(unit), quote(s)),
                UNIT_HINT.to_string(),
            ))
        }
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() || frac.contains('.') || (num.contains('.') && frac.is_empty()) {
        return Err((
            format!("malformed number in duration {}", quote(s)),
            "write digits with at most one decimal point, e.g. 2.8ms".to_string(),
        ));
    }
    let too_long = || {
        (
            format!("duration {} is too long", quote(s)),
            format!("durations are at most {}", fmt_duration(MAX_DURATION_NS)),
        )
    };
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    if int.len() > 20 {
        return Err(too_long());
    }
    let int_val: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_long())?
    };
    let mut total = int_val * mult;
    if !frac.is_empty() {
        let scale = frac
            .len()
            .try_into()
            .ok()
            .and_then(|n: u32| 10u128.checked_pow(n));
        let frac_val: Option<u128> = frac.parse().ok();
        match (scale, frac_val) {
            (Some(scale), Some(fv)) if frac.len() <= 9 && (fv * mult) % scale == 0 => {
                total += fv * mult / scale;
            }
            _ => {
                return Err((
                    format!("duration {} is not a whole number of nanoseconds", quote(s)),
                    "use a smaller unit or fewer decimals, e.g. 2800us or 2.8ms".to_string(),
                ))
            }
        }
    }
    Nanos::try_from(total).map_err(|_| too_long())
}

/// A duration in the largest unit that keeps it an integer.
pub(crate) fn fmt_duration(ns: Nanos) -> String {
    for (unit, m) in [("s", S), ("ms", MS), ("us", US)] {
        if ns % m == 0 {
            return format!("{}{unit}", ns / m);
        }
    }
    format!("{ns}ns")
}
