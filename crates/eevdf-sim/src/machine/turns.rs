//! QEMU's vCPU turns, for a kernel run's twin (`SimConfig::vcpu_turns`).
//!
//! Under `-icount` with `-accel tcg,thread=single`, one host thread runs
//! the vCPUs one after another (QEMU 7.2's `rr_cpu_thread_fn`). While one
//! executes, the others stand still, yet the virtual clock counts every
//! vCPU's instructions and moves for them too. So a busy vCPU's task is
//! charged (`update_curr()`) for the stretches its vCPU stood still, its
//! work ends later, and a reschedule raised for it waits for its turn.
//!
//! A turn goes to the next busy vCPU in QEMU's order and lasts until the
//! nearest timer deadline (`icount_get_limit`: here a busy CPU's tick or
//! HRTICK, or a sleeping thread's timer, also one armed within the turn),
//! at least `MIN_TURN_NS`. It ends early when its vCPU halts (goes idle)
//! or sends an IPI (it wakes an idle CPU, or asks a busy one for a full
//! reschedule). The other busy vCPUs stand still meanwhile, the way an
//! interrupt stands a task still (`steal_time`): their wakeups and
//! reschedules wait for the thaw, and what an early end leaves of the
//! standstill is given back (`unsteal_time`). An idle vCPU that turns
//! busy waits for the turn.
//!
//! Not modelled: QEMU's `PAUSE` also ends a turn, so a vCPU that spins
//! on a lock held by a vCPU standing still hands over at once and its
//! task is charged for the others' turns (the turns that end at a
//! `sched_waking` in 7.2.13 traces are spins on the wakee's runqueue
//! lock; docs/model.md, "A vCPU that spins hands its turn over").
//!
//! QEMU's order is its vCPU index, the APIC-ID order: a core's threads
//! next to each other. The simulator numbers every core's first thread
//! first (as Linux on x86 hardware), so with SMT the two orders differ
//! (`eevdf_kernel::vm_topology` maps the CPU numbers of a kernel run).

use super::{Ev, Sim};
use crate::config::Nanos;

/// `TCG_KICK_PERIOD`: QEMU's round-robin kick timer, the deadline when
/// no other timer is nearer.
const KICK_PERIOD_NS: Nanos = 100_000_000;

/// The shortest turn. QEMU lets a deadline that is due now give a vCPU
/// no instructions at all; the model gives it a microsecond, so that
/// deadlines a few nanoseconds apart do not make a storm of turns.
const MIN_TURN_NS: Nanos = 1_000;

impl Sim {
    fn turns_on(&self) -> bool {
        self.cfg.vcpu_turns && self.cpus.len() > 1
    }

    /// Starts the turns, if the twin models them.
    pub(super) fn init_turns(&mut self) {
        if self.turns_on() {
            self.q.schedule(0, Ev::Turn { gen: 0 });
        }
    }

    /// The nearest timer deadline after `now` that QEMU sees.
    fn next_deadline(&self, now: Nanos) -> Nanos {
        let cpus = self.cpus.iter().filter(|c| c.curr.is_some()).flat_map(|c| {
            let hrtick = if c.hrtick_pending {
                c.hrtick_at
            } else {
                Nanos::MAX
            };
            [c.next_tick, hrtick]
        });
        let timers = self.threads.iter().filter_map(|t| t.timer_at);
        cpus.chain(timers)
            .filter(|&d| d > now)
            .fold(now + KICK_PERIOD_NS, Nanos::min)
    }

    /// A turn (stale if a kick started another): the next busy CPU runs,
    /// the other busy ones stand still until its end.
    pub(super) fn turn(&mut self, gen: u64, now: Nanos) {
        if gen != self.turns.gen {
            return;
        }
        self.turns.gen += 1;
        let len = (self.next_deadline(now) - now).max(MIN_TURN_NS);
        let nr = self.cpus.len();
        let order = &self.turns.order;
        let after = self
            .turns
            .holder
            .map_or(0, |h| self.turns.rank[h as usize] as usize + 1);
        let holder = (0..nr)
            .map(|i| order[(after + i) % nr])
            .find(|&c| self.cpus[c as usize].curr.is_some());
        self.turns.holder = holder;
        let nr = nr as u32;
        self.turns.end = now + len;
        for cpu in 0..nr {
            if Some(cpu) != holder && self.cpus[cpu as usize].curr.is_some() {
                self.freeze(cpu, now, len);
            }
        }
        debug_assert!(
            holder.is_none_or(|h| self.turns.frozen_until[h as usize] <= now),
            "the vCPU whose turn it is stands still"
        );
        let gen = self.turns.gen;
        self.q.schedule(now + len, Ev::Turn { gen });
    }

    fn freeze(&mut self, cpu: u32, now: Nanos, len: Nanos) {
        self.steal_time(cpu, now, len);
        self.turns.frozen_until[cpu as usize] = now + len;
    }

    /// A vCPU that leaves idle within another's turn waits for its end;
    /// when all were idle, the turn is its own, and its tick a deadline.
    pub(super) fn wait_for_turn(&mut self, cpu: u32, now: Nanos) {
        if !self.turns_on() || self.turns.end <= now {
            return;
        }
        match self.turns.holder {
            None => {
                self.turns.holder = Some(cpu);
                self.timer_armed(self.cpus[cpu as usize].next_tick, now);
            }
            Some(h) if h != cpu => self.freeze(cpu, now, self.turns.end - now),
            Some(_) => {}
        }
    }

    /// A reschedule of a vCPU that stands still is decided when it moves
    /// on; true if `cpu` does.
    pub(super) fn decide_at_thaw(&mut self, cpu: u32, now: Nanos) -> bool {
        let until = self.standing_still(cpu, now);
        if let Some(until) = until {
            self.q.schedule(until, Ev::Thaw { cpu });
        }
        until.is_some()
    }

    /// Until when `cpu` stands still, if it does at `now`.
    pub(super) fn standing_still(&self, cpu: u32, now: Nanos) -> Option<Nanos> {
        let until = self.turns.frozen_until[cpu as usize];
        (until > now).then_some(until)
    }

    /// A timer armed at `at` within the turn ends the turn then: under
    /// `-icount` QEMU recomputes the running vCPU's budget when a nearer
    /// deadline appears (`qemu_timer_notify_cb`).
    pub(super) fn timer_armed(&mut self, at: Nanos, now: Nanos) {
        if self.turns_on() && at > now && at < self.turns.end {
            self.turns.end = at;
            let gen = self.turns.gen;
            self.q.schedule(at, Ev::TurnCut { gen });
        }
    }

    /// The turn `gen` ends at a deadline armed within it.
    pub(super) fn cut_turn(&mut self, gen: u64, now: Nanos) {
        if gen == self.turns.gen {
            self.end_turn(now);
        }
    }

    /// `cpu` goes idle: if it held the turn, the turn ends.
    pub(super) fn halt(&mut self, cpu: u32, now: Nanos) {
        self.turns.frozen_until[cpu as usize] = 0;
        if self.turns.holder == Some(cpu) {
            self.kick(now);
        }
    }

    /// An interrupt raised for `target` by `from` (an IPI) ends the turn
    /// of `from`, the vCPU that runs.
    pub(super) fn ipi(&mut self, from: u32, target: u32, now: Nanos) {
        if from != target && self.turns.holder == Some(from) {
            self.kick(now);
        }
    }

    /// The turn ends now (its vCPU halted or sent an IPI): the others
    /// get back the standstill they had not served, and the next turn
    /// starts.
    fn kick(&mut self, now: Nanos) {
        if self.turns_on() && self.turns.end > now {
            self.end_turn(now);
        }
    }

    fn end_turn(&mut self, now: Nanos) {
        for cpu in 0..self.cpus.len() {
            let until = std::mem::take(&mut self.turns.frozen_until[cpu]);
            if until > now {
                self.unsteal_time(cpu as u32, now, until - now);
            }
        }
        self.turn(self.turns.gen, now);
    }

    /// Gives back `ns` of a standstill `steal_time` charged ahead that
    /// will not happen (a vCPU turn ended early): the work resumes, and
    /// a reschedule waits, that much less.
    fn unsteal_time(&mut self, cpu: u32, now: Nanos, ns: Nanos) {
        if self.cpus[cpu as usize].curr.is_none() {
            return;
        }
        // The later BurstEnd is stale by then: the burst's end moves the
        // generation on.
        self.move_run_times(cpu, |t| {
            if t > now {
                t.saturating_sub(ns).max(now)
            } else {
                t
            }
        });
        if self.cpus[cpu as usize].rq.resched.is_some() {
            self.honour_resched(cpu, now);
        }
    }
}

/// Where the turns stand.
#[derive(Clone, Debug, Default)]
pub(super) struct Turns {
    /// The vCPU whose turn it is, and when the turn ends.
    holder: Option<u32>,
    end: Nanos,
    /// Bumped by every turn: a `Turn` event of an older one is stale.
    gen: u64,
    /// Per CPU: until when it stands still.
    frozen_until: Vec<Nanos>,
    /// The CPUs in QEMU's vCPU order, and each CPU's place in it.
    order: Vec<u32>,
    rank: Vec<u32>,
}

impl Turns {
    pub(super) fn new(topo: &crate::topology::Topology) -> Turns {
        Turns {
            frozen_until: vec![0; topo.nr_cpus() as usize],
            order: topo.apic_order(),
            rank: topo.apic_index(),
            ..Turns::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Turns;
    use crate::topology::{CustomMachine, MachineSpec, Topology};

    fn order(spec: MachineSpec) -> Vec<u32> {
        Turns::new(&Topology::build(&spec).unwrap()).order
    }

    #[test]
    fn turns_follow_qemus_vcpu_order() {
        // Siblings {0,2} {1,3}: QEMU's vCPUs 0-3 are CPUs 0, 2, 1, 3.
        assert_eq!(
            order(MachineSpec::Custom(CustomMachine::smp(2, 2))),
            [0, 2, 1, 3]
        );
        assert_eq!(order(MachineSpec::Flat(3)), [0, 1, 2]);
        let t =
            Turns::new(&Topology::build(&MachineSpec::Custom(CustomMachine::smp(2, 2))).unwrap());
        assert_eq!(t.rank, [0, 2, 1, 3]);
    }
}
