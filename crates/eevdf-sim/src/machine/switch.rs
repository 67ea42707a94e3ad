//! The context switch and what it accounts: HRTICK arming, stolen time,
//! the running thread's CPU time, the switch itself and its events.

use super::*;

impl Sim {
    /// `hrtick_update` on an enqueue: up to 7.1 it re-arms the HRTICK,
    /// since 7.2 only when none is pending.
    pub(crate) fn hrtick_update(&mut self, cpu: u32, now: Nanos) {
        let c = &self.cpus[cpu as usize];
        if c.rq.features().hrtick_arm == HrtickArm::Deadline && c.hrtick_pending {
            return;
        }
        self.hrtick_start(cpu, now);
    }

    /// The HRTICK around `__schedule()`: up to 7.1 `hrtick_clear()`
    /// cancels it and only a switch arms a new one (set_next_task_fair);
    /// since 7.2 (hrtick_schedule_exit) a pending one survives unless the
    /// CPU goes idle or the switch arms a new one.
    pub(super) fn hrtick_schedule(&mut self, cpu: u32, now: Nanos, switched: bool) {
        let c = &mut self.cpus[cpu as usize];
        if c.rq.features().hrtick_arm == HrtickArm::SliceLeft || c.curr.is_none() {
            c.hrtick_gen += 1;
            c.hrtick_pending = false;
        }
        if switched && c.curr.is_some() {
            // A request raised by set_next_task_fair's hrtick_start_fair
            // lands on prev and is cleared with it.
            let before = c.rq.resched;
            self.hrtick_start(cpu, now);
            self.cpus[cpu as usize].rq.resched = before;
        }
    }

    pub(super) fn hrtick_start(&mut self, cpu: u32, now: Nanos) {
        let c = &mut self.cpus[cpu as usize];
        if let Some(delay) = c.rq.hrtick_start_fair() {
            c.hrtick_gen += 1;
            c.hrtick_pending = true;
            c.hrtick_at = now + delay;
            let gen = c.hrtick_gen;
            self.q.schedule(now + delay, Ev::HrTick { cpu, gen });
            self.timer_armed(cpu, now + delay, now);
        }
    }

    /// An interrupt on `cpu` (the hrtimer's, and the wakeup it does) takes
    /// `ns` from the running thread: its work resumes that much later,
    /// while it stays curr and its vruntime keeps growing (Debian's
    /// configs have no `IRQ_TIME_ACCOUNTING`).
    pub(super) fn steal_time(&mut self, cpu: u32, now: Nanos, ns: Nanos) {
        if self.cpus[cpu as usize].curr.is_none() || ns == 0 {
            return;
        }
        self.account_running(cpu, now);
        // No switch inside the interrupt either (`wakes_end`, `irq_end`).
        self.move_run_times(cpu, |t| t.max(now).saturating_add(ns));
    }

    /// Moves the running thread's times on `cpu` by `f` (an interrupt's
    /// time charged or given back): where its work resumes, the ends of
    /// its wakeups and of the interrupt, and its burst's end, whose
    /// event follows (the one it replaces turns stale).
    pub(super) fn move_run_times(&mut self, cpu: u32, f: impl Fn(Nanos) -> Nanos) {
        let c = &mut self.cpus[cpu as usize];
        c.run_start = f(c.run_start);
        c.wakes_end = f(c.wakes_end);
        c.irq_end = f(c.irq_end);
        if c.burst_end < FOREVER {
            let end = f(c.burst_end);
            if end != c.burst_end {
                c.burst_end = end;
                let gen = c.gen;
                self.q.schedule(end, Ev::BurstEnd { cpu, gen });
            }
        }
    }

    /// Stops the running thread's progress at `now`.
    pub(super) fn account_running(&mut self, cpu: u32, now: Nanos) {
        let c = &self.cpus[cpu as usize];
        if let Some(tid) = c.curr {
            let progressed = now
                .saturating_sub(c.run_start)
                .min(c.burst_end.saturating_sub(c.run_start));
            let done = work_in_wall(progressed, c.capacity);
            let t = &mut self.threads[tid];
            t.ran_ns += progressed;
            if t.remaining < FOREVER {
                t.remaining = t.remaining.saturating_sub(done);
            }
            let c = &mut self.cpus[cpu as usize];
            c.run_start = c.run_start.max(now);
        }
    }

    /// `schedule()` on `cpu`: pick, switch, start the next burst.
    pub(super) fn switch(&mut self, cpu: u32, now: Nanos) {
        self.account_running(cpu, now);
        self.pelt_cpu(cpu, now);
        if let Some(p) = self.cpus[cpu as usize].curr {
            self.pelt_thread(p, now);
            self.threads[p].last_ran = now;
        }
        let c = &mut self.cpus[cpu as usize];
        c.rq.set_clock(now);
        let mut out = c.rq.pick_next_task();
        if out.next.is_none() && self.newidle_pull(cpu, now) {
            let c = &mut self.cpus[cpu as usize];
            out = c.rq.pick_next_task();
        }
        let c = &mut self.cpus[cpu as usize];
        c.gen += 1;
        let how = std::mem::take(&mut c.preemption);
        let prev = c.curr;
        let next_tid = out.next.map(|e| self.tid_of(cpu, e));
        if let Some(p) = prev.filter(|p| Some(*p) != next_tid) {
            debug_assert!(
                self.threads[p].state != State::Blocking,
                "thread {p} switched out inside its wakeups"
            );
            let c = &mut self.cpus[cpu as usize];
            let unpaid = c.run_start.saturating_sub(now).min(c.owed);
            c.owed = 0;
            self.threads[p].owed += unpaid;
            if self.threads[p].state == State::Running {
                self.threads[p].state = State::Runnable;
                self.hackbench_preempted(p, now, how == Preemption::Kernel);
            }
        }
        let c = &mut self.cpus[cpu as usize];
        match (c.busy_since, next_tid) {
            (Some(s), None) => {
                c.busy_ns += now - s;
                c.busy_since = None;
                c.idle_since = Some(now);
            }
            (None, Some(_)) => {
                c.busy_since = Some(now);
                if let Some(i) = c.idle_since.take() {
                    // rq->avg_idle: an EWMA of idle lengths (1/8 weight).
                    let idle = now - i;
                    c.avg_idle = (c.avg_idle * 7 + idle) / 8;
                }
            }
            _ => {}
        }
        c.curr = next_tid;
        if self.observers.wants(Interest::SWITCH.union(Interest::PICK)) {
            self.emit_switch(cpu, prev, next_tid, now, how != Preemption::ToUser);
        }
        let Some(tid) = next_tid else {
            // rq->nr_switches counts the switch into idle too.
            if prev.is_some() {
                self.cpus[cpu as usize].switches += 1;
            }
            self.hrtick_schedule(cpu, now, false);
            self.halt(cpu, now);
            return;
        };
        let switched = prev != Some(tid);
        let c = &mut self.cpus[cpu as usize];
        let mut cost = if switched {
            c.switches += 1;
            self.cfg.costs.switch_ns
        } else {
            0
        };
        if std::mem::take(&mut self.threads[tid].migrated) {
            cost += self.cfg.costs.migrate_ns;
        }
        self.pelt_thread(tid, now);
        if switched {
            self.plan_hackbench(tid);
        }
        let first_instruction = if switched {
            now + cost
        } else {
            self.cpus[cpu as usize].run_start.max(now)
        };
        let start = if switched {
            self.start_after_owed(cpu, tid, first_instruction)
        } else {
            first_instruction
        };
        let c = &mut self.cpus[cpu as usize];
        c.run_start = start;
        self.threads[tid].state = State::Running;
        self.record_latency(cpu, tid, first_instruction, now);
        let t = &self.threads[tid];
        let c = &mut self.cpus[cpu as usize];
        let end = if t.remaining >= FOREVER {
            FOREVER
        } else {
            start + wall_for_work(t.remaining, c.capacity)
        };
        c.burst_end = end;
        let gen = c.gen;
        if end < FOREVER {
            self.q.schedule(end, Ev::BurstEnd { cpu, gen });
        }
        self.spin_check(cpu, now);
        self.hrtick_schedule(cpu, now, switched);
        if prev.is_none() {
            self.wait_for_turn(cpu, now);
        }
    }

    /// A pending wakeup's latency, from its stamp to `first_instruction`.
    pub(super) fn record_latency(
        &mut self,
        cpu: u32,
        tid: Tid,
        first_instruction: Nanos,
        now: Nanos,
    ) {
        let t = &mut self.threads[tid];
        let Some(stamp) = t.wake_stamp.take().filter(|&s| s >= self.cfg.warmup_ns) else {
            return;
        };
        let lat = first_instruction.saturating_sub(stamp);
        t.hist.record_at(lat, stamp);
        if self.observers.wants(Interest::LATENCY) {
            self.observers.emit(SimEvent::Latency {
                ts: now,
                cpu,
                task: tid,
                woke: stamp,
                latency: lat,
            });
        }
    }

    /// `Switch` (when what runs changed) and the `Pick` behind it;
    /// `in_kernel`: the switch preempts kernel code.
    pub(super) fn emit_switch(
        &mut self,
        cpu: u32,
        prev: Option<Tid>,
        next: Option<Tid>,
        now: Nanos,
        in_kernel: bool,
    ) {
        if prev != next {
            let prev_state = match prev {
                Some(p) if self.threads[p].state != State::Sleeping && in_kernel => {
                    PrevState::Preempted
                }
                Some(p) if self.threads[p].state != State::Sleeping => PrevState::Runnable,
                Some(p) if self.threads[p].on_mutex => PrevState::Uninterruptible,
                Some(_) => PrevState::Sleeping,
                None => PrevState::Preempted,
            };
            self.observers.emit(SimEvent::Switch {
                ts: now,
                cpu,
                prev,
                prev_state,
                next,
            });
        }
        let rq = &self.cpus[cpu as usize].rq;
        let reason = next.and_then(|_| rq.last_pick.first().map(|s| s.reason));
        // The pick that stood: the last step at the root, after any
        // delayed entity it dequeued and started over from.
        let root = CfsRqId::ROOT;
        let picked = next.and_then(|_| {
            let step = rq
                .last_pick
                .iter()
                .rev()
                .find(|s| s.cfs_rq == root && !s.dequeued_delayed)?;
            rq.get_se(step.picked)?;
            Some(lag_at(rq, step.picked, step.avg_vruntime))
        });
        self.observers.emit(SimEvent::Pick {
            ts: now,
            cpu,
            next,
            reason,
            picked,
            nr_queued: rq.cfs(root).nr_queued,
        });
    }

    /// `WakeupPreempt` with both sides' lags after the decision.
    pub(super) fn emit_wakeup_preempt(
        &mut self,
        cpu: u32,
        tid: Tid,
        decision: WakeupDecision,
        now: Nanos,
    ) {
        let c = &self.cpus[cpu as usize];
        let now_at =
            |eid: EntityId| lag_at(&c.rq, eid, c.rq.avg_vruntime_peek(c.rq.se(eid).cfs_rq));
        let wakee = now_at(self.threads[tid].eid);
        let nr_queued = c.rq.cfs(c.rq.se(self.threads[tid].eid).cfs_rq).nr_queued;
        let curr = c.curr;
        let curr_lag = curr.map(|t| now_at(self.threads[t].eid));
        self.observers.emit(SimEvent::WakeupPreempt {
            ts: now,
            cpu,
            task: tid,
            curr,
            decision,
            wakee,
            curr_lag,
            nr_queued,
        });
    }

    pub(super) fn tid_of(&self, cpu: u32, eid: EntityId) -> Tid {
        self.cpus[cpu as usize].owner[eid.0 as usize].expect("picked entity belongs to a thread")
    }

    /// `try_to_wake_up()` runs in the waker's context: a task that wakes
    /// `n` others spends `costs.wake_ns` of its own CPU time on each, one
    /// after the other, before its work goes on (a 6.12.95 ct-hackbench
    /// trace spaces one sender's wakeups 10-11 us apart: a 2.6 us write,
    /// the wakeup, and two tracepoints of about 1.7 us). Returns when
    /// each wakee is enqueued. A thread that sleeps right after its
    /// wakeups sleeps when they are done (`State::Blocking`), and no
    /// reschedule takes its CPU before (`Cpu::wakes_end`).
    pub(super) fn owe_wakes(
        &mut self,
        waker: Tid,
        n: usize,
        now: Nanos,
    ) -> impl Iterator<Item = Nanos> {
        let wake = self.cfg.costs.wake_ns;
        let t = &mut self.threads[waker];
        t.owed = t.owed.saturating_add(wake.saturating_mul(n as u64));
        (1..=n as u64).map(move |i| now.saturating_add(wake.saturating_mul(i)))
    }

    /// When `tid`, starting on `cpu` at `from`, gets to its work: after
    /// the wakeup work it owes, which the CPU remembers in case `tid` is
    /// switched out first.
    pub(super) fn start_after_owed(&mut self, cpu: u32, tid: Tid, from: Nanos) -> Nanos {
        let owed = std::mem::take(&mut self.threads[tid].owed);
        let c = &mut self.cpus[cpu as usize];
        c.owed = owed;
        c.wakes_end = if owed > 0 {
            from.saturating_add(owed)
        } else {
            0
        };
        // An interrupt does not outlast the switch that ended it.
        c.irq_end = c.irq_end.min(from);
        from.saturating_add(owed)
    }
}

/// Entity `eid` of `rq` against `v`, the V of its queue (`LagAt`: `V - v`
/// and `deadline - V` in virtual ns, eligibility as the kernel tests it).
fn lag_at(rq: &Rq, eid: EntityId, v: u64) -> LagAt {
    let se = rq.se(eid);
    LagAt {
        lag: v.wrapping_sub(se.vruntime) as i64,
        eligible: rq.entity_eligible(se.cfs_rq, eid),
        deadline_to_v: se.deadline.wrapping_sub(v) as i64,
    }
}
