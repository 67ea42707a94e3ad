//! A sweep: one scenario run over a grid of axis values (`--set` keys,
//! feature sets, machines, seeds, simulator or kernel), cell by cell.
//! A kernel cell runs through the caller's [`KernelRunner`]. The grid is a pure
//! function of the scenario and the axes, so a cell's index names the
//! same run everywhere: `--shard I/N` runs the cells `I, I+N, I+2N, ...`
//! and `merge` joins shards back into the unsharded output, byte for
//! byte. Running cells in parallel is the caller's business (the CLI
//! uses rayon; this crate stays single-threaded for the page).

use eevdf_scenario::scenario::Scenario;
use eevdf_scenario::{report, ParseError};

mod lines;
mod spec;
mod summary;

pub use lines::{merge, read_line, Line, LINE_SCHEMA};
pub use spec::{Spec, MAX_SPEC_BYTES};
pub use summary::{series, summary, tasks, Point, Series, PERCENTILES};

/// At most this many cells in one grid: each is a whole run.
pub const MAX_CELLS: usize = 4096;

/// At most this many estimated events (the cost model's, summed over
/// the cells) in one process: about an hour of every core's time here.
/// More is for `--shard`.
pub const MAX_RUN_EVENTS: u64 = 8 * eevdf_sim::cost::MAX_EVENTS;

/// At most this much guest time (times CPUs) of kernel cells in one
/// process: under `-icount` an hour of guest time is hours of wall time.
pub const MAX_KERNEL_GUEST_NS: u64 = 3_600 * 1_000_000_000;

/// One axis of a sweep and its values, in the order they run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Axis {
    /// `--vary KEY=V1,V2,...`: any `--set` key (`task.hb.slice`, `hz`,
    /// `sysctl.base_slice_ns`, ...).
    Set { key: String, values: Vec<String> },
    /// `--features-axis A,B`: feature tokens applied over the scenario's
    /// (`+` joins several tokens into one value).
    Features(Vec<String>),
    /// `--machine smp2,smp4`.
    Machine(Vec<String>),
    /// `--seeds 1..10` or `--seeds 1,5,9`.
    Seeds(Vec<u64>),
    /// `--kernel sim,7.2`: where a cell runs, on the simulator ([`SIM`])
    /// or on a kernel (a series or a bzImage path) that the caller
    /// boots; the scenario is the same.
    Kernel(Vec<String>),
}

/// The [`Axis::Kernel`] value that runs a cell on the simulator.
pub const SIM: &str = "sim";

/// Where a cell runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine<'a> {
    Sim,
    /// A kernel as the axis names it (`7.2`, a path).
    Kernel(&'a str),
}

/// Runs a cell on a kernel (the CLI boots QEMU): the scenario and the
/// kernel's name give the `eevdf.result.v1` JSON, or why the cell is
/// skipped.
pub type KernelRunner<'a> = dyn Fn(&Scenario, &str) -> Result<String, String> + Sync + 'a;

impl Axis {
    /// The name a result line gives the axis.
    pub fn name(&self) -> &str {
        match self {
            Axis::Set { key, .. } => key,
            Axis::Features(_) => "features",
            Axis::Machine(_) => "machine",
            Axis::Seeds(_) => "seed",
            Axis::Kernel(_) => "kernel",
        }
    }

    fn len(&self) -> usize {
        match self {
            Axis::Set { values, .. }
            | Axis::Features(values)
            | Axis::Machine(values)
            | Axis::Kernel(values) => values.len(),
            Axis::Seeds(s) => s.len(),
        }
    }

    fn value(&self, i: usize) -> String {
        match self {
            Axis::Set { values, .. }
            | Axis::Features(values)
            | Axis::Machine(values)
            | Axis::Kernel(values) => values[i].clone(),
            Axis::Seeds(s) => s[i].to_string(),
        }
    }

    /// Applies value `i` to `sc`.
    fn apply(&self, sc: &mut Scenario, i: usize) -> Result<(), ParseError> {
        match self {
            Axis::Set { key, values } => sc.set(&format!("{key}={}", values[i])),
            Axis::Features(v) => sc.apply_features(&v[i].replace('+', " ")),
            Axis::Machine(v) => sc.set(&format!("machine={}", v[i])),
            Axis::Seeds(s) => sc.set(&format!("seed={}", s[i])),
            Axis::Kernel(_) => Ok(()),
        }
    }
}

/// Reads `--seeds`: `A..B` (both included) or a comma list.
pub fn parse_seeds(arg: &str) -> Result<Vec<u64>, String> {
    let num = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{s}` is not a seed (an integer)"))
    };
    let seeds = match arg.split_once("..") {
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b)?);
            if b < a {
                return Err(format!("`{arg}` is empty: {b} is below {a}"));
            }
            if b - a >= MAX_CELLS as u64 {
                return Err(format!("`{arg}` is over {MAX_CELLS} seeds"));
            }
            (a..=b).collect()
        }
        None => arg.split(',').map(num).collect::<Result<Vec<_>, _>>()?,
    };
    Ok(seeds)
}

/// Splits a comma list of axis values (none may be empty).
pub fn parse_values(arg: &str) -> Result<Vec<String>, String> {
    let v: Vec<String> = arg.split(',').map(|s| s.trim().to_string()).collect();
    if v.iter().any(String::is_empty) {
        return Err(format!("`{arg}` has an empty value"));
    }
    Ok(v)
}

/// A scenario and its axes: the cells are every combination of axis
/// values, the last axis varying fastest.
#[derive(Clone, Debug)]
pub struct Grid {
    base: Scenario,
    axes: Vec<Axis>,
    cells: usize,
    id: String,
}

impl Grid {
    /// Checks the grid: at least one cell and at most [`MAX_CELLS`], no
    /// axis named twice, and every value runs in some cell (a
    /// combination that cannot run is a skipped cell instead).
    pub fn new(base: Scenario, axes: Vec<Axis>) -> Result<Grid, String> {
        let mut cells: usize = 1;
        for (i, a) in axes.iter().enumerate() {
            if a.len() == 0 {
                return Err(format!("axis `{}` has no values", a.name()));
            }
            if axes[..i].iter().any(|b| b.name() == a.name()) {
                return Err(format!("axis `{}` is given twice", a.name()));
            }
            cells = cells
                .checked_mul(a.len())
                .filter(|&c| c <= MAX_CELLS)
                .ok_or_else(|| {
                    format!("the grid is over {MAX_CELLS} runs; sweep fewer values or shard it")
                })?;
        }
        let id = grid_id(&base, &axes);
        let grid = Grid {
            base,
            axes,
            cells,
            id,
        };
        grid.check_values()?;
        Ok(grid)
    }

    /// Every axis value must run in some cell: a value no combination
    /// takes (a typo, a duration without a unit) is refused before any
    /// run. Building a cell is a parse, not a run.
    fn check_values(&self) -> Result<(), String> {
        let mut runs: Vec<Vec<Option<String>>> = self
            .axes
            .iter()
            .map(|a| vec![Some(String::new()); a.len()])
            .collect();
        for i in 0..self.cells {
            let picks = self.picks(i);
            let built = self.scenario(i);
            for (k, &v) in picks.iter().enumerate() {
                match &built {
                    Ok(_) => runs[k][v] = None,
                    Err(e) if runs[k][v].as_deref() == Some("") => {
                        runs[k][v] = Some(e.message_with_hint())
                    }
                    Err(_) => {}
                }
            }
        }
        for (a, values) in self.axes.iter().zip(&runs) {
            if let Some((v, Some(e))) = values.iter().enumerate().find(|(_, e)| e.is_some()) {
                return Err(format!("{} = {}: {e}", a.name(), a.value(v)));
            }
        }
        Ok(())
    }

    /// Cell `i`'s value index on each axis.
    fn picks(&self, i: usize) -> Vec<usize> {
        let mut rest = i;
        let mut picks = vec![0; self.axes.len()];
        for (k, a) in self.axes.iter().enumerate().rev() {
            picks[k] = rest % a.len();
            rest /= a.len();
        }
        picks
    }

    pub fn cells(&self) -> usize {
        self.cells
    }

    pub fn axes(&self) -> &[Axis] {
        &self.axes
    }

    /// Names the grid in every line, so `merge` refuses shards of two.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The cells shard `index` of `count` runs.
    pub fn shard(&self, index: usize, count: usize) -> Vec<usize> {
        (index..self.cells).step_by(count.max(1)).collect()
    }

    /// Cell `i`'s value on each axis.
    pub fn values(&self, i: usize) -> Vec<(String, String)> {
        self.axes
            .iter()
            .zip(self.picks(i))
            .map(|(a, v)| (a.name().to_string(), a.value(v)))
            .collect()
    }

    /// Cell `i`'s scenario: the base with each axis's value applied in
    /// axis order.
    pub fn scenario(&self, i: usize) -> Result<Scenario, ParseError> {
        let mut sc = self.base.clone();
        for (a, v) in self.axes.iter().zip(self.picks(i)) {
            a.apply(&mut sc, v)?;
        }
        Ok(sc)
    }

    /// Where cell `i` runs: on the kernel its [`Axis::Kernel`] value
    /// names, else on the simulator.
    pub fn engine(&self, i: usize) -> Engine<'_> {
        for (a, v) in self.axes.iter().zip(self.picks(i)) {
            if let Axis::Kernel(k) = a {
                if k[v] != SIM {
                    return Engine::Kernel(&k[v]);
                }
            }
        }
        Engine::Sim
    }

    /// What `cells` cost: the cost model's events of the simulator's,
    /// summed, and the guest time of the kernels'; refuses more than
    /// [`MAX_RUN_EVENTS`] or [`MAX_KERNEL_GUEST_NS`].
    pub fn budget(&self, cells: &[usize]) -> Result<Budget, String> {
        let mut b = Budget::default();
        for &i in cells {
            let Ok(sc) = self.scenario(i) else { continue };
            match self.engine(i) {
                Engine::Sim => {
                    let cost = eevdf_sim::cost::Cost::of(&sc.sim_config(), sc.machine.nr_cpus());
                    b.events = b.events.saturating_add(cost.events);
                }
                Engine::Kernel(_) => {
                    b.kernel_runs += 1;
                    let vcpu_ns = sc
                        .sim
                        .duration_ns
                        .saturating_mul(u64::from(sc.machine.nr_cpus().max(1)));
                    b.guest_ns = b.guest_ns.saturating_add(vcpu_ns);
                }
            }
        }
        let shard = "split them with --shard I/N or sweep fewer values";
        if b.events > MAX_RUN_EVENTS {
            return Err(format!(
                "the runs add up to about {} M events, over {} M for one process; {shard}",
                b.events / 1_000_000,
                MAX_RUN_EVENTS / 1_000_000
            ));
        }
        if b.guest_ns > MAX_KERNEL_GUEST_NS {
            return Err(format!(
                "the kernel runs add up to {} s of guest time (times CPUs), over {} s \
                 for one process; {shard}",
                b.guest_ns / 1_000_000_000,
                MAX_KERNEL_GUEST_NS / 1_000_000_000
            ));
        }
        Ok(b)
    }

    /// Runs cell `i` on the simulator and returns its result line (a
    /// skipped cell says why); a kernel cell is skipped, as in the page,
    /// which boots no kernel. `progress` is the batch run's.
    pub fn run_cell(&self, i: usize, progress: &mut dyn FnMut(u64)) -> String {
        let no_kernel = |_: &Scenario, k: &str| {
            Err(format!(
                "kernel {k}: only the CLI boots kernels (eevdf sweep --kernel)"
            ))
        };
        self.run_cell_on(i, progress, &no_kernel)
    }

    /// [`Grid::run_cell`], with kernel cells run by `kernel`.
    pub fn run_cell_on(
        &self,
        i: usize,
        progress: &mut dyn FnMut(u64),
        kernel: &KernelRunner,
    ) -> String {
        let sc = match self.scenario(i) {
            Ok(sc) => sc,
            Err(e) => return self.line(i, Err(&e.message_with_hint())),
        };
        let json = match self.engine(i) {
            Engine::Sim => {
                let b = crate::batch::run(&sc, None, progress);
                Ok(report::json(&sc.to_text(), &b.result))
            }
            Engine::Kernel(k) => kernel(&sc, k),
        };
        self.line(i, json.as_deref().map_err(String::as_str))
    }

    /// Cell `i`'s [`Line`] from a live run's finished rows (the page's
    /// pool), as [`read_line`] reads its JSON line as far as the summary
    /// and the chart look (`by_name`: samples and `latency_us`), without
    /// parsing JSON: a JSON parser (its float tables) was a tenth of the
    /// page's size. `Err` is why the cell was skipped.
    pub fn line_of_rows(&self, i: usize, outcome: Result<&[crate::live::Row], &str>) -> Line {
        use serde_json::{Map, Value};
        let result = outcome.ok().map(|rows| {
            let mut by_name = Map::new();
            for r in rows {
                let lat: Map<String, Value> = [
                    ("min", r.min),
                    ("mean", r.mean),
                    ("p50", r.p50),
                    ("p90", r.p90),
                    ("p99", r.p99),
                    ("p99_9", r.p99_9),
                    ("max", r.max),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), Value::from(v)))
                .collect();
                let mut n = Map::new();
                n.insert("samples".into(), Value::from(r.samples));
                n.insert("latency_us".into(), Value::Object(lat));
                by_name.insert(r.name.clone(), Value::Object(n));
            }
            let mut doc = Map::new();
            doc.insert("by_name".into(), Value::Object(by_name));
            Value::Object(doc)
        });
        Line {
            grid: self.id.clone(),
            cell: i,
            cells: self.cells,
            axes: self.values(i),
            result,
            skipped: outcome.err().map(str::to_string),
        }
    }

    /// Cell `i`'s line from a run made elsewhere (the page's worker
    /// pool): its `eevdf.result.v1` JSON, or why it was skipped.
    pub fn line(&self, i: usize, outcome: Result<&str, &str>) -> String {
        let values = self.values(i);
        match outcome {
            Ok(json) => lines::result_line(&self.id, i, self.cells, &values, json.trim_end()),
            Err(why) => lines::skipped_line(&self.id, i, self.cells, &values, why),
        }
    }
}

/// What the cells of one process cost (see [`Grid::budget`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// The cost model's events of the simulator's cells.
    pub events: u64,
    pub kernel_runs: usize,
    /// Guest time of the kernel cells, times their CPUs.
    pub guest_ns: u64,
}

trait MessageWithHint {
    fn message_with_hint(&self) -> String;
}

impl MessageWithHint for ParseError {
    fn message_with_hint(&self) -> String {
        match self.hint.is_empty() {
            true => self.message.clone(),
            false => format!("{} (hint: {})", self.message, self.hint),
        }
    }
}

/// A 64-bit FNV-1a of the base's canonical text and the axes. Written
/// out rather than a crate: it only tells grids apart, in the page too
/// (no crypto wanted), and must never change between builds.
fn grid_id(base: &Scenario, axes: &[Axis]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |s: &str| {
        for b in s.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(&base.to_text());
    for a in axes {
        eat(a.name());
        for v in 0..a.len() {
            eat(&a.value(v));
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests;
