//! A CPU hog: spins from its start to the window's end.

use super::{wait_start_on_time, Ctx};

pub(super) fn run(ctx: &mut Ctx) -> Result<Option<u64>, String> {
    if wait_start_on_time(ctx)?.is_some() {
        let end = ctx.window.t1;
        ctx.burner.spin_until(end);
    }
    Ok(None)
}
