use super::*;
use proptest::prelude::*;

fn read(text: &str) -> Regime {
    regime_reader(text.as_bytes()).unwrap()
}

/// Quantiles are bucket floors: within 1/32 below.
fn near(got: Option<u64>, want: u64) -> bool {
    got.is_some_and(|g| g <= want && want - g <= want / 32)
}

#[test]
fn buckets_are_ordered_close_and_their_own_floors() {
    let mut last = 0;
    for v in (0..200_000u64).chain([1 << 40, u64::MAX / 3, u64::MAX]) {
        let b = bucket(v);
        assert!(b < BUCKETS && b >= last, "{v}: bucket {b} after {last}");
        last = b;
        let f = floor(b);
        assert!(
            f <= v && (v - f) as f64 <= v as f64 / 32.0,
            "{v}: floor {f}"
        );
    }
    for b in 0..BUCKETS {
        assert_eq!(bucket(floor(b)), b, "bucket {b}");
    }
}

proptest! {
    #[test]
    fn quantiles_are_near_the_exact_ones(mut v in prop::collection::vec(0u64..50_000_000, 1..400), q in 0.0f64..1.0) {
        let mut d = Durations::default();
        for &x in &v {
            d.add(x);
        }
        v.sort_unstable();
        let rank = ((q * v.len() as f64).ceil() as usize).max(1);
        let exact = v[rank - 1];
        let got = d.quantile(q).unwrap();
        prop_assert!(got <= exact && exact - got <= exact / 32 + 1, "q {q}: {got} against {exact}");
        prop_assert_eq!(d.quantile(1.0), v.last().copied());
    }
}

#[test]
fn groups_drop_a_numeric_suffix() {
    assert_eq!(group_of("hb.11"), "hb");
    assert_eq!(group_of("hb"), "hb");
    assert_eq!(group_of("kworker/0:1"), "kworker/0:1");
    assert_eq!(group_of("a.b"), "a.b");
    assert_eq!(group_of(".3"), ".3");
    assert_eq!(group_of("x."), "x.");
}

#[test]
fn the_cpu_is_the_last_bracket_of_the_head() {
    assert_eq!(cpu_of("   a[1]-5     [003] d..2.     1.0"), Some(3));
    assert_eq!(cpu_of("hb.0-10 [000] d..2. 1.0"), Some(0));
    assert_eq!(cpu_of("no cpu here 1.0"), None);
}

/// A line of ftrace text: `task-pid [cpu] flags ts: event: body`.
fn ev(task: &str, cpu: u32, ts: &str, event: &str, body: &str) -> String {
    format!("{task:>16} [{cpu:03}] d..2. {ts:>12}: {event}: {body}\n")
}

fn switch(prev: (&str, u32), state: &str, next: (&str, u32)) -> String {
    format!(
        "prev_comm={} prev_pid={} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={} next_prio=120",
        prev.0, prev.1, next.0, next.1
    )
}

/// A `sched_switch` line on `cpu` at `ts` from `prev` to `next`.
fn sw(cpu: u32, ts: &str, prev: (&str, u32), state: &str, next: (&str, u32)) -> String {
    let task = format!("{}-{}", prev.0, prev.1);
    ev(&task, cpu, ts, "sched_switch", &switch(prev, state, next))
}

/// A `sched_waking` or `sched_wakeup` of `comm` (`pid`) logged on `cpu`.
fn wake(cpu: u32, ts: &str, event: &str, comm: &str, pid: u32, target: u32) -> String {
    let body = format!("comm={comm} pid={pid} prio=120 target_cpu={target:03}");
    ev("waker-1", cpu, ts, event, &body)
}

const IDLE0: (&str, u32) = ("swapper/0", 0);
const IDLE1: (&str, u32) = ("swapper/1", 0);

fn trace() -> String {
    [
        "# tracer: nop\n".to_string(),
        sw(0, "1.000000", IDLE0, "R", ("hb.0", 10)),
        wake(0, "1.000010", "sched_waking", "hb.1", 11, 0),
        wake(0, "1.000012", "sched_wakeup", "hb.1", 11, 0),
        sw(0, "1.000020", ("hb.0", 10), "R", ("hb.1", 11)),
        sw(0, "1.000050", ("hb.1", 11), "S", IDLE0),
        // hb.1 last ran on CPU 0; hb.0, now on CPU 1, wakes it there,
        // and the kernel logs the wakeup on the target (its wakelist).
        wake(1, "1.000060", "sched_waking", "hb.1", 11, 0),
        wake(0, "1.000062", "sched_wakeup", "hb.1", 11, 0),
        sw(0, "1.000100", IDLE0, "R", ("hb.1", 11)),
    ]
    .concat()
}

#[test]
fn a_small_trace_reads_as_written() {
    let r = read(&trace());
    assert_eq!(r.span_ns, 100_000);
    assert_eq!(r.cpus[&0].switches, 4);
    assert_eq!(r.cpus[&0].idle_ns, 50_000, "idle from 1.000050 to 1.000100");
    assert_eq!(r.idle_exits, 2);
    assert_eq!(r.switched_out["R"].count, 1);
    assert!(near(r.switched_out["R"].runs.quantile(0.5), 20_000));
    assert_eq!(r.switched_out["S"].runs.quantile(1.0), Some(30_000));
    assert_eq!(r.wakeups, 2);
    assert_eq!(
        (r.wakeups_with_waker, r.wakeups_local),
        (2, 1),
        "the second waker is on CPU 1"
    );
    assert_eq!((r.wakeups_with_last_cpu, r.wakeups_moved), (1, 0));
    let lat = &r.latency["hb"];
    assert_eq!(lat.count(), 2);
    assert_eq!(lat.quantile(1.0), Some(40_000));
    assert!(near(lat.quantile(0.0), 10_000));
}

#[test]
fn a_switch_whose_switch_in_was_not_seen_still_counts() {
    let t = sw(0, "1.000050", ("hb.1", 11), "S", ("swapper/0", 0));
    let r = read(&t);
    assert_eq!(r.switched_out["S"].count, 1);
    assert_eq!(r.switched_out["S"].runs.count(), 0);
}

#[test]
fn a_marked_window_counts_inside_it_and_knows_the_state_at_its_start() {
    let mark = "tracing_mark_write: eevdf-guest window t0=2000000000 t1=2010000000";
    let text = [
        // Before the mark: counted nowhere, but CPU 0 and CPU 1 go idle.
        sw(0, "1.999000", ("hb.0", 10), "S", ("swapper/0", 0)),
        sw(1, "1.999100", ("hb.1", 11), "S", IDLE1),
        format!("            init-1     [000] ...1.     1.999200: {mark}\n"),
        sw(0, "1.999500", ("hb.2", 12), "R", ("swapper/0", 0)),
        // Inside: CPU 0 runs hb.0 for the last 1 ms; CPU 1 stays idle.
        sw(0, "2.009000", IDLE0, "R", ("hb.0", 10)),
        // After t1: not counted.
        sw(0, "2.011000", ("hb.0", 10), "S", ("swapper/0", 0)),
    ]
    .concat();
    let r = read(&text);
    assert_eq!(r.span_ns, 10_000_000);
    assert_eq!(r.cpus[&0].switches, 1);
    assert_eq!(r.cpus[&0].idle_ns, 9_000_000, "idle from t0 to 2.009");
    assert_eq!(r.cpus[&1].idle_ns, 10_000_000, "idle all window");
    assert_eq!(r.idle_exits, 1);
    assert!(r.switched_out.is_empty(), "{:?}", r.switched_out);
}

#[test]
fn idle_time_that_overflows_is_an_error_not_a_panic() {
    let text = [
        sw(0, "0.000000001", ("x", 1), "S", ("swapper/0", 0)),
        sw(0, "18446744073.709551615", IDLE0, "R", ("x", 1)),
        sw(0, "0.000000001", ("x", 1), "S", ("swapper/0", 0)),
        sw(0, "18446744073.709551615", IDLE0, "R", ("x", 1)),
    ]
    .concat();
    let Err(ReadError::Parse(e)) = regime_reader(text.as_bytes()) else {
        panic!("no error");
    };
    assert_eq!(e.line, 4, "{e}");
}

#[test]
fn many_states_and_names_fold_into_other() {
    let mut text = String::new();
    for i in 0..1000 {
        let ts = format!("1.{:06}", i + 1);
        text += &ev(
            "x-1",
            0,
            &ts,
            "sched_switch",
            &switch(("x", 1), &format!("S{i}"), ("x", 1)),
        );
        text += &ev(
            "x-1",
            0,
            &ts,
            "sched_waking",
            &format!("comm=t{i} pid={} target_cpu=000", 100 + i),
        );
        text += &ev(
            "x-1",
            0,
            &ts,
            "sched_switch",
            &switch(("x", 1), "R", (&format!("t{i}"), 100 + i)),
        );
    }
    let r = read(&text);
    assert_eq!(r.switched_out.len(), MAX_STATES + 1);
    assert_eq!(r.latency.len(), MAX_GROUPS + 1);
    let folded = r.switched_out[OTHER].count;
    let total: u64 = r.switched_out.values().map(|s| s.count).sum();
    assert_eq!(total, 2000);
    assert!(folded > 1000 - MAX_STATES as u64, "{folded}");
}

#[test]
fn the_table_puts_two_traces_side_by_side() {
    let r = read(&trace());
    let mut half = r.clone();
    half.span_ns *= 2;
    let t = table(&[("kernel", &r), ("twin", &half)]);
    let words = |label: &str| {
        t.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in\n{t}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(words("")[..], ["kernel", "twin", "B/A"]);
    // 4 switches in 100 us: 40,000 a second; in twice the span half that.
    assert_eq!(
        words("switches /s")[2..],
        ["40,000", "20,000", "0.50"],
        "{t}"
    );
    assert_eq!(
        words("  on the waker's CPU %")[5..],
        ["50.0", "50.0"],
        "{t}"
    );
    assert!(t.contains("10 / 40 / 40"), "{t}");
    assert_eq!(words("idle % by CPU")[4..], ["0:50.0", "0:25.0"], "{t}");
    let one = table(&[("kernel", &r)]);
    assert!(!one.contains("B/A") && !one.contains("0.50"), "{one}");
}

#[test]
fn lost_events_and_control_characters_show_safely() {
    let mut r = read(&trace());
    r.entries = Some((10, 12));
    let t = table(&[("\u{1b}[2J", &r)]);
    assert!(!t.contains('\u{1b}'), "{t}");
    assert!(
        t.lines()
            .any(|l| l.starts_with("events lost") && l.ends_with(" 2")),
        "{t}"
    );
}

#[test]
fn a_malformed_switch_names_its_line() {
    let text = "x-1 [000] d..2. 1.0: sched_switch: prev_comm=x prev_pid=1\n";
    let Err(ReadError::Parse(e)) = regime_reader(text.as_bytes()) else {
        panic!("no error");
    };
    assert_eq!(e.line, 1);
}

#[test]
fn events_that_pass_to_another_cpu_are_handovers_named_by_the_event_before() {
    let probe = |cpu, ts: &str| {
        ev(
            "hb.0-10",
            cpu,
            ts,
            "qsl",
            "(native_queued_spin_lock_slowpath+0x4/0x2d0)",
        )
    };
    let mark = "tracing_mark_write: eevdf-guest window t0=2000000000 t1=2010000000";
    let text = [
        // Before the window: not counted, but CPU 1 had the last event.
        sw(1, "1.999000", IDLE1, "R", ("hb.1", 11)),
        format!("            init-1     [001] ...1.     1.999100: {mark}\n"),
        // CPU 0 after CPU 1 (after the mark), then a spin hands over to
        // CPU 1, and a switch back to CPU 0.
        sw(0, "2.000100", IDLE0, "R", ("hb.0", 10)),
        probe(0, "2.000200"),
        sw(1, "2.000300", ("hb.1", 11), "R", ("hb.2", 12)),
        wake(1, "2.000400", "sched_waking", "hb.3", 13, 1),
        sw(0, "2.000500", ("hb.0", 10), "S", IDLE0),
        // After t1: not counted.
        sw(1, "2.011000", ("hb.2", 12), "S", IDLE1),
    ]
    .concat();
    let r = read(&text);
    assert_eq!(r.handovers, 3, "{:?}", r.handover_after);
    assert_eq!(r.handover_after["tracing_mark_write"], 1);
    assert_eq!(r.handover_after["qsl"], 1);
    assert_eq!(r.handover_after["sched_waking"], 1);
    let t = table(&[("kernel", &r)]);
    assert!(t.contains("CPU handovers /s"), "{t}");
    assert!(t.lines().any(|l| l.starts_with("  after qsl /s")), "{t}");
    // trace(): to CPU 1 for a waking and back.
    let two = read(&trace());
    assert_eq!(two.handovers, 2);
    assert_eq!(two.handover_after["sched_switch"], 1);
    // One CPU: no handover, and no rows for them.
    let solo = read(&sw(0, "1.0", IDLE0, "R", ("x", 1)));
    assert_eq!(solo.handovers, 0);
    assert!(!table(&[("up", &solo)]).contains("handovers"));
}
