//! The simulation Web Worker and its message protocol.
//!
//! The page sends scenario text; the worker parses it, runs the simulator
//! and answers with a summary per task name (or the parse error, with its
//! position, so the page can show it and keep the last good result).
//! Messages cross with `serde-wasm-bindgen` (the [`Swb`] codec) rather
//! than gloo's default bincode, so they are plain JS objects in devtools.

use eevdf_scenario::report;
use eevdf_scenario::scenario::Scenario;
use gloo::worker::{Codec, HandlerId, Worker, WorkerScope};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// A request from the page. `id` lets the page drop answers to stale
/// requests after an edit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: u32,
    pub scenario: String,
}

/// Latency summary of one task name, in µs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub name: String,
    pub tasks: u32,
    pub samples: u64,
    pub cpu_ms: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

/// What the worker computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    Done {
        rows: Vec<Row>,
        sim_ns: u64,
        events: u64,
        /// The `eevdf.result.v1` JSON, byte-identical to the CLI's.
        json: String,
    },
    Invalid {
        line: usize,
        column: usize,
        message: String,
        hint: String,
    },
}

/// The worker's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: u32,
    pub outcome: Outcome,
}

/// Latencies in the result rows are the JSON's: µs rounded to 3 decimals.
fn us(ns: u64) -> f64 {
    (ns as f64 / 1000.0 * 1000.0).round() / 1000.0
}

/// Computes a response; shared by the worker and native tests.
pub fn answer(req: &Request) -> Response {
    let outcome = match Scenario::parse(&req.scenario) {
        Err(e) => Outcome::Invalid {
            line: e.line,
            column: e.column,
            message: e.message,
            hint: e.hint,
        },
        Ok(sc) => {
            let r = eevdf_sim::simulate(sc.sim.clone());
            let rows = r
                .by_name
                .iter()
                .map(|n| Row {
                    name: n.name.clone(),
                    tasks: n.tasks,
                    samples: n.latency.samples,
                    cpu_ms: n.cpu_ns as f64 / 1e6,
                    p50: us(n.latency.p50),
                    p90: us(n.latency.p90),
                    p99: us(n.latency.p99),
                    p99_9: us(n.latency.p99_9),
                    max: us(n.latency.max),
                })
                .collect();
            Outcome::Done {
                rows,
                sim_ns: r.sim_ns,
                events: r.events,
                json: report::json(&sc.to_text(), &r),
            }
        }
    };
    Response {
        id: req.id,
        outcome,
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
        // Our message types are plain structs of strings and numbers;
        // serialising them cannot fail.
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
    fn answer_runs_the_default_preset_like_the_cli() {
        let text = eevdf_scenario::presets::preset("default").unwrap().text;
        assert_eq!(text, include_str!("../../../tests/golden/default.scn"));
        let r = answer(&Request {
            id: 7,
            scenario: text.to_string(),
        });
        assert_eq!(r.id, 7);
        let Outcome::Done { rows, json, .. } = r.outcome else {
            panic!("default preset must run");
        };
        assert_eq!(rows[0].name, "ct");
        assert!(rows[0].samples > 0);
        assert_eq!(json, include_str!("../../../tests/golden/default.json"));
    }

    #[test]
    fn bad_scenarios_come_back_with_their_position() {
        let r = answer(&Request {
            id: 1,
            scenario: "eevdf-scenario v1\nhz 7\nend\n".into(),
        });
        match r.outcome {
            Outcome::Invalid { line, column, .. } => assert_eq!((line, column), (2, 4)),
            o => panic!("{o:?}"),
        }
    }
}
