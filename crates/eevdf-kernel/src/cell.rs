//! A sweep's cell on a kernel: refused before any boot when the scenario
//! asks for what no kernel has, else booted once per set of inputs and
//! cached by them, so a rerun or a retried shard boots nothing again.

use std::path::Path;
use std::time::Duration;

use eevdf_core::features::in_features_h;
use eevdf_scenario::scenario::Scenario;

use crate::guest_bin::GuestBinary;
use crate::run::{self, Image, KernelRun, Options};
use crate::vm_topology::VmTopology;
use crate::{qemu, KernelError};

/// Why `sc` cannot run on any kernel, before booting one: a feature
/// token that is not in mainline `features.h` (a seed-thread toggle, an
/// enum value, a removed name). The guest refuses these too (its
/// `feature_writes`); saying so here saves a boot per cell. A name an
/// older kernel lacks is still refused by the guest, after its boot.
pub fn simulator_only(sc: &Scenario) -> Option<String> {
    let token = sc.features.tokens().iter().find(|t| {
        let name = t.strip_prefix("NO_").unwrap_or(t);
        t.contains('=') || !in_features_h(name)
    })?;
    Some(format!(
        "feature {token} is simulator-only: no kernel's sched/features has it"
    ))
}

/// Runs `sc` on `image` as [`run::run`] does, untraced, unless `cache`
/// already holds the guest's report for the same inputs (image, initrd,
/// QEMU version, seed, shift). A cached run has an empty console and a
/// zero wall time; its result is the booted one's, byte for byte.
pub fn run_cached(
    sc: &Scenario,
    image: &Image,
    guest: &GuestBinary,
    opts: &Options,
    qemu_version: &str,
    cache: &Path,
) -> Result<KernelRun, KernelError> {
    debug_assert!(!opts.trace, "traced runs are not cached");
    let initrd = run::initramfs(guest, &run::guest_text(sc), false, &[])?;
    let vm = VmTopology::of(&sc.machine)?;
    let key = run::boot_key(image, &initrd, qemu_version, opts.seed, opts.shift, &vm);
    let path = cache.join(format!("{key}.report"));
    let serial = match std::fs::read_to_string(&path) {
        Ok(report) => qemu::Serial {
            console: String::new(),
            report,
            trace: String::new(),
            wall: Duration::ZERO,
        },
        Err(_) => {
            let timeout = opts.timeout.unwrap_or_else(|| run::default_timeout(sc));
            let serial = run::boot(&initrd, &vm, image, opts, timeout, &mut |_, _| {})?;
            std::fs::create_dir_all(cache).map_err(|e| KernelError::io(cache, e))?;
            // Written whole then renamed: a cut-off write never poses
            // as a report.
            let part = cache.join(format!("{key}.report.part"));
            std::fs::write(&part, &serial.report).map_err(|e| KernelError::io(&part, e))?;
            std::fs::rename(&part, &path).map_err(|e| KernelError::io(&path, e))?;
            serial
        }
    };
    run::finish(sc, image, guest, opts, qemu_version, serial)
}

#[cfg(test)]
mod tests {
    use super::*;
    use eevdf_scenario::guest::{GuestCpu, GuestReport, GuestThread, BEGIN_MARK, END_MARK};

    fn sc(text: &str) -> Scenario {
        Scenario::parse(text).unwrap()
    }

    #[test]
    fn only_features_h_names_reach_a_kernel() {
        let head = "eevdf-scenario v1\ntask a kind=hog\n";
        let with = |f: &str| sc(&format!("{head}features {f}\nend\n"));
        assert_eq!(simulator_only(&sc(&format!("{head}end\n"))), None);
        for ok in ["NO_PREEMPT_SHORT", "NEXT_BUDDY", "NO_TTWU_QUEUE", "HRTICK"] {
            assert_eq!(simulator_only(&with(ok)), None, "{ok}");
        }
        for seed in ["PS_CLEAR_BUDDY", "PROT_SET=INELIGIBLE", "LAST_BUDDY"] {
            let why = simulator_only(&with(seed)).unwrap_or_else(|| panic!("{seed} passed"));
            assert!(
                why.contains(seed) && why.contains("simulator-only"),
                "{why}"
            );
        }
    }

    fn report() -> GuestReport {
        GuestReport {
            schema: eevdf_scenario::guest::GUEST_SCHEMA.into(),
            uname: "7.2.13 #1".into(),
            features: "PLACE_LAG".into(),
            preempt: "lazy".into(),
            base_slice_ns: 700_000,
            nr_cpus: 1,
            window_ns: 1_000_000_000,
            threads: vec![GuestThread {
                name: "a.0".into(),
                role: "hog".into(),
                cpu_ns: 900_000_000,
                ..Default::default()
            }],
            cpus: vec![GuestCpu {
                cpu: 0,
                busy_ns: 1_000_000_000,
                switches: 10,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_cached_report_is_read_back_without_a_boot() {
        let dir = std::env::temp_dir().join(format!("eevdf-cell-test-{}", std::process::id()));
        let s = sc("eevdf-scenario v1\nduration 1s\ntask a kind=hog\nend\n");
        let image = Image {
            release: "7.2.13".into(),
            sha256: "ab".repeat(32),
            hz: Some(1000),
            ..Default::default()
        };
        let guest = GuestBinary {
            path: "/g".into(),
            bytes: b"\x7fELF guest".to_vec(),
            sha256: "cd".repeat(32),
        };
        let mut opts = Options::new(dir.join("work"));
        // A QEMU that cannot start: only the cache can answer.
        opts.qemu = dir.join("no-such-qemu");
        let cache = dir.join("cache");
        let missed = run_cached(&s, &image, &guest, &opts, "QEMU 9", &cache);
        assert!(missed.is_err(), "booted without QEMU");

        let initrd = run::initramfs(&guest, &run::guest_text(&s), false, &[]).unwrap();
        let key = run::boot_key(
            &image,
            &initrd,
            "QEMU 9",
            opts.seed,
            opts.shift,
            &VmTopology::flat(1),
        );
        std::fs::create_dir_all(&cache).unwrap();
        let log = format!("{BEGIN_MARK}\n{}\n{END_MARK}\n", report().to_json());
        std::fs::write(cache.join(format!("{key}.report")), log).unwrap();
        let hit = run_cached(&s, &image, &guest, &opts, "QEMU 9", &cache).unwrap();
        assert_eq!(hit.result.tasks[0].cpu_ns, 900_000_000);
        assert_eq!(hit.source.qemu, "QEMU 9");
        assert_eq!(hit.wall, Duration::ZERO);
        // Another seed is another boot.
        opts.seed = 2;
        assert!(run_cached(&s, &image, &guest, &opts, "QEMU 9", &cache).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
