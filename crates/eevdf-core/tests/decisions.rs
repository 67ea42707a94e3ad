//! Data-driven decision tests: every `tests/decisions/*.txt` script drives
//! one runqueue through operations and states the expected picks,
//! preemption decisions, reasons and entity fields. A mismatch fails with
//! the script's file and line.
//!
//! Script language (one command per line, `#` starts a comment):
//!
//! ```text
//! profile v7.1                 # kernel profile (before the first task)
//! features NO_RUN_TO_PARITY    # feature tokens, applied in order
//! cpus 8 / hz 1000             # base slice scaling and TICK_NSEC
//! preempt lazy|full            # dynamic_preempt_lazy() (default full)
//! group G weight=1024 [parent=H] [idle]
//! task A [nice=0] [slice=3ms] [policy=normal|batch|idle] [group=G]
//! enqueue A [initial|wakeup|migrated]
//! sleep A => delayed|dequeued
//! wake A [sync] [fork] [selected] [irq] => preempt|keep [Reason]
//! setlag A -3ms                # saved lag of a dequeued task
//! run 1ms                      # advance the clock (no accounting)
//! tick                         # task_tick_fair
//! schedule => A|idle [Reason]  # pick_next_task; reason of the leaf pick
//! resched => none|lazy|full
//! expect A lag|vlag|deadline-v|vprot-v|slice|weight|exec == | < | > | <= | >= VALUE
//! expect A eligible|delayed|queued|protected|next true|false
//! simulate 2s                  # tick every TICK_NSEC, schedule on resched
//! share A 33.3% 0.5%           # A's share of the simulated time, ± tolerance
//! ```

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use eevdf_core::{
    CfsRqId, DequeueFlags, DequeueResult, EnqueueFlags, EntityId, FeatureSet, LoadWeight, Policy,
    Profile, Resched, Rq, RqConfig, WakeFlags,
};

struct Script {
    file: String,
    features: FeatureSet,
    cpus: u32,
    hz: u32,
    preempt_lazy: bool,
    rq: Option<Rq>,
    tasks: BTreeMap<String, EntityId>,
    groups: BTreeMap<String, CfsRqId>,
    names: BTreeMap<EntityId, String>,
    sim_start: Option<(u64, BTreeMap<String, u64>)>,
}

fn parse_ns(s: &str) -> Result<i64, String> {
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1_000_000.0)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1_000.0)
    } else if let Some(n) = s.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e9)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.parse().map_err(|_| format!("bad duration `{s}`"))?;
    Ok((v * mult).round() as i64)
}

impl Script {
    fn rq(&mut self) -> &mut Rq {
        if self.rq.is_none() {
            let mut cfg = RqConfig::new(self.features.features, self.cpus, self.hz);
            cfg.preempt_lazy = self.preempt_lazy;
            self.rq = Some(Rq::new(cfg));
        }
        self.rq.as_mut().unwrap()
    }

    fn task(&self, name: &str) -> Result<EntityId, String> {
        self.tasks
            .get(name)
            .copied()
            .ok_or(format!("unknown task `{name}`"))
    }

    fn name(&self, id: Option<EntityId>) -> String {
        match id {
            None => "idle".into(),
            Some(id) => self.names.get(&id).cloned().unwrap_or(format!("{id:?}")),
        }
    }

    fn kv<'a>(args: &'a [&'a str], key: &str) -> Option<&'a str> {
        args.iter()
            .find_map(|a| a.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }

    fn exec(&mut self, line: &str) -> Result<(), String> {
        let (cmd, expect) = match line.split_once("=>") {
            Some((c, e)) => (c.trim(), Some(e.trim())),
            None => (line.trim(), None),
        };
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let args = &words[1..];
        match words[0] {
            "profile" => {
                let p = Profile::parse(args[0]).ok_or("bad profile")?;
                self.features.set_profile(p);
            }
            "features" => {
                for t in args {
                    self.features.apply(t).map_err(|e| e.to_string())?;
                }
                if let Some(rq) = self.rq.as_mut() {
                    rq.config.features = self.features.features;
                }
            }
            "cpus" => self.cpus = args[0].parse().map_err(|_| "bad cpus")?,
            "hz" => self.hz = args[0].parse().map_err(|_| "bad hz")?,
            "preempt" => {
                self.preempt_lazy = match args[0] {
                    "lazy" => true,
                    "full" | "voluntary" | "none" => false,
                    _ => return Err("bad preempt (lazy|full|voluntary|none)".into()),
                }
            }
            "group" => {
                let w: u64 = Self::kv(args, "weight")
                    .unwrap_or("1024")
                    .parse()
                    .map_err(|_| "bad weight")?;
                let parent = match Self::kv(args, "parent") {
                    Some(p) => *self.groups.get(p).ok_or("unknown parent")?,
                    None => CfsRqId::ROOT,
                };
                let idle = args.contains(&"idle");
                let (se, q) = self.rq().create_group(parent, w, idle);
                self.groups.insert(args[0].to_string(), q);
                self.names.insert(se, format!("[{}]", args[0]));
            }
            "task" => {
                let nice: i32 = Self::kv(args, "nice")
                    .unwrap_or("0")
                    .parse()
                    .map_err(|_| "bad nice")?;
                let slice = Self::kv(args, "slice")
                    .map(parse_ns)
                    .transpose()?
                    .map(|v| v as u64);
                let policy = match Self::kv(args, "policy").unwrap_or("normal") {
                    "normal" => Policy::Normal,
                    "batch" => Policy::Batch,
                    "idle" => Policy::Idle,
                    p => return Err(format!("bad policy {p}")),
                };
                let q = match Self::kv(args, "group") {
                    Some(g) => *self.groups.get(g).ok_or("unknown group")?,
                    None => CfsRqId::ROOT,
                };
                let id = self
                    .rq()
                    .create_task(q, LoadWeight::from_nice(nice), policy, slice);
                self.tasks.insert(args[0].to_string(), id);
                self.names.insert(id, args[0].to_string());
            }
            "enqueue" => {
                let id = self.task(args[0])?;
                let flags = match args.get(1).copied().unwrap_or("initial") {
                    "initial" => EnqueueFlags::INITIAL,
                    "wakeup" => EnqueueFlags::WAKEUP,
                    "migrated" => EnqueueFlags::MIGRATED,
                    f => return Err(format!("bad flag {f}")),
                };
                self.rq().enqueue_task(id, flags);
            }
            "sleep" => {
                let id = self.task(args[0])?;
                let r = self.rq().dequeue_task(id, DequeueFlags::SLEEP);
                let got = match r {
                    DequeueResult::Delayed => "delayed",
                    DequeueResult::Dequeued => "dequeued",
                };
                if let Some(e) = expect {
                    if e != got {
                        return Err(format!("sleep: expected {e}, got {got}"));
                    }
                }
            }
            "wake" => {
                let id = self.task(args[0])?;
                let wf = WakeFlags {
                    sync: args.contains(&"sync"),
                    fork: args.contains(&"fork"),
                    rq_selected: args.contains(&"selected"),
                    from_task: !args.contains(&"irq"),
                };
                let flags = if wf.fork {
                    EnqueueFlags::INITIAL
                } else {
                    EnqueueFlags::WAKEUP
                };
                let rq = self.rq();
                rq.enqueue_task(id, flags);
                let d = rq.wakeup_preempt(id, wf);
                let got = if d.preempt { "preempt" } else { "keep" };
                let reason = format!("{:?}", d.reason);
                if let Some(e) = expect {
                    let mut it = e.split_whitespace();
                    let want = it.next().unwrap_or("");
                    if want != got {
                        return Err(format!("wake: expected {want}, got {got} ({reason})"));
                    }
                    if let Some(r) = it.next() {
                        if !reason.starts_with(r) {
                            return Err(format!("wake: expected reason {r}, got {reason}"));
                        }
                    }
                }
            }
            "setlag" => {
                let id = self.task(args[0])?;
                let v = parse_ns(args[1])?;
                self.rq().set_saved_lag(id, v);
            }
            "run" => {
                let d = parse_ns(args[0])? as u64;
                let rq = self.rq();
                let now = rq.clock + d;
                rq.set_clock(now);
            }
            "tick" => self.rq().task_tick(false),
            "schedule" => {
                let out = self.rq().pick_next_task();
                let got = self.name(out.next);
                let reason = self
                    .rq()
                    .last_pick
                    .last()
                    .map(|s| format!("{:?}", s.reason))
                    .unwrap_or_default();
                if let Some(e) = expect {
                    let mut it = e.split_whitespace();
                    let want = it.next().unwrap_or("");
                    if want != got {
                        return Err(format!("schedule: expected {want}, got {got} ({reason})"));
                    }
                    if let Some(r) = it.next() {
                        if !reason.starts_with(r) {
                            return Err(format!("schedule: expected reason {r}, got {reason}"));
                        }
                    }
                }
            }
            "resched" => {
                let got = match self.rq().resched {
                    None => "none",
                    Some(Resched::Lazy) => "lazy",
                    Some(Resched::Full) => "full",
                };
                if expect != Some(got) {
                    return Err(format!("resched: expected {expect:?}, got {got}"));
                }
            }
            "expect" => self.expect(args)?,
            "simulate" => {
                let dur = parse_ns(args[0])? as u64;
                let rq = self.rq();
                let tick = rq.config.tick_nsec;
                let end = rq.clock + dur;
                rq.update_curr_all();
                let start: BTreeMap<String, u64> = self
                    .tasks
                    .iter()
                    .map(|(n, id)| {
                        (
                            n.clone(),
                            self.rq.as_ref().unwrap().se(*id).sum_exec_runtime,
                        )
                    })
                    .collect();
                self.sim_start = Some((dur, start));
                let rq = self.rq();
                if rq.curr_task.is_none() || rq.resched.is_some() {
                    rq.pick_next_task();
                }
                while rq.clock + tick <= end {
                    let now = rq.clock + tick;
                    rq.set_clock(now);
                    rq.task_tick(false);
                    if rq.resched.is_some() {
                        rq.pick_next_task();
                    }
                }
                rq.update_curr_all();
            }
            "share" => {
                let id = self.task(args[0])?;
                let want: f64 = args[1]
                    .trim_end_matches('%')
                    .parse()
                    .map_err(|_| "bad share")?;
                let tol: f64 = args[2]
                    .trim_end_matches('%')
                    .parse()
                    .map_err(|_| "bad tolerance")?;
                let (dur, start) = self.sim_start.clone().ok_or("share before simulate")?;
                let ran = self.rq().se(id).sum_exec_runtime - start[args[0]];
                let got = ran as f64 * 100.0 / dur as f64;
                if (got - want).abs() > tol {
                    return Err(format!(
                        "share {}: expected {want}% ± {tol}%, got {got:.3}%",
                        args[0]
                    ));
                }
            }
            c => return Err(format!("unknown command `{c}`")),
        }
        Ok(())
    }

    fn expect(&mut self, args: &[&str]) -> Result<(), String> {
        let id = self.task(args[0])?;
        let field = args[1];
        let rq = self.rq();
        let se = rq.se(id).clone();
        let q = se.cfs_rq;
        let boolean = match field {
            "eligible" => Some(rq.entity_eligible(q, id)),
            "delayed" => Some(se.sched_delayed),
            "queued" => Some(se.on_rq),
            "protected" => Some(rq.protect_slice(id)),
            "next" => Some(rq.cfs(q).next == Some(id)),
            _ => None,
        };
        if let Some(b) = boolean {
            let want = args[2] == "true";
            return if b == want {
                Ok(())
            } else {
                Err(format!(
                    "expect {} {field}: expected {want}, got {b}",
                    args[0]
                ))
            };
        }
        let got: i64 = match field {
            "lag" => rq.entity_lag_now(q, id),
            "vlag" => se.vlag,
            "deadline-v" => se.deadline.wrapping_sub(se.vruntime) as i64,
            "vprot-v" => se.vprot.wrapping_sub(se.vruntime) as i64,
            "slice" => se.slice as i64,
            "weight" => se.load.weight as i64,
            "exec" => se.sum_exec_runtime as i64,
            f => return Err(format!("unknown field {f}")),
        };
        let op = args[2];
        let want = parse_ns(args[3])?;
        let ok = match op {
            "==" => got == want,
            "<" => got < want,
            ">" => got > want,
            "<=" => got <= want,
            ">=" => got >= want,
            o => return Err(format!("bad operator {o}")),
        };
        if ok {
            Ok(())
        } else {
            Err(format!("expect {} {field} {op} {want}: got {got}", args[0]))
        }
    }
}

fn run_script(path: &Path) -> Result<(), String> {
    let text = fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut s = Script {
        file: path.display().to_string(),
        features: FeatureSet::new(Profile::V7_1),
        cpus: 1,
        hz: 1000,
        preempt_lazy: false,
        rq: None,
        tasks: BTreeMap::new(),
        groups: BTreeMap::new(),
        names: BTreeMap::new(),
        sim_start: None,
    };
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        s.exec(line)
            .map_err(|e| format!("{}:{}: {e}\n    {}", s.file, n + 1, raw.trim()))?;
    }
    if let Some(rq) = &s.rq {
        rq.check_invariants()
            .map_err(|e| format!("{}: at end: {e}", s.file))?;
    }
    Ok(())
}

#[test]
fn decision_scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/decisions");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("tests/decisions")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let failures: Vec<String> = files.iter().filter_map(|f| run_script(f).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} scripts failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
