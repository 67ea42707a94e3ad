//! The page's default preset against its kernel reference
//! (`tests/kernel-ref/default.7.2.jsonl`, written by `make default-ref`:
//! an `eevdf sweep --kernel 7.2` of the baseline and each flip, five
//! seeds). `eevdf kernel fidelity-doc` turns it into the page's kernel
//! rows for `default` and a section of `docs/fidelity.md` that holds
//! each Try button's claim against both sides.

use eevdf_scenario::presets::{preset, Flip, Preset};
use eevdf_scenario::scenario::Scenario;
use serde_json::Value;

use crate::fidelity::{median, within_2x};
use crate::sweep_line::{self, axes, bare_text};

/// One kernel cell: its features value and the result's by-name latencies.
#[derive(Debug)]
struct Cell {
    features: String,
    release: String,
    result: Value,
}

/// The reference, grouped by the features axis (first value: baseline).
#[derive(Debug)]
pub struct DefaultRef {
    preset: &'static Preset,
    baseline: String,
    cells: Vec<Cell>,
}

const PCTS: [&str; 5] = ["p50", "p90", "p99", "p99_9", "max"];

impl DefaultRef {
    /// Parses the sweep's JSON lines; every cell must be a kernel's run
    /// of the default preset's text, all on one kernel.
    pub fn parse(jsonl: &str) -> Result<DefaultRef, String> {
        let preset = preset("default").ok_or("no default preset")?;
        let mut cells = Vec::new();
        for (n, v) in sweep_line::cells(jsonl) {
            let v = v.map_err(|e| format!("line {n}: {e}"))?;
            let axes = axes(&v);
            let result = v["result"].clone();
            let source = &result["source"];
            if source["kind"] != "kernel" {
                return Err(format!("line {n}: not a kernel cell"));
            }
            let text = result["scenario"].as_str().unwrap_or("");
            if bare_text(text) != bare_text(preset.text) {
                return Err(format!(
                    "line {n}: not the default preset's text (hint: make default-ref)"
                ));
            }
            cells.push(Cell {
                features: axes.get("features").cloned().unwrap_or_default(),
                release: source["kernel"].as_str().unwrap_or("?").to_string(),
                result,
            });
        }
        let first = cells.first().ok_or("no cells")?;
        if let Some(c) = cells.iter().find(|c| c.release != first.release) {
            return Err(format!("two kernels: {} and {}", first.release, c.release));
        }
        let baseline = first.features.clone();
        Ok(DefaultRef {
            preset,
            baseline,
            cells,
        })
    }

    /// The kernel's values of `task`'s `pct` (µs) over the cells of `features`.
    fn kernel(&self, features: &str, task: &str, pct: &str) -> Vec<f64> {
        self.cells
            .iter()
            .filter(|c| c.features == features)
            .filter_map(|c| c.result["by_name"][task]["latency_us"][pct].as_f64())
            .collect()
    }

    fn seeds(&self) -> usize {
        self.cells
            .iter()
            .filter(|c| c.features == self.baseline)
            .count()
    }

    /// The simulator's runs of the same seeds, with `token` applied.
    fn sim_runs(&self, token: Option<&str>) -> Vec<eevdf_sim::SimResult> {
        (1..=self.seeds())
            .map(|seed| {
                let mut sc = Scenario::parse(self.preset.text).expect("the default parses");
                sc.set(&format!("seed={seed}")).expect("a seed");
                if let Some(t) = token {
                    sc.apply_features(t).expect("a flip token");
                }
                eevdf_sim::simulate(sc.sim_config())
            })
            .collect()
    }

    /// The kernel's effect of `f` on its task's percentile: the
    /// baseline's and the flip's values (µs, one per seed).
    pub fn kernel_flip(&self, f: &Flip) -> (Vec<f64>, Vec<f64>) {
        let pct = key(f.pct);
        (
            self.kernel(&self.baseline, f.task, pct),
            self.kernel(f.token, f.task, pct),
        )
    }

    /// The kernel series the reference ran (`7.2.13+deb14-cloud-amd64`).
    pub fn release(&self) -> &str {
        &self.cells[0].release
    }

    /// The timer tasks (those with samples), in the scenario's order.
    fn tasks(&self) -> Vec<String> {
        let sc = Scenario::parse(self.preset.text).expect("the default parses");
        sc.sim
            .tasks
            .iter()
            .map(|t| t.name.clone())
            .filter(|n| {
                self.cells
                    .iter()
                    .any(|c| c.result["by_name"][n.as_str()]["samples"].as_u64() > Some(0))
            })
            .collect()
    }

    /// Page rows (`kernel_ref.txt` lines) for the baseline: per task,
    /// the kernel's medians and the verdict (the simulator within 2x at
    /// p50 to p99.9).
    pub fn page_rows(&self) -> String {
        let mut o = String::new();
        let release = self.release();
        let series = release.split('.').take(2).collect::<Vec<_>>().join(".");
        let runs = self.sim_runs(None);
        for task in self.tasks() {
            let k: Vec<u64> = PCTS
                .iter()
                .map(|p| med_ns(&self.kernel(&self.baseline, &task, p)))
                .collect();
            let s: Vec<u64> = PCTS
                .iter()
                .map(|p| med_ns(&sim_values(&runs, &task, p)))
                .collect();
            let agrees = (0..4).all(|i| within_2x(s[i], k[i]));
            let samples = median(
                &self
                    .cells
                    .iter()
                    .filter(|c| c.features == self.baseline)
                    .filter_map(|c| c.result["by_name"][task.as_str()]["samples"].as_u64())
                    .collect::<Vec<_>>(),
            );
            o.push_str(&format!(
                "default {task} {series} {release} {} {samples} {} {} {} {} {} {}\n",
                self.seeds(),
                k[0],
                k[1],
                k[2],
                k[3],
                k[4],
                if agrees { "agrees" } else { "differs" }
            ));
        }
        o
    }

    /// The `docs/fidelity.md` section: each flip on both sides.
    pub fn markdown(&self) -> String {
        let mut o = format!(
            "\n## default: the page's default preset\n\n{}. Its Try buttons say how each flip \
             moves a percentile; the kernel's medians over {} seeds ({}), the spread (max \
             minus min, either side) and the simulator's medians over the same seeds, \
             running the preset as the page does. \
             `make default-ref` reruns the kernel side; `crates/eevdf-kernel/tests/default_flips.rs` \
             holds the kernel to each claim, `crates/eevdf-scenario/tests/flips.rs` the \
             simulator.\n\n",
            self.preset.title,
            self.seeds(),
            self.release()
        );
        o.push_str("| flip | task pct | the page says | kernel µs | kernel effect | spread µs | sim µs | sim effect | agrees |\n");
        o.push_str("|---|---|---|---:|---:|---:|---:|---:|---|\n");
        let base = self.sim_runs(None);
        for f in self.preset.flips {
            o.push_str(&self.flip_row(f, &base));
        }
        o.push('\n');
        o
    }

    fn flip_row(&self, f: &Flip, base: &[eevdf_sim::SimResult]) -> String {
        let pct = key(f.pct);
        let (kb, kf) = self.kernel_flip(f);
        let (sb, sf) = (
            sim_values(base, f.task, pct),
            sim_values(&self.sim_runs(Some(f.token)), f.task, pct),
        );
        let (ka, kz, sa, sz) = (med(&kb), med(&kf), med(&sb), med(&sf));
        let spread = range(&kb).max(range(&kf));
        let ke = (kz - ka) / ka * 100.0;
        let se = (sz - sa) / sa * 100.0;
        let ok = (kz - ka).abs() > spread
            && ke.abs() >= 20.0
            && se.abs() >= 20.0
            && (ke > 0.0) == f.rises
            && (se > 0.0) == f.rises;
        format!(
            "| {} | {} {} | {} | {ka:.0} → {kz:.0} | {ke:+.0} % | {spread:.0} | {sa:.0} → {sz:.0} | {se:+.0} % | {} |\n",
            f.token,
            f.task,
            f.pct,
            if f.rises { "rises" } else { "falls" },
            if ok { "yes" } else { "**no**" }
        )
    }
}

/// A percentile's key in the result JSON (`p99.9` is `p99_9`).
fn key(pct: &str) -> &str {
    if pct == "p99.9" {
        "p99_9"
    } else {
        pct
    }
}

/// `task`'s `pct` (µs) in each run.
fn sim_values(runs: &[eevdf_sim::SimResult], task: &str, pct: &str) -> Vec<f64> {
    runs.iter()
        .map(|r| {
            let l = r
                .by_name
                .iter()
                .find(|n| n.name == task)
                .map(|n| n.latency)
                .unwrap_or_default();
            let ns = match pct {
                "p50" => l.p50,
                "p90" => l.p90,
                "p99" => l.p99,
                "p99_9" => l.p99_9,
                _ => l.max,
            };
            ns as f64 / 1e3
        })
        .collect()
}

/// The median (NaN for none).
pub fn med(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn med_ns(v: &[f64]) -> u64 {
    (med(v) * 1e3).round() as u64
}

/// Max minus min.
pub fn range(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
}
