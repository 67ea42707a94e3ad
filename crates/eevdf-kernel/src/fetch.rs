//! Debian's packaged kernels: find the newest cloud-amd64 image of a
//! series, download it with `apt-get download` through a private apt
//! configuration (the machine's own sources and lists stay untouched),
//! check it, and keep `vmlinuz` + `config` in a cache:
//!
//! ```text
//! <cache_root()>/
//!   apt/<suite>/{sources.list,status,lists/,cache/,download/}
//!   kernels/<release>/{vmlinuz,config,kernel.json}
//! ```
//!
//! Also [`from_path`] for `--kernel PATH`: any bzImage, e.g. a patch
//! author's own build, identified by the version string in its x86 boot
//! header.

use std::cmp::Ordering;
use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

mod apt;
mod bzimage;
mod versions;

use apt::*;
use bzimage::*;

pub use apt::{
    debian_mirror, mirror_from_deb822, mirror_from_sources_list, parse_package_name, series_of,
    sources_list, PackageName,
};
pub use bzimage::{bzimage_release, from_path};
pub use versions::compare_debian_versions;

/// The kernel series real-kernel mode supports and the Debian suites
/// that carry their cloud-amd64 images, searched together (the highest
/// Debian version wins; on a tie the earlier suite).
pub const SERIES: &[(&str, &[&str])] = &[
    ("7.2", &["sid", "trixie-backports"]),
    ("6.18", &["trixie-backports"]),
    ("6.17", &["trixie-backports"]),
    ("6.16", &["trixie-backports"]),
    ("6.12", &["bookworm-backports"]),
];

/// The keyring every private sources entry is `signed-by`.
pub const DEBIAN_KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// The mirror when the machine's apt configuration names none.
pub const DEFAULT_MIRROR: &str = "http://deb.debian.org/debian";

/// The only flavour fetched: small, virtio drivers built in, boots under QEMU.
const FLAVOUR: &str = "cloud-amd64";

/// A real kernel image package installs at least this much (KiB); the
/// `linux-image-*` packages of the 7.x series are meta packages of ~15 KiB.
const MIN_IMAGE_INSTALLED_KIB: u64 = 4096;

/// The supported series, newest first.
pub fn supported_series() -> impl Iterator<Item = &'static str> {
    SERIES.iter().map(|(s, _)| *s)
}

/// The suites searched for `series`, or `None` for an unsupported one.
pub fn suites_for(series: &str) -> Option<&'static [&'static str]> {
    SERIES.iter().find(|(s, _)| *s == series).map(|(_, v)| *v)
}

/// A kernel to boot: a cached Debian image or a local bzImage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelImage {
    /// `uname -r`, e.g. `7.2.13+deb14-cloud-amd64`.
    pub release: String,
    /// `7.2`; for a local image the first two numbers of the release
    /// (empty if it has none).
    pub series: String,
    /// Debian binary package, e.g. `linux-binary-7.2.13+deb14-cloud-amd64`;
    /// empty for a local image, like `package_version`, `suite` and `deb_sha256`.
    pub package: String,
    /// The package's Debian version, e.g. `7.2.13-1`.
    pub package_version: String,
    /// The suite it came from, e.g. `sid`.
    pub suite: String,
    /// sha256 of the `.deb` (checked against the signed index).
    pub deb_sha256: String,
    pub vmlinuz: PathBuf,
    pub vmlinuz_sha256: String,
    pub config: Option<PathBuf>,
}

/// A failure to get a kernel: what went wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchError {
    pub message: String,
    pub hint: String,
}

impl FetchError {
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        FetchError {
            message: message.into(),
            hint: hint.into(),
        }
    }

    fn io(what: &str, path: &Path, e: io::Error) -> Self {
        FetchError::new(
            format!("{what} {}: {e}", path.display()),
            "check the path, its permissions and free disk space (or set EEVDF_CACHE)",
        )
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.hint.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{} (hint: {})", self.message, self.hint)
        }
    }
}

impl std::error::Error for FetchError {}

impl From<FetchError> for crate::KernelError {
    fn from(e: FetchError) -> Self {
        crate::KernelError::new(e.message, e.hint)
    }
}

// ---------------------------------------------------------------- cache

/// `$EEVDF_CACHE`, else `$XDG_CACHE_HOME/eevdf`, else `~/.cache/eevdf`.
pub fn cache_root() -> PathBuf {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var("EEVDF_CACHE") {
        return PathBuf::from(p);
    }
    if let Some(p) = var("XDG_CACHE_HOME").map(PathBuf::from) {
        if p.is_absolute() {
            return p.join("eevdf");
        }
    }
    match var("HOME") {
        Some(h) => PathBuf::from(h).join(".cache").join("eevdf"),
        None => std::env::temp_dir().join("eevdf-cache"),
    }
}

/// What `kernels/<release>/kernel.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    release: String,
    series: String,
    suite: String,
    package: String,
    package_version: String,
    deb_sha256: String,
    vmlinuz_sha256: String,
    #[serde(default)]
    config_sha256: Option<String>,
    /// Where the config came from when not from `package` (7.x: `linux-base-<release>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config_package: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config_package_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config_deb_sha256: Option<String>,
}

fn kernels_dir(root: &Path) -> PathBuf {
    root.join("kernels")
}

/// The cached image in `dir`, if complete and intact (the vmlinuz is
/// re-hashed: a truncated or replaced file is not a cached kernel).
fn load_cached(dir: &Path) -> Option<KernelImage> {
    let text = fs::read_to_string(dir.join("kernel.json")).ok()?;
    let rec: Record = serde_json::from_str(&text).ok()?;
    let vmlinuz = dir.join("vmlinuz");
    if sha256_file(&vmlinuz).ok()? != rec.vmlinuz_sha256 {
        return None;
    }
    let config = dir.join("config");
    Some(KernelImage {
        release: rec.release,
        series: rec.series,
        package: rec.package,
        package_version: rec.package_version,
        suite: rec.suite,
        deb_sha256: rec.deb_sha256,
        vmlinuz,
        vmlinuz_sha256: rec.vmlinuz_sha256,
        config: config.is_file().then_some(config),
    })
}

/// Every intact cached kernel under `root`, newest Debian version first.
pub fn list_cached_in(root: &Path) -> Vec<KernelImage> {
    let mut out: Vec<KernelImage> = match fs::read_dir(kernels_dir(root)) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .filter_map(|e| load_cached(&e.path()))
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort_by(|a, b| {
        compare_debian_versions(&b.package_version, &a.package_version)
            .then_with(|| b.release.cmp(&a.release))
    });
    out
}

/// Every intact cached kernel, newest first.
pub fn list_cached() -> Vec<KernelImage> {
    list_cached_in(&cache_root())
}

/// The newest cached release of `series` under `root` (no network).
pub fn cached_in(root: &Path, series: &str) -> Option<KernelImage> {
    list_cached_in(root)
        .into_iter()
        .find(|k| k.series == series)
}

/// The newest cached release of `series` (no network).
pub fn cached(series: &str) -> Option<KernelImage> {
    cached_in(&cache_root(), series)
}

// ---------------------------------------------------------------- fetch

/// Fetches the newest Debian cloud-amd64 kernel of `series` into the
/// default cache; see [`fetch_in`].
pub fn fetch(series: &str, log: &mut dyn FnMut(&str)) -> Result<KernelImage, FetchError> {
    fetch_in(&cache_root(), series, log)
}

/// Fetches the newest Debian cloud-amd64 kernel of `series` into the
/// cache at `root`: refreshes the private package lists, picks the
/// highest Debian version, and unless that exact package is already
/// cached downloads it, checks its sha256 against the index, extracts
/// `vmlinuz` and `config` and installs them atomically. Says through
/// `log` what it does and exactly which version it got.
pub fn fetch_in(
    root: &Path,
    series: &str,
    log: &mut dyn FnMut(&str),
) -> Result<KernelImage, FetchError> {
    let suites = suites_for(series).ok_or_else(|| {
        FetchError::new(
            format!("unsupported kernel series {series:?}"),
            format!(
                "use one of {} (or --kernel PATH for your own bzImage)",
                supported_series().collect::<Vec<_>>().join(", ")
            ),
        )
    })?;
    for tool in ["apt-get", "apt-cache", "dpkg"] {
        if !on_path(tool) {
            return Err(FetchError::new(
                format!("`{tool}` not found: fetching Debian kernels needs apt and dpkg"),
                "run on a Debian/Ubuntu host, or pass --kernel PATH to a bzImage",
            ));
        }
    }
    if !Path::new(DEBIAN_KEYRING).is_file() {
        return Err(FetchError::new(
            format!("{DEBIAN_KEYRING} is missing: cannot check Debian's signatures"),
            "install the debian-archive-keyring package",
        ));
    }
    let mirror = debian_mirror();
    let mut best: Option<Candidate> = None;
    for suite in suites {
        let apt = Apt::prepare(root, &mirror, suite)?;
        log(&format!("updating package lists for {suite} from {mirror}"));
        if let Err(e) = apt.update() {
            return match cached_in(root, series) {
                Some(k) => {
                    log(&format!(
                        "warning: {e}; using the cached {} ({} {}), which may not be the newest",
                        k.release, k.package, k.package_version
                    ));
                    Ok(k)
                }
                None => Err(e),
            };
        }
        for c in apt.candidates(series)? {
            if best.as_ref().is_none_or(|b| c.better_than(b)) {
                best = Some(c);
            }
        }
    }
    let best = best.ok_or_else(|| {
        FetchError::new(
            format!(
                "no {FLAVOUR} kernel image for {series} in {}",
                suites.join(", ")
            ),
            "the series may have left these suites; try another series or --kernel PATH",
        )
    })?;
    log(&format!(
        "newest {series}: {} {} ({}), kernel {}",
        best.package, best.version, best.suite, best.release
    ));

    let dest = kernels_dir(root).join(&best.release);
    let previous = load_cached(&dest);
    if let Some(k) = &previous {
        let same = k.package == best.package && k.package_version == best.version;
        let lacks_config =
            k.config.is_none() && config_companion(&best.depends, &best.release).is_some();
        if same && !lacks_config {
            log(&format!(
                "{} is already cached in {}",
                k.release,
                dest.display()
            ));
            return Ok(k.clone());
        }
        if same {
            log(&format!(
                "the cached {} has no config; fetching it again",
                k.release
            ));
        }
    }

    let apt = Apt::prepare(root, &mirror, &best.suite)?;
    let (deb, deb_sha256) =
        apt.fetch_deb(&best.package, &best.version, &best.sha256, best.size, log)?;
    let image = install(
        root,
        &apt,
        &best,
        &deb,
        &deb_sha256,
        previous.is_some(),
        log,
    )?;
    let _ = fs::remove_dir_all(apt.dir.join("download"));
    log(&format!(
        "got {} ({} {} from {}) in {}",
        image.release,
        image.package,
        image.package_version,
        image.suite,
        dest.display()
    ));
    Ok(image)
}

/// Extracts `deb` into a temporary directory beside the cache entry and
/// renames the finished entry into place. When the image package has no
/// config (7.x), it is in the `linux-base-<release>` package the image
/// depends on, which is fetched too.
fn install(
    root: &Path,
    apt: &Apt,
    c: &Candidate,
    deb: &Path,
    deb_sha256: &str,
    replace: bool,
    log: &mut dyn FnMut(&str),
) -> Result<KernelImage, FetchError> {
    let kernels = kernels_dir(root);
    fs::create_dir_all(&kernels).map_err(|e| FetchError::io("creating", &kernels, e))?;
    remove_stale_temps(&kernels);
    let tmp = TempDir(kernels.join(format!(".tmp-{}-{}", c.release, std::process::id())));
    let _ = fs::remove_dir_all(&tmp.0);
    let tree = tmp.0.join("tree");
    let stage = tmp.0.join("stage");
    fs::create_dir_all(&tree).map_err(|e| FetchError::io("creating", &tree, e))?;
    fs::create_dir_all(&stage).map_err(|e| FetchError::io("creating", &stage, e))?;
    let extract = |deb: &Path| {
        run(
            Command::new("dpkg").arg("-x").arg(deb).arg(&tree),
            "check free disk space in the cache (or set EEVDF_CACHE)",
        )
    };
    extract(deb)?;
    let (vmlinuz, mut config) = image_files(&tree, &c.release).ok_or_else(|| {
        FetchError::new(
            format!(
                "{} {} holds no vmlinuz for {} (looked in boot/ and usr/lib/modules/)",
                c.package, c.version, c.release
            ),
            "Debian changed the package layout: report it, or use --kernel PATH",
        )
    })?;
    let mut config_package = None;
    if config.is_none() {
        if let Some((base, version)) = config_companion(&c.depends, &c.release) {
            let version = version.unwrap_or_else(|| c.version.clone());
            log(&format!("the config is in {base}"));
            let entry = apt.index_entry(&base, &version)?;
            let (base_deb, base_sha) =
                apt.fetch_deb(&base, &version, &entry.sha256, entry.size, log)?;
            extract(&base_deb)?;
            config = image_files(&tree, &c.release).and_then(|(_, cfg)| cfg);
            config_package = Some((base, version, base_sha));
        }
        if config.is_none() {
            log(&format!(
                "warning: no config found for {}: HZ and the option checks will be unknown",
                c.release
            ));
        }
    }
    let header_release = bzimage_release_file(&vmlinuz)?;
    if header_release != c.release {
        return Err(FetchError::new(
            format!(
                "{}'s vmlinuz says it is {header_release}, not {}",
                c.package, c.release
            ),
            "report it; meanwhile use --kernel PATH",
        ));
    }
    let staged_vmlinuz = stage.join("vmlinuz");
    fs::rename(&vmlinuz, &staged_vmlinuz).map_err(|e| FetchError::io("moving", &vmlinuz, e))?;
    let config_sha256 = match config {
        Some(cfg) => {
            let to = stage.join("config");
            fs::rename(&cfg, &to).map_err(|e| FetchError::io("moving", &cfg, e))?;
            Some(sha256_file(&to).map_err(|e| FetchError::io("reading", &to, e))?)
        }
        None => None,
    };
    let rec = Record {
        release: c.release.clone(),
        series: c.series.clone(),
        suite: c.suite.clone(),
        package: c.package.clone(),
        package_version: c.version.clone(),
        deb_sha256: deb_sha256.to_string(),
        vmlinuz_sha256: sha256_file(&staged_vmlinuz)
            .map_err(|e| FetchError::io("reading", &staged_vmlinuz, e))?,
        config_sha256,
        config_package: config_package.as_ref().map(|(p, _, _)| p.clone()),
        config_package_version: config_package.as_ref().map(|(_, v, _)| v.clone()),
        config_deb_sha256: config_package.map(|(_, _, h)| h),
    };
    let json = serde_json::to_string_pretty(&rec).expect("a record serialises") + "\n";
    let rec_path = stage.join("kernel.json");
    fs::write(&rec_path, json).map_err(|e| FetchError::io("writing", &rec_path, e))?;

    let dest = kernels.join(&c.release);
    let old = tmp.0.join("old");
    if replace {
        // A new Debian revision of the same release: move the old one aside.
        fs::rename(&dest, &old).map_err(|e| FetchError::io("moving aside", &dest, e))?;
    }
    if let Err(e) = fs::rename(&stage, &dest) {
        if replace {
            let _ = fs::rename(&old, &dest);
        }
        // Another fetch may have installed the same package meanwhile.
        if let Some(k) = load_cached(&dest) {
            if k.package_version == c.version {
                return Ok(k);
            }
        }
        return Err(FetchError::io("installing", &dest, e));
    }
    load_cached(&dest).ok_or_else(|| {
        FetchError::new(
            format!("{} did not read back after installing", dest.display()),
            "check the cache's disk",
        )
    })
}

/// `vmlinuz` and `config` in an extracted package: `boot/vmlinuz-<rel>`
/// (6.12 to 6.18) or `usr/lib/modules/<rel>/vmlinuz` (7.x).
fn image_files(tree: &Path, release: &str) -> Option<(PathBuf, Option<PathBuf>)> {
    let layouts = [
        (
            tree.join("boot").join(format!("vmlinuz-{release}")),
            tree.join("boot").join(format!("config-{release}")),
        ),
        (
            tree.join("usr/lib/modules").join(release).join("vmlinuz"),
            tree.join("usr/lib/modules").join(release).join("config"),
        ),
        (
            tree.join("lib/modules").join(release).join("vmlinuz"),
            tree.join("lib/modules").join(release).join("config"),
        ),
    ];
    layouts
        .into_iter()
        .find(|(v, _)| v.is_file())
        .map(|(v, c)| (v, c.is_file().then_some(c)))
}

/// A directory removed when dropped (the temporary extraction).
#[derive(Debug)]
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Removes `.tmp-*-<pid>` directories of fetches that died.
fn remove_stale_temps(kernels: &Path) {
    let Ok(rd) = fs::read_dir(kernels) else {
        return;
    };
    for e in rd.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(".tmp-") else {
            continue;
        };
        let Some(pid) = rest.rsplit('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

// ---------------------------------------------------------------- helpers

/// Lowercase hex sha256 of a file, streamed.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut f = fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

fn running_as_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// The last `n` lines of `text`, at most 2000 characters.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let t = lines[lines.len().saturating_sub(n)..].join("\n");
    match t.char_indices().rev().nth(2000) {
        Some((i, _)) => format!("...{}", &t[i..]),
        None => t,
    }
}

/// Runs a command to completion; its stdout, or an error naming the
/// command with its exit status and stderr's tail.
fn run(cmd: &mut Command, hint: &str) -> Result<String, FetchError> {
    let shown = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let out = cmd.output().map_err(|e| {
        FetchError::new(
            format!("could not run `{shown}`: {e}"),
            "is it installed and on PATH?",
        )
    })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stderr = if stderr.trim().is_empty() {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        stderr.into_owned()
    };
    Err(FetchError::new(
        format!("`{shown}` failed ({}):\n{}", out.status, tail(&stderr, 12)),
        hint,
    ))
}

#[cfg(test)]
mod tests;
