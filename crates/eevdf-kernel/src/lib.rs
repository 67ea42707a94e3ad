//! Real-kernel mode, host side: fetch Debian kernels, build the initramfs, boot QEMU `-icount`, read the guest's report.
//!
//! The flow of `eevdf kernel run`: [`fetch`] finds the kernel image,
//! [`guest_bin`] builds the static guest runner, [`initramfs`] packs it
//! with the scenario, [`qemu`] boots it deterministically and [`run`]
//! turns the guest's report into the simulator's result shape.

#![forbid(unsafe_code)]

use std::fmt;
use std::path::Path;

pub mod calibrate;
pub mod cell;
pub mod default_ref;
pub mod fetch;
pub mod fidelity;
pub mod fidelity_run;
pub mod guest_bin;
pub mod initramfs;
pub mod kconfig;
pub mod qemu;
pub mod ref_guests;
pub mod run;
pub mod select;
pub mod steady;
pub mod sweep_line;
pub mod throughput_ref;
pub mod vm_topology;

/// A failure of real-kernel mode: what went wrong and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError {
    pub message: String,
    pub hint: String,
    /// The scenario asked for something the kernel cannot do (exit 2),
    /// rather than the run failing (exit 1).
    pub bad_input: bool,
}

impl KernelError {
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        KernelError {
            message: message.into(),
            hint: hint.into(),
            bad_input: false,
        }
    }

    /// A refusal of the input.
    pub fn refused(message: impl Into<String>, hint: impl Into<String>) -> Self {
        KernelError {
            bad_input: true,
            ..KernelError::new(message, hint)
        }
    }

    pub fn io(path: &Path, e: std::io::Error) -> Self {
        KernelError::new(
            format!("{}: {e}", path.display()),
            "check the path and its permissions",
        )
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.hint.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{} (hint: {})", self.message, self.hint)
        }
    }
}

/// Lowercase hex sha256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
