//! The task-key table's own tests: its invariants, the generated
//! reference, and a test-only key that shows a new key is one entry.

use std::cell::Cell;

use super::*;

thread_local! {
    /// This test thread reads [`WITH_TEST_KEY`] instead of [`TASK_KEYS`].
    static TEST_KEY_ON: Cell<bool> = const { Cell::new(false) };
}

pub(super) fn test_key_on() -> bool {
    TEST_KEY_ON.with(Cell::get)
}

/// A key that exists only in this test: `slice_us`, the custom slice in
/// whole microseconds. It is one table entry; the simulator field it
/// sets (`TaskSpec::slice_ns`) is the one `slice` sets.
const TEST_KEY: TaskKey = TaskKey {
    name: "slice_us",
    kinds: KINDS,
    value: "1-1000000",
    default: "the base slice",
    example: "2000",
    help: "The custom slice in microseconds (test only).",
    editor: true,
    read: |v, t| {
        t.slice_ns = Some(Nanos::from(v.num(1, 1_000_000)?) * US);
        Ok(())
    },
    print: |t| {
        t.slice_ns
            .filter(|s| s % US == 0)
            .map(|s| (s / US).to_string())
    },
};

/// [`TASK_KEYS`] with [`TEST_KEY`] after `slice`.
pub(super) static WITH_TEST_KEY: [TaskKey; TASK_KEYS.len() + 1] = {
    let mut out = [TEST_KEY; TASK_KEYS.len() + 1];
    let (mut from, mut to) = (0, 0);
    while from < TASK_KEYS.len() {
        out[to] = TASK_KEYS[from];
        to += 1;
        if same(TASK_KEYS[from].name, "slice") {
            to += 1; // the test key's slot
        }
        from += 1;
    }
    out
};

/// `a == b`, in a const context.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Runs `f` with the test key in the table.
fn with_test_key<T>(f: impl FnOnce() -> T) -> T {
    TEST_KEY_ON.with(|on| on.set(true));
    let out = f();
    TEST_KEY_ON.with(|on| on.set(false));
    out
}

const HEAD: &str = "eevdf-scenario v1\nmachine smp8\ngroup /test-B weight=100\n";

fn parse(tasks: &str) -> Result<Scenario, ParseError> {
    Scenario::parse(&format!("{HEAD}{tasks}\nend\n"))
}

#[test]
fn the_test_key_slot_is_after_slice() {
    let names: Vec<&str> = WITH_TEST_KEY.iter().map(|k| k.name).collect();
    let at = names.iter().position(|n| *n == "slice").unwrap();
    assert_eq!(names[at + 1], "slice_us");
    assert_eq!(names.iter().filter(|n| **n == "slice_us").count(), 1);
}

#[test]
fn a_new_key_is_one_table_entry() {
    // Without the entry the key is unknown ...
    let line = "task t kind=hog slice_us=2000";
    let e = parse(line).unwrap_err();
    assert!(e.message.contains("unknown key `slice_us`"), "{e}");
    with_test_key(|| {
        // ... with it the parser reads it into the simulator's field,
        let sc = parse(line).unwrap();
        assert_eq!(sc.sim.tasks[0].slice_ns, Some(2 * MS));
        // the canonical printer prints it and the text reads back,
        let text = sc.to_text();
        assert!(
            text.contains("task t kind=hog slice=2ms slice_us=2000\n"),
            "{text}"
        );
        assert_eq!(Scenario::parse(&text).unwrap(), sc);
        // bad values get the table's positioned errors,
        let e = parse("task t kind=hog slice_us=0").unwrap_err();
        assert_eq!((e.line, e.column), (4, 26), "{e}");
        // hints list it and suggest it for a typo,
        let e = parse("task t kind=hog slice_uz=2").unwrap_err();
        assert!(e.hint.contains("did you mean `slice_us`"), "{}", e.hint);
        // `--set` sets it,
        let mut set = sc.clone();
        set.set("task.t.slice_us=3000").unwrap();
        assert_eq!(set.sim.tasks[0].slice_ns, Some(3 * MS));
        // the editor offers it and the reference documents it.
        assert!(keys_for("hog").any(|k| k.name == "slice_us" && k.editor));
        assert!(reference().contains("| `slice_us` |"));
        // The simulator runs it as the slice it sets.
        let via_slice = parse("task t kind=hog slice=2ms").unwrap();
        assert_eq!(sc.sim, via_slice.sim);
    });
    assert!(parse(line).is_err(), "the test key stays in its test");
}

/// Each kind's required keys but `skip`, with their examples, so that
/// a line parses once `skip` is given.
fn required_but(kind: &str, skip: &str) -> String {
    let mut s: String = keys_for(kind)
        .filter(|k| k.required() && k.name != "kind" && k.name != skip)
        .map(|k| format!(" {}={}", k.name, k.example))
        .collect();
    if kind == "periodic" && !matches!(skip, "sleep" | "period") {
        s.push_str(" sleep=1ms");
    }
    s
}

fn required_for(kind: &str) -> String {
    required_but(kind, "")
}

#[test]
fn every_example_parses_and_prints_back() {
    for &kind in KINDS {
        for key in keys_for(kind).filter(|k| k.name != "kind") {
            let line = format!(
                "task t kind={kind}{} {}={}",
                required_but(kind, key.name),
                key.name,
                key.example
            );
            let sc = parse(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
            let spec = &sc.sim.tasks[0];
            let printed = key.value_of(spec);
            assert!(printed.is_some(), "{line}: the example is the default");
            assert_eq!(
                Scenario::parse(&sc.to_text()).unwrap(),
                sc,
                "{line} does not read back"
            );
        }
    }
}

#[test]
fn defaults_are_left_out_and_required_keys_are_required() {
    for &kind in KINDS {
        let line = format!("task t kind={kind}{}", required_for(kind));
        let sc = parse(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let kvs = task_kvs(&sc.sim.tasks[0]);
        let printed: Vec<&str> = kvs.iter().map(|(k, _)| *k).collect();
        for key in keys_for(kind) {
            let shown = printed.contains(&key.name);
            let expected = key.required() || (kind == "periodic" && key.name == "sleep");
            assert_eq!(shown, expected, "{kind}.{} with defaults", key.name);
        }
        for key in keys_for(kind).filter(|k| k.required() && k.name != "kind") {
            let without = line.replace(&format!(" {}={}", key.name, key.example), "");
            let e = parse(&without).unwrap_err();
            assert!(e.message.contains(&format!("needs `{}`", key.name)), "{e}");
        }
    }
}

#[test]
fn a_kind_names_each_key_once_kind_and_count_first() {
    for &kind in KINDS {
        let names: Vec<&str> = keys_for(kind).map(|k| k.name).collect();
        assert_eq!(names[..2], ["kind", "count"], "{kind}");
        for (i, n) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(n), "{kind} has `{n}` twice");
        }
    }
}

#[test]
fn set_task_key_errors_point_into_the_argument() {
    let sc = parse("task ct kind=timer period=1ms").unwrap();
    let err = |arg: &str| {
        let mut s = sc.clone();
        let e = s.set(arg).unwrap_err();
        assert_eq!(s, sc, "{arg} changed the scenario");
        (e.column, e.message)
    };
    assert_eq!(err("task.cx.slice=2ms"), (6, "no task `cx`".into()));
    assert_eq!(
        err("task.ct.slise=2ms"),
        (9, "unknown key `slise` for a timer task".into())
    );
    assert_eq!(err("task.ct.slice=2").0, 15);
    assert_eq!(err("task.ct.kind=hog").1, "a task's kind cannot be set");
    assert_eq!(
        err("task.ct.cpus=9").1,
        "task `ct` uses CPU 9, but machine smp8 has CPUs 0-7"
    );
    let mut ok = sc.clone();
    ok.set("task.ct.cpus=1").unwrap();
    assert!(ok
        .to_text()
        .contains("task ct kind=timer period=1ms cpus=1\n"));
}

#[test]
fn the_reference_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario-keys.md");
    let want = reference();
    if std::env::var_os("UPDATE_SCENARIO_KEYS").is_some() {
        std::fs::write(path, &want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "docs/scenario-keys.md is stale: run `make scenario-keys`"
    );
}
