//! LKML pipe tables (formats.md §6 A): one result, or A against B.

use super::*;

const ROW_LABELS: [&str; 7] = [
    "Total Samples",
    "Average",
    "Median (P50)",
    "90th Percentile",
    "99th Percentile",
    "99.9th Percentile",
    "Maximum",
];
/// Width of the row-label column ("99.9th Percentile" plus a space).
const LABEL_W: usize = 18;
/// Room for the value columns: `LABEL_W + W + " |" + C ≤ MAIL_WIDTH`.
const VALUES_W: usize = MAIL_WIDTH - LABEL_W - 2;
/// Largest percentage shown as a number.
const PCT_CAP: u128 = 9999;

/// The seven row values in whole µs (samples as a count), or `None`
/// without samples.
fn row_values(s: Option<&LatencyStats>) -> Option<[u64; 7]> {
    let s = s.filter(|s| s.samples > 0)?;
    Some([
        s.samples,
        mean_us_round(s),
        us_round(s.p50),
        us_round(s.p90),
        us_round(s.p99),
        us_round(s.p99_9),
        us_round(s.max),
    ])
}

/// `(sign, magnitude)` of the change from `a` to `b`, `+` = better.
/// Latency rows: lower is better, pct = round((a-b)/a*100). The samples
/// row: higher is better, pct = round((b-a)/a*100). Rounded half away from
/// zero; `inf` when a = 0 < b; `>9999` above the cap.
pub(super) fn pct(a: u64, b: u64, higher_better: bool) -> (char, String) {
    let (a, b) = (i128::from(a), i128::from(b));
    let better = if higher_better { b > a } else { b < a };
    if a == 0 {
        return if b == 0 {
            (' ', "0".to_string())
        } else {
            (if better { '+' } else { '-' }, "inf".to_string())
        };
    }
    let num = ((a - b).unsigned_abs()) * 100;
    let den = a.unsigned_abs();
    let q = (num * 2 + den) / (2 * den);
    let sign = if q == 0 {
        ' '
    } else if better {
        '+'
    } else {
        '-'
    };
    let n = if q > PCT_CAP {
        format!(">{PCT_CAP}")
    } else {
        q.to_string()
    };
    (sign, n)
}

fn value_text(v: Option<&[u64; 7]>, i: usize) -> String {
    v.map_or("-".to_string(), |v| v[i].to_string())
}

/// One block: `NAME latency (us)`, the header row, seven rows.
/// `b` = the comparison column (label, values), if any.
fn pipe_block(
    name: &str,
    a_label: &str,
    a: Option<[u64; 7]>,
    b: Option<(&str, Option<[u64; 7]>)>,
) -> Vec<String> {
    const SUFFIX: &str = " latency (us)";
    let mut lines = vec![format!("{}{SUFFIX}", fit(name, MAIL_WIDTH - SUFFIX.len()))];
    let a_vals: Vec<String> = (0..7).map(|i| value_text(a.as_ref(), i)).collect();
    let w_vals = a_vals.iter().map(|s| s.len()).max().unwrap_or(1);

    let Some((b_label, b)) = b else {
        let a_label = fit(a_label, VALUES_W.max(w_vals));
        let w = w_vals.max(width_of(&a_label));
        lines.push(format!("{:>1$}|", a_label, LABEL_W + w + 1));
        for (i, label) in ROW_LABELS.iter().enumerate() {
            lines.push(format!("{label:<LABEL_W$}{:>w$} |", a_vals[i]));
        }
        return lines;
    };

    let b_vals: Vec<String> = (0..7).map(|i| value_text(b.as_ref(), i)).collect();
    let pcts: Vec<Option<(char, String)>> = (0..7)
        .map(|i| match (a, b) {
            (Some(a), Some(b)) => Some(pct(a[i], b[i], i == 0)),
            _ => None,
        })
        .collect();
    let n_w = pcts
        .iter()
        .flatten()
        .map(|(_, n)| n.len())
        .max()
        .unwrap_or(0)
        .max(2);
    let v_vals = b_vals.iter().map(|s| s.len()).max().unwrap_or(1);
    let c_vals = v_vals + n_w + 7;
    // Labels give way to values: shorten them so the lines fit.
    let b_want = (width_of(b_label) + 1).min(VALUES_W / 2);
    let a_max = w_vals.max(VALUES_W.saturating_sub(c_vals.max(b_want)));
    let a_label = fit(a_label, a_max);
    let w = w_vals.max(width_of(&a_label));
    let b_label = fit(b_label, VALUES_W.saturating_sub(w + 1).max(1));
    let c = c_vals.max(width_of(&b_label) + 1);
    let v = c - n_w - 7;

    lines.push(format!(
        "{:>aw$}|{:>c$}",
        a_label,
        format!(" {b_label}"),
        aw = LABEL_W + w + 1
    ));
    for (i, label) in ROW_LABELS.iter().enumerate() {
        let mut line = format!("{label:<LABEL_W$}{:>w$} | {:>v$}", a_vals[i], b_vals[i]);
        if let Some((sign, n)) = &pcts[i] {
            line.push_str(&format!(" ({sign}{n:>n_w$} %)"));
        }
        lines.push(line.trim_end().to_string());
    }
    lines
}

fn join_blocks(blocks: Vec<Vec<String>>) -> String {
    let mut out = String::new();
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for line in block {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `--format lkml`: Vincent's pipe-style table (formats.md §6 A) for one
/// result, headed by `column`: one block per task name with latency
/// samples, rows Total Samples, Average, Median (P50), 90th, 99th and
/// 99.9th Percentile, Maximum, in whole µs rounded half up from ns. Lines
/// ≤ [`MAIL_WIDTH`] columns, spaces only; a label too long is cut (`~`).
pub fn lkml(r: &SimResult, column: &str) -> String {
    let blocks: Vec<Vec<String>> = r
        .by_name
        .iter()
        .filter(|n| n.latency.samples > 0)
        .map(|n| pipe_block(&n.name, column, row_values(Some(&n.latency)), None))
        .collect();
    if blocks.is_empty() {
        return "no latency samples\n".to_string();
    }
    let mut out = join_blocks(blocks);
    if let Some(p) = warmup_phrase(r.warmup_ns) {
        out.push_str(&format!("({p})\n"));
    }
    out
}

/// Word-wraps `s` to `width` columns (words longer than that are split).
fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in s.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > width {
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            lines.push(word.drain(..width).collect());
        }
        let word: String = word.into_iter().collect();
        if cur.is_empty() {
            cur = word;
        } else if width_of(&cur) + 1 + width_of(&word) <= width {
            cur.push(' ');
            cur.push_str(&word);
        } else {
            lines.push(std::mem::replace(&mut cur, word));
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// How a comparison signs its change, in the words every A/B table
/// (CLI, mail, page) states it: LKML's, + for better.
pub const DELTA_CONVENTION: &str =
    "change in %: + is better, - is worse (latency: lower; samples: more)";

/// `eevdf compare`: `title` (word-wrapped), [`DELTA_CONVENTION`], a blank line, then one
/// pipe-style block per task name with samples in A or B (A's order, then
/// names only B has). Each block has the header row `a_label| b_label` and
/// rows as in [`lkml`]; each B value is followed by `(Sn %)`, S = `+` if
/// better, `-` if worse, ` ` if the rounded pct is 0, n right-aligned to
/// the block's widest (at least 2): `(  0 %)`, `(+25 %)`, `(-621 %)`.
/// Latency rows: pct = round((a-b)/a*100) over the shown whole µs; Total
/// Samples: more is better, pct = round((b-a)/a*100). A side without
/// samples for a name shows `-` and no pct. Lines ≤ [`MAIL_WIDTH`]
/// columns, spaces only.
pub fn compare(a: &SimResult, a_label: &str, b: &SimResult, b_label: &str, title: &str) -> String {
    compare_rows(&pipe_rows(a), a_label, &pipe_rows(b), b_label, title)
}

/// One name's values in a pipe table: Total Samples, Average, P50, P90,
/// P99, P99.9, Maximum (whole µs), `None` without samples.
pub type PipeRow = (String, Option<[u64; 7]>);

/// A result's [`PipeRow`]s, in its name order: what [`compare_rows`]
/// needs, small enough for the page's worker to send.
pub fn pipe_rows(r: &SimResult) -> Vec<PipeRow> {
    r.by_name
        .iter()
        .map(|n| (n.name.clone(), row_values(Some(&n.latency))))
        .collect()
}

/// The table title of an A/B run, in the CLI's and the page's mail.
pub const AB_TITLE: &str = "scheduling latency (us): A = baseline, B = scenario";

/// [`AB_TITLE`] with [`latency_title`]'s warmup note.
pub fn ab_title(a_warmup_ns: u64, b_warmup_ns: u64) -> String {
    latency_title(AB_TITLE, a_warmup_ns, b_warmup_ns)
}

/// A comparison's `title`, saying so when A or B leaves a warmup out.
pub fn latency_title(title: &str, a_warmup_ns: u64, b_warmup_ns: u64) -> String {
    if a_warmup_ns == b_warmup_ns {
        return match warmup_phrase(b_warmup_ns) {
            Some(p) => format!("{title}, {p}"),
            None => title.to_string(),
        };
    }
    let d = crate::scenario::fmt_duration;
    format!(
        "{title}, latency after a warmup of {} (A) and {} (B)",
        d(a_warmup_ns),
        d(b_warmup_ns)
    )
}

/// [`compare`] from [`pipe_rows`].
pub fn compare_rows(
    a: &[PipeRow],
    a_label: &str,
    b: &[PipeRow],
    b_label: &str,
    title: &str,
) -> String {
    let mut names: Vec<&str> = a.iter().map(|n| n.0.as_str()).collect();
    for n in b {
        if !names.contains(&n.0.as_str()) {
            names.push(&n.0);
        }
    }
    let find = |r: &[PipeRow], name: &str| -> Option<[u64; 7]> {
        r.iter().find(|n| n.0 == name).and_then(|n| n.1)
    };
    let blocks: Vec<Vec<String>> = names
        .iter()
        .filter_map(|name| {
            let (va, vb) = (find(a, name), find(b, name));
            if va.is_none() && vb.is_none() {
                return None;
            }
            Some(pipe_block(name, a_label, va, Some((b_label, vb))))
        })
        .collect();
    let mut out = String::new();
    let title = wrap(&clean(title), MAIL_WIDTH);
    for line in &title {
        out.push_str(line);
        out.push('\n');
    }
    // The page's A/B table says the same (eevdf-web results.rs).
    out.push_str(DELTA_CONVENTION);
    out.push_str("\n\n");
    if blocks.is_empty() {
        out.push_str("no latency samples\n");
    } else {
        out.push_str(&join_blocks(blocks));
    }
    out
}
