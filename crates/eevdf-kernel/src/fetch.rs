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

// ---------------------------------------------------------------- apt

/// One suite's private apt configuration under `<root>/apt/<suite>/`.
#[derive(Debug)]
struct Apt {
    dir: PathBuf,
    suite: String,
    opts: Vec<String>,
}

impl Apt {
    fn prepare(root: &Path, mirror: &str, suite: &str) -> Result<Apt, FetchError> {
        let dir = root.join("apt").join(suite);
        for d in ["lists/partial", "cache/archives/partial", "download"] {
            let p = dir.join(d);
            fs::create_dir_all(&p).map_err(|e| FetchError::io("creating", &p, e))?;
        }
        let list = dir.join("sources.list");
        let text = sources_list(mirror, &[suite]);
        if fs::read_to_string(&list).ok().as_deref() != Some(text.as_str()) {
            fs::write(&list, &text).map_err(|e| FetchError::io("writing", &list, e))?;
        }
        let status = dir.join("status");
        if !status.exists() {
            fs::write(&status, "").map_err(|e| FetchError::io("writing", &status, e))?;
        }
        let d = |p: &str| dir.join(p).display().to_string();
        let mut opts = vec![
            format!("Dir::Etc::SourceList={}", d("sources.list")),
            "Dir::Etc::SourceParts=/dev/null".to_string(),
            format!("Dir::State::Lists={}", d("lists")),
            format!("Dir::Cache={}", d("cache")),
            // The host's installed packages are none of our business.
            format!("Dir::State::status={}", d("status")),
            "APT::Architecture=amd64".to_string(),
            "APT::Architectures=amd64".to_string(),
            "Acquire::Languages=none".to_string(),
            "Acquire::Retries=3".to_string(),
            "Acquire::http::Timeout=60".to_string(),
        ];
        if running_as_root() {
            // apt's _apt user cannot write into root's cache; say so
            // up front instead of a warning on every download.
            opts.push("APT::Sandbox::User=root".to_string());
        }
        let opts = opts
            .into_iter()
            .flat_map(|o| ["-o".to_string(), o])
            .collect();
        Ok(Apt {
            dir,
            suite: suite.to_string(),
            opts,
        })
    }

    fn cmd(&self, tool: &str) -> Command {
        let mut c = Command::new(tool);
        c.env("LC_ALL", "C").args(&self.opts);
        c
    }

    fn update(&self) -> Result<(), FetchError> {
        let mut c = self.cmd("apt-get");
        c.args(["-q", "--error-on=any", "update"]);
        run(
            &mut c,
            "check the network and the mirror (set EEVDF_DEBIAN_MIRROR to another Debian mirror)",
        )
        .map(drop)
    }

    /// The cloud-amd64 kernel image packages of `series` in this suite.
    fn candidates(&self, series: &str) -> Result<Vec<Candidate>, FetchError> {
        let mut c = self.cmd("apt-cache");
        c.args(["pkgnames", "linux-"]);
        let names = run(
            &mut c,
            "run the fetch again (the package lists may be damaged)",
        )?;
        let wanted: Vec<&str> = names
            .lines()
            .map(str::trim)
            .filter(|n| parse_package_name(n).is_some_and(|p| p.series == series))
            .collect();
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = self.cmd("apt-cache");
        c.arg("show").args(&wanted);
        let shown = run(
            &mut c,
            "run the fetch again (the package lists may be damaged)",
        )?;
        Ok(candidates_from_show(&shown, &self.suite, series))
    }

    /// The index's sha256 and size of `package=version`.
    fn index_entry(&self, package: &str, version: &str) -> Result<IndexEntry, FetchError> {
        let mut c = self.cmd("apt-cache");
        c.arg("show").arg(format!("{package}={version}"));
        let shown = run(
            &mut c,
            "run the fetch again (the package lists may be damaged)",
        )?;
        parse_deb822(&shown)
            .iter()
            .find(|st| {
                field(st, "Package") == Some(package) && field(st, "Version") == Some(version)
            })
            .map(|st| IndexEntry {
                sha256: field(st, "SHA256").unwrap_or("").to_ascii_lowercase(),
                size: field(st, "Size").and_then(|v| v.parse().ok()).unwrap_or(0),
            })
            .ok_or_else(|| {
                FetchError::new(
                    format!("{package} {version} is not in the {} index", self.suite),
                    "run the fetch again; the suite may be mid-update",
                )
            })
    }

    /// Downloads `package=version` into an emptied `download/<package>/`
    /// and checks it against the index's sha256: the .deb and its sha256.
    fn fetch_deb(
        &self,
        package: &str,
        version: &str,
        index_sha256: &str,
        size: u64,
        log: &mut dyn FnMut(&str),
    ) -> Result<(PathBuf, String), FetchError> {
        log(&format!(
            "downloading {package}={version} ({:.1} MB)",
            size as f64 / 1e6
        ));
        let dl = self.dir.join("download").join(package);
        let _ = fs::remove_dir_all(&dl);
        fs::create_dir_all(&dl).map_err(|e| FetchError::io("creating", &dl, e))?;
        let mut c = self.cmd("apt-get");
        c.current_dir(&dl)
            .args(["-q", "download"])
            .arg(format!("{package}={version}"));
        run(
            &mut c,
            "check the network and free disk space, then fetch again",
        )?;
        let debs: Vec<PathBuf> = fs::read_dir(&dl)
            .map_err(|e| FetchError::io("reading", &dl, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "deb"))
            .collect();
        let [deb] = debs.as_slice() else {
            return Err(FetchError::new(
                format!(
                    "apt-get download {package}={version} left {} .deb files in {}",
                    debs.len(),
                    dl.display()
                ),
                "fetch again",
            ));
        };
        let sha = sha256_file(deb).map_err(|e| FetchError::io("reading", deb, e))?;
        if index_sha256.is_empty() {
            log(&format!(
                "warning: the index has no sha256 for {package}; got {sha}"
            ));
        } else if sha != index_sha256 {
            let _ = fs::remove_file(deb);
            return Err(FetchError::new(
                format!(
                    "{} has sha256 {sha}, the index says {index_sha256}",
                    deb.display()
                ),
                "a mirror or proxy served a different file: run the fetch again",
            ));
        } else {
            log(&format!("{package}: sha256 {sha} matches the index"));
        }
        Ok((deb.clone(), sha))
    }
}

/// An index entry's checksum and size.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexEntry {
    sha256: String,
    size: u64,
}

/// The `linux-base-<release>` package (and the version pinned with `(= v)`)
/// in a Depends field: 7.x keeps the config there.
fn config_companion(depends: &str, release: &str) -> Option<(String, Option<String>)> {
    let want = format!("linux-base-{release}");
    depends.split(',').find_map(|dep| {
        let dep = dep.split('|').next()?.trim();
        let (name, rest) = match dep.split_once(' ') {
            Some((n, r)) => (n, r.trim()),
            None => (dep, ""),
        };
        if name.split(':').next()? != want {
            return None;
        }
        let version = rest
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .and_then(|r| r.trim().strip_prefix('='))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty());
        Some((want.clone(), version))
    })
}

/// A kernel image package found in a suite.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    package: String,
    version: String,
    suite: String,
    release: String,
    series: String,
    kind: PackageKind,
    sha256: String,
    size: u64,
    depends: String,
}

impl Candidate {
    /// Higher Debian version, then the preferred package kind.
    fn better_than(&self, other: &Candidate) -> bool {
        compare_debian_versions(&self.version, &other.version)
            .then_with(|| other.kind.cmp(&self.kind))
            == Ordering::Greater
    }
}

/// The binary packages `apt-cache show` describes, as candidates: real
/// images (not meta packages) of `series`.
fn candidates_from_show(text: &str, suite: &str, series: &str) -> Vec<Candidate> {
    let mut out = Vec::new();
    for st in parse_deb822(text) {
        let get = |k: &str| field(&st, k).unwrap_or("");
        let Some(name) = parse_package_name(get("Package")) else {
            continue;
        };
        if name.series != series || get("Version").is_empty() {
            continue;
        }
        let installed: u64 = get("Installed-Size").parse().unwrap_or(0);
        let meta = get("Depends").contains(&format!("linux-binary-{}", name.release));
        if meta || installed < MIN_IMAGE_INSTALLED_KIB {
            continue;
        }
        out.push(Candidate {
            package: get("Package").to_string(),
            version: get("Version").to_string(),
            suite: suite.to_string(),
            release: name.release,
            series: name.series,
            kind: name.kind,
            sha256: get("SHA256").to_ascii_lowercase(),
            size: get("Size").parse().unwrap_or(0),
            depends: get("Depends").to_string(),
        });
    }
    out
}

/// Which package of a release carries the image, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PackageKind {
    /// `linux-binary-<rel>` (7.x: the image; `linux-image-<rel>` is a meta package).
    Binary,
    /// `linux-image-<rel>-unsigned` (6.12 in bookworm-backports).
    ImageUnsigned,
    /// `linux-image-<rel>` with a signed image (6.16 to 6.18 in trixie-backports).
    Image,
}

/// A kernel package name taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageName {
    /// `7.2.13+deb14-cloud-amd64`.
    pub release: String,
    /// `7.2`.
    pub series: String,
    pub kind: PackageKind,
}

/// Parses `linux-binary-<rel>`, `linux-image-<rel>` or
/// `linux-image-<rel>-unsigned` where `<rel>` is `X.Y[.Z...]<suffix>-cloud-amd64`;
/// anything else (headers, modules, `-dbg`, `linux-binary-unsigned-*`,
/// other flavours, meta packages without a version) is `None`.
pub fn parse_package_name(name: &str) -> Option<PackageName> {
    let (kind, rel) = if let Some(r) = name.strip_prefix("linux-binary-") {
        (PackageKind::Binary, r)
    } else if let Some(r) = name.strip_prefix("linux-image-") {
        match r.strip_suffix("-unsigned") {
            Some(r) => (PackageKind::ImageUnsigned, r),
            None => (PackageKind::Image, r),
        }
    } else {
        return None;
    };
    let version = rel.strip_suffix(&format!("-{FLAVOUR}"))?;
    if !is_release_name(rel) {
        return None;
    }
    Some(PackageName {
        release: rel.to_string(),
        series: series_of(version)?,
        kind,
    })
}

/// `X.Y` of a kernel version or release (`7.2.13+deb14-cloud-amd64` → `7.2`).
pub fn series_of(release: &str) -> Option<String> {
    let mut parts = release.splitn(3, '.');
    let major = parts.next()?;
    let minor_rest = parts.next()?;
    let minor: String = minor_rest
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    if major.is_empty() || !major.bytes().all(|b| b.is_ascii_digit()) || minor.is_empty() {
        return None;
    }
    Some(format!("{major}.{minor}"))
}

/// A release that is safe as a directory name.
fn is_release_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.as_bytes()[0].is_ascii_digit()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".+-_~".contains(&b))
}

/// The private sources list: one signed `deb` line per suite, `main`
/// only, amd64 package indexes only (no translations or DEP-11).
pub fn sources_list(mirror: &str, suites: &[&str]) -> String {
    suites
        .iter()
        .map(|s| {
            format!(
                "deb [signed-by={DEBIAN_KEYRING} arch=amd64 target=Packages] {mirror} {s} main\n"
            )
        })
        .collect()
}

/// The Debian mirror: `$EEVDF_DEBIAN_MIRROR`, else the machine's own
/// (deb822 `debian.sources`, else `sources.list`), else deb.debian.org.
pub fn debian_mirror() -> String {
    if let Some(m) = std::env::var("EEVDF_DEBIAN_MIRROR")
        .ok()
        .filter(|m| !m.trim().is_empty())
    {
        return m.trim().trim_end_matches('/').to_string();
    }
    fs::read_to_string("/etc/apt/sources.list.d/debian.sources")
        .ok()
        .and_then(|t| mirror_from_deb822(&t))
        .or_else(|| {
            fs::read_to_string("/etc/apt/sources.list")
                .ok()
                .and_then(|t| mirror_from_sources_list(&t))
        })
        .unwrap_or_else(|| DEFAULT_MIRROR.to_string())
}

fn is_security_suite(s: &str) -> bool {
    s.ends_with("-security") || s.ends_with("/updates")
}

/// The URI of the first enabled `deb` stanza of a deb822 sources file
/// whose suites include no security suite.
pub fn mirror_from_deb822(text: &str) -> Option<String> {
    parse_deb822(text).into_iter().find_map(|st| {
        let types = field(&st, "Types")?;
        if !types.split_whitespace().any(|t| t == "deb") {
            return None;
        }
        if field(&st, "Enabled").is_some_and(|e| e.eq_ignore_ascii_case("no")) {
            return None;
        }
        let suites = field(&st, "Suites")?;
        if suites.split_whitespace().any(is_security_suite) {
            return None;
        }
        let uri = field(&st, "URIs")?.split_whitespace().next()?;
        Some(uri.trim_end_matches('/').to_string())
    })
}

/// The URI of the first `deb` line of a one-line-style sources list
/// whose suite is not a security suite.
pub fn mirror_from_sources_list(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let line = line.split('#').next()?.trim();
        let rest = line.strip_prefix("deb")?;
        if !rest.starts_with([' ', '\t']) {
            return None; // deb-src
        }
        let mut rest = rest.trim_start();
        if rest.starts_with('[') {
            rest = rest[rest.find(']')? + 1..].trim_start();
        }
        let mut words = rest.split_whitespace();
        let uri = words.next()?;
        let suite = words.next()?;
        if is_security_suite(suite) {
            return None;
        }
        Some(uri.trim_end_matches('/').to_string())
    })
}

/// Stanzas of a deb822 text (sources files, `apt-cache show` output):
/// `Field: value` lines with continuation lines folded in, `#` comments
/// skipped, stanzas separated by blank lines.
fn parse_deb822(text: &str) -> Vec<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut cur: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if let Some((_, v)) = cur.last_mut() {
                v.push('\n');
                v.push_str(line.trim());
            }
            continue;
        }
        if let Some((k, v)) = line.split_once(':') {
            cur.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn field<'a>(stanza: &'a [(String, String)], key: &str) -> Option<&'a str> {
    stanza
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

// ---------------------------------------------------------------- versions

/// dpkg's version ordering: epoch (numeric), then upstream version,
/// then Debian revision, the latter two compared by alternating
/// non-digit runs (letters before other characters, `~` before
/// everything, even the end) and digit runs (numerically).
pub fn compare_debian_versions(a: &str, b: &str) -> Ordering {
    let (ea, ua, ra) = split_version(a);
    let (eb, ub, rb) = split_version(b);
    ea.cmp(&eb)
        .then_with(|| verrevcmp(ua, ub))
        .then_with(|| verrevcmp(ra, rb))
}

/// `[epoch:]upstream[-revision]`.
fn split_version(v: &str) -> (u64, &str, &str) {
    let v = v.trim();
    let (epoch, rest) = match v.split_once(':') {
        Some((e, r)) if !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()) => {
            (e.parse().unwrap_or(u64::MAX), r)
        }
        _ => (0, v),
    };
    match rest.rsplit_once('-') {
        Some((u, r)) => (epoch, u, r),
        None => (epoch, rest, ""),
    }
}

/// The weight of one character in a non-digit run; 0 for the end (and digits).
fn order(c: Option<u8>) -> i32 {
    match c {
        None => 0,
        Some(c) if c.is_ascii_digit() => 0,
        Some(c) if c.is_ascii_alphabetic() => i32::from(c),
        Some(b'~') => -1,
        Some(c) => i32::from(c) + 256,
    }
}

fn verrevcmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    let digit = |s: &[u8], k: usize| s.get(k).is_some_and(|c| c.is_ascii_digit());
    while i < a.len() || j < b.len() {
        while (i < a.len() && !digit(a, i)) || (j < b.len() && !digit(b, j)) {
            let (ac, bc) = (order(a.get(i).copied()), order(b.get(j).copied()));
            if ac != bc {
                return ac.cmp(&bc);
            }
            i += 1;
            j += 1;
        }
        while a.get(i) == Some(&b'0') {
            i += 1;
        }
        while b.get(j) == Some(&b'0') {
            j += 1;
        }
        let mut first_diff = Ordering::Equal;
        while digit(a, i) && digit(b, j) {
            if first_diff == Ordering::Equal {
                first_diff = a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
        if digit(a, i) {
            return Ordering::Greater;
        }
        if digit(b, j) {
            return Ordering::Less;
        }
        if first_diff != Ordering::Equal {
            return first_diff;
        }
    }
    Ordering::Equal
}

// ---------------------------------------------------------------- bzImage

/// Reads of a bzImage header never look past this (the setup code, where
/// the version string lives, is at most 0x200 + 0xffff bytes in).
const HEADER_READ: usize = 0x200 + 0x1_0000 + 0x100;

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

fn bzimage_release_file(path: &Path) -> Result<String, FetchError> {
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

fn config_beside(vmlinuz: &Path, release: &str) -> Option<PathBuf> {
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
mod tests {
    use super::*;

    #[test]
    fn deb822_mirror_skips_security() {
        let text = "Types: deb\n\
            # http://snapshot.debian.org/archive/debian/20250520T000000Z\n\
            URIs: http://deb.debian.org/debian\n\
            Suites: bookworm bookworm-updates\n\
            Components: main\n\
            Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\
            \n\
            Types: deb\n\
            URIs: http://deb.debian.org/debian-security\n\
            Suites: bookworm-security\n\
            Components: main\n";
        assert_eq!(
            mirror_from_deb822(text).as_deref(),
            Some("http://deb.debian.org/debian")
        );
        let sec_first = "Types: deb\nURIs: http://sec.example/debian-security\nSuites: trixie-security\n\n\
            Types: deb-src\nURIs: http://src.example/debian\nSuites: trixie\n\n\
            Types: deb\nEnabled: no\nURIs: http://off.example/debian\nSuites: trixie\n\n\
            Types: deb deb-src\nURIs: http://mirror.example/debian/ http://other/\nSuites: trixie\n";
        assert_eq!(
            mirror_from_deb822(sec_first).as_deref(),
            Some("http://mirror.example/debian")
        );
        assert_eq!(mirror_from_deb822("Types: deb\nSuites: sid\n"), None);
    }

    #[test]
    fn sources_list_mirror() {
        let text = "# comment\n\
            deb-src http://src.example/debian bookworm main\n\
            deb http://security.debian.org/debian-security bookworm-security main\n\
            deb [arch=amd64 signed-by=/k.gpg] https://mirror.example/debian/ bookworm main # x\n";
        assert_eq!(
            mirror_from_sources_list(text).as_deref(),
            Some("https://mirror.example/debian")
        );
        assert_eq!(mirror_from_sources_list("debx http://a b c\n"), None);
        assert_eq!(
            mirror_from_sources_list("deb http://old/debian-security buster/updates main\n"),
            None
        );
    }

    #[test]
    fn sources_list_text() {
        assert_eq!(
            sources_list("http://deb.debian.org/debian", &["sid", "bookworm-backports"]),
            "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg arch=amd64 target=Packages] http://deb.debian.org/debian sid main\n\
             deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg arch=amd64 target=Packages] http://deb.debian.org/debian bookworm-backports main\n"
        );
    }

    #[test]
    fn package_names() {
        let p = parse_package_name("linux-binary-7.2.13+deb14-cloud-amd64").unwrap();
        assert_eq!(p.release, "7.2.13+deb14-cloud-amd64");
        assert_eq!(p.series, "7.2");
        assert_eq!(p.kind, PackageKind::Binary);
        let p = parse_package_name("linux-image-6.12.95+deb12-cloud-amd64-unsigned").unwrap();
        assert_eq!(
            (p.release.as_str(), p.series.as_str(), p.kind),
            (
                "6.12.95+deb12-cloud-amd64",
                "6.12",
                PackageKind::ImageUnsigned
            )
        );
        let p = parse_package_name("linux-image-6.18.15+deb13-cloud-amd64").unwrap();
        assert_eq!((p.series.as_str(), p.kind), ("6.18", PackageKind::Image));
        let p = parse_package_name("linux-image-6.12.90+deb12.1-cloud-amd64").unwrap();
        assert_eq!(p.release, "6.12.90+deb12.1-cloud-amd64");
        for not in [
            "linux-binary-unsigned-7.2.13+deb14-cloud-amd64",
            "linux-binary-7.2.13+deb14-amd64",
            "linux-binary-7.2.13+deb14-rt-amd64",
            "linux-image-7.2.13+deb14-cloud-amd64-dbg",
            "linux-headers-7.2.13+deb14-cloud-amd64",
            "linux-modules-7.2.13+deb14-cloud-amd64",
            "linux-image-cloud-amd64",
            "linux-image-cloud-amd64-dbg",
            "linux-base-7.2.13+deb14-cloud-amd64",
            "linux-image-x.y-cloud-amd64",
        ] {
            assert_eq!(parse_package_name(not), None, "{not}");
        }
    }

    #[test]
    fn series_from_releases() {
        assert_eq!(
            series_of("7.2.13+deb14-cloud-amd64").as_deref(),
            Some("7.2")
        );
        assert_eq!(series_of("6.18").as_deref(), Some("6.18"));
        assert_eq!(series_of("6.19.0-rc3+").as_deref(), Some("6.19"));
        assert_eq!(series_of("6.20-rc1").as_deref(), Some("6.20"));
        assert_eq!(series_of("7"), None);
        assert_eq!(series_of("v7.2"), None);
        assert!(suites_for("7.2").is_some());
        assert!(suites_for("6.1").is_none());
        assert_eq!(
            supported_series().collect::<Vec<_>>(),
            ["7.2", "6.18", "6.17", "6.16", "6.12"]
        );
    }

    const PAIRS: &[(&str, &str, Ordering)] = &[
        ("1.0", "1.0", Ordering::Equal),
        ("1.0", "1.0-0", Ordering::Equal),
        ("1.0", "1.0-1", Ordering::Less),
        ("1.0~rc1", "1.0", Ordering::Less),
        ("1.0~~", "1.0~", Ordering::Less),
        ("1.0", "1.0a", Ordering::Less),
        ("1.0a", "1.0.1", Ordering::Less),
        ("1.0+b1", "1.0", Ordering::Greater),
        ("1:0.1", "2.0", Ordering::Greater),
        ("0:2.0", "2.0", Ordering::Equal),
        ("1.002", "1.2", Ordering::Equal),
        ("1.10", "1.9", Ordering::Greater),
        ("7.2.13-1", "7.2.12-1~bpo13+1", Ordering::Greater),
        ("6.12.95-1~bpo12+1", "6.12.95-1", Ordering::Less),
        ("6.12.90-1~bpo12+1", "6.12.90-1~bpo12+2", Ordering::Less),
        ("6.12.90-2~bpo12+1", "6.12.90-1~bpo12+2", Ordering::Greater),
        ("6.18.15-1~bpo13+1", "6.18.9-1~bpo13+1", Ordering::Greater),
        ("6.12.95-1~bpo12+1", "6.12.9-1", Ordering::Greater),
        ("2.30-1", "2.30-1+deb12u1", Ordering::Less),
        ("1.2-3-4", "1.2-3-5", Ordering::Less),
    ];

    /// Versions dpkg calls malformed; ordered all the same.
    const ODD_PAIRS: &[(&str, &str, Ordering)] = &[
        ("a", "A", Ordering::Greater),
        ("1.0-", "1.0", Ordering::Equal),
        ("", "0", Ordering::Equal),
    ];

    #[test]
    fn debian_version_order() {
        for &(a, b, want) in PAIRS.iter().chain(ODD_PAIRS) {
            assert_eq!(compare_debian_versions(a, b), want, "{a} vs {b}");
            assert_eq!(compare_debian_versions(b, a), want.reverse(), "{b} vs {a}");
        }
    }

    /// The same pairs through dpkg itself, where there is one.
    #[test]
    fn debian_version_order_agrees_with_dpkg() {
        if !on_path("dpkg") {
            return;
        }
        for &(a, b, want) in PAIRS {
            let op = match want {
                Ordering::Less => "lt",
                Ordering::Equal => "eq",
                Ordering::Greater => "gt",
            };
            let st = Command::new("dpkg")
                .args(["--compare-versions", a, op, b])
                .status()
                .unwrap();
            assert!(st.success(), "dpkg disagrees: {a} {op} {b}");
        }
    }

    fn synthetic_bzimage(version: &[u8]) -> Vec<u8> {
        let mut img = vec![0u8; 0x1400];
        img[0x1F1] = 4; // setup_sects
        img[0x1FE] = 0x55;
        img[0x1FF] = 0xAA;
        img[0x202..0x206].copy_from_slice(b"HdrS");
        img[0x206..0x208].copy_from_slice(&0x020Fu16.to_le_bytes());
        img[0x20E..0x210].copy_from_slice(&(0x0B00u16 - 0x200).to_le_bytes());
        img[0xB00..0xB00 + version.len()].copy_from_slice(version);
        img
    }

    #[test]
    fn bzimage_header_release() {
        let img = synthetic_bzimage(
            b"7.2.13+deb14-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 7.2.13-1\0",
        );
        assert_eq!(bzimage_release(&img).unwrap(), "7.2.13+deb14-cloud-amd64");
        let own = synthetic_bzimage(b"6.19.0-rc3-eevdf+ (me@box) #7\0");
        assert_eq!(bzimage_release(&own).unwrap(), "6.19.0-rc3-eevdf+");

        let mut bad = img.clone();
        bad[0x202] = b'X';
        assert!(bzimage_release(&bad).unwrap_err().contains("HdrS"));
        let mut nul = img.clone();
        nul[0x20E..0x210].copy_from_slice(&0u16.to_le_bytes());
        assert!(bzimage_release(&nul).is_err());
        let mut past = img.clone();
        past[0x20E..0x210].copy_from_slice(&0x7000u16.to_le_bytes());
        assert!(bzimage_release(&past).unwrap_err().contains("past the end"));
        let mut empty = img.clone();
        empty[0xB00] = 0;
        assert!(bzimage_release(&empty).is_err());
        assert!(bzimage_release(b"\x7fELF\x02\x01\x01")
            .unwrap_err()
            .contains("ELF"));
        assert!(bzimage_release(&[]).is_err());
        assert!(bzimage_release(&img[..0x100]).is_err());
    }

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("eevdf-fetch-test-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn from_path_reads_header_and_finds_config() {
        let d = scratch("from-path");
        let boot = d.join("tree/arch/x86/boot");
        fs::create_dir_all(&boot).unwrap();
        let img = synthetic_bzimage(b"6.19.0-rc3-eevdf+ (me@box) #7\0");
        fs::write(boot.join("bzImage"), &img).unwrap();

        let k = from_path(&boot.join("bzImage"), None).unwrap();
        assert_eq!(k.release, "6.19.0-rc3-eevdf+");
        assert_eq!(k.series, "6.19");
        assert_eq!(k.vmlinuz_sha256, crate::sha256_hex(&img));
        assert!(k.package.is_empty() && k.deb_sha256.is_empty());
        assert_eq!(k.config, None);

        fs::write(d.join("tree/.config"), "CONFIG_HZ=1000\n").unwrap();
        let k = from_path(&boot.join("bzImage"), None).unwrap();
        assert!(k.config.unwrap().ends_with("tree/.config"));

        fs::write(boot.join("config-6.19.0-rc3-eevdf+"), "CONFIG_HZ=250\n").unwrap();
        let k = from_path(&boot.join("bzImage"), None).unwrap();
        assert!(k.config.unwrap().ends_with("config-6.19.0-rc3-eevdf+"));

        let explicit = d.join("my.config");
        fs::write(&explicit, "CONFIG_HZ=100\n").unwrap();
        let k = from_path(&boot.join("bzImage"), Some(&explicit)).unwrap();
        assert!(k.config.unwrap().ends_with("my.config"));
        let e = from_path(&boot.join("bzImage"), Some(&d.join("nope"))).unwrap_err();
        assert!(e.message.contains("does not exist"), "{e}");

        fs::write(d.join("vmlinux"), b"\x7fELF\x02\x01\x01\0\0\0").unwrap();
        let e = from_path(&d.join("vmlinux"), None).unwrap_err();
        assert!(e.to_string().contains("ELF"), "{e}");
        assert!(from_path(&d.join("missing"), None).is_err());
        let _ = fs::remove_dir_all(&d);
    }

    const SHOW: &str = "\
Package: linux-image-7.2.12+deb13-cloud-amd64
Version: 7.2.12-1~bpo13+1
Installed-Size: 15
Depends: linux-base-7.2.12+deb13-cloud-amd64 (= 7.2.12-1~bpo13+1), linux-binary-7.2.12+deb13-cloud-amd64 (= 7.2.12-1~bpo13+1)
Description: Linux 7.2.12 for x86-64 cloud
Size: 1924
SHA256: 99a5e789bb4130e99cb78bca6b5b5c19bbe065a74a04c1e62700489dfd7bdf4d

Package: linux-binary-7.2.12+deb13-cloud-amd64
Version: 7.2.12-1~bpo13+1
Installed-Size: 13476
Depends: linux-base-7.2.12+deb13-cloud-amd64 (= 7.2.12-1~bpo13+1)
Description: Linux 7.2.12 for x86-64 cloud (kernel image)
 A continuation line: with a colon.
 .
Size: 13389360
SHA256: AA6720823145E351D3C817C95FE58D89995A2BCBA4978AD2418C36A1C272F795

Package: linux-binary-7.2.9+deb13-cloud-amd64
Version: 7.2.9-1~bpo13+1
Installed-Size: 13400
Size: 13300000
SHA256: 00

Package: linux-binary-7.3.4+deb13-cloud-amd64
Version: 7.3.4-1~bpo13+1
Installed-Size: 13500
Size: 13300000
SHA256: 11
";

    #[test]
    fn candidates_skip_meta_and_other_series() {
        let c = candidates_from_show(SHOW, "trixie-backports", "7.2");
        let names: Vec<&str> = c.iter().map(|c| c.package.as_str()).collect();
        assert_eq!(
            names,
            [
                "linux-binary-7.2.12+deb13-cloud-amd64",
                "linux-binary-7.2.9+deb13-cloud-amd64"
            ]
        );
        assert_eq!(c[0].size, 13389360);
        assert_eq!(
            c[0].sha256,
            "aa6720823145e351d3c817c95fe58d89995a2bcba4978ad2418c36a1c272f795"
        );
        assert!(c[0].better_than(&c[1]));
        assert!(!c[1].better_than(&c[0]));

        // Same version: the package kind decides.
        let mut unsigned = c[0].clone();
        unsigned.kind = PackageKind::ImageUnsigned;
        assert!(c[0].better_than(&unsigned));
        assert!(!unsigned.better_than(&c[0]));
        // A newer version in another suite wins regardless.
        let mut sid = unsigned.clone();
        sid.version = "7.2.13-1".into();
        assert!(sid.better_than(&c[0]));
    }

    #[test]
    fn config_companion_from_depends() {
        let rel = "7.2.13+deb14-cloud-amd64";
        assert_eq!(
            config_companion("linux-base-7.2.13+deb14-cloud-amd64 (= 7.2.13-1)", rel),
            Some((format!("linux-base-{rel}"), Some("7.2.13-1".into())))
        );
        assert_eq!(
            config_companion(
                "kmod, linux-base-7.2.13+deb14-cloud-amd64:amd64, foo (>= 1)",
                rel
            ),
            Some((format!("linux-base-{rel}"), None))
        );
        // Another release's base, or a lower bound, is not a pin.
        assert_eq!(
            config_companion("linux-base-7.2.12+deb14-cloud-amd64 (= 7.2.12-1)", rel),
            None
        );
        assert_eq!(
            config_companion("linux-base-7.2.13+deb14-cloud-amd64 (>= 7.2)", rel),
            Some((format!("linux-base-{rel}"), None))
        );
        assert_eq!(config_companion("", rel), None);
    }

    fn fake_cache_entry(root: &Path, release: &str, version: &str, body: &[u8]) {
        let dir = kernels_dir(root).join(release);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("vmlinuz"), body).unwrap();
        let rec = Record {
            release: release.into(),
            series: series_of(release).unwrap(),
            suite: "sid".into(),
            package: format!("linux-binary-{release}"),
            package_version: version.into(),
            deb_sha256: "00".into(),
            vmlinuz_sha256: crate::sha256_hex(body),
            config_sha256: None,
            config_package: None,
            config_package_version: None,
            config_deb_sha256: None,
        };
        fs::write(
            dir.join("kernel.json"),
            serde_json::to_string(&rec).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn cached_picks_newest_intact_entry() {
        let root = scratch("cached");
        assert!(cached_in(&root, "7.2").is_none());
        fake_cache_entry(&root, "7.2.9+deb14-cloud-amd64", "7.2.9-1", b"old");
        fake_cache_entry(&root, "7.2.13+deb14-cloud-amd64", "7.2.13-1", b"new");
        fake_cache_entry(
            &root,
            "6.12.95+deb12-cloud-amd64",
            "6.12.95-1~bpo12+1",
            b"lts",
        );
        let k = cached_in(&root, "7.2").unwrap();
        assert_eq!(k.release, "7.2.13+deb14-cloud-amd64");
        assert_eq!(k.config, None);
        assert_eq!(
            cached_in(&root, "6.12").unwrap().package_version,
            "6.12.95-1~bpo12+1"
        );
        assert!(cached_in(&root, "6.18").is_none());
        // A damaged image is not a cached kernel.
        fs::write(
            kernels_dir(&root).join("7.2.13+deb14-cloud-amd64/vmlinuz"),
            b"truncated",
        )
        .unwrap();
        assert_eq!(
            cached_in(&root, "7.2").unwrap().release,
            "7.2.9+deb14-cloud-amd64"
        );
        assert_eq!(list_cached_in(&root).len(), 2);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn unsupported_series_is_refused_offline() {
        let root = scratch("unsupported");
        let e = fetch_in(&root, "5.10", &mut |_| {}).unwrap_err();
        assert!(e.message.contains("5.10"));
        assert!(e.hint.contains("7.2, 6.18, 6.17, 6.16, 6.12"), "{e}");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn command_failure_names_command_and_stderr() {
        let e = run(
            Command::new("sh").args(["-c", "echo one >&2; echo two >&2; exit 3"]),
            "do something",
        )
        .unwrap_err();
        assert!(e.message.contains("`sh -c"), "{e}");
        assert!(e.message.contains("one\ntwo"), "{e}");
        assert_eq!(e.hint, "do something");
        let e = run(&mut Command::new("/nonexistent/tool"), "h").unwrap_err();
        assert!(e.message.contains("could not run"), "{e}");
        assert_eq!(tail(&"x\n".repeat(100), 3), "x\nx\nx");
    }

    /// A real fetch over the network into the default cache (it is
    /// idempotent, so it only downloads what is not there yet):
    /// `EEVDF_TEST_SERIES=7.2,6.12 cargo test -p eevdf-kernel -- --ignored real_fetch`.
    #[test]
    #[ignore]
    fn real_fetch() {
        let root = cache_root();
        let list = std::env::var("EEVDF_TEST_SERIES").unwrap_or_else(|_| "7.2".into());
        for series in list.split(',').map(str::trim) {
            let mut log = |m: &str| eprintln!("{series}: {m}");
            let k = fetch_in(&root, series, &mut log).unwrap();
            eprintln!("{}", serde_json::to_string_pretty(&k).unwrap());
            assert_eq!(k.series, series);
            assert!(k.vmlinuz.is_file());
            assert_eq!(bzimage_release_file(&k.vmlinuz).unwrap(), k.release);
            let cfg = crate::kconfig::read_config(k.config.as_ref().unwrap()).unwrap();
            if let Err(m) = crate::kconfig::check(&cfg) {
                panic!("{}: {}", k.release, crate::kconfig::describe(&m));
            }
            let local = from_path(&k.vmlinuz, None).unwrap();
            assert_eq!(local.release, k.release);
            assert_eq!(local.vmlinuz_sha256, k.vmlinuz_sha256);
            assert_eq!(local.config, k.config);
            let again = fetch_in(&root, series, &mut log).unwrap();
            assert_eq!(again, k);
            assert_eq!(cached_in(&root, series), Some(k));
        }
    }
}
