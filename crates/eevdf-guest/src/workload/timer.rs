//! cyclictest's method: an absolute `CLOCK_MONOTONIC` timer per period,
//! latency = the clock read after waking minus the expiry, then `run_ns`
//! of CPU work. Overruns as in the simulator: when the next expiry has
//! passed, the timer is re-armed at the current time (no period skipped).
//! A wakeup after the window's end is not measured (the simulation
//! stops there).

use super::{wait_start, Ctx};
use crate::clock::{self, Nanos};

pub(super) fn run(ctx: &mut Ctx, period_ns: Nanos, run_ns: Nanos) -> Result<Option<Nanos>, String> {
    let Some(mut expiry) = wait_start(ctx)? else {
        return Ok(None);
    };
    loop {
        // The simulator stops at the window's end: a wakeup after it is
        // neither measured nor run.
        let woke = clock::now();
        if woke > ctx.window.t1 {
            return Ok(None);
        }
        ctx.sample(expiry, woke);
        ctx.burner.burn(run_ns);
        let now = clock::now();
        expiry = expiry.saturating_add(period_ns);
        if expiry <= now {
            expiry = now;
        }
        if expiry > ctx.window.t1 {
            return Ok(None);
        }
        clock::sleep_until(expiry).map_err(|e| format!("clock_nanosleep: {e}"))?;
    }
}
