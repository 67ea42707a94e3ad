//! Keys and values: which keys a task kind takes, and the checked
//! readers of `key=value` tokens (durations, integers, choices, CPU
//! lists, names) that turn a bad value into a positioned error.

use super::*;

pub(super) fn feature_error(line: usize, col: usize, e: &FeatureError) -> ParseError {
    let text = e.to_string();
    let (message, hint) = match text.split_once("; ").or_else(|| text.split_once(": ")) {
        Some((m, h)) => (m.to_string(), h.to_string()),
        None => (
            text.clone(),
            "names use the kernel's SCHED_FEAT spelling, e.g. NO_RUN_TO_PARITY \
             or LAG_CLAMP=2slice_tick"
                .to_string(),
        ),
    };
    ParseError::new(line, col, message, hint)
}

/// Checks the header line.
pub(super) fn header(line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
    let hint = format!("start the text with the line `{HEADER}`");
    match toks {
        [magic, ..] if magic.s != "eevdf-scenario" => Err(ParseError::new(
            line,
            magic.col,
            format!("expected the header `{HEADER}`, found {}", quote(magic.s)),
            hint,
        )),
        [magic] => Err(ParseError::new(
            line,
            magic.end_col() + 1,
            "missing version after `eevdf-scenario`",
            hint,
        )),
        [_, v, ..] if v.s != "v1" => Err(ParseError::new(
            line,
            v.col,
            format!("unsupported version {}", quote(v.s)),
            "this build reads `eevdf-scenario v1` only; write `eevdf-scenario v1`",
        )),
        [_, _, extra, ..] => Err(ParseError::new(
            line,
            extra.col,
            format!("unexpected {} after the header", quote(extra.s)),
            hint,
        )),
        _ => Ok(()),
    }
}

/// The one value of a single-valued directive.
pub(super) fn single<'a>(
    line: usize,
    toks: &[Tok<'a>],
    example: &str,
) -> Result<Tok<'a>, ParseError> {
    match toks {
        [_, v] => Ok(*v),
        [d] => Err(ParseError::new(
            line,
            d.end_col() + 1,
            format!("`{}` needs a value", d.s),
            format!("write e.g. `{example}`"),
        )),
        [d, v, extra, ..] => Err(ParseError::new(
            line,
            extra.col,
            format!("unexpected {} after `{} {}`", quote(extra.s), d.s, v.s),
            format!("`{}` takes one value; `#` starts a comment", d.s),
        )),
        [] => Err(ParseError::new(line, 1, "empty directive", "")),
    }
}

/// A `key=value` token.
#[derive(Clone, Copy, Debug)]
pub(super) struct Kv<'a> {
    pub(super) key: &'a str,
    pub(super) val: &'a str,
    pub(super) kcol: usize,
    pub(super) vcol: usize,
}

pub(super) fn split_kv<'a>(line: usize, t: Tok<'a>, example: &str) -> Result<Kv<'a>, ParseError> {
    let Some((key, val)) = t.s.split_once('=') else {
        return Err(ParseError::new(
            line,
            t.col,
            format!("expected key=value, found {}", quote(t.s)),
            format!("write key=value pairs, e.g. {example}"),
        ));
    };
    if key.is_empty() {
        return Err(ParseError::new(
            line,
            t.col,
            "missing key before `=`",
            format!("write key=value pairs, e.g. {example}"),
        ));
    }
    let vcol = t.col + key.chars().count() + 1;
    if val.is_empty() {
        return Err(ParseError::new(
            line,
            vcol,
            format!("`{key}` needs a value after `=`"),
            format!("write key=value pairs, e.g. {example}"),
        ));
    }
    Ok(Kv {
        key,
        val,
        kcol: t.col,
        vcol,
    })
}

/// A duration value in `lo..=hi`.
pub(super) fn dur_val(line: usize, kv: &Kv<'_>, lo: Nanos, hi: Nanos) -> Result<Nanos, ParseError> {
    let v = parse_duration(kv.val).map_err(|(m, h)| ParseError::new(line, kv.vcol, m, h))?;
    if v < lo || v > hi {
        let message = if v < lo && lo == 1 {
            format!("`{}` must be more than 0", kv.key)
        } else if v < lo {
            format!("`{}` must be at least {}", kv.key, fmt_duration(lo))
        } else {
            format!("`{}` must be at most {}", kv.key, fmt_duration(hi))
        };
        let lo_text = if lo == 1 {
            "more than 0".to_string()
        } else {
            format!("from {}", fmt_duration(lo))
        };
        return Err(ParseError::new(
            line,
            kv.vcol,
            message,
            format!(
                "`{}` takes a duration {lo_text} up to {}",
                kv.key,
                fmt_duration(hi)
            ),
        ));
    }
    Ok(v)
}

/// An unsigned integer value in `lo..=hi`.
pub(super) fn uint_val(line: usize, kv: &Kv<'_>, lo: u64, hi: u64) -> Result<u64, ParseError> {
    match parse_uint(kv.val) {
        Some(v) if (lo..=hi).contains(&v) => Ok(v),
        Some(_) => Err(ParseError::new(
            line,
            kv.vcol,
            format!("`{}` is out of range: {}", kv.key, quote(kv.val)),
            format!("`{}` takes an integer from {lo} to {hi}", kv.key),
        )),
        None => Err(ParseError::new(
            line,
            kv.vcol,
            format!(
                "expected an integer for `{}`, found {}",
                kv.key,
                quote(kv.val)
            ),
            format!("`{}` takes an integer from {lo} to {hi}", kv.key),
        )),
    }
}

/// A `u32` value in `lo..=hi` (with `hi` at most `u32::MAX`).
pub(super) fn u32_val(line: usize, kv: &Kv<'_>, lo: u32, hi: u32) -> Result<u32, ParseError> {
    let v = uint_val(line, kv, lo.into(), hi.into())?;
    Ok(u32::try_from(v).unwrap_or(hi))
}

/// One of `choices`.
pub(super) fn choice_val<'a>(
    line: usize,
    kv: &Kv<'_>,
    choices: &[&'a str],
) -> Result<&'a str, ParseError> {
    choices
        .iter()
        .copied()
        .find(|c| *c == kv.val)
        .ok_or_else(|| {
            ParseError::new(
                line,
                kv.vcol,
                format!("unknown {} {}", kv.key, quote(kv.val)),
                with_suggestion(
                    kv.val,
                    choices,
                    format!("`{}` is one of {}", kv.key, choices.join(", ")),
                ),
            )
        })
}

/// A CPU list such as `0-3,6`: sorted, without duplicates, each below
/// [`MAX_CPUS`] (the machine's size is checked later).
pub(super) fn cpus_val(line: usize, kv: &Kv<'_>) -> Result<Vec<u32>, ParseError> {
    let hint = format!(
        "write CPU numbers and ranges separated by commas, e.g. cpus=0-3,6 \
         (CPUs are below {MAX_CPUS})"
    );
    let mut set = vec![false; MAX_CPUS as usize];
    let mut col = kv.vcol;
    for item in kv.val.split(',') {
        let bad = |msg: String| ParseError::new(line, col, msg, hint.clone());
        let num = |s: &str| {
            parse_uint(s)
                .and_then(|v| u32::try_from(v).ok())
                .filter(|&v| v < MAX_CPUS)
        };
        let (a, b) = match item.split_once('-') {
            Some((a, b)) => (num(a), num(b)),
            None => (num(item), num(item)),
        };
        match (a, b) {
            (Some(a), Some(b)) if a <= b => {
                for slot in set.iter_mut().take(b as usize + 1).skip(a as usize) {
                    *slot = true;
                }
            }
            (Some(_), Some(_)) => {
                return Err(bad(format!("CPU range {} runs backwards", quote(item))));
            }
            _ if item.is_empty() => return Err(bad("empty item in CPU list".to_string())),
            _ => return Err(bad(format!("bad CPU list item {}", quote(item)))),
        }
        col += item.chars().count() + 1;
    }
    Ok((0..MAX_CPUS).filter(|&c| set[c as usize]).collect())
}

/// Checks a task or group name: `[A-Za-z0-9_-]{1,32}`.
pub(super) fn check_name(
    line: usize,
    col: usize,
    name: &str,
    what: &str,
) -> Result<(), ParseError> {
    let hint = format!("a {what} name is 1 to {MAX_NAME} letters, digits, `_` or `-`");
    if let Some((i, _)) = name
        .chars()
        .enumerate()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(ParseError::new(
            line,
            col + i,
            // The column points at `c`; the quoted name shows it escaped.
            format!("unexpected character in {what} name {}", quote(name)),
            hint,
        ));
    }
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME {
        return Err(ParseError::new(
            line,
            col,
            format!("{what} name {} is {n} characters long", quote(name)),
            hint,
        ));
    }
    Ok(())
}
