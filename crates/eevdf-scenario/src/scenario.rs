//! Scenario text format v1: what to simulate, one directive per line.
//!
//! ```text
//! eevdf-scenario v1
//! engine 0.7
//! machine smp4
//! kernel v7.2
//! hz 250
//! duration 130s
//! warmup 1s
//! seed 1
//! preempt full
//! features NO_RUN_TO_PARITY PREEMPT_SHORT PS_SET_NEXT_BUDDY
//! sysctl base_slice_ns=2800000 migration_cost_ns=500000
//! costs switch=2us wake=5us migrate=20us
//! group /test-B weight=100
//! task ct kind=timer period=3777us run=20us slice=8ms group=/test-B
//! task hog count=2 kind=hog nice=5 cpus=0-3
//! end
//! ```
//!
//! Lines are at most [`MAX_COLUMNS`] characters, `#` starts a comment,
//! tokens are separated by whitespace, durations carry a unit (`ns`, `us`,
//! `ms`, `s`; decimal fractions allowed when the result is a whole number
//! of nanoseconds). The first directive is the header, the last is `end`.
//! [`Scenario::to_text`] prints the canonical form: fixed directive and
//! key order, default values left out, durations in the largest unit that
//! keeps them integral. Every error is a [`ParseError`] pointing at the
//! offending token.
//!
//! `costs` keys: `switch`, `wake`, `migrate` and `sleep` (a timer or
//! periodic task's own CPU per activation beyond its `run`; default 0,
//! so older texts keep their results), as [`eevdf_sim::Costs`] has them.
//!
//! `warmup` (default 0, so every older text keeps its results) leaves
//! wakeups that began before it out of the latency statistics, in the
//! simulator and in a kernel run alike.
//!
//! Without a `preempt` line the kernel profile's model applies
//! ([`PreemptModel::for_profile`]: `lazy` for 7.x, `voluntary` for 6.x),
//! except in a scenario made by engine 0.1, which always meant `full`.

use std::fmt;

use eevdf_core::features::FeatureError;
use eevdf_core::{FeatureSet, Policy, Profile};
use eevdf_sim::cost::{Cost, MAX_EVENTS, MAX_THREADS};
use eevdf_sim::topology::{CustomMachine, MachineSpec, Topology, PRESET_NAMES};
use eevdf_sim::{Costs, GroupSpec, Nanos, PreemptModel, SimConfig, TaskSpec, Workload};

use crate::ParseError;

/// The engine version printed in every scenario's `engine` line.
pub const ENGINE_VERSION: &str = "0.7";

/// `engine` (a checked `X.Y`) is older than `major.minor`.
pub fn engine_before(engine: &str, (major, minor): (u64, u64)) -> bool {
    let mut it = engine.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    let v = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    v < (major, minor)
}
/// Longest line, in characters.
pub const MAX_COLUMNS: usize = 72;
/// Longest scenario text, in bytes.
pub const MAX_BYTES: usize = 64 * 1024;
/// Most lines in a scenario text.
pub const MAX_LINES: usize = 1000;
/// Most CPUs of a machine (`smpN`).
pub const MAX_CPUS: u32 = 512;
/// Longest duration anywhere in a scenario (one hour).
pub const MAX_DURATION_NS: Nanos = 3600 * S;
/// The first line of every scenario.
pub const HEADER: &str = "eevdf-scenario v1";

/// Longest `--set` / `--features` argument, in bytes.
const MAX_ARG_BYTES: usize = 16 * 1024;
const US: Nanos = 1_000;
const MS: Nanos = 1_000_000;
const S: Nanos = 1_000_000_000;
const MAX_NAME: usize = 32;
const MAX_COUNT: u64 = 4096;

const DEFAULT_TIMER_RUN: Nanos = 20 * US;
const DEFAULT_HB_GROUPS: u32 = 1;
const DEFAULT_HB_FDS: u32 = 20;
pub const DEFAULT_HB_MSG_NS: Nanos = 2 * US;
/// Messages a pipe holds: 16 pages of 4 KiB with 100-byte writes.
const DEFAULT_HB_PIPE_MSGS: u32 = 655;
/// Messages a socket holds: a 208 KiB buffer at a 768-byte skb truesize
/// per 100-byte message.
const DEFAULT_HB_SOCKET_MSGS: u32 = 277;

/// The default capacity of a hackbench channel.
fn default_hb_msgs(pipe: bool) -> u32 {
    if pipe {
        DEFAULT_HB_PIPE_MSGS
    } else {
        DEFAULT_HB_SOCKET_MSGS
    }
}
const DEFAULT_SB_MESSAGES: u32 = 1;
const DEFAULT_SB_WORKERS: u32 = 4;
const DEFAULT_SB_REQUEST: Nanos = 100 * US;
const DEFAULT_SB_THINK: Nanos = MS;
const DEFAULT_GROUP_WEIGHT: u32 = 100;

const DIRECTIVES: &[&str] = &[
    "engine", "machine", "kernel", "hz", "duration", "warmup", "seed", "preempt", "features",
    "sysctl", "costs", "group", "task", "end",
];
const SETTABLE: &[&str] = &[
    "engine", "machine", "kernel", "hz", "duration", "warmup", "seed", "preempt", "features",
    "sysctl", "costs",
];
const HZ_VALUES: [u64; 4] = [100, 250, 300, 1000];
const KINDS: &[&str] = &["timer", "periodic", "hackbench", "schbench", "hog"];
const SYSCTL_KEYS: &[&str] = &["base_slice_ns", "migration_cost_ns", "energy_aware"];
const COST_KEYS: &[&str] = &["switch", "wake", "migrate", "sleep"];
const COMMON_KEYS: &[&str] = &[
    "nice", "policy", "slice", "cpus", "group", "slack", "start", "kernel", "ksection",
];
const UNIT_HINT: &str = "durations need a unit: ns, us, ms or s, e.g. 20us or 2.8ms";

/// The simulated machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Machine {
    /// `n` identical CPUs sharing one LLC; `up` is `Smp(1)`.
    Smp(u32),
    /// A seed machine (`rb5`, `xeon-4314-2s`, ...), see
    /// [`eevdf_sim::topology::PRESET_NAMES`].
    Preset(String),
    /// `machine custom nodes=.. llcs=.. cores=.. smt=.. ...`.
    Custom(CustomMachine),
}

/// Keys of `machine custom`, in canonical order.
const CUSTOM_KEYS: &[&str] = &[
    "nodes", "packages", "llcs", "clusters", "cores", "smt", "capacity", "distance",
];

impl Default for Machine {
    fn default() -> Self {
        Machine::Smp(1)
    }
}

impl Machine {
    /// Number of CPUs.
    pub fn nr_cpus(&self) -> u32 {
        match self {
            Machine::Smp(n) => *n,
            _ => Topology::build(&self.spec()).map_or(1, |t| t.nr_cpus()),
        }
    }

    /// The simulator's description of this machine.
    pub fn spec(&self) -> MachineSpec {
        match self {
            Machine::Smp(n) => MachineSpec::Flat(*n),
            Machine::Preset(p) => MachineSpec::Preset(p.clone()),
            Machine::Custom(c) => MachineSpec::Custom(c.clone()),
        }
    }

    /// The costs a scenario on this machine has unless its `costs`
    /// directive says otherwise: measured ones for `qemu-icount`
    /// ([`eevdf_sim::topology::preset_costs`]), [`Costs::default`] else.
    pub fn default_costs(&self) -> Costs {
        match self {
            Machine::Preset(p) => eevdf_sim::topology::preset_costs(p),
            _ => Costs::default(),
        }
    }

    /// Parses `up`, `smp2`, `smp4`, `smp8` or `smpN` (N in 1..=512).
    pub fn parse(s: &str) -> Option<Machine> {
        if s == "up" {
            return Some(Machine::Smp(1));
        }
        if PRESET_NAMES.contains(&s) {
            return Some(Machine::Preset(s.to_string()));
        }
        let n = parse_uint(s.strip_prefix("smp")?)?;
        let n = u32::try_from(n).ok()?;
        (1..=MAX_CPUS).contains(&n).then_some(Machine::Smp(n))
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Machine::Smp(1) => f.write_str("up"),
            Machine::Smp(n) => write!(f, "smp{n}"),
            Machine::Preset(p) => f.write_str(p),
            Machine::Custom(c) => {
                f.write_str("custom")?;
                // Only keys that differ from their defaults (all 1).
                for (k, v) in [
                    ("nodes", c.nodes),
                    ("packages", c.packages_per_node),
                    ("llcs", c.llcs_per_package),
                    ("clusters", c.clusters_per_llc),
                    ("cores", c.cores_per_cluster),
                    ("smt", c.smt),
                ] {
                    if v != 1 {
                        write!(f, " {k}={v}")?;
                    }
                }
                if !c.capacities.is_empty() {
                    f.write_str(" capacity=")?;
                    let mut runs: Vec<(u32, u32)> = Vec::new();
                    for cap in &c.capacities {
                        match runs.last_mut() {
                            Some((v, n)) if v == cap => *n += 1,
                            _ => runs.push((*cap, 1)),
                        }
                    }
                    let parts: Vec<String> = runs
                        .iter()
                        .map(|(v, n)| {
                            if *n == 1 {
                                v.to_string()
                            } else {
                                format!("{n}x{v}")
                            }
                        })
                        .collect();
                    f.write_str(&parts.join(","))?;
                }
                if c.remote_distance != 20 {
                    write!(f, " distance={}", c.remote_distance)?;
                }
                Ok(())
            }
        }
    }
}

/// A parsed scenario: the simulation plus what the text needs besides it.
///
/// `sim.nr_cpus`, `sim.profile` and `sim.features` mirror `machine`,
/// `features.profile` and `features.features`; every method keeps them in
/// sync, and [`Scenario::sync_sim`] does it after direct edits.
///
/// Equality is semantic: the feature sets compare by profile, effective
/// values and not-modelled names, not by the history of applied tokens,
/// so two scenarios are equal exactly when they print the same text.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub engine: String,
    pub machine: Machine,
    pub features: FeatureSet,
    /// An explicit `preempt` line; without one the kernel profile's model
    /// applies ([`PreemptModel::for_profile`]).
    pub preempt: Option<PreemptModel>,
    pub sim: SimConfig,
}

impl PartialEq for Scenario {
    fn eq(&self, o: &Self) -> bool {
        self.engine == o.engine
            && self.machine == o.machine
            && self.preempt == o.preempt
            && self.sim == o.sim
            && self.features.profile == o.features.profile
            && self.features.features == o.features.features
            && self.features.not_modelled == o.features.not_modelled
    }
}

impl Eq for Scenario {}

impl Default for Scenario {
    /// A uniprocessor v7.1 machine with no tasks and every default.
    fn default() -> Self {
        let mut s = Scenario {
            engine: ENGINE_VERSION.to_string(),
            machine: Machine::default(),
            features: FeatureSet::default(),
            preempt: None,
            sim: SimConfig::default(),
        };
        s.sync_sim();
        s
    }
}

impl Scenario {
    /// Parses scenario text (format v1).
    pub fn parse(text: &str) -> Result<Scenario, ParseError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.len() > MAX_BYTES {
            return Err(ParseError::new(
                1,
                1,
                format!("scenario is {} bytes, over {MAX_BYTES}", text.len()),
                "a scenario is a short text; use `count=` instead of repeating tasks",
            ));
        }
        enum State {
            Header,
            Body,
            Done,
        }
        let mut state = State::Header;
        let mut b = Builder::new(Scenario::default(), false);
        let (mut last_line, mut last_width) = (1, 0);
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            if line > MAX_LINES {
                return Err(ParseError::new(
                    line,
                    1,
                    format!("scenario has more than {MAX_LINES} lines"),
                    "use `count=` instead of repeating tasks",
                ));
            }
            let width = raw.chars().count();
            (last_line, last_width) = (line, width);
            if width > MAX_COLUMNS {
                return Err(ParseError::new(
                    line,
                    MAX_COLUMNS + 1,
                    format!("line is {width} columns, over the limit of {MAX_COLUMNS}"),
                    "split `features`, `sysctl` or `costs` over several lines, \
                     shorten names or comments",
                ));
            }
            let toks = tokenize(raw);
            let Some(first) = toks.first() else { continue };
            match state {
                State::Header => {
                    header(line, &toks)?;
                    state = State::Body;
                }
                State::Body if first.s == "end" => {
                    if let Some(extra) = toks.get(1) {
                        return Err(ParseError::new(
                            line,
                            extra.col,
                            format!("unexpected {} after `end`", quote(extra.s)),
                            "`end` stands alone on its line",
                        ));
                    }
                    state = State::Done;
                }
                State::Body => b.directive(line, &toks)?,
                State::Done => {
                    return Err(ParseError::new(
                        line,
                        first.col,
                        format!("unexpected {} after `end`", quote(first.s)),
                        "`end` is the last directive; move this line above it or \
                         comment it out with `#`",
                    ))
                }
            }
        }
        match state {
            State::Header => Err(ParseError::new(
                1,
                1,
                format!("empty scenario: expected the header `{HEADER}`"),
                format!("start the text with the line `{HEADER}`"),
            )),
            State::Body => Err(ParseError::new(
                last_line,
                last_width + 1,
                "missing `end` at the end of the scenario",
                "add `end`",
            )),
            State::Done => b.finish(None),
        }
    }

    /// The canonical text (see the module documentation); it parses back
    /// to an equal scenario, and no line exceeds [`MAX_COLUMNS`] for any
    /// scenario that came from [`Scenario::parse`].
    pub fn to_text(&self) -> String {
        let sim = &self.sim;
        let mut lines = vec![
            HEADER.to_string(),
            format!("engine {}", self.engine),
            format!("machine {}", self.machine),
            format!("kernel {}", self.features.profile.name()),
            format!("hz {}", sim.hz),
            format!("duration {}", fmt_duration(sim.duration_ns)),
        ];
        if sim.warmup_ns > 0 {
            lines.push(format!("warmup {}", fmt_duration(sim.warmup_ns)));
        }
        lines.push(format!("seed {}", sim.seed));
        if let Some(p) = self.preempt {
            lines.push(format!("preempt {}", p.name()));
        }
        let mut cur = String::new();
        for t in self.features.canonical_tokens() {
            if !cur.is_empty() && cur.chars().count() + 1 + t.chars().count() > MAX_COLUMNS {
                lines.push(std::mem::take(&mut cur));
            }
            if cur.is_empty() {
                cur.push_str("features");
            }
            cur.push(' ');
            cur.push_str(&t);
        }
        if !cur.is_empty() {
            lines.push(cur);
        }
        let mut sysctl = Vec::new();
        if let Some(v) = sim.sysctl.base_slice_ns {
            sysctl.push(format!("base_slice_ns={v}"));
        }
        if let Some(v) = sim.sysctl.migration_cost_ns {
            sysctl.push(format!("migration_cost_ns={v}"));
        }
        if let Some(v) = sim.sysctl.energy_aware {
            sysctl.push(format!("energy_aware={}", u8::from(v)));
        }
        if !sysctl.is_empty() {
            lines.push(format!("sysctl {}", sysctl.join(" ")));
        }
        let (c, d) = (&sim.costs, self.machine.default_costs());
        let mut costs = Vec::new();
        for (key, v, dv) in [
            ("switch", c.switch_ns, d.switch_ns),
            ("wake", c.wake_ns, d.wake_ns),
            ("migrate", c.migrate_ns, d.migrate_ns),
            ("sleep", c.sleep_ns, d.sleep_ns),
        ] {
            if v != dv {
                costs.push(format!("{key}={}", fmt_duration(v)));
            }
        }
        if !costs.is_empty() {
            lines.push(format!("costs {}", costs.join(" ")));
        }
        for g in &sim.groups {
            let idle = if g.idle { " idle" } else { "" };
            lines.push(format!("group {} weight={}{idle}", g.path, g.weight));
        }
        lines.extend(sim.tasks.iter().map(task_line));
        lines.push("end".to_string());
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }

    /// Replaces one top-level directive from a `KEY=VALUE` argument (the
    /// CLI's `--set`): `hz=1000`, `kernel=v6.18`, `machine=smp8`,
    /// `duration=2s`, `seed=7`, `preempt=lazy`, `engine=0.1`,
    /// `features=NO_PLACE_LAG,NEXT_BUDDY` (appended to the tokens),
    /// `sysctl.base_slice_ns=3ms`, `costs.switch=1us` (one key; also
    /// `sysctl=KEY=VALUE ...`). The argument is read as the line `KEY VALUE`
    /// of a scenario. Errors have line 0 and columns into `key_value`; on
    /// error nothing changes.
    pub fn set(&mut self, key_value: &str) -> Result<(), ParseError> {
        if key_value.len() > MAX_ARG_BYTES {
            return Err(ParseError::new(
                0,
                1,
                format!(
                    "argument is {} bytes, over {MAX_ARG_BYTES}",
                    key_value.len()
                ),
                "set one directive at a time",
            ));
        }
        let settable = || {
            format!(
                "settable keys: {}, sysctl.KEY, costs.KEY",
                SETTABLE.join(", ")
            )
        };
        let Some((key, value)) = key_value.split_once('=') else {
            return Err(ParseError::new(
                0,
                1,
                format!("expected KEY=VALUE, found {}", quote(key_value)),
                "e.g. hz=1000 or sysctl.base_slice_ns=3ms",
            ));
        };
        if key.trim().is_empty() {
            return Err(ParseError::new(0, 1, "missing key before `=`", settable()));
        }
        // Both forms keep every character's column: `.` and `=` become
        // one space each.
        let line = match key.split_once('.') {
            Some((dir, sub)) => {
                if !matches!(dir.trim(), "sysctl" | "costs") {
                    return Err(ParseError::new(
                        0,
                        1,
                        format!("{} has no sub-keys", quote(dir.trim())),
                        "only sysctl.KEY and costs.KEY take a sub-key",
                    ));
                }
                format!("{dir} {sub}={value}")
            }
            None => format!("{key} {value}"),
        };
        let toks = tokenize(&line);
        let Some(first) = toks.first() else {
            return Err(ParseError::new(0, 1, "missing key before `=`", settable()));
        };
        if !SETTABLE.contains(&first.s) {
            let hint = match closest(first.s, SETTABLE) {
                Some(c) => format!("did you mean `{c}`? {}", settable()),
                None => settable(),
            };
            return Err(ParseError::new(
                0,
                first.col,
                format!("{} cannot be set", quote(first.s)),
                hint,
            ));
        }
        let mut b = Builder::new(self.clone(), true);
        b.directive(0, &toks)?;
        let at = toks.get(1).map_or(first.col, |t| t.col);
        *self = b.finish(Some((0, at)))?;
        Ok(())
    }

    /// Applies feature tokens (a debugfs line or list, separated by
    /// whitespace or commas) over the scenario's, e.g. from `--features`.
    /// Errors have line 0 and the token's 1-based character offset in
    /// `line` as column; on error nothing changes.
    pub fn apply_features(&mut self, line: &str) -> Result<(), ParseError> {
        if line.len() > MAX_ARG_BYTES {
            return Err(ParseError::new(
                0,
                1,
                format!("features are {} bytes, over {MAX_ARG_BYTES}", line.len()),
                "paste one features line",
            ));
        }
        let mut fs = self.features.clone();
        for (col, tok) in feature_tokens(line, 1) {
            fs.apply(tok).map_err(|e| feature_error(0, col, &e))?;
        }
        self.features = fs;
        self.sync_sim();
        Ok(())
    }

    /// "made with engine 0.1, computed by 0.2" when the scenario's
    /// `engine` line names another version than this engine's.
    pub fn engine_note(&self) -> Option<String> {
        (self.engine != ENGINE_VERSION).then(|| {
            format!(
                "made with engine {}, computed by {ENGINE_VERSION} (CHANGELOG.md lists what changed)",
                self.engine
            )
        })
    }

    /// One note per task whose `slice` lies outside the kernel's clamp:
    /// `__setparam_fair` (7.2 fair.c) clamps a `sched_setattr` slice to
    /// 0.1..=100 ms, and so does the engine (`clamp_custom_slice`).
    pub fn slice_notes(&self) -> Vec<String> {
        use eevdf_core::entity::{clamp_custom_slice, SLICE_MAX_NS, SLICE_MIN_NS};
        self.sim
            .tasks
            .iter()
            .filter_map(|t| {
                let asked = t.slice_ns?;
                let runs = clamp_custom_slice(asked);
                (runs != asked).then(|| {
                    format!(
                        "task {}: slice={} is outside the kernel's {}..{} (sched_setattr clamps it); it runs with {}",
                        t.name,
                        fmt_duration(asked),
                        fmt_duration(SLICE_MIN_NS),
                        fmt_duration(SLICE_MAX_NS),
                        fmt_duration(runs)
                    )
                })
            })
            .collect()
    }

    /// Copies `machine` and `features` into `sim` (`nr_cpus`, `profile`,
    /// `features`), after direct edits of the public fields.
    pub fn sync_sim(&mut self) {
        self.sim.nr_cpus = self.machine.nr_cpus();
        self.sim.machine = match &self.machine {
            Machine::Smp(_) => None,
            m => Some(m.spec()),
        };
        self.sim.profile = self.features.profile;
        self.sim.features = self.features.features;
        self.sim.preempt = self
            .preempt
            .unwrap_or_else(|| PreemptModel::for_profile(self.features.profile));
    }

    /// Checks that [`Scenario::to_text`] parses back to this scenario
    /// (useful for scenarios built in code); errors point into that text.
    pub fn validate(&self) -> Result<(), ParseError> {
        let text = self.to_text();
        let back = Scenario::parse(&text)?;
        if back == *self {
            return Ok(());
        }
        Err(ParseError::new(
            1,
            1,
            "the scenario does not survive printing and parsing",
            "keep `sim` in sync with `machine` and `features` (Scenario::sync_sim)",
        ))
    }
}

/// A whitespace-separated token and its 1-based character column.
#[derive(Clone, Copy, Debug)]
struct Tok<'a> {
    s: &'a str,
    col: usize,
}

impl Tok<'_> {
    /// The column just after the token.
    fn end_col(&self) -> usize {
        self.col + self.s.chars().count()
    }
}

/// Splits a line into tokens, stopping at `#`.
fn tokenize(line: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    let mut end = line.len();
    for (i, (b, c)) in line.char_indices().enumerate() {
        if c == '#' {
            end = b;
            break;
        }
        if c.is_whitespace() {
            if let Some((sb, col)) = start.take() {
                out.push(Tok {
                    s: line.get(sb..b).unwrap_or_default(),
                    col,
                });
            }
        } else if start.is_none() {
            start = Some((b, i + 1));
        }
    }
    if let Some((sb, col)) = start {
        out.push(Tok {
            s: line.get(sb..end).unwrap_or_default(),
            col,
        });
    }
    out
}

/// Feature tokens separated by whitespace or commas, with their columns
/// (`first_col` is the column of the first character of `s`).
fn feature_tokens(s: &str, first_col: usize) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    for (col, (b, c)) in (first_col..).zip(s.char_indices()) {
        if c.is_whitespace() || c == ',' {
            if let Some((sb, sc)) = start.take() {
                out.push((sc, s.get(sb..b).unwrap_or_default()));
            }
        } else if start.is_none() {
            start = Some((b, col));
        }
    }
    if let Some((sb, sc)) = start {
        out.push((sc, s.get(sb..).unwrap_or_default()));
    }
    out
}

/// A user token in backquotes, shortened if long.
/// An echoed token: control characters escaped, at most 40 characters
/// (errors reach terminals and pages; see `display`).
fn quote(s: &str) -> String {
    format!("`{}`", crate::display::shown_max(s, 40))
}

/// Edit distance, for "did you mean" hints (inputs are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            let best = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
            cur.push(best);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is a plausible typo.
fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    if word.is_empty() || word.len() > 64 {
        return None;
    }
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|&(d, c)| d <= (c.len() / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// `hint` prefixed with a "did you mean" for `word`, if any.
fn with_suggestion(word: &str, candidates: &[&str], hint: String) -> String {
    match closest(word, candidates) {
        Some(c) => format!("did you mean `{c}`? {hint}"),
        None => hint,
    }
}

/// A string of ASCII digits as a `u64`.
fn parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// An optional `-` and ASCII digits as an `i64`.
fn parse_int(s: &str) -> Option<i64> {
    match s.strip_prefix('-') {
        Some(rest) => parse_uint(rest)
            .and_then(|v| i64::try_from(v).ok())
            .map(|v| -v),
        None => parse_uint(s).and_then(|v| i64::try_from(v).ok()),
    }
}

/// Parses a duration such as `20us`, `2.8ms` or `0.5s` (or a bare `0`).
/// The error is a message and a hint.
fn parse_duration(s: &str) -> Result<Nanos, (String, String)> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if num.is_empty() {
        return Err((
            format!("expected a duration such as 20us, found {}", quote(s)),
            UNIT_HINT.to_string(),
        ));
    }
    let mult: u128 = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "" if num.bytes().all(|b| b == b'0') => return Ok(0),
        "" => {
            return Err((
                format!("duration {} has no unit", quote(s)),
                UNIT_HINT.to_string(),
            ))
        }
        _ => {
            return Err((
                format!("unknown unit {} in duration {}", quote(unit), quote(s)),
                UNIT_HINT.to_string(),
            ))
        }
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() || frac.contains('.') || (num.contains('.') && frac.is_empty()) {
        return Err((
            format!("malformed number in duration {}", quote(s)),
            "write digits with at most one decimal point, e.g. 2.8ms".to_string(),
        ));
    }
    let too_long = || {
        (
            format!("duration {} is too long", quote(s)),
            format!("durations are at most {}", fmt_duration(MAX_DURATION_NS)),
        )
    };
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    if int.len() > 20 {
        return Err(too_long());
    }
    let int_val: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_long())?
    };
    let mut total = int_val * mult;
    if !frac.is_empty() {
        let scale = frac
            .len()
            .try_into()
            .ok()
            .and_then(|n: u32| 10u128.checked_pow(n));
        let frac_val: Option<u128> = frac.parse().ok();
        match (scale, frac_val) {
            (Some(scale), Some(fv)) if frac.len() <= 9 && (fv * mult) % scale == 0 => {
                total += fv * mult / scale;
            }
            _ => {
                return Err((
                    format!("duration {} is not a whole number of nanoseconds", quote(s)),
                    "use a smaller unit or fewer decimals, e.g. 2800us or 2.8ms".to_string(),
                ))
            }
        }
    }
    Nanos::try_from(total).map_err(|_| too_long())
}

/// A duration in the largest unit that keeps it an integer.
pub(crate) fn fmt_duration(ns: Nanos) -> String {
    for (unit, m) in [("s", S), ("ms", MS), ("us", US)] {
        if ns % m == 0 {
            return format!("{}{unit}", ns / m);
        }
    }
    format!("{ns}ns")
}

/// A CPU list as sorted ranges, e.g. `0-3,6`.
fn fmt_cpus(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end.saturating_add(1) {
            i += 1;
            end = cpus[i];
        }
        parts.push(if end == start {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// The canonical `task` line.
fn task_line(t: &TaskSpec) -> String {
    let mut s = format!("task {} kind={}", t.name, t.workload.kind());
    let mut kv = |k: &str, v: String| {
        s.push(' ');
        s.push_str(k);
        s.push('=');
        s.push_str(&v);
    };
    if t.count != 1 {
        kv("count", t.count.to_string());
    }
    let d = fmt_duration;
    match &t.workload {
        Workload::Timer { period_ns, run_ns } => {
            kv("period", d(*period_ns));
            if *run_ns != DEFAULT_TIMER_RUN {
                kv("run", d(*run_ns));
            }
        }
        Workload::Periodic {
            run_ns,
            sleep_ns,
            period_ns,
        } => {
            kv("run", d(*run_ns));
            if period_ns.is_none() || *sleep_ns != 0 {
                kv("sleep", d(*sleep_ns));
            }
            if let Some(p) = period_ns {
                kv("period", d(*p));
            }
        }
        Workload::Hackbench {
            groups,
            fds,
            threads,
            pipe,
            loops,
            send_ns,
            recv_ns,
            pipe_msgs,
        } => {
            if *groups != DEFAULT_HB_GROUPS {
                kv("groups", groups.to_string());
            }
            if *fds != DEFAULT_HB_FDS {
                kv("fds", fds.to_string());
            }
            if *threads {
                kv("mode", "thread".to_string());
            }
            if *pipe {
                kv("ipc", "pipe".to_string());
            }
            if *loops != 0 {
                kv("loops", loops.to_string());
            }
            if *send_ns != DEFAULT_HB_MSG_NS {
                kv("send", d(*send_ns));
            }
            if *recv_ns != DEFAULT_HB_MSG_NS {
                kv("recv", d(*recv_ns));
            }
            if *pipe_msgs != default_hb_msgs(*pipe) {
                kv("pipe_msgs", pipe_msgs.to_string());
            }
        }
        Workload::Schbench {
            message_threads,
            workers,
            request_ns,
            sleep_ns,
        } => {
            if *message_threads != DEFAULT_SB_MESSAGES {
                kv("messages", message_threads.to_string());
            }
            if *workers != DEFAULT_SB_WORKERS {
                kv("workers", workers.to_string());
            }
            if *request_ns != DEFAULT_SB_REQUEST {
                kv("request", d(*request_ns));
            }
            if *sleep_ns != DEFAULT_SB_THINK {
                kv("think", d(*sleep_ns));
            }
        }
        Workload::Hog => {}
    }
    if t.nice != 0 {
        kv("nice", t.nice.to_string());
    }
    if t.policy != Policy::Normal {
        kv("policy", t.policy.name().to_string());
    }
    if let Some(v) = t.slice_ns {
        kv("slice", d(v));
    }
    if let Some(c) = &t.cpus {
        kv("cpus", fmt_cpus(c));
    }
    if let Some(g) = &t.group {
        kv("group", g.clone());
    }
    if let Some(v) = t.slack_ns {
        kv("slack", d(v));
    }
    if t.start_ns != 0 {
        kv("start", d(t.start_ns));
    }
    if let Some(p) = t.kernel_pct {
        kv("kernel", format!("{p}%"));
    }
    if let Some(v) = t.ksection_ns {
        kv("ksection", d(v));
    }
    s
}

/// The keys of a task kind, in canonical order, without the common ones.
fn kind_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "timer" => &["period", "run"],
        "periodic" => &["run", "sleep", "period"],
        "hackbench" => &[
            "groups",
            "fds",
            "mode",
            "ipc",
            "loops",
            "send",
            "recv",
            "pipe_msgs",
        ],
        "schbench" => &["messages", "workers", "request", "think"],
        _ => &[],
    }
}

/// Every valid key of a task kind, in canonical order.
fn task_keys(kind: &str) -> Vec<&'static str> {
    let mut keys = vec!["kind", "count"];
    keys.extend_from_slice(kind_keys(kind));
    keys.extend_from_slice(COMMON_KEYS);
    keys
}

fn feature_error(line: usize, col: usize, e: &FeatureError) -> ParseError {
    let text = e.to_string();
    let (message, hint) = match text.split_once("; ").or_else(|| text.split_once(": ")) {
        Some((m, h)) => (m.to_string(), h.to_string()),
        None => (
            text.clone(),
            "names use the kernel's SCHED_FEAT spelling, e.g. NO_RUN_TO_PARITY \
             or LAG_CLAMP=2slice_tick"
                .to_string(),
        ),
    };
    ParseError::new(line, col, message, hint)
}

/// Checks the header line.
fn header(line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
    let hint = format!("start the text with the line `{HEADER}`");
    match toks {
        [magic, ..] if magic.s != "eevdf-scenario" => Err(ParseError::new(
            line,
            magic.col,
            format!("expected the header `{HEADER}`, found {}", quote(magic.s)),
            hint,
        )),
        [magic] => Err(ParseError::new(
            line,
            magic.end_col() + 1,
            "missing version after `eevdf-scenario`",
            hint,
        )),
        [_, v, ..] if v.s != "v1" => Err(ParseError::new(
            line,
            v.col,
            format!("unsupported version {}", quote(v.s)),
            "this build reads `eevdf-scenario v1` only; write `eevdf-scenario v1`",
        )),
        [_, _, extra, ..] => Err(ParseError::new(
            line,
            extra.col,
            format!("unexpected {} after the header", quote(extra.s)),
            hint,
        )),
        _ => Ok(()),
    }
}

/// The one value of a single-valued directive.
fn single<'a>(line: usize, toks: &[Tok<'a>], example: &str) -> Result<Tok<'a>, ParseError> {
    match toks {
        [_, v] => Ok(*v),
        [d] => Err(ParseError::new(
            line,
            d.end_col() + 1,
            format!("`{}` needs a value", d.s),
            format!("write e.g. `{example}`"),
        )),
        [d, v, extra, ..] => Err(ParseError::new(
            line,
            extra.col,
            format!("unexpected {} after `{} {}`", quote(extra.s), d.s, v.s),
            format!("`{}` takes one value; `#` starts a comment", d.s),
        )),
        [] => Err(ParseError::new(line, 1, "empty directive", "")),
    }
}

/// A `key=value` token.
#[derive(Clone, Copy, Debug)]
struct Kv<'a> {
    key: &'a str,
    val: &'a str,
    kcol: usize,
    vcol: usize,
}

fn split_kv<'a>(line: usize, t: Tok<'a>, example: &str) -> Result<Kv<'a>, ParseError> {
    let Some((key, val)) = t.s.split_once('=') else {
        return Err(ParseError::new(
            line,
            t.col,
            format!("expected key=value, found {}", quote(t.s)),
            format!("write key=value pairs, e.g. {example}"),
        ));
    };
    if key.is_empty() {
        return Err(ParseError::new(
            line,
            t.col,
            "missing key before `=`",
            format!("write key=value pairs, e.g. {example}"),
        ));
    }
    let vcol = t.col + key.chars().count() + 1;
    if val.is_empty() {
        return Err(ParseError::new(
            line,
            vcol,
            format!("`{key}` needs a value after `=`"),
            format!("write key=value pairs, e.g. {example}"),
        ));
    }
    Ok(Kv {
        key,
        val,
        kcol: t.col,
        vcol,
    })
}

/// A duration value in `lo..=hi`.
fn dur_val(line: usize, kv: &Kv<'_>, lo: Nanos, hi: Nanos) -> Result<Nanos, ParseError> {
    let v = parse_duration(kv.val).map_err(|(m, h)| ParseError::new(line, kv.vcol, m, h))?;
    if v < lo || v > hi {
        let message = if v < lo && lo == 1 {
            format!("`{}` must be more than 0", kv.key)
        } else if v < lo {
            format!("`{}` must be at least {}", kv.key, fmt_duration(lo))
        } else {
            format!("`{}` must be at most {}", kv.key, fmt_duration(hi))
        };
        let lo_text = if lo == 1 {
            "more than 0".to_string()
        } else {
            format!("from {}", fmt_duration(lo))
        };
        return Err(ParseError::new(
            line,
            kv.vcol,
            message,
            format!(
                "`{}` takes a duration {lo_text} up to {}",
                kv.key,
                fmt_duration(hi)
            ),
        ));
    }
    Ok(v)
}

/// An unsigned integer value in `lo..=hi`.
fn uint_val(line: usize, kv: &Kv<'_>, lo: u64, hi: u64) -> Result<u64, ParseError> {
    match parse_uint(kv.val) {
        Some(v) if (lo..=hi).contains(&v) => Ok(v),
        Some(_) => Err(ParseError::new(
            line,
            kv.vcol,
            format!("`{}` is out of range: {}", kv.key, quote(kv.val)),
            format!("`{}` takes an integer from {lo} to {hi}", kv.key),
        )),
        None => Err(ParseError::new(
            line,
            kv.vcol,
            format!(
                "expected an integer for `{}`, found {}",
                kv.key,
                quote(kv.val)
            ),
            format!("`{}` takes an integer from {lo} to {hi}", kv.key),
        )),
    }
}

/// A `u32` value in `lo..=hi` (with `hi` at most `u32::MAX`).
fn u32_val(line: usize, kv: &Kv<'_>, lo: u32, hi: u32) -> Result<u32, ParseError> {
    let v = uint_val(line, kv, lo.into(), hi.into())?;
    Ok(u32::try_from(v).unwrap_or(hi))
}

/// One of `choices`.
fn choice_val<'a>(line: usize, kv: &Kv<'_>, choices: &[&'a str]) -> Result<&'a str, ParseError> {
    choices
        .iter()
        .copied()
        .find(|c| *c == kv.val)
        .ok_or_else(|| {
            ParseError::new(
                line,
                kv.vcol,
                format!("unknown {} {}", kv.key, quote(kv.val)),
                with_suggestion(
                    kv.val,
                    choices,
                    format!("`{}` is one of {}", kv.key, choices.join(", ")),
                ),
            )
        })
}

/// A CPU list such as `0-3,6`: sorted, without duplicates, each below
/// [`MAX_CPUS`] (the machine's size is checked later).
fn cpus_val(line: usize, kv: &Kv<'_>) -> Result<Vec<u32>, ParseError> {
    let hint = format!(
        "write CPU numbers and ranges separated by commas, e.g. cpus=0-3,6 \
         (CPUs are below {MAX_CPUS})"
    );
    let mut set = vec![false; MAX_CPUS as usize];
    let mut col = kv.vcol;
    for item in kv.val.split(',') {
        let bad = |msg: String| ParseError::new(line, col, msg, hint.clone());
        let num = |s: &str| {
            parse_uint(s)
                .and_then(|v| u32::try_from(v).ok())
                .filter(|&v| v < MAX_CPUS)
        };
        let (a, b) = match item.split_once('-') {
            Some((a, b)) => (num(a), num(b)),
            None => (num(item), num(item)),
        };
        match (a, b) {
            (Some(a), Some(b)) if a <= b => {
                for slot in set.iter_mut().take(b as usize + 1).skip(a as usize) {
                    *slot = true;
                }
            }
            (Some(_), Some(_)) => {
                return Err(bad(format!("CPU range {} runs backwards", quote(item))));
            }
            _ if item.is_empty() => return Err(bad("empty item in CPU list".to_string())),
            _ => return Err(bad(format!("bad CPU list item {}", quote(item)))),
        }
        col += item.chars().count() + 1;
    }
    Ok((0..MAX_CPUS).filter(|&c| set[c as usize]).collect())
}

/// Checks a task or group name: `[A-Za-z0-9_-]{1,32}`.
fn check_name(line: usize, col: usize, name: &str, what: &str) -> Result<(), ParseError> {
    let hint = format!("a {what} name is 1 to {MAX_NAME} letters, digits, `_` or `-`");
    if let Some((i, _)) = name
        .chars()
        .enumerate()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(ParseError::new(
            line,
            col + i,
            // The column points at `c`; the quoted name shows it escaped.
            format!("unexpected character in {what} name {}", quote(name)),
            hint,
        ));
    }
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME {
        return Err(ParseError::new(
            line,
            col,
            format!("{what} name {} is {n} characters long", quote(name)),
            hint,
        ));
    }
    Ok(())
}

/// Where a task's keys were, for checks at the end of the text.
#[derive(Clone, Copy, Debug)]
struct TaskPos {
    line: usize,
    cpus_col: usize,
    group_col: usize,
}

/// Parser state: the scenario so far plus positions for late checks.
struct Builder {
    sc: Scenario,
    /// `--set` mode: directives replace instead of being duplicates.
    set_mode: bool,
    /// Single-use directives and keys, with the line that set them.
    seen: Vec<(String, usize)>,
    tasks: Vec<TaskPos>,
    group_lines: Vec<usize>,
    /// `costs` keys given explicitly (switch, wake, migrate); the others
    /// are the machine's defaults, applied in `finish` (`machine` may
    /// come after `costs`).
    explicit_costs: [Option<Nanos>; 4],
}

impl Builder {
    fn new(sc: Scenario, set_mode: bool) -> Self {
        // A key that differs from the machine's default is explicit, as
        // the canonical text prints exactly those keys.
        let (c, d) = (&sc.sim.costs, sc.machine.default_costs());
        let explicit = |v: Nanos, dv: Nanos| (v != dv).then_some(v);
        let explicit_costs = [
            explicit(c.switch_ns, d.switch_ns),
            explicit(c.wake_ns, d.wake_ns),
            explicit(c.migrate_ns, d.migrate_ns),
            explicit(c.sleep_ns, d.sleep_ns),
        ];
        Builder {
            sc,
            set_mode,
            seen: Vec::new(),
            tasks: Vec::new(),
            group_lines: Vec::new(),
            explicit_costs,
        }
    }

    /// Records a single-use directive or key; errors on a second use.
    fn once(&mut self, line: usize, col: usize, what: &str) -> Result<(), ParseError> {
        if self.set_mode {
            return Ok(());
        }
        if let Some((_, first)) = self.seen.iter().find(|(w, _)| w == what) {
            return Err(ParseError::new(
                line,
                col,
                format!("duplicate `{what}`"),
                format!("`{what}` is already set on line {first}; keep one"),
            ));
        }
        self.seen.push((what.to_string(), line));
        Ok(())
    }

    /// A directive that is set once and takes one duration of at least
    /// `lo` (`duration`, `warmup`).
    fn duration_line(
        &mut self,
        line: usize,
        col: usize,
        toks: &[Tok<'_>],
        key: &'static str,
        example: &str,
        lo: Nanos,
    ) -> Result<Nanos, ParseError> {
        self.once(line, col, key)?;
        let v = single(line, toks, example)?;
        let kv = Kv {
            key,
            val: v.s,
            kcol: col,
            vcol: v.col,
        };
        dur_val(line, &kv, lo, MAX_DURATION_NS)
    }

    fn directive(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        let Some(&d) = toks.first() else {
            return Ok(());
        };
        if self.set_mode && !SETTABLE.contains(&d.s) {
            return Err(ParseError::new(
                line,
                d.col,
                format!("{} cannot be set", quote(d.s)),
                format!("settable keys: {}", SETTABLE.join(", ")),
            ));
        }
        match d.s {
            "engine" => {
                self.once(line, d.col, "engine")?;
                let v = single(line, toks, "engine 0.1")?;
                let ok = v.s.split_once('.').is_some_and(|(a, b)| {
                    a.len() <= 4
                        && b.len() <= 4
                        && parse_uint(a).is_some()
                        && parse_uint(b).is_some()
                });
                if !ok {
                    return Err(ParseError::new(
                        line,
                        v.col,
                        format!("expected an engine version X.Y, found {}", quote(v.s)),
                        format!("this engine is version {ENGINE_VERSION}"),
                    ));
                }
                self.sc.engine = v.s.to_string();
            }
            "machine" => {
                self.once(line, d.col, "machine")?;
                if toks.get(1).is_some_and(|t| t.s == "custom") {
                    self.sc.machine = parse_custom_machine(line, &toks[2..])?;
                } else {
                    let v = single(line, toks, "machine smp4")?;
                    self.sc.machine = Machine::parse(v.s).ok_or_else(|| {
                        ParseError::new(
                            line,
                            v.col,
                            format!("unknown machine {}", quote(v.s)),
                            format!(
                                "machine is up, smpN (N up to {MAX_CPUS}), custom ..., or one of {}",
                                PRESET_NAMES.join(", ")
                            ),
                        )
                    })?;
                }
            }
            "kernel" => {
                self.once(line, d.col, "kernel")?;
                let v = single(line, toks, "kernel v7.1")?;
                let p = Profile::parse(v.s).ok_or_else(|| {
                    let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
                    ParseError::new(
                        line,
                        v.col,
                        format!("unknown kernel {}", quote(v.s)),
                        format!("kernel is one of {}", names.join(", ")),
                    )
                })?;
                self.sc.features.set_profile(p);
            }
            "hz" => {
                self.once(line, d.col, "hz")?;
                let v = single(line, toks, "hz 250")?;
                match parse_uint(v.s).filter(|h| HZ_VALUES.contains(h)) {
                    Some(h) => self.sc.sim.hz = u32::try_from(h).unwrap_or(250),
                    None => {
                        return Err(ParseError::new(
                            line,
                            v.col,
                            format!("unsupported hz {}", quote(v.s)),
                            "hz is 100, 250, 300 or 1000",
                        ))
                    }
                }
            }
            "duration" => {
                self.sc.sim.duration_ns =
                    self.duration_line(line, d.col, toks, "duration", "duration 10s", 1)?;
            }
            "warmup" => {
                self.sc.sim.warmup_ns =
                    self.duration_line(line, d.col, toks, "warmup", "warmup 1s", 0)?;
            }
            "seed" => {
                self.once(line, d.col, "seed")?;
                let v = single(line, toks, "seed 1")?;
                self.sc.sim.seed = parse_uint(v.s).ok_or_else(|| {
                    ParseError::new(
                        line,
                        v.col,
                        format!("expected a seed, found {}", quote(v.s)),
                        "the seed is an integer from 0 to 18446744073709551615",
                    )
                })?;
            }
            "preempt" => {
                self.once(line, d.col, "preempt")?;
                let v = single(line, toks, "preempt full")?;
                self.sc.preempt = Some(PreemptModel::parse(v.s).ok_or_else(|| {
                    ParseError::new(
                        line,
                        v.col,
                        format!("unknown preemption model {}", quote(v.s)),
                        "preempt is none, voluntary, full or lazy",
                    )
                })?);
            }
            "features" => self.features(line, toks)?,
            "sysctl" => self.sysctl(line, toks)?,
            "costs" => self.costs(line, toks)?,
            "group" => self.group(line, toks)?,
            "task" => self.task(line, toks)?,
            "eevdf-scenario" => {
                return Err(ParseError::new(
                    line,
                    d.col,
                    "second header",
                    "the header `eevdf-scenario v1` is the first line only",
                ))
            }
            other => {
                return Err(ParseError::new(
                    line,
                    d.col,
                    format!("unknown directive {}", quote(other)),
                    with_suggestion(
                        other,
                        DIRECTIVES,
                        format!("directives: {}", DIRECTIVES.join(", ")),
                    ),
                ))
            }
        }
        Ok(())
    }

    fn features(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        let rest = toks.get(1..).unwrap_or_default();
        let mut any = false;
        for t in rest {
            for (col, tok) in feature_tokens(t.s, t.col) {
                self.sc
                    .features
                    .apply(tok)
                    .map_err(|e| feature_error(line, col, &e))?;
                any = true;
            }
        }
        if !any {
            let d = toks.first().map_or(1, |d| d.end_col() + 1);
            return Err(ParseError::new(
                line,
                d,
                "`features` needs at least one token",
                "e.g. `features NO_RUN_TO_PARITY PREEMPT_SHORT`",
            ));
        }
        Ok(())
    }

    /// The `key=value` tokens after a directive, at least one.
    fn kvs<'a>(
        line: usize,
        toks: &[Tok<'a>],
        keys: &[&str],
        example: &str,
    ) -> Result<Vec<Kv<'a>>, ParseError> {
        let Some((d, rest)) = toks.split_first() else {
            return Ok(Vec::new());
        };
        if rest.is_empty() {
            return Err(ParseError::new(
                line,
                d.end_col() + 1,
                format!("`{}` needs key=value pairs", d.s),
                format!("e.g. `{} {example}`", d.s),
            ));
        }
        let mut out = Vec::new();
        for t in rest {
            let kv = split_kv(line, *t, example)?;
            if !keys.contains(&kv.key) {
                return Err(ParseError::new(
                    line,
                    kv.kcol,
                    format!("unknown {} key {}", d.s, quote(kv.key)),
                    with_suggestion(kv.key, keys, format!("{} keys: {}", d.s, keys.join(", "))),
                ));
            }
            out.push(kv);
        }
        Ok(out)
    }

    fn sysctl(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        for kv in Self::kvs(line, toks, SYSCTL_KEYS, "base_slice_ns=2800000")? {
            self.once(line, kv.kcol, &format!("sysctl {}", kv.key))?;
            if kv.key == "energy_aware" {
                self.sc.sim.sysctl.energy_aware = Some(match kv.val {
                    "1" => true,
                    "0" => false,
                    _ => {
                        return Err(ParseError::new(
                            line,
                            kv.vcol,
                            format!("expected 0 or 1, found {}", quote(kv.val)),
                            "energy_aware=1 enables EAS on machines with an energy model",
                        ))
                    }
                });
                continue;
            }
            let (lo, hi) = match kv.key {
                "base_slice_ns" => (US, S),
                _ => (0, S),
            };
            let v = match parse_uint(kv.val) {
                Some(v) if (lo..=hi).contains(&v) => v,
                Some(_) => {
                    return Err(ParseError::new(
                        line,
                        kv.vcol,
                        format!("`{}` is out of range: {}", kv.key, quote(kv.val)),
                        format!("`{}` takes nanoseconds from {lo} to {hi}", kv.key),
                    ))
                }
                None => dur_val(line, &kv, lo, hi)?,
            };
            match kv.key {
                "base_slice_ns" => self.sc.sim.sysctl.base_slice_ns = Some(v),
                _ => self.sc.sim.sysctl.migration_cost_ns = Some(v),
            }
        }
        Ok(())
    }

    fn costs(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        for kv in Self::kvs(line, toks, COST_KEYS, "switch=2us")? {
            self.once(line, kv.kcol, &format!("costs {}", kv.key))?;
            let v = dur_val(line, &kv, 0, S)?;
            let i = match kv.key {
                "switch" => 0,
                "wake" => 1,
                "migrate" => 2,
                _ => 3,
            };
            self.explicit_costs[i] = Some(v);
        }
        Ok(())
    }

    fn group(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        let example = "`group /test-B weight=100`";
        let p = match toks {
            [_, p, ..] => *p,
            [d] => {
                return Err(ParseError::new(
                    line,
                    d.end_col() + 1,
                    "`group` needs a path",
                    format!("e.g. {example}"),
                ))
            }
            [] => return Ok(()),
        };
        let Some(name) = p.s.strip_prefix('/') else {
            return Err(ParseError::new(
                line,
                p.col,
                format!(
                    "expected a group path such as /test-B, found {}",
                    quote(p.s)
                ),
                format!("group paths start with `/`, e.g. {example}"),
            ));
        };
        if let Some(i) = name.find('/') {
            let col = p.col + 1 + name.get(..i).unwrap_or_default().chars().count();
            return Err(ParseError::new(
                line,
                col,
                format!("group path {} has more than one level", quote(p.s)),
                "one level of groups is modelled: write a path like `/name`",
            ));
        }
        check_name(line, p.col + 1, name, "group")?;
        if let Some(i) = self.sc.sim.groups.iter().position(|g| g.path == p.s) {
            let first = self.group_lines.get(i).copied().unwrap_or(0);
            return Err(ParseError::new(
                line,
                p.col,
                format!("duplicate group {}", quote(p.s)),
                format!("{} is already declared on line {first}", quote(p.s)),
            ));
        }
        let (mut weight, mut idle): (Option<u32>, Option<bool>) = (None, None);
        let keys_hint = "group keys: weight=1..10000, idle (or idle=0, idle=1)";
        let dup = |col: usize, key: &str| {
            ParseError::new(
                line,
                col,
                format!("duplicate key `{key}`"),
                format!("give `{key}` once"),
            )
        };
        for t in toks.get(2..).unwrap_or_default() {
            if t.s == "idle" {
                if idle.is_some() {
                    return Err(dup(t.col, "idle"));
                }
                idle = Some(true);
                continue;
            }
            let kv = split_kv(line, *t, "weight=100")?;
            match kv.key {
                "weight" => {
                    if weight.is_some() {
                        return Err(dup(kv.kcol, "weight"));
                    }
                    weight = Some(u32_val(line, &kv, 1, 10_000)?);
                }
                "idle" => {
                    if idle.is_some() {
                        return Err(dup(kv.kcol, "idle"));
                    }
                    idle = Some(match kv.val {
                        "1" => true,
                        "0" => false,
                        _ => {
                            return Err(ParseError::new(
                                line,
                                kv.vcol,
                                format!("expected 0 or 1 for `idle`, found {}", quote(kv.val)),
                                keys_hint,
                            ))
                        }
                    });
                }
                other => {
                    return Err(ParseError::new(
                        line,
                        kv.kcol,
                        format!("unknown group key {}", quote(other)),
                        with_suggestion(other, &["weight", "idle"], keys_hint.to_string()),
                    ))
                }
            }
        }
        self.sc.sim.groups.push(GroupSpec {
            path: p.s.to_string(),
            weight: weight.unwrap_or(DEFAULT_GROUP_WEIGHT),
            idle: idle.unwrap_or(false),
        });
        self.group_lines.push(line);
        Ok(())
    }

    fn task(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        let kinds = KINDS.join(", ");
        let name = match toks {
            [_, n, ..] => *n,
            [d] => {
                return Err(ParseError::new(
                    line,
                    d.end_col() + 1,
                    "`task` needs a name",
                    "e.g. `task ct kind=timer period=1ms`",
                ))
            }
            [] => return Ok(()),
        };
        check_name(line, name.col, name.s, "task")?;
        if let Some(i) = self.sc.sim.tasks.iter().position(|t| t.name == name.s) {
            let first = self.tasks.get(i).map_or(0, |p| p.line);
            return Err(ParseError::new(
                line,
                name.col,
                format!("duplicate task name {}", quote(name.s)),
                format!(
                    "task {} is already declared on line {first}; pick another name \
                     or use count=",
                    quote(name.s)
                ),
            ));
        }
        let mut kvs: Vec<Kv<'_>> = Vec::new();
        for t in toks.get(2..).unwrap_or_default() {
            let kv = split_kv(line, *t, "kind=hog")?;
            if let Some(prev) = kvs.iter().find(|p| p.key == kv.key) {
                return Err(ParseError::new(
                    line,
                    kv.kcol,
                    format!("duplicate key `{}`", kv.key),
                    format!("`{}` is already given at column {}", kv.key, prev.kcol),
                ));
            }
            kvs.push(kv);
        }
        let Some(kind_kv) = kvs.iter().find(|k| k.key == "kind") else {
            return Err(ParseError::new(
                line,
                name.col,
                format!("task {} has no `kind`", quote(name.s)),
                format!("add kind=KIND with KIND one of {kinds}"),
            ));
        };
        let kind = choice_val(line, kind_kv, KINDS)?;
        let valid = task_keys(kind);
        if let Some(bad) = kvs.iter().find(|k| !valid.contains(&k.key)) {
            return Err(ParseError::new(
                line,
                bad.kcol,
                format!("unknown key {} for a {kind} task", quote(bad.key)),
                with_suggestion(
                    bad.key,
                    &valid,
                    format!("valid keys for kind={kind}: {}", valid.join(", ")),
                ),
            ));
        }
        let get = |key: &str| kvs.iter().find(|k| k.key == key);
        let need = |key: &str, example: &str| {
            get(key).ok_or_else(|| {
                ParseError::new(
                    line,
                    name.col,
                    format!("{kind} task {} needs `{key}`", quote(name.s)),
                    format!("add {key}=DURATION, e.g. {key}={example}"),
                )
            })
        };
        let dur = |key: &str, lo: Nanos, default: Nanos| -> Result<Nanos, ParseError> {
            get(key).map_or(Ok(default), |kv| dur_val(line, kv, lo, MAX_DURATION_NS))
        };
        let num = |key: &str, lo: u32, hi: u32, default: u32| -> Result<u32, ParseError> {
            get(key).map_or(Ok(default), |kv| u32_val(line, kv, lo, hi))
        };
        let workload = match kind {
            "timer" => Workload::Timer {
                period_ns: dur_val(line, need("period", "1ms")?, 1, MAX_DURATION_NS)?,
                run_ns: dur("run", 1, DEFAULT_TIMER_RUN)?,
            },
            "periodic" => {
                let run_ns = dur_val(line, need("run", "8ms")?, 1, MAX_DURATION_NS)?;
                let period_ns = match get("period") {
                    Some(kv) => Some(dur_val(line, kv, 1, MAX_DURATION_NS)?),
                    None => None,
                };
                let sleep_ns = match (get("sleep"), period_ns) {
                    (Some(kv), _) => dur_val(line, kv, 0, MAX_DURATION_NS)?,
                    (None, Some(_)) => 0,
                    (None, None) => {
                        return Err(ParseError::new(
                            line,
                            name.col,
                            format!("periodic task {} needs `sleep` or `period`", quote(name.s)),
                            "add sleep=DURATION (relative) or period=DURATION (absolute)",
                        ))
                    }
                };
                Workload::Periodic {
                    run_ns,
                    sleep_ns,
                    period_ns,
                }
            }
            "hackbench" => {
                let pipe = match get("ipc") {
                    Some(kv) => choice_val(line, kv, &["pipe", "socket"])? == "pipe",
                    None => false,
                };
                Workload::Hackbench {
                    groups: num("groups", 1, 256, DEFAULT_HB_GROUPS)?,
                    fds: num("fds", 1, 256, DEFAULT_HB_FDS)?,
                    threads: match get("mode") {
                        Some(kv) => choice_val(line, kv, &["thread", "process"])? == "thread",
                        None => false,
                    },
                    pipe,
                    loops: get("loops").map_or(Ok(0), |kv| uint_val(line, kv, 0, 1_000_000_000))?,
                    send_ns: dur("send", 1, DEFAULT_HB_MSG_NS)?,
                    recv_ns: dur("recv", 1, DEFAULT_HB_MSG_NS)?,
                    pipe_msgs: num("pipe_msgs", 1, 1_000_000, default_hb_msgs(pipe))?,
                }
            }
            "schbench" => Workload::Schbench {
                message_threads: num("messages", 1, 256, DEFAULT_SB_MESSAGES)?,
                workers: num("workers", 1, 1024, DEFAULT_SB_WORKERS)?,
                request_ns: dur("request", 1, DEFAULT_SB_REQUEST)?,
                sleep_ns: dur("think", 0, DEFAULT_SB_THINK)?,
            },
            _ => Workload::Hog,
        };
        let mut spec = TaskSpec::new(name.s, workload);
        spec.count = num("count", 1, MAX_COUNT as u32, 1)?;
        if let Some(kv) = get("nice") {
            spec.nice = match parse_int(kv.val) {
                Some(n) if (-20..=19).contains(&n) => i32::try_from(n).unwrap_or(0),
                _ => {
                    return Err(ParseError::new(
                        line,
                        kv.vcol,
                        format!("expected a nice value, found {}", quote(kv.val)),
                        "nice is an integer from -20 to 19",
                    ))
                }
            };
        }
        if let Some(kv) = get("policy") {
            spec.policy = match choice_val(line, kv, &["normal", "batch", "idle"])? {
                "batch" => Policy::Batch,
                "idle" => Policy::Idle,
                _ => Policy::Normal,
            };
        }
        if let Some(kv) = get("slice") {
            spec.slice_ns = Some(dur_val(line, kv, 1, MAX_DURATION_NS)?);
        }
        if let Some(kv) = get("cpus") {
            spec.cpus = Some(cpus_val(line, kv)?);
        }
        if let Some(kv) = get("group") {
            spec.group = Some(kv.val.to_string());
        }
        if let Some(kv) = get("slack") {
            spec.slack_ns = Some(dur_val(line, kv, 0, MAX_DURATION_NS)?);
        }
        spec.start_ns = dur("start", 0, 0)?;
        if let Some(kv) = get("kernel") {
            let digits = kv.val.strip_suffix('%').unwrap_or(kv.val);
            spec.kernel_pct = match parse_int(digits) {
                Some(n) if (0..=100).contains(&n) => Some(n as u32),
                _ => {
                    return Err(ParseError::new(
                        line,
                        kv.vcol,
                        format!("expected a percentage, found {}", quote(kv.val)),
                        "kernel is the share of run time spent in the kernel, 0% to 100%",
                    ))
                }
            };
        }
        if let Some(kv) = get("ksection") {
            spec.ksection_ns = Some(dur_val(line, kv, 0, MAX_DURATION_NS)?);
        }
        let width = task_line(&spec).chars().count();
        if width > MAX_COLUMNS {
            return Err(ParseError::new(
                line,
                name.col,
                format!(
                    "task {} would print as {width} columns, over {MAX_COLUMNS}",
                    quote(name.s)
                ),
                "durations print in whole units (2.8ms as 2800us); shorten the name \
                 or leave out default keys",
            ));
        }
        self.tasks.push(TaskPos {
            line,
            cpus_col: get("cpus").map_or(name.col, |kv| kv.vcol),
            group_col: get("group").map_or(name.col, |kv| kv.vcol),
        });
        self.sc.sim.tasks.push(spec);
        Ok(())
    }

    /// Syncs `sim` and checks what needs the whole text: CPU numbers
    /// against the machine and group names against the declared groups.
    /// `at` is the position for tasks without one (`--set`).
    fn finish(mut self, at: Option<(usize, usize)>) -> Result<Scenario, ParseError> {
        // Engine 0.1 ran every scenario without a `preempt` line under
        // `full`; such a link keeps it.
        if self.sc.preempt.is_none() && engine_before(&self.sc.engine, (0, 2)) {
            self.sc.preempt = Some(PreemptModel::Full);
        }
        self.sc.sync_sim();
        let d = self.sc.machine.default_costs();
        let [switch, wake, migrate, sleep] = self.explicit_costs;
        self.sc.sim.costs = Costs {
            switch_ns: switch.unwrap_or(d.switch_ns),
            wake_ns: wake.unwrap_or(d.wake_ns),
            migrate_ns: migrate.unwrap_or(d.migrate_ns),
            sleep_ns: sleep.unwrap_or(d.sleep_ns),
        };
        let sim = &self.sc.sim;
        if sim.warmup_ns >= sim.duration_ns {
            let line = self
                .seen
                .iter()
                .find(|(k, _)| k == "warmup")
                .map_or(at.map_or(0, |a| a.0), |(_, l)| *l);
            return Err(ParseError::new(
                line,
                1,
                format!(
                    "warmup {} leaves nothing of duration {} to measure",
                    fmt_duration(sim.warmup_ns),
                    fmt_duration(sim.duration_ns)
                ),
                "make `warmup` shorter than `duration`",
            ));
        }
        let nr = self.sc.machine.nr_cpus();
        for (i, t) in self.sc.sim.tasks.iter().enumerate() {
            let pos = self.tasks.get(i);
            if let Some(bad) = t.cpus.iter().flatten().find(|&&c| c >= nr) {
                let (line, col) = pos.map_or(at.unwrap_or((0, 1)), |p| (p.line, p.cpus_col));
                let has = if nr == 1 {
                    "only CPU 0".to_string()
                } else {
                    format!("CPUs 0-{}", nr - 1)
                };
                return Err(ParseError::new(
                    line,
                    col,
                    format!(
                        "task {} uses CPU {bad}, but machine {} has {has}",
                        quote(&t.name),
                        self.sc.machine
                    ),
                    "use CPUs that exist or a bigger machine, e.g. `machine smp8`",
                ));
            }
            if let Some(g) = &t.group {
                if !self.sc.sim.groups.iter().any(|s| &s.path == g) {
                    let (line, col) = pos.map_or(at.unwrap_or((0, 1)), |p| (p.line, p.group_col));
                    let declared: Vec<&str> =
                        self.sc.sim.groups.iter().map(|g| g.path.as_str()).collect();
                    let hint = if declared.is_empty() {
                        format!("declare it with `group {g} weight=100`")
                    } else {
                        with_suggestion(
                            g,
                            &declared,
                            format!(
                                "declared groups: {}; or declare it with `group {g} weight=100`",
                                declared.join(", ")
                            ),
                        )
                    };
                    return Err(ParseError::new(
                        line,
                        col,
                        format!("unknown group {}", quote(g)),
                        hint,
                    ));
                }
            }
        }
        self.check_cost(at)?;
        Ok(self.sc)
    }

    /// Refuses a scenario over the cost model's limits
    /// (`eevdf_sim::cost`): too many threads, or too many events to
    /// simulate in about a minute.
    fn check_cost(&self, at: Option<(usize, usize)>) -> Result<(), ParseError> {
        let nr = self.sc.machine.nr_cpus();
        let mut threads = 0u64;
        for (i, t) in self.sc.sim.tasks.iter().enumerate() {
            threads = threads.saturating_add(t.nr_threads());
            if threads > MAX_THREADS {
                let line = self.tasks.get(i).map_or(at.map_or(0, |a| a.0), |p| p.line);
                return Err(ParseError::new(
                    line,
                    1,
                    format!(
                        "the scenario has {threads} threads by task {}, over the limit of {MAX_THREADS}",
                        quote(&t.name)
                    ),
                    "use fewer groups, fds, workers or a smaller count (hackbench makes \
                     groups x fds x 2 threads, schbench messages x (workers + 1))",
                ));
            }
        }
        let cost = Cost::of(&self.sc.sim, nr);
        if cost.events > MAX_EVENTS {
            let line = self
                .seen
                .iter()
                .find(|(k, _)| k == "duration")
                .map_or(at.map_or(0, |a| a.0), |(_, l)| *l);
            return Err(ParseError::new(
                line,
                1,
                format!(
                    "the scenario is estimated at {} events ({} per simulated second on {nr} CPUs), \
                     over the limit of {MAX_EVENTS}",
                    cost.events, cost.events_per_sec
                ),
                "shorten `duration`, or use fewer tasks, longer periods or fewer CPUs",
            ));
        }
        Ok(())
    }
}

/// Parses the keys of `machine custom ...` (after `custom`).
fn parse_custom_machine(line: usize, toks: &[Tok]) -> Result<Machine, ParseError> {
    let mut c = CustomMachine {
        nodes: 1,
        packages_per_node: 1,
        llcs_per_package: 1,
        clusters_per_llc: 1,
        cores_per_cluster: 1,
        smt: 1,
        capacities: Vec::new(),
        remote_distance: 20,
    };
    let mut seen: Vec<&str> = Vec::new();
    for t in toks {
        let Some((k, v)) = t.s.split_once('=') else {
            return Err(ParseError::new(
                line,
                t.col,
                format!("expected KEY=VALUE, found {}", quote(t.s)),
                format!("machine custom keys: {}", CUSTOM_KEYS.join(", ")),
            ));
        };
        if !CUSTOM_KEYS.contains(&k) {
            return Err(ParseError::new(
                line,
                t.col,
                format!("unknown machine key {}", quote(k)),
                format!("machine custom keys: {}", CUSTOM_KEYS.join(", ")),
            ));
        }
        if seen.contains(&k) {
            return Err(ParseError::new(
                line,
                t.col,
                format!("duplicate key {}", quote(k)),
                "give each key once",
            ));
        }
        seen.push(k);
        let vcol = t.col + k.chars().count() + 1;
        let bad = |what: &str| {
            ParseError::new(
                line,
                vcol,
                format!("bad {k} {}", quote(v)),
                what.to_string(),
            )
        };
        let num = |lo: u64, hi: u64| -> Result<u32, ParseError> {
            parse_uint(v)
                .filter(|n| (lo..=hi).contains(n))
                .map(|n| n as u32)
                .ok_or_else(|| bad(&format!("{k} is an integer from {lo} to {hi}")))
        };
        match k {
            "nodes" => c.nodes = num(1, 64)?,
            "packages" => c.packages_per_node = num(1, 64)?,
            "llcs" => c.llcs_per_package = num(1, 256)?,
            "clusters" => c.clusters_per_llc = num(1, 64)?,
            "cores" => c.cores_per_cluster = num(1, 512)?,
            "smt" => c.smt = num(1, 8)?,
            "distance" => c.remote_distance = num(11, 255)?,
            _ => {
                let mut caps = Vec::new();
                for part in v.split(',') {
                    let (n, cap) = match part.split_once('x') {
                        Some((n, cap)) => (parse_uint(n), parse_uint(cap)),
                        None => (Some(1), parse_uint(part)),
                    };
                    match (n, cap) {
                        (Some(n), Some(cap))
                            if (1..=4096).contains(&n) && (1..=1024).contains(&cap) =>
                        {
                            caps.extend(std::iter::repeat_n(cap as u32, n as usize));
                        }
                        _ => {
                            return Err(bad(
                                "capacity is a list like 4x448,3x871,1x1024 (1 to 1024 each)",
                            ))
                        }
                    }
                }
                c.capacities = caps;
            }
        }
    }
    let m = Machine::Custom(c);
    if let Err(e) = Topology::build(&m.spec()) {
        let col = toks.first().map_or(1, |t| t.col);
        return Err(ParseError::new(
            line,
            col,
            format!("invalid machine: {e}"),
            "check the counts",
        ));
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use eevdf_core::features::{NbMode, ProtSet};
    use proptest::prelude::*;

    const EXAMPLE: &str = "\
eevdf-scenario v1
engine 0.1
machine smp4
kernel v7.1
hz 250
duration 130s
seed 1
preempt full
features NO_RUN_TO_PARITY PREEMPT_SHORT PS_SET_NEXT_BUDDY
sysctl base_slice_ns=2800000 migration_cost_ns=500000
costs switch=2us wake=5us migrate=20us
group /test-B weight=100
task ct kind=timer period=3777us run=20us slice=8ms group=/test-B
task rtapp count=16 kind=periodic run=8177us sleep=17777us slice=16ms
task hb kind=hackbench groups=1 fds=20 mode=thread ipc=pipe slice=16ms
task hog count=2 kind=hog nice=5 cpus=0-3
end
";

    const EXAMPLE_CANONICAL: &str = "\
eevdf-scenario v1
engine 0.1
machine smp4
kernel v7.1
hz 250
duration 130s
seed 1
preempt full
features NO_RUN_TO_PARITY PS_SET_NEXT_BUDDY
sysctl base_slice_ns=2800000 migration_cost_ns=500000
group /test-B weight=100
task ct kind=timer period=3777us slice=8ms group=/test-B
task rtapp kind=periodic count=16 run=8177us sleep=17777us slice=16ms
task hb kind=hackbench mode=thread ipc=pipe slice=16ms
task hog kind=hog count=2 nice=5 cpus=0-3
end
";

    /// A minimal scenario around some body lines.
    fn wrap(body: &str) -> String {
        format!("{HEADER}\n{body}\nend\n")
    }

    fn err(text: &str) -> ParseError {
        match Scenario::parse(text) {
            Ok(s) => panic!("parsed:\n{text}\nas\n{}", s.to_text()),
            Err(e) => e,
        }
    }

    #[track_caller]
    fn err_at(text: &str, line: usize, column: usize, words: &[&str]) -> ParseError {
        let e = err(text);
        assert_eq!((e.line, e.column), (line, column), "{e}");
        let all = format!("{} {}", e.message, e.hint);
        for w in words {
            assert!(all.contains(w), "`{w}` not in: {e}");
        }
        assert!(!e.message.is_empty() && !e.hint.is_empty(), "{e}");
        e
    }

    #[test]
    fn warmup_is_canonical_after_duration_and_left_out_at_zero() {
        let s = Scenario::parse(&wrap("seed 2\nwarmup 1500ms\nduration 3s")).unwrap();
        assert_eq!(s.sim.warmup_ns, 1_500_000_000);
        let t = s.to_text();
        assert!(t.contains("duration 3s\nwarmup 1500ms\nseed 2\n"), "{t}");
        assert_eq!(Scenario::parse(&t).unwrap(), s);
        let none = Scenario::parse(&wrap("warmup 0")).unwrap();
        assert_eq!(none.sim.warmup_ns, 0);
        assert!(!none.to_text().contains("warmup"));
        let mut set = Scenario::parse(&wrap("duration 2s")).unwrap();
        set.set("warmup=500ms").unwrap();
        assert_eq!(set.sim.warmup_ns, 500_000_000);
    }

    #[test]
    fn warmup_must_leave_something_to_measure() {
        err_at(
            &wrap("duration 2s\nwarmup 2s"),
            3,
            1,
            &["warmup 2s", "duration 2s", "shorter"],
        );
        err_at(&wrap("warmup 1s\nwarmup 1s"), 3, 1, &["duplicate `warmup`"]);
        err_at(&wrap("warmup 1"), 2, 8, &["unit"]);
        let mut sc = Scenario::parse(&wrap("duration 2s")).unwrap();
        assert!(sc.set("warmup=3s").is_err());
    }

    #[test]
    fn example_parses_to_the_expected_config() {
        let s = Scenario::parse(EXAMPLE).unwrap();
        let sim = &s.sim;
        assert_eq!(s.engine, "0.1");
        assert_eq!(s.machine, Machine::Smp(4));
        assert_eq!(sim.nr_cpus, 4);
        assert_eq!(sim.hz, 250);
        assert_eq!(sim.duration_ns, 130 * S);
        assert_eq!(sim.seed, 1);
        assert_eq!(sim.preempt, PreemptModel::Full);
        assert_eq!(sim.profile, Profile::V7_1);
        assert_eq!(s.features.profile, Profile::V7_1);
        assert_eq!(sim.features, s.features.features);
        assert!(!sim.features.run_to_parity);
        assert!(sim.features.preempt_short && sim.features.ps_set_next_buddy);
        assert!(sim.features.place_lag && !sim.features.next_buddy);
        assert_eq!(sim.sysctl.base_slice_ns, Some(2_800_000));
        assert_eq!(sim.sysctl.migration_cost_ns, Some(500_000));
        assert_eq!(sim.costs, Costs::default());
        assert_eq!(
            sim.groups,
            [GroupSpec {
                path: "/test-B".into(),
                weight: 100,
                idle: false
            }]
        );
        let t = &sim.tasks;
        assert_eq!(t.len(), 4);
        assert_eq!(t[0].name, "ct");
        assert_eq!(
            t[0].workload,
            Workload::Timer {
                period_ns: 3_777_000,
                run_ns: 20_000
            }
        );
        assert_eq!(t[0].slice_ns, Some(8 * MS));
        assert_eq!(t[0].group.as_deref(), Some("/test-B"));
        assert_eq!((t[0].count, t[0].nice, t[0].cpus.as_ref()), (1, 0, None));
        assert_eq!(t[1].count, 16);
        assert_eq!(
            t[1].workload,
            Workload::Periodic {
                run_ns: 8_177_000,
                sleep_ns: 17_777_000,
                period_ns: None
            }
        );
        assert_eq!(t[1].slice_ns, Some(16 * MS));
        assert_eq!(
            t[2].workload,
            Workload::Hackbench {
                groups: 1,
                fds: 20,
                threads: true,
                pipe: true,
                loops: 0,
                send_ns: 2_000,
                recv_ns: 2_000,
                pipe_msgs: 655
            }
        );
        assert_eq!((t[3].count, t[3].nice), (2, 5));
        assert_eq!(t[3].workload, Workload::Hog);
        assert_eq!(t[3].cpus, Some(vec![0, 1, 2, 3]));
        assert_eq!(t[3].policy, Policy::Normal);
        assert_eq!(
            (t[3].slack_ns, t[3].start_ns, t[3].group.as_ref()),
            (None, 0, None)
        );
    }

    #[test]
    fn example_prints_canonically_and_round_trips() {
        let s = Scenario::parse(EXAMPLE).unwrap();
        assert_eq!(s.to_text(), EXAMPLE_CANONICAL);
        let back = Scenario::parse(EXAMPLE_CANONICAL).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.to_text(), EXAMPLE_CANONICAL);
        assert!(s.validate().is_ok());
    }

    #[test]
    fn defaults_and_leniency() {
        let s =
            Scenario::parse("# a comment\n\n  eevdf-scenario   v1  # hi\r\nend\n# bye\n").unwrap();
        assert_eq!(s, Scenario::default());
        assert_eq!(s.engine, ENGINE_VERSION);
        assert_eq!(s.machine, Machine::Smp(1));
        let sim = &s.sim;
        assert_eq!((sim.nr_cpus, sim.hz, sim.seed), (1, 250, 1));
        // No `preempt` line: the default profile's model.
        assert_eq!((sim.duration_ns, sim.preempt), (10 * S, PreemptModel::Lazy));
        assert_eq!(sim.profile, Profile::V7_2);
        assert!(sim.tasks.is_empty() && sim.groups.is_empty());
        assert_eq!(
            s.to_text(),
            "eevdf-scenario v1\nengine 0.7\nmachine up\nkernel v7.2\nhz 250\n\
             duration 10s\nseed 1\nend\n"
        );
        // Machine may come after the tasks; features before the kernel.
        let s = Scenario::parse(&wrap(
            "task a kind=hog cpus=7,0-2,1\nfeatures NB_MODE=mainline\nkernel 6.19-rc1\n\
             machine smp8 # eight",
        ))
        .unwrap();
        assert_eq!(s.sim.tasks[0].cpus, Some(vec![0, 1, 2, 7]));
        assert_eq!(s.sim.features.nb_mode, NbMode::Mainline);
        assert_eq!(s.features.profile, Profile::V6_19Rc1);
        assert!(s.to_text().contains("\nkernel v6.19-rc1\n"));
        assert!(s.to_text().contains("cpus=0-2,7"));
        assert!(s.to_text().contains("\nfeatures NB_MODE=mainline\n"));
    }

    #[test]
    fn every_key_round_trips() {
        let text = wrap(
            "machine smp16\nkernel tip-2026-09\nhz 1000\nduration 1.5s\nseed 18446744073709551615\n\
             preempt lazy\nfeatures PROT_INELIGIBLE,TTWU_QUEUE NO_UTIL_EST\n\
             features LAG_CLAMP=2SLICE_TICK\nsysctl base_slice_ns=2.8ms\n\
             sysctl migration_cost_ns=0\ncosts switch=0 migrate=1.5us\n\
             group /a weight=50 idle\ngroup /b idle=0 weight=10000\n\
             task t kind=timer period=1ms run=0.05ms policy=batch slack=0s\n\
             task p kind=periodic run=1ms period=10ms start=5ms group=/a\n\
             task q kind=periodic run=1ms period=10ms sleep=2ms nice=-20\n\
             task h kind=hackbench groups=2 fds=4 loops=100 send=1us recv=3us\n\
             task h2 kind=hackbench pipe_msgs=10 mode=process ipc=socket\n\
             task s kind=schbench messages=2 workers=8 request=50us think=0\n\
             task i kind=hog policy=idle cpus=15 group=/b count=4096 slice=0.1ms",
        );
        let s = Scenario::parse(&text).unwrap();
        let sim = &s.sim;
        assert_eq!((sim.nr_cpus, sim.hz, sim.seed), (16, 1000, u64::MAX));
        assert_eq!(sim.duration_ns, 1_500 * MS);
        assert_eq!(sim.preempt, PreemptModel::Lazy);
        assert_eq!(sim.features.prot_set, ProtSet::Ineligible);
        assert_eq!(
            s.features.not_modelled,
            [
                ("TTWU_QUEUE".to_string(), true),
                ("UTIL_EST".to_string(), false)
            ]
        );
        assert_eq!(sim.sysctl.base_slice_ns, Some(2_800_000));
        assert_eq!(sim.sysctl.migration_cost_ns, Some(0));
        assert_eq!(
            (sim.costs.switch_ns, sim.costs.wake_ns, sim.costs.migrate_ns),
            (0, 5_000, 1_500)
        );
        assert!(sim.groups[0].idle && !sim.groups[1].idle);
        assert_eq!(sim.groups[1].weight, 10_000);
        let t = &sim.tasks;
        assert_eq!(
            t[0].workload,
            Workload::Timer {
                period_ns: MS,
                run_ns: 50_000
            }
        );
        assert_eq!((t[0].policy, t[0].slack_ns), (Policy::Batch, Some(0)));
        assert_eq!(
            t[1].workload,
            Workload::Periodic {
                run_ns: MS,
                sleep_ns: 0,
                period_ns: Some(10 * MS)
            }
        );
        assert_eq!(t[1].start_ns, 5 * MS);
        assert_eq!(t[2].nice, -20);
        assert!(matches!(
            t[3].workload,
            Workload::Hackbench {
                groups: 2,
                fds: 4,
                loops: 100,
                send_ns: 1_000,
                recv_ns: 3_000,
                ..
            }
        ));
        assert!(matches!(
            t[4].workload,
            Workload::Hackbench {
                threads: false,
                pipe: false,
                pipe_msgs: 10,
                ..
            }
        ));
        assert_eq!(
            t[5].workload,
            Workload::Schbench {
                message_threads: 2,
                workers: 8,
                request_ns: 50_000,
                sleep_ns: 0
            }
        );
        assert_eq!((t[6].count, t[6].policy), (4096, Policy::Idle));
        assert_eq!(t[6].slice_ns, Some(100_000));
        let printed = s.to_text();
        let expected_tail = "\
preempt lazy
features PROT_SET=INELIGIBLE LAG_CLAMP=2slice_tick TTWU_QUEUE
features NO_UTIL_EST
sysctl base_slice_ns=2800000 migration_cost_ns=0
costs switch=0s migrate=1500ns
group /a weight=50 idle
group /b weight=10000
task t kind=timer period=1ms run=50us policy=batch slack=0s
task p kind=periodic run=1ms period=10ms group=/a start=5ms
task q kind=periodic run=1ms sleep=2ms period=10ms nice=-20
task h kind=hackbench groups=2 fds=4 loops=100 send=1us recv=3us
task h2 kind=hackbench pipe_msgs=10
task s kind=schbench messages=2 workers=8 request=50us think=0s
task i kind=hog count=4096 policy=idle slice=100us cpus=15 group=/b
end
";
        assert!(printed.ends_with(expected_tail), "{printed}");
        assert!(printed.starts_with(
            "eevdf-scenario v1\nengine 0.7\nmachine smp16\nkernel tip-2026-09\nhz 1000\n\
             duration 1500ms\nseed 18446744073709551615\n"
        ));
        let back = Scenario::parse(&printed).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.to_text(), printed);
    }

    #[test]
    fn durations() {
        let ok = [
            ("0", 0),
            ("0s", 0),
            ("1ns", 1),
            ("2.8ms", 2_800_000),
            ("0.5s", 500_000_000),
            ("3777us", 3_777_000),
            ("1.000000001s", 1_000_000_001),
            ("1.50000000000000s", 1_500_000_000),
            ("007ms", 7_000_000),
            ("18446744073709551615ns", u64::MAX),
        ];
        for (s, v) in ok {
            assert_eq!(parse_duration(s), Ok(v), "{s}");
        }
        for s in [
            "10xs",
            "1.5ns",
            "5",
            "ms",
            "1.ms",
            ".5ms",
            "1..5ms",
            "1.2.3s",
            "-1ms",
            "1e3us",
            "18446744073709551616ns",
            "99999999999999999999999s",
            "1.0000000001s",
            "",
        ] {
            assert!(parse_duration(s).is_err(), "{s}");
        }
        let fmt = [
            (0, "0s"),
            (1, "1ns"),
            (2_800_000, "2800us"),
            (130 * S, "130s"),
            (8 * MS, "8ms"),
            (1_500, "1500ns"),
        ];
        for (v, s) in fmt {
            assert_eq!(fmt_duration(v), s);
            assert_eq!(parse_duration(s), Ok(v));
        }
    }

    #[test]
    fn the_qemu_icount_machine_brings_measured_costs() {
        use eevdf_sim::topology::QEMU_ICOUNT_COSTS as Q;
        let s = Scenario::parse(&wrap("machine qemu-icount\ntask a kind=hog")).unwrap();
        assert_eq!((s.machine.nr_cpus(), s.sim.nr_cpus), (1, 1));
        assert_eq!(s.machine.default_costs(), Q);
        assert_eq!(s.sim.costs, Q, "the machine's costs apply");
        let text = s.to_text();
        assert!(text.contains("\nmachine qemu-icount\n"), "{text}");
        assert!(!text.contains("costs"), "defaults are not printed: {text}");
        assert_eq!(Scenario::parse(&text).unwrap(), s);
        s.validate().unwrap();
        // Explicit keys win, whether `costs` comes before or after `machine`.
        for body in [
            "costs switch=3us\nmachine qemu-icount",
            "machine qemu-icount\ncosts switch=3us",
        ] {
            let s = Scenario::parse(&wrap(body)).unwrap();
            assert_eq!(
                s.sim.costs,
                Costs {
                    switch_ns: 3_000,
                    ..Q
                }
            );
            assert!(s.to_text().contains("\ncosts switch=3us\n"));
            assert_eq!(Scenario::parse(&s.to_text()).unwrap(), s);
        }
        // A key equal to the usual default is still explicit here.
        let d = Costs::default();
        let s = Scenario::parse(&wrap("machine qemu-icount\ncosts wake=5us")).unwrap();
        assert_eq!(s.sim.costs.wake_ns, d.wake_ns);
        assert!(
            s.to_text().contains("\ncosts wake=5us\n"),
            "{}",
            s.to_text()
        );
        assert_eq!(Scenario::parse(&s.to_text()).unwrap(), s);
        // Other machines keep the usual defaults.
        for m in ["up", "smp4", "rb5"] {
            let s = Scenario::parse(&wrap(&format!("machine {m}"))).unwrap();
            assert_eq!(s.sim.costs, d, "{m}");
        }
        // `--set machine=` swaps the defaults and keeps explicit keys.
        let mut s = Scenario::parse(&wrap("costs migrate=1us")).unwrap();
        s.set("machine=qemu-icount").unwrap();
        assert_eq!(
            s.sim.costs,
            Costs {
                migrate_ns: 1_000,
                ..Q
            }
        );
        s.set("costs.wake=1us").unwrap();
        s.set("machine=up").unwrap();
        assert_eq!(
            s.sim.costs,
            Costs {
                wake_ns: 1_000,
                migrate_ns: 1_000,
                ..d
            }
        );
        // The simulator runs it.
        let s = Scenario::parse(&wrap(
            "machine qemu-icount\nduration 50ms\ntask ct kind=timer period=1ms run=10us",
        ))
        .unwrap();
        let r = eevdf_sim::simulate(s.sim.clone());
        assert!(r.sim_ns > 0);
    }

    /// `costs sleep=` (a timed sleep's own CPU) prints, parses back and
    /// lengthens every activation of a timer task by its value.
    #[test]
    fn costs_sleep_key() {
        let s = Scenario::parse(&wrap(
            "costs switch=5us sleep=5390ns\nduration 20ms\n\
             task ct kind=timer period=1ms run=20us",
        ))
        .unwrap();
        assert_eq!(s.sim.costs.sleep_ns, 5_390);
        assert!(s.to_text().contains("\ncosts switch=5us sleep=5390ns\n"));
        assert_eq!(Scenario::parse(&s.to_text()).unwrap(), s);
        let cpu = |sc: &Scenario| eevdf_sim::simulate(sc.sim.clone()).by_name[0].cpu_ns;
        let mut none = s.clone();
        none.set("costs.sleep=0").unwrap();
        assert!(!none.to_text().contains("sleep="));
        let (with, without) = (cpu(&s), cpu(&none));
        assert_eq!(with - without, 20 * 5_390, "{with} {without}");
    }

    #[test]
    fn machines() {
        for (s, n, back) in [
            ("up", 1, "up"),
            ("smp1", 1, "up"),
            ("smp2", 2, "smp2"),
            ("smp8", 8, "smp8"),
            ("smp512", 512, "smp512"),
            ("smp06", 6, "smp6"),
        ] {
            let m = Machine::parse(s).unwrap();
            assert_eq!(m.nr_cpus(), n);
            assert_eq!(m.to_string(), back);
        }
        for s in [
            "smp0", "smp513", "smp", "smp+4", "SMP4", "numa2", "smp-1", "",
        ] {
            assert_eq!(Machine::parse(s), None, "{s}");
        }
    }

    #[test]
    fn error_positions() {
        // Line 4 of wrap("machine smp4\nhz 250\n...") is the third body line.
        err_at(
            &wrap("machine smp4\nhz 250\ntask ct kind=timer peroid=1ms"),
            4,
            20,
            &["peroid", "period", "timer"],
        );
        err_at(&wrap("duration 10xs"), 2, 10, &["unit", "xs", "ms"]);
        err_at(
            &wrap("task a kind=timer period=1.5ns"),
            2,
            26,
            &["whole", "nanoseconds"],
        );
        err_at(&wrap("task a kind=hog start=5"), 2, 23, &["unit"]);
        err_at(
            &format!("{HEADER}\nmachine smp2\n# the end is missing\n"),
            3,
            21,
            &["missing `end`", "add `end`"],
        );
        err_at(&format!("{HEADER}\nhz 250"), 2, 7, &["add `end`"]);
        err_at(
            &wrap("machin smp2"),
            2,
            1,
            &["unknown directive", "machine"],
        );
        err_at(
            &wrap("  bogus 1"),
            2,
            3,
            &["unknown directive", "directives:"],
        );
        err_at(
            &wrap("task a kind=hog group=/nope"),
            2,
            23,
            &["unknown group", "/nope", "group /nope weight=100"],
        );
        err_at(
            &wrap("group /nop\ntask a kind=hog group=/nope"),
            3,
            23,
            &["unknown group", "did you mean `/nop`"],
        );
        err_at(
            &wrap("machine smp4\ntask a kind=hog cpus=0-3\ntask b kind=hog cpus=1,4"),
            4,
            22,
            &["CPU 4", "smp4", "0-3"],
        );
        err_at(
            &wrap("task a kind=hog cpus=1"),
            2,
            22,
            &["CPU 1", "machine up", "only CPU 0"],
        );
        err_at(&wrap("task a kind=hog cpus=0-512"), 2, 22, &["CPU list"]);
        err_at(&wrap("task a kind=hog cpus=0,,2"), 2, 24, &["empty"]);
        err_at(&wrap("task a kind=hog cpus=0,3-1"), 2, 24, &["backwards"]);
        err_at(
            &wrap("task a kind=hog\n\ntask a kind=timer period=1ms"),
            4,
            6,
            &["duplicate task name", "line 2"],
        );
        let long = format!("task a kind=hog # {}", "x".repeat(60));
        err_at(&wrap(&long), 2, 73, &["78 columns", "72"]);
        err_at(
            "eevdf-scenario v2\nend\n",
            1,
            16,
            &["unsupported version", "v1"],
        );
        err_at("\n# c\nmachine up\nend\n", 3, 1, &["eevdf-scenario v1"]);
        err_at("eevdf-scenario\nend\n", 1, 16, &["missing version"]);
        err_at("eevdf-scenario v1 x\nend\n", 1, 19, &["unexpected"]);
        err_at("", 1, 1, &["empty"]);
        err_at("  # only a comment\n", 1, 1, &["empty"]);
        err_at(&format!("{}\nhz 250\n", wrap("")), 5, 1, &["after `end`"]);
        err_at(&format!("{HEADER}\nend now\n"), 2, 5, &["after `end`"]);
        err_at(&wrap("hz 251"), 2, 4, &["hz", "100, 250, 300 or 1000"]);
        err_at(&wrap("hz"), 2, 4, &["needs a value"]);
        err_at(&wrap("hz 250 300"), 2, 8, &["unexpected `300`"]);
        err_at(&wrap("hz 250\nhz 250"), 3, 1, &["duplicate `hz`", "line 2"]);
        err_at(&wrap("duration 0s"), 2, 10, &["more than 0"]);
        err_at(&wrap("duration 3601s"), 2, 10, &["at most 3600s"]);
        err_at(&wrap("seed -1"), 2, 6, &["seed"]);
        err_at(
            &wrap("preempt rt"),
            2,
            9,
            &["none, voluntary, full or lazy"],
        );
        err_at(&wrap("kernel v6.6"), 2, 8, &["unknown kernel", "v6.12"]);
        err_at(&wrap("machine smp0"), 2, 9, &["unknown machine", "smpN"]);
        err_at(&wrap("engine 1"), 2, 8, &["X.Y"]);
        err_at(
            &wrap("features NO_RUN_TO_PARITY NO_RUN_TO_PRITY"),
            2,
            27,
            &["unknown sched feature", "did you mean NO_RUN_TO_PARITY"],
        );
        err_at(&wrap("features A,NO_PLACE_LAG"), 2, 10, &["`A`"]);
        err_at(
            &wrap("features PLACE_LAG,NB_MODE=x"),
            2,
            20,
            &["NB_MODE", "legacy"],
        );
        err_at(&wrap("features NB_MODE"), 2, 10, &["needs a value"]);
        err_at(&wrap("features # none"), 2, 10, &["at least one"]);
        err_at(&wrap("sysctl base_slice=3ms"), 2, 8, &["base_slice_ns"]);
        err_at(&wrap("sysctl base_slice_ns=0"), 2, 22, &["out of range"]);
        err_at(
            &wrap("sysctl base_slice_ns=1ms\nsysctl base_slice_ns=2ms"),
            3,
            8,
            &["duplicate", "line 2"],
        );
        err_at(&wrap("costs switch=2"), 2, 14, &["unit"]);
        err_at(&wrap("costs switch=2s"), 2, 14, &["at most 1s"]);
        err_at(&wrap("costs"), 2, 7, &["key=value"]);
        err_at(&wrap("costs wake"), 2, 7, &["key=value"]);
        err_at(&wrap("costs wake="), 2, 12, &["needs a value"]);
        err_at(&wrap("group /a/b"), 2, 9, &["one level of groups"]);
        err_at(&wrap("group a"), 2, 7, &["start with `/`"]);
        err_at(&wrap("group /"), 2, 8, &["0 characters"]);
        err_at(&wrap("group /a weight=0"), 2, 17, &["1 to 10000"]);
        err_at(&wrap("group /a wieght=5"), 2, 10, &["weight"]);
        err_at(&wrap("group /a idle=2"), 2, 15, &["0 or 1"]);
        err_at(
            &wrap("group /a\ngroup /a"),
            3,
            7,
            &["duplicate group", "line 2"],
        );
        err_at(&wrap("group /a idle idle"), 2, 15, &["duplicate"]);
        err_at(&wrap("task"), 2, 6, &["needs a name"]);
        err_at(
            &wrap("task a.b kind=hog"),
            2,
            7,
            &["unexpected character", "`a.b`"],
        );
        err_at(
            &wrap(&format!("task {} kind=hog", "n".repeat(33))),
            2,
            6,
            &["33"],
        );
        err_at(&wrap("task a count=2"), 2, 6, &["no `kind`", "timer"]);
        err_at(
            &wrap("task a kind=hogg"),
            2,
            13,
            &["unknown kind", "did you mean `hog`"],
        );
        err_at(
            &wrap("task a kind=hog kind=hog"),
            2,
            17,
            &["duplicate key `kind`", "column 8"],
        );
        err_at(
            &wrap("task a kind=hog period=1ms"),
            2,
            17,
            &["for a hog task", "kind, count"],
        );
        err_at(&wrap("task a kind=hog nice"), 2, 17, &["key=value"]);
        err_at(&wrap("task a kind=timer"), 2, 6, &["needs `period`"]);
        err_at(
            &wrap("task a kind=periodic sleep=1ms"),
            2,
            6,
            &["needs `run`"],
        );
        err_at(
            &wrap("task a kind=periodic run=1ms"),
            2,
            6,
            &["`sleep` or `period`"],
        );
        err_at(&wrap("task a kind=hog count=0"), 2, 23, &["1 to 4096"]);
        err_at(&wrap("task a kind=hog count=4097"), 2, 23, &["1 to 4096"]);
        err_at(&wrap("task a kind=hog nice=20"), 2, 22, &["-20 to 19"]);
        err_at(&wrap("task a kind=hog nice=+1"), 2, 22, &["-20 to 19"]);
        err_at(
            &wrap("task a kind=hog policy=fifo"),
            2,
            24,
            &["normal, batch, idle"],
        );
        err_at(&wrap("task a kind=hog slice=0"), 2, 23, &["more than 0"]);
        err_at(
            &wrap("task a kind=hackbench mode=threads"),
            2,
            28,
            &["did you mean `thread`"],
        );
        err_at(&wrap("task a kind=hackbench fds=257"), 2, 27, &["1 to 256"]);
        err_at(&wrap("task a kind=schbench think=1"), 2, 28, &["unit"]);
        // A line that fits, whose canonical form would not.
        let ok = "task abcdefghijklmnopqrstuvwxyz012345 kind=periodic run=1.1s sleep=2.2s";
        assert_eq!(ok.len(), 71);
        err_at(&wrap(ok), 2, 6, &["75 columns", "2800us"]);
        let fits = ok.replace("2.2s", "2s");
        assert!(Scenario::parse(&wrap(&fits)).is_ok());
    }

    #[test]
    fn bounded_input() {
        let big = format!(
            "{HEADER}\n{}end\n",
            "# padding padding padding\n".repeat(3000)
        );
        err_at(&big, 1, 1, &["bytes"]);
        let many = format!("{HEADER}\n{}end\n", "\n".repeat(1000));
        err_at(&many, 1001, 1, &["1000 lines"]);
        let fine = format!("{HEADER}\n{}end\n", "\n".repeat(997));
        assert!(Scenario::parse(&fine).is_ok());
    }

    #[test]
    fn set_replaces_directives() {
        let mut s = Scenario::parse(EXAMPLE).unwrap();
        s.set("hz=1000").unwrap();
        s.set("duration=0.5s").unwrap();
        s.set("seed=42").unwrap();
        s.set("preempt=lazy").unwrap();
        s.set("machine=smp8").unwrap();
        s.set("sysctl.base_slice_ns=3ms").unwrap();
        s.set("costs.switch=1us").unwrap();
        s.set("costs=wake=0 migrate=1us").unwrap();
        s.set("features=NEXT_BUDDY,TTWU_QUEUE").unwrap();
        let sim = &s.sim;
        assert_eq!((sim.hz, sim.seed, sim.nr_cpus), (1000, 42, 8));
        assert_eq!(s.machine, Machine::Smp(8));
        assert_eq!(sim.duration_ns, 500 * MS);
        assert_eq!(sim.preempt, PreemptModel::Lazy);
        assert_eq!(sim.sysctl.base_slice_ns, Some(3 * MS));
        assert_eq!(sim.sysctl.migration_cost_ns, Some(500_000));
        assert_eq!(
            (sim.costs.switch_ns, sim.costs.wake_ns, sim.costs.migrate_ns),
            (1_000, 0, 1_000)
        );
        assert!(sim.features.next_buddy && !sim.features.run_to_parity);
        assert_eq!(sim.features, s.features.features);
        assert_eq!(s.features.not_modelled, [("TTWU_QUEUE".to_string(), true)]);

        // Re-basing keeps the tokens: NO_RUN_TO_PARITY survives a new
        // kernel, NEXT_BUDDY becomes the default of 6.19-rc1.
        s.set("kernel=v6.19-rc1").unwrap();
        assert_eq!(s.sim.profile, Profile::V6_19Rc1);
        assert_eq!(s.sim.features, s.features.features);
        assert!(!s.sim.features.run_to_parity && s.sim.features.next_buddy);
        assert_eq!(s.sim.features.nb_mode, NbMode::MelV5);
        assert_eq!(
            s.features.canonical_tokens(),
            ["NO_RUN_TO_PARITY", "PS_SET_NEXT_BUDDY", "TTWU_QUEUE"]
        );
        let text = s.to_text();
        assert_eq!(Scenario::parse(&text).unwrap(), s);
        assert!(text.contains("\nsysctl base_slice_ns=3000000 migration_cost_ns=500000\n"));
        assert!(text.contains("\ncosts switch=1us wake=0s migrate=1us\n"));
    }

    #[test]
    fn set_errors_leave_the_scenario_alone() {
        let s0 = Scenario::parse(EXAMPLE).unwrap();
        let mut s = s0.clone();
        let cases: &[(&str, usize, &str)] = &[
            ("hz", 1, "KEY=VALUE"),
            ("hz=99", 4, "hz"),
            ("hz=", 4, "needs a value"),
            ("=1", 1, "missing key"),
            ("hx=250", 1, "did you mean `hz`"),
            ("task=x kind=hog", 1, "cannot be set"),
            ("group=/x", 1, "cannot be set"),
            ("end=1", 1, "cannot be set"),
            ("hz.x=1", 1, "no sub-keys"),
            ("sysctl.base_slice=1ms", 8, "base_slice_ns"),
            ("costs.switch=1", 14, "unit"),
            (
                "features=NO_PLACE_LAG,NO_BOGUS",
                23,
                "unknown sched feature",
            ),
            ("machine=smp2", 9, "CPU 2"),
            ("machine=smp9999", 9, "unknown machine"),
            ("kernel=v5.0", 8, "unknown kernel"),
            ("duration=1h", 10, "unit"),
        ];
        for (arg, col, word) in cases {
            let e = s.set(arg).unwrap_err();
            assert_eq!((e.line, e.column), (0, *col), "{arg}: {e}");
            assert!(
                format!("{} {}", e.message, e.hint).contains(word),
                "{arg}: {e}"
            );
            assert_eq!(s, s0, "{arg} changed the scenario");
        }
        assert_eq!(s.to_text(), s0.to_text());
    }

    #[test]
    fn apply_features_over_the_scenario() {
        let mut s = Scenario::parse(EXAMPLE).unwrap();
        s.apply_features("RUN_TO_PARITY, NO_PLACE_LAG\nLAG_CLAMP=2slice_tick ")
            .unwrap();
        assert!(s.sim.features.run_to_parity && !s.sim.features.place_lag);
        assert_eq!(s.sim.features, s.features.features);
        assert_eq!(
            s.features.canonical_tokens(),
            ["NO_PLACE_LAG", "PS_SET_NEXT_BUDDY", "LAG_CLAMP=2slice_tick"]
        );
        let before = s.clone();
        let e = s.apply_features("NO_PLACE_LAG NEXT_BUDY").unwrap_err();
        assert_eq!((e.line, e.column), (0, 14));
        assert!(e.hint.contains("NEXT_BUDDY"), "{e}");
        assert_eq!(s, before);
        assert!(s.apply_features("").is_ok());
        assert_eq!(s, before);
        assert!(s.apply_features(&"A".repeat(20_000)).is_err());
    }

    #[test]
    fn features_wrap_at_72_columns() {
        let mut s = Scenario::default();
        s.apply_features(
            "NO_PLACE_LAG NO_PLACE_DEADLINE_INITIAL NO_PLACE_REL_DEADLINE NO_RUN_TO_PARITY \
             NO_PREEMPT_SHORT NEXT_BUDDY NO_PICK_BUDDY NO_DELAY_DEQUEUE NO_DELAY_ZERO \
             PS_IGNORE_NEED_RESCHED NB_RESCHED_INELIGIBLE_WAKER PROT_SET=PZ_ROOT \
             NB_MODE=legacy TTWU_QUEUE START_DEBIT",
        )
        .unwrap();
        let text = s.to_text();
        let features: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("features "))
            .collect();
        assert!(features.len() >= 3, "{text}");
        assert!(
            text.lines().all(|l| l.chars().count() <= MAX_COLUMNS),
            "{text}"
        );
        // Greedy: the next line's first token would not have fitted.
        for w in features.windows(2) {
            let next = w[1].split(' ').nth(1).unwrap();
            assert!(w[0].len() + 1 + next.len() > MAX_COLUMNS);
        }
        assert_eq!(Scenario::parse(&text).unwrap(), s);
    }

    // ---- property tests ----

    const TOKENS: &[&str] = &[
        "NO_RUN_TO_PARITY",
        "RUN_TO_PARITY",
        "PREEMPT_SHORT",
        "NO_PREEMPT_SHORT",
        "PS_SET_NEXT_BUDDY",
        "NEXT_BUDDY",
        "NO_NEXT_BUDDY",
        "NO_PLACE_LAG",
        "NO_DELAY_DEQUEUE",
        "HRTICK",
        "LAG_CLAMP=2slice_tick",
        "LAG_CLAMP=MAXSLICE_TICK",
        "NB_MODE=legacy",
        "NB_MODE=mel_v5",
        "PROT_SET=PZ_ROOT",
        "PROT_INELIGIBLE",
        "NO_PROT_STASH",
        "DELAY_LAG=v6.12",
        "TTWU_QUEUE",
        "NO_TTWU_QUEUE",
        "START_DEBIT",
        "NO_UTIL_EST",
        "NB_RESCHED_INELIGIBLE_WAKER",
        "NO_PS_CLEAR_BUDDY",
        "PROT_ALWAYS_UPDATE",
        "NO_PROT_LAG_AWARE",
        "NB_SYNC_DELTA=stint_runtime",
        "PROT_UPDATE=ALIGN",
        "NO_WA_IDLE",
        "MINSLICE_PERCPU",
    ];

    /// Durations of every granularity up to `max`.
    fn dur(min: Nanos, max: Nanos) -> impl Strategy<Value = Nanos> {
        prop_oneof![
            (min.div_ceil(S)..=max / S).prop_map(|v| v * S),
            (min.div_ceil(MS)..=max / MS).prop_map(|v| v * MS),
            (min.div_ceil(US)..=(max / US).min(100_000)).prop_map(|v| v * US),
            min..=max.min(10 * MS),
        ]
    }

    fn opt_dur(min: Nanos) -> impl Strategy<Value = Option<Nanos>> {
        prop::option::weighted(0.2, dur(min, MAX_DURATION_NS))
    }

    fn workload() -> impl Strategy<Value = Workload> {
        let d = |min| dur(min, MAX_DURATION_NS);
        prop_oneof![
            (d(1), d(1)).prop_map(|(period_ns, run_ns)| Workload::Timer { period_ns, run_ns }),
            (d(1), d(0), prop::option::of(d(1))).prop_map(|(run_ns, sleep_ns, period_ns)| {
                Workload::Periodic {
                    run_ns,
                    sleep_ns,
                    period_ns,
                }
            }),
            (
                (1u32..=256, 1u32..=256, any::<bool>(), any::<bool>()),
                (0u64..=1_000_000_000, d(1), d(1), 1u32..=1_000_000)
            )
                .prop_map(
                    |((groups, fds, threads, pipe), (loops, send_ns, recv_ns, pipe_msgs))| {
                        Workload::Hackbench {
                            groups,
                            fds,
                            threads,
                            pipe,
                            loops,
                            send_ns,
                            recv_ns,
                            pipe_msgs,
                        }
                    }
                ),
            (1u32..=256, 1u32..=1024, d(1), d(0)).prop_map(
                |(message_threads, workers, request_ns, sleep_ns)| Workload::Schbench {
                    message_threads,
                    workers,
                    request_ns,
                    sleep_ns,
                }
            ),
            Just(Workload::Hog),
        ]
    }

    /// Raw task fields; CPU numbers and the group are fitted later.
    type RawTask = (
        Workload,
        (u32, i32, u8, Option<Nanos>),
        (
            Option<Vec<u32>>,
            Option<usize>,
            Option<Nanos>,
            Option<Nanos>,
        ),
    );

    fn raw_task() -> impl Strategy<Value = RawTask> {
        (
            workload(),
            (
                prop_oneof![Just(1u32), 1u32..=4096],
                prop_oneof![Just(0i32), -20i32..=19],
                0u8..3,
                opt_dur(1),
            ),
            (
                prop::option::weighted(0.2, prop::collection::vec(0u32..512, 1..4)),
                prop::option::weighted(0.3, any::<usize>()),
                opt_dur(0),
                opt_dur(0),
            ),
        )
    }

    prop_compose! {
        fn scenario()(
            engine in prop_oneof![Just(ENGINE_VERSION.to_string()), (0u32..100, 0u32..100).prop_map(|(a, b)| format!("{a}.{b}"))],
            cpus in prop_oneof![Just(1u32), Just(2), Just(4), Just(8), 1u32..=512],
            profile in prop::sample::select(Profile::ALL.to_vec()),
            hz in prop::sample::select(vec![100u32, 250, 300, 1000]),
            duration in dur(1, MAX_DURATION_NS),
            seed in any::<u64>(),
            preempt in prop::sample::select(PreemptModel::ALL.to_vec()),
            tokens in prop::collection::vec(prop::sample::select(TOKENS), 0..16),
            sysctl in (prop::option::of(US..=S), prop::option::of(0..=S)),
            costs in prop::option::of((dur(0, S), dur(0, S), dur(0, S), dur(0, S))),
            groups in prop::collection::vec((1u32..=10_000, any::<bool>(), "[a-zA-Z0-9_-]{1,8}"), 0..=2),
            tasks in prop::collection::vec(raw_task(), 1..=5),
        ) -> Scenario {
            let mut s = Scenario {
                engine,
                machine: Machine::Smp(cpus),
                features: FeatureSet::new(profile),
                ..Scenario::default()
            };
            for t in tokens {
                s.features.apply(t).unwrap();
            }
            s.sim.hz = hz;
            s.sim.duration_ns = duration;
            s.sim.seed = seed;
            s.sim.preempt = preempt;
            s.sim.sysctl.base_slice_ns = sysctl.0;
            s.sim.sysctl.migration_cost_ns = sysctl.1;
            if let Some((switch_ns, wake_ns, migrate_ns, sleep_ns)) = costs {
                s.sim.costs = Costs { switch_ns, wake_ns, migrate_ns, sleep_ns };
            }
            for (i, (weight, idle, name)) in groups.into_iter().enumerate() {
                s.sim.groups.push(GroupSpec { path: format!("/{name}{i}"), weight, idle });
            }
            for (i, (workload, (count, nice, policy, slice), (cpu_list, group, slack, start))) in
                tasks.into_iter().enumerate()
            {
                let mut t = TaskSpec::new(&format!("t{i}"), workload);
                t.count = count;
                t.nice = nice;
                t.policy = [Policy::Normal, Policy::Batch, Policy::Idle][usize::from(policy)];
                t.slice_ns = slice;
                t.cpus = cpu_list.map(|mut l| {
                    for c in &mut l {
                        *c %= cpus;
                    }
                    l.sort_unstable();
                    l.dedup();
                    l
                });
                let ng = s.sim.groups.len();
                t.group = group.filter(|_| ng > 0).map(|g| s.sim.groups[g % ng].path.clone());
                t.slack_ns = slack;
                t.start_ns = start.unwrap_or(0);
                // Keep only tasks whose line fits; a hog always does.
                if task_line(&t).chars().count() > MAX_COLUMNS {
                    t = TaskSpec::new(&format!("t{i}"), Workload::Hog);
                }
                s.sim.tasks.push(t);
            }
            // What `finish` does: an engine 0.1 text without `preempt`
            // ran under full.
            if s.preempt.is_none() && engine_before(&s.engine, (0, 2)) {
                s.preempt = Some(PreemptModel::Full);
            }
            s.sync_sim();
            s
        }
    }

    const MUTATION_CHARS: &[char] = &[
        ' ', '=', '#', '\n', '.', ',', '-', '/', '0', '1', '9', 's', 'm', 'u', 'n', 'x', 'A', '_',
        '\t', 'é', '\r',
    ];

    /// Applies edit operations (delete, duplicate, swap, insert) to `base`.
    fn mutate(base: &str, ops: &[(u8, usize, usize)]) -> String {
        let mut v: Vec<char> = base.chars().collect();
        for &(op, at, c) in ops {
            if v.is_empty() {
                break;
            }
            let i = at % v.len();
            match op % 4 {
                0 => {
                    v.remove(i);
                }
                1 => {
                    let c = v[i];
                    v.insert(i, c);
                }
                2 => {
                    let j = (i + 1) % v.len();
                    v.swap(i, j);
                }
                _ => v.insert(i, MUTATION_CHARS[c % MUTATION_CHARS.len()]),
            }
        }
        v.into_iter().collect()
    }

    /// What every accepted text must satisfy.
    fn check_accepted(s: &Scenario) -> Result<(), TestCaseError> {
        let text = s.to_text();
        for l in text.lines() {
            prop_assert!(l.chars().count() <= MAX_COLUMNS, "{l}");
        }
        let back = Scenario::parse(&text);
        prop_assert!(back.is_ok(), "{:?}\n{text}", back.err());
        let back = back.unwrap_or_default();
        prop_assert_eq!(&back, s);
        prop_assert_eq!(back.to_text(), text);
        prop_assert_eq!(back.sim.features, back.features.features);
        prop_assert_eq!(back.sim.profile, back.features.profile);
        prop_assert_eq!(back.sim.nr_cpus, back.machine.nr_cpus());
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn printed_scenarios_parse_back_equal(s in scenario()) {
            // The generator can build scenarios over the cost limits; the
            // parser refuses those (tests/cost.rs), so skip them here.
            let threads: u64 = s.sim.tasks.iter().map(TaskSpec::nr_threads).sum();
            let cost = Cost::of(&s.sim, s.machine.nr_cpus());
            prop_assume!(threads <= MAX_THREADS && cost.events <= MAX_EVENTS);
            check_accepted(&s)?;
            prop_assert!(s.validate().is_ok());
        }

        #[test]
        fn parse_never_panics_on_arbitrary_text(t in "\\PC{0,300}") {
            if let Ok(s) = Scenario::parse(&t) {
                check_accepted(&s)?;
            }
        }

        #[test]
        fn parse_never_panics_on_format_like_text(
            t in "(eevdf-scenario v1\n)?([a-z]{1,8}( [a-z0-9_/=.,-]{1,10}){0,4}\n){0,8}(end\n)?"
        ) {
            if let Ok(s) = Scenario::parse(&t) {
                check_accepted(&s)?;
            }
        }

        #[test]
        fn parse_never_panics_on_mutated_examples(
            which in 0usize..2,
            ops in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..8),
        ) {
            let base = [EXAMPLE, EXAMPLE_CANONICAL][which];
            let text = mutate(base, &ops);
            if let Ok(s) = Scenario::parse(&text) {
                check_accepted(&s)?;
            }
        }

        #[test]
        fn set_and_apply_features_never_panic(
            arg in "(hz|kernel|machine|duration|seed|preempt|features|sysctl|costs|engine|task)?[.=]?\\PC{0,40}",
            f in "\\PC{0,60}",
        ) {
            let mut s = Scenario::parse(EXAMPLE).unwrap();
            let before = s.clone();
            if s.set(&arg).is_err() {
                prop_assert_eq!(&s, &before);
            }
            if s.apply_features(&f).is_err() {
                prop_assert_eq!(&s, &before.clone().tap_set(&arg));
            }
            check_accepted(&s)?;
        }
    }

    trait TapSet {
        fn tap_set(self, arg: &str) -> Self;
    }
    impl TapSet for Scenario {
        fn tap_set(mut self, arg: &str) -> Self {
            let _ = self.set(arg);
            self
        }
    }
}
