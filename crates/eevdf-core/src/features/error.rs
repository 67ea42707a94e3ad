//! Why a token was rejected ([`FeatureError`]) or skipped in a pasted
//! line ([`FeatureWarning`]), and the spelling hint for unknown names.

use std::fmt;

use super::table::{lookup, Known};
use super::{feature_info, FeatureInfo, FeatureKind, ALIASES, FEATURES};

/// Why a token was rejected. The [`fmt::Display`] text carries a hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FeatureError {
    /// No such name; `suggestion` is the closest known name (without `NO_`).
    Unknown {
        name: String,
        suggestion: Option<&'static str>,
    },
    /// `NAME=VALUE` with a value the enum does not have.
    BadValue {
        name: &'static str,
        value: String,
        expected: &'static [&'static str],
    },
    /// An enum written without `=VALUE`.
    MissingValue { name: &'static str },
    /// `NAME=VALUE` on a boolean (or an alias).
    UnexpectedValue { name: String },
    /// `NO_NAME` on an enum.
    NoPrefixOnEnum { name: &'static str },
}

impl fmt::Display for FeatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = |name: &str| match feature_info(name).map(|i| i.kind) {
            Some(FeatureKind::Enum(v)) => v.join(", "),
            _ => String::new(),
        };
        match self {
            FeatureError::Unknown { name, suggestion } => {
                write!(f, "unknown sched feature `{name}`")?;
                if let Some(s) = suggestion {
                    let no = has_no_prefix(name) && matches!(lookup(s), Some(k) if !is_enum(k));
                    write!(f, "; did you mean {}{s}?", if no { "NO_" } else { "" })?;
                }
                Ok(())
            }
            FeatureError::BadValue { name, value, expected } => write!(
                f,
                "`{value}` is not a value of {name}; expected one of {}",
                expected.join(", ")
            ),
            FeatureError::MissingValue { name } => write!(
                f,
                "{name} needs a value: write {name}=VALUE with VALUE one of {}",
                values(name)
            ),
            FeatureError::UnexpectedValue { name } => {
                let base = name.strip_prefix("NO_").filter(|b| lookup(b).is_some()).unwrap_or(name);
                write!(f, "{name} is a boolean and takes no value; write {base} or NO_{base}")
            }
            FeatureError::NoPrefixOnEnum { name } => write!(
                f,
                "{name} is not a boolean, so NO_{name} is not allowed; write {name}=VALUE with VALUE one of {}",
                values(name)
            ),
        }
    }
}

impl std::error::Error for FeatureError {}

/// A token of a pasted debugfs line that was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureWarning {
    /// The token as pasted.
    pub token: String,
    /// Why it was skipped (the [`FeatureError`] text).
    pub message: String,
}

impl fmt::Display for FeatureWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ignored `{}`: {}", self.token, self.message)
    }
}

fn is_enum(k: Known) -> bool {
    matches!(
        k,
        Known::Feature(FeatureInfo {
            kind: FeatureKind::Enum(_),
            ..
        })
    )
}

fn has_no_prefix(name: &str) -> bool {
    name.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("NO_"))
}

/// Levenshtein distance over ASCII-uppercased bytes.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(!ca.eq_ignore_ascii_case(&cb));
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known name (or alias) closest to `name`, ignoring case and a `NO_`
/// prefix, if it is close enough to be a plausible typo.
pub(super) fn suggest(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.len() > 64 {
        return None;
    }
    let stripped = if has_no_prefix(name) {
        Some(&name[3..])
    } else {
        None
    };
    let candidates = FEATURES
        .iter()
        .map(|i| i.name)
        .chain(ALIASES.iter().map(|a| a.name));
    candidates
        .map(|c| {
            let d = stripped.map_or(usize::MAX, |s| edit_distance(s, c));
            (d.min(edit_distance(name, c)), c)
        })
        .filter(|&(d, c)| d <= (c.len() / 4).max(2))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}
