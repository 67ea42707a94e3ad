//! Kernel config checks: does a kernel have what the guest runner needs?
//!
//! The guest boots from a gzip initramfs with no modules, talks over the
//! 8250 serial ports, mounts proc/sys/devtmpfs/tmpfs/debugfs/cgroup2
//! itself and reads per-thread schedstats, so all of that must be built
//! in (`=y`). Tracing (`--trace`) is optional.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Config texts larger than this are refused (a real one is ~130 KiB).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// One option the guest runner needs built in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    /// Without the `CONFIG_` prefix.
    pub option: &'static str,
    /// `false`: only some features need it (reported, not refused).
    pub required: bool,
    pub why: &'static str,
}

const fn req(option: &'static str, why: &'static str) -> Requirement {
    Requirement {
        option,
        required: true,
        why,
    }
}

const fn opt(option: &'static str, why: &'static str) -> Requirement {
    Requirement {
        option,
        required: false,
        why,
    }
}

/// Everything checked, required first. (`SCHED_DEBUG` is not among
/// them: it is gone in the newer kernels and debugfs's sched directory
/// no longer depends on it.)
pub const REQUIREMENTS: &[Requirement] = &[
    req(
        "SERIAL_8250",
        "the 8250 UART driver: the guest's console and the report port",
    ),
    req(
        "SERIAL_8250_CONSOLE",
        "the kernel console on ttyS0 (console=ttyS0)",
    ),
    req(
        "DEVTMPFS",
        "/dev filled in by the kernel (the initramfs has no udev)",
    ),
    req("BLK_DEV_INITRD", "booting from the initramfs"),
    req("RD_GZIP", "the initramfs is gzip-compressed"),
    req(
        "BINFMT_ELF",
        "running the guest runner, a static ELF binary",
    ),
    req(
        "DEBUG_FS",
        "/sys/kernel/debug/sched: sched features, base slice and the preemption mode",
    ),
    req("CGROUPS", "cgroup v2, for the scenario's groups"),
    req("CGROUP_SCHED", "the cgroup cpu controller (cpu.weight)"),
    req(
        "FAIR_GROUP_SCHED",
        "group scheduling of fair tasks (weights per group)",
    ),
    req(
        "SCHEDSTATS",
        "per-thread wakeup and wait statistics (/proc/<pid>/sched)",
    ),
    req("TMPFS", "the guest's scratch filesystem"),
    req("PROC_FS", "/proc: per-thread statistics and kernel state"),
    req("SYSFS", "/sys, and the mount points of debugfs and cgroup2"),
    req(
        "HIGH_RES_TIMERS",
        "precise sleeps and timers (the scenario's wake-ups)",
    ),
    opt("FTRACE", "tracefs (/sys/kernel/tracing): --trace needs it"),
    opt("TRACEPOINTS", "the sched_* tracepoints: --trace needs them"),
    opt(
        "EVENT_TRACING",
        "trace events in tracefs: --trace needs them",
    ),
];

/// What a config had for an option that is not built in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Found {
    /// `=m`: the guest loads no modules.
    Module,
    /// `# CONFIG_X is not set` (or `=n`).
    NotSet,
    /// Not mentioned at all (missing dependency, or gone from this kernel).
    Absent,
    /// Some other value.
    Value(String),
    /// The text is not a usable config (too large, no `CONFIG_` lines).
    Unusable,
}

/// An option the guest runner needs that the config does not build in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missing {
    /// `CONFIG_SCHEDSTATS`; empty for an unusable text.
    pub option: String,
    pub found: Found,
    /// `false`: optional (`--trace`), reported but not refused.
    pub required: bool,
    pub why: String,
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.required {
            write!(f, "(optional) ")?;
        }
        let o = &self.option;
        match &self.found {
            Found::Module => write!(
                f,
                "{o}=m, must be =y (the guest loads no modules): {}",
                self.why
            ),
            Found::NotSet => write!(f, "{o} is not set: {}", self.why),
            Found::Absent => write!(f, "{o} is absent: {}", self.why),
            Found::Value(v) => write!(f, "{o}={v}, must be =y: {}", self.why),
            Found::Unusable => write!(f, "{}", self.why),
        }
    }
}

/// One line per entry, for an error message.
pub fn describe(missing: &[Missing]) -> String {
    missing
        .iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What real-kernel mode wants to know about a kernel's config.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KernelConfig {
    /// From the header comment, e.g. `7.2.13` (`# Linux/x86 7.2.13 Kernel Configuration`).
    pub version: Option<String>,
    /// `CONFIG_HZ`.
    pub hz: Option<u32>,
    /// The build's default preemption model: `none`, `voluntary`,
    /// `full`, `lazy` or `rt`.
    pub preempt: Option<String>,
    /// `CONFIG_PREEMPT_DYNAMIC`: the model can be changed at boot/run time.
    pub preempt_dynamic: bool,
    pub schedstats: bool,
    /// `CONFIG_SCHED_DEBUG` (absent in newer kernels).
    pub sched_debug: bool,
    pub debug_fs: bool,
    pub ftrace: bool,
    pub tracepoints: bool,
    pub event_tracing: bool,
    /// The tick: `periodic`, `idle` (NO_HZ_IDLE) or `full` (NO_HZ_FULL).
    pub tick: Option<String>,
    pub smp: bool,
    pub nr_cpus: Option<u32>,
    pub sched_autogroup: bool,
    pub cfs_bandwidth: bool,
    /// `CONFIG_SCHED_CLASS_EXT` (sched_ext).
    pub sched_ext: bool,
    pub sched_core: bool,
    /// Optional options that are not built in (`--trace` needs them).
    pub optional_missing: Vec<Missing>,
    /// Every `CONFIG_*` line, name without the prefix → value (`n` for
    /// "is not set").
    #[serde(skip)]
    options: BTreeMap<String, String>,
}

impl KernelConfig {
    /// Parses config text: `CONFIG_X=value` and `# CONFIG_X is not set`
    /// lines; anything else is ignored. Refuses texts over
    /// [`MAX_CONFIG_BYTES`] and texts without a single option.
    pub fn parse(text: &str) -> Result<KernelConfig, String> {
        if text.len() > MAX_CONFIG_BYTES {
            return Err(format!(
                "the config text is {} bytes, over the {} MiB limit: not a kernel .config?",
                text.len(),
                MAX_CONFIG_BYTES >> 20
            ));
        }
        let mut options = BTreeMap::new();
        let mut version = None;
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("# CONFIG_") {
                if let Some(name) = rest.strip_suffix(" is not set") {
                    if is_symbol(name) {
                        options.insert(name.to_string(), "n".to_string());
                    }
                }
            } else if let Some(rest) = line.strip_prefix("CONFIG_") {
                if let Some((name, value)) = rest.split_once('=') {
                    if is_symbol(name) {
                        options.insert(name.to_string(), value.trim().to_string());
                    }
                }
            } else if version.is_none() {
                // "# Linux/x86 7.2.13 Kernel Configuration"
                if let Some(rest) = line.strip_prefix("# Linux/") {
                    if let Some(v) = rest.strip_suffix(" Kernel Configuration") {
                        version = v.split_whitespace().nth(1).map(str::to_string);
                    }
                }
            }
        }
        if options.is_empty() {
            return Err("the config text has no CONFIG_ options: not a kernel .config".into());
        }
        let mut c = KernelConfig {
            version,
            options,
            ..KernelConfig::default()
        };
        c.hz = c.get("HZ").and_then(|v| v.parse().ok());
        c.nr_cpus = c.get("NR_CPUS").and_then(|v| v.parse().ok());
        c.preempt = [
            ("PREEMPT_RT", "rt"),
            ("PREEMPT_LAZY", "lazy"),
            ("PREEMPT", "full"),
            ("PREEMPT_VOLUNTARY", "voluntary"),
            ("PREEMPT_NONE", "none"),
        ]
        .iter()
        .find(|(o, _)| c.is_builtin(o))
        .map(|(_, m)| m.to_string());
        c.tick = [
            ("NO_HZ_FULL", "full"),
            ("NO_HZ_IDLE", "idle"),
            ("HZ_PERIODIC", "periodic"),
        ]
        .iter()
        .find(|(o, _)| c.is_builtin(o))
        .map(|(_, m)| m.to_string());
        c.preempt_dynamic = c.is_builtin("PREEMPT_DYNAMIC");
        c.schedstats = c.is_builtin("SCHEDSTATS");
        c.sched_debug = c.is_builtin("SCHED_DEBUG");
        c.debug_fs = c.is_builtin("DEBUG_FS");
        c.ftrace = c.is_builtin("FTRACE");
        c.tracepoints = c.is_builtin("TRACEPOINTS");
        c.event_tracing = c.is_builtin("EVENT_TRACING");
        c.smp = c.is_builtin("SMP");
        c.sched_autogroup = c.is_builtin("SCHED_AUTOGROUP");
        c.cfs_bandwidth = c.is_builtin("CFS_BANDWIDTH");
        c.sched_ext = c.is_builtin("SCHED_CLASS_EXT");
        c.sched_core = c.is_builtin("SCHED_CORE");
        Ok(c)
    }

    /// The value of an option (`CONFIG_` prefix optional); `n` for
    /// "is not set", `None` when absent.
    pub fn get(&self, name: &str) -> Option<&str> {
        let name = name.strip_prefix("CONFIG_").unwrap_or(name);
        self.options.get(name).map(String::as_str)
    }

    /// `=y`.
    pub fn is_builtin(&self, name: &str) -> bool {
        self.get(name) == Some("y")
    }

    /// `true` when everything `--trace` needs is built in.
    pub fn can_trace(&self) -> bool {
        self.optional_missing.is_empty()
    }

    fn missing(&self, r: &Requirement) -> Option<Missing> {
        let found = match self.get(r.option) {
            Some("y") => return None,
            Some("m") => Found::Module,
            Some("n") => Found::NotSet,
            None => Found::Absent,
            Some(v) => Found::Value(v.to_string()),
        };
        Some(Missing {
            option: format!("CONFIG_{}", r.option),
            found,
            required: r.required,
            why: r.why.to_string(),
        })
    }
}

fn is_symbol(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Checks config text against [`REQUIREMENTS`]. `Ok` when every
/// required option is built in (optional gaps are in
/// [`KernelConfig::optional_missing`]); otherwise every gap, required
/// ones first, the optional ones after them.
pub fn check(text: &str) -> Result<KernelConfig, Vec<Missing>> {
    let mut c = KernelConfig::parse(text).map_err(|why| {
        vec![Missing {
            option: String::new(),
            found: Found::Unusable,
            required: true,
            why,
        }]
    })?;
    let (required, optional): (Vec<Missing>, Vec<Missing>) = REQUIREMENTS
        .iter()
        .filter_map(|r| c.missing(r))
        .partition(|m| m.required);
    if required.is_empty() {
        c.optional_missing = optional;
        Ok(c)
    } else {
        Err(required.into_iter().chain(optional).collect())
    }
}

/// Reads a config file, refusing one over [`MAX_CONFIG_BYTES`]; bytes
/// that are not UTF-8 are replaced (a config is ASCII but for strings).
pub fn read_config(path: &Path) -> io::Result<String> {
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut buf)?;
    if buf.len() > MAX_CONFIG_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is over {} MiB: not a kernel .config?",
                path.display(),
                MAX_CONFIG_BYTES >> 20
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config with every requirement built in.
    fn good() -> String {
        let mut s = String::from(
            "#\n# Automatically generated file; DO NOT EDIT.\n# Linux/x86 7.2.13 Kernel Configuration\n#\n\
             CONFIG_CC_VERSION_TEXT=\"gcc (Debian 14.2.0-19) 14.2.0\"\n\
             CONFIG_HZ_250=y\nCONFIG_HZ=250\n\
             # CONFIG_PREEMPT_NONE is not set\n# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_LAZY=y\n\
             CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_NO_HZ_FULL=y\n# CONFIG_HZ_PERIODIC is not set\n\
             CONFIG_SMP=y\nCONFIG_NR_CPUS=8192\n",
        );
        for r in REQUIREMENTS {
            s.push_str(&format!("CONFIG_{}=y\n", r.option));
        }
        s
    }

    fn without(text: &str, option: &str, replacement: &str) -> String {
        text.replace(&format!("CONFIG_{option}=y\n"), replacement)
    }

    #[test]
    fn parses_the_interesting_values() {
        let c = check(&good()).unwrap();
        assert_eq!(c.version.as_deref(), Some("7.2.13"));
        assert_eq!(c.hz, Some(250));
        assert_eq!(c.preempt.as_deref(), Some("lazy"));
        assert!(c.preempt_dynamic && c.schedstats && c.debug_fs && c.smp);
        assert!(!c.sched_debug && !c.sched_ext);
        assert_eq!(c.tick.as_deref(), Some("full"));
        assert_eq!(c.nr_cpus, Some(8192));
        assert!(c.can_trace());
        assert_eq!(c.get("CONFIG_HZ"), Some("250"));
        assert_eq!(c.get("PREEMPT"), Some("n"));
        assert_eq!(c.get("NOPE"), None);
        assert_eq!(
            c.get("CC_VERSION_TEXT"),
            Some("\"gcc (Debian 14.2.0-19) 14.2.0\"")
        );
    }

    #[test]
    fn lists_every_gap_with_a_reason() {
        let mut t = without(&good(), "SCHEDSTATS", "# CONFIG_SCHEDSTATS is not set\n");
        t = without(&t, "RD_GZIP", "CONFIG_RD_GZIP=m\n");
        t = without(&t, "DEVTMPFS", "");
        t = without(&t, "SERIAL_8250", "CONFIG_SERIAL_8250=\"odd\"\n");
        t = without(&t, "FTRACE", "# CONFIG_FTRACE is not set\n");
        let m = check(&t).unwrap_err();
        let got: Vec<(&str, &Found, bool)> = m
            .iter()
            .map(|m| (m.option.as_str(), &m.found, m.required))
            .collect();
        assert_eq!(
            got,
            [
                ("CONFIG_SERIAL_8250", &Found::Value("\"odd\"".into()), true),
                ("CONFIG_DEVTMPFS", &Found::Absent, true),
                ("CONFIG_RD_GZIP", &Found::Module, true),
                ("CONFIG_SCHEDSTATS", &Found::NotSet, true),
                ("CONFIG_FTRACE", &Found::NotSet, false),
            ]
        );
        let text = describe(&m);
        assert_eq!(text.lines().count(), 5);
        assert!(text.contains("CONFIG_RD_GZIP=m, must be =y (the guest loads no modules)"));
        assert!(text.contains("CONFIG_SCHEDSTATS is not set: per-thread"));
        assert!(text.contains("(optional) CONFIG_FTRACE is not set: tracefs"));
        assert!(m.iter().all(|m| !m.why.is_empty()));
    }

    #[test]
    fn optional_gaps_do_not_refuse() {
        let t = without(&good(), "TRACEPOINTS", "");
        let t = without(&t, "EVENT_TRACING", "# CONFIG_EVENT_TRACING is not set\n");
        let c = check(&t).unwrap();
        assert!(!c.can_trace());
        let names: Vec<&str> = c
            .optional_missing
            .iter()
            .map(|m| m.option.as_str())
            .collect();
        assert_eq!(names, ["CONFIG_TRACEPOINTS", "CONFIG_EVENT_TRACING"]);
        assert!(c.optional_missing.iter().all(|m| !m.required));
    }

    #[test]
    fn sched_debug_is_not_required() {
        assert!(REQUIREMENTS.iter().all(|r| r.option != "SCHED_DEBUG"));
        let c = check(&format!("{}CONFIG_SCHED_DEBUG=y\n", good())).unwrap();
        assert!(c.sched_debug);
    }

    #[test]
    fn refuses_unusable_text() {
        let big = "# padding\n".repeat(MAX_CONFIG_BYTES / 10 + 1);
        let m = check(&format!("{}{big}", good())).unwrap_err();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].found, Found::Unusable);
        assert!(m[0].to_string().contains("1 MiB"), "{}", m[0]);
        let m = check("hello\nworld\n").unwrap_err();
        assert_eq!(m[0].found, Found::Unusable);
        assert!(m[0].to_string().contains("no CONFIG_"));
        assert!(check("").is_err());
    }

    #[test]
    fn tolerates_odd_lines() {
        let c = KernelConfig::parse(
            "CONFIG_=y\nCONFIG_A B=y\n  CONFIG_HZ=1000  \r\n#CONFIG_X is not set\n\
             # CONFIG_Y is not set\nCONFIG_NOEQ\nCONFIG_HZ_PERIODIC=y\n",
        )
        .unwrap();
        assert_eq!(c.hz, Some(1000));
        assert_eq!(c.get("Y"), Some("n"));
        assert_eq!(c.get("X"), None);
        assert_eq!(c.get("NOEQ"), None);
        assert_eq!(c.tick.as_deref(), Some("periodic"));
        assert_eq!(c.preempt, None);
        assert_eq!(c.version, None);
    }

    #[test]
    fn read_config_is_bounded() {
        let d = std::env::temp_dir().join(format!("eevdf-kconfig-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let small = d.join("small");
        std::fs::write(&small, good()).unwrap();
        assert!(check(&read_config(&small).unwrap()).is_ok());
        let big = d.join("big");
        std::fs::write(&big, vec![b'#'; MAX_CONFIG_BYTES + 1]).unwrap();
        assert_eq!(
            read_config(&big).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Real Debian configs, where there are some: the ones in /tmp/k
    /// and the default cache's kernels. Skipped quietly when absent.
    #[test]
    fn real_debian_configs_pass() {
        let mut files = Vec::new();
        collect_configs(Path::new("/tmp/k"), 0, &mut files);
        collect_configs(&crate::fetch::cache_root().join("kernels"), 0, &mut files);
        for f in files {
            let Ok(text) = read_config(&f) else { continue };
            if !text.contains("CONFIG_") {
                continue;
            }
            let c = check(&text).unwrap_or_else(|m| {
                panic!("{}:\n{}", f.display(), describe(&m));
            });
            assert!(c.hz.is_some(), "{}", f.display());
            assert!(c.schedstats && c.preempt.is_some(), "{}", f.display());
        }
    }

    fn collect_configs(dir: &Path, depth: u32, out: &mut Vec<std::path::PathBuf>) {
        if depth > 6 {
            return;
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                collect_configs(&p, depth + 1, out);
            } else if ft.is_file() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name == "config" || name.starts_with("config-") || name == ".config" {
                    out.push(p);
                }
            }
        }
    }
}
