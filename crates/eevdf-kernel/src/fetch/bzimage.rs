//! `--kernel PATH`: a bzImage named by the version string in its x86
//! boot header, and its config beside it.

use super::*;

/// Reads of a bzImage header never look past this (the setup code, where
/// the version string lives, is at most 0x200 + 0xffff bytes in).
pub(super) const HEADER_READ: usize = 0x200 + 0x1_0000 + 0x100;

/// The kernel release in an x86 bzImage's boot header (the first word of
/// the string the setup header's `kernel_version` field points to:
/// offset 0x20E, relative to 0x200; Documentation/arch/x86/boot.rst).
pub fn bzimage_release(header: &[u8]) -> Result<String, String> {
    let u16_at = |o: usize| {
        header
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    if header.len() >= 4 && header[..4] == *b"\x7fELF" {
        return Err("this is an ELF file (vmlinux), not a bzImage".into());
    }
    if u16_at(0x1FE) != Some(0xAA55) || header.get(0x202..0x206) != Some(b"HdrS") {
        return Err("no x86 boot header (boot flag 0xAA55 and \"HdrS\" magic)".into());
    }
    let protocol = u16_at(0x206).unwrap_or(0);
    if protocol < 0x0200 {
        return Err(format!(
            "boot protocol {protocol:#06x} predates kernel_version"
        ));
    }
    let ptr = u16_at(0x20E).unwrap_or(0);
    if ptr == 0 {
        return Err("the boot header has no kernel_version string".into());
    }
    let start = usize::from(ptr) + 0x200;
    let tail = header
        .get(start..)
        .ok_or("kernel_version points past the end of the file")?;
    let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
    let s = std::str::from_utf8(&tail[..end.min(512)])
        .map_err(|_| "the kernel_version string is not text")?;
    let release = s.split_whitespace().next().unwrap_or("");
    if release.is_empty() || !release.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the kernel_version string is empty or unprintable".into());
    }
    Ok(release.to_string())
}

pub(super) fn bzimage_release_file(path: &Path) -> Result<String, FetchError> {
    let mut head = Vec::with_capacity(HEADER_READ);
    fs::File::open(path)
        .and_then(|f| f.take(HEADER_READ as u64).read_to_end(&mut head))
        .map_err(|e| FetchError::io("reading", path, e))?;
    bzimage_release(&head).map_err(|why| {
        FetchError::new(
            format!("{}: {why}", path.display()),
            "pass an x86 bzImage (arch/x86/boot/bzImage or /boot/vmlinuz-*)",
        )
    })
}

/// A local bzImage for `--kernel PATH`: release from its boot header,
/// sha256 of the file, and the config `config` or else the first of
/// `config-<release>`, `config`, `.config` beside the image (or the
/// build tree's `.config` for `arch/x86/boot/bzImage`); `None` if there
/// is none (a compressed bzImage's IKCONFIG cannot be read).
pub fn from_path(path: &Path, config: Option<&Path>) -> Result<KernelImage, FetchError> {
    let vmlinuz = fs::canonicalize(path).map_err(|e| FetchError::io("opening", path, e))?;
    if !vmlinuz.is_file() {
        return Err(FetchError::new(
            format!("{} is not a file", path.display()),
            "pass the kernel image (bzImage), not a directory",
        ));
    }
    let release = bzimage_release_file(&vmlinuz)?;
    let vmlinuz_sha256 =
        sha256_file(&vmlinuz).map_err(|e| FetchError::io("reading", &vmlinuz, e))?;
    let config = match config {
        Some(c) => {
            if !c.is_file() {
                return Err(FetchError::new(
                    format!("kernel config {} does not exist", c.display()),
                    "pass the .config the image was built with",
                ));
            }
            Some(fs::canonicalize(c).map_err(|e| FetchError::io("opening", c, e))?)
        }
        None => config_beside(&vmlinuz, &release),
    };
    Ok(KernelImage {
        series: series_of(&release).unwrap_or_default(),
        release,
        package: String::new(),
        package_version: String::new(),
        suite: String::new(),
        deb_sha256: String::new(),
        vmlinuz,
        vmlinuz_sha256,
        config,
    })
}

pub(super) fn config_beside(vmlinuz: &Path, release: &str) -> Option<PathBuf> {
    let dir = vmlinuz.parent()?;
    let mut tries = vec![
        dir.join(format!("config-{release}")),
        dir.join("config"),
        dir.join(".config"),
    ];
    // <tree>/arch/x86/boot/bzImage → <tree>/.config
    if dir.ends_with("arch/x86/boot") || dir.ends_with("arch/x86_64/boot") {
        if let Some(tree) = dir.parent().and_then(Path::parent).and_then(Path::parent) {
            tries.push(tree.join(".config"));
        }
    }
    tries.into_iter().find(|p| p.is_file())
}
