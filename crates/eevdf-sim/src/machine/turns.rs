//! QEMU's vCPU turns, for a kernel run's twin (`SimConfig::vcpu_turns`).
//!
//! Under `-icount` with `-accel tcg,thread=single`, one host thread runs
//! the vCPUs one after another (QEMU 7.2's `rr_cpu_thread_fn`). While one
//! executes, the others stand still, yet the virtual clock counts every
//! vCPU's instructions and moves for them too. So a busy vCPU's task is
//! charged (`update_curr()`) for the stretches its vCPU stood still, its
//! work ends later, and a reschedule raised for it waits for its turn.
//!
//! A turn goes to the next vCPU in QEMU's order that is busy or has an
//! interrupt pending, and lasts until the nearest timer deadline
//! (`icount_get_limit`: here a busy CPU's tick once that vCPU re-armed
//! its LAPIC for it, an HRTICK, or a sleeping thread's timer), at least
//! `MIN_TURN_NS`. A vCPU that arms the nearest deadline itself is kicked
//! out at once (`qemu_timer_notify_cb`): the first to re-arm its tick, or
//! a thread inside the syscall that sleeps, which then stays curr until
//! its vCPU runs again (`kicked`). A vCPU takes its tick's interrupt in
//! its own turn. QEMU 7.2 gives the whole limit to one vCPU; the
//! split of it among the vCPUs (`icount_percpu_budget()`) came in 8.1,
//! and a 7.2.13 guest's turns last up to its 4 ms tick. A turn ends
//! early when its vCPU halts (goes idle) or spins (`spin.rs`). An
//! interrupt raised for another vCPU does not end it: to the one host
//! thread every vCPU is "self", so `tcg_handle_interrupt()` only marks
//! the target. The other busy vCPUs stand still meanwhile, the way an
//! interrupt stands a task still (`steal_time`): their reschedules wait
//! for the thaw, and what an early end leaves of the standstill is
//! given back (`unsteal_time`). A wakee that a halted vCPU enqueues
//! itself (the wakelist, or its own timer) waits on its wakelist for
//! that vCPU's turn (`sched_ttwu_pending()`); a vCPU that turns busy
//! within another's turn otherwise waits for the turn's end.
//!
//! QEMU's order is its vCPU index, the APIC-ID order: a core's threads
//! next to each other. The simulator numbers every core's first thread
//! first (as Linux on x86 hardware), so with SMT the two orders differ
//! (`eevdf_kernel::vm_topology` maps the CPU numbers of a kernel run).

mod spin;

use super::{Activation, Ev, Sim, TurnCounts};
use crate::config::Nanos;

/// `TCG_KICK_PERIOD`: QEMU's round-robin kick timer, the deadline when
/// no other timer is nearer.
const KICK_PERIOD_NS: Nanos = 100_000_000;

/// The shortest turn. QEMU lets a deadline that is due now give a vCPU
/// no instructions at all; the model gives it a microsecond, so that
/// deadlines a few nanoseconds apart do not make a storm of turns.
const MIN_TURN_NS: Nanos = 1_000;

impl Sim {
    #[inline(always)]
    pub(super) fn turns_on(&self) -> bool {
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
        let busy = self
            .cpus
            .iter()
            .enumerate()
            .filter(|(_, c)| c.curr.is_some());
        let cpus = busy.flat_map(|(i, c)| {
            let hrtick = if c.hrtick_pending {
                c.hrtick_at
            } else {
                Nanos::MAX
            };
            let tick = if self.tick_armed(i) {
                c.next_tick
            } else {
                Nanos::MAX
            };
            [tick, hrtick]
        });
        let timers = self.threads.iter().filter_map(|t| t.timer_at);
        cpus.chain(timers)
            .filter(|&d| d > now)
            .fold(now + KICK_PERIOD_NS, Nanos::min)
    }

    /// A turn (stale if a kick started another): the next vCPU that is
    /// busy or has an interrupt pending runs, the other busy ones stand
    /// still until its end.
    pub(super) fn turn(&mut self, gen: u64, now: Nanos) {
        if gen != self.turns.gen {
            return;
        }
        self.turns.gen += 1;
        self.turns.kicked = false;
        let nr = self.cpus.len();
        let order = &self.turns.order;
        let after = self
            .turns
            .holder
            .map_or(0, |h| self.turns.rank[h as usize] as usize + 1);
        let holder = (0..nr).map(|i| order[(after + i) % nr]).find(|&c| {
            let c = &self.cpus[c as usize];
            c.curr.is_some() || c.ttwu_pending || c.irq_pending
        });
        self.turns.holder = holder;
        if let Some(h) = holder {
            self.turns.counts.turns += 1;
            self.run_wake_list(h, now);
        }
        let mut len = (self.next_deadline(now) - now).max(MIN_TURN_NS);
        if let Some(h) = holder {
            len = self.rearm_tick(h, now, len);
        }
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
        if let Some(h) = holder {
            self.turns.holds[h as usize] = None;
            self.spin_check(h, now);
        }
    }

    fn freeze(&mut self, cpu: u32, now: Nanos, len: Nanos) {
        self.turns.holds[cpu as usize] = self.lock_held_by(cpu, now);
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
                self.timer_armed(cpu, self.cpus[cpu as usize].next_tick, now);
            }
            Some(h) if h != cpu => self.freeze(cpu, now, self.turns.end - now),
            Some(_) => {}
        }
    }

    /// A wakee that the target vCPU enqueues itself (the wakelist of
    /// `ttwu_queue_wakelist()`, or its own timer's interrupt) waits, when
    /// that vCPU is halted within another's turn, for the target's turn:
    /// under QEMU's round-robin an interrupt raised for another vCPU
    /// only marks it (`tcg_handle_interrupt()`: every vCPU is "self" to
    /// the one host thread), and the halted vCPU runs when its turn
    /// comes. True if `w` waits.
    #[inline]
    pub(super) fn wait_on_wake_list(&mut self, cpu: u32, w: Activation, now: Nanos) -> bool {
        if !self.turns_on() {
            return false;
        }
        let c = &self.cpus[cpu as usize];
        let waits = self.turns.end > now
            && self.turns.holder.is_some_and(|h| h != cpu)
            && c.curr.is_none()
            && c.rq.h_nr_queued == 0
            && self.wakeup_logged_on(w.src, cpu, w.delayed) == cpu;
        if waits {
            self.threads[w.tid].on_wake_list = true;
            self.cpus[cpu as usize].ttwu_pending = true;
            self.turns.wake_list[cpu as usize].push(w);
        }
        waits
    }

    /// A timer fires for a thread on `cpu`: a halted vCPU takes a turn,
    /// in order, to handle it.
    #[inline]
    pub(super) fn timer_interrupt(&mut self, cpu: u32) {
        let c = &self.cpus[cpu as usize];
        if self.turns_on() && self.turns.holder != Some(cpu) && c.curr.is_none() {
            self.cpus[cpu as usize].irq_pending = true;
        }
    }

    /// `sched_ttwu_pending()`: the vCPU whose turn begins enqueues the
    /// wakees that waited for it.
    fn run_wake_list(&mut self, cpu: u32, now: Nanos) {
        let list = std::mem::take(&mut self.turns.wake_list[cpu as usize]);
        self.cpus[cpu as usize].ttwu_pending = false;
        self.cpus[cpu as usize].irq_pending = false;
        for w in list {
            self.activate(cpu, w, now);
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

    /// A timer that the running vCPU `cpu` arms at `at`, nearer than every
    /// deadline QEMU sees, ends the turn now: `qemu_timer_notify_cb` kicks
    /// the running vCPU and the round-robin loop moves on. A vCPU that
    /// stands still arms its own timers when it runs (the kernel sends a
    /// remote HRTICK as an IPI), so one armed for it meanwhile cuts
    /// nothing.
    pub(super) fn timer_armed(&mut self, cpu: u32, at: Nanos, now: Nanos) {
        let own = self.turns.holder == Some(cpu);
        if self.turns_on() && own && at > now && at < self.turns.end {
            self.turns.end = now;
            self.turns.kicked = true;
            let gen = self.turns.gen;
            self.q.schedule(now, Ev::TurnCut { gen });
        }
    }

    /// Whether `cpu`'s vCPU was just kicked out of its turn by a timer
    /// it armed (the syscall that armed it resumes at its next turn).
    pub(super) fn kicked(&self, cpu: u32) -> bool {
        self.turns_on() && self.turns.kicked && self.turns.holder == Some(cpu)
    }

    /// A busy vCPU standing still takes its tick's interrupt in its
    /// turn (once, however many ticks it missed: `hrtimer_forward()`).
    pub(super) fn tick_waits_for_turn(&mut self, cpu: u32, now: Nanos) -> bool {
        let waits = self.turns_on() && (self.turns.holder != Some(cpu) || self.turns.end <= now);
        if waits {
            self.turns.tick_pending[cpu as usize] = true;
        }
        waits
    }

    /// The holder of a turn that begins handles the tick that came while
    /// it stood still, and re-arms its LAPIC for the next one: if that is
    /// the nearest deadline QEMU kicks it out at once. Returns the turn's
    /// length.
    fn rearm_tick(&mut self, h: u32, now: Nanos, len: Nanos) -> Nanos {
        let hu = h as usize;
        let unarmed = self.cpus[hu].curr.is_some() && !self.tick_armed(hu);
        self.turns.last_turn[hu] = now;
        if std::mem::take(&mut self.turns.tick_pending[hu]) {
            self.q.schedule(now, Ev::TickIrq { cpu: h });
        }
        if unarmed && self.cpus[hu].next_tick < now + len {
            MIN_TURN_NS
        } else {
            len
        }
    }

    /// Whether `cpu`'s vCPU has armed its next tick: it ran since its
    /// last one (QEMU sees a LAPIC deadline only once the vCPU wrote it).
    fn tick_armed(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        self.turns.last_turn[cpu] + c.rq.config.tick_nsec >= c.next_tick
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

    /// The turn ends now (its vCPU halted): the others
    /// get back the standstill they had not served, and the next turn
    /// starts.
    fn kick(&mut self, now: Nanos) {
        if self.turns_on() && self.turns.end > now {
            self.end_turn(now);
        }
    }

    fn end_turn(&mut self, now: Nanos) {
        for h in self.turns.holds.iter_mut() {
            *h = None;
        }
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
    /// Per CPU: the wakees waiting for a halted vCPU's turn.
    wake_list: Vec<Vec<Activation>>,
    /// Per CPU standing still: the channel its thread holds locked
    /// (`spin.rs`).
    holds: Vec<Option<usize>>,
    counts: TurnCounts,
    /// The running vCPU armed the nearest deadline: QEMU kicks it out
    /// now (`qemu_timer_notify_cb`), inside the syscall that armed it.
    kicked: bool,
    /// Per CPU: a tick came while it stood still.
    tick_pending: Vec<bool>,
    /// Per CPU: when its last turn began.
    last_turn: Vec<Nanos>,
    /// The CPUs in QEMU's vCPU order, and each CPU's place in it.
    order: Vec<u32>,
    rank: Vec<u32>,
}

impl Sim {
    /// The vCPU turns taken so far (zero when the run takes none): to
    /// hold against a kernel trace's handovers
    /// (`eevdf import trace --regime`).
    pub fn turn_counts(&self) -> TurnCounts {
        self.turns.counts
    }
}

impl Turns {
    pub(super) fn new(topo: &crate::topology::Topology) -> Turns {
        Turns {
            frozen_until: vec![0; topo.nr_cpus() as usize],
            wake_list: vec![Vec::new(); topo.nr_cpus() as usize],
            holds: vec![None; topo.nr_cpus() as usize],
            last_turn: vec![0; topo.nr_cpus() as usize],
            tick_pending: vec![false; topo.nr_cpus() as usize],
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
