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
    use eevdf_web::worker::{Request, Swb};
    use gloo::worker::Codec;
    let req = Request {
        id: 3,
        scenario: "eevdf-scenario v1\nend\n".into(),
    };
    let js = Swb::encode(req.clone());
    let back: Request = Swb::decode(js);
    assert_eq!(back, req);
}

/// The committed golden JSON (made natively by the CLI) is reproduced
/// byte for byte by the wasm build.
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
    for (scn, want) in cases {
        let sc = eevdf_scenario::scenario::Scenario::parse(scn).expect("golden scenario parses");
        let r = eevdf_sim::simulate(sc.sim.clone());
        let got = eevdf_scenario::report::json(&sc.to_text(), &r);
        assert_eq!(got, want, "wasm differs from native for:\n{scn}");
    }
}
