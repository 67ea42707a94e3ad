//! QEMU's vCPU turns left out (`turns.rs`): the page's build (wasm32)
//! runs scenarios, never a kernel run's twin, so `SimConfig::vcpu_turns`
//! is ignored there and each hook is a no-op.

use super::{Activation, Sim, TurnCounts};
use crate::config::Nanos;

// Each hook has the signature and the meaning of its namesake in
// turns.rs, which documents them; here they do nothing.
impl Sim {
    #[inline(always)]
    pub(super) fn init_turns(&mut self) {}

    #[inline(always)]
    pub(super) fn turn(&mut self, _gen: u64, _now: Nanos) {}

    #[inline(always)]
    pub(super) fn cut_turn(&mut self, _gen: u64, _now: Nanos) {}

    #[inline(always)]
    pub(super) fn wait_for_turn(&mut self, _cpu: u32, _now: Nanos) {}

    #[inline(always)]
    pub(super) fn standing_still(&self, _cpu: u32, _now: Nanos) -> Option<Nanos> {
        None
    }

    #[inline(always)]
    pub(super) fn decide_at_thaw(&mut self, _cpu: u32, _now: Nanos) -> bool {
        false
    }

    #[inline(always)]
    pub(super) fn timer_armed(&mut self, _cpu: u32, _at: Nanos, _now: Nanos) {}

    #[inline(always)]
    pub(super) fn wait_on_wake_list(&mut self, _cpu: u32, _w: Activation, _now: Nanos) -> bool {
        false
    }

    #[inline(always)]
    pub(super) fn timer_interrupt(&mut self, _cpu: u32) {}

    #[inline(always)]
    pub(super) fn spin_check(&mut self, _cpu: u32, _now: Nanos) {}

    #[inline(always)]
    pub(super) fn spin(&mut self, _gen: u64, _tid: crate::workload::Tid, _now: Nanos) {}

    #[inline(always)]
    pub(super) fn halt(&mut self, _cpu: u32, _now: Nanos) {}

    #[inline(always)]
    pub(super) fn kicked(&self, _cpu: u32) -> bool {
        false
    }

    #[inline(always)]
    pub(super) fn tick_waits_for_turn(&mut self, _cpu: u32, _now: Nanos) -> bool {
        false
    }
}

impl Sim {
    /// None taken here (see turns.rs).
    pub fn turn_counts(&self) -> TurnCounts {
        TurnCounts::default()
    }
}

/// The turns' state, empty: nothing to keep when no vCPU takes turns.
#[derive(Clone, Debug, Default)]
pub(super) struct Turns;

impl Turns {
    pub(super) fn new(_topo: &crate::topology::Topology) -> Turns {
        Turns
    }
}
