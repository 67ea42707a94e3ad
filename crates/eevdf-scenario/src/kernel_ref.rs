//! Kernel reference rows: what real kernels measured for the fidelity
//! presets (`fidelity-*`) and the default preset, and the fidelity
//! report's verdict on each.
//!
//! The data is the committed, generated file `data/kernel_ref.txt`
//! (written by `eevdf kernel fidelity-doc`), compiled in. One line per
//! (preset, task, kernel series), whitespace-separated, `#` comments:
//!
//! ```text
//! PRESET TASK SERIES RELEASE SEEDS SAMPLES P50 P90 P99 P99_9 MAX VERDICT
//! fidelity-ct-1hog ct 7.2 7.2.13+deb14-cloud-amd64 5 9998 61234 62000 63211 70123 120000 agrees
//! ```
//!
//! Latencies are ns, medians over seeds `1..=SEEDS`; SAMPLES is the
//! median sample count; VERDICT is `agrees` or `differs`: the report's
//! verdict for the preset's default variant (the simulator, with the
//! kernel's read-back settings, within 2x of the kernel at p50..p99.9).
//!
//! [`parse`] returns a typed error for a bad line; [`rows`] never panics
//! (a bad committed file gives no rows, and a unit test fails on it).

use std::sync::OnceLock;

use crate::ParseError;

/// The committed reference data.
pub const DATA: &str = include_str!("../data/kernel_ref.txt");

/// Bounds, like every parser here.
const MAX_BYTES: usize = 256 * 1024;
const MAX_LINE: usize = 400;
const FIELDS: usize = 12;

/// The fidelity report's verdict on one (preset, kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Agrees,
    Differs,
}

/// One kernel's numbers for one task of one preset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRef {
    pub preset: String,
    /// The task directive's name (`ct`).
    pub task: String,
    /// Kernel series as `--kernel` takes it (`7.2`).
    pub series: String,
    /// `uname -r` of the kernel that ran (`7.2.13+deb14-cloud-amd64`).
    pub release: String,
    /// Seeds `1..=seeds` were run.
    pub seeds: u32,
    /// Median sample count over seeds.
    pub samples: u64,
    /// Medians over seeds, ns.
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
    pub max_ns: u64,
    pub verdict: Verdict,
}

impl KernelRef {
    /// The command that reproduces one seed of these numbers.
    pub fn command(&self) -> String {
        format!(
            "eevdf kernel run {} --kernel {} --seed N",
            self.preset, self.series
        )
    }

    /// The kernel's version without Debian's suffix (`7.2.13`).
    pub fn version(&self) -> &str {
        self.release
            .split(['+', '-'])
            .next()
            .unwrap_or(&self.release)
    }

    /// A row label: `kernel 7.2.13 (Debian, QEMU)`.
    pub fn label(&self) -> String {
        format!("kernel {} (Debian, QEMU)", self.version())
    }

    /// `seeds 1-5` (or `seed 1`).
    pub fn seeds_text(&self) -> String {
        if self.seeds == 1 {
            "seed 1".into()
        } else {
            format!("seeds 1-{}", self.seeds)
        }
    }

    /// p50, p90, p99, p99.9 and max in ns.
    pub fn latencies_ns(&self) -> [u64; 5] {
        [
            self.p50_ns,
            self.p90_ns,
            self.p99_ns,
            self.p99_9_ns,
            self.max_ns,
        ]
    }
}

/// How a scenario stands against real kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Every kernel row agrees.
    Agrees,
    /// At least one kernel row differs.
    Differs,
    /// No kernel rows (most scenarios).
    NotChecked,
}

impl Mark {
    /// The mark of a set of rows (those of one preset).
    pub fn of(rows: &[KernelRef]) -> Mark {
        if rows.is_empty() {
            Mark::NotChecked
        } else if rows.iter().any(|r| r.verdict == Verdict::Differs) {
            Mark::Differs
        } else {
            Mark::Agrees
        }
    }

    /// Symbol and words, readable without colour.
    pub fn text(self) -> &'static str {
        match self {
            Mark::Agrees => "✓ agrees with the kernel",
            Mark::Differs => "≠ differs from the kernel",
            Mark::NotChecked => "– not checked against a kernel",
        }
    }

    /// The symbol alone.
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::Agrees => "✓",
            Mark::Differs => "≠",
            Mark::NotChecked => "–",
        }
    }

    /// A stable name for attributes and classes.
    pub fn key(self) -> &'static str {
        match self {
            Mark::Agrees => "agrees",
            Mark::Differs => "differs",
            Mark::NotChecked => "unchecked",
        }
    }
}

impl From<Verdict> for Mark {
    fn from(v: Verdict) -> Mark {
        match v {
            Verdict::Agrees => Mark::Agrees,
            Verdict::Differs => Mark::Differs,
        }
    }
}

fn bad(line: usize, column: usize, message: impl Into<String>) -> ParseError {
    ParseError::new(
        line,
        column,
        message,
        "one line per row: PRESET TASK SERIES RELEASE SEEDS SAMPLES P50 P90 P99 P99_9 MAX agrees|differs",
    )
}

/// Parses reference data in the format above.
pub fn parse(text: &str) -> Result<Vec<KernelRef>, ParseError> {
    if text.len() > MAX_BYTES {
        return Err(bad(1, 1, format!("more than {MAX_BYTES} bytes")));
    }
    let mut out: Vec<KernelRef> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if raw.chars().count() > MAX_LINE {
            return Err(bad(n, MAX_LINE + 1, "line too long"));
        }
        let line = raw.split('#').next().unwrap_or_default();
        if line.trim().is_empty() {
            continue;
        }
        // Fields with their 1-based (char) columns.
        let mut fields: Vec<(usize, &str)> = Vec::with_capacity(FIELDS);
        let mut start: Option<(usize, usize)> = None;
        let mut col = 1;
        for (ci, (bi, c)) in line.char_indices().enumerate() {
            col = ci + 2;
            match (start, c.is_whitespace()) {
                (None, false) => start = Some((bi, ci + 1)),
                (Some((b, c0)), true) => {
                    fields.push((c0, &line[b..bi]));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some((b, c0)) = start {
            fields.push((c0, &line[b..]));
        }
        if fields.len() != FIELDS {
            let at = fields.get(FIELDS).map_or(col, |f| f.0);
            return Err(bad(
                n,
                at,
                format!("{} fields, expected {FIELDS}", fields.len()),
            ));
        }
        let num = |k: usize, what: &str| -> Result<u64, ParseError> {
            let (c, w) = fields[k];
            w.parse::<u64>()
                .map_err(|_| bad(n, c, format!("{what} `{w}` is not a whole number")))
        };
        let name = |k: usize, what: &str| -> Result<String, ParseError> {
            let (c, w) = fields[k];
            if w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.+/".contains(c))
            {
                Ok(w.to_string())
            } else {
                Err(bad(
                    n,
                    c,
                    format!("{what} `{w}` has characters other than letters, digits and -_.+/"),
                ))
            }
        };
        let seeds = num(4, "SEEDS")?;
        if seeds == 0 || seeds > 1000 {
            return Err(bad(n, fields[4].0, "SEEDS must be 1 to 1000"));
        }
        let lat = [
            num(6, "P50")?,
            num(7, "P90")?,
            num(8, "P99")?,
            num(9, "P99_9")?,
            num(10, "MAX")?,
        ];
        if let Some(k) = (1..5).find(|&k| lat[k] < lat[k - 1]) {
            return Err(bad(
                n,
                fields[6 + k].0,
                "percentiles must not decrease (p50 <= p90 <= p99 <= p99.9 <= max)",
            ));
        }
        let verdict = match fields[11].1 {
            "agrees" => Verdict::Agrees,
            "differs" => Verdict::Differs,
            w => {
                return Err(bad(
                    n,
                    fields[11].0,
                    format!("verdict `{w}`, expected agrees or differs"),
                ))
            }
        };
        let r = KernelRef {
            preset: name(0, "PRESET")?,
            task: name(1, "TASK")?,
            series: name(2, "SERIES")?,
            release: name(3, "RELEASE")?,
            seeds: seeds as u32,
            samples: num(5, "SAMPLES")?,
            p50_ns: lat[0],
            p90_ns: lat[1],
            p99_ns: lat[2],
            p99_9_ns: lat[3],
            max_ns: lat[4],
            verdict,
        };
        if out
            .iter()
            .any(|o| o.preset == r.preset && o.task == r.task && o.series == r.series)
        {
            return Err(bad(
                n,
                1,
                format!("a second row for {} {} {}", r.preset, r.task, r.series),
            ));
        }
        out.push(r);
    }
    Ok(out)
}

/// Every row of the committed data (none if it does not parse; a test
/// makes sure it does).
pub fn all() -> &'static [KernelRef] {
    static ROWS: OnceLock<Vec<KernelRef>> = OnceLock::new();
    ROWS.get_or_init(|| parse(DATA).unwrap_or_default())
}

/// The kernel rows of a preset, one per kernel series (and task), in
/// file order.
pub fn rows(preset: &str) -> Vec<KernelRef> {
    all()
        .iter()
        .filter(|r| r.preset == preset)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::{preset, PRESETS};
    use crate::scenario::Scenario;

    const LINE: &str = "fidelity-ct-1hog ct 7.2 7.2.13+deb14-cloud-amd64 5 9998 61234 62000 63211 70123 120000 agrees";

    #[test]
    fn the_committed_file_parses_completely() {
        let rows = parse(DATA).unwrap_or_else(|e| panic!("data/kernel_ref.txt: {e}"));
        assert!(!rows.is_empty());
        assert_eq!(all().len(), rows.len());
        let data_lines = DATA
            .lines()
            .filter(|l| !l.split('#').next().unwrap_or_default().trim().is_empty())
            .count();
        assert_eq!(rows.len(), data_lines);
        for r in &rows {
            // Every row names a preset and one of its tasks.
            let p = preset(&r.preset).unwrap_or_else(|| panic!("no preset {}", r.preset));
            let sc = Scenario::parse(p.text).unwrap();
            assert!(
                sc.sim.tasks.iter().any(|t| t.name == r.task),
                "{} has no task {}",
                r.preset,
                r.task
            );
            assert!(
                r.release.starts_with(&format!("{}.", r.series)),
                "{}",
                r.release
            );
        }
    }

    #[test]
    fn a_line_reads_into_its_fields() {
        let rows = parse(&format!("# comment\n\n  {LINE}  # trailing\n")).unwrap();
        assert_eq!(
            rows,
            [KernelRef {
                preset: "fidelity-ct-1hog".into(),
                task: "ct".into(),
                series: "7.2".into(),
                release: "7.2.13+deb14-cloud-amd64".into(),
                seeds: 5,
                samples: 9998,
                p50_ns: 61234,
                p90_ns: 62000,
                p99_ns: 63211,
                p99_9_ns: 70123,
                max_ns: 120000,
                verdict: Verdict::Agrees,
            }]
        );
        let r = &rows[0];
        assert_eq!(
            r.command(),
            "eevdf kernel run fidelity-ct-1hog --kernel 7.2 --seed N"
        );
        assert_eq!(r.version(), "7.2.13");
        assert_eq!(r.label(), "kernel 7.2.13 (Debian, QEMU)");
        assert_eq!(r.seeds_text(), "seeds 1-5");
        assert_eq!(r.latencies_ns(), [61234, 62000, 63211, 70123, 120000]);
    }

    #[test]
    fn bad_lines_are_typed_errors() {
        let cases = [
            (LINE.replace(" agrees", ""), (1, 87), "11 fields"),
            (format!("{LINE} extra"), (1, 95), "13 fields"),
            (LINE.replace("agrees", "maybe"), (1, 88), "verdict"),
            (LINE.replace(" 9998 ", " 99x8 "), (1, 52), "SAMPLES"),
            (
                LINE.replace(" 62000 ", " 60000 "),
                (1, 63),
                "must not decrease",
            ),
            (LINE.replace(" 5 ", " 0 "), (1, 50), "SEEDS"),
            (LINE.replace("ct 7.2", "c;t 7.2"), (1, 18), "TASK"),
            (format!("{LINE}\n{LINE}"), (2, 1), "a second row"),
        ];
        for (text, at, msg) in cases {
            let e = parse(&text).expect_err(&text);
            assert!(e.message.contains(msg), "{text}: {e}");
            assert_eq!((e.line, e.column), at, "{text}: {e}");
            assert!(!e.hint.is_empty());
        }
        assert!(parse(&"x".repeat(500)).is_err());
        assert!(parse(&"#\n".repeat(200_000)).is_err());
        assert_eq!(parse(""), Ok(vec![]));
    }

    #[test]
    fn marks_tell_three_states_apart() {
        let a = parse(LINE).unwrap();
        let d = parse(&LINE.replace("agrees", "differs")).unwrap();
        let both = [a[0].clone(), {
            let mut x = d[0].clone();
            x.series = "6.12".into();
            x
        }];
        assert_eq!(Mark::of(&a), Mark::Agrees);
        assert_eq!(Mark::of(&d), Mark::Differs);
        assert_eq!(Mark::of(&both), Mark::Differs);
        assert_eq!(Mark::of(&[]), Mark::NotChecked);
        let all = [Mark::Agrees, Mark::Differs, Mark::NotChecked];
        for (i, m) in all.iter().enumerate() {
            assert!(m.text().starts_with(m.symbol()));
            for n in &all[..i] {
                assert_ne!(m.symbol(), n.symbol());
                assert_ne!(m.key(), n.key());
            }
        }
    }

    #[test]
    fn rows_follow_file_order_per_preset() {
        let rows = rows("fidelity-ct-1hog");
        let want: Vec<&KernelRef> = all()
            .iter()
            .filter(|r| r.preset == "fidelity-ct-1hog")
            .collect();
        assert_eq!(rows.iter().collect::<Vec<_>>(), want);
        assert!(!rows.is_empty(), "the 1hog row has kernel data");
        // The default preset has kernel rows too (make default-ref).
        assert!(super::rows("default").iter().any(|r| r.task == "tt"));
        assert!(super::rows("smp4-hogs").is_empty());
        assert!(super::rows("nope").is_empty());
    }

    /// The fidelity presets are the fidelity set's rows (default variant)
    /// in canonical text.
    #[test]
    fn fidelity_presets_are_the_sets_rows() {
        // (timer, duration), as eevdf-kernel's `fidelity::ROWS` has them:
        // about 10,000 wakeups of the timer.
        let ct = ("task ct kind=timer period=1ms run=20us slice=100us", "10s");
        let ct8 = ("task ct kind=timer period=3777us run=20us slice=8ms", "38s");
        let rows = [
            ("fidelity-ct-alone", ct, ""),
            ("fidelity-ct-1hog", ct, "task hog kind=hog"),
            ("fidelity-ct-4hog", ct, "task hog kind=hog count=4"),
            (
                "fidelity-ct-rtapp",
                ct,
                "task rt kind=periodic count=2 run=8177us sleep=17777us",
            ),
            (
                "fidelity-ct-hackbench",
                ct,
                "task hb kind=hackbench groups=1 fds=10 mode=thread ipc=pipe loops=0",
            ),
            (
                "fidelity-v2-rtapp",
                ct8,
                "task rt kind=periodic count=2 run=8177us sleep=17777us slice=16ms",
            ),
            (
                "fidelity-v2-hackbench",
                ct8,
                "task hb kind=hackbench fds=10 mode=thread ipc=pipe slice=16ms",
            ),
        ];
        for (name, (ct, duration), tasks) in rows {
            let mut t = format!("eevdf-scenario v1\nmachine up\nduration {duration}\n{ct}\n");
            if !tasks.is_empty() {
                t.push_str(tasks);
                t.push('\n');
            }
            t.push_str("end\n");
            let want = Scenario::parse(&t).unwrap().to_text();
            let p = preset(name).unwrap_or_else(|| panic!("no preset {name}"));
            assert_eq!(p.text, want, "{name}");
            assert!(p.title.starts_with("Fidelity row: "), "{name}");
            assert!(p.source.contains("docs/fidelity.md"), "{name}");
        }
        assert_eq!(
            PRESETS
                .iter()
                .filter(|p| p.name.starts_with("fidelity-"))
                .count(),
            rows.len()
        );
    }

    proptest::proptest! {
        #[test]
        fn parsing_never_panics(s in "\\PC{0,300}") {
            let _ = parse(&s);
            let _ = parse(&format!("{LINE}\n{s}"));
        }
    }
}
