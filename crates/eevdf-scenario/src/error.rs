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
    pub fn new(
        line: usize,
        column: usize,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        ParseError {
            line,
            column,
            message: message.into(),
            hint: hint.into(),
        }
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
