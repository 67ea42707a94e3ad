//! rt-app's periodic task: `run_ns` of CPU time, then a sleep of
//! `sleep_ns` from the end of the run (latency = wake - (sleep start +
//! sleep_ns)), or with `period_ns` one run per absolute period (latency
//! = wake - period start). As in the simulator, a period that has
//! already passed starts at once.

use super::{wait_start, Ctx};
use crate::clock::{self, Nanos};

pub(super) fn run(
    ctx: &mut Ctx,
    run_ns: Nanos,
    sleep_ns: Nanos,
    period_ns: Option<Nanos>,
) -> Result<Option<Nanos>, String> {
    let Some(mut activation) = wait_start(ctx)? else {
        return Ok(None);
    };
    loop {
        // Not measured nor run after the window's end (the simulation
        // stops there).
        let woke = clock::now();
        if woke > ctx.window.t1 {
            return Ok(None);
        }
        ctx.sample(activation, woke);
        ctx.burner.burn(run_ns);
        let now = clock::now();
        // An absolute sleep to now + sleep_ns is the relative sleep with
        // its start read exactly.
        let next = match period_ns {
            Some(p) => activation.saturating_add(p).max(now),
            None => now.saturating_add(sleep_ns),
        };
        if next > ctx.window.t1 {
            return Ok(None);
        }
        clock::sleep_until(next).map_err(|e| format!("clock_nanosleep: {e}"))?;
        activation = next;
    }
}
