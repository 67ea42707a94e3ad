//! A sweep as the page keeps it and a link carries it: `eevdf sweep`'s
//! own axis flags (`--vary task.hog.slice=1ms,4ms --seeds 1..3`), so
//! the same words run the same grid in the CLI, byte for byte. Axes come
//! in the CLI's order whatever the flags' order: every `--vary` as
//! given, then `--features-axis`, `--machine`, `--seeds`.

use eevdf_scenario::scenario::Scenario;

use super::{parse_seeds, parse_values, Axis, Grid, PERCENTILES};

/// Longest sweep text read (a link section, the page's field).
pub const MAX_SPEC_BYTES: usize = 4096;

/// The flags a spec reads, for hints.
const FLAGS: &str = "--vary KEY=V1,V2, --features-axis A,B, --machine M1,M2, --seeds A..B, \
                     --percentile P";

/// A sweep's axes and the percentile its chart shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub axes: Vec<Axis>,
    pub percentile: String,
}

impl Spec {
    /// Reads the flags; every error names the flag and says what to
    /// write instead.
    pub fn parse(text: &str) -> Result<Spec, String> {
        if text.len() > MAX_SPEC_BYTES {
            return Err(format!(
                "the sweep is {} bytes, over {MAX_SPEC_BYTES}",
                text.len()
            ));
        }
        let mut words = text.split_whitespace();
        let (mut vary, mut features, mut machine, mut seeds) = (Vec::new(), None, None, None);
        let mut percentile = "p99".to_string();
        while let Some(word) = words.next() {
            let (flag, inline) = match word.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (word, None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| words.next().map(str::to_string))
                    .ok_or_else(|| format!("{flag} needs a value (hint: {FLAGS})"))
            };
            let list = |v: String| parse_values(&v).map_err(|e| format!("{flag}: {e}"));
            match flag {
                "--vary" => {
                    let v = value()?;
                    let (key, values) = v.split_once('=').ok_or_else(|| {
                        format!("--vary {v}: expected KEY=V1,V2,... (hint: --vary task.hb.slice=1ms,2ms)")
                    })?;
                    vary.push(Axis::Set {
                        key: key.to_string(),
                        values: list(values.to_string())?,
                    });
                }
                "--features-axis" => features = Some(Axis::Features(list(value()?)?)),
                "--machine" => machine = Some(Axis::Machine(list(value()?)?)),
                "--seeds" => {
                    let v = value()?;
                    seeds = Some(Axis::Seeds(
                        parse_seeds(&v).map_err(|e| format!("--seeds: {e}"))?,
                    ));
                }
                "--percentile" => {
                    let p = value()?;
                    if !PERCENTILES.contains(&p.as_str()) {
                        return Err(format!(
                            "--percentile {p}: not one of {}",
                            PERCENTILES.join(", ")
                        ));
                    }
                    percentile = p;
                }
                "--kernel" => {
                    return Err("--kernel: the page runs the simulator only \
                                (hint: eevdf sweep --kernel sim,7.2 boots kernels)"
                        .into())
                }
                other => return Err(format!("unknown flag `{other}` (hint: {FLAGS})")),
            }
        }
        let axes: Vec<Axis> = vary
            .into_iter()
            .chain(features)
            .chain(machine)
            .chain(seeds)
            .collect();
        if axes.is_empty() {
            return Err(format!("a sweep needs an axis (hint: {FLAGS})"));
        }
        Ok(Spec { axes, percentile })
    }

    /// The flags in canonical form: [`Spec::parse`] reads them back to
    /// the same spec, and `eevdf sweep SCENARIO FLAGS` runs the grid.
    pub fn to_args(&self) -> String {
        let mut words: Vec<String> = Vec::new();
        for a in &self.axes {
            let (flag, values) = match a {
                Axis::Set { key, values } => ("--vary", format!("{key}={}", values.join(","))),
                Axis::Features(v) => ("--features-axis", v.join(",")),
                Axis::Machine(v) => ("--machine", v.join(",")),
                Axis::Kernel(v) => ("--kernel", v.join(",")),
                Axis::Seeds(s) => ("--seeds", seeds_text(s)),
            };
            words.push(format!("{flag} {values}"));
        }
        if self.percentile != "p99" {
            words.push(format!("--percentile {}", self.percentile));
        }
        words.join(" ")
    }

    /// The grid of `base` over these axes.
    pub fn grid(&self, base: Scenario) -> Result<Grid, String> {
        Grid::new(base, self.axes.clone())
    }
}

/// Seeds as `A..B` when they are a run, else a comma list.
fn seeds_text(s: &[u64]) -> String {
    let run = s.windows(2).all(|w| w[0].checked_add(1) == Some(w[1]));
    match (s.first(), s.last()) {
        (Some(a), Some(b)) if run && s.len() > 1 => format!("{a}..{b}"),
        _ => s.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_in_the_clis_order_and_print_back() {
        let s = Spec::parse(
            "--seeds 1..3 --features-axis=PREEMPT_SHORT,NO_PREEMPT_SHORT+NEXT_BUDDY \
             --vary task.hog.slice=1ms,4ms --percentile p90",
        )
        .unwrap();
        let names: Vec<&str> = s.axes.iter().map(Axis::name).collect();
        assert_eq!(names, ["task.hog.slice", "features", "seed"]);
        assert_eq!(s.percentile, "p90");
        let args = s.to_args();
        assert_eq!(
            args,
            "--vary task.hog.slice=1ms,4ms --features-axis PREEMPT_SHORT,NO_PREEMPT_SHORT+NEXT_BUDDY \
             --seeds 1..3 --percentile p90"
        );
        assert_eq!(Spec::parse(&args).unwrap(), s);
        assert_eq!(seeds_text(&[4, 2]), "4,2");
        assert_eq!(seeds_text(&[7]), "7");
    }

    #[test]
    fn bad_flags_say_what_to_write() {
        for (text, wants) in [
            ("", "needs an axis"),
            ("--seeds", "--seeds needs a value"),
            ("--vary slice", "expected KEY=V1,V2"),
            ("--seeds 3..1", "--seeds: `3..1` is empty"),
            ("--machine smp2,,smp4", "has an empty value"),
            ("--percentile p42 --seeds 1", "not one of"),
            ("--kernel sim,7.2", "the page runs the simulator only"),
            ("--jobs 2", "unknown flag `--jobs`"),
        ] {
            let e = Spec::parse(text).unwrap_err();
            assert!(e.contains(wants), "{text}: {e}");
        }
        assert!(Spec::parse(&"--seeds 1 ".repeat(500)).is_err());
    }
}
