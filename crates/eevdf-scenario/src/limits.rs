//! Every input size limit, in one place, and the bounded readers that
//! enforce them. Inputs come from strangers (a mail, a link, a pasted
//! file) and from paths that may be pipes or devices (`<(yes)`,
//! `/dev/zero`), whose metadata length is 0: nothing trusts a length it
//! was told. A reader takes at most `limit + 1` bytes and says "too large"
//! when it got more, never a truncated success.
//!
//! | Input | Limit |
//! |---|---|
//! | a file or stdin holding a scenario, a mail paste or a link | [`SCENARIO_BYTES`] |
//! | scenario text itself (after the paste's prose is dropped) | [`crate::scenario::MAX_BYTES`] |
//! | a share link's fragment | [`LINK_FRAGMENT_BYTES`] |
//! | an rt-app JSON file | [`RTAPP_BYTES`] |
//! | a debugfs paste | [`DEBUGFS_BYTES`] |
//! | a features line | [`FEATURES_BYTES`] |
//! | an ftrace text trace: one line / the whole stream | [`TRACE_LINE_BYTES`] / [`TRACE_BYTES`] |
//! | the part of a trace that must show a sched event | [`TRACE_PROBE_BYTES`] |

use std::fmt;
use std::io::{self, BufRead, Read};

use crate::ParseError;

/// A file or stdin read as a scenario: a mail paste may wrap the
/// scenario block in prose and quoting, so this is above the text's own
/// [`crate::scenario::MAX_BYTES`].
pub const SCENARIO_BYTES: u64 = 1 << 20;
/// A share link's fragment (browsers allow about 2 MB).
pub const LINK_FRAGMENT_BYTES: usize = 256 * 1024;
/// An rt-app JSON file (the seeds' are under 1 KiB).
pub const RTAPP_BYTES: u64 = 1 << 20;
/// A paste of `/sys/kernel/debug/sched/`: a features line and tunables.
pub const DEBUGFS_BYTES: u64 = 64 << 10;
/// A features line (a real one is under 1 KiB).
pub const FEATURES_BYTES: u64 = 16 << 10;
/// One line of an ftrace text trace (real ones are under 300 bytes).
pub const TRACE_LINE_BYTES: usize = 64 << 10;
/// A whole trace, streamed: traces run to hundreds of MB, and this bounds
/// the work an endless stream of valid lines can cause.
pub const TRACE_BYTES: u64 = 4 << 30;
/// A trace with no sched event in its first this many bytes is not one
/// (`<(yes)`): an error long before [`TRACE_BYTES`].
pub const TRACE_PROBE_BYTES: u64 = 16 << 20;

/// Why a bounded read failed.
#[derive(Debug)]
pub enum ReadError {
    /// More than `limit` bytes.
    TooLarge { limit: u64, hint: &'static str },
    /// The operating system's error (no such file, a directory, ...).
    Io(io::Error),
    /// Not text, or a line over its limit, or the format's own error.
    Parse(ParseError),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::TooLarge { limit, hint } => {
                write!(f, "too large (limit {limit} bytes) (hint: {hint})")
            }
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::Parse(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<ParseError> for ReadError {
    fn from(e: ParseError) -> Self {
        ReadError::Parse(e)
    }
}

/// Reads all of `r` as UTF-8 text of at most `limit` bytes.
pub fn read_text(r: impl Read, limit: u64, hint: &'static str) -> Result<String, ReadError> {
    let mut buf = Vec::new();
    r.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(ReadError::Io)?;
    if buf.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit, hint });
    }
    String::from_utf8(buf).map_err(|e| {
        let bytes = e.as_bytes();
        let valid = e.utf8_error().valid_up_to();
        ReadError::Parse(not_utf8(&bytes[..valid], 1))
    })
}

/// The error for bytes that stop being UTF-8 after `valid` (which
/// starts on line `first_line`).
fn not_utf8(valid: &[u8], first_line: usize) -> ParseError {
    // `valid` is UTF-8 up to here by construction.
    let text = std::str::from_utf8(valid).unwrap_or_default();
    let line = first_line + text.matches('\n').count();
    let column = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    ParseError::new(
        line,
        column,
        "not UTF-8 text",
        "this reads text; is the file binary (a trace.dat, a compressed file)?",
    )
}

/// Lines of a stream, each at most `max_line` bytes, the whole at most
/// `max_total`; `\n` or `\r\n` ends a line. Memory is one line.
#[derive(Debug)]
pub struct BoundedLines<R> {
    r: R,
    max_line: usize,
    max_total: u64,
    total: u64,
    line: usize,
    buf: Vec<u8>,
    hint: &'static str,
}

impl<R: BufRead> BoundedLines<R> {
    pub fn new(r: R, max_line: usize, max_total: u64, hint: &'static str) -> Self {
        BoundedLines {
            r,
            max_line,
            max_total,
            total: 0,
            line: 0,
            buf: Vec::new(),
            hint,
        }
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.total
    }

    /// The next line and its 1-based number, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(usize, &str)>, ReadError> {
        self.buf.clear();
        let cap = self.max_line as u64 + 2; // the line, `\r`, `\n`
        let n = (&mut self.r)
            .take(cap)
            .read_until(b'\n', &mut self.buf)
            .map_err(ReadError::Io)?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        self.total += n as u64;
        if self.total > self.max_total {
            let (limit, hint) = (self.max_total, self.hint);
            return Err(ReadError::TooLarge { limit, hint });
        }
        let mut body = self.buf.as_slice();
        body = body.strip_suffix(b"\n").unwrap_or(body);
        body = body.strip_suffix(b"\r").unwrap_or(body);
        if body.len() > self.max_line {
            return Err(ReadError::Parse(ParseError::new(
                self.line,
                1,
                format!("line is over {} bytes", self.max_line),
                "this reads text lines; is the file binary or cut badly?",
            )));
        }
        match std::str::from_utf8(body) {
            Ok(s) => Ok(Some((self.line, s))),
            Err(e) => Err(ReadError::Parse(not_utf8(
                &body[..e.valid_up_to()],
                self.line,
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_no_further() {
        assert_eq!(read_text(&b"abcd"[..], 4, "h").unwrap(), "abcd");
        let e = read_text(io::repeat(b'y'), 4, "h").unwrap_err();
        assert_eq!(e.to_string(), "too large (limit 4 bytes) (hint: h)");
        let e = read_text(&b"ok\nn\xc3\xa9\xff"[..], 99, "h").unwrap_err();
        let ReadError::Parse(p) = e else {
            panic!("{e}")
        };
        assert_eq!((p.line, p.column), (2, 3));
    }

    #[test]
    fn lines_are_capped_and_positioned() {
        let mut l = BoundedLines::new(&b"a\r\nbb\n\ncccc\n"[..], 3, 100, "h");
        assert_eq!(l.next_line().unwrap(), Some((1, "a")));
        assert_eq!(l.next_line().unwrap(), Some((2, "bb")));
        assert_eq!(l.next_line().unwrap(), Some((3, "")));
        let Err(ReadError::Parse(e)) = l.next_line() else {
            panic!("line 4 is too long")
        };
        assert_eq!((e.line, e.column), (4, 1));
        // Exactly the limit is fine, with or without a newline.
        let mut l = BoundedLines::new(&b"abc\r\nabc"[..], 3, 100, "h");
        assert_eq!(l.next_line().unwrap(), Some((1, "abc")));
        assert_eq!(l.next_line().unwrap(), Some((2, "abc")));
        assert_eq!(l.next_line().unwrap(), None);
        // An endless stream of short lines ends at the total.
        let endless = io::BufReader::new(io::repeat(b'\n'));
        let mut l = BoundedLines::new(endless, 3, 1000, "h");
        let mut n = 0;
        let end = loop {
            match l.next_line() {
                Ok(Some(_)) => n += 1,
                other => break other,
            }
        };
        assert!(matches!(end, Err(ReadError::TooLarge { limit: 1000, .. })));
        assert_eq!(n, 1000);
    }
}
