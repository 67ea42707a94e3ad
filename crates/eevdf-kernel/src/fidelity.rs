//! The fidelity set: published one-CPU scenarios run on the simulator and
//! on real kernels, and the rules that say whether they agree.
//!
//! A *row* is a workload, a *variant* a feature change over it. For every
//! (row, variant, kernel) the kernel is run over several seeds; the
//! simulator runs the same scenario with the kernel's read-back features
//! line, base slice, HZ and preemption model. Agreement is judged on the
//! timer task (`ct`) at p50, p90, p99 and p99.9:
//!
//! * level: the simulator's median over seeds is within 2x of the
//!   kernel's median over seeds;
//! * direction: where the kernel's effect of a variant (variant median
//!   minus default median) is larger than its spread over seeds (max minus
//!   min of either side's seeds), the simulator's effect has the same sign.

use eevdf_scenario::scenario::Scenario;
use eevdf_sim::LatencyStats;
use serde::{Deserialize, Serialize};

/// Guest (and simulated) duration of every row: 10,000 timer samples at a
/// 1 ms period, so p99.9 rests on the 10 slowest.
pub const DURATION: &str = "10s";
/// Seeds per (row, variant, kernel).
pub const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];
/// Kernel series of the set.
pub const KERNELS: [&str; 2] = ["7.2", "6.12"];
/// The name whose latency is judged.
pub const JUDGED: &str = "ct";

/// One workload.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub name: &'static str,
    pub title: &'static str,
    /// Task lines after the common cyclictest line.
    pub tasks: &'static str,
}

/// The cyclictest-style timer every row has: 1 ms, 20 µs of work, a
/// 100 µs custom slice (shorter than the 700 µs base slice, so
/// PREEMPT_SHORT matters).
const CT: &str = "task ct kind=timer period=1ms run=20us slice=100us";

pub const ROWS: [Row; 5] = [
    Row {
        name: "ct-alone",
        title: "cyclictest alone",
        tasks: "",
    },
    Row {
        name: "ct-1hog",
        title: "cyclictest against one CPU hog",
        tasks: "task hog kind=hog",
    },
    Row {
        name: "ct-4hog",
        title: "cyclictest against four CPU hogs",
        tasks: "task hog kind=hog count=4",
    },
    Row {
        name: "ct-rtapp",
        title: "cyclictest against two rt-app tasks (8.2/17.8 ms)",
        tasks: "task rt kind=periodic count=2 run=8177us sleep=17777us",
    },
    Row {
        name: "ct-hackbench",
        title: "cyclictest against hackbench (1 group, 10 fds, threads, pipes)",
        tasks: "task hb kind=hackbench groups=1 fds=10 mode=thread ipc=pipe loops=0",
    },
];

/// One feature change over a row.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub name: &'static str,
    /// Feature tokens written to debugfs (empty = the kernel's defaults).
    pub features: &'static str,
    /// Drop ct's custom slice (every task on the base slice).
    pub equal_slices: bool,
}

pub const VARIANTS: [Variant; 5] = [
    Variant {
        name: "default",
        features: "",
        equal_slices: false,
    },
    Variant {
        name: "NO_PREEMPT_SHORT",
        features: "NO_PREEMPT_SHORT",
        equal_slices: false,
    },
    Variant {
        name: "NO_RUN_TO_PARITY",
        features: "NO_RUN_TO_PARITY",
        equal_slices: false,
    },
    Variant {
        name: "NEXT_BUDDY",
        features: "NEXT_BUDDY",
        equal_slices: false,
    },
    Variant {
        name: "equal-slices",
        features: "",
        equal_slices: true,
    },
];

pub fn row(name: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.name == name)
}

pub fn variant(name: &str) -> Option<&'static Variant> {
    VARIANTS.iter().find(|v| v.name == name)
}

/// The scenario text of a row under a variant (seed 1; runs set theirs).
pub fn scenario_text(row: &Row, v: &Variant) -> String {
    let ct = if v.equal_slices {
        CT.replace(" slice=100us", "")
    } else {
        CT.to_string()
    };
    let mut t = format!(
        "eevdf-scenario v1\n# fidelity row {} ({})\nmachine up\n",
        row.name, v.name
    );
    t.push_str(&format!("duration {DURATION}\n"));
    if !v.features.is_empty() {
        t.push_str(&format!("features {}\n", v.features));
    }
    t.push_str(&ct);
    t.push('\n');
    if !row.tasks.is_empty() {
        t.push_str(row.tasks);
        t.push('\n');
    }
    t.push_str("end\n");
    t
}

/// The kernel side of one seed: what the kernel read back and the judged
/// latencies (ns).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSeed {
    pub seed: u64,
    pub features: String,
    pub preempt: String,
    pub base_slice_ns: u64,
    pub hz: Option<u32>,
    pub samples: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
}

impl KernelSeed {
    pub fn from_stats(seed: u64, src: &eevdf_scenario::report::Source, s: &LatencyStats) -> Self {
        KernelSeed {
            seed,
            features: src.features.clone(),
            preempt: src.preempt.clone(),
            base_slice_ns: src.base_slice_ns,
            hz: src.hz,
            samples: s.samples,
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
            p99_9: s.p99_9,
            max: s.max,
        }
    }

    fn pcts(&self) -> [u64; 4] {
        [self.p50, self.p90, self.p99, self.p99_9]
    }
}

/// The committed reference file of one (row, variant, kernel):
/// `tests/kernel-ref/ROW.VARIANT.KERNEL.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub row: String,
    pub variant: String,
    /// Kernel series and exact release.
    pub series: String,
    pub kernel: String,
    pub package: String,
    pub package_version: String,
    pub kernel_sha256: String,
    pub qemu: String,
    pub icount_shift: u32,
    pub guest_sha256: String,
    /// The commit of this repository the runs were made with.
    pub commit: String,
    /// How to make one seed's run again.
    pub command: String,
    pub seeds: Vec<KernelSeed>,
}

impl Reference {
    pub fn file_name(row: &str, variant: &str, series: &str) -> String {
        format!("{row}.{variant}.{series}.json")
    }

    /// The scenario the simulator runs for `seed`: the row's text with the
    /// kernel's read-back features line, base slice, HZ and preemption
    /// model applied over the profile closest to the kernel.
    pub fn sim_scenario(&self, seed: &KernelSeed) -> Result<Scenario, String> {
        let row = row(&self.row).ok_or_else(|| format!("unknown row {}", self.row))?;
        let v =
            variant(&self.variant).ok_or_else(|| format!("unknown variant {}", self.variant))?;
        let mut sc = Scenario::parse(&scenario_text(row, v)).map_err(|e| e.to_string())?;
        let profile = if self.series.starts_with("6.") {
            "v6.12"
        } else {
            "v7.1"
        };
        sc.set(&format!("kernel={profile}"))
            .map_err(|e| e.to_string())?;
        let paste = format!(
            "{}\nbase_slice_ns {}\npreempt ({})\n",
            seed.features, seed.base_slice_ns, seed.preempt
        );
        eevdf_scenario::debugfs::apply(&mut sc, &paste).map_err(|e| e.to_string())?;
        if let Some(hz) = seed.hz {
            sc.set(&format!("hz={hz}")).map_err(|e| e.to_string())?;
        }
        sc.set(&format!("seed={}", seed.seed))
            .map_err(|e| e.to_string())?;
        Ok(sc)
    }
}

/// Percentile names, in [`KernelSeed::pcts`] order.
pub const PCTS: [&str; 4] = ["p50", "p90", "p99", "p99.9"];

/// Median of a non-empty list (the lower middle for even lengths).
pub fn median(v: &[u64]) -> u64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    s[(s.len() - 1) / 2]
}

/// Per-percentile medians and spreads (max - min) over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Summary {
    pub median: [u64; 4],
    pub spread: [u64; 4],
}

pub fn summarize(seeds: &[[u64; 4]]) -> Summary {
    let mut s = Summary::default();
    for i in 0..4 {
        let col: Vec<u64> = seeds.iter().map(|p| p[i]).collect();
        if col.is_empty() {
            continue;
        }
        s.median[i] = median(&col);
        s.spread[i] = col.iter().max().unwrap_or(&0) - col.iter().min().unwrap_or(&0);
    }
    s
}

pub fn kernel_summary(r: &Reference) -> Summary {
    let p: Vec<[u64; 4]> = r.seeds.iter().map(KernelSeed::pcts).collect();
    summarize(&p)
}

/// Whether `sim` is within 2x of `kernel` (both in ns).
pub fn within_2x(sim: u64, kernel: u64) -> bool {
    let (s, k) = (u128::from(sim), u128::from(kernel));
    s * 2 >= k && s <= k * 2
}

/// The direction verdict of one variant's effect at one percentile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The kernel's effect is within its spread over seeds: not judged.
    Noise,
    Agrees,
    Differs,
}

/// `kd`, `kv`: kernel default and variant summaries; `sd`, `sv`: the
/// simulator's; `i`: the percentile.
pub fn direction(kd: &Summary, kv: &Summary, sd: &Summary, sv: &Summary, i: usize) -> Direction {
    let ke = kv.median[i] as i128 - kd.median[i] as i128;
    let spread = kd.spread[i].max(kv.spread[i]) as i128;
    if ke.abs() <= spread {
        return Direction::Noise;
    }
    let se = sv.median[i] as i128 - sd.median[i] as i128;
    if se.signum() == ke.signum() {
        Direction::Agrees
    } else {
        Direction::Differs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_and_variant_is_a_valid_one_cpu_scenario() {
        for r in &ROWS {
            for v in &VARIANTS {
                let t = scenario_text(r, v);
                let sc =
                    Scenario::parse(&t).unwrap_or_else(|e| panic!("{}/{}: {e}", r.name, v.name));
                assert_eq!(sc.sim.nr_cpus, 1);
                assert_eq!(sc.sim.tasks[0].name, JUDGED);
                assert_eq!(sc.sim.tasks[0].slice_ns.is_none(), v.equal_slices);
            }
        }
    }

    #[test]
    fn the_rules_judge_level_and_direction() {
        assert!(within_2x(100, 200) && within_2x(200, 100) && !within_2x(99, 200));
        assert!(!within_2x(0, 1) && within_2x(0, 0));
        assert_eq!(median(&[5, 1, 3]), 3);
        assert_eq!(median(&[4, 1, 3, 2]), 2);
        let s = |m: u64, sp: u64| Summary {
            median: [m; 4],
            spread: [sp; 4],
        };
        // Kernel effect +50 over a spread of 10: judged.
        assert_eq!(
            direction(&s(100, 10), &s(150, 5), &s(10, 0), &s(20, 0), 0),
            Direction::Agrees
        );
        assert_eq!(
            direction(&s(100, 10), &s(150, 5), &s(10, 0), &s(5, 0), 0),
            Direction::Differs
        );
        assert_eq!(
            direction(&s(100, 10), &s(150, 5), &s(10, 0), &s(10, 0), 0),
            Direction::Differs
        );
        // Within the spread: noise.
        assert_eq!(
            direction(&s(100, 60), &s(150, 5), &s(10, 0), &s(5, 0), 0),
            Direction::Noise
        );
    }
}
