//! `--set task.NAME.KEY=VALUE` (issue 18 item 3): an edit of one task key
//! from the command line is the same scenario as the edited text, and a
//! bad name or key is exit 2 with the column inside the argument.

use std::process::{Command, Output};

fn eevdf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(args)
        .output()
        .expect("spawn eevdf")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

#[test]
fn set_task_key_edits_that_task_only() {
    let plain = stdout(&eevdf(&["check", "default"]));
    let set = stdout(&eevdf(&["check", "default", "--set", "task.ct.slice=2ms"]));
    let edited = plain.replace(
        "task ct kind=timer period=1ms slice=500us",
        "task ct kind=timer period=1ms slice=2ms",
    );
    assert_ne!(plain, edited, "the default preset's ct line moved");
    assert_eq!(set, edited);
}

#[test]
fn set_task_key_runs_like_the_edited_text() {
    let dir = std::env::temp_dir().join(format!("eevdf-set-task-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("edited.txt");
    let plain = stdout(&eevdf(&["check", "default", "--duration", "300ms"]));
    std::fs::write(&file, plain.replace("count=4", "count=2")).unwrap();
    let from_file = stdout(&eevdf(&["run", file.to_str().unwrap(), "--format", "json"]));
    let from_set = stdout(&eevdf(&[
        "run",
        "default",
        "--duration",
        "300ms",
        "--set",
        "task.hog.count=2",
        "--format",
        "json",
    ]));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(from_set.contains("\"schema\""), "{from_set}");
    assert_eq!(from_file, from_set);
}

#[test]
fn set_task_key_errors_point_into_the_argument() {
    for (arg, wants) in [
        (
            "task.cx.slice=2ms",
            "--set task.cx.slice=2ms: column 6: no task `cx` (hint: did you mean `ct`?",
        ),
        ("task.ct.kind=hog", "--set task.ct.kind=hog: column 9:"),
        ("task.ct.slise=2ms", "--set task.ct.slise=2ms: column 9:"),
        ("task.ct.slice=2qs", "--set task.ct.slice=2qs: column 15:"),
    ] {
        let o = eevdf(&["check", "default", "--set", arg]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(wants), "{arg}: {err}");
        assert!(o.stdout.is_empty(), "{arg}: printed a scenario");
    }
}
