//! Timed sleepers: cyclictest's `clock_nanosleep(TIMER_ABSTIME)` loop
//! and rt-app's run-then-sleep phases. Each activation runs one burst,
//! then sleeps until its next nominal expiry; the simulator adds the
//! task's timer slack when it arms the timer.

use crate::config::Nanos;

/// cyclictest: run `run`, sleep to the next multiple of `period` after
/// the last expiry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timer {
    pub period: Nanos,
    /// The burst of one activation (its `run` plus the cost of a timed
    /// sleep, [`crate::Costs::sleep_ns`]).
    pub run: Nanos,
    /// Nominal expiry of the pending (or last) timer.
    pub expiry: Nanos,
}

impl Timer {
    /// The burst ended at `now`: the next nominal expiry, which is also
    /// where its wakeup latency is measured from.
    pub fn next_expiry(&mut self, now: Nanos) -> Nanos {
        debug_assert!(self.period > 0);
        let mut next = self.expiry.saturating_add(self.period);
        if next <= now {
            // Overrun: clock_nanosleep on a past time returns at once.
            next = now;
        }
        self.expiry = next;
        next
    }
}

/// rt-app: run `run`, then sleep `sleep` (relative), or, with `period`,
/// until the next activation (absolute, as rt-app's `timer` event).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Periodic {
    pub run: Nanos,
    pub sleep: Nanos,
    pub period: Option<Nanos>,
    /// Nominal start of the current activation.
    pub activation: Nanos,
}

impl Periodic {
    /// The burst ended at `now`: the next activation's nominal start.
    pub fn next_activation(&mut self, now: Nanos) -> Nanos {
        let next = match self.period {
            // A late activation starts at once; the missed ones are lost.
            Some(p) => self.activation.saturating_add(p).max(now),
            None => now.saturating_add(self.sleep),
        };
        self.activation = next;
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_keeps_its_phase_across_late_wakeups() {
        let mut t = Timer {
            period: 1_000,
            run: 20,
            expiry: 1_500,
        };
        // Woken late (at 1,700 instead of 1,500): the phase stays.
        assert_eq!(t.next_expiry(1_720), 2_500);
        assert_eq!(t.next_expiry(2_530), 3_500);
    }

    #[test]
    fn an_overrun_timer_fires_at_once_and_restarts_its_phase_there() {
        let mut t = Timer {
            period: 1_000,
            run: 20,
            expiry: 500,
        };
        assert_eq!(t.next_expiry(1_800), 1_800);
        assert_eq!(t.expiry, 1_800);
        assert_eq!(t.next_expiry(1_900), 2_800);
    }

    #[test]
    fn a_relative_sleep_counts_from_the_burst_end() {
        let mut p = Periodic {
            run: 8,
            sleep: 17,
            period: None,
            activation: 0,
        };
        assert_eq!(p.next_activation(8), 25);
        assert_eq!(p.next_activation(40), 57);
    }

    #[test]
    fn a_periodic_activation_is_absolute_unless_late() {
        let mut p = Periodic {
            run: 8,
            sleep: 0,
            period: Some(100),
            activation: 0,
        };
        assert_eq!(p.next_activation(8), 100);
        // The burst overran its period: the next one starts at once.
        assert_eq!(p.next_activation(230), 230);
        assert_eq!(p.next_activation(240), 330);
    }
}
