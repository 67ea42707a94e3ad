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

use crate::scenario::Scenario;
use crate::ParseError;

/// Largest rt-app file accepted.
pub const MAX_BYTES: usize = 1 << 20;
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
                            format!("expected `:` after \"{key}\""),
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
                let start = self.i;
                loop {
                    match self.bump() {
                        Some(b'"') => break,
                        Some(b'\\') => {
                            self.bump();
                        }
                        Some(_) => {}
                        None => return Err(self.err("unterminated string", "close it with \"")),
                    }
                }
                let raw = &self.s[start..self.i - 1];
                let text = String::from_utf8(raw.to_vec())
                    .map_err(|_| self.err("string is not UTF-8", ""))?;
                Ok(Value::Str(text.replace("\\\"", "\"").replace("\\\\", "\\")))
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
                        self.err(format!("bad number `{t}`"), "numbers are like 8177 or 0.5")
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
    obj.iter().rev().find(|m| m.key == key).map(|m| &m.value)
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

/// µs (rt-app's unit) to ns, exactly for integral µs.
fn us(v: f64) -> u64 {
    (v * 1000.0).round().max(0.0) as u64
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
    let mut sc = Scenario::parse(&format!("eevdf-scenario v1\nmachine {machine}\nend\n"))?;
    let mut default_policy = Policy::Normal;
    for m in &top {
        let (k, v) = (&m.key, &m.value);
        match k.as_str() {
            "tasks" => {}
            "resources" => warnings.push("`resources` is legacy and ignored by rt-app too".into()),
            "global" => {
                let Value::Obj(g) = v else {
                    return Err(at(m, "`global` is not an object".into(), ""));
                };
                for gm in g {
                    let (gk, gv) = (&gm.key, &gm.value);
                    match gk.as_str() {
                        "duration" => {
                            if let Some(d) = num(gv).filter(|d| *d > 0.0) {
                                sc.set(&format!("duration={}ms", (d * 1000.0).round() as u64))?;
                            }
                        }
                        "default_policy" => {
                            default_policy =
                                policy(gv, "default_policy").map_err(|e| moved(e, gm))?
                        }
                        "calibration" | "log_size" | "logdir" | "log_basename" | "lock_pages"
                        | "ftrace" | "gnuplot" | "pi_enabled" | "io_device" | "mem_buffer_size"
                        | "cumulative_slack" => warnings.push(format!(
                            "global `{gk}` does not apply to a simulation; ignored"
                        )),
                        other => warnings.push(format!(
                            "global `{other}` is not an rt-app key we know; ignored"
                        )),
                    }
                }
            }
            other => warnings.push(format!("top-level `{other}` ignored")),
        }
    }
    let Some(Value::Obj(tasks)) = get(&top, "tasks") else {
        return Err(bad(
            "no \"tasks\" object".into(),
            "rt-app files list their threads under \"tasks\"",
        ));
    };
    for tm in tasks {
        let (name, tv) = (&tm.key, &tm.value);
        let Value::Obj(t) = tv else {
            return Err(at(tm, format!("task `{name}` is not an object"), ""));
        };
        let spec = task(tm, t, default_policy, &mut sc, &mut warnings)?;
        sc.sim.tasks.push(spec);
    }
    // Through the text form, so every limit and check of v1 applies.
    let text = sc.to_text();
    let scenario = Scenario::parse(&text)?;
    Ok(Imported { scenario, warnings })
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
                format!("unknown policy `{other}`"),
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

fn task(
    tm: &Member,
    t: &[Member],
    default_policy: Policy,
    sc: &mut Scenario,
    warnings: &mut Vec<String>,
) -> Result<TaskSpec, ParseError> {
    let name = tm.key.as_str();
    // The events: task-level (one inline phase) or a single phase.
    let mut events: Vec<Member> = Vec::new();
    let mut spec = TaskSpec::new(&clean_name(name), Workload::Hog);
    spec.policy = default_policy;
    for m in t {
        let (k, v) = (&m.key, &m.value);
        match k.as_str() {
            "instance" => spec.count = num(v).map_or(1, |n| n.max(1.0) as u32),
            "policy" => spec.policy = policy(v, "policy").map_err(|e| moved(e, m))?,
            "priority" => spec.nice = num(v).map_or(0, |n| n as i32).clamp(-20, 19),
            "dl-runtime" | "runtime" => spec.slice_ns = num(v).map(us),
            "dl-period" | "dl-deadline" | "period" | "deadline" => warnings.push(format!(
                "task `{name}`: `{k}` applies to SCHED_DEADLINE only; ignored"
            )),
            "cpus" => {
                if let Value::Arr(a) = v {
                    spec.cpus = Some(a.iter().filter_map(num).map(|c| c as u32).collect());
                }
            }
            "delay" => spec.start_ns = num(v).map_or(0, us),
            "loop" => {
                if num(v) != Some(-1.0) {
                    warnings.push(format!(
                        "task `{name}`: `loop` {v:?} is imported as forever"
                    ));
                }
            }
            "taskgroup" => {
                let Value::Str(g) = v else {
                    return Err(at(
                        m,
                        format!("task `{name}`: `taskgroup` is not a string"),
                        "",
                    ));
                };
                if g.matches('/').count() > 1 {
                    return Err(at(
                        m,
                        format!("task `{name}`: taskgroup `{g}` is nested"),
                        "scenarios have one level of groups, e.g. /tg1",
                    ));
                }
                if !sc.sim.groups.iter().any(|x| &x.path == g) {
                    sc.sim.groups.push(GroupSpec {
                        path: g.clone(),
                        weight: 100,
                        idle: false,
                    });
                }
                spec.group = Some(g.clone());
            }
            "phases" => {
                let Value::Obj(ph) = v else {
                    return Err(at(
                        m,
                        format!("task `{name}`: `phases` is not an object"),
                        "",
                    ));
                };
                if ph.len() != 1 {
                    return Err(at(
                        m,
                        format!("task `{name}`: {} phases", ph.len()),
                        "only one phase per task is imported; split the task",
                    ));
                }
                if let Value::Obj(p) = &ph[0].value {
                    events.extend(p.iter().cloned());
                }
            }
            "util_min" | "util_max" | "nodes_membind" => {
                warnings.push(format!("task `{name}`: `{k}` is not modelled; ignored"))
            }
            _ => events.push(m.clone()),
        }
    }
    let (mut run, mut sleep, mut timer) = (0u64, 0u64, None::<(u64, bool)>);
    for m in &events {
        let (k, v) = (&m.key, &m.value);
        if k.starts_with("loop") {
            continue;
        }
        if k.starts_with("runtime") || k.starts_with("run") {
            // `run` is calibrated work: at full capacity, wall time.
            run += num(v).map_or(0, us);
        } else if k.starts_with("sleep") {
            sleep += num(v).map_or(0, us);
        } else if k.starts_with("timer") {
            let Value::Obj(o) = v else {
                return Err(at(m, format!("task `{name}`: `{k}` is not an object"), ""));
            };
            let period = get(o, "period").and_then(num).map(us).unwrap_or(0);
            let absolute = !matches!(get(o, "mode"), Some(Value::Str(m)) if m == "relative");
            timer = Some((period, absolute));
        } else {
            return Err(at(
                m,
                format!("task `{name}`: event `{k}` is not modelled"),
                "imported events: run, runtime, sleep, timer (locks, memory and I/O events are not)",
            ));
        }
    }
    spec.workload = match (run, sleep, timer) {
        (0, 0, None) => Workload::Hog,
        (r, _, Some((p, true))) if r > 0 && p > 0 && r <= 100_000 && r * 4 < p => Workload::Timer {
            period_ns: p,
            run_ns: r,
        },
        (r, _, Some((p, true))) if r > 0 && p > 0 => Workload::Periodic {
            run_ns: r,
            sleep_ns: 0,
            period_ns: Some(p),
        },
        (r, s, Some((p, false))) if r > 0 => Workload::Periodic {
            run_ns: r,
            sleep_ns: s + p,
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
    };
    Ok(spec)
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
