//! Importing rt-app JSON (formats.md §1) into a scenario.
//!
//! rt-app reads JSON-like files: `/* */` and `//` comments, trailing
//! commas and duplicate keys (matched by prefix: `run0`, `run1`) are all
//! normal, so this module has its own small tolerant parser that keeps
//! key order, duplicates and positions (serde_json keeps neither).
//!
//! The subset that covers the seeds is imported: `global.duration` and
//! `default_policy`; per task `instance`, `policy`, `priority` (nice),
//! `dl-runtime` (a custom slice on SCHED_OTHER, Linux 6.12+), `cpus`,
//! `delay`, `taskgroup` (one level), `loop`, and one phase of `run` /
//! `runtime`, `sleep` or `timer {period, mode}` events. Everything else
//! is reported by name: an error where the result would be wrong (real-
//! time policies, several phases, locks), a warning where it only loses
//! detail (logging keys, `util_min`).

use eevdf_core::Policy;
use eevdf_sim::{GroupSpec, TaskSpec, Workload};

use crate::display::{escape_controls, shown};
use crate::scenario::{fmt_duration, Scenario, MAX_CPUS, MAX_DURATION_NS};
use crate::ParseError;

/// Largest rt-app file accepted.
pub const MAX_BYTES: usize = crate::limits::RTAPP_BYTES as usize;
/// Deepest nesting accepted.
const MAX_DEPTH: usize = 32;

/// A parsed JSON-ish value. Object members keep their order, their
/// duplicates and the position of their key (for error messages).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Obj(Vec<Member>),
    Arr(Vec<Value>),
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
}

/// One `"key": value` of an object, with the key's line and column.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub key: String,
    pub value: Value,
    pub line: usize,
    pub column: usize,
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
    col: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, msg: impl Into<String>, hint: impl Into<String>) -> ParseError {
        ParseError::new(self.line, self.col, msg, hint)
    }

    fn bump(&mut self) -> Option<u8> {
        let c = *self.s.get(self.i)?;
        self.i += 1;
        if c == b'\n' {
            self.line += 1;
            self.col = 1;
        } else if c & 0xC0 != 0x80 {
            self.col += 1;
        }
        Some(c)
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// The rest of a string after its opening quote, escapes decoded.
    fn string(&mut self) -> Result<String, ParseError> {
        let mut out = Vec::new();
        loop {
            let at = (self.line, self.col);
            match self.bump() {
                Some(b'"') => break,
                Some(b'\\') => {
                    let c = self.escape(at)?;
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                Some(c) => out.push(c),
                None => return Err(self.err("unterminated string", "close it with \"")),
            }
        }
        String::from_utf8(out).map_err(|_| self.err("string is not UTF-8", ""))
    }

    /// The character of an escape whose `\` was at `at`.
    fn escape(&mut self, at: (usize, usize)) -> Result<char, ParseError> {
        let c = match self.bump() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => self
                .unicode()
                .ok_or_else(|| bad_escape(at, "bad \\u escape"))?,
            _ => return Err(bad_escape(at, "unknown escape")),
        };
        Ok(c)
    }

    /// `XXXX` of `\uXXXX`, or a UTF-16 surrogate pair `\uD83D\uDE00`.
    fn unicode(&mut self) -> Option<char> {
        let hi = self.hex4()?;
        if !(0xD800..0xDC00).contains(&hi) {
            return char::from_u32(hi);
        }
        if self.bump()? != b'\\' || self.bump()? != b'u' {
            return None;
        }
        let lo = self.hex4().filter(|lo| (0xDC00..0xE000).contains(lo))?;
        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
    }

    fn hex4(&mut self) -> Option<u32> {
        (0..4).try_fold(0, |v, _| {
            Some(v * 16 + char::from(self.bump()?).to_digit(16)?)
        })
    }

    /// Skips whitespace and both comment styles.
    fn ws(&mut self) -> Result<(), ParseError> {
        loop {
            match (self.peek(), self.s.get(self.i + 1).copied()) {
                (Some(c), _) if c.is_ascii_whitespace() => {
                    self.bump();
                }
                (Some(b'/'), Some(b'*')) => {
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            Some(b'*') if self.peek() == Some(b'/') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                            None => {
                                return Err(self.err("unterminated /* comment", "close it with */"))
                            }
                        }
                    }
                }
                (Some(b'/'), Some(b'/')) => while !matches!(self.bump(), Some(b'\n') | None) {},
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting too deep", "rt-app files nest a few levels"));
        }
        self.ws()?;
        match self.peek() {
            Some(b'{') => {
                self.bump();
                let mut members = Vec::new();
                loop {
                    self.ws()?;
                    if self.peek() == Some(b'}') {
                        self.bump();
                        return Ok(Value::Obj(members));
                    }
                    let (kline, kcol) = (self.line, self.col);
                    let key = match self.value(depth + 1)? {
                        Value::Str(k) => k,
                        _ => return Err(self.err("expected a \"key\"", "object keys are strings")),
                    };
                    self.ws()?;
                    if self.bump() != Some(b':') {
                        return Err(self.err(
                            format!("expected `:` after \"{}\"", shown(&key)),
                            "write \"key\": value",
                        ));
                    }
                    let v = self.value(depth + 1)?;
                    members.push(Member {
                        key,
                        value: v,
                        line: kline,
                        column: kcol,
                    });
                    self.ws()?;
                    match self.bump() {
                        Some(b',') => {}
                        Some(b'}') => return Ok(Value::Obj(members)),
                        None => return Err(self.err("unexpected end of file", "the file was cut")),
                        _ => {
                            return Err(
                                self.err("expected `,` or `}`", "separate members with commas")
                            )
                        }
                    }
                }
            }
            Some(b'[') => {
                self.bump();
                let mut items = Vec::new();
                loop {
                    self.ws()?;
                    if self.peek() == Some(b']') {
                        self.bump();
                        return Ok(Value::Arr(items));
                    }
                    items.push(self.value(depth + 1)?);
                    self.ws()?;
                    match self.bump() {
                        Some(b',') => {}
                        Some(b']') => return Ok(Value::Arr(items)),
                        None => return Err(self.err("unexpected end of file", "the file was cut")),
                        _ => {
                            return Err(
                                self.err("expected `,` or `]`", "separate items with commas")
                            )
                        }
                    }
                }
            }
            Some(b'"') => {
                self.bump();
                self.string().map(Value::Str)
            }
            Some(c) if c == b'-' || c.is_ascii_digit() => {
                let start = self.i;
                while matches!(self.peek(), Some(c) if c == b'-' || c == b'+' || c == b'.' || c == b'e' || c == b'E' || c.is_ascii_digit())
                {
                    self.bump();
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                t.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .map(Value::Num)
                    .ok_or_else(|| {
                        self.err(
                            format!("bad number `{}`", shown(t)),
                            "numbers are like 8177 or 0.5",
                        )
                    })
            }
            Some(b't') if self.s[self.i..].starts_with(b"true") => {
                (0..4).for_each(|_| {
                    self.bump();
                });
                Ok(Value::Bool(true))
            }
            Some(b'f') if self.s[self.i..].starts_with(b"false") => {
                (0..5).for_each(|_| {
                    self.bump();
                });
                Ok(Value::Bool(false))
            }
            Some(b'n') if self.s[self.i..].starts_with(b"null") => {
                (0..4).for_each(|_| {
                    self.bump();
                });
                Ok(Value::Null)
            }
            Some(_) => Err(self.err("unexpected character", "expected a JSON value")),
            None => Err(self.err("unexpected end of file", "the file was cut")),
        }
    }
}

fn bad_escape((line, column): (usize, usize), msg: &str) -> ParseError {
    ParseError::new(
        line,
        column,
        format!("{msg} in a string"),
        "JSON escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
    )
}

/// Parses rt-app's JSON dialect.
pub fn parse_value(text: &str) -> Result<Value, ParseError> {
    if text.len() > MAX_BYTES {
        return Err(ParseError::new(
            1,
            1,
            format!("file is {} bytes, over {MAX_BYTES}", text.len()),
            "rt-app files are small",
        ));
    }
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        line: 1,
        col: 1,
    };
    let v = p.value(0)?;
    p.ws()?;
    if p.peek().is_some() {
        return Err(p.err("text after the top-level value", "one JSON object per file"));
    }
    Ok(v)
}

fn get<'a>(obj: &'a [Member], key: &str) -> Option<&'a Value> {
    member(obj, key).map(|m| &m.value)
}

/// The last member named `key` (rt-app's own rule for duplicates).
fn member<'a>(obj: &'a [Member], key: &str) -> Option<&'a Member> {
    obj.iter().rev().find(|m| m.key == key)
}

/// An error at a member's key.
fn at(m: &Member, msg: String, hint: &str) -> ParseError {
    ParseError::new(m.line, m.column, msg, hint)
}

/// Moves an error without a position to a member's key.
fn moved(mut e: ParseError, m: &Member) -> ParseError {
    e.line = m.line;
    e.column = m.column;
    e
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Num(n) => Some(*n),
        _ => None,
    }
}

/// An error about key `m` of task `task` (already [`shown`]).
fn key_err(m: &Member, task: &str, msg: &str, hint: &str) -> ParseError {
    at(m, format!("task `{task}`: `{}` {msg}", shown(&m.key)), hint)
}

const DURATION_HINT: &str = "rt-app durations are microseconds, at most an hour";

/// An rt-app duration (µs) as ns, from 0 to the scenario's limit.
fn duration(m: &Member, task: &str) -> Result<u64, ParseError> {
    let bad = |msg: &str| key_err(m, task, msg, DURATION_HINT);
    let us = num(&m.value).ok_or_else(|| bad("is not a number"))?;
    if us < 0.0 {
        return Err(bad("is negative"));
    }
    let ns = (us * 1000.0).round();
    if ns > MAX_DURATION_NS as f64 {
        return Err(bad(&format!("is over {}", fmt_duration(MAX_DURATION_NS))));
    }
    Ok(ns as u64)
}

/// `acc + add` within the scenario's duration limit.
fn total(acc: u64, add: u64, m: &Member, task: &str) -> Result<u64, ParseError> {
    acc.checked_add(add)
        .filter(|t| *t <= MAX_DURATION_NS)
        .ok_or_else(|| {
            let over = format!("brings the total over {}", fmt_duration(MAX_DURATION_NS));
            key_err(
                m,
                task,
                &over,
                "one loop of a task's events runs at most an hour",
            )
        })
}

/// An integral number in `lo..=hi`.
fn int_in(m: &Member, task: &str, lo: i64, hi: i64, hint: &str) -> Result<i64, ParseError> {
    num(&m.value)
        .filter(|v| v.fract() == 0.0 && (lo as f64..=hi as f64).contains(v))
        .map(|v| v as i64)
        .ok_or_else(|| {
            key_err(
                m,
                task,
                &format!("must be an integer from {lo} to {hi}"),
                hint,
            )
        })
}

/// The result of an import: the scenario and what was not imported.
#[derive(Clone, Debug)]
pub struct Imported {
    pub scenario: Scenario,
    pub warnings: Vec<String>,
}

fn bad(msg: String, hint: &str) -> ParseError {
    ParseError::new(1, 1, msg, hint)
}

/// Where each generated scenario line came from in the JSON, so that an
/// error the scenario parser finds still points into the JSON.
#[derive(Debug, Default)]
struct Origins(Vec<(String, usize, usize)>);

impl Origins {
    fn add(&mut self, line_prefix: String, m: &Member) {
        self.0.push((line_prefix, m.line, m.column));
    }

    /// `e`, found in the generated `text`, moved to the JSON. The
    /// scenario parser quotes group paths raw, so the message is escaped.
    fn place(&self, text: &str, mut e: ParseError) -> ParseError {
        e.message = escape_controls(&e.message);
        let line = text.lines().nth(e.line.saturating_sub(1)).unwrap_or("");
        let found = self.0.iter().find(|(p, ..)| line.starts_with(p.as_str()));
        if let Some((_, l, c)) = found {
            (e.line, e.column) = (*l, *c);
        } else {
            e.message = format!("in the generated line `{}`: {}", shown(line), e.message);
            (e.line, e.column) = (1, 1);
        }
        e
    }
}

/// Imports an rt-app JSON file as a scenario on `machine`.
pub fn import(text: &str, machine: &str) -> Result<Imported, ParseError> {
    let root = parse_value(text)?;
    let Value::Obj(top) = root else {
        return Err(bad(
            "the file is not a JSON object".into(),
            "rt-app files are { \"tasks\": {...} }",
        ));
    };
    let mut warnings = Vec::new();
    let mut origins = Origins::default();
    let base = format!("eevdf-scenario v1\nmachine {machine}\nend\n");
    let mut sc = Scenario::parse(&base).map_err(|mut e| {
        e.message = format!("--machine: {}", escape_controls(&e.message));
        (e.line, e.column) = (0, 1);
        e
    })?;
    let default_policy = top_level(&top, &mut sc, &mut warnings, &mut origins)?;
    let tasks = match member(&top, "tasks") {
        Some(
            m @ Member {
                value: Value::Obj(t),
                ..
            },
        ) => (m, t),
        Some(m) => return Err(at(m, "\"tasks\" is not an object".into(), "")),
        None => {
            return Err(bad(
                "no \"tasks\" object".into(),
                "rt-app files list their threads under \"tasks\"",
            ))
        }
    };
    for tm in tasks.1 {
        let Value::Obj(t) = &tm.value else {
            return Err(at(
                tm,
                format!("task `{}` is not an object", shown(&tm.key)),
                "",
            ));
        };
        let spec = task(tm, t, default_policy, &mut sc, &mut warnings, &mut origins)?;
        if sc.sim.tasks.iter().any(|x| x.name == spec.name) {
            return Err(at(
                tm,
                format!(
                    "task `{}` is named `{}`, as an earlier task is",
                    shown(&tm.key),
                    spec.name
                ),
                "scenario names keep letters, digits, `-` and `_`; rename one task",
            ));
        }
        origins.add(format!("task {} ", spec.name), tm);
        sc.sim.tasks.push(spec);
    }
    // Through the text form, so every limit and check of v1 applies.
    let text = sc.to_text();
    let scenario = Scenario::parse(&text).map_err(|e| origins.place(&text, e))?;
    Ok(Imported { scenario, warnings })
}

/// The top-level members but `tasks`; returns the default policy.
fn top_level(
    top: &[Member],
    sc: &mut Scenario,
    warnings: &mut Vec<String>,
    origins: &mut Origins,
) -> Result<Policy, ParseError> {
    let mut default_policy = Policy::Normal;
    for m in top {
        match m.key.as_str() {
            "tasks" => {}
            "resources" => warnings.push("`resources` is legacy and ignored by rt-app too".into()),
            "global" => {
                let Value::Obj(g) = &m.value else {
                    return Err(at(m, "`global` is not an object".into(), ""));
                };
                for gm in g {
                    if let Some(p) = global(gm, sc, warnings, origins)? {
                        default_policy = p;
                    }
                }
            }
            other => warnings.push(format!("top-level `{}` ignored", shown(other))),
        }
    }
    Ok(default_policy)
}

/// One member of `global`; a `default_policy` is returned.
fn global(
    gm: &Member,
    sc: &mut Scenario,
    warnings: &mut Vec<String>,
    origins: &mut Origins,
) -> Result<Option<Policy>, ParseError> {
    match gm.key.as_str() {
        "duration" => {
            // Seconds; -1 (rt-app's "until the tasks end") keeps the default.
            if let Some(d) = num(&gm.value).filter(|d| *d > 0.0) {
                if d * 1e9 > MAX_DURATION_NS as f64 {
                    let msg = format!("`duration` is over {}", fmt_duration(MAX_DURATION_NS));
                    return Err(at(gm, msg, "simulations run at most an hour"));
                }
                let ms = (d * 1000.0).round() as u64;
                sc.set(&format!("duration={ms}ms"))
                    .map_err(|e| moved(e, gm))?;
                origins.add("duration ".into(), gm);
            }
        }
        "default_policy" => {
            return policy(&gm.value, "default_policy")
                .map(Some)
                .map_err(|e| moved(e, gm))
        }
        "calibration" | "log_size" | "logdir" | "log_basename" | "lock_pages" | "ftrace"
        | "gnuplot" | "pi_enabled" | "io_device" | "mem_buffer_size" | "cumulative_slack" => {
            warnings.push(format!(
                "global `{}` does not apply to a simulation; ignored",
                gm.key
            ))
        }
        other => warnings.push(format!(
            "global `{}` is not an rt-app key we know; ignored",
            shown(other)
        )),
    }
    Ok(None)
}

fn policy(v: &Value, key: &str) -> Result<Policy, ParseError> {
    match v {
        Value::Str(s) => match s.as_str() {
            "SCHED_OTHER" => Ok(Policy::Normal),
            "SCHED_BATCH" => Ok(Policy::Batch),
            "SCHED_IDLE" => Ok(Policy::Idle),
            "SCHED_FIFO" | "SCHED_RR" | "SCHED_DEADLINE" => Err(bad(
                format!("`{key}` {s} is not modelled"),
                "only the fair class (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE) is simulated",
            )),
            other => Err(bad(
                format!("unknown policy `{}`", shown(other)),
                "SCHED_OTHER, SCHED_BATCH or SCHED_IDLE",
            )),
        },
        _ => Err(bad(
            format!("`{key}` is not a string"),
            "e.g. \"SCHED_OTHER\"",
        )),
    }
}

/// A task name acceptable in scenario text.
fn clean_name(name: &str) -> String {
    let mut n: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    if n.is_empty() {
        n.push('t');
    }
    n
}

/// Largest `instance`: the scenario's `count` limit.
const MAX_INSTANCES: i64 = 4096;

fn task(
    tm: &Member,
    t: &[Member],
    default_policy: Policy,
    sc: &mut Scenario,
    warnings: &mut Vec<String>,
    origins: &mut Origins,
) -> Result<TaskSpec, ParseError> {
    let name = shown(&tm.key);
    // The events: task-level (one inline phase) or a single phase.
    let mut events: Vec<Member> = Vec::new();
    let mut spec = TaskSpec::new(&clean_name(&tm.key), Workload::Hog);
    spec.policy = default_policy;
    for m in t {
        let k = m.key.as_str();
        match k {
            "taskgroup" => spec.group = Some(taskgroup(m, &name, sc, origins)?),
            "phases" => events.extend(phase(m, &name)?),
            "dl-period" | "dl-deadline" | "period" | "deadline" => warnings.push(format!(
                "task `{name}`: `{k}` applies to SCHED_DEADLINE only; ignored"
            )),
            "util_min" | "util_max" | "nodes_membind" => {
                warnings.push(format!("task `{name}`: `{k}` is not modelled; ignored"))
            }
            "loop" if num(&m.value) != Some(-1.0) => warnings.push(format!(
                "task `{name}`: `loop` {} is imported as forever",
                shown(&format!("{:?}", m.value))
            )),
            "loop" => {}
            _ => {
                if !task_key(m, &name, &mut spec)? {
                    events.push(m.clone());
                }
            }
        }
    }
    spec.workload = workload(tm, &name, &events)?;
    Ok(spec)
}

/// A key that sets a field of `spec`; false if `m` is not one.
fn task_key(m: &Member, name: &str, spec: &mut TaskSpec) -> Result<bool, ParseError> {
    match m.key.as_str() {
        "instance" => {
            let hint = "instances of one task, as a scenario's count=";
            spec.count = int_in(m, name, 1, MAX_INSTANCES, hint)? as u32;
        }
        "policy" => spec.policy = policy(&m.value, "policy").map_err(|e| moved(e, m))?,
        "priority" => {
            let hint = "on SCHED_OTHER, rt-app's priority is the nice value";
            spec.nice = int_in(m, name, -20, 19, hint)? as i32;
        }
        "dl-runtime" | "runtime" => {
            let slice = duration(m, name)?;
            if slice == 0 {
                return Err(key_err(m, name, "must be more than 0", DURATION_HINT));
            }
            spec.slice_ns = Some(slice);
        }
        "cpus" => spec.cpus = Some(cpus(m, name)?),
        "delay" => spec.start_ns = duration(m, name)?,
        _ => return Ok(false),
    }
    Ok(true)
}

fn cpus(m: &Member, name: &str) -> Result<Vec<u32>, ParseError> {
    let hint = format!("cpus is a list of CPU numbers below {MAX_CPUS}, e.g. [0, 1]");
    let Value::Arr(a) = &m.value else {
        return Err(key_err(m, name, "is not a list", &hint));
    };
    a.iter()
        .map(|c| {
            num(c)
                .filter(|c| c.fract() == 0.0 && (0.0..MAX_CPUS as f64).contains(c))
                .map(|c| c as u32)
                .ok_or_else(|| key_err(m, name, "holds something not a CPU number", &hint))
        })
        .collect()
}

fn taskgroup(
    m: &Member,
    name: &str,
    sc: &mut Scenario,
    origins: &mut Origins,
) -> Result<String, ParseError> {
    let Value::Str(g) = &m.value else {
        return Err(key_err(m, name, "is not a string", "e.g. \"/tg1\""));
    };
    if g.matches('/').count() > 1 {
        return Err(at(
            m,
            format!("task `{name}`: taskgroup `{}` is nested", shown(g)),
            "scenarios have one level of groups, e.g. /tg1",
        ));
    }
    if !sc.sim.groups.iter().any(|x| &x.path == g) {
        sc.sim.groups.push(GroupSpec {
            path: g.clone(),
            weight: 100,
            idle: false,
        });
        origins.add(format!("group {g} "), m);
    }
    Ok(g.clone())
}

/// The events of a task's one phase.
fn phase(m: &Member, name: &str) -> Result<Vec<Member>, ParseError> {
    let Value::Obj(ph) = &m.value else {
        return Err(key_err(m, name, "is not an object", ""));
    };
    if ph.len() != 1 {
        return Err(at(
            m,
            format!("task `{name}`: {} phases", ph.len()),
            "only one phase per task is imported; split the task",
        ));
    }
    match &ph[0].value {
        Value::Obj(p) => Ok(p.clone()),
        _ => Err(key_err(&ph[0], name, "is not an object", "")),
    }
}

/// The sums of a task's events: run, sleep, and a timer (period,
/// absolute).
#[derive(Debug, Default)]
struct Events {
    run: u64,
    sleep: u64,
    timer: Option<(u64, bool)>,
}

fn events(name: &str, events: &[Member]) -> Result<Events, ParseError> {
    let mut e = Events::default();
    for m in events {
        let k = m.key.as_str();
        if k.starts_with("loop") {
            continue;
        }
        if k.starts_with("runtime") || k.starts_with("run") {
            // `run` is calibrated work: at full capacity, wall time.
            e.run = total(e.run, duration(m, name)?, m, name)?;
        } else if k.starts_with("sleep") {
            e.sleep = total(e.sleep, duration(m, name)?, m, name)?;
        } else if k.starts_with("timer") {
            e.timer = Some(timer(m, name)?);
        } else {
            return Err(key_err(
                m,
                name,
                "is an event that is not modelled",
                "imported events: run, runtime, sleep, timer (locks, memory and I/O events are not)",
            ));
        }
    }
    Ok(e)
}

/// A `timer` event: its period (ns) and whether it is absolute.
fn timer(m: &Member, name: &str) -> Result<(u64, bool), ParseError> {
    let Value::Obj(o) = &m.value else {
        return Err(key_err(m, name, "is not an object", ""));
    };
    let Some(pm) = member(o, "period") else {
        return Err(key_err(
            m,
            name,
            "has no `period`",
            "e.g. {\"period\": 1000}",
        ));
    };
    let period = duration(pm, name)?;
    if period == 0 {
        return Err(key_err(pm, name, "must be more than 0", DURATION_HINT));
    }
    let absolute = !matches!(get(o, "mode"), Some(Value::Str(m)) if m == "relative");
    Ok((period, absolute))
}

fn workload(tm: &Member, name: &str, evs: &[Member]) -> Result<Workload, ParseError> {
    let Events { run, sleep, timer } = events(name, evs)?;
    Ok(match (run, sleep, timer) {
        (0, 0, None) => Workload::Hog,
        (r, _, Some((p, true))) if r > 0 && r <= 100_000 && r * 4 < p => Workload::Timer {
            period_ns: p,
            run_ns: r,
        },
        (r, _, Some((p, true))) if r > 0 => Workload::Periodic {
            run_ns: r,
            sleep_ns: 0,
            period_ns: Some(p),
        },
        (r, s, Some((p, false))) if r > 0 => Workload::Periodic {
            run_ns: r,
            sleep_ns: s
                .checked_add(p)
                .filter(|t| *t <= MAX_DURATION_NS)
                .ok_or_else(|| {
                    let over = format!(
                        "sleep and timer period are over {}",
                        fmt_duration(MAX_DURATION_NS)
                    );
                    at(tm, format!("task `{name}`: {over}"), DURATION_HINT)
                })?,
            period_ns: None,
        },
        (r, s, _) if r > 0 && s > 0 => Workload::Periodic {
            run_ns: r,
            sleep_ns: s,
            period_ns: None,
        },
        (r, 0, None) if r > 0 => Workload::Hog,
        _ => {
            return Err(at(
                tm,
                format!("task `{name}`: no run time in its events"),
                "a task needs a `run` (or `runtime`) event",
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SEED: &str = r#"{ "global": { "duration": 130, "default_policy": "SCHED_OTHER",
              "calibration": "CPU0", "log_size": "disable" },
  /* 2 x NR_CPUS on rb5 */
  "tasks": {
    "rtapp": { "instance": 16, "dl-runtime": 16000,
               "loop": -1, "run": 8177, "sleep": 17777, }, } }"#;

    #[test]
    fn the_seed_rtapp_file_imports() {
        let i = import(SEED, "rb5").unwrap();
        let t = i.scenario.to_text();
        assert!(t.contains("duration 130s"), "{t}");
        assert!(
            t.contains("task rtapp kind=periodic count=16 run=8177us sleep=17777us slice=16ms"),
            "{t}"
        );
        assert!(i.warnings.iter().any(|w| w.contains("calibration")));
    }

    #[test]
    fn duplicate_keys_timers_groups_and_errors() {
        let ct = r#"{"tasks":{"ct":{"policy":"SCHED_OTHER","priority":-5,"taskgroup":"/tg1",
            "timer":{"ref":"unique","period":3777,"mode":"absolute"},"run":20,
            "cpus":[0,1]}, "two": {"run0": 1000, "sleep0": 500, "run1": 1000, "sleep1": 500}}}"#;
        let i = import(ct, "smp2").unwrap();
        let t = i.scenario.to_text();
        assert!(t.contains("group /tg1"), "{t}");
        assert!(
            t.contains("task ct kind=timer period=3777us nice=-5 cpus=0-1 group=/tg1"),
            "{t}"
        );
        assert!(
            t.contains("task two kind=periodic run=2ms sleep=1ms"),
            "{t}"
        );
        for (bad, word) in [
            (
                r#"{"tasks":{"a":{"policy":"SCHED_FIFO","run":1}}}"#,
                "not modelled",
            ),
            (r#"{"tasks":{"a":{"lock":"m","run":1}}}"#, "lock"),
            (r#"{"tasks":{"a":{"taskgroup":"/a/b","run":1}}}"#, "nested"),
            (r#"{"tasks":{"a":{"run":1,}"#, "end of file"),
            (r#"{"tasks":{"a":{"run":1, /* x }}}"#, "comment"),
        ] {
            let e = import(bad, "up").unwrap_err();
            assert!(e.to_string().contains(word), "{bad}: {e}");
        }
        // Semantic errors point at the offending key.
        let e = import(
            "{\"tasks\":{\n \"a\":{\"run\":1,\n  \"lock\":\"m\"}}}",
            "up",
        )
        .unwrap_err();
        assert_eq!((e.line, e.column), (3, 3), "{e}");
        let e = parse_value("{\n  \"a\": x\n}").unwrap_err();
        assert_eq!((e.line, e.column), (2, 8));
    }

    fn err(json: &str) -> ParseError {
        import(json, "up").unwrap_err()
    }

    #[test]
    fn durations_are_checked_not_wrapped_or_clamped() {
        // 1e20 us would saturate and then wrap when run1 is added.
        let e = err(r#"{"tasks":{"a":{"run":1e20,"run1":1}}}"#);
        assert_eq!((e.line, e.column), (1, 16), "{e}");
        assert!(e.message.contains("`run` is over 3600s"), "{e}");
        let e = err(r#"{"tasks":{"a":{"run":3000000000,"run1":700000000,"sleep":1}}}"#);
        assert_eq!(e.column, 33, "{e}");
        assert!(e.message.contains("`run1` brings the total over"), "{e}");
        // A negative sleep is an error, not a hog.
        let e = err(r#"{"tasks":{"a":{"run":100,"sleep":-5}}}"#);
        assert!(e.message.contains("`sleep` is negative"), "{e}");
        let e = err(r#"{"tasks":{"a":{"run":100,"sleep":"x"}}}"#);
        assert!(e.message.contains("`sleep` is not a number"), "{e}");
        let e = err(r#"{"tasks":{"a":{"run":100,"delay":-1}}}"#);
        assert!(e.message.contains("`delay` is negative"), "{e}");
        // `s + p` of a relative timer.
        let e = err(
            r#"{"tasks":{"a":{"run":100,"sleep":3000000000,"timer":{"period":3000000000,"mode":"relative"}}}}"#,
        );
        assert!(e.message.contains("over 3600s") && e.column == 11, "{e}");
        let e = err(r#"{"global":{"duration":1e300},"tasks":{"a":{"run":1}}}"#);
        assert_eq!((e.line, e.column), (1, 12), "{e}");
    }

    #[test]
    fn errors_point_into_the_json_not_the_generated_text() {
        let e = err(r#"{"tasks":{"a":{"instance":100000,"run":100,"sleep":100}}}"#);
        assert_eq!((e.line, e.column), (1, 16), "{e}");
        let e = err(r#"{"tasks":{"a":{"priority":-21,"run":1}}}"#);
        assert!(e.message.contains("-20 to 19") && e.column == 16, "{e}");
        let e = err(r#"{"tasks":{"a":{"cpus":[0,1e10],"run":1}}}"#);
        assert!(e.message.contains("CPU number") && e.column == 16, "{e}");
        // On `up`, CPU 3 is checked by the scenario, and still placed here.
        let e = err("{\"tasks\":{\n  \"a\":{\"cpus\":[3],\"run\":1}}}");
        assert_eq!((e.line, e.column), (2, 3), "{e}");
        let e = err(r#"{"tasks":{"a b":{"run":1},"a_b":{"run":1}}}"#);
        assert!(
            e.message.contains("as an earlier task") && e.column == 27,
            "{e}"
        );
        let e = err(r#"{"tasks":{"a":{"taskgroup":"/x y","run":1}}}"#);
        assert_eq!((e.line, e.column), (1, 16), "{e}");
    }

    #[test]
    fn strings_decode_escapes_and_messages_escape_them() {
        let v = parse_value(r#"["a\u0062\n\"\\\/\ud83d\ude00"]"#).unwrap();
        assert_eq!(v, Value::Arr(vec![Value::Str("ab\n\"\\/\u{1f600}".into())]));
        for bad in [r#""\ud83d""#, r#""\udc00""#, r#""\u12""#, r#""\q""#] {
            let e = parse_value(bad).unwrap_err();
            assert_eq!((e.line, e.column), (1, 2), "{bad}: {e}");
        }
        let i = import(r#"{"tasks":{"\u001b[31m":{"run":1,"util_min":1}}}"#, "up").unwrap();
        assert!(
            i.warnings[0].starts_with("task `\\x1b[31m`"),
            "{:?}",
            i.warnings
        );
        let e = err(&format!(
            r#"{{"tasks":{{"a":{{"run":{}}}}}}}"#,
            "9".repeat(500_000)
        ));
        assert!(e.message.len() < 200, "{} bytes", e.message.len());
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = import(&s, "up");
        }

        #[test]
        fn mutated_files_never_panic(cut in 0usize..200, c in any::<char>()) {
            let mut s: Vec<char> = SEED.chars().collect();
            let i = cut.min(s.len().saturating_sub(1));
            s[i] = c;
            let _ = import(&s.iter().collect::<String>(), "up");
            let _ = import(&SEED[..cut.min(SEED.len())], "up");
        }
    }
}
