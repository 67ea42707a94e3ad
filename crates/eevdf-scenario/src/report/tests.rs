//! Report formats: widths, rounding, escapes and byte-stable output.

use super::lkml::pct;
use super::*;

#[test]
fn comparison_titles_name_the_warmup_of_each_side() {
    assert_eq!(latency_title("t", 0, 0), "t");
    assert_eq!(
        latency_title("t", 1_000_000_000, 1_000_000_000),
        "t, latency after a 1s warmup"
    );
    assert_eq!(
        latency_title("t", 0, 500_000_000),
        "t, latency after a warmup of 0s (A) and 500ms (B)"
    );
    assert_eq!(ab_title(0, 0), AB_TITLE);
}
use eevdf_sim::{CpuResult, HackbenchResult, RoleKind, SchbenchResult, TaskResult, Totals};

#[test]
fn simulated_by_names_this_engine() {
    let v = crate::scenario::ENGINE_VERSION;
    assert!(
        SIMULATED_BY.contains(&format!(" engine {v}, ")),
        "{SIMULATED_BY}"
    );
}

#[allow(clippy::too_many_arguments)]
fn lat(
    samples: u64,
    sum_ns: u128,
    min: u64,
    p50: u64,
    p90: u64,
    p99: u64,
    p99_9: u64,
    max: u64,
) -> LatencyStats {
    LatencyStats {
        samples,
        sum_ns,
        min,
        p50,
        p90,
        p99,
        p99_9,
        max,
        max_at: None,
    }
}

fn name(name: &str, tasks: u32, cpu_ns: u64, latency: LatencyStats) -> NameResult {
    NameResult {
        name: name.to_string(),
        tasks,
        cpu_ns,
        latency,
    }
}

fn task(name: &str, role: RoleKind, cpu_ns: u64, latency: LatencyStats) -> TaskResult {
    TaskResult {
        name: name.to_string(),
        directive: 0,
        role,
        cpu_ns,
        wakeups: latency.samples,
        migrations: 0,
        latency,
    }
}

fn small() -> SimResult {
    let ct = lat(
        3, 6_227_511, 3012, 59_000, 6_165_499, 6_165_499, 6_165_499, 6_165_499,
    );
    SimResult {
        sim_ns: 1_000_000_000,
        warmup_ns: 0,
        partial: None,
        events: 12345,
        by_name: vec![
            name("cyclictest", 1, 2_650_400, ct),
            name("hog", 2, 998_000_500, LatencyStats::default()),
        ],
        tasks: vec![
            task("cyclictest.0", RoleKind::Timer, 2_650_400, ct),
            task("hog.0", RoleKind::Hog, 499_000_000, LatencyStats::default()),
            task("hog.1", RoleKind::Hog, 499_000_500, LatencyStats::default()),
        ],
        cpus: vec![
            CpuResult {
                cpu: 0,
                busy_ns: 1_000_000_000,
                switches: 10,
                nr_running_milli: 1500,
                util: 1024,
                capacity: 1024,
            },
            CpuResult {
                cpu: 1,
                busy_ns: 333_333_333,
                switches: 0,
                nr_running_milli: 333,
                util: 300,
                capacity: 1024,
            },
        ],
        totals: Totals {
            switches: 10,
            migrations: 1,
            wakeups: 3,
        },
        domains: vec![],
        hackbench: vec![],
        schbench: vec![],
    }
}

/// A = the baseline of formats.md §6 A, B = "this patchset".
fn vincent(b_side: bool) -> SimResult {
    let s = if b_side {
        lat(
            34420,
            34420 * 60_000,
            2_000,
            56_000,
            60_000,
            65_700,
            832_000,
            3_041_000,
        )
    } else {
        lat(
            34419,
            34419 * 59_000 + 400,
            2_000,
            56_000,
            61_400,
            65_500,
            1_104_499,
            6_164_500,
        )
    };
    SimResult {
        sim_ns: 63_000_000_000,
        warmup_ns: 0,
        partial: None,
        events: 1,
        by_name: vec![
            name("cyclictest", 1, 1_000_000, s),
            name("hog", 1, 1_000_000, LatencyStats::default()),
        ],
        tasks: vec![],
        cpus: vec![],
        totals: Totals::default(),
        domains: vec![],
        hackbench: vec![],
        schbench: vec![],
    }
}

fn assert_width(s: &str, width: usize) {
    for line in s.lines() {
        assert!(
            line.chars().count() <= width,
            "{} > {width}: {line:?}",
            line.len()
        );
        assert!(!line.contains('\t'), "tab in {line:?}");
        assert_eq!(line, line.trim_end(), "trailing space in {line:?}");
    }
}

#[test]
fn json_matches_the_schema_exactly() {
    let expected = concat!(
        r#"{"schema":"eevdf.result.v1","engine":"0.12","scenario":"cpus=2\ntask=x \"q\"","#,
        r#""sim_ns":1000000000,"events":12345,"by_name":{"#,
        r#""cyclictest":{"tasks":1,"samples":3,"cpu_ms":2.65,"latency_us":"#,
        r#"{"min":3.012,"mean":2075.837,"p50":59.0,"p90":6165.499,"p99":6165.499,"#,
        r#""p99_9":6165.499,"max":6165.499}},"#,
        r#""hog":{"tasks":2,"samples":0,"cpu_ms":998.001,"latency_us":"#,
        r#"{"min":0.0,"mean":0.0,"p50":0.0,"p90":0.0,"p99":0.0,"p99_9":0.0,"max":0.0}}},"#,
        r#""tasks":[{"name":"cyclictest.0","role":"timer","cpu_ms":2.65,"samples":3,"#,
        r#""wakeups":3,"migrations":0,"latency_us":{"min":3.012,"mean":2075.837,"#,
        r#""p50":59.0,"p90":6165.499,"p99":6165.499,"p99_9":6165.499,"max":6165.499}},"#,
        r#"{"name":"hog.0","role":"hog","cpu_ms":499.0,"samples":0,"wakeups":0,"#,
        r#""migrations":0,"latency_us":{"min":0.0,"mean":0.0,"p50":0.0,"p90":0.0,"#,
        r#""p99":0.0,"p99_9":0.0,"max":0.0}},"#,
        r#"{"name":"hog.1","role":"hog","cpu_ms":499.001,"samples":0,"wakeups":0,"#,
        r#""migrations":0,"latency_us":{"min":0.0,"mean":0.0,"p50":0.0,"p90":0.0,"#,
        r#""p99":0.0,"p99_9":0.0,"max":0.0}}],"#,
        r#""cpus":[{"cpu":0,"busy_ms":1000.0,"switches":10,"nr_running_avg":1.5,"util":1024,"capacity":1024},"#,
        r#"{"cpu":1,"busy_ms":333.333,"switches":0,"nr_running_avg":0.333,"util":300,"capacity":1024}],"#,
        r#""totals":{"switches":10,"migrations":1,"wakeups":3}}"#,
        "\n"
    );
    let r = small();
    let got = json("cpus=2\ntask=x \"q\"", &r);
    assert_eq!(got, expected);
    assert_eq!(got, json("cpus=2\ntask=x \"q\"", &r.clone()));
    let v: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert_eq!(v["by_name"]["cyclictest"]["latency_us"]["p99_9"], 6165.499);
    assert_eq!(v["scenario"], "cpus=2\ntask=x \"q\"");
}

#[test]
fn json_workload_sections_follow_totals() {
    let mut r = small();
    r.hackbench = vec![
        HackbenchResult {
            name: "hb".into(),
            messages: 4000,
            completion_ns: Some(12_345_678_901),
            throughput: 324.000_123_4,
        },
        HackbenchResult {
            name: "hb2".into(),
            messages: 7,
            completion_ns: None,
            throughput: 7.0,
        },
    ];
    r.schbench = vec![SchbenchResult {
        name: "sb".into(),
        requests: 10,
        rps: f64::NAN,
        request_latency: lat(2, 3001, 1000, 1000, 2001, 2001, 2001, 2001),
    }];
    let got = json("", &r);
    let tail = concat!(
        r#""totals":{"switches":10,"migrations":1,"wakeups":3},"#,
        r#""hackbench":[{"name":"hb","messages":4000,"completion_s":12.345679,"#,
        r#""throughput":324.0},"#,
        r#"{"name":"hb2","messages":7,"completion_s":null,"throughput":7.0}],"#,
        r#""schbench":[{"name":"sb","requests":10,"rps":null,"request_latency_us":"#,
        r#"{"min":1.0,"mean":1.501,"p50":1.0,"p90":2.001,"p99":2.001,"p99_9":2.001,"#,
        r#""max":2.001}}]}"#,
        "\n"
    );
    assert!(got.ends_with(tail), "{got}");
    serde_json::from_str::<serde_json::Value>(&got).unwrap();
}

/// Keys of a JSON object in document order (serde_json's own map sorts).
struct Keys(Vec<String>);

impl<'de> serde::Deserialize<'de> for Keys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some((k, _)) = m.next_entry::<String, serde::de::IgnoredAny>()? {
                    keys.push(k);
                }
                Ok(Keys(keys))
            }
        }
        d.deserialize_map(V)
    }
}

#[test]
fn json_keys_come_in_schema_order() {
    let mut r = small();
    r.by_name.reverse();
    r.schbench = vec![SchbenchResult {
        name: "sb".into(),
        requests: 0,
        rps: 0.0,
        request_latency: LatencyStats::default(),
    }];
    let got = json("x", &r);
    let top: Keys = serde_json::from_str(&got).unwrap();
    let want = [
        "schema", "engine", "scenario", "sim_ns", "events", "by_name", "tasks", "cpus", "totals",
        "schbench",
    ];
    assert_eq!(top.0, want);
    // serde_json::Value sorts keys, so read by_name from the text itself.
    let start = got.find(r#""by_name":"#).unwrap() + r#""by_name":"#.len();
    let mut de = serde_json::Deserializer::from_str(&got[start..]);
    let names = <Keys as serde::Deserialize>::deserialize(&mut de).unwrap();
    assert_eq!(names.0, ["hog", "cyclictest"]);
    let mut de = serde_json::Deserializer::from_str(&got[got.find(r#"{"tasks":2"#).unwrap()..]);
    let entry = <Keys as serde::Deserialize>::deserialize(&mut de).unwrap();
    assert_eq!(entry.0, ["tasks", "samples", "cpu_ms", "latency_us"]);
    let i = got.find(r#""latency_us":"#).unwrap() + r#""latency_us":"#.len();
    let mut de = serde_json::Deserializer::from_str(&got[i..]);
    let l = <Keys as serde::Deserialize>::deserialize(&mut de).unwrap();
    assert_eq!(l.0, ["min", "mean", "p50", "p90", "p99", "p99_9", "max"]);
}

#[test]
fn lkml_is_vincents_pipe_table() {
    let expected = "\
cyclictest latency (us)
                   tip/sched/core|
Total Samples              34419 |
Average                       59 |
Median (P50)                  56 |
90th Percentile               61 |
99th Percentile               66 |
99.9th Percentile           1104 |
Maximum                     6165 |
";
    let got = lkml(&vincent(false), "tip/sched/core");
    assert_eq!(got, expected);
    assert_width(&got, MAIL_WIDTH);
    assert_eq!(
        lkml(&small(), "x").lines().next(),
        Some("cyclictest latency (us)")
    );
    let mut none = small();
    none.by_name[0].latency = LatencyStats::default();
    assert_eq!(lkml(&none, "x"), "no latency samples\n");
}

/// formats.md's block, under the line that says how the change is
/// signed (issue 16: every A/B table states it).
#[test]
fn compare_matches_formats_md() {
    let expected = "\
scheduling latency (us) for cyclictest and rt-app
change in %: + is better, - is worse (latency: lower; samples: more)

cyclictest latency (us)
                   tip/sched/core| this patchset
Total Samples              34419 | 34420 (  0 %)
Average                       59 |    60 (- 2 %)
Median (P50)                  56 |    56 (  0 %)
90th Percentile               61 |    60 (+ 2 %)
99th Percentile               66 |    66 (  0 %)
99.9th Percentile           1104 |   832 (+25 %)
Maximum                     6165 |  3041 (+51 %)
";
    let got = compare(
        &vincent(false),
        "tip/sched/core",
        &vincent(true),
        "this patchset",
        "scheduling latency (us) for cyclictest and rt-app",
    );
    assert_eq!(got, expected);
    assert_width(&got, MAIL_WIDTH);
}

#[test]
fn compare_widens_the_percent_for_minus_621() {
    let a = vincent(false);
    let mut b = vincent(false);
    b.by_name[0].latency.max = 44_450_000; // 6165 -> 44450: -621.006 %
    let got = compare(&a, "base", &b, "new", "");
    // Short labels: the columns are as wide as the values.
    let expected = "\
change in %: + is better, - is worse (latency: lower; samples: more)

cyclictest latency (us)
                    base|            new
Total Samples     34419 | 34419 (   0 %)
Average              59 |    59 (   0 %)
Median (P50)         56 |    56 (   0 %)
90th Percentile      61 |    61 (   0 %)
99th Percentile      66 |    66 (   0 %)
99.9th Percentile  1104 |  1104 (   0 %)
Maximum            6165 | 44450 (-621 %)
";
    assert_eq!(got, expected);
    assert_width(&got, MAIL_WIDTH);
}

#[test]
fn percent_signs_and_rounding() {
    assert_eq!(pct(66, 66, false), (' ', "0".into()));
    assert_eq!(pct(1104, 832, false), ('+', "25".into()));
    assert_eq!(pct(6165, 3041, false), ('+', "51".into()));
    assert_eq!(pct(100, 721, false), ('-', "621".into()));
    assert_eq!(pct(200, 201, false), ('-', "1".into())); // -0.5 -> -1
    assert_eq!(pct(300, 301, false), (' ', "0".into())); // -0.33 -> 0
    assert_eq!(pct(200, 199, false), ('+', "1".into()));
    assert_eq!(pct(1000, 1005, false), ('-', "1".into())); // -0.5 -> -1
    assert_eq!(pct(100, 110, true), ('+', "10".into()));
    assert_eq!(pct(0, 5, false), ('-', "inf".into()));
    assert_eq!(pct(1, 1_000_000, false), ('-', ">9999".into()));
}

#[test]
fn compare_fits_72_columns_whatever_the_labels() {
    let mut a = vincent(false);
    let mut b = vincent(true);
    a.by_name[0].latency.max = u64::MAX;
    b.by_name[0].latency.max = 1;
    b.by_name[0].latency.samples = u64::MAX;
    b.by_name.push(name(
        "only-in-b",
        1,
        0,
        lat(1, 5000, 5000, 5000, 5000, 5000, 5000, 5000),
    ));
    let long = "a-very-long-kernel-name-tip-sched-core-2026-06-01-with-patches";
    let title = "word ".repeat(40) + &"x".repeat(100);
    let got = compare(&a, long, &b, "tab\there", &title);
    assert_width(&got, MAIL_WIDTH);
    assert!(got.contains(" tab here\n"), "{got}");
    let got = compare(&a, long, &b, long, &title);
    assert_width(&got, MAIL_WIDTH);
    assert!(got.contains("only-in-b latency (us)"), "{got}");
    let only_b: Vec<&str> = got
        .lines()
        .filter(|l| l.starts_with("Maximum"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .map(|l| if l == "Maximum - | 5" { "ok" } else { "other" })
        .collect();
    assert_eq!(only_b, ["other", "ok"], "{got}");
    let got = lkml(&a, long);
    assert_width(&got, MAIL_WIDTH);
}

#[test]
fn cyclictest_block_layout() {
    let threads = vec![
        vec![(1999, 2), (0, 1), (3500, 4), (500, 1), (7, 0)],
        vec![(10_000, 3), (2_100, 1)],
    ];
    let expected = "\
# Histogram
000000 000002\t000000
000001 000002\t000000
000002 000000\t000001
000003 000004\t000000
# Total: 000000008 000000001
# Min Latencies: 00000 00002
# Avg Latencies: 00001 00008
# Max Latencies: 00003 00010
# Histogram Overflows: 00000 00003
# Histogram Overflow at cycle number:
# Thread 0:
# Thread 1: # 00003 others

";
    assert_eq!(cyclictest(&threads, 4), expected);
    let one = cyclictest(&[vec![(56_999, 4211), (3_000, 1), (2_273_000, 1)]], 57);
    assert!(
        one.contains("\n000056 004211\n# Total: 000004212\n"),
        "{one}"
    );
    assert!(one.ends_with(
        "# Total: 000004212\n# Min Latencies: 00003\n# Avg Latencies: 00056\n\
             # Max Latencies: 02273\n# Histogram Overflows: 00001\n\
             # Histogram Overflow at cycle number:\n# Thread 0: # 00001 others\n\n"
    ));
    assert_eq!(one.lines().count(), 1 + 57 + 7 + 1);
    let empty = cyclictest(&[vec![]], 1);
    assert!(empty.contains("# Min Latencies: 1000000\n# Avg Latencies: 00000\n"));
}

#[test]
fn schbench_block_layout() {
    let s = lat(150_000, 0, 1_000, 7_900, 20_000, 90_000, 330_999, 3_195_000);
    let expected = "\
Wakeup Latencies percentiles (usec) runtime 30 (s) (150000 total samples)
\t  50.0th: 7          (45000 samples)
\t  90.0th: 20         (60000 samples)
\t* 99.0th: 90         (13500 samples)
\t  99.9th: 330        (1350 samples)
\t  min=1, max=3195
";
    let got = schbench_block("Wakeup Latencies", &s, 30);
    assert_eq!(got, expected);
    // The line of formats.md §3, byte for byte but for the count.
    assert!(got.contains("\t  50.0th: 7          (45"));
    let small = lat(3, 0, 1_000, 1_000, 3_000, 3_000, 3_000, 3_000);
    let got = schbench_block("Request Latencies", &small, 1);
    // ranks: 20th 1, 50th 2, 90th 3, 99th 3, 99.9th 3.
    assert!(got.contains("50.0th: 1          (1 samples)\n"), "{got}");
    assert!(got.contains("90.0th: 3          (1 samples)\n"), "{got}");
    assert!(got.contains("99.0th: 3          (0 samples)\n"), "{got}");
    assert_eq!(
        schbench_block("Wakeup Latencies", &LatencyStats::default(), 30),
        "\t  min=0, max=0\n"
    );
}

#[test]
fn text_summary() {
    let mut r = small();
    r.hackbench = vec![HackbenchResult {
        name: "hb".into(),
        messages: 4000,
        completion_ns: None,
        throughput: 4000.0,
    }];
    r.schbench = vec![SchbenchResult {
        name: "sb".into(),
        requests: 10,
        rps: 10.5,
        request_latency: lat(2, 3001, 1000, 1000, 2001, 2001, 2001, 2001),
    }];
    let expected = "\
eevdf: simulated 1.000000 s, 12345 events

NAME        tasks  samples   cpu ms
cyclictest      1        3    2.650
hog             2        0  998.001

latency us    min     p50       p90       p99     p99.9       max  max at s
cyclictest  3.012  59.000  6165.499  6165.499  6165.499  6165.499         -
hog             -       -         -         -         -         -         -

CPU   busy ms  busy %  switches
0    1000.000   100.0        10
1     333.333    33.3         0

totals
  switches    10
  migrations  1
  wakeups     3

hackbench  messages  time s     msg/s
hb             4000       -  4000.000

schbench  requests     rps
sb              10  10.500

request us    min    p50    p90    p99  p99.9    max
sb          1.000  1.000  2.001  2.001  2.001  2.001
";
    let got = text(&r);
    assert_width(&got, TEXT_WIDTH);
    assert_eq!(got, expected);
}

#[test]
fn text_fits_80_columns_with_extreme_values() {
    let mut r = small();
    let huge = lat(
        u64::MAX,
        u128::MAX / 2,
        u64::MAX,
        u64::MAX,
        u64::MAX,
        u64::MAX,
        u64::MAX,
        u64::MAX,
    );
    r.by_name
        .push(name(&"n".repeat(200), u32::MAX, u64::MAX, huge));
    r.cpus[0].switches = u64::MAX;
    r.totals.wakeups = u64::MAX;
    r.hackbench = vec![HackbenchResult {
        name: "h".repeat(100),
        messages: u64::MAX,
        completion_ns: Some(u64::MAX),
        throughput: f64::MAX,
    }];
    r.schbench = vec![SchbenchResult {
        name: "s".repeat(100),
        requests: u64::MAX,
        rps: f64::INFINITY,
        request_latency: huge,
    }];
    let got = text(&r);
    assert_width(&got, TEXT_WIDTH);
    assert!(got.contains("nnnnn~"), "{got}");
}
