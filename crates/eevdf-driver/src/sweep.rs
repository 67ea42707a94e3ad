//! A sweep: one scenario run over a grid of axis values (`--set` keys,
//! feature sets, machines, seeds), cell by cell. The grid is a pure
//! function of the scenario and the axes, so a cell's index names the
//! same run everywhere: `--shard I/N` runs the cells `I, I+N, I+2N, ...`
//! and `merge` joins shards back into the unsharded output, byte for
//! byte. Running cells in parallel is the caller's business (the CLI
//! uses rayon; this crate stays single-threaded for the page).

use eevdf_scenario::scenario::Scenario;
use eevdf_scenario::{report, ParseError};

mod lines;
mod summary;

pub use lines::{merge, read_line, Line, LINE_SCHEMA};
pub use summary::{series, summary, Point, Series, PERCENTILES};

/// At most this many cells in one grid: each is a whole run.
pub const MAX_CELLS: usize = 4096;

/// At most this many estimated events (the cost model's, summed over
/// the cells) in one process: about an hour of every core's time here.
/// More is for `--shard`.
pub const MAX_RUN_EVENTS: u64 = 8 * eevdf_sim::cost::MAX_EVENTS;

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
}

impl Axis {
    /// The name a result line gives the axis.
    pub fn name(&self) -> &str {
        match self {
            Axis::Set { key, .. } => key,
            Axis::Features(_) => "features",
            Axis::Machine(_) => "machine",
            Axis::Seeds(_) => "seed",
        }
    }

    fn len(&self) -> usize {
        match self {
            Axis::Set { values, .. } | Axis::Features(values) | Axis::Machine(values) => {
                values.len()
            }
            Axis::Seeds(s) => s.len(),
        }
    }

    fn value(&self, i: usize) -> String {
        match self {
            Axis::Set { values, .. } | Axis::Features(values) | Axis::Machine(values) => {
                values[i].clone()
            }
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

    /// The cost model's estimate of `cells`' events, summed; refuses
    /// more than [`MAX_RUN_EVENTS`].
    pub fn budget(&self, cells: &[usize]) -> Result<u64, String> {
        let mut events: u64 = 0;
        for &i in cells {
            if let Ok(sc) = self.scenario(i) {
                let cfg = sc.sim_config();
                let cost = eevdf_sim::cost::Cost::of(&cfg, sc.machine.nr_cpus());
                events = events.saturating_add(cost.events);
            }
        }
        if events > MAX_RUN_EVENTS {
            return Err(format!(
                "the runs add up to about {} M events, over {} M for one process; \
                 split them with --shard I/N or sweep fewer values",
                events / 1_000_000,
                MAX_RUN_EVENTS / 1_000_000
            ));
        }
        Ok(events)
    }

    /// Runs cell `i` and returns its result line (a skipped cell says
    /// why); `progress` is the batch run's.
    pub fn run_cell(&self, i: usize, progress: &mut dyn FnMut(u64)) -> String {
        let values = self.values(i);
        match self.scenario(i) {
            Ok(sc) => {
                let b = crate::batch::run(&sc, None, progress);
                let json = report::json(&sc.to_text(), &b.result);
                lines::result_line(&self.id, i, self.cells, &values, json.trim_end())
            }
            Err(e) => lines::skipped_line(&self.id, i, self.cells, &values, &e.message_with_hint()),
        }
    }
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
