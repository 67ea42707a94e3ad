//! A vCPU that spins hands its turn over (docs/model.md, "A vCPU that
//! spins hands its turn over"). QEMU's TCG runs `PAUSE` as "let another
//! vCPU run" (`do_pause()`), and a guest spins with `PAUSE` on a lock
//! whose owner is on a CPU: `pipe->mutex`'s optimistic spin while the
//! owner is `on_cpu` (`mutex_spin_on_owner()`), a socket's spinlocks. A
//! vCPU standing still in its thread's locked window of a message
//! (`pipes::mutex_window`, taken for a socket's locks too) holds that
//! channel, and the running thread that reaches it ends its turn there.

use super::super::{pipes, Ev, Sim};
use crate::config::Nanos;
use crate::workload::{wall_for_work, work_in_wall, Role, Tid};

impl Sim {
    /// The channel whose lock `cpu`'s hackbench thread holds at `now`:
    /// inside a message's locked window (`pipes::mutex_window`).
    pub(super) fn lock_held_by(&self, cpu: u32, now: Nanos) -> Option<usize> {
        let (idx, pos, unit) = self.message_at(cpu, now)?;
        let tid = self.cpus[cpu as usize].curr?;
        let role = &self.threads[tid].role;
        let (lo, hi) = pipes::mutex_window(role);
        let lock = (u128::from(unit) * u128::from(lo) / 1000) as u64;
        let unlock = (u128::from(unit) * u128::from(hi) / 1000) as u64;
        (lock < pos && pos < unlock).then(|| channel_of(role, idx))
    }

    /// The message `cpu`'s hackbench thread is in at `now` (its index
    /// in the burst), how far into it, and one message's work.
    fn message_at(&self, cpu: u32, now: Nanos) -> Option<(u64, u64, u64)> {
        let c = &self.cpus[cpu as usize];
        let t = &self.threads[c.curr?];
        let (unit, batch) = pipes::unit_and_batch(&t.role).filter(|&(u, _)| u > 0)?;
        let ran = now
            .saturating_sub(c.run_start)
            .min(c.burst_end.saturating_sub(c.run_start));
        let left = t.remaining.saturating_sub(work_in_wall(ran, c.capacity));
        let done = batch.max(1).saturating_mul(unit).saturating_sub(left);
        Some((done / unit, done % unit, unit))
    }

    /// When the running thread on `h` reaches a channel that a vCPU
    /// standing still holds locked (within its next 64 messages).
    fn spin_time(&self, h: u32, now: Nanos) -> Option<Nanos> {
        let held = |ch: usize| {
            (0..self.cpus.len()).any(|f| {
                f != h as usize
                    && self.turns.frozen_until[f] > now
                    && self.turns.holds[f] == Some(ch)
            })
        };
        if self.turns.holds.iter().all(Option::is_none) {
            return None;
        }
        let (idx, pos, unit) = self.message_at(h, now)?;
        let c = &self.cpus[h as usize];
        let t = &self.threads[c.curr?];
        let (_, batch) = pipes::unit_and_batch(&t.role)?;
        let lock = (u128::from(unit) * u128::from(pipes::mutex_window(&t.role).0) / 1000) as u64;
        let base = now.max(c.run_start);
        let last = batch.max(1).min(idx + 64);
        for k in idx..last {
            if !held(channel_of(&t.role, k)) {
                continue;
            }
            let into = if k == idx {
                if pos > lock {
                    continue;
                }
                lock - pos
            } else {
                (k - idx) * unit - pos + lock
            };
            return Some(base + wall_for_work(into, c.capacity));
        }
        None
    }

    /// Schedules the spin of the thread whose turn begins or whose
    /// burst changed, if it will meet a held channel within the turn.
    #[inline(always)]
    pub(in crate::machine) fn spin_check(&mut self, cpu: u32, now: Nanos) {
        // Inline, so a run without turns pays a test per switch only.
        if self.turns_on() {
            self.spin_check_turn(cpu, now);
        }
    }

    fn spin_check_turn(&mut self, cpu: u32, now: Nanos) {
        if self.turns.holder != Some(cpu) {
            return;
        }
        let Some(tid) = self.cpus[cpu as usize].curr else {
            return;
        };
        if let Some(at) = self.spin_time(cpu, now).filter(|&at| at < self.turns.end) {
            let gen = self.turns.gen;
            self.q.schedule(at, Ev::Spin { gen, tid });
        }
    }

    /// The thread meets the held lock: it spins, and its `PAUSE` ends
    /// the turn (QEMU's `do_pause()`); it stays curr, charged for the
    /// others' turns.
    pub(in crate::machine) fn spin(&mut self, gen: u64, tid: Tid, now: Nanos) {
        if gen != self.turns.gen {
            return;
        }
        let Some(h) = self.turns.holder else { return };
        if self.cpus[h as usize].curr != Some(tid) {
            return;
        }
        match self.spin_time(h, now) {
            Some(at) if at <= now => {
                self.turns.counts.spins += 1;
                self.end_turn(now);
            }
            Some(at) if at < self.turns.end => self.q.schedule(at, Ev::Spin { gen, tid }),
            _ => {}
        }
    }
}

/// The pipe (or socket) of a hackbench thread's `k`-th message from
/// now.
fn channel_of(role: &Role, k: u64) -> usize {
    match *role {
        Role::Sender {
            pipe_base,
            npipes,
            next,
            ..
        } => pipe_base + (next + (k % npipes as u64) as usize) % npipes,
        Role::Receiver { pipe, .. } => pipe,
        _ => unreachable!("only hackbench threads have channels"),
    }
}
