//! The simulation Web Worker and its message protocol.
//!
//! Messages cross with `serde-wasm-bindgen` (the [`Swb`] codec) rather than
//! gloo's default bincode, so they are plain JS objects in devtools.

use gloo::worker::{Codec, HandlerId, Worker, WorkerScope};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// A request from the page. `id` lets the page drop answers to stale
/// requests after an edit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: u32,
    pub nices: Vec<i32>,
}

/// The worker's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: u32,
    /// Ideal share of each task, parts per million.
    pub shares_ppm: Vec<u64>,
}

/// Computes a response; shared by the worker and native tests.
pub fn answer(req: &Request) -> Response {
    Response {
        id: req.id,
        shares_ppm: eevdf_sim::shares::ideal_shares_ppm(&req.nices),
    }
}

/// The worker itself.
#[derive(Debug)]
pub struct SimWorker;

impl Worker for SimWorker {
    type Message = ();
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        SimWorker
    }

    fn update(&mut self, _scope: &WorkerScope<Self>, _msg: Self::Message) {}

    fn received(&mut self, scope: &WorkerScope<Self>, msg: Self::Input, id: HandlerId) {
        scope.respond(id, answer(&msg));
    }
}

/// serde-wasm-bindgen codec for gloo-worker.
#[derive(Debug)]
pub struct Swb;

impl Codec for Swb {
    fn encode<I: Serialize>(input: I) -> JsValue {
        // Our message types are plain structs of numbers; serialising them
        // cannot fail.
        serde_wasm_bindgen::to_value(&input).expect("worker message serialises")
    }

    fn decode<O: for<'de> Deserialize<'de>>(input: JsValue) -> O {
        serde_wasm_bindgen::from_value(input).expect("worker message deserialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_keeps_the_request_id() {
        let r = answer(&Request {
            id: 7,
            nices: vec![0, 0],
        });
        assert_eq!(r.id, 7);
        assert_eq!(r.shares_ppm, vec![500_000, 500_000]);
    }
}
