//! One table entry per directive, and one per `sysctl` and `costs` key,
//! as [`TASK_KEYS`] keeps one per task key: name, value, default, help,
//! reader and printer. The parser, the canonical printer (whose line
//! order is the table's), `--set`, the suggestions in errors and
//! `docs/scenario-keys.md` all read [`DIRECTIVES`].

use super::*;

/// A directive: the first word of a scenario line.
#[derive(Clone, Copy)]
pub struct Directive {
    pub name: &'static str,
    /// What follows the name: `100|250|300|1000`, `KEY=VALUE ...`.
    pub value: &'static str,
    /// What a text without the line means.
    pub default: &'static str,
    /// A whole line, used in hints and the reference.
    pub example: &'static str,
    /// One sentence for the reference.
    pub help: &'static str,
    /// `--set NAME=VALUE` replaces it.
    pub settable: bool,
    /// Its `KEY=VALUE` keys, for `sysctl` and `costs` (`--set NAME.KEY=`).
    pub keys: &'static [SubKey],
    pub(super) read: fn(&mut Builder, usize, &[Tok<'_>]) -> Result<(), ParseError>,
    /// Appends its canonical lines (none when it is the default).
    pub(super) print: fn(&Scenario, &mut Vec<String>),
}

/// A `KEY=VALUE` key of a `sysctl` or `costs` line.
#[derive(Clone, Copy)]
pub struct SubKey {
    pub name: &'static str,
    pub value: &'static str,
    pub default: &'static str,
    pub example: &'static str,
    pub help: &'static str,
    pub(super) read: fn(&mut Builder, usize, &Kv<'_>) -> Result<(), ParseError>,
    /// The canonical value, or `None` when the key is left out.
    pub(super) print: fn(&Scenario) -> Option<String>,
}

impl fmt::Debug for Directive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Directive")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for SubKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubKey")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The directive called `name`.
pub fn directive(name: &str) -> Option<&'static Directive> {
    DIRECTIVES.iter().find(|d| d.name == name)
}

/// Directive names as the suggestions list them (`end` included).
pub(super) fn directive_names() -> Vec<&'static str> {
    DIRECTIVES.iter().map(|d| d.name).chain(["end"]).collect()
}

/// The names `--set NAME=VALUE` takes.
pub(super) fn settable_names() -> Vec<&'static str> {
    DIRECTIVES
        .iter()
        .filter(|d| d.settable)
        .map(|d| d.name)
        .collect()
}

/// A single-valued directive's one value, once per text.
fn once_single<'a>(
    b: &mut Builder,
    line: usize,
    toks: &[Tok<'a>],
    example: &str,
) -> Result<Tok<'a>, ParseError> {
    let d = toks.first().map_or(1, |d| d.col);
    let name = toks.first().map_or("", |d| d.s);
    b.once(line, d, name)?;
    single(line, toks, example)
}

fn read_engine(b: &mut Builder, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
    let v = once_single(b, line, toks, "engine 0.1")?;
    let ok = v.s.split_once('.').is_some_and(|(a, b)| {
        a.len() <= 4 && b.len() <= 4 && parse_uint(a).is_some() && parse_uint(b).is_some()
    });
    if !ok {
        return Err(ParseError::new(
            line,
            v.col,
            format!("expected an engine version X.Y, found {}", quote(v.s)),
            format!("this engine is version {ENGINE_VERSION}"),
        ));
    }
    b.sc.engine = v.s.to_string();
    Ok(())
}

fn read_machine(b: &mut Builder, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
    let d = toks.first().map_or(1, |d| d.col);
    b.once(line, d, "machine")?;
    if toks.get(1).is_some_and(|t| t.s == "custom") {
        b.sc.machine = parse_custom_machine(line, &toks[2..])?;
        return Ok(());
    }
    let v = single(line, toks, "machine smp4")?;
    b.sc.machine = Machine::parse(v.s).ok_or_else(|| {
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
    Ok(())
}

fn read_kernel(b: &mut Builder, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
    let v = once_single(b, line, toks, "kernel v7.1")?;
    let p = Profile::parse(v.s).ok_or_else(|| {
        let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        ParseError::new(
            line,
            v.col,
            format!("unknown kernel {}", quote(v.s)),
            format!("kernel is one of {}", names.join(", ")),
        )
    })?;
    b.sc.features.set_profile(p);
    Ok(())
}

fn read_hz(b: &mut Builder, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
    let v = once_single(b, line, toks, "hz 250")?;
    match parse_uint(v.s).filter(|h| HZ_VALUES.contains(h)) {
        Some(h) => {
            b.sc.sim.hz = u32::try_from(h).unwrap_or(250);
            Ok(())
        }
        None => Err(ParseError::new(
            line,
            v.col,
            format!("unsupported hz {}", quote(v.s)),
            "hz is 100, 250, 300 or 1000",
        )),
    }
}

fn read_seed(b: &mut Builder, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
    let v = once_single(b, line, toks, "seed 1")?;
    b.sc.sim.seed = parse_uint(v.s).ok_or_else(|| {
        ParseError::new(
            line,
            v.col,
            format!("expected a seed, found {}", quote(v.s)),
            "the seed is an integer from 0 to 18446744073709551615",
        )
    })?;
    Ok(())
}

fn read_preempt(b: &mut Builder, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
    let v = once_single(b, line, toks, "preempt full")?;
    b.sc.preempt = Some(PreemptModel::parse(v.s).ok_or_else(|| {
        ParseError::new(
            line,
            v.col,
            format!("unknown preemption model {}", quote(v.s)),
            "preempt is none, voluntary, full or lazy",
        )
    })?);
    Ok(())
}

/// The `features` lines: tokens in canonical order, wrapped at
/// [`MAX_COLUMNS`].
fn print_features(sc: &Scenario, lines: &mut Vec<String>) {
    push_wrapped("features", &sc.features.canonical_tokens(), lines);
}

/// `head` and the words, as many lines of `head word ...` as fit in
/// [`MAX_COLUMNS`]; none without words.
fn push_wrapped(head: &str, words: &[String], lines: &mut Vec<String>) {
    let mut cur = String::new();
    for t in words {
        if !cur.is_empty() && cur.chars().count() + 1 + t.chars().count() > MAX_COLUMNS {
            lines.push(std::mem::take(&mut cur));
        }
        if cur.is_empty() {
            cur.push_str(head);
        }
        cur.push(' ');
        cur.push_str(t);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
}

/// The `sysctl` or `costs` lines of the keys that print, if any.
fn print_keys(name: &str, keys: &[SubKey], sc: &Scenario, lines: &mut Vec<String>) {
    let kvs: Vec<String> = keys
        .iter()
        .filter_map(|k| (k.print)(sc).map(|v| format!("{}={v}", k.name)))
        .collect();
    push_wrapped(name, &kvs, lines);
}

/// Every directive, in the canonical text's order.
pub const DIRECTIVES: &[Directive] = &[
    Directive {
        name: "engine",
        value: "X.Y",
        default: ENGINE_VERSION,
        example: "engine 0.1",
        help: "The engine version the text was made with; this engine runs it and notes the difference (CHANGELOG.md lists what changed).",
        settable: true,
        keys: &[],
        read: read_engine,
        print: |sc, l| l.push(format!("engine {}", sc.engine)),
    },
    Directive {
        name: "machine",
        value: "up|smpN|PRESET|custom ...",
        default: "up",
        example: "machine smp4",
        help: "The CPUs and their topology: SMT, clusters and LLCs, NUMA nodes, big.LITTLE capacities.",
        settable: true,
        keys: &[],
        read: read_machine,
        print: |sc, l| l.push(format!("machine {}", sc.machine)),
    },
    Directive {
        name: "kernel",
        value: "v6.12|v6.18|v6.19-rc1|v7.1|v7.2|tip-2026-09",
        default: "v7.2",
        example: "kernel v7.1",
        help: "The kernel profile: fair.c's behaviour and SCHED_FEAT defaults of that version.",
        settable: true,
        keys: &[],
        read: read_kernel,
        print: |sc, l| l.push(format!("kernel {}", sc.features.profile.name())),
    },
    Directive {
        name: "hz",
        value: "100|250|300|1000",
        default: "250",
        example: "hz 250",
        help: "CONFIG_HZ: the scheduler tick's rate.",
        settable: true,
        keys: &[],
        read: read_hz,
        print: |sc, l| l.push(format!("hz {}", sc.sim.hz)),
    },
    Directive {
        name: "duration",
        value: "DURATION",
        default: "10s",
        example: "duration 10s",
        help: "Simulated time the run lasts.",
        settable: true,
        keys: &[],
        read: |b, line, toks| {
            let d = toks.first().map_or(1, |d| d.col);
            b.sc.sim.duration_ns = b.duration_line(line, d, toks, "duration", "duration 10s", 1)?;
            Ok(())
        },
        print: |sc, l| l.push(format!("duration {}", fmt_duration(sc.sim.duration_ns))),
    },
    Directive {
        name: "warmup",
        value: "DURATION",
        default: "0",
        example: "warmup 1s",
        help: "Start-up left out of the latency figures (the tables say so).",
        settable: true,
        keys: &[],
        read: |b, line, toks| {
            let d = toks.first().map_or(1, |d| d.col);
            b.sc.sim.warmup_ns = b.duration_line(line, d, toks, "warmup", "warmup 1s", 0)?;
            Ok(())
        },
        print: |sc, l| {
            if sc.sim.warmup_ns > 0 {
                l.push(format!("warmup {}", fmt_duration(sc.sim.warmup_ns)));
            }
        },
    },
    Directive {
        name: "seed",
        value: "0-18446744073709551615",
        default: "1",
        example: "seed 1",
        help: "The seed of the run's one PRNG: the same text and seed replay exactly.",
        settable: true,
        keys: &[],
        read: read_seed,
        print: |sc, l| l.push(format!("seed {}", sc.sim.seed)),
    },
    Directive {
        name: "preempt",
        value: "none|voluntary|full|lazy",
        default: "the kernel profile's model",
        example: "preempt full",
        help: "The preemption model (/sys/kernel/debug/sched/preempt).",
        settable: true,
        keys: &[],
        read: read_preempt,
        print: |sc, l| {
            if let Some(p) = sc.preempt {
                l.push(format!("preempt {}", p.name()));
            }
        },
    },
    Directive {
        name: "features",
        value: "TOKEN ...",
        default: "the kernel profile's",
        example: "features NO_RUN_TO_PARITY NO_PREEMPT_SHORT",
        help: "Scheduler features in SCHED_FEAT spelling, over the profile's defaults, as /sys/kernel/debug/sched/features takes them.",
        settable: true,
        keys: &[],
        read: |b, line, toks| b.features(line, toks),
        print: print_features,
    },
    Directive {
        name: "sysctl",
        value: "KEY=VALUE ...",
        default: "the kernel's",
        example: "sysctl base_slice_ns=2800000",
        help: "Scheduler tunables under /sys/kernel/debug/sched.",
        settable: true,
        keys: SYSCTL_KEYS,
        read: |b, line, toks| b.sub_keys(line, toks, SYSCTL_KEYS, "base_slice_ns=2800000"),
        print: |sc, l| print_keys("sysctl", SYSCTL_KEYS, sc, l),
    },
    Directive {
        name: "costs",
        value: "KEY=DURATION ...",
        default: "the machine's",
        example: "costs switch=1us wake=4us",
        help: "What the machine's own work costs in CPU time.",
        settable: true,
        keys: COST_KEYS,
        read: |b, line, toks| b.sub_keys(line, toks, COST_KEYS, "switch=2us"),
        print: |sc, l| print_keys("costs", COST_KEYS, sc, l),
    },
    Directive {
        name: "group",
        value: "PATH weight=1-10000 [idle]",
        default: "none; weight=100",
        example: "group /test-B weight=100",
        help: "A task group (cgroup v2 cpu.weight, cpu.idle); tasks join it with group=PATH.",
        settable: false,
        keys: &[],
        read: |b, line, toks| b.group(line, toks),
        print: |sc, l| {
            for g in &sc.sim.groups {
                let idle = if g.idle { " idle" } else { "" };
                l.push(format!("group {} weight={}{idle}", g.path, g.weight));
            }
        },
    },
    Directive {
        name: "task",
        value: "NAME kind=KIND KEY=VALUE ...",
        default: "none",
        example: "task ct kind=timer period=1ms",
        help: "A task or `count` copies of it; its keys are in the task key table below.",
        settable: false,
        keys: &[],
        read: |b, line, toks| b.task(line, toks),
        print: |sc, l| l.extend(sc.sim.tasks.iter().map(task_line)),
    },
];

/// A `sysctl` value in nanoseconds from `lo` to `hi`: a plain integer
/// (the kernel's unit) or a duration with its unit.
fn sysctl_ns(line: usize, kv: &Kv<'_>, lo: Nanos, hi: Nanos) -> Result<Nanos, ParseError> {
    match parse_uint(kv.val) {
        Some(v) if (lo..=hi).contains(&v) => Ok(v),
        Some(_) => Err(ParseError::new(
            line,
            kv.vcol,
            format!("`{}` is out of range: {}", kv.key, quote(kv.val)),
            format!("`{}` takes nanoseconds from {lo} to {hi}", kv.key),
        )),
        None => dur_val(line, kv, lo, hi),
    }
}

pub const SYSCTL_KEYS: &[SubKey] = &[
    SubKey {
        name: "base_slice_ns",
        value: "1us-1s",
        default: "0.7 ms x (1 + ilog2(min(CPUs, 8)))",
        example: "base_slice_ns=2800000",
        help: "The default slice (sysctl_sched_base_slice).",
        read: |b, line, kv| {
            b.sc.sim.sysctl.base_slice_ns = Some(sysctl_ns(line, kv, US, S)?);
            Ok(())
        },
        print: |sc| sc.sim.sysctl.base_slice_ns.map(|v| v.to_string()),
    },
    SubKey {
        name: "migration_cost_ns",
        value: "0-1s",
        default: "500000",
        example: "migration_cost_ns=500000",
        help: "How long a task stays cache hot for load balancing (sysctl_sched_migration_cost).",
        read: |b, line, kv| {
            b.sc.sim.sysctl.migration_cost_ns = Some(sysctl_ns(line, kv, 0, S)?);
            Ok(())
        },
        print: |sc| sc.sim.sysctl.migration_cost_ns.map(|v| v.to_string()),
    },
    SubKey {
        name: "energy_aware",
        value: "0|1",
        default: "1 where the machine has an energy model (rb5)",
        example: "energy_aware=1",
        help:
            "Energy-aware scheduling (kernel.sched_energy_aware) on machines with an energy model.",
        read: |b, line, kv| {
            b.sc.sim.sysctl.energy_aware = Some(match kv.val {
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
            Ok(())
        },
        print: |sc| sc.sim.sysctl.energy_aware.map(|v| u8::from(v).to_string()),
    },
];

/// A `costs` key's printed value: set where it differs from the
/// machine's default, which `finish` applies (`machine` may come later).
fn cost_print(v: Nanos, default: Nanos) -> Option<String> {
    (v != default).then(|| fmt_duration(v))
}

/// Reads a `costs` duration into slot `i` of the explicit costs.
fn cost_read(b: &mut Builder, line: usize, kv: &Kv<'_>, i: usize) -> Result<(), ParseError> {
    b.explicit_costs[i] = Some(dur_val(line, kv, 0, S)?);
    Ok(())
}

pub const COST_KEYS: &[SubKey] = &[
    SubKey {
        name: "switch",
        value: "0-1s",
        default: "the machine's",
        example: "switch=1us",
        help: "A context switch, up to the incoming task's first instruction (part of its wakeup latency).",
        read: |b, line, kv| cost_read(b, line, kv, 0),
        print: |sc| cost_print(sc.sim.costs.switch_ns, sc.machine.default_costs().switch_ns),
    },
    SubKey {
        name: "wake",
        value: "0-1s",
        default: "the machine's",
        example: "wake=4us",
        help: "The wakeup path, from the wake call or timer interrupt to the enqueue; the waker pays it too.",
        read: |b, line, kv| cost_read(b, line, kv, 1),
        print: |sc| cost_print(sc.sim.costs.wake_ns, sc.machine.default_costs().wake_ns),
    },
    SubKey {
        name: "migrate",
        value: "0-1s",
        default: "the machine's",
        example: "migrate=10us",
        help: "Extra cost the first time a task runs after a migration.",
        read: |b, line, kv| cost_read(b, line, kv, 2),
        print: |sc| cost_print(sc.sim.costs.migrate_ns, sc.machine.default_costs().migrate_ns),
    },
    SubKey {
        name: "sleep",
        value: "0-1s",
        default: "the machine's (0 unless measured)",
        example: "sleep=3us",
        help: "CPU a timer or periodic task spends in each timed sleep (clock_nanosleep).",
        read: |b, line, kv| cost_read(b, line, kv, 3),
        print: |sc| cost_print(sc.sim.costs.sleep_ns, sc.machine.default_costs().sleep_ns),
    },
    SubKey {
        name: "tick",
        value: "0-1s",
        default: "the machine's (0 unless measured)",
        example: "tick=15us",
        help: "CPU each tick's interrupt takes from the task it interrupts.",
        read: |b, line, kv| cost_read(b, line, kv, 4),
        print: |sc| cost_print(sc.sim.costs.tick_ns, sc.machine.default_costs().tick_ns),
    },
];

/// The directive half of `docs/scenario-keys.md`, from the tables.
pub(super) fn directive_reference() -> String {
    let mut s = String::from(
        "# Directives\n\n\
         Generated from `DIRECTIVES` (crates/eevdf-scenario/src/scenario/directives.rs).\n\
         A scenario is the line `eevdf-scenario v1`, directives one per line in any\n\
         order, and `end`; the canonical text prints them in this order and leaves\n\
         defaults out. `--set NAME=VALUE` replaces a settable directive,\n\
         `--set NAME.KEY=VALUE` one key of `sysctl` or `costs`.\n\n\
         | directive | value | default | example | settable | what it is |\n\
         |---|---|---|---|---|---|\n",
    );
    for d in DIRECTIVES {
        s.push_str(&format!(
            "| `{}` | {} | {} | `{}` | {} | {} |\n",
            d.name,
            cell(d.value),
            d.default,
            d.example,
            if d.settable { "yes" } else { "no" },
            d.help
        ));
    }
    for d in DIRECTIVES.iter().filter(|d| !d.keys.is_empty()) {
        s.push_str(&format!(
            "\n## `{}` keys\n\n| key | value | default | example | what it is |\n|---|---|---|---|---|\n",
            d.name
        ));
        for k in d.keys {
            s.push_str(&format!(
                "| `{}` | {} | {} | `{}` | {} |\n",
                k.name,
                cell(k.value),
                k.default,
                k.example,
                k.help
            ));
        }
    }
    s
}

/// A value for a Markdown table cell: `|` would end the cell.
fn cell(v: &str) -> String {
    v.replace('|', "\\|")
}
