//! Blocks in the tools' own output formats: cyclictest and schbench.

use super::*;

/// `--format cyclictest`: cyclictest's `-h N -q` block (formats.md §2)
/// for the given threads, each a list of `(latency ns, count)` pairs (any
/// order, repeats add up). Buckets are whole µs, truncated; `buckets`
/// rows `%06d` with one `%06lu` column per thread, tab separated. `Total`
/// counts in-range samples; Min/Avg/Max cover all samples (Avg truncated;
/// a thread without samples shows cyclictest's initial Min of 1000000).
/// Cycle numbers of overflows are not known, so all overflows are listed
/// as `# NNNNN others`. Ends with cyclictest's blank line.
pub fn cyclictest(threads: &[Vec<(u64, u64)>], buckets: usize) -> String {
    struct Thread {
        hist: Vec<u64>,
        total: u64,
        cycles: u64,
        sum_us: u128,
        min_us: u64,
        max_us: u64,
        overflows: u64,
    }
    let stats: Vec<Thread> = threads
        .iter()
        .map(|pairs| {
            let mut t = Thread {
                hist: vec![0; buckets],
                total: 0,
                cycles: 0,
                sum_us: 0,
                min_us: 1_000_000,
                max_us: 0,
                overflows: 0,
            };
            for &(ns, count) in pairs {
                if count == 0 {
                    continue;
                }
                let us = ns / 1000;
                if t.cycles == 0 || us < t.min_us {
                    t.min_us = us;
                }
                t.max_us = t.max_us.max(us);
                t.cycles += count;
                t.sum_us += u128::from(us) * u128::from(count);
                match usize::try_from(us).ok().filter(|&i| i < buckets) {
                    Some(i) => {
                        t.hist[i] += count;
                        t.total += count;
                    }
                    None => t.overflows += count,
                }
            }
            t
        })
        .collect();

    let mut out = String::from("# Histogram\n");
    for i in 0..buckets {
        out.push_str(&format!("{i:06} "));
        let cells: Vec<String> = stats.iter().map(|t| format!("{:06}", t.hist[i])).collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    let mut footer = |label: &str, width: usize, f: &dyn Fn(&Thread) -> u128| {
        out.push_str(label);
        for t in &stats {
            out.push_str(&format!(" {:01$}", f(t), width));
        }
        out.push('\n');
    };
    footer("# Total:", 9, &|t| u128::from(t.total));
    footer("# Min Latencies:", 5, &|t| u128::from(t.min_us));
    footer("# Avg Latencies:", 5, &|t| {
        if t.cycles == 0 {
            0
        } else {
            t.sum_us / u128::from(t.cycles)
        }
    });
    footer("# Max Latencies:", 5, &|t| u128::from(t.max_us));
    footer("# Histogram Overflows:", 5, &|t| u128::from(t.overflows));
    out.push_str("# Histogram Overflow at cycle number:\n");
    for (i, t) in stats.iter().enumerate() {
        out.push_str(&format!("# Thread {i}:"));
        if t.overflows > 0 {
            out.push_str(&format!(" # {:05} others", t.overflows));
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

/// `--format schbench`: schbench's latency percentile block (formats.md
/// §3): `TITLE percentiles (usec) runtime R (s) (N total samples)`, rows
/// 50.0th, 90.0th, `*` 99.0th, 99.9th as `"\t%s%2.1fth: %-10u (%lu
/// samples)"`, then `\t  min=.., max=..`; values in whole µs, truncated.
/// A row's count is what its band holds by the rank rule: ceil(p·N) minus
/// the previous percentile's rank, the 50th's band starting, as in
/// schbench, after the (unprinted) 20th. Without samples only the min/max
/// line is printed, as schbench does.
pub fn schbench_block(title: &str, s: &LatencyStats, runtime_s: u64) -> String {
    let mut out = String::new();
    if s.samples > 0 {
        let n = u128::from(s.samples);
        let rank = |num: u128, den: u128| (n * num).div_ceil(den);
        out.push_str(&format!(
            "{title} percentiles (usec) runtime {runtime_s} (s) ({} total samples)\n",
            s.samples
        ));
        let rows = [
            (50.0, s.p50, rank(50, 100), rank(20, 100), false),
            (90.0, s.p90, rank(90, 100), rank(50, 100), false),
            (99.0, s.p99, rank(99, 100), rank(90, 100), true),
            (99.9, s.p99_9, rank(999, 1000), rank(99, 100), false),
        ];
        for (p, ns, hi, lo, star) in rows {
            let mark = if star { "* " } else { "  " };
            let us = (ns / 1000).to_string();
            out.push_str(&format!(
                "\t{mark}{p:.1}th: {us:<10} ({} samples)\n",
                hi - lo
            ));
        }
    }
    out.push_str(&format!("\t  min={}, max={}\n", s.min / 1000, s.max / 1000));
    out
}
