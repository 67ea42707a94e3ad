//! `--format text`: the terminal report, at most [`TEXT_WIDTH`] columns.

use super::*;

/// Renders a table: column 0 left-aligned, the others right-aligned, two
/// spaces apart. Column 0 is truncated (`~`) if the table would be wider
/// than `width`; if even that cannot fit, each row is printed as a list of
/// `header: value` lines instead.
fn table(out: &mut String, head: &[&str], rows: &[Vec<String>], width: usize) {
    let ncol = head.len();
    let mut w: Vec<usize> = head.iter().map(|h| width_of(h)).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(ncol) {
            w[i] = w[i].max(width_of(cell));
        }
    }
    let gaps = 2 * ncol.saturating_sub(1);
    let rest: usize = w.iter().skip(1).sum::<usize>() + gaps;
    const MIN_FIRST: usize = 6;
    if rest + w[0] > width {
        if rest + MIN_FIRST.min(w[0]) > width {
            // Values alone are too wide: one `header: value` per line.
            for row in rows {
                out.push_str(&fit(row.first().map_or("", |s| s), width));
                out.push('\n');
                for (h, cell) in head.iter().zip(row).skip(1) {
                    out.push_str(&fit(&format!("  {h}: {cell}"), width));
                    out.push('\n');
                }
            }
            return;
        }
        w[0] = width - rest;
    }
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut s = String::new();
        for (i, cell) in cells.enumerate().take(ncol) {
            if i == 0 {
                s.push_str(&format!("{:<1$}", fit(cell, w[0]), w[0]));
            } else {
                s.push_str(&format!("  {:>1$}", cell, w[i]));
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&mut head.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
}

/// Latency cells `min p50 p90 p99 p99.9 max` in µs with 3 decimals (`-`
/// without samples).
fn latency_cells(name: &str, s: &LatencyStats) -> Vec<String> {
    let mut row = vec![name.to_string()];
    if s.samples == 0 {
        row.extend(std::iter::repeat_n("-".to_string(), 6));
    } else {
        row.extend([s.min, s.p50, s.p90, s.p99, s.p99_9, s.max].map(us_text));
    }
    row
}

const LATENCY_HEAD: [&str; 6] = ["min", "p50", "p90", "p99", "p99.9", "max"];

fn latency_head(first: &str) -> Vec<&str> {
    let mut h = vec![first];
    h.extend(LATENCY_HEAD);
    h
}

/// `--format text`: a human-readable summary, every line ≤ [`TEXT_WIDTH`]
/// columns: a header line (simulated time, events), a table of task names
/// (tasks, samples, cpu ms), a table of their latencies (µs, 3 decimals,
/// `-` without samples), per-CPU busy time and switches, totals, and the
/// hackbench/schbench sections when present.
pub fn text(r: &SimResult) -> String {
    let mut out = String::new();
    out.push_str(&fit(
        &format!(
            "eevdf: simulated {} s, {} events{}{}",
            s_text(r.sim_ns),
            r.events,
            match r.partial {
                Some(p) => format!(" (partial: stopped at --max-events {})", p.max_events),
                None => String::new(),
            },
            warmup_phrase(r.warmup_ns)
                .map(|p| format!(", {p}"))
                .unwrap_or_default()
        ),
        TEXT_WIDTH,
    ));
    out.push_str("\n\n");

    let rows: Vec<Vec<String>> = r
        .by_name
        .iter()
        .map(|n| {
            vec![
                n.name.clone(),
                n.tasks.to_string(),
                n.latency.samples.to_string(),
                ms_text(n.cpu_ns),
            ]
        })
        .collect();
    table(
        &mut out,
        &["NAME", "tasks", "samples", "cpu ms"],
        &rows,
        TEXT_WIDTH,
    );
    out.push('\n');

    // When the worst wakeup was due, as `perf sched latency` prints it:
    // a max in the first milliseconds is start-up (see `warmup`).
    let rows: Vec<Vec<String>> = r
        .by_name
        .iter()
        .map(|n| {
            let mut row = latency_cells(&n.name, &n.latency);
            row.push(match n.latency.max_at {
                Some(at) if n.latency.samples > 0 => s_text(at),
                _ => "-".to_string(),
            });
            row
        })
        .collect();
    let mut head = latency_head("latency us");
    head.push("max at s");
    table(&mut out, &head, &rows, TEXT_WIDTH);
    out.push('\n');

    let rows: Vec<Vec<String>> = r
        .cpus
        .iter()
        .map(|c| {
            vec![
                c.cpu.to_string(),
                ms_text(c.busy_ns),
                percent_text(c.busy_ns, r.sim_ns),
                c.switches.to_string(),
            ]
        })
        .collect();
    table(
        &mut out,
        &["CPU", "busy ms", "busy %", "switches"],
        &rows,
        TEXT_WIDTH,
    );
    out.push('\n');

    out.push_str("totals\n");
    let t = &r.totals;
    for (k, v) in [
        ("switches", t.switches),
        ("migrations", t.migrations),
        ("wakeups", t.wakeups),
    ] {
        out.push_str(&format!("  {k:<10}  {v}\n"));
    }

    if !r.hackbench.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = r
            .hackbench
            .iter()
            .map(|h| {
                vec![
                    h.name.clone(),
                    h.messages.to_string(),
                    h.completion_ns.map_or("-".to_string(), s_text),
                    rate_text(h.throughput),
                ]
            })
            .collect();
        table(
            &mut out,
            &["hackbench", "messages", "time s", "msg/s"],
            &rows,
            TEXT_WIDTH,
        );
    }

    if !r.schbench.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = r
            .schbench
            .iter()
            .map(|s| vec![s.name.clone(), s.requests.to_string(), rate_text(s.rps)])
            .collect();
        table(
            &mut out,
            &["schbench", "requests", "rps"],
            &rows,
            TEXT_WIDTH,
        );
        out.push('\n');
        let rows: Vec<Vec<String>> = r
            .schbench
            .iter()
            .map(|s| latency_cells(&s.name, &s.request_latency))
            .collect();
        table(&mut out, &latency_head("request us"), &rows, TEXT_WIDTH);
    }
    out
}
