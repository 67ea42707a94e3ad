//! Browser tests (wasm-bindgen-test in headless Chromium): the app mounts,
//! and the simulator gives byte-identical results in wasm and natively.
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn app_frame_mounts() {
    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    yew::Renderer::<eevdf_web::App>::with_root(root.clone()).render();
    gloo::timers::future::sleep(Duration::from_millis(20)).await;
    let text = root.text_content().unwrap_or_default();
    assert!(text.contains("eevdf-playground"), "{text}");
    assert!(text.contains("Results"), "{text}");
    assert!(text.contains("PREEMPT_SHORT"), "feature switches: {text}");
    // The editor holds a scenario (the default preset, or the link in
    // the test page's URL if it had one).
    use wasm_bindgen::JsCast;
    let editor = root
        .query_selector("textarea")
        .unwrap()
        .expect("scenario editor")
        .dyn_into::<web_sys::HtmlTextAreaElement>()
        .unwrap();
    assert!(
        editor.value().starts_with("eevdf-scenario v1"),
        "{}",
        editor.value()
    );
}

#[wasm_bindgen_test]
fn worker_messages_round_trip_through_the_codec() {
    use eevdf_driver::moment::{Moment, Verdict};
    use eevdf_driver::teach::TeachCmd;
    use eevdf_web::worker::{Job, Lane, Request, Swb};
    use gloo::worker::Codec;
    for (lane, job) in [
        (Lane::Baseline, Job::Run("eevdf-scenario v1\nend\n".into())),
        (Lane::Live, Job::Cancel),
        (Lane::Teach, Job::Teach(TeachCmd::NextPick)),
        (
            Lane::Teach,
            Job::Teach(TeachCmd::Until {
                moment: Moment::AnyOf(
                    vec![Moment::woke("ct.0"), Moment::wakeup(Verdict::ShorterSlice)].into(),
                ),
            }),
        ),
    ] {
        let req = Request { id: 3, lane, job };
        let js = Swb::encode(req.clone());
        let back: Request = Swb::decode(js);
        assert_eq!(back, req);
    }
}

/// The committed golden JSON (made natively by the CLI) is reproduced
/// byte for byte by the worker's runner in wasm.
#[wasm_bindgen_test]
fn golden_runs_are_byte_identical_in_wasm() {
    let cases = [
        (
            include_str!("../../../tests/golden/default.scn"),
            include_str!("../../../tests/golden/default.json"),
        ),
        (
            include_str!("../../../tests/golden/two-tasks.scn"),
            include_str!("../../../tests/golden/two-tasks.json"),
        ),
        (
            include_str!("../../../tests/golden/preempt-short.scn"),
            include_str!("../../../tests/golden/preempt-short.json"),
        ),
        (
            include_str!("../../../tests/golden/hackbench-groups.scn"),
            include_str!("../../../tests/golden/hackbench-groups.json"),
        ),
        (
            include_str!("../../../tests/golden/schbench-lazy.scn"),
            include_str!("../../../tests/golden/schbench-lazy.json"),
        ),
        (
            include_str!("../../../tests/golden/legacy-v612.scn"),
            include_str!("../../../tests/golden/legacy-v612.json"),
        ),
    ];
    use eevdf_driver::live::{Chunk, LiveRun};
    for (scn, want) in cases {
        // Through the worker's own entry point: chunks on the browser's
        // clock, snapshots in between, as the page gets them.
        let mut run = LiveRun::new(scn).expect("golden scenario parses");
        let clock = || js_sys::Date::now();
        let done = loop {
            if let Chunk::Finished(r) = run.chunk(&clock) {
                break r;
            }
        };
        assert_eq!(done.json, want, "wasm differs from native for:\n{scn}");
    }
}

/// The machine view lays out CPU cards by topology, and activating a
/// template then a CPU (the keyboard and click path) adds a pinned task.
#[wasm_bindgen_test]
async fn machine_view_places_a_template_on_a_cpu() {
    use std::cell::RefCell;
    use std::rc::Rc;

    use eevdf_scenario::scenario::Scenario;
    use eevdf_web::machine::{MachineView, Props};
    use wasm_bindgen::JsCast;
    use yew::Callback;

    let document = gloo::utils::document();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let sc = Scenario::parse("eevdf-scenario v1\nmachine laptop-4c8t\nend\n").unwrap();
    let got: Rc<RefCell<Option<Scenario>>> = Rc::default();
    let sink = got.clone();
    let props = Props {
        scenario: sc,
        live: None,
        on_change: Callback::from(move |s| *sink.borrow_mut() = Some(s)),
    };
    yew::Renderer::<MachineView>::with_root_and_props(root.clone(), props).render();
    gloo::timers::future::sleep(Duration::from_millis(20)).await;
    let cards = root
        .query_selector_all("[data-testid^=cpu-]")
        .unwrap()
        .length();
    assert_eq!(cards, 8, "4 cores x 2 threads");
    let smt = root.query_selector_all(".core.smt").unwrap().length();
    assert_eq!(smt, 4, "siblings grouped by core");
    let click = |sel: &str| {
        root.query_selector(sel)
            .unwrap()
            .unwrap_or_else(|| panic!("{sel}"))
            .dyn_into::<web_sys::HtmlElement>()
            .unwrap()
            .click();
    };
    click("[data-template=hog]");
    gloo::timers::future::sleep(Duration::from_millis(20)).await;
    click("[data-testid=cpu-5]");
    gloo::timers::future::sleep(Duration::from_millis(20)).await;
    let sc = got.borrow().clone().expect("a drop changes the scenario");
    assert_eq!(sc.sim.tasks.len(), 1);
    assert_eq!(sc.sim.tasks[0].cpus.as_deref(), Some(&[5][..]));
}

/// Teaching answers cross the worker codec: every number in them fits
/// a JS number (vruntimes are sent relative to V).
#[wasm_bindgen_test]
fn teaching_views_cross_the_codec() {
    use eevdf_driver::teach::TeachCmd;
    use eevdf_web::worker::{teach, Lane, Outcome, Response, Swb};
    use gloo::worker::Codec;
    let mut session = None;
    let text = eevdf_scenario::presets::preset("preempt-short")
        .unwrap()
        .text;
    for cmd in [
        TeachCmd::Open {
            scenario: text.to_string(),
            cpu: 0,
        },
        TeachCmd::RunTo { ns: 30_000_000 },
        TeachCmd::NextPick,
    ] {
        let outcome = teach(&mut session, &cmd);
        assert!(matches!(outcome, Outcome::Teach(_)), "{outcome:?}");
        let resp = Response {
            id: 1,
            lane: Lane::Teach,
            outcome,
        };
        let back: Response = Swb::decode(Swb::encode(resp.clone()));
        assert_eq!(back, resp);
    }
}
