//! A/B that travels (issue 16): a scenario with a `baseline` block runs
//! both sides, and its mail pastes back, raw or quoted, into `eevdf run -`
//! to the same table, link and JSON.

use std::io::Write;
use std::process::{Command, Stdio};

fn eevdf(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn eevdf");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const AB: &str = "eevdf-scenario v1
machine up
kernel v7.2
duration 2s
task ct kind=timer period=1ms run=20us slice=100us
task hog count=2 kind=hog
baseline
features NO_PREEMPT_SHORT
end
";

#[test]
fn the_mail_pastes_back_to_the_same_ab_state() {
    let (code, mail, err) = eevdf(&["run", "-", "--format", "mail"], AB);
    assert_eq!(code, 0, "{err}");
    assert!(
        mail.contains("\nbaseline\nfeatures NO_PREEMPT_SHORT\nend\n"),
        "{mail}"
    );
    assert!(
        mail.contains("Simulated by eevdf-playground engine 0.12, not a kernel run."),
        "{mail}"
    );
    assert!(mail.contains("NO_PREEMPT_SHORT| PREEMPT_SHORT"), "{mail}");
    assert!(mail.contains("change in %: + is better"), "{mail}");
    let link = mail.lines().last().unwrap();
    assert!(
        link.ends_with(";baseline;features+NO_PREEMPT_SHORT"),
        "{link}"
    );
    for l in mail.lines().filter(|l| *l != link) {
        assert!(l.chars().count() <= 72, "{l}");
    }
    // Raw, quoted with prose, and as the bare link.
    let quoted = format!(
        "Here is what I ran:\n\n{}",
        mail.lines().map(|l| format!("> {l}\n")).collect::<String>()
    );
    for paste in [mail.as_str(), quoted.as_str()] {
        let (code, again, err) = eevdf(&["run", "-", "--format", "mail"], paste);
        assert_eq!(code, 0, "{err}");
        assert_eq!(again, mail);
    }
    let (code, again, err) = eevdf(&["run", link, "--format", "mail"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(again, mail);
}

#[test]
fn compare_json_and_check_see_both_sides() {
    let (_, lkml, _) = eevdf(&["run", "-", "--format", "lkml"], AB);
    let (code, cmp, err) = eevdf(&["compare", "-"], AB);
    assert_eq!(code, 0, "{err}");
    assert_eq!(cmp, lkml, "compare of a pair prints run's table");
    let (_, json, _) = eevdf(&["run", "-", "--format", "json"], AB);
    let baseline = json
        .find(",\"baseline\":{\"schema\":\"eevdf.result.v1\"")
        .expect("baseline member");
    // B's part is the plain run of B, A's the plain run of A.
    let b_only = AB.replace("baseline\nfeatures NO_PREEMPT_SHORT\n", "");
    let (_, b_json, _) = eevdf(&["run", "-", "--format", "json"], &b_only);
    assert_eq!(
        &json[..baseline],
        b_json.trim_end().strip_suffix('}').unwrap()
    );
    let a_only = b_only.replace("end\n", "features NO_PREEMPT_SHORT\nend\n");
    let (_, a_json, _) = eevdf(&["run", "-", "--format", "json"], &a_only);
    assert!(json
        .trim_end()
        .ends_with(&format!("{}}}", a_json.trim_end())));
    let (_, canon, _) = eevdf(&["check", "-"], AB);
    assert!(
        canon.ends_with("baseline\nfeatures NO_PREEMPT_SHORT\nend\n"),
        "{canon}"
    );
    // An error in A points at the block's line.
    let (code, _, err) = eevdf(
        &["check", "-"],
        &AB.replace("features NO_PREEMPT_SHORT", "hz 7"),
    );
    assert_eq!(code, 2);
    assert!(err.contains(":8:") && err.contains("baseline A:"), "{err}");
}
