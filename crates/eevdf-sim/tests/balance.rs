//! Data-driven tests of the balancing decision (`calculate_imbalance`):
//! each `tests/balance/*.txt` block lists the sched groups of one domain
//! (the first one is the balancing CPU's local group) and states the
//! decision. Format:
//!
//! ```text
//! pct 117                        # imbalance_pct of the domain
//! numa                           # optional: a NUMA domain
//! group nr=0 load=0 util=0 cap=1024 weight=1   # local
//! group nr=3 load=3072 util=1024 cap=1024 weight=1
//! => MigrateTask busiest=1 count=1
//! ```
//! A blank line starts the next case. `task_hot` cases are one line
//! each: `hot [buddy] [smt] [NO_CACHE_HOT_BUDDY] dst_nr=N since_us=N
//! cost_us=N => hot|cold`.

use std::fs;
use std::path::Path;

use eevdf_sim::{calculate_imbalance, task_hot, BalanceDecision, GroupStats, HotCheck};

fn kv(words: &[&str], key: &str) -> u64 {
    words
        .iter()
        .find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .map_or(0, |v| v.parse().unwrap())
}

fn run(path: &Path) -> Result<usize, String> {
    let text = fs::read_to_string(path).unwrap();
    let mut pct = 117;
    let mut numa = false;
    let mut groups: Vec<GroupStats> = Vec::new();
    let mut cases = 0;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap().trim();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            None => {}
            Some("pct") => pct = words[1].parse().unwrap(),
            Some("numa") => numa = true,
            Some("group") => groups.push(GroupStats {
                nr: kv(&words, "nr"),
                load: kv(&words, "load"),
                util: kv(&words, "util"),
                capacity: kv(&words, "cap").max(1),
                idle: kv(&words, "idle"),
                weight: kv(&words, "weight").max(1),
            }),
            Some("=>") => {
                let got = match calculate_imbalance(&groups, 0, pct, numa) {
                    BalanceDecision::None => "None".to_string(),
                    BalanceDecision::MigrateTask { busiest, count } => {
                        format!("MigrateTask busiest={busiest} count={count}")
                    }
                    BalanceDecision::MigrateLoad { busiest, load } => {
                        format!("MigrateLoad busiest={busiest} load={load}")
                    }
                };
                let want = words[1..].join(" ");
                if got != want {
                    return Err(format!(
                        "{}:{}: expected {want}, got {got}",
                        path.display(),
                        n + 1
                    ));
                }
                cases += 1;
                groups.clear();
                numa = false;
                pct = 117;
            }
            Some("hot") => {
                let (check, want) = line.split_once("=>").ok_or("hot needs => hot|cold")?;
                let words: Vec<&str> = check.split_whitespace().collect();
                let known = ["hot", "smt", "buddy", "NO_CACHE_HOT_BUDDY"];
                let keys = ["dst_nr=", "since_us=", "cost_us="];
                if let Some(w) = words
                    .iter()
                    .find(|w| !known.contains(w) && !keys.iter().any(|k| w.starts_with(k)))
                {
                    return Err(format!("{}:{}: unknown word {w}", path.display(), n + 1));
                }
                let us = |k: &str| kv(&words, k) * 1_000;
                let hot = task_hot(&HotCheck {
                    smt_level: words.contains(&"smt"),
                    cache_hot_buddy: !words.contains(&"NO_CACHE_HOT_BUDDY"),
                    dst_nr_running: kv(&words, "dst_nr") as u32,
                    next_buddy: words.contains(&"buddy"),
                    since_ran: us("since_us"),
                    migration_cost: us("cost_us"),
                });
                let got = if hot { "hot" } else { "cold" };
                if got != want.trim() {
                    return Err(format!(
                        "{}:{}: expected {}, got {got}",
                        path.display(),
                        n + 1,
                        want.trim()
                    ));
                }
                cases += 1;
            }
            Some(w) => {
                return Err(format!(
                    "{}:{}: unknown directive {w}",
                    path.display(),
                    n + 1
                ))
            }
        }
    }
    Ok(cases)
}

#[test]
fn balance_scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/balance");
    let mut total = 0;
    let mut failures = Vec::new();
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        match run(&f) {
            Ok(0) => failures.push(format!("{}: no cases", f.display())),
            Ok(n) => total += n,
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(total >= 6, "only {total} cases");
}
