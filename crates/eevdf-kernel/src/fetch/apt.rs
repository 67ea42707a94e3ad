//! The private apt configuration: package names, sources lists, the
//! machine's mirror, deb822 stanzas.

use super::*;

/// One suite's private apt configuration under `<root>/apt/<suite>/`.
#[derive(Debug)]
pub(super) struct Apt {
    pub(super) dir: PathBuf,
    pub(super) suite: String,
    pub(super) opts: Vec<String>,
}

impl Apt {
    pub(super) fn prepare(root: &Path, mirror: &str, suite: &str) -> Result<Apt, FetchError> {
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

    pub(super) fn cmd(&self, tool: &str) -> Command {
        let mut c = Command::new(tool);
        c.env("LC_ALL", "C").args(&self.opts);
        c
    }

    pub(super) fn update(&self) -> Result<(), FetchError> {
        let mut c = self.cmd("apt-get");
        c.args(["-q", "--error-on=any", "update"]);
        run(
            &mut c,
            "check the network and the mirror (set EEVDF_DEBIAN_MIRROR to another Debian mirror)",
        )
        .map(drop)
    }

    /// The cloud-amd64 kernel image packages of `series` in this suite.
    pub(super) fn candidates(&self, series: &str) -> Result<Vec<Candidate>, FetchError> {
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
    pub(super) fn index_entry(
        &self,
        package: &str,
        version: &str,
    ) -> Result<IndexEntry, FetchError> {
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
    pub(super) fn fetch_deb(
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
pub(super) struct IndexEntry {
    pub(super) sha256: String,
    pub(super) size: u64,
}

/// The `linux-base-<release>` package (and the version pinned with `(= v)`)
/// in a Depends field: 7.x keeps the config there.
pub(super) fn config_companion(depends: &str, release: &str) -> Option<(String, Option<String>)> {
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
pub(super) struct Candidate {
    pub(super) package: String,
    pub(super) version: String,
    pub(super) suite: String,
    pub(super) release: String,
    pub(super) series: String,
    pub(super) kind: PackageKind,
    pub(super) sha256: String,
    pub(super) size: u64,
    pub(super) depends: String,
}

impl Candidate {
    /// Higher Debian version, then the preferred package kind.
    pub(super) fn better_than(&self, other: &Candidate) -> bool {
        compare_debian_versions(&self.version, &other.version)
            .then_with(|| other.kind.cmp(&self.kind))
            == Ordering::Greater
    }
}

/// The binary packages `apt-cache show` describes, as candidates: real
/// images (not meta packages) of `series`.
pub(super) fn candidates_from_show(text: &str, suite: &str, series: &str) -> Vec<Candidate> {
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
pub(super) fn is_release_name(s: &str) -> bool {
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

pub(super) fn is_security_suite(s: &str) -> bool {
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
pub(super) fn parse_deb822(text: &str) -> Vec<Vec<(String, String)>> {
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

pub(super) fn field<'a>(stanza: &'a [(String, String)], key: &str) -> Option<&'a str> {
    stanza
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}
