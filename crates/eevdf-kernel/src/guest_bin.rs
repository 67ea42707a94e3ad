//! The guest runner binary: `$EEVDF_GUEST`, or built from this checkout
//! (static, x86_64 gnu target, source paths remapped so the bytes do not
//! depend on where the checkout lives).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{sha256_hex, KernelError};

/// The target the guest is built for (the QEMU machine is x86_64).
pub const GUEST_TARGET: &str = "x86_64-unknown-linux-gnu";

/// The guest binary's bytes and their hash.
#[derive(Clone, Debug)]
pub struct GuestBinary {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub sha256: String,
}

/// This checkout's workspace root, if it still exists.
fn workspace() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("crates/eevdf-guest/Cargo.toml")
        .is_file()
        .then_some(root)
}

/// Finds or builds the guest binary; `log` hears about a build.
pub fn locate(log: &mut dyn FnMut(&str)) -> Result<GuestBinary, KernelError> {
    let path = match std::env::var_os("EEVDF_GUEST") {
        Some(p) => PathBuf::from(p),
        None => build(log)?,
    };
    let bytes = std::fs::read(&path).map_err(|e| KernelError::io(&path, e))?;
    if !bytes.starts_with(b"\x7fELF") {
        return Err(KernelError::new(
            format!("{} is not an ELF binary", path.display()),
            "set EEVDF_GUEST to the static eevdf-guest binary, or unset it",
        ));
    }
    let sha256 = sha256_hex(&bytes);
    Ok(GuestBinary {
        path,
        bytes,
        sha256,
    })
}

/// `cargo build --release` of the guest (a no-op when it is up to date).
fn build(log: &mut dyn FnMut(&str)) -> Result<PathBuf, KernelError> {
    let Some(root) = workspace() else {
        return Err(KernelError::new(
            "no guest runner: this eevdf was built outside its checkout",
            "set EEVDF_GUEST to a static eevdf-guest binary (make guest builds one)",
        ));
    };
    let root = root.canonicalize().map_err(|e| KernelError::io(&root, e))?;
    let home = std::env::var("CARGO_HOME")
        .or_else(|_| std::env::var("HOME").map(|h| format!("{h}/.cargo")))
        .unwrap_or_default();
    let mut flags = format!(
        "-C target-feature=+crt-static --cfg eevdf_guest --remap-path-prefix={}=/eevdf",
        root.display()
    );
    if !home.is_empty() {
        flags.push_str(&format!(" --remap-path-prefix={home}=/cargo"));
    }
    log("building the guest runner (static, release)");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "--release", "--locked", "-q", "-p", "eevdf-guest"])
        .args(["--target", GUEST_TARGET])
        .env("RUSTFLAGS", flags)
        .output()
        .map_err(|e| KernelError::new(format!("cannot run cargo: {e}"), "install Rust (rustup)"))?;
    if !out.status.success() {
        return Err(KernelError::new(
            format!(
                "building eevdf-guest failed:\n{}",
                crate::qemu::tail(&String::from_utf8_lossy(&out.stderr), 20)
            ),
            "run `make guest` to see the whole build",
        ));
    }
    Ok(root
        .join("target")
        .join(GUEST_TARGET)
        .join("release/eevdf-guest"))
}
