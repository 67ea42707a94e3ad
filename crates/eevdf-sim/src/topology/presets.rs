//! The seed machines: their shapes, NUMA distances, capacities and
//! energy models, and how a `MachineSpec` resolves to a description.

use super::*;

/// One EAS performance domain of a preset: its CPUs, the DT
/// `dynamic-power-coefficient` (µW/MHz/V²) and `(kHz, mV)` OPPs, ascending.
pub(super) struct PdSpec {
    pub(super) cpus: &'static [u32],
    pub(super) dyn_power_coeff: u64,
    pub(super) opps: &'static [(u32, u32)],
}

pub(super) struct Desc {
    pub(super) name: String,
    pub(super) shape: CustomMachine,
    /// `node_reclaim_distance`.
    pub(super) reclaim_distance: u32,
    pub(super) energy: &'static [PdSpec],
}

/// RB5 (QRB5165 = SM8250): arch/arm64/boot/dts/qcom/sm8250.dtsi gives
/// CPU0-3 Kryo 485 Silver (Cortex-A55) `capacity-dmips-mhz` 448,
/// `dynamic-power-coefficient` 105; CPU4-6 Gold (A77) 1024 / 379; CPU7
/// Gold Prime (A77) 1024 / 444; one `cluster0` in `cpu-map` and one L3
/// (`L3_0`) behind every L2, so MC spans all 8 CPUs. Three cpufreq-hw
/// domains. Max frequencies on QRB5165: 1804.8 / 2419.2 / 2841.6 MHz (the
/// DT's 3091.2 MHz prime OPP is for faster bins). Capacity as
/// `topology_normalize_cpu_scale` computes it, floor(dmips·fmax·1024 /
/// max(dmips·fmax)): little 448·1804800·1024/(1024·2841600) = 284,
/// big 1024·2419200/2841600 = 871, prime 1024.
/// Energy model: frequencies are DT OPPs; voltages are NOT public (the
/// cpufreq-hw LUT supplies them), so the mV values are estimates of a
/// typical 7 nm DVFS curve (≈0.55-0.6 V at the lowest OPP rising to
/// 0.83 / 0.90 / 1.0 V at fmax). Power as the OPP library's DT
/// estimate: P[µW] = coeff · f[MHz] · V[V]².
pub(super) const RB5_EM: &[PdSpec] = &[
    PdSpec {
        cpus: &[0, 1, 2, 3],
        dyn_power_coeff: 105,
        opps: &[
            (300_000, 576),
            (691_200, 608),
            (1_075_200, 664),
            (1_516_800, 752),
            (1_804_800, 828),
        ],
    },
    PdSpec {
        cpus: &[4, 5, 6],
        dyn_power_coeff: 379,
        opps: &[
            (710_400, 576),
            (1_171_200, 624),
            (1_574_400, 700),
            (1_958_400, 788),
            (2_419_200, 900),
        ],
    },
    PdSpec {
        cpus: &[7],
        dyn_power_coeff: 444,
        opps: &[
            (844_800, 584),
            (1_305_600, 640),
            (1_862_400, 740),
            (2_361_600, 860),
            (2_841_600, 1000),
        ],
    },
];

/// Orion O6 (CIX P1 / CD8180, "sky1"): arch/arm64/boot/dts/cix/sky1.dtsi
/// gives CPU0-3 Cortex-A520 `capacity-dmips-mhz` 403 and CPU4-11
/// Cortex-A720 1024, all in one `cluster0`; one 12 MiB L3 (lscpu reports a
/// single L3 instance), so MC spans all 12. CIX states the A720s are
/// specced at 2.6 GHz and 2.5 GHz (two classes) and the A520s run at 1.8
/// GHz (800 MHz minimum). Which A720 pairs are the faster ones is not
/// documented (the vendor DT puts CPU4-5, 6-7, 8-9, 10-11 on separate
/// DVFS clocks): ESTIMATE CPU4-7 at 2.5 GHz, CPU8-11 at 2.6 GHz.
/// Capacities: 403·1800/2600 = 279, 1024·2500/2600 = 984, 1024.
/// No DT energy data exists (the seeds ran it without EAS): one PD per
/// capacity class with ESTIMATED coefficients (A520 70, A720 300,
/// scaled from the A55/A77 values above) and estimated voltages.
pub(super) const ORION6_EM: &[PdSpec] = &[
    PdSpec {
        cpus: &[0, 1, 2, 3],
        dyn_power_coeff: 70,
        opps: &[
            (800_000, 600),
            (1_200_000, 650),
            (1_500_000, 720),
            (1_800_000, 800),
        ],
    },
    PdSpec {
        cpus: &[4, 5, 6, 7],
        dyn_power_coeff: 300,
        opps: &[
            (800_000, 600),
            (1_500_000, 700),
            (2_000_000, 800),
            (2_500_000, 950),
        ],
    },
    PdSpec {
        cpus: &[8, 9, 10, 11],
        dyn_power_coeff: 300,
        opps: &[
            (800_000, 600),
            (1_500_000, 700),
            (2_000_000, 800),
            (2_600_000, 1000),
        ],
    },
];

pub(super) fn shape(
    nodes: u32,
    llcs_per_package: u32,
    cores_per_cluster: u32,
    smt: u32,
    capacities: Vec<u32>,
    remote_distance: u32,
) -> CustomMachine {
    CustomMachine {
        nodes,
        packages_per_node: 1,
        llcs_per_package,
        clusters_per_llc: 1,
        cores_per_cluster,
        smt,
        capacities,
        remote_distance,
    }
}

pub(super) fn preset(name: &str) -> Option<Desc> {
    let (m, reclaim, energy): (CustomMachine, u32, &'static [PdSpec]) = match name {
        "rb5" => {
            let caps = vec![284, 284, 284, 284, 871, 871, 871, 1024];
            (shape(1, 1, 8, 1, caps, 20), RECLAIM_DISTANCE, RB5_EM)
        }
        "orion6" => {
            let mut caps = vec![279; 4];
            caps.extend([984; 4]);
            caps.extend([1024; 4]);
            (shape(1, 1, 12, 1, caps, 20), RECLAIM_DISTANCE, ORION6_EM)
        }
        // Xeon Silver 4314 (Intel ARK: 16 cores, 32 threads, 24 MB L3) in
        // two sockets; Dietmar's seed: cpu0 domains SMT {0,32}, MC (one
        // socket), NUMA (all), distances [[10,20],[20,10]].
        "xeon-4314-2s" => (shape(2, 1, 16, 2, vec![], 20), RECLAIM_DISTANCE, &[]),
        // AWS Graviton3: 64 Neoverse-V1 cores, no SMT, one shared 32 MB
        // L3, one node; Ryan's seed: "single flat MC domain".
        "graviton3" => (shape(1, 1, 64, 1, vec![], 20), RECLAIM_DISTANCE, &[]),
        // Prateek's 2 x 128C/256T 4th-gen EPYC, taken as Bergamo (EPYC
        // 9754, Zen 4c): 8 CCDs x 2 CCX x 8 cores per socket, 16 MB L3 per
        // CCX (16 LLCs per socket), NPS1 = one node per socket. Distance
        // 32 is what 2P AMD platforms' SLIT commonly reports between
        // sockets (ESTIMATE: not in the seed). AMD Zen sets
        // node_reclaim_distance = 32 (arch/x86/kernel/cpu/amd.c), so the
        // NUMA level keeps WAKE_AFFINE/BALANCE_EXEC/FORK.
        "epyc-2x128c" => (shape(2, 16, 8, 2, vec![], 32), 32, &[]),
        // A generic 4-core/8-thread laptop (ESTIMATE, no seed data): one
        // LLC, one node, siblings {0,4},{1,5},...
        "laptop-4c8t" => (shape(1, 1, 4, 2, vec![], 20), RECLAIM_DISTANCE, &[]),
        // The QEMU guest of `eevdf kernel run` on one CPU; its default
        // costs are measured ones (`preset_costs`).
        "qemu-icount" => (shape(1, 1, 1, 1, vec![], 20), RECLAIM_DISTANCE, &[]),
        _ => return None,
    };
    Some(Desc {
        name: name.to_string(),
        shape: m,
        reclaim_distance: reclaim,
        energy,
    })
}

pub(super) fn resolve(spec: &MachineSpec) -> Result<Desc, String> {
    match spec {
        MachineSpec::Flat(n) => {
            if *n == 0 || *n > MAX_CPUS {
                return Err(format!(
                    "machine: flat CPU count {n} outside 1..={MAX_CPUS}"
                ));
            }
            let name = if *n == 1 {
                "up".to_string()
            } else {
                format!("smp{n}")
            };
            Ok(Desc {
                name,
                shape: CustomMachine::smp(*n, 1),
                reclaim_distance: RECLAIM_DISTANCE,
                energy: &[],
            })
        }
        MachineSpec::Preset(name) => preset(name).ok_or_else(|| {
            format!(
                "machine: unknown preset {name:?} (known: {})",
                PRESET_NAMES.join(", ")
            )
        }),
        MachineSpec::Custom(m) => {
            m.validate()?;
            Ok(Desc {
                name: "custom".to_string(),
                shape: m.clone(),
                reclaim_distance: RECLAIM_DISTANCE,
                energy: &[],
            })
        }
    }
}
