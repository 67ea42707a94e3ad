//! When a reschedule request takes the CPU: the preemption models
//! (`full`, `lazy`, `voluntary`, `none`) against where the running task
//! is, user code, a kernel section or a hackbench message's syscall
//! (docs/model.md §4 and §6, "Preemption points").

use super::pipes::mutex_window;
use super::*;

impl Sim {
    /// Applies the preemption model to a pending reschedule on `cpu`.
    pub(super) fn honour_resched(&mut self, cpu: u32, now: Nanos) {
        if self.newidle_cpu == Some(cpu) || self.balancing_cpu == Some(cpu) {
            return;
        }
        let c = &self.cpus[cpu as usize];
        let Some(kind) = c.rq.resched else {
            return;
        };
        let Some(tid) = c.curr else {
            self.switch(cpu, now);
            return;
        };
        if self.threads[tid].state == State::Blocking {
            return; // it is about to sleep: that pick honours the request
        }
        if self.decide_at_thaw(cpu, now) {
            return;
        }
        // `try_to_wake_up()` holds `p->pi_lock` with interrupts off: no
        // model preempts a waker inside it, and its syscall returns to
        // user right after (the write that woke a reader). An interrupt
        // that ends last (`irq_end`) returns to where it came from, so
        // the request is decided again there (`ReschedAt::IrqEnd`).
        let waking = self.wakeup_work_left(cpu, now);
        let in_kernel = self.kernel_left(cpu, tid, now);
        let delay = if waking > 0 {
            waking
        } else {
            match self.cfg.preempt {
                PreemptModel::Full => 0,
                PreemptModel::Lazy if kind == Resched::Full => 0,
                // A lazy request is honoured on the next return to user mode
                // (exit_to_user_mode_loop tests both bits), which for a task
                // in user mode is the exit of this very interrupt; in kernel
                // mode it waits for the syscall's exit or the tick's upgrade.
                PreemptModel::Lazy | PreemptModel::None => in_kernel,
                // `might_resched()` is `__cond_resched()` under voluntary.
                PreemptModel::Voluntary => in_kernel.min(self.might_resched_in(cpu, tid, now)),
            }
        };
        if delay == 0 {
            if in_kernel > 0 && self.preempts_kernel(kind) {
                self.cpus[cpu as usize].preemption = Preemption::Kernel;
            }
            self.switch(cpu, now);
        } else {
            let c = &self.cpus[cpu as usize];
            let gen = c.gen;
            let at = if waking > 0 {
                if c.irq_end >= c.wakes_end {
                    ReschedAt::IrqEnd
                } else {
                    ReschedAt::ReturnToUser
                }
            } else if delay < in_kernel {
                ReschedAt::MightResched
            } else {
                ReschedAt::ReturnToUser
            };
            self.q
                .schedule(now + delay, Ev::ReschedPoint { cpu, gen, at });
        }
    }

    /// Wall time left of the wakeup work the running thread pays before
    /// its work goes on or it sleeps (see `owe_wakes`); 0 when none.
    pub(super) fn wakeup_work_left(&self, cpu: u32, now: Nanos) -> Nanos {
        self.cpus[cpu as usize].wakes_end.saturating_sub(now)
    }

    /// Wall time until `tid`, running on `cpu`, next returns to user
    /// mode (0: it runs user code). A hackbench thread's message is one
    /// `write()` or `read()` from a return to user to the next
    /// (`hackbench::WRITE_LOCKED`); other threads follow their `kernel`
    /// sections.
    pub(super) fn kernel_left(&self, cpu: u32, tid: Tid, now: Nanos) -> Nanos {
        let c = &self.cpus[cpu as usize];
        if now < c.run_start {
            return 0;
        }
        let t = &self.threads[tid];
        let Some((pct, section)) = t.kernel else {
            return self.message_pos(cpu, tid, now).map_or(0, |(into, unit)| {
                wall_for_work((unit - into) % unit, c.capacity)
            });
        };
        if pct == 0 || section == 0 {
            return 0;
        }
        let ran = t.ran_ns + (now - c.run_start);
        let cycle = (section * 100 / u64::from(pct)).max(section);
        section.saturating_sub(ran % cycle)
    }

    /// Wall time until `tid`'s next `might_resched()`: a hackbench
    /// message's `mutex_lock()` (`might_sleep()`), else the spacing of
    /// `cond_resched()` calls.
    pub(super) fn might_resched_in(&self, cpu: u32, tid: Tid, now: Nanos) -> Nanos {
        let c = &self.cpus[cpu as usize];
        let by_message = self.threads[tid].kernel.is_none();
        match self.message_pos(cpu, tid, now).filter(|_| by_message) {
            Some((into, unit)) => {
                let lock = hackbench::lock_at(mutex_window(&self.threads[tid].role), unit);
                match lock.checked_sub(into) {
                    Some(d) if d > 0 && now >= c.run_start => wall_for_work(d, c.capacity),
                    _ => COND_RESCHED_NS,
                }
            }
            None => COND_RESCHED_NS,
        }
    }

    /// Whether a request of this kind preempts code running in the kernel
    /// (`CONFIG_PREEMPTION` honours TIF_NEED_RESCHED on any interrupt or
    /// preempt_enable; a lazy request waits for the return to user).
    pub(crate) fn preempts_kernel(&self, kind: Resched) -> bool {
        match self.cfg.preempt {
            PreemptModel::Full => true,
            PreemptModel::Lazy => kind == Resched::Full,
            PreemptModel::None | PreemptModel::Voluntary => false,
        }
    }
}

/// Where a switch takes the CPU from a task that is still runnable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Preemption {
    /// On the way back to user mode (or from user code): `R` in a trace.
    #[default]
    ToUser,
    /// In kernel code, by `preempt_schedule_irq()` (`CONFIG_PREEMPTION`):
    /// a mutex it holds stays held. `R+`.
    Kernel,
    /// In kernel code, at a `might_resched()` (voluntary): nothing held.
    /// `R+`.
    MightResched,
}
