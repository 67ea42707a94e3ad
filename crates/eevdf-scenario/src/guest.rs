//! The guest runner's report (`eevdf.guest.v1`): what `eevdf-guest`
//! measured inside a real kernel, printed as one JSON line on the guest's
//! second serial port after the measured window. The host reads it back
//! with [`GuestReport::parse`] and turns it into the simulator's
//! [`SimResult`], so every report format works on kernel runs unchanged.
//!
//! Times are nanoseconds of the guest's `CLOCK_MONOTONIC` (virtual time
//! under QEMU `-icount`), relative to the start of the measured window.

use eevdf_sim::{
    CpuResult, HackbenchResult, LatencyHist, NameResult, RoleKind, SchbenchResult, SimResult,
    TaskResult, Totals,
};
use serde::{Deserialize, Serialize};

use crate::scenario::Scenario;
use crate::ParseError;

/// The `schema` value of a [`GuestReport`].
pub const GUEST_SCHEMA: &str = "eevdf.guest.v1";
/// Line that precedes the report on the serial port.
pub const BEGIN_MARK: &str = "EEVDF-GUEST-REPORT-BEGIN";
/// Line that follows it.
pub const END_MARK: &str = "EEVDF-GUEST-REPORT-END";
/// Largest report accepted (a histogram per thread, exact values).
pub const MAX_REPORT_BYTES: usize = 64 << 20;

/// Everything one guest run measured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestReport {
    pub schema: String,
    /// Set when the guest refused the scenario or failed to set it up;
    /// nothing was measured then.
    #[serde(default)]
    pub error: Option<String>,
    /// `uname -r` and `uname -v`.
    pub uname: String,
    /// `/sys/kernel/debug/sched/features` read back after setup.
    pub features: String,
    /// The preemption model in force (the bracketed entry of
    /// `/sys/kernel/debug/sched/preempt`), `none` without dynamic preemption.
    pub preempt: String,
    /// `/sys/kernel/debug/sched/base_slice_ns` read back.
    pub base_slice_ns: u64,
    pub nr_cpus: u32,
    /// Length of the measured window.
    pub window_ns: u64,
    /// One entry per thread, in the simulator's creation order.
    pub threads: Vec<GuestThread>,
    pub cpus: Vec<GuestCpu>,
    #[serde(default)]
    pub hackbench: Vec<GuestHackbench>,
    #[serde(default)]
    pub schbench: Vec<GuestSchbench>,
    /// Things the user should know (a key the kernel cannot honour, ...).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One thread (`NAME.I`, as the simulator names it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestThread {
    pub name: String,
    /// Index of the scenario's `task` directive.
    pub directive: usize,
    /// The simulator's role names: `timer`, `periodic`, `hog`, `sender`,
    /// `receiver`, `message`, `worker`.
    pub role: String,
    /// CPU time in the window (`/proc/PID/task/TID/schedstat`).
    pub cpu_ns: u64,
    /// `se.statistics.nr_wakeups` delta (schedstats).
    pub wakeups: u64,
    /// `se.nr_migrations` delta.
    pub migrations: u64,
    /// Wakeup latencies as (ns, count), increasing; empty where the role's
    /// latency is not measured in the guest (hackbench without tracing).
    pub latency: Vec<(u64, u64)>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestCpu {
    pub cpu: u32,
    /// Non-idle time in the window (`/proc/stat`, USER_HZ resolution).
    pub busy_ns: u64,
    /// `nr_switches` delta (`/sys/kernel/debug/sched/debug`): every
    /// context switch, into idle too.
    pub switches: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestHackbench {
    pub directive: usize,
    /// Messages delivered to receivers in the window.
    pub messages: u64,
    /// When every sender and receiver finished, if they did.
    pub completion_ns: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestSchbench {
    pub directive: usize,
    pub requests: u64,
    /// Wake call to request completion, as (ns, count), increasing.
    pub request_latency: Vec<(u64, u64)>,
}

/// A histogram from (ns, count) pairs.
pub fn hist_of(buckets: &[(u64, u64)]) -> LatencyHist {
    let mut h = LatencyHist::new();
    for &(v, n) in buckets {
        h.record_n(v, n);
    }
    h
}

impl GuestReport {
    /// An empty report of this schema.
    pub fn new() -> Self {
        GuestReport {
            schema: GUEST_SCHEMA.to_string(),
            ..Default::default()
        }
    }

    /// One JSON line (no newline inside).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("plain structs with string keys always serialize")
    }

    /// Finds the report between [`BEGIN_MARK`] and [`END_MARK`] in a
    /// serial log (carriage returns ignored) and parses it.
    pub fn parse(log: &str) -> Result<GuestReport, ParseError> {
        if log.len() > MAX_REPORT_BYTES {
            return Err(ParseError::new(
                1,
                1,
                format!(
                    "guest output is {} bytes, over {MAX_REPORT_BYTES}",
                    log.len()
                ),
                "shorten the scenario's duration or its number of threads",
            ));
        }
        let mut lines = log
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
        let Some(_) = lines.by_ref().find(|(_, l)| *l == BEGIN_MARK) else {
            return Err(ParseError::new(
                1,
                1,
                "the guest printed no report",
                "the guest died before the end of the run; read the console log",
            ));
        };
        let Some((line, body)) = lines.next() else {
            return Err(ParseError::new(
                1,
                1,
                "the report is empty",
                "the guest was cut off",
            ));
        };
        if lines.next().is_none_or(|(_, l)| l != END_MARK) {
            return Err(ParseError::new(
                line + 1,
                1,
                "the report is cut off (no end mark)",
                "the guest was stopped while printing; raise the timeout",
            ));
        }
        let r: GuestReport = serde_json::from_str(body).map_err(|e| {
            ParseError::new(line, e.column().max(1), format!("bad guest report: {e}"), {
                "the guest binary and this eevdf are from different versions; rebuild both"
            })
        })?;
        if r.schema != GUEST_SCHEMA {
            return Err(ParseError::new(
                line,
                1,
                format!(
                    "guest report schema {:?}, expected {GUEST_SCHEMA}",
                    r.schema
                ),
                "rebuild the guest binary from this checkout",
            ));
        }
        Ok(r)
    }

    /// The same result structure a simulation returns, for the scenario
    /// the guest ran; names the scenario does not declare are refused.
    pub fn to_sim_result(&self, sc: &Scenario) -> Result<SimResult, String> {
        let tasks_spec = &sc.sim.tasks;
        let mut by_name: Vec<(NameResult, LatencyHist)> = tasks_spec
            .iter()
            .map(|t| {
                let n = NameResult {
                    name: t.name.clone(),
                    tasks: 0,
                    cpu_ns: 0,
                    latency: Default::default(),
                };
                (n, LatencyHist::new())
            })
            .collect();
        let mut tasks = Vec::with_capacity(self.threads.len());
        for t in &self.threads {
            let Some((n, h)) = by_name.get_mut(t.directive) else {
                return Err(format!("thread {} names directive {}", t.name, t.directive));
            };
            let hist = hist_of(&t.latency);
            n.tasks += 1;
            n.cpu_ns = n.cpu_ns.saturating_add(t.cpu_ns);
            h.merge(&hist);
            tasks.push(TaskResult {
                name: t.name.clone(),
                directive: t.directive,
                role: role_kind(&t.role)?,
                cpu_ns: t.cpu_ns,
                wakeups: t.wakeups,
                migrations: t.migrations,
                latency: hist.stats(),
            });
        }
        let by_name = by_name
            .into_iter()
            .map(|(mut n, h)| {
                n.latency = h.stats();
                n
            })
            .collect();
        let cpus: Vec<CpuResult> = self
            .cpus
            .iter()
            .map(|c| CpuResult {
                cpu: c.cpu,
                busy_ns: c.busy_ns,
                switches: c.switches,
                // Not read from the kernel: reported as 0.
                nr_running_milli: 0,
                util: 0,
                capacity: 1024,
            })
            .collect();
        let secs = self.window_ns as f64 / 1e9;
        let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let name_of = |d: usize| tasks_spec.get(d).map(|t| t.name.clone()).ok_or(d);
        let mut hackbench = Vec::new();
        for h in &self.hackbench {
            hackbench.push(HackbenchResult {
                name: name_of(h.directive).map_err(|d| format!("hackbench directive {d}"))?,
                messages: h.messages,
                completion_ns: h.completion_ns,
                throughput: rate(h.messages),
            });
        }
        let mut schbench = Vec::new();
        for s in &self.schbench {
            schbench.push(SchbenchResult {
                name: name_of(s.directive).map_err(|d| format!("schbench directive {d}"))?,
                requests: s.requests,
                rps: rate(s.requests),
                request_latency: hist_of(&s.request_latency).stats(),
            });
        }
        let totals = Totals {
            switches: cpus.iter().map(|c| c.switches).sum(),
            migrations: tasks.iter().map(|t| t.migrations).sum(),
            wakeups: tasks.iter().map(|t| t.wakeups).sum(),
        };
        Ok(SimResult {
            sim_ns: self.window_ns,
            warmup_ns: sc.sim.warmup_ns,
            partial: None,
            events: 0,
            by_name,
            tasks,
            cpus,
            totals,
            domains: Vec::new(),
            hackbench,
            schbench,
        })
    }
}

/// The simulator's static role name for a reported one.
fn role_kind(role: &str) -> Result<RoleKind, String> {
    RoleKind::from_name(role).ok_or_else(|| format!("unknown thread role {role:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> GuestReport {
        let mut r = GuestReport::new();
        r.uname = "7.2.13 #1 SMP".into();
        r.window_ns = 2_000_000_000;
        r.nr_cpus = 1;
        r.threads = vec![
            GuestThread {
                name: "ct.0".into(),
                directive: 0,
                role: "timer".into(),
                cpu_ns: 5,
                wakeups: 3,
                migrations: 0,
                latency: vec![(60_000, 2), (61_000, 1)],
            },
            GuestThread {
                name: "hog.0".into(),
                directive: 1,
                role: "hog".into(),
                cpu_ns: 7,
                ..Default::default()
            },
        ];
        r.cpus = vec![GuestCpu {
            cpu: 0,
            busy_ns: 10,
            switches: 4,
        }];
        r
    }

    fn scenario() -> Scenario {
        Scenario::parse(
            "eevdf-scenario v1\ntask ct kind=timer period=1ms run=10us\ntask hog kind=hog\nend\n",
        )
        .unwrap()
    }

    #[test]
    fn a_report_survives_the_serial_port() {
        let r = sample();
        let log = format!(
            "[ 1.0] boot\r\n{BEGIN_MARK}\r\n{}\r\n{END_MARK}\r\n",
            r.to_json()
        );
        assert_eq!(GuestReport::parse(&log).unwrap(), r);
    }

    #[test]
    fn cut_or_missing_reports_are_typed_errors() {
        let json = sample().to_json();
        assert!(GuestReport::parse("boot\n")
            .unwrap_err()
            .message
            .contains("no report"));
        let cut = format!("{BEGIN_MARK}\n{}\n", &json[..json.len() / 2]);
        assert!(GuestReport::parse(&cut)
            .unwrap_err()
            .message
            .contains("cut off"));
        let bad = format!("{BEGIN_MARK}\n{}\n{END_MARK}\n", &json[..json.len() / 2]);
        let e = GuestReport::parse(&bad).unwrap_err();
        assert_eq!(e.line, 2);
        let other = json.replace(GUEST_SCHEMA, "eevdf.guest.v9");
        let e = GuestReport::parse(&format!("{BEGIN_MARK}\n{other}\n{END_MARK}\n")).unwrap_err();
        assert!(e.message.contains("v9"));
    }

    #[test]
    fn the_result_is_the_simulators_shape() {
        let res = sample().to_sim_result(&scenario()).unwrap();
        assert_eq!(res.tasks[0].latency.samples, 3);
        assert_eq!(res.tasks[0].latency.p50, 60_000);
        assert_eq!(res.tasks[0].latency.max, 61_000);
        assert_eq!(res.by_name[1].tasks, 1);
        assert_eq!(res.by_name[1].latency.samples, 0);
        assert_eq!((res.totals.switches, res.totals.wakeups), (4, 3));
        let mut bad = sample();
        bad.threads[1].directive = 5;
        assert!(bad.to_sim_result(&scenario()).is_err());
        bad.threads[1].directive = 1;
        bad.threads[1].role = "x".into();
        assert!(bad.to_sim_result(&scenario()).is_err());
    }
}
