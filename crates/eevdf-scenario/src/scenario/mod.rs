//! Scenario text format v1: what to simulate, one directive per line.
//!
//! ```text
//! eevdf-scenario v1
//! engine 0.9
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
//! `costs` keys: `switch`, `wake`, `migrate`, `sleep` (a timer or
//! periodic task's own CPU per activation beyond its `run`) and `tick`
//! (the tick's interrupt, taken from the task it interrupts), as
//! [`eevdf_sim::Costs`] has them; `sleep` and `tick` default to 0, so
//! older texts keep their results.
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
#[cfg(not(eevdf_guest))]
pub const ENGINE_VERSION: &str = "0.12";
/// The guest runner's stand-in (built with `--cfg eevdf_guest` by
/// `eevdf_kernel::guest_bin`): the guest computes no results, and its
/// bytes are part of every kernel run's cache key, so an engine release
/// must not change them (ARCHITECTURE.md, "Real-kernel mode").
#[cfg(eevdf_guest)]
pub const ENGINE_VERSION: &str = "0.0";

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

const HZ_VALUES: [u64; 4] = [100, 250, 300, 1000];
const KINDS: &[&str] = &["timer", "periodic", "hackbench", "schbench", "hog"];
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

/// What a scenario sets of a run besides the machine, the kernel
/// profile, the features and the preemption model, which [`Scenario`]
/// holds in fields of its own: the rest of `SimConfig`, field for field,
/// so nothing is held twice. [`Scenario::sim_config`] joins them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RunSpec {
    pub hz: u32,
    pub sysctl: eevdf_sim::Sysctl,
    pub costs: Costs,
    pub seed: u64,
    pub duration_ns: Nanos,
    pub warmup_ns: Nanos,
    pub groups: Vec<GroupSpec>,
    pub tasks: Vec<TaskSpec>,
    pub tick_phase_ns: Option<Nanos>,
    pub max_events: Option<u64>,
    /// A kernel run's twin only (not in the text): QEMU's vCPU turns.
    pub vcpu_turns: bool,
}

impl Default for RunSpec {
    /// `SimConfig`'s defaults.
    fn default() -> Self {
        let c = SimConfig::default();
        RunSpec {
            hz: c.hz,
            sysctl: c.sysctl,
            costs: c.costs,
            seed: c.seed,
            duration_ns: c.duration_ns,
            warmup_ns: c.warmup_ns,
            groups: c.groups,
            tasks: c.tasks,
            tick_phase_ns: c.tick_phase_ns,
            max_events: c.max_events,
            vcpu_turns: c.vcpu_turns,
        }
    }
}

/// A parsed scenario: the simulation plus what the text needs besides it.
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
    pub sim: RunSpec,
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
        Scenario {
            engine: ENGINE_VERSION.to_string(),
            machine: Machine::default(),
            features: FeatureSet::default(),
            preempt: None,
            sim: RunSpec::default(),
        }
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
        let mut lines = vec![HEADER.to_string()];
        for d in DIRECTIVES {
            (d.print)(self, &mut lines);
        }
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
    /// `sysctl=KEY=VALUE ...`), `task.ct.slice=2ms` (one key of one task,
    /// read by its [`TASK_KEYS`] entry). The argument is otherwise read as
    /// the line `KEY VALUE` of a scenario. Errors have line 0 and columns into `key_value`; on
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
        let names = settable_names();
        let settable = || {
            format!(
                "settable keys: {}, sysctl.KEY, costs.KEY, task.NAME.KEY",
                names.join(", ")
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
            Some(("task", sub)) => return self.set_task_key(sub, value),
            Some((dir, sub)) => {
                if directive(dir.trim()).is_none_or(|d| d.keys.is_empty()) {
                    return Err(ParseError::new(
                        0,
                        1,
                        format!("{} has no sub-keys", quote(dir.trim())),
                        "only sysctl.KEY, costs.KEY and task.NAME.KEY take a sub-key",
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
        if !names.contains(&first.s) {
            let hint = match closest(first.s, &names) {
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

    /// One `task` line on its own (`task NAME kind=KIND ...`), read by the
    /// table as the parser reads it; CPUs and groups are checked once it
    /// is part of a scenario.
    pub fn parse_task(line: &str) -> Result<TaskSpec, ParseError> {
        let toks = tokenize(line);
        if toks.first().map(|t| t.s) != Some("task") {
            return Err(ParseError::new(
                1,
                1,
                "expected a `task` line",
                "e.g. `task ct kind=timer period=1ms`",
            ));
        }
        let mut b = Builder::new(Scenario::default(), false);
        b.task(1, &toks)?;
        b.sc.sim
            .tasks
            .pop()
            .ok_or_else(|| ParseError::new(1, 1, "empty task line", ""))
    }

    /// `--set task.NAME.KEY=VALUE` (`sub` is `NAME.KEY`): reads the value
    /// with the key's table entry into a copy of the task, then checks the
    /// scenario as a whole. Columns count from the `t` of `task.`.
    fn set_task_key(&mut self, sub: &str, value: &str) -> Result<(), ParseError> {
        let name_col = "task.".len() + 1;
        let Some((name, key)) = sub.split_once('.') else {
            return Err(ParseError::new(
                0,
                name_col,
                format!(
                    "expected task.NAME.KEY, found {}",
                    quote(&format!("task.{sub}"))
                ),
                "e.g. task.ct.slice=2ms",
            ));
        };
        let names: Vec<&str> = self.sim.tasks.iter().map(|t| t.name.as_str()).collect();
        let Some(i) = names.iter().position(|n| *n == name) else {
            let hint = match names.is_empty() {
                true => "the scenario has no tasks".to_string(),
                false => with_suggestion(name, &names, format!("tasks: {}", names.join(", "))),
            };
            return Err(ParseError::new(
                0,
                name_col,
                format!("no task {}", quote(name)),
                hint,
            ));
        };
        let kcol = name_col + name.chars().count() + 1;
        let vcol = kcol + key.chars().count() + 1;
        let kind = self.sim.tasks[i].workload.kind();
        let valid: Vec<&str> = keys_for(kind).map(|k| k.name).collect();
        let entry = match key_of(kind, key) {
            Some(k) if k.name != "kind" => k,
            Some(_) => {
                return Err(ParseError::new(
                    0,
                    kcol,
                    "a task's kind cannot be set",
                    "edit the task line instead; the kind decides its other keys",
                ))
            }
            None => {
                return Err(ParseError::new(
                    0,
                    kcol,
                    format!("unknown key {} for a {kind} task", quote(key)),
                    with_suggestion(
                        key,
                        &valid,
                        format!("valid keys for kind={kind}: {}", valid.join(", ")),
                    ),
                ))
            }
        };
        if value.is_empty() {
            return Err(ParseError::new(
                0,
                vcol,
                format!("`{key}` needs a value after `=`"),
                format!("e.g. task.{name}.{key}={}", entry.example),
            ));
        }
        let kv = Kv {
            key,
            val: value,
            kcol,
            vcol,
        };
        let spec = set_key(entry, 0, kv, &self.sim.tasks[i])?;
        check_width(
            0,
            &Tok {
                s: name,
                col: name_col,
            },
            &spec,
        )?;
        let mut sc = self.clone();
        sc.sim.tasks[i] = spec;
        *self = Builder::new(sc, true).finish(Some((0, vcol)))?;
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

    /// The preemption model a run uses: the `preempt` line's, else the
    /// kernel profile's.
    pub fn preempt_model(&self) -> PreemptModel {
        self.preempt
            .unwrap_or_else(|| PreemptModel::for_profile(self.features.profile))
    }

    /// The simulator's configuration, built in this one place from the
    /// scenario's fields: the machine, kernel profile, features and
    /// preemption model from their own, the rest from `sim`.
    pub fn sim_config(&self) -> SimConfig {
        let r = &self.sim;
        SimConfig {
            nr_cpus: self.machine.nr_cpus(),
            machine: match &self.machine {
                Machine::Smp(_) => None,
                m => Some(m.spec()),
            },
            profile: self.features.profile,
            features: self.features.features,
            preempt: self.preempt_model(),
            hz: r.hz,
            sysctl: r.sysctl,
            costs: r.costs,
            seed: r.seed,
            duration_ns: r.duration_ns,
            warmup_ns: r.warmup_ns,
            groups: r.groups.clone(),
            tasks: r.tasks.clone(),
            tick_phase_ns: r.tick_phase_ns,
            max_events: r.max_events,
            vcpu_turns: r.vcpu_turns,
        }
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
            "set only what the text can say (Scenario::to_text)",
        ))
    }
}

mod build;
mod directives;
#[cfg(test)]
mod directives_tests;
mod keys;
mod lex;
mod print;
#[cfg(test)]
mod props;
mod task_keys;
#[cfg(test)]
mod task_keys_tests;
#[cfg(test)]
mod tests;

use build::*;
use directives::*;
use keys::*;
use lex::*;
use print::*;
use task_keys::*;

pub use directives::{directive, Directive, SubKey, COST_KEYS, DIRECTIVES, SYSCTL_KEYS};
pub use task_keys::{key_of, keys_for, task_kvs, TaskKey, TASK_KEYS};

/// A duration as the format writes them (`20us`, `2.8ms`, `1s`), in ns.
pub fn duration_ns(text: &str) -> Option<Nanos> {
    parse_duration(text).ok()
}

/// `docs/scenario-keys.md`: the directive and task key tables.
pub fn reference() -> String {
    format!("{}\n{}", directive_reference(), task_reference())
}

pub(crate) use lex::fmt_duration;
