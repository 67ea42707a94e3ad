//! `--kernel SERIES|PATH`: a fetched Debian kernel (fetched now when the
//! cache has none) or any bzImage, with its config checked.

use std::path::Path;

use crate::fetch::{self, KernelImage};
use crate::run::Image;
use crate::{kconfig, KernelError};

/// Whether `spec` names a series (`7.2`) rather than a path.
pub fn is_series(spec: &str) -> bool {
    let mut parts = spec.split('.');
    let num =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    num(parts.next()) && num(parts.next()) && parts.next().is_none()
}

/// The image to boot for `--kernel spec`.
pub fn image(
    spec: &str,
    config: Option<&Path>,
    log: &mut dyn FnMut(&str),
) -> Result<Image, KernelError> {
    let img = if is_series(spec) {
        match fetch::cached(spec) {
            Some(img) => img,
            None => {
                log(&format!("no {spec} kernel in the cache; fetching it"));
                fetch::fetch(spec, log)?
            }
        }
    } else {
        fetch::from_path(Path::new(spec), config).map_err(|e| KernelError {
            bad_input: true,
            ..e.into()
        })?
    };
    to_image(&img, log)
}

fn to_image(img: &KernelImage, log: &mut dyn FnMut(&str)) -> Result<Image, KernelError> {
    let mut hz = None;
    match &img.config {
        Some(path) => {
            let text = kconfig::read_config(path).map_err(|e| KernelError::io(path, e))?;
            match kconfig::check(&text) {
                Ok(cfg) => hz = cfg.hz,
                Err(missing) => {
                    let list: Vec<String> = missing.iter().map(|m| m.to_string()).collect();
                    return Err(KernelError::refused(
                        format!(
                            "{} lacks what the guest runner needs:\n  {}",
                            img.release,
                            list.join("\n  ")
                        ),
                        "build the kernel with these options =y",
                    ));
                }
            }
        }
        None => log(&format!(
            "{}: no config found beside the image; not checked (give --kernel-config)",
            img.release
        )),
    }
    Ok(Image {
        vmlinuz: img.vmlinuz.clone(),
        release: img.release.clone(),
        package: img.package.clone(),
        package_version: img.package_version.clone(),
        sha256: img.vmlinuz_sha256.clone(),
        hz,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_and_paths_are_told_apart() {
        assert!(is_series("7.2") && is_series("6.12"));
        for p in ["7", "7.2.13", "./7.2", "/boot/vmlinuz", "7.x", ".2"] {
            assert!(!is_series(p), "{p}");
        }
    }
}
