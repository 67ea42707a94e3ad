//! The directive table (issue 18 item 3): every entry's example reads
//! and prints back, the canonical text follows the table's order, and
//! `--set` takes exactly the settable entries and their keys.

use super::*;

fn with_line(line: &str) -> String {
    format!("{HEADER}\n{line}\nend\n")
}

#[test]
fn every_directive_example_reads_and_prints_back() {
    for d in DIRECTIVES {
        let text = with_line(d.example);
        let sc = Scenario::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", d.name));
        let printed = sc.to_text();
        assert!(
            printed.lines().any(|l| l == d.example),
            "{}: `{}` not printed back:\n{printed}",
            d.name,
            d.example
        );
        assert_eq!(Scenario::parse(&printed).unwrap(), sc, "{}", d.name);
    }
}

#[test]
fn every_sub_key_example_reads_prints_and_sets() {
    for d in DIRECTIVES.iter().filter(|d| !d.keys.is_empty()) {
        for k in d.keys {
            let line = format!("{} {}", d.name, k.example);
            let sc = Scenario::parse(&with_line(&line)).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert!(sc.to_text().contains(&format!("\n{line}\n")), "{line}");
            let mut set = Scenario::default();
            set.set(&format!("{}.{}", d.name, k.example)).unwrap();
            assert_eq!(set, sc, "--set {}.{}", d.name, k.example);
        }
    }
}

/// The canonical text prints directives in the table's order, whatever
/// order the text had.
#[test]
fn the_canonical_text_follows_the_table() {
    let lines: Vec<&str> = DIRECTIVES.iter().map(|d| d.example).rev().collect();
    let sc = Scenario::parse(&with_line(&lines.join("\n"))).unwrap();
    let order: Vec<usize> = sc
        .to_text()
        .lines()
        .filter_map(|l| {
            let first = l.split(' ').next()?;
            DIRECTIVES.iter().position(|d| d.name == first)
        })
        .collect();
    assert_eq!(order, (0..DIRECTIVES.len()).collect::<Vec<_>>());
}

#[test]
fn set_takes_the_settable_entries_only() {
    for d in DIRECTIVES {
        let mut sc = Scenario::default();
        let value = d.example.split_once(' ').map_or("", |(_, v)| v);
        let r = match d.keys.first() {
            Some(k) => sc.set(&format!("{}.{}", d.name, k.example)),
            None => sc.set(&format!("{}={value}", d.name)),
        };
        assert_eq!(r.is_ok(), d.settable, "{}: {r:?}", d.name);
        if let Err(e) = r {
            assert!(e.hint.contains("settable keys: engine"), "{e}");
        }
    }
    let e = Scenario::default().set("hz.x=1").unwrap_err();
    assert!(e.message.contains("has no sub-keys"), "{e}");
}
