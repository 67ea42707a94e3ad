//! The simulation Web Worker and its message protocol.
//!
//! The page sends scenario text on one of two lanes (the live
//! configuration and the pinned A/B baseline); the worker parses it and
//! runs the simulator in chunks of a few tens of milliseconds, yielding
//! to its event loop between chunks so a newer request on the same lane
//! replaces the running one at once (no queue of stale runs, no extra
//! workers). The run itself is `eevdf_driver::live::LiveRun` on the
//! worker's clock: while it goes on, the worker streams its [`Live`]
//! snapshots several times a second; the last answer is `Done`, with the
//! `eevdf.result.v1` JSON, byte-identical to the CLI's.
//! Messages cross with `serde-wasm-bindgen` (the [`Swb`] codec) rather
//! than gloo's default bincode, so they are plain JS objects in devtools.

use eevdf_driver::live::{Chunk, Finished, Live, LiveRun};
use eevdf_driver::teach::{session_command, TeachCmd, TeachView, Teacher};
use eevdf_scenario::ParseError;
use gloo::worker::{Codec, HandlerId, Worker, WorkerScope};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// Which conversation a request or an answer belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lane {
    /// The live configuration.
    Live,
    /// The pinned baseline (A in the A/B table).
    Baseline,
    /// Teaching mode's commands and answers.
    Teach,
}

impl Lane {
    /// The index of a run lane's state (`None`: teaching runs no
    /// scenario of its own).
    pub fn run_slot(self) -> Option<usize> {
        match self {
            Lane::Live => Some(0),
            Lane::Baseline => Some(1),
            Lane::Teach => None,
        }
    }
}

const LANES: usize = 2;

/// What a request asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// Run this scenario text (it replaces the lane's run).
    Run(String),
    /// Stop the lane's run; its last snapshot stays the page's.
    Cancel,
    /// A teaching-mode command.
    Teach(TeachCmd),
}

/// A request from the page. `id` lets the page drop answers to stale
/// requests after an edit; a new request on a run lane cancels that
/// lane's run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: u32,
    pub lane: Lane,
    pub job: Job,
}

/// What the worker computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    /// A snapshot while the run goes on.
    Progress(Live),
    Done(Box<Finished>),
    Invalid {
        line: usize,
        column: usize,
        message: String,
        hint: String,
    },
    /// Teaching mode's picture after a command.
    Teach(Box<TeachView>),
    /// A teaching command could not be carried out.
    TeachError(String),
}

/// The worker's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: u32,
    pub lane: Lane,
    pub outcome: Outcome,
}

impl Outcome {
    /// A scenario that does not parse, with its position.
    fn invalid(e: ParseError) -> Outcome {
        Outcome::Invalid {
            line: e.line,
            column: e.column,
            message: e.message,
            hint: e.hint,
        }
    }
}

/// Runs a request to its end in one go (tests, and callers without an
/// event loop); returns the last response.
pub fn answer(id: u32, lane: Lane, scenario: &str) -> Response {
    let outcome = match LiveRun::new(scenario) {
        Ok(run) => Outcome::Done(Box::new(run.finish())),
        Err(e) => Outcome::invalid(e),
    };
    Response { id, lane, outcome }
}

/// A lane's run: the request it answers and who asked.
#[derive(Debug)]
struct LaneRun {
    run: LiveRun,
    id: u32,
    lane: Lane,
    who: HandlerId,
}

/// Wall-clock milliseconds (the worker's only clock; never reaches the
/// simulation).
fn wall_ms() -> f64 {
    js_sys::Date::now()
}

/// A macrotask boundary: lets queued messages in before the next chunk.
/// A `MessageChannel` round trip, not `setTimeout(0)`, which browsers
/// clamp to 4 ms when nested.
async fn yield_to_event_loop() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Ok(ch) = web_sys::MessageChannel::new() {
            ch.port1().set_onmessage(Some(&resolve));
            let _ = ch.port2().post_message(&JsValue::NULL);
        } else {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// The worker's internal message: run the next chunk.
#[derive(Debug)]
pub struct Step;

/// The worker itself: at most one run per lane.
#[derive(Debug, Default)]
pub struct SimWorker {
    runs: [Option<LaneRun>; LANES],
    /// Teaching mode's session, driven command by command.
    teacher: Option<Teacher>,
    scheduled: bool,
    turn: usize,
}

impl SimWorker {
    fn schedule(&mut self, scope: &WorkerScope<Self>) {
        if !self.scheduled && self.runs.iter().any(Option::is_some) {
            self.scheduled = true;
            scope.send_future(async {
                yield_to_event_loop().await;
                Step
            });
        }
    }
}

impl Worker for SimWorker {
    type Message = Step;
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        SimWorker::default()
    }

    fn update(&mut self, scope: &WorkerScope<Self>, _msg: Step) {
        self.scheduled = false;
        // Lanes take turns, so a baseline run never starves the live one.
        let lane = (0..LANES)
            .map(|i| (self.turn + i) % LANES)
            .find(|&l| self.runs[l].is_some());
        if let Some(l) = lane {
            self.turn = (l + 1) % LANES;
            let r = self.runs[l].as_mut().expect("found above");
            let (id, lane, who) = (r.id, r.lane, r.who);
            let outcome = match r.run.chunk(&wall_ms) {
                Chunk::Quiet => None,
                Chunk::Progress(live) => Some(Outcome::Progress(live)),
                Chunk::Finished(done) => {
                    self.runs[l] = None;
                    Some(Outcome::Done(done))
                }
            };
            if let Some(outcome) = outcome {
                scope.respond(who, Response { id, lane, outcome });
            }
        }
        self.schedule(scope);
    }

    fn received(&mut self, scope: &WorkerScope<Self>, msg: Self::Input, id: HandlerId) {
        let answer = |outcome| Response {
            id: msg.id,
            lane: msg.lane,
            outcome,
        };
        let slot = msg.lane.run_slot();
        match (&msg.job, slot) {
            (Job::Teach(cmd), _) => scope.respond(id, answer(teach(&mut self.teacher, cmd))),
            (Job::Run(_) | Job::Cancel, None) => scope.respond(
                id,
                answer(Outcome::TeachError(
                    "runs go on the live or the baseline lane".into(),
                )),
            ),
            // A new request on a lane cancels its run: dropping it is all.
            (Job::Cancel, Some(l)) => self.runs[l] = None,
            (Job::Run(text), Some(l)) => {
                self.runs[l] = None;
                match LiveRun::new(text) {
                    Ok(run) => {
                        self.runs[l] = Some(LaneRun {
                            run,
                            id: msg.id,
                            lane: msg.lane,
                            who: id,
                        })
                    }
                    Err(e) => scope.respond(id, answer(Outcome::invalid(e))),
                }
                self.schedule(scope);
            }
        }
    }
}

/// Carries out a teaching command on the session (opening one if asked).
pub fn teach(session: &mut Option<Teacher>, cmd: &TeachCmd) -> Outcome {
    match session_command(session, cmd) {
        Ok(v) => Outcome::Teach(Box::new(v)),
        Err(e) => Outcome::TeachError(e),
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
        let r = answer(7, Lane::Live, text);
        assert_eq!((r.id, r.lane), (7, Lane::Live));
        let Outcome::Done(done) = r.outcome else {
            panic!("default preset must run");
        };
        assert_eq!(
            done.json,
            include_str!("../../../tests/golden/default.json")
        );
    }

    #[test]
    fn bad_scenarios_come_back_with_their_position() {
        let r = answer(7, Lane::Baseline, "eevdf-scenario v1\nhz 7\nend\n");
        match r.outcome {
            Outcome::Invalid { line, column, .. } => assert_eq!((line, column), (2, 4)),
            o => panic!("{o:?}"),
        }
    }
}
