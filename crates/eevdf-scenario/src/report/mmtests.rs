//! A/B comparison in the mmtests compare-kernels style (formats.md §6 B).

use super::*;

/// `compare` in the mmtests compare-kernels style (formats.md §6 B): an
/// `Amean` row per latency percentile and task name, each column
/// `%12.2f (%7.2f%%)`, positive meaning better (lower latency). Two
/// header lines (the labels, right-aligned to the column ends).
pub fn compare_mmtests(a: &SimResult, a_label: &str, b: &SimResult, b_label: &str) -> String {
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut rows: Vec<(String, f64, f64)> = Vec::new();
    for n in &a.by_name {
        let Some(m) = b.by_name.iter().find(|x| x.name == n.name) else {
            continue;
        };
        if n.latency.samples == 0 || m.latency.samples == 0 {
            continue;
        }
        let (x, y) = (&n.latency, &m.latency);
        for (what, va, vb) in [
            ("50th", x.p50, y.p50),
            ("90th", x.p90, y.p90),
            ("99th", x.p99, y.p99),
            ("99.9th", x.p99_9, y.p99_9),
            ("max", x.max, y.max),
        ] {
            rows.push((format!("Wakeup-{what}-{}", n.name), us(va), us(vb)));
        }
    }
    if rows.is_empty() {
        return "no latency samples\n".to_string();
    }
    let pw = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    // Column: value (12) + " (" + pct (7) + "%)" = 22 chars.
    let col = 22;
    let lead = 10 + pw;
    let cut = |s: &str| s.chars().take(col).collect::<String>();
    let mut out = String::new();
    out.push_str(&format!(
        "{:lead$}{:>col$} {:>col$}\n",
        "",
        cut(a_label),
        cut(b_label)
    ));
    for (p, va, vb) in rows {
        let pct = if va == 0.0 {
            0.0
        } else {
            (va - vb) / va * 100.0
        };
        out.push_str(&format!(
            "{:<10}{:<pw$}{:12.2} ({:7.2}%){:12.2} ({:7.2}%)\n",
            "Amean", p, va, 0.0, vb, pct
        ));
    }
    out
}

#[cfg(test)]
mod mmtests_tests {
    use super::*;
    use eevdf_sim::{LatencyStats, NameResult, Totals};

    fn result(p999: u64) -> SimResult {
        let l = LatencyStats {
            samples: 10,
            sum_ns: 10,
            min: 1000,
            p50: 7_170,
            p90: 46_560,
            p99: 119_610,
            p99_9: p999,
            max: p999,
            max_at: None,
        };
        SimResult {
            sim_ns: 1,
            warmup_ns: 0,
            partial: None,
            events: 1,
            by_name: vec![NameResult {
                name: "80".into(),
                tasks: 1,
                cpu_ns: 1,
                latency: l,
            }],
            tasks: vec![],
            cpus: vec![],
            totals: Totals::default(),
            domains: vec![],
            hackbench: vec![],
            schbench: vec![],
        }
    }

    #[test]
    fn mmtests_rows_match_mels_layout() {
        let t = compare_mmtests(
            &result(3_193_780),
            "vanilla",
            &result(328_220),
            "sched-preemptnext-v5",
        );
        let row = t.lines().find(|l| l.contains("Wakeup-99.9th-80")).unwrap();
        assert_eq!(
            row,
            "Amean     Wakeup-99.9th-80     3193.78 (   0.00%)      328.22 (  89.72%)"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert!(t.lines().next().unwrap().ends_with("sched-preemptnext-v5"));
    }
}
