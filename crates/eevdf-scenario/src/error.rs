//! The one error type every parser in this crate returns.

use std::fmt;

/// A parse failure at a 1-based line and column (columns count chars).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// What the user can do about it.
    pub hint: String,
}

impl ParseError {
    /// Escapes control characters in `message` and `hint` here, once for
    /// every parser: an echoed token can never act on the terminal or
    /// page that shows the error, even where a message forgot `shown`.
    /// (Already escaped text is unchanged: escapes are printable.)
    pub fn new(
        line: usize,
        column: usize,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        ParseError {
            line,
            column,
            message: escape_controls(message.into()),
            hint: escape_controls(hint.into()),
        }
    }
}

fn escape_controls(s: String) -> String {
    if s.chars().any(crate::display::is_hostile) {
        crate::display::escape_controls(&s)
    } else {
        s
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)?;
        if !self.hint.is_empty() {
            write!(f, " (hint: {})", self.hint)?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;

    #[test]
    fn echoed_control_characters_are_escaped() {
        // The fuzz smoke's find: the kernel name was echoed raw.
        let e = Scenario::parse("eevdf-scenario v1\nkernel v7\u{1}\u{1b}[2J\nend\n").unwrap_err();
        let shown = e.to_string();
        assert!(!shown.chars().any(crate::display::is_hostile), "{shown:?}");
        assert!(shown.contains("\\x01"), "{shown}");
    }
}
