//! Browser tests (wasm-bindgen-test in headless Chromium): the app mounts,
//! spawns its worker and renders the worker's answer.
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
}

#[wasm_bindgen_test]
fn worker_messages_round_trip_through_the_codec() {
    use eevdf_web::worker::{Request, Swb};
    use gloo::worker::Codec;
    let req = Request {
        id: 3,
        nices: vec![-5, 19],
    };
    let js = Swb::encode(req.clone());
    let back: Request = Swb::decode(js);
    assert_eq!(back, req);
}
