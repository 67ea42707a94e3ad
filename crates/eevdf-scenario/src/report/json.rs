//! `eevdf.result.v1`: the JSON result and its `source` block.

use super::*;

#[derive(Serialize)]
struct JsonLatency {
    min: f64,
    mean: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    p99_9: f64,
    max: f64,
}

impl JsonLatency {
    fn new(s: &LatencyStats) -> Self {
        if s.samples == 0 {
            return JsonLatency {
                min: 0.0,
                mean: 0.0,
                p50: 0.0,
                p90: 0.0,
                p99: 0.0,
                p99_9: 0.0,
                max: 0.0,
            };
        }
        JsonLatency {
            min: us3(s.min),
            mean: mean_ns_rounded(s) as f64 / 1000.0,
            p50: us3(s.p50),
            p90: us3(s.p90),
            p99: us3(s.p99),
            p99_9: us3(s.p99_9),
            max: us3(s.max),
        }
    }
}

#[derive(Serialize)]
struct JsonName {
    tasks: u32,
    samples: u64,
    cpu_ms: f64,
    latency_us: JsonLatency,
}

/// `by_name`: an object keyed by name, in `SimResult` order.
struct JsonByName<'a>(&'a [NameResult]);

impl Serialize for JsonByName<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for n in self.0 {
            let entry = JsonName {
                tasks: n.tasks,
                samples: n.latency.samples,
                cpu_ms: ms3(n.cpu_ns),
                latency_us: JsonLatency::new(&n.latency),
            };
            map.serialize_entry(&n.name, &entry)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct JsonTask<'a> {
    name: &'a str,
    role: &'a str,
    cpu_ms: f64,
    samples: u64,
    wakeups: u64,
    migrations: u64,
    latency_us: JsonLatency,
}

#[derive(Serialize)]
struct JsonCpu {
    cpu: u32,
    busy_ms: f64,
    switches: u64,
    nr_running_avg: f64,
    util: u64,
    capacity: u32,
}

#[derive(Serialize)]
struct JsonDomain<'a> {
    level: &'a str,
    migrations: u64,
}

#[derive(Serialize)]
struct JsonTotals {
    switches: u64,
    migrations: u64,
    wakeups: u64,
}

#[derive(Serialize)]
struct JsonHackbench<'a> {
    name: &'a str,
    messages: u64,
    completion_s: Option<f64>,
    throughput: f64,
}

#[derive(Serialize)]
struct JsonSchbench<'a> {
    name: &'a str,
    requests: u64,
    rps: f64,
    request_latency_us: JsonLatency,
}

#[derive(Serialize)]
struct JsonPartial {
    reason: &'static str,
    max_events: u64,
}

#[derive(Serialize)]
struct JsonResult<'a> {
    schema: &'static str,
    /// The engine that computed the result (the scenario's own `engine`
    /// line says which one made it).
    engine: &'static str,
    scenario: &'a str,
    sim_ns: u64,
    /// Present only with a `warmup` (added compatibly): latencies count
    /// wakeups from here on.
    #[serde(skip_serializing_if = "is_zero")]
    warmup_ns: u64,
    events: u64,
    /// Present only when the event budget stopped the run before its
    /// duration (added compatibly): `sim_ns` says how far it got.
    #[serde(skip_serializing_if = "Option::is_none")]
    partial: Option<JsonPartial>,
    by_name: JsonByName<'a>,
    tasks: Vec<JsonTask<'a>>,
    cpus: Vec<JsonCpu>,
    totals: JsonTotals,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    domains: Vec<JsonDomain<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hackbench: Vec<JsonHackbench<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    schbench: Vec<JsonSchbench<'a>>,
    /// Present only on results measured on a real kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a Source>,
}

/// Where a result was measured, when it was not simulated: the `source`
/// block of `eevdf.result.v1` (added compatibly, absent for simulations).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Source {
    /// `kernel`.
    pub kind: String,
    /// `uname -r -v` in the guest.
    pub uname: String,
    /// `/sys/kernel/debug/sched/features` read back after setup.
    pub features: String,
    /// The preemption model in force, read back.
    pub preempt: String,
    /// The kernel's `CONFIG_HZ` (`None` when its config is unknown).
    pub hz: Option<u32>,
    /// `base_slice_ns` read back.
    pub base_slice_ns: u64,
    pub cpus: u32,
    /// The kernel release (`7.2.13+deb14-cloud-amd64`).
    pub kernel: String,
    /// The Debian package and its version (empty for `--kernel PATH`).
    pub package: String,
    pub package_version: String,
    /// sha256 of the booted image.
    pub kernel_sha256: String,
    /// `qemu-system-x86_64 --version`, first line.
    pub qemu: String,
    /// `-icount shift=`.
    pub icount_shift: u32,
    /// QEMU `-seed`.
    pub seed: u64,
    /// sha256 of the guest runner binary.
    pub guest_sha256: String,
    /// What the run could not honour or should be read with care.
    pub warnings: Vec<String>,
}

/// `--format json`: one compact JSON object (schema `eevdf.result.v1`)
/// plus a trailing newline; byte-identical for identical inputs.
///
/// Counts are integers; `*_ms` are ms rounded half up to 3 decimals;
/// `latency_us` values are µs with 3 decimals (the mean rounded half up
/// to a whole ns first); `completion_s` is seconds rounded half up to 6
/// decimals, or `null` when the run did not finish; `throughput` and `rps`
/// are rounded to 3 decimals (`null` if not finite). A name without
/// samples gets a `latency_us` of zeros. `hackbench` and `schbench` appear
/// only when non-empty.
pub fn json(scenario_text: &str, r: &SimResult) -> String {
    json_with_source(scenario_text, r, None)
}

/// [`json`] of an A/B run: B's object with A's, a whole
/// `eevdf.result.v1` object of its own, as its last member `baseline`.
pub fn json_with_baseline(b_text: &str, b: &SimResult, a_text: &str, a: &SimResult) -> String {
    let outer = json(b_text, b);
    let inner = json(a_text, a);
    let outer = outer.trim_end().strip_suffix('}').unwrap_or(&outer);
    format!("{outer},\"baseline\":{}}}\n", inner.trim_end())
}

/// [`json`] with a `source` block last, for results measured on a kernel.
pub fn json_with_source(scenario_text: &str, r: &SimResult, source: Option<&Source>) -> String {
    let doc = JsonResult {
        source,
        schema: SCHEMA,
        engine: crate::scenario::ENGINE_VERSION,
        scenario: scenario_text,
        sim_ns: r.sim_ns,
        warmup_ns: r.warmup_ns,
        events: r.events,
        partial: r.partial.map(|p| JsonPartial {
            reason: "max-events",
            max_events: p.max_events,
        }),
        by_name: JsonByName(&r.by_name),
        tasks: r
            .tasks
            .iter()
            .map(|t| JsonTask {
                name: &t.name,
                role: t.role.as_str(),
                cpu_ms: ms3(t.cpu_ns),
                samples: t.latency.samples,
                wakeups: t.wakeups,
                migrations: t.migrations,
                latency_us: JsonLatency::new(&t.latency),
            })
            .collect(),
        cpus: r
            .cpus
            .iter()
            .map(|c| JsonCpu {
                cpu: c.cpu,
                busy_ms: ms3(c.busy_ns),
                switches: c.switches,
                nr_running_avg: c.nr_running_milli as f64 / 1000.0,
                util: c.util,
                capacity: c.capacity,
            })
            .collect(),
        domains: r
            .domains
            .iter()
            .map(|d| JsonDomain {
                level: &d.level,
                migrations: d.migrations,
            })
            .collect(),
        totals: JsonTotals {
            switches: r.totals.switches,
            migrations: r.totals.migrations,
            wakeups: r.totals.wakeups,
        },
        hackbench: r
            .hackbench
            .iter()
            .map(|h| JsonHackbench {
                name: &h.name,
                messages: h.messages,
                completion_s: h.completion_ns.map(s6),
                throughput: round3(h.throughput),
            })
            .collect(),
        schbench: r
            .schbench
            .iter()
            .map(|s| JsonSchbench {
                name: &s.name,
                requests: s.requests,
                rps: round3(s.rps),
                request_latency_us: JsonLatency::new(&s.request_latency),
            })
            .collect(),
    };
    let mut out =
        serde_json::to_string(&doc).expect("plain structs with string keys always serialize");
    out.push('\n');
    out
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
