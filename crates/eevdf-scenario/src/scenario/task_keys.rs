//! One table entry per task key, as ripgrep's `flags/defs.rs` keeps one
//! per flag: name, kinds, value, default, help, reader and printer. The
//! parser, the canonical printer, `--set task.NAME.KEY=VALUE`, the page's
//! editor, the templates and `docs/scenario-keys.md` all read
//! [`TASK_KEYS`], so a new key is one entry here plus the simulator field
//! it sets.

use super::*;

/// A key of the `task` directive.
#[derive(Clone, Copy)]
pub struct TaskKey {
    /// The key as written: `slice` in `slice=2ms`.
    pub name: &'static str,
    /// The task kinds that take it.
    pub kinds: &'static [&'static str],
    /// What the value is: `DURATION`, `1-256`, `thread|process`.
    pub value: &'static str,
    /// The default (what a missing key means), or `required`.
    pub default: &'static str,
    /// A value to show, used in hints and the reference.
    pub example: &'static str,
    /// One sentence for the reference and the page's editor.
    pub help: &'static str,
    /// The page's task editor offers it.
    pub editor: bool,
    pub(super) read: fn(&Val<'_>, &mut TaskSpec) -> Result<(), ParseError>,
    /// The canonical value, or `None` when the key is left out.
    pub(super) print: fn(&TaskSpec) -> Option<String>,
}

impl fmt::Debug for TaskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskKey")
            .field("name", &self.name)
            .field("kinds", &self.kinds)
            .finish_non_exhaustive()
    }
}

impl TaskKey {
    /// A task without the key is an error.
    pub fn required(&self) -> bool {
        self.default == "required"
    }

    /// The canonical value of `spec`'s key; `None` when it is the default.
    pub fn value_of(&self, spec: &TaskSpec) -> Option<String> {
        (self.print)(spec)
    }
}

/// A value being read: its token and line, for positioned errors.
pub(super) struct Val<'a> {
    pub(super) line: usize,
    pub(super) kv: Kv<'a>,
}

impl Val<'_> {
    pub(super) fn dur(&self, lo: Nanos) -> Result<Nanos, ParseError> {
        dur_val(self.line, &self.kv, lo, MAX_DURATION_NS)
    }
    pub(super) fn num(&self, lo: u32, hi: u32) -> Result<u32, ParseError> {
        u32_val(self.line, &self.kv, lo, hi)
    }
    fn is(&self, yes: &'static str, no: &'static str) -> Result<bool, ParseError> {
        Ok(choice_val(self.line, &self.kv, &[yes, no])? == yes)
    }
    /// An error at the value with `message` and `hint`.
    fn bad(&self, message: String, hint: &str) -> ParseError {
        ParseError::new(self.line, self.kv.vcol, message, hint)
    }
}

const ALL: &[&str] = KINDS;
const TIMER: &[&str] = &["timer"];
const PERIODIC: &[&str] = &["periodic"];
const HACKBENCH: &[&str] = &["hackbench"];
const SCHBENCH: &[&str] = &["schbench"];

/// Prints `v` unless it is `default`.
fn unless<T: PartialEq>(v: T, default: T, show: impl Fn(T) -> String) -> Option<String> {
    (v != default).then(|| show(v))
}

/// Every task key, in canonical order (a kind's keys are those whose
/// `kinds` name it, in this order).
pub const TASK_KEYS: &[TaskKey] = &[
    TaskKey {
        name: "kind",
        kinds: ALL,
        value: "timer|periodic|hackbench|schbench|hog",
        default: "required",
        example: "timer",
        help: "What the task does; it decides the other keys it takes.",
        editor: false,
        // Read first, by `read_task`: it chooses the workload.
        read: |_, _| Ok(()),
        print: |t| Some(t.workload.kind().to_string()),
    },
    TaskKey {
        name: "count",
        kinds: ALL,
        value: "1-4096",
        default: "1",
        example: "4",
        help: "How many copies, named NAME.0, NAME.1, ...",
        editor: true,
        read: |v, t| {
            t.count = v.num(1, MAX_COUNT as u32)?;
            Ok(())
        },
        print: |t| unless(t.count, 1, |c| c.to_string()),
    },
    TaskKey {
        name: "period",
        kinds: TIMER,
        value: "DURATION",
        default: "required",
        example: "1ms",
        help: "cyclictest's interval: an absolute timer (clock_nanosleep TIMER_ABSTIME).",
        editor: true,
        read: |v, t| {
            if let Workload::Timer { period_ns, .. } = &mut t.workload {
                *period_ns = v.dur(1)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Timer { period_ns, .. } => Some(fmt_duration(*period_ns)),
            _ => None,
        },
    },
    TaskKey {
        name: "run",
        kinds: TIMER,
        value: "DURATION",
        default: "20us",
        example: "50us",
        help: "CPU time per timer expiry.",
        editor: true,
        read: |v, t| {
            if let Workload::Timer { run_ns, .. } = &mut t.workload {
                *run_ns = v.dur(1)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Timer { run_ns, .. } => unless(*run_ns, DEFAULT_TIMER_RUN, fmt_duration),
            _ => None,
        },
    },
    TaskKey {
        name: "run",
        kinds: PERIODIC,
        value: "DURATION",
        default: "required",
        example: "8ms",
        help: "CPU time per activation (rt-app's run event).",
        editor: true,
        read: |v, t| {
            if let Workload::Periodic { run_ns, .. } = &mut t.workload {
                *run_ns = v.dur(1)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Periodic { run_ns, .. } => Some(fmt_duration(*run_ns)),
            _ => None,
        },
    },
    TaskKey {
        name: "sleep",
        kinds: PERIODIC,
        value: "DURATION",
        default: "0 with period, else required",
        example: "17777us",
        help: "Relative sleep after each run (rt-app's sleep event).",
        editor: true,
        read: |v, t| {
            if let Workload::Periodic { sleep_ns, .. } = &mut t.workload {
                *sleep_ns = v.dur(0)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Periodic {
                sleep_ns,
                period_ns,
                ..
            } => (period_ns.is_none() || *sleep_ns != 0).then(|| fmt_duration(*sleep_ns)),
            _ => None,
        },
    },
    TaskKey {
        name: "period",
        kinds: PERIODIC,
        value: "DURATION",
        default: "none",
        example: "10ms",
        help: "An absolute period instead of a relative sleep (rt-app's timer event).",
        editor: true,
        read: |v, t| {
            if let Workload::Periodic { period_ns, .. } = &mut t.workload {
                *period_ns = Some(v.dur(1)?);
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Periodic { period_ns, .. } => period_ns.map(fmt_duration),
            _ => None,
        },
    },
    TaskKey {
        name: "groups",
        kinds: HACKBENCH,
        value: "1-256",
        default: "1",
        example: "4",
        help: "hackbench -g: groups of senders and receivers.",
        editor: false,
        read: |v, t| {
            if let Workload::Hackbench { groups, .. } = &mut t.workload {
                *groups = v.num(1, 256)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Hackbench { groups, .. } => {
                unless(*groups, DEFAULT_HB_GROUPS, |g| g.to_string())
            }
            _ => None,
        },
    },
    TaskKey {
        name: "fds",
        kinds: HACKBENCH,
        value: "1-256",
        default: "20",
        example: "4",
        help: "hackbench -f: senders and receivers per group.",
        editor: false,
        read: |v, t| {
            if let Workload::Hackbench { fds, .. } = &mut t.workload {
                *fds = v.num(1, 256)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Hackbench { fds, .. } => unless(*fds, DEFAULT_HB_FDS, |f| f.to_string()),
            _ => None,
        },
    },
    TaskKey {
        name: "mode",
        kinds: HACKBENCH,
        value: "thread|process",
        default: "process",
        example: "thread",
        help: "hackbench -T: threads instead of processes.",
        editor: false,
        read: |v, t| {
            if let Workload::Hackbench { threads, .. } = &mut t.workload {
                *threads = v.is("thread", "process")?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Hackbench { threads: true, .. } => Some("thread".to_string()),
            _ => None,
        },
    },
    TaskKey {
        name: "ipc",
        kinds: HACKBENCH,
        value: "pipe|socket",
        default: "socket",
        example: "pipe",
        help: "hackbench -p: pipes instead of UNIX sockets (also sets pipe_msgs' default).",
        editor: false,
        read: |v, t| {
            if let Workload::Hackbench {
                pipe, pipe_msgs, ..
            } = &mut t.workload
            {
                *pipe = v.is("pipe", "socket")?;
                // pipe_msgs comes later in the table and may override.
                *pipe_msgs = default_hb_msgs(*pipe);
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Hackbench { pipe: true, .. } => Some("pipe".to_string()),
            _ => None,
        },
    },
    TaskKey {
        name: "loops",
        kinds: HACKBENCH,
        value: "0-1000000000",
        default: "0 (until the end)",
        example: "1000",
        help: "hackbench -l: messages each sender sends; 0 runs to the end.",
        editor: false,
        read: |v, t| {
            if let Workload::Hackbench { loops, .. } = &mut t.workload {
                *loops = uint_val(v.line, &v.kv, 0, 1_000_000_000)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Hackbench { loops, .. } => unless(*loops, 0, |l| l.to_string()),
            _ => None,
        },
    },
    TaskKey {
        name: "send",
        kinds: HACKBENCH,
        value: "DURATION",
        default: "2us",
        example: "3us",
        help: "CPU time to send one message.",
        editor: false,
        read: |v, t| {
            if let Workload::Hackbench { send_ns, .. } = &mut t.workload {
                *send_ns = v.dur(1)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Hackbench { send_ns, .. } => {
                unless(*send_ns, DEFAULT_HB_MSG_NS, fmt_duration)
            }
            _ => None,
        },
    },
    TaskKey {
        name: "recv",
        kinds: HACKBENCH,
        value: "DURATION",
        default: "2us",
        example: "3us",
        help: "CPU time to receive one message.",
        editor: false,
        read: |v, t| {
            if let Workload::Hackbench { recv_ns, .. } = &mut t.workload {
                *recv_ns = v.dur(1)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Hackbench { recv_ns, .. } => {
                unless(*recv_ns, DEFAULT_HB_MSG_NS, fmt_duration)
            }
            _ => None,
        },
    },
    TaskKey {
        name: "pipe_msgs",
        kinds: HACKBENCH,
        value: "1-1000000",
        default: "655 with ipc=pipe, else 277",
        example: "100",
        help: "Messages a channel holds before a sender blocks.",
        editor: false,
        read: |v, t| {
            if let Workload::Hackbench { pipe_msgs, .. } = &mut t.workload {
                *pipe_msgs = v.num(1, 1_000_000)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Hackbench {
                pipe_msgs, pipe, ..
            } => unless(*pipe_msgs, default_hb_msgs(*pipe), |m| m.to_string()),
            _ => None,
        },
    },
    TaskKey {
        name: "messages",
        kinds: SCHBENCH,
        value: "1-256",
        default: "1",
        example: "2",
        help: "schbench -m: message threads.",
        editor: false,
        read: |v, t| {
            if let Workload::Schbench {
                message_threads, ..
            } = &mut t.workload
            {
                *message_threads = v.num(1, 256)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Schbench {
                message_threads, ..
            } => unless(*message_threads, DEFAULT_SB_MESSAGES, |m| m.to_string()),
            _ => None,
        },
    },
    TaskKey {
        name: "workers",
        kinds: SCHBENCH,
        value: "1-1024",
        default: "4",
        example: "8",
        help: "schbench -t: workers per message thread.",
        editor: false,
        read: |v, t| {
            if let Workload::Schbench { workers, .. } = &mut t.workload {
                *workers = v.num(1, 1024)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Schbench { workers, .. } => {
                unless(*workers, DEFAULT_SB_WORKERS, |w| w.to_string())
            }
            _ => None,
        },
    },
    TaskKey {
        name: "request",
        kinds: SCHBENCH,
        value: "DURATION",
        default: "100us",
        example: "200us",
        help: "CPU time a worker spends on one request.",
        editor: false,
        read: |v, t| {
            if let Workload::Schbench { request_ns, .. } = &mut t.workload {
                *request_ns = v.dur(1)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Schbench { request_ns, .. } => {
                unless(*request_ns, DEFAULT_SB_REQUEST, fmt_duration)
            }
            _ => None,
        },
    },
    TaskKey {
        name: "think",
        kinds: SCHBENCH,
        value: "DURATION",
        default: "1ms",
        example: "2ms",
        help: "How long a message thread sleeps between fan-outs.",
        editor: false,
        read: |v, t| {
            if let Workload::Schbench { sleep_ns, .. } = &mut t.workload {
                *sleep_ns = v.dur(0)?;
            }
            Ok(())
        },
        print: |t| match &t.workload {
            Workload::Schbench { sleep_ns, .. } => {
                unless(*sleep_ns, DEFAULT_SB_THINK, fmt_duration)
            }
            _ => None,
        },
    },
    TaskKey {
        name: "nice",
        kinds: ALL,
        value: "-20-19",
        default: "0",
        example: "-5",
        help: "The nice value; it sets the weight (sched_prio_to_weight).",
        editor: true,
        read: |v, t| {
            t.nice = match parse_int(v.kv.val) {
                Some(n) if (-20..=19).contains(&n) => i32::try_from(n).unwrap_or(0),
                _ => {
                    return Err(v.bad(
                        format!("expected a nice value, found {}", quote(v.kv.val)),
                        "nice is an integer from -20 to 19",
                    ))
                }
            };
            Ok(())
        },
        print: |t| unless(t.nice, 0, |n| n.to_string()),
    },
    TaskKey {
        name: "policy",
        kinds: ALL,
        value: "normal|batch|idle",
        default: "normal",
        example: "batch",
        help: "SCHED_NORMAL, SCHED_BATCH or SCHED_IDLE.",
        editor: true,
        read: |v, t| {
            t.policy = match choice_val(v.line, &v.kv, &["normal", "batch", "idle"])? {
                "batch" => Policy::Batch,
                "idle" => Policy::Idle,
                _ => Policy::Normal,
            };
            Ok(())
        },
        print: |t| unless(t.policy, Policy::Normal, |p| p.name().to_string()),
    },
    TaskKey {
        name: "slice",
        kinds: ALL,
        value: "DURATION",
        default: "the base slice",
        example: "2ms",
        help: "A custom slice, as sched_setattr's sched_runtime sets it.",
        editor: true,
        read: |v, t| {
            t.slice_ns = Some(v.dur(1)?);
            Ok(())
        },
        print: |t| t.slice_ns.map(fmt_duration),
    },
    TaskKey {
        name: "cpus",
        kinds: ALL,
        value: "CPU list",
        default: "every CPU",
        example: "0-3,6",
        help: "The affinity (sched_setaffinity); one CPU pins.",
        editor: false,
        read: |v, t| {
            t.cpus = Some(cpus_val(v.line, &v.kv)?);
            Ok(())
        },
        print: |t| t.cpus.as_deref().map(fmt_cpus),
    },
    TaskKey {
        name: "group",
        kinds: ALL,
        value: "group path",
        default: "the root group",
        example: "/test-B",
        help: "The task group (cgroup); declare it with a group line.",
        editor: true,
        read: |v, t| {
            t.group = Some(v.kv.val.to_string());
            Ok(())
        },
        print: |t| t.group.clone(),
    },
    TaskKey {
        name: "slack",
        kinds: ALL,
        value: "DURATION",
        default: "50us (0 for a timer)",
        example: "0ns",
        help: "timer_slack_ns: how late a sleep may end.",
        editor: false,
        read: |v, t| {
            t.slack_ns = Some(v.dur(0)?);
            Ok(())
        },
        print: |t| t.slack_ns.map(fmt_duration),
    },
    TaskKey {
        name: "start",
        kinds: ALL,
        value: "DURATION",
        default: "0",
        example: "1s",
        help: "When the task first starts; the seed adds an offset within one period.",
        editor: false,
        read: |v, t| {
            t.start_ns = v.dur(0)?;
            Ok(())
        },
        print: |t| unless(t.start_ns, 0, fmt_duration),
    },
    TaskKey {
        name: "kernel",
        kinds: ALL,
        value: "0%-100%",
        default: "the workload's",
        example: "30%",
        help: "Share of run time spent in the kernel.",
        editor: false,
        read: |v, t| {
            let digits = v.kv.val.strip_suffix('%').unwrap_or(v.kv.val);
            t.kernel_pct = match parse_int(digits) {
                Some(n) if (0..=100).contains(&n) => Some(n as u32),
                _ => {
                    return Err(v.bad(
                        format!("expected a percentage, found {}", quote(v.kv.val)),
                        "kernel is the share of run time spent in the kernel, 0% to 100%",
                    ))
                }
            };
            Ok(())
        },
        print: |t| t.kernel_pct.map(|p| format!("{p}%")),
    },
    TaskKey {
        name: "ksection",
        kinds: ALL,
        value: "DURATION",
        default: "the workload's",
        example: "100us",
        help: "Longest non-preemptible kernel section.",
        editor: false,
        read: |v, t| {
            t.ksection_ns = Some(v.dur(0)?);
            Ok(())
        },
        print: |t| t.ksection_ns.map(fmt_duration),
    },
];

/// The keys of `kind`, in canonical order.
pub fn keys_for(kind: &str) -> impl Iterator<Item = &'static TaskKey> + '_ {
    table().iter().filter(move |k| k.kinds.contains(&kind))
}

/// The table in use: [`TASK_KEYS`], or in a unit test that asks for it,
/// the table plus a test-only key.
pub(super) fn table() -> &'static [TaskKey] {
    #[cfg(test)]
    if super::task_keys_tests::test_key_on() {
        return &super::task_keys_tests::WITH_TEST_KEY;
    }
    TASK_KEYS
}

/// The key named `name` of `kind`.
pub fn key_of(kind: &str, name: &str) -> Option<&'static TaskKey> {
    keys_for(kind).find(|k| k.name == name)
}

/// `spec`'s keys as the canonical line has them: `(key, value)` pairs,
/// `kind` first, defaults left out.
pub fn task_kvs(spec: &TaskSpec) -> Vec<(&'static str, String)> {
    keys_for(spec.workload.kind())
        .filter_map(|k| Some((k.name, k.value_of(spec)?)))
        .collect()
}

/// A kind's workload with every default; required keys are zero until
/// read.
fn default_workload(kind: &str) -> Workload {
    match kind {
        "timer" => Workload::Timer {
            period_ns: 0,
            run_ns: DEFAULT_TIMER_RUN,
        },
        "periodic" => Workload::Periodic {
            run_ns: 0,
            sleep_ns: 0,
            period_ns: None,
        },
        "hackbench" => Workload::Hackbench {
            groups: DEFAULT_HB_GROUPS,
            fds: DEFAULT_HB_FDS,
            threads: false,
            pipe: false,
            loops: 0,
            send_ns: DEFAULT_HB_MSG_NS,
            recv_ns: DEFAULT_HB_MSG_NS,
            pipe_msgs: default_hb_msgs(false),
        },
        "schbench" => Workload::Schbench {
            message_threads: DEFAULT_SB_MESSAGES,
            workers: DEFAULT_SB_WORKERS,
            request_ns: DEFAULT_SB_REQUEST,
            sleep_ns: DEFAULT_SB_THINK,
        },
        _ => Workload::Hog,
    }
}

/// The task `name` of `kind` (a checked kind) from its keys, each read by
/// its table entry in table order; the keys are known to be valid for
/// the kind and given once.
pub(super) fn read_task(
    line: usize,
    name: &Tok<'_>,
    kind: &str,
    kvs: &[Kv<'_>],
) -> Result<TaskSpec, ParseError> {
    let mut spec = TaskSpec::new(name.s, default_workload(kind));
    for key in keys_for(kind) {
        match kvs.iter().find(|kv| kv.key == key.name) {
            Some(kv) => (key.read)(&Val { line, kv: *kv }, &mut spec)?,
            None if key.required() => {
                return Err(ParseError::new(
                    line,
                    name.col,
                    format!("{kind} task {} needs `{}`", quote(name.s), key.name),
                    format!(
                        "add {k}={v}, e.g. {k}={e}",
                        k = key.name,
                        v = key.value,
                        e = key.example
                    ),
                ))
            }
            None => {}
        }
    }
    let given = |k: &str| kvs.iter().any(|kv| kv.key == k);
    if kind == "periodic" && !given("sleep") && !given("period") {
        return Err(ParseError::new(
            line,
            name.col,
            format!("periodic task {} needs `sleep` or `period`", quote(name.s)),
            "add sleep=DURATION (relative) or period=DURATION (absolute)",
        ));
    }
    Ok(spec)
}

/// Reads `key`'s `kv` into a copy of `spec` (`--set task.NAME.KEY`).
pub(super) fn set_key(
    key: &TaskKey,
    line: usize,
    kv: Kv<'_>,
    spec: &TaskSpec,
) -> Result<TaskSpec, ParseError> {
    let mut out = spec.clone();
    (key.read)(&Val { line, kv }, &mut out)?;
    Ok(out)
}

/// The task-key half of `docs/scenario-keys.md`, from the table.
pub(super) fn task_reference() -> String {
    let mut s = String::from(
        "# Task keys\n\n\
         Generated from `TASK_KEYS` (crates/eevdf-scenario/src/scenario/task_keys.rs);\n\
         `make scenario-keys` rewrites it and a unit test holds it current.\n\
         A `task` line is `task NAME kind=KIND KEY=VALUE ...`; the canonical\n\
         text prints the keys in this order and leaves defaults out.\n\
         `--set task.NAME.KEY=VALUE` sets one key of a task.\n\n\
         | key | kinds | value | default | example | what it is |\n\
         |---|---|---|---|---|---|\n",
    );
    for k in table() {
        let kinds = if k.kinds == ALL {
            "all".to_string()
        } else {
            k.kinds.join(", ")
        };
        s.push_str(&format!(
            "| `{}` | {kinds} | {} | {} | `{}={}` | {} |\n",
            k.name,
            k.value.replace('|', "\\|"),
            k.default,
            k.name,
            k.example,
            k.help
        ));
    }
    s
}
