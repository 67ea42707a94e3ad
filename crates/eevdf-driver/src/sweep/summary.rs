//! What a sweep's lines say: per combination of the non-seed axes and
//! per task name, the median and spread of a latency percentile over the
//! seeds, as a table or as chart series (the first non-seed axis on x).

use super::Line;

/// The percentiles a sweep summarises (`latency_us` keys).
pub const PERCENTILES: [&str; 7] = ["min", "mean", "p50", "p90", "p99", "p99_9", "max"];

/// One point of a series: the x value's text and number (its index when
/// the values are not all numbers or durations), and the percentile's
/// median, minimum and maximum over the seeds, µs.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub label: String,
    pub x: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub runs: usize,
}

/// A line of the chart: one combination of the other axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<Point>,
}

/// A run's percentile for `task`, µs (`None`: no such task or samples).
fn value(l: &Line, task: &str, percentile: &str) -> Option<f64> {
    let n = l.result.as_ref()?.get("by_name")?.get(task)?;
    if n.get("samples")?.as_u64()? == 0 {
        return None;
    }
    n.get("latency_us")?.get(percentile)?.as_f64()
}

/// Task names with latency samples in any run, sorted.
pub fn tasks(lines: &[Line]) -> Vec<String> {
    let mut names: Vec<String> = lines
        .iter()
        .filter_map(|l| l.result.as_ref()?.get("by_name")?.as_object())
        .flat_map(|m| m.iter())
        .filter(|(_, v)| v.get("samples").and_then(|s| s.as_u64()).unwrap_or(0) > 0)
        .map(|(k, _)| k.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The axes but the seed: what a row or a point stands for.
fn key(l: &Line) -> Key {
    l.axes
        .iter()
        .filter(|(k, _)| k != "seed")
        .cloned()
        .collect()
}

/// Median, minimum and maximum (`v` non-empty).
fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

/// Axis values of a row (the seed left out).
type Key = Vec<(String, String)>;

/// Rows in first-seen (cell) order: each key with its values over seeds.
fn groups(lines: &[Line], task: &str, percentile: &str) -> Vec<(Key, Vec<f64>)> {
    let mut out: Vec<(Key, Vec<f64>)> = Vec::new();
    for l in lines {
        let Some(v) = value(l, task, percentile) else {
            continue;
        };
        let k = key(l);
        match out.iter_mut().find(|(g, _)| *g == k) {
            Some((_, vs)) => vs.push(v),
            None => out.push((k, vec![v])),
        }
    }
    out
}

/// The summary table: a row per combination of the non-seed axes and
/// task name, with the percentile's median and range over the seeds.
pub fn summary(lines: &[Line], percentile: &str) -> String {
    let axes: Vec<String> = lines
        .first()
        .map(|l| key(l).into_iter().map(|(k, _)| k).collect())
        .unwrap_or_default();
    let mut head: Vec<String> = axes.clone();
    head.extend(["task", "runs"].map(String::from));
    head.extend([percentile, "min", "max"].map(|s| format!("{s} us")));
    let mut rows = vec![head];
    for task in tasks(lines) {
        for (k, vs) in groups(lines, &task, percentile) {
            let (median, min, max) = spread(vs.clone());
            let mut r: Vec<String> = k.into_iter().map(|(_, v)| v).collect();
            r.push(task.clone());
            r.push(vs.len().to_string());
            r.extend([median, min, max].map(|x| format!("{x:.1}")));
            rows.push(r);
        }
    }
    let cols = rows[0].len();
    let width: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&width)
            .enumerate()
            .map(|(c, (s, w))| match c + 4 > cols {
                true => format!("{s:>w$}"),
                false => format!("{s:<w$}"),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let skipped: Vec<&Line> = lines.iter().filter(|l| l.skipped.is_some()).collect();
    if !skipped.is_empty() {
        out.push_str(&format!("\n{} cells skipped:\n", skipped.len()));
        for l in skipped {
            let at: Vec<String> = l.axes.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let why = l.skipped.as_deref().unwrap_or_default();
            out.push_str(&format!("  cell {} ({}): {why}\n", l.cell, at.join(" ")));
        }
    }
    out
}

/// The x axis's unit and scale: ms or µs for durations (ms when every
/// value is at least 1 ms), none for plain numbers.
fn x_unit(labels: &[String]) -> (&'static str, f64) {
    let ns: Option<Vec<u64>> = labels
        .iter()
        .map(|l| eevdf_scenario::scenario::duration_ns(l))
        .collect();
    match ns {
        Some(ns) if ns.iter().all(|&n| n >= 1_000_000) => (" (ms)", 1e6),
        Some(_) => (" (us)", 1e3),
        None => ("", 1.0),
    }
}

/// A value on the x axis as a number: a duration in the axis's unit,
/// or a plain number.
fn number(v: &str, scale: f64) -> Option<f64> {
    eevdf_scenario::scenario::duration_ns(v)
        .map(|ns| ns as f64 / scale)
        .or_else(|| v.parse::<f64>().ok())
}

/// Chart series of `task`'s percentile: x is the first non-seed axis,
/// one series per combination of the others. `None` without such an
/// axis or samples.
pub fn series(lines: &[Line], task: &str, percentile: &str) -> Option<(String, Vec<Series>)> {
    let groups = groups(lines, task, percentile);
    let x_axis = groups.first()?.0.first()?.0.clone();
    let mut labels: Vec<String> = Vec::new();
    for (k, _) in &groups {
        if !labels.contains(&k[0].1) {
            labels.push(k[0].1.clone());
        }
    }
    let (unit, scale) = x_unit(&labels);
    let numeric = labels.iter().all(|l| number(l, scale).is_some());
    let mut out: Vec<Series> = Vec::new();
    for (k, vs) in groups {
        let label = k[1..]
            .iter()
            .map(|(a, v)| format!("{a}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let x_label = k[0].1.clone();
        let x = match numeric {
            true => number(&x_label, scale).unwrap_or(0.0),
            false => labels.iter().position(|l| *l == x_label).unwrap_or(0) as f64,
        };
        let (median, min, max) = spread(vs.clone());
        let p = Point {
            label: x_label,
            x,
            median,
            min,
            max,
            runs: vs.len(),
        };
        match out.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(p),
            None => out.push(Series {
                label,
                points: vec![p],
            }),
        }
    }
    Some((format!("{x_axis}{unit}"), out))
}
