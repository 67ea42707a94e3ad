//! [`FeatureSet`]: a profile plus the tokens applied over it, with its
//! canonical token list and its debugfs line.

use super::effective::bool_slot;
use super::error::suggest;
use super::table::{kernel_features_h, lookup, Known};
use super::{FeatureError, FeatureKind, FeatureWarning, Features, Profile, Status, FEATURES};

/// What [`FeatureSet::apply`] did with a valid token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Applied {
    /// The token changed (or confirmed) a modelled value.
    Modelled,
    /// Accepted and kept, but nothing models it.
    NotModelled,
}

/// A profile plus the tokens applied over it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureSet {
    /// The base profile.
    pub profile: Profile,
    /// The effective values. Direct edits here are not re-based by
    /// [`FeatureSet::set_profile`]; use [`FeatureSet::apply`].
    pub features: Features,
    /// Known-but-not-modelled names with their value; last write wins,
    /// kept in first-seen order.
    pub not_modelled: Vec<(String, bool)>,
    /// Every successfully applied token, in order (replayed on re-base).
    tokens: Vec<String>,
}

impl Default for FeatureSet {
    fn default() -> Self {
        FeatureSet::new(Profile::default())
    }
}

impl FeatureSet {
    /// The profile's defaults, no tokens.
    pub fn new(profile: Profile) -> Self {
        FeatureSet {
            profile,
            features: Features::for_profile(profile),
            not_modelled: Vec::new(),
            tokens: Vec::new(),
        }
    }

    /// Every token applied so far, in order.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Applies one token: `"NAME"`, `"NO_NAME"` or `"NAME=VALUE"`.
    /// Case-sensitive names (`SCHED_FEAT` spelling), case-insensitive enum
    /// values. On error nothing changes.
    pub fn apply(&mut self, token: &str) -> Result<Applied, FeatureError> {
        let applied = self.apply_unrecorded(token)?;
        self.tokens.push(token.trim().to_string());
        Ok(applied)
    }

    fn apply_unrecorded(&mut self, token: &str) -> Result<Applied, FeatureError> {
        let token = token.trim();
        let (name, value) = match token.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (token, None),
        };
        let (known, on) = match lookup(name) {
            Some(k) => (k, true),
            None => match name.strip_prefix("NO_").and_then(lookup) {
                Some(k) => (k, false),
                None => {
                    let suggestion = suggest(name);
                    return Err(FeatureError::Unknown {
                        name: name.to_string(),
                        suggestion,
                    });
                }
            },
        };
        let info = match known {
            Known::Alias(a) => {
                if value.is_some() {
                    return Err(FeatureError::UnexpectedValue {
                        name: name.to_string(),
                    });
                }
                if on {
                    self.features.set_enum(a.target, a.value);
                } else if self.features.get_enum(a.target) == Some(a.value) {
                    self.features.set_enum(a.target, "MAINLINE");
                }
                return Ok(Applied::Modelled);
            }
            Known::Feature(info) => info,
        };
        match (info.kind, value) {
            (FeatureKind::Enum(_), _) if !on => {
                Err(FeatureError::NoPrefixOnEnum { name: info.name })
            }
            (FeatureKind::Enum(_), None | Some("")) => {
                Err(FeatureError::MissingValue { name: info.name })
            }
            (FeatureKind::Enum(expected), Some(v)) => match self.features.set_enum(info.name, v) {
                Some(()) => Ok(Applied::Modelled),
                None => Err(FeatureError::BadValue {
                    name: info.name,
                    value: v.to_string(),
                    expected,
                }),
            },
            (FeatureKind::Bool, Some(_)) => Err(FeatureError::UnexpectedValue {
                name: name.to_string(),
            }),
            (FeatureKind::Bool, None) if info.status == Status::NotModelled => {
                match self.not_modelled.iter_mut().find(|(n, _)| n == info.name) {
                    Some(entry) => entry.1 = on,
                    None => self.not_modelled.push((info.name.to_string(), on)),
                }
                Ok(Applied::NotModelled)
            }
            (FeatureKind::Bool, None) => {
                if let Some(slot) = bool_slot(&mut self.features, info.name) {
                    *slot = on;
                }
                Ok(Applied::Modelled)
            }
        }
    }

    /// Changes the profile and re-bases: every token applied so far is
    /// replayed, in order, over the new profile's defaults.
    pub fn set_profile(&mut self, p: Profile) {
        let tokens = std::mem::take(&mut self.tokens);
        *self = FeatureSet::new(p);
        for t in &tokens {
            // Every recorded token was valid, and validity does not depend
            // on the profile.
            let _ = self.apply_unrecorded(t);
        }
        self.tokens = tokens;
    }

    /// The shortest token list reproducing this set over its profile: the
    /// differences from the profile defaults in [`FEATURES`] order
    /// (booleans as `NAME`/`NO_NAME`, enums as `NAME=VALUE`, never
    /// aliases), then the not-modelled names as given.
    pub fn canonical_tokens(&self) -> Vec<String> {
        let (cur, base) = (&self.features, Features::for_profile(self.profile));
        let mut out = Vec::new();
        for info in FEATURES.iter().filter(|i| i.status != Status::NotModelled) {
            match info.kind {
                FeatureKind::Bool => {
                    if let Some(on) = cur
                        .get_bool(info.name)
                        .filter(|&v| Some(v) != base.get_bool(info.name))
                    {
                        out.push(bool_token(info.name, on));
                    }
                }
                FeatureKind::Enum(_) => {
                    if let Some(v) = cur
                        .get_enum(info.name)
                        .filter(|&v| Some(v) != base.get_enum(info.name))
                    {
                        out.push(format!("{}={v}", info.name));
                    }
                }
            }
        }
        out.extend(self.not_modelled.iter().map(|(n, on)| bool_token(n, *on)));
        out
    }

    /// The `/sys/kernel/debug/sched/features` line of this configuration:
    /// the kernel's `features.h` names in order, modelled ones from
    /// [`Features`], the others from the user's tokens or their kernel
    /// default; each token followed by one space (formats.md §5).
    pub fn debugfs_line(&self) -> String {
        let mut line = String::new();
        for (name, default) in kernel_features_h() {
            let on = self
                .features
                .get_bool(name)
                .or_else(|| {
                    self.not_modelled
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|e| e.1)
                })
                .unwrap_or(default);
            line.push_str(&bool_token(name, on));
            line.push(' ');
        }
        line
    }

    /// Applies a pasted debugfs line or list (tokens separated by
    /// whitespace or commas). Invalid tokens, e.g. names of another
    /// kernel version, are skipped with a warning; the removed CFS-era
    /// names are accepted as not modelled.
    pub fn apply_debugfs_line(&mut self, line: &str) -> Vec<FeatureWarning> {
        self.apply_debugfs_line_noting(line).0
    }

    /// [`apply_debugfs_line`](Self::apply_debugfs_line), also returning
    /// the tokens accepted but not modelled ([`Applied::NotModelled`]),
    /// as written, so a paste can say which of its tokens do nothing.
    pub fn apply_debugfs_line_noting(&mut self, line: &str) -> (Vec<FeatureWarning>, Vec<String>) {
        let mut warnings = Vec::new();
        let mut not_modelled = Vec::new();
        for t in line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
        {
            match self.apply(t) {
                Ok(Applied::NotModelled) => not_modelled.push(t.to_string()),
                Ok(Applied::Modelled) => {}
                Err(e) => warnings.push(FeatureWarning {
                    token: t.to_string(),
                    message: e.to_string(),
                }),
            }
        }
        (warnings, not_modelled)
    }
}

fn bool_token(name: &str, on: bool) -> String {
    if on {
        name.to_string()
    } else {
        format!("NO_{name}")
    }
}
