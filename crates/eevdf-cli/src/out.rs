//! Standard output for a tool people pipe into `head`: a reader that
//! closes the pipe has what it wanted, so that ends the program quietly
//! with exit 0; any other failed write is a failed run (exit 1). Rust
//! ignores SIGPIPE, and `print!` panics on the EPIPE that follows.

use std::io::{self, Write};

/// Writes `text` to standard output and flushes it.
pub fn write(text: &str) {
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        gone(&e);
    }
}

fn gone(e: &io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    errln!("error: writing to standard output: {e}");
    std::process::exit(1);
}

/// Writes `text` to standard error. A closed standard error leaves
/// nobody to tell, so a failed write is dropped, where `eprintln!`
/// would panic.
pub fn write_err(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// `print!` that ends quietly on a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(&format!($($arg)*)) };
}

/// `println!` that ends quietly on a closed pipe.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::out::write(&format!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!` that never panics on a closed standard error.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::out::write_err(&format!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {errln, out, outln};
