//! What the page keeps of each run lane (live, baseline): the answers
//! of its current request, and the progress line.

use std::rc::Rc;

use crate::worker::{Outcome, Response};
use eevdf_driver::live::{Finished, Live};

/// The latest answers of one lane.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LaneState {
    /// Request id whose answers count, and its scenario text.
    pub(crate) id: u32,
    pub(crate) scenario: String,
    pub(crate) live: Option<Rc<Live>>,
    /// The request `live` answers.
    pub(crate) live_id: u32,
    pub(crate) done: bool,
    pub(crate) lkml: Option<String>,
    /// The finished run's pipe rows (an A/B mail's table).
    pub(crate) rows: Option<Rc<Vec<eevdf_scenario::report::PipeRow>>>,
    pub(crate) invalid: Option<String>,
    /// Stop was pressed: `live` is the last snapshot, no run goes on.
    pub(crate) stopped: bool,
    /// Page clock (ms) when the run was asked for, for the ETA.
    pub(crate) asked_ms: f64,
    /// Page time from the request to `Done`, ms.
    pub(crate) took_ms: f64,
}

impl LaneState {
    pub(crate) fn accept(&self, r: Response) -> Option<LaneState> {
        if r.id != self.id {
            return None; // A superseded request's answer.
        }
        let mut s = self.clone();
        match r.outcome {
            Outcome::Progress(l) => {
                s.live = Some(Rc::new(l));
                s.live_id = r.id;
                s.invalid = None;
            }
            Outcome::Done(done) => {
                let Finished {
                    live, lkml, rows, ..
                } = *done;
                s.live = Some(Rc::new(live));
                s.live_id = r.id;
                s.done = true;
                s.lkml = Some(lkml);
                s.rows = Some(Rc::new(rows));
                s.invalid = None;
            }
            Outcome::Invalid {
                line,
                column,
                message,
                hint,
            } => {
                s.invalid = Some(format!("{line}:{column}: {message} ({hint})"));
                s.done = true;
            }
            // Teaching answers go to the teaching pane, not a lane.
            Outcome::Teach(_) | Outcome::TeachError(_) => return None,
        }
        Some(s)
    }
}

/// The page's clock, ms.
pub(crate) fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// "2.0 of 120 s simulated, about 14 s left" while a run goes; the ETA
/// assumes the rest goes as fast as what is done (page clock since the
/// request, snapshots and drawing included).
pub(crate) fn progress_note(live: &Live, done: bool, stopped: bool, elapsed_ms: f64) -> String {
    let (at, of) = (live.sim_ns as f64 / 1e9, live.duration_ns as f64 / 1e9);
    if stopped {
        return format!("Stopped at {at:.2} of {of:.1} s simulated.");
    }
    if done {
        return if elapsed_ms < 1000.0 {
            format!("{of:.1} s simulated in {elapsed_ms:.0} ms.")
        } else {
            format!("{of:.1} s simulated in {:.1} s.", elapsed_ms / 1e3)
        };
    }
    let left = if live.sim_ns > 0 {
        elapsed_ms / live.sim_ns as f64 * live.duration_ns.saturating_sub(live.sim_ns) as f64 / 1e3
    } else {
        f64::NAN
    };
    if left.is_finite() && left < 1.0 {
        format!("{at:.2} of {of:.1} s simulated, under a second left.")
    } else if left.is_finite() {
        format!("{at:.2} of {of:.1} s simulated, about {left:.0} s left.")
    } else {
        format!("{at:.2} of {of:.1} s simulated.")
    }
}
