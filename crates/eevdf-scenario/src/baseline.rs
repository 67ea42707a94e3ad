//! A/B in one text: a `baseline` block before `end` says how the pinned
//! baseline (A) differs from the scenario above it (B), so a mail or a
//! link carries the whole comparison and pastes back to it.
//!
//! ```text
//! task ct kind=timer period=1ms run=20us slice=100us
//! baseline
//! features NO_PREEMPT_SHORT
//! end
//! ```
//!
//! A is B with B's lines of each key the block names replaced by the
//! block's: a directive (`hz`, `kernel`, ...; all `features`, `sysctl`
//! or `costs` lines as one), `group PATH` or `task NAME`. A key B lacks
//! is added; `without KEY` leaves B's lines out (`without task hog`), and
//! `without KEY` with a line of that key moves it to the end. An empty
//! block pins A = B. A text without the block is a plain scenario, so
//! every older text and link means what it did.

use crate::display::shown;
use crate::scenario::{Scenario, HEADER};
use crate::ParseError;
use eevdf_core::features::{FeatureKind, Status, FEATURES};

/// The line that opens the block.
pub const WORD: &str = "baseline";
const WITHOUT: &str = "without";
/// Keys whose directive may span several lines.
const MULTI: [&str; 3] = ["features", "sysctl", "costs"];

/// A scenario (B) and, when the text has a `baseline` block, A.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    pub b: Scenario,
    pub a: Option<Scenario>,
}

fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or_default().trim()
}

/// `task NAME`, `group PATH`, or the directive's word.
fn key_of(line: &str) -> String {
    let mut w = line.split_whitespace();
    let first = w.next().unwrap_or_default();
    match first {
        "task" | "group" => format!("{first} {}", w.next().unwrap_or_default()),
        _ => first.to_string(),
    }
}

/// A canonical text's body lines grouped by key, in order.
fn grouped(text: &str) -> Vec<(String, Vec<&str>)> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    for l in text.lines().filter(|l| *l != HEADER && *l != "end") {
        let k = key_of(l);
        match out.iter_mut().find(|(key, _)| *key == k) {
            Some((_, ls)) => ls.push(l),
            None => out.push((k, vec![l])),
        }
    }
    out
}

impl Pair {
    /// Parses a scenario text that may hold a `baseline` block. Errors
    /// in A point at the block's line that caused them, or at the
    /// `baseline` line.
    pub fn parse(text: &str) -> Result<Pair, ParseError> {
        let lines: Vec<&str> = text.lines().collect();
        let end = lines
            .iter()
            .position(|l| strip_comment(l) == "end")
            .unwrap_or(lines.len());
        let Some(at) = lines[..end].iter().position(|l| strip_comment(l) == WORD) else {
            return Ok(Pair {
                b: Scenario::parse(text)?,
                a: None,
            });
        };
        // B keeps its line numbers: the block becomes blank lines.
        let mut b_text = String::with_capacity(text.len());
        for (i, l) in lines.iter().enumerate() {
            if (at..end).contains(&i) {
                b_text.push('\n');
            } else {
                b_text.push_str(l);
                b_text.push('\n');
            }
        }
        let b = Scenario::parse(&b_text)?;
        let block: Vec<(usize, &str)> = (at + 1..end)
            .filter(|&i| !strip_comment(lines[i]).is_empty())
            .map(|i| (i + 1, lines[i]))
            .collect();
        let a = apply(&b, &block, at + 1)?;
        Ok(Pair { b, a: Some(a) })
    }

    /// The canonical text: B's, with the block before `end` when A is
    /// pinned.
    pub fn to_text(&self) -> String {
        let text = self.b.to_text();
        let Some(a) = &self.a else { return text };
        let body = text.strip_suffix("end\n").unwrap_or(&text);
        let mut out = format!("{body}{WORD}\n");
        for l in block_lines(a, &self.b) {
            out.push_str(&l);
            out.push('\n');
        }
        out.push_str("end\n");
        out
    }

    /// The column labels of an A/B table: what differs, for each side.
    pub fn labels(&self) -> (String, String) {
        match &self.a {
            Some(a) => labels(a, &self.b),
            None => ("A".into(), "B".into()),
        }
    }
}

/// One checked line of a block.
struct BlockLine<'a> {
    line: usize,
    key: String,
    /// `None` for `without KEY`.
    text: Option<&'a str>,
}

fn check_block<'a>(
    b_groups: &[(String, Vec<&str>)],
    block: &[(usize, &'a str)],
) -> Result<Vec<BlockLine<'a>>, ParseError> {
    let b_keys: Vec<&str> = b_groups.iter().map(|(k, _)| k.as_str()).collect();
    let mut out: Vec<BlockLine<'a>> = Vec::new();
    for &(line, raw) in block {
        let s = strip_comment(raw);
        let col = raw.len() - raw.trim_start().len() + 1;
        let err = |m: String, h: &str| ParseError::new(line, col, m, h);
        let (key, text) = match s.strip_prefix(WITHOUT).filter(|r| r.starts_with(' ')) {
            Some(rest) => (key_of(rest), None),
            None => (key_of(s), Some(raw)),
        };
        if key == WORD || key == HEADER.split(' ').next().unwrap_or_default() {
            return Err(err(
                format!("`{}` inside the baseline block", shown(&key)),
                "a text has one baseline block, between the tasks and `end`",
            ));
        }
        let same = |o: &&BlockLine| o.key == key;
        if text.is_none() {
            if out.iter().any(|o| same(&o) && o.text.is_none()) {
                return Err(err(
                    format!("`without {}` twice", shown(&key)),
                    "say it once",
                ));
            }
            if !b_keys.contains(&key.as_str()) {
                return Err(err(
                    format!("the scenario has no `{}` to leave out", shown(&key)),
                    "`without` names a directive, `task NAME` or `group PATH` above",
                ));
            }
        } else if !MULTI.contains(&key.as_str()) && out.iter().any(|o| same(&o) && o.text.is_some())
        {
            return Err(err(
                format!("`{}` twice in the baseline block", shown(&key)),
                "the block gives each line of A once",
            ));
        }
        out.push(BlockLine { line, key, text });
    }
    Ok(out)
}

/// Whether a block line's key is a group's or a task's.
fn listed(key: &str) -> bool {
    key.starts_with("task ") || key.starts_with("group ")
}

/// A: B with the block applied.
fn apply(b: &Scenario, block: &[(usize, &str)], at: usize) -> Result<Scenario, ParseError> {
    let b_text = b.to_text();
    let b_groups = grouped(&b_text);
    let block = check_block(&b_groups, block)?;
    let dropped = |k: &str| block.iter().any(|o| o.key == k && o.text.is_none());
    let in_b = |k: &str| b_groups.iter().any(|(key, _)| key == k) && !dropped(k);
    // Each line of A's text, with the block line it came from.
    let mut out: Vec<(String, Option<usize>)> = vec![(HEADER.to_string(), None)];
    let add = |out: &mut Vec<(String, Option<usize>)>, kind: &str| {
        for o in &block {
            let Some(t) = o.text else { continue };
            let ok = match kind {
                "" => !listed(&o.key),
                p => o.key.starts_with(p),
            };
            if ok && !in_b(&o.key) {
                out.push((t.to_string(), Some(o.line)));
            }
        }
    };
    add(&mut out, "");
    let mut groups_added = false;
    for (k, ls) in &b_groups {
        if k.starts_with("task ") && !groups_added {
            add(&mut out, "group ");
            groups_added = true;
        }
        if dropped(k) {
            continue;
        }
        let before = out.len();
        for o in block.iter().filter(|o| o.key == *k) {
            if let Some(t) = o.text {
                out.push((t.to_string(), Some(o.line)));
            }
        }
        if out.len() == before {
            out.extend(ls.iter().map(|l| (l.to_string(), None)));
        }
    }
    if !groups_added {
        add(&mut out, "group ");
    }
    add(&mut out, "task ");
    out.push(("end".to_string(), None));
    let mut text = String::new();
    for (l, _) in &out {
        text.push_str(l);
        text.push('\n');
    }
    Scenario::parse(&text).map_err(|mut e| {
        let origin = e
            .line
            .checked_sub(1)
            .and_then(|i| out.get(i))
            .and_then(|o| o.1);
        match origin {
            Some(line) => e.line = line,
            None => {
                e.line = at;
                e.column = 1;
            }
        }
        e.message = format!("baseline A: {}", e.message);
        e
    })
}

fn applies_exactly(b: &Scenario, lines: &[String], a_text: &str) -> bool {
    let block: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (i + 1, l.as_str()))
        .collect();
    apply(b, &block, 0).is_ok_and(|a| a.to_text() == a_text)
}

fn find<'t>(g: &[(String, Vec<&'t str>)], k: &str) -> Option<Vec<&'t str>> {
    g.iter().find(|(key, _)| key == k).map(|(_, l)| l.clone())
}

/// The block that turns `b` into `a`: the lines of A whose key differs,
/// then `without` for B's keys A lacks. If that would not restore A's
/// order of groups and tasks, they are all moved into place.
pub fn block_lines(a: &Scenario, b: &Scenario) -> Vec<String> {
    let (ta, tb) = (a.to_text(), b.to_text());
    let (ga, gb) = (grouped(&ta), grouped(&tb));
    let mut out: Vec<String> = Vec::new();
    for (k, la) in &ga {
        if find(&gb, k).as_ref() != Some(la) {
            out.extend(la.iter().map(|l| l.to_string()));
        }
    }
    for (k, _) in &gb {
        if find(&ga, k).is_none() {
            out.push(format!("{WITHOUT} {k}"));
        }
    }
    if applies_exactly(b, &out, &ta) {
        return out;
    }
    let mut moved: Vec<String> = out
        .into_iter()
        .filter(|l| !listed(&key_of(l.strip_prefix("without ").unwrap_or(l))))
        .collect();
    moved.extend(
        gb.iter()
            .filter(|(k, _)| listed(k))
            .map(|(k, _)| format!("{WITHOUT} {k}")),
    );
    for (_, la) in ga.iter().filter(|(k, _)| listed(k)) {
        moved.extend(la.iter().map(|l| l.to_string()));
    }
    debug_assert!(applies_exactly(b, &moved, &ta), "{moved:?}");
    moved
}

fn bool_token(name: &str, on: bool) -> String {
    if on {
        name.to_string()
    } else {
        format!("NO_{name}")
    }
}

/// What differs between A and B, as each side's words: kernel profile,
/// feature toggles (`NO_PREEMPT_SHORT` / `PREEMPT_SHORT`), other
/// directives (`hz 250` / `hz 1000`), task and group keys (`ct
/// slice=100us` / `ct slice=3ms`, `no hog`). `A` and `B` when nothing
/// differs.
pub fn labels(a: &Scenario, b: &Scenario) -> (String, String) {
    let (mut la, mut lb): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    let (fa, fb) = (&a.features, &b.features);
    if fa.profile != fb.profile {
        la.push(fa.profile.name().to_string());
        lb.push(fb.profile.name().to_string());
    }
    for info in FEATURES.iter().filter(|i| i.status != Status::NotModelled) {
        let n = info.name;
        let pair = match info.kind {
            FeatureKind::Bool => fa
                .features
                .get_bool(n)
                .zip(fb.features.get_bool(n))
                .filter(|(x, y)| x != y)
                .map(|(x, y)| (bool_token(n, x), bool_token(n, y))),
            FeatureKind::Enum(_) => fa
                .features
                .get_enum(n)
                .zip(fb.features.get_enum(n))
                .filter(|(x, y)| x != y)
                .map(|(x, y)| (format!("{n}={x}"), format!("{n}={y}"))),
        };
        if let Some((x, y)) = pair {
            la.push(x);
            lb.push(y);
        }
    }
    let (ta, tb) = (a.to_text(), b.to_text());
    let (ga, gb) = (grouped(&ta), grouped(&tb));
    let mut keys: Vec<&str> = ga.iter().map(|(k, _)| k.as_str()).collect();
    keys.extend(
        gb.iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| !ga.iter().any(|(x, _)| x == k)),
    );
    for k in keys
        .into_iter()
        .filter(|k| !matches!(*k, "features" | "kernel"))
    {
        let words = |g: &[(String, Vec<&str>)]| -> Option<Vec<String>> {
            g.iter().find(|(x, _)| x == k).map(|(_, ls)| {
                ls.iter()
                    .flat_map(|l| {
                        l.split_whitespace()
                            .skip(if k.contains(' ') { 2 } else { 1 })
                    })
                    .map(str::to_string)
                    .collect()
            })
        };
        let (wa, wb) = (words(&ga), words(&gb));
        if wa == wb {
            continue;
        }
        let name = k.split_once(' ').map_or(k, |(_, n)| n);
        let side = |mine: &Option<Vec<String>>, other: &Option<Vec<String>>| match (mine, other) {
            (None, _) => format!("no {name}"),
            (Some(_), None) if k.contains(' ') => name.to_string(),
            (Some(w), _) => {
                let diff: Vec<&str> = w
                    .iter()
                    .filter(|t| other.as_ref().is_none_or(|o| !o.contains(t)))
                    .map(String::as_str)
                    .collect();
                let shown = if diff.is_empty() {
                    w.iter().map(String::as_str).collect()
                } else {
                    diff
                };
                format!("{name} {}", shown.join(" "))
            }
        };
        la.push(side(&wa, &wb));
        lb.push(side(&wb, &wa));
    }
    if la.is_empty() {
        return ("A".into(), "B".into());
    }
    (la.join(" "), lb.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const B: &str = "eevdf-scenario v1
machine up
kernel v7.2
task ct kind=timer period=1ms run=20us slice=100us
task hog kind=hog
";

    fn text(body: &str) -> String {
        format!("{B}{body}end\n")
    }

    #[test]
    fn a_block_gives_a_and_round_trips() {
        let p = Pair::parse(&text("baseline\nfeatures NO_PREEMPT_SHORT\n")).unwrap();
        let a = p.a.as_ref().unwrap();
        assert_eq!(a.features.features.get_bool("PREEMPT_SHORT"), Some(false));
        assert_eq!(p.b.features.features.get_bool("PREEMPT_SHORT"), Some(true));
        assert_eq!(
            p.labels(),
            ("NO_PREEMPT_SHORT".into(), "PREEMPT_SHORT".into())
        );
        let canon = p.to_text();
        assert!(
            canon.ends_with("baseline\nfeatures NO_PREEMPT_SHORT\nend\n"),
            "{canon}"
        );
        assert_eq!(Pair::parse(&canon).unwrap(), p);
    }

    #[test]
    fn plain_texts_and_empty_blocks() {
        let p = Pair::parse(&text("")).unwrap();
        assert_eq!(p.a, None);
        assert_eq!(p.to_text(), p.b.to_text());
        let p = Pair::parse(&text("baseline\n")).unwrap();
        assert_eq!(p.a.as_ref(), Some(&p.b));
        assert_eq!(p.labels(), ("A".into(), "B".into()));
        assert!(p.to_text().ends_with("baseline\nend\n"));
    }

    #[test]
    fn tasks_move_drop_and_label() {
        let p = Pair::parse(&text(
            "baseline\nwithout task hog\ntask ct kind=timer period=1ms slice=3ms\n",
        ))
        .unwrap();
        let a = p.a.as_ref().unwrap();
        assert_eq!(a.sim.tasks.len(), 1);
        assert_eq!(
            p.labels(),
            ("ct slice=3ms no hog".into(), "ct slice=100us hog".into())
        );
        // Moving restores another order.
        let p = Pair::parse(&text(
            "baseline\nwithout task ct\ntask ct kind=timer period=1ms\n",
        ))
        .unwrap();
        let a = p.a.clone().unwrap();
        assert_eq!(a.sim.tasks[1].name, "ct");
        assert_eq!(Pair::parse(&p.to_text()).unwrap().a, Some(a));
    }

    #[test]
    fn errors_point_into_the_block() {
        let t = text("baseline\nhz 7\n");
        let e = Pair::parse(&t).unwrap_err();
        assert_eq!(e.line, 7, "{e}");
        assert!(e.message.starts_with("baseline A:"), "{e}");
        let e = Pair::parse(&text("baseline\nwithout task nope\n")).unwrap_err();
        assert_eq!(e.line, 7);
        let e = Pair::parse(&text("baseline\nhz 100\nhz 1000\n")).unwrap_err();
        assert_eq!(e.line, 8);
        let e = Pair::parse(&text("baseline\nbaseline\n")).unwrap_err();
        assert_eq!(e.line, 7);
        // B's own errors keep B's lines.
        let e = Pair::parse(&format!("{B}task x kind=nope\nbaseline\nend\n")).unwrap_err();
        assert_eq!(e.line, 6);
    }

    proptest! {
        #[test]
        fn any_pair_round_trips_exactly(
            hz in prop::sample::select(vec![100u32, 250, 1000]),
            ps in any::<bool>(), rtp in any::<bool>(), order in any::<bool>(),
            slice in 1u32..20, drop_hog in any::<bool>(), extra in any::<bool>()
        ) {
            let b = Scenario::parse(&text("")).unwrap();
            let mut a_text = format!("eevdf-scenario v1\nmachine up\nkernel v7.2\nhz {hz}\n");
            a_text.push_str(&format!("features {} {}\n",
                if ps { "PREEMPT_SHORT" } else { "NO_PREEMPT_SHORT" },
                if rtp { "RUN_TO_PARITY" } else { "NO_RUN_TO_PARITY" }));
            let ct = format!("task ct kind=timer period=1ms slice={slice}ms\n");
            let hog = if drop_hog { "" } else { "task hog kind=hog\n" };
            if order { a_text.push_str(&ct); a_text.push_str(hog); } else { a_text.push_str(hog); a_text.push_str(&ct); }
            if extra { a_text.push_str("task more kind=periodic run=1ms sleep=1ms\n"); }
            a_text.push_str("end\n");
            let a = Scenario::parse(&a_text).unwrap();
            let p = Pair { b, a: Some(a.clone()) };
            let back = Pair::parse(&p.to_text()).unwrap();
            prop_assert_eq!(back.a.as_ref().map(Scenario::to_text), Some(a.to_text()));
            prop_assert_eq!(back, p);
        }

        #[test]
        fn parsing_never_panics(s in "[a-z =#\\n]{0,200}") {
            let _ = Pair::parse(&text(&format!("baseline\n{s}\n")));
        }
    }
}
