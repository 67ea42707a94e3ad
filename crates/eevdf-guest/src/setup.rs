//! Setting the scenario up with real interfaces: file systems (PID 1),
//! cgroups, scheduler features, preemption model and sysctls (debugfs),
//! and per-thread policy, nice, slice, affinity and timer slack.

use std::fs;
use std::path::Path;

use eevdf_core::Policy;
use eevdf_scenario::guest::GuestReport;
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::TaskSpec;
use nix::errno::Errno;
use nix::mount::{mount, MsFlags};
use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;

use crate::sys;

const DEBUG_SCHED: &str = "/sys/kernel/debug/sched";
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

fn write(path: &str, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("writing {value:?} to {path}: {e}"))
}

fn read(path: &str) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))
}

/// Mounts what PID 1 needs. proc, sysfs and devtmpfs are required; the
/// others only matter for some scenarios, so their failure is a warning
/// (the step that needs them fails with a clear message later).
pub fn mount_all(warnings: &mut Vec<String>) -> Result<(), String> {
    let table: [(&str, &str, bool); 8] = [
        ("proc", "/proc", true),
        ("sysfs", "/sys", true),
        ("devtmpfs", "/dev", true),
        ("tmpfs", "/dev/shm", false),
        ("tmpfs", "/tmp", false),
        ("debugfs", "/sys/kernel/debug", false),
        ("tracefs", "/sys/kernel/tracing", false),
        ("cgroup2", CGROUP_ROOT, false),
    ];
    for (fstype, target, required) in table {
        let r = fs::create_dir_all(target)
            .map_err(|e| format!("mkdir {target}: {e}"))
            .and_then(|()| {
                match mount(
                    Some(fstype),
                    target,
                    Some(fstype),
                    MsFlags::empty(),
                    None::<&str>,
                ) {
                    Ok(()) | Err(Errno::EBUSY) => Ok(()),
                    Err(e) => Err(format!("mount {fstype} on {target}: {e}")),
                }
            });
        match r {
            Err(e) if required => return Err(e),
            Err(e) => warnings.push(e),
            Ok(()) => {}
        }
    }
    Ok(())
}

/// `uname -r` and `uname -v`.
pub fn uname() -> String {
    nix::sys::utsname::uname().map_or_else(
        |e| format!("unknown ({e})"),
        |u| {
            format!(
                "{} {}",
                u.release().to_string_lossy(),
                u.version().to_string_lossy()
            )
        },
    )
}

/// Online CPUs.
pub fn online_cpus() -> u32 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::_NPROCESSORS_ONLN)
        .ok()
        .flatten()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(1)
        .max(1)
}

/// Sets the kernel up for `sc` (PID 1 of a guest) and records what it
/// reads back in `report`. `text` is the scenario text, for directives
/// whose presence matters (`preempt`). The `kernel` profile, `hz` and
/// `costs` are the simulator's: the real kernel keeps its own.
pub fn configure_kernel(sc: &Scenario, text: &str, report: &mut GuestReport) -> Result<(), String> {
    let release = report.uname.split(' ').next().unwrap_or("").to_string();
    for g in &sc.sim.groups {
        make_group(&g.path, g.weight, g.idle)?;
    }
    let features_path = format!("{DEBUG_SCHED}/features");
    let tokens = sc.features.tokens();
    if !tokens.is_empty() {
        let listed = read(&features_path)?;
        for w in feature_writes(tokens, &listed, &release)? {
            write(&features_path, &w)?;
        }
    }
    let preempt_path = format!("{DEBUG_SCHED}/preempt");
    if has_directive(text, "preempt") {
        let model = sc.preempt_model().name();
        let listed = read(&preempt_path)
            .map_err(|e| format!("cannot set preempt {model}: {e} (no dynamic preemption?)"))?;
        let (models, _) = parse_preempt(&listed);
        if !models.iter().any(|m| m == model) {
            return Err(format!(
                "preempt {model} is not available in this kernel ({release}): it offers {}",
                models.join(", ")
            ));
        }
        write(&preempt_path, model)?;
    }
    let sysctl = &sc.sim.sysctl;
    if let Some(v) = sysctl.base_slice_ns {
        write(&format!("{DEBUG_SCHED}/base_slice_ns"), &v.to_string())?;
    }
    if let Some(v) = sysctl.migration_cost_ns {
        write(&format!("{DEBUG_SCHED}/migration_cost_ns"), &v.to_string())?;
    }
    if let Some(on) = sysctl.energy_aware {
        let path = "/proc/sys/kernel/sched_energy_aware";
        if !Path::new(path).exists() {
            return Err(format!(
                "sysctl energy_aware: {path} is not in this kernel ({release})"
            ));
        }
        write(path, if on { "1" } else { "0" })?;
    }
    quiet_background(report);
    if let Err(e) = write("/proc/sys/kernel/sched_schedstats", "1") {
        report
            .warnings
            .push(format!("{e}: wakeup counts are not measured"));
    }
    match read(&features_path) {
        Ok(f) => report.features = f.trim().to_string(),
        Err(e) => report.warnings.push(e),
    }
    report.preempt = match read(&preempt_path) {
        Ok(p) => parse_preempt(&p).1.unwrap_or_else(|| p.trim().to_string()),
        Err(_) => "none".to_string(),
    };
    match read(&format!("{DEBUG_SCHED}/base_slice_ns")) {
        Ok(b) => report.base_slice_ns = b.trim().parse().unwrap_or(0),
        Err(e) => report.warnings.push(e),
    }
    Ok(())
}

/// Kernel threads that would run in the window for reasons outside the
/// scenario, and the switches that stop them. A 7.2.13 run of ct-1hog
/// (NO_PREEMPT_SHORT, seed 2) showed every cyclictest wait over 200 us
/// right after one of them: DAMON_STAT's `kdamond.0` (190 runs in 10 s,
/// on by default in Debian's 7.2), `kcompactd0` (proactive compaction)
/// and the vmstat `kworker`s. Each switch is applied where the kernel
/// has it; what is missing is said in the report, not an error.
const QUIET: [(&str, &str); 3] = [
    ("/sys/module/damon_stat/parameters/enabled", "N"),
    ("/proc/sys/vm/compaction_proactiveness", "0"),
    ("/proc/sys/vm/stat_interval", "3600"),
];

fn quiet_background(report: &mut GuestReport) {
    for (path, value) in QUIET {
        if Path::new(path).exists() {
            if let Err(e) = write(path, value) {
                report.warnings.push(e);
            }
        }
    }
}

/// Whether a non-comment line of `text` starts with `directive`.
pub fn has_directive(text: &str, directive: &str) -> bool {
    text.lines().any(|l| {
        let l = l.split('#').next().unwrap_or("");
        l.split_whitespace().next() == Some(directive)
    })
}

/// The writes to debugfs `sched/features` for the scenario's explicit
/// `tokens`, given the kernel's listing (`NAME` / `NO_NAME`, space
/// separated). Enum values and names the kernel does not list are
/// simulator-only and refused.
pub fn feature_writes(
    tokens: &[String],
    listed: &str,
    release: &str,
) -> Result<Vec<String>, String> {
    let known: Vec<&str> = listed
        .split_whitespace()
        .map(|f| f.strip_prefix("NO_").unwrap_or(f))
        .collect();
    let mut out = Vec::new();
    for t in tokens {
        let t = t.trim();
        if t.contains('=') {
            return Err(format!(
                "feature {t} is not in this kernel ({release}): it is a simulator-only variant"
            ));
        }
        let name = if known.contains(&t) {
            t
        } else {
            t.strip_prefix("NO_").unwrap_or(t)
        };
        if !known.contains(&name) {
            return Err(format!(
                "feature {t} is not in this kernel ({release}): it is a simulator-only toggle"
            ));
        }
        out.push(t.to_string());
    }
    Ok(out)
}

/// The models of debugfs `sched/preempt` and the current one (in
/// parentheses or brackets): `none (voluntary) full` on 6.12.
pub fn parse_preempt(text: &str) -> (Vec<String>, Option<String>) {
    let mut models = Vec::new();
    let mut current = None;
    for w in text.split_whitespace() {
        let bare = w.trim_matches(|c| matches!(c, '(' | ')' | '[' | ']'));
        if bare.is_empty() {
            continue;
        }
        if bare.len() != w.len() {
            current = Some(bare.to_string());
        }
        models.push(bare.to_string());
    }
    (models, current)
}

/// Checks a group path (`/name` or `/a/b`) and returns its components.
fn group_parts(path: &str) -> Result<Vec<&str>, String> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let ok = path.starts_with('/')
        && parts
            .iter()
            .all(|p| !p.is_empty() && *p != "." && *p != ".." && !p.starts_with("cgroup."));
    if ok {
        Ok(parts)
    } else {
        Err(format!("group path {path:?} is not a plain cgroup path"))
    }
}

fn make_group(path: &str, weight: u32, idle: bool) -> Result<(), String> {
    let parts = group_parts(path)?;
    let mut dir = CGROUP_ROOT.to_string();
    for p in parts {
        write(&format!("{dir}/cgroup.subtree_control"), "+cpu")?;
        dir = format!("{dir}/{p}");
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("mkdir {dir}: {e}")),
        }
    }
    write(
        &format!("{dir}/cpu.weight"),
        &weight.clamp(1, 10_000).to_string(),
    )?;
    if idle {
        write(&format!("{dir}/cpu.idle"), "1")?;
    }
    Ok(())
}

/// Moves the calling process into cgroup `path` (before it creates
/// threads, which then inherit it).
pub fn join_group(path: &str) -> Result<(), String> {
    group_parts(path)?;
    write(&format!("{CGROUP_ROOT}{path}/cgroup.procs"), "0")
}

/// The CPUs a directive may use on `nr` online CPUs, as the simulator
/// filters them (CPUs that do not exist are dropped; none left = all),
/// and a warning when some were dropped.
pub fn allowed_cpus(spec: &TaskSpec, nr: u32) -> (Option<Vec<u32>>, Option<String>) {
    let Some(want) = &spec.cpus else {
        return (None, None);
    };
    let have: Vec<u32> = want.iter().copied().filter(|c| *c < nr).collect();
    let warn = (have.len() != want.len()).then(|| {
        format!(
            "{}: cpus beyond the guest's {nr} CPUs dropped{}",
            spec.name,
            if have.is_empty() {
                " (none left: all CPUs)"
            } else {
                ""
            }
        )
    });
    ((!have.is_empty()).then_some(have), warn)
}

/// Applies `spec`'s policy, nice, custom slice, affinity and timer slack
/// to the calling thread; returns what failed.
pub fn apply_thread_attrs(spec: &TaskSpec, cpus: Option<&[u32]>) -> Vec<String> {
    let mut failed = Vec::new();
    let policy = match spec.policy {
        Policy::Normal => sys::SCHED_OTHER,
        Policy::Batch => sys::SCHED_BATCH,
        Policy::Idle => sys::SCHED_IDLE,
    };
    let slice = spec.slice_ns.unwrap_or(0);
    if let Err(e) = sys::sched_setattr_self(policy, spec.nice, slice) {
        failed.push(format!(
            "sched_setattr(policy {}, nice {}, slice {slice} ns): {e}",
            spec.policy.name(),
            spec.nice
        ));
    }
    if let Some(cpus) = cpus {
        let mut set = CpuSet::new();
        let r = cpus
            .iter()
            .try_for_each(|c| set.set(*c as usize))
            .and_then(|()| sched_setaffinity(Pid::from_raw(0), &set));
        if let Err(e) = r {
            failed.push(format!("sched_setaffinity({cpus:?}): {e}"));
        }
    }
    if let Some(ns) = spec.slack_ns {
        // 0 would restore the default slack; 1 ns is the closest to none.
        if let Err(e) = nix::sys::prctl::set_timerslack(ns.max(1) as libc::c_ulong) {
            failed.push(format!("PR_SET_TIMERSLACK {ns}: {e}"));
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTED: &str = "PLACE_LAG PLACE_DEADLINE_INITIAL NO_RUN_TO_PARITY PREEMPT_SHORT \
                          NO_NEXT_BUDDY TTWU_QUEUE\n";

    fn toks(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kernel_features_are_written_and_others_refused() {
        let w = feature_writes(
            &toks(&["NO_PLACE_LAG", "RUN_TO_PARITY", "NEXT_BUDDY"]),
            LISTED,
            "7.2",
        )
        .unwrap();
        assert_eq!(w, ["NO_PLACE_LAG", "RUN_TO_PARITY", "NEXT_BUDDY"]);
        let e = feature_writes(&toks(&["PS_CLEAR_BUDDY"]), LISTED, "7.2.13").unwrap_err();
        assert!(
            e.contains("PS_CLEAR_BUDDY is not in this kernel (7.2.13)"),
            "{e}"
        );
        assert!(e.contains("simulator-only toggle"));
        let e = feature_writes(&toks(&["PROT_SET=slice"]), LISTED, "6.12").unwrap_err();
        assert!(e.contains("PROT_SET=slice"), "{e}");
    }

    #[test]
    fn preempt_listings_of_both_kernels() {
        let (m, c) = parse_preempt("none (voluntary) full\n");
        assert_eq!(
            (m, c.as_deref()),
            (toks(&["none", "voluntary", "full"]), Some("voluntary"))
        );
        let (m, c) = parse_preempt("full (lazy)\n");
        assert_eq!((m, c.as_deref()), (toks(&["full", "lazy"]), Some("lazy")));
        assert_eq!(parse_preempt("[full] lazy").1.as_deref(), Some("full"));
    }

    #[test]
    fn directives_are_found_outside_comments() {
        let t = "eevdf-scenario v1\n# preempt none\n  preempt lazy # x\nend\n";
        assert!(has_directive(t, "preempt"));
        assert!(!has_directive("a\n#preempt full\nx preempt\n", "preempt"));
    }

    #[test]
    fn group_paths_stay_inside_the_hierarchy() {
        assert_eq!(group_parts("/a/b").unwrap(), ["a", "b"]);
        for bad in ["a", "/", "/../x", "/a//b", "/cgroup.procs"] {
            assert!(group_parts(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpus_beyond_the_machine_are_dropped() {
        let mut spec = TaskSpec::new("t", eevdf_sim::Workload::Hog);
        spec.cpus = Some(vec![1, 5]);
        let (c, w) = allowed_cpus(&spec, 2);
        assert_eq!(c, Some(vec![1]));
        assert!(w.unwrap().contains("dropped"));
        spec.cpus = Some(vec![7]);
        assert_eq!(allowed_cpus(&spec, 2).0, None);
    }
}
