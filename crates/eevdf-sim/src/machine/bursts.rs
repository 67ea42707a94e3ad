//! A thread's bursts: the end of one, blocking, advancing its workload
//! to the next, sleeping, and waking the workers it asks.

use super::*;

impl Sim {
    /// The running thread finished its burst: advance its workload.
    pub(super) fn burst_end(&mut self, cpu: u32, now: Nanos) {
        self.account_running(cpu, now);
        let tid = self.cpus[cpu as usize]
            .curr
            .expect("burst end on a busy CPU");
        if std::mem::replace(&mut self.threads[tid].park, Park::No) == Park::Fired {
            self.resume_fired(cpu, tid, now);
            return;
        }
        if self.threads[tid].state == State::Blocking {
            // Its wakeups are done: now it sleeps.
            self.block(cpu, tid, now);
            return;
        }
        self.threads[tid].remaining = 0;
        let next = self.advance(tid, now);
        match next {
            Some(burst) => {
                // Continue running; a pending reschedule is honoured on the
                // way back to user space, after the wakeups this syscall
                // does (`honour_resched`).
                self.threads[tid].remaining = burst;
                let start = self.start_after_owed(cpu, tid, now);
                self.start_burst(cpu, start, burst);
                self.spin_check(cpu, now);
                if self.cpus[cpu as usize].rq.resched.is_some() {
                    self.honour_resched(cpu, now);
                }
            }
            None if self.threads[tid].owed > 0 => {
                // The syscall that sleeps first finishes its wakeups, so
                // its wakees are queued before the pick.
                self.threads[tid].state = State::Blocking;
                let start = self.start_after_owed(cpu, tid, now);
                self.start_burst(cpu, start, 0);
            }
            None if self.kicked(cpu) => {
                // The timer it armed kicked its vCPU out of the turn
                // before `schedule()`: it sleeps at the vCPU's next turn,
                // curr and charged meanwhile, unless its timer has fired
                // by then (`do_nanosleep()` then returns at once).
                self.threads[tid].state = State::Blocking;
                self.threads[tid].park = Park::Armed;
                self.start_burst(cpu, now, 0);
            }
            None => self.block(cpu, tid, now),
        }
    }

    /// A parked sleeper whose timer fired meanwhile runs again
    /// (`burst_end`; one still parked sleeps there as any `Blocking`
    /// thread): its next activation starts at once.
    fn resume_fired(&mut self, cpu: u32, tid: Tid, now: Nanos) {
        let t = &mut self.threads[tid];
        t.state = State::Running;
        let burst = first_burst(&t.role);
        t.remaining = burst;
        // The syscall's return to user honours a pending request before
        // the thread reads the clock: then it is timed when it runs again.
        if self.cpus[cpu as usize].rq.resched.is_some() {
            self.honour_resched(cpu, now);
            if self.cpus[cpu as usize].curr != Some(tid) {
                return;
            }
        }
        self.record_latency(cpu, tid, now, now);
        self.start_burst(cpu, now, burst);
    }

    /// The running thread's next burst of `work` starts at `start`.
    fn start_burst(&mut self, cpu: u32, start: Nanos, work: Nanos) {
        let c = &mut self.cpus[cpu as usize];
        c.gen += 1;
        let gen = c.gen;
        c.run_start = start;
        c.burst_end = start + wall_for_work(work, c.capacity);
        self.q.schedule(c.burst_end, Ev::BurstEnd { cpu, gen });
    }

    /// `tid`, curr on `cpu`, sleeps: dequeue and schedule.
    pub(super) fn block(&mut self, cpu: u32, tid: Tid, now: Nanos) {
        let eid = self.threads[tid].eid;
        self.pelt_cpu(cpu, now);
        self.pelt_thread(tid, now);
        self.threads[tid].state = State::Sleeping;
        let c = &mut self.cpus[cpu as usize];
        c.rq.set_clock(now);
        c.rq.dequeue_task(eid, DequeueFlags::SLEEP);
        self.update_group_share(cpu, tid, now);
        self.switch(cpu, now);
    }

    /// Advances a thread's workload at the end of a burst. Returns the
    /// next burst to run at once, or `None` if the thread sleeps (its
    /// wakeup, if timed, is scheduled here).
    pub(super) fn advance(&mut self, tid: Tid, now: Nanos) -> Option<Nanos> {
        match &mut self.threads[tid].role {
            Role::Hog => Some(FOREVER),
            Role::Timer(t) => {
                let next = t.next_expiry(now);
                self.sleep_until(tid, next, now);
                None
            }
            Role::Periodic(p) => {
                let next = p.next_activation(now);
                self.sleep_until(tid, next, now);
                None
            }
            &mut Role::Sender { batch, .. } | &mut Role::Receiver { batch, .. } => {
                self.hackbench_burst_end(tid, batch, now)
            }
            Role::Message(m) => {
                // One worker's check and wake call; its return to user is
                // a preemption point (`burst_end`'s `honour_resched`).
                let (worker, more) = m.ask_next();
                let (step, think) = (m.step(), m.think);
                if let Some(w) = worker {
                    self.ask_worker(tid, w, now);
                }
                if more {
                    return Some(step);
                }
                // The think starts when the round's last call returns.
                let returned = now.saturating_add(self.threads[tid].owed);
                self.sleep_until(tid, returned.saturating_add(think), now);
                None
            }
            Role::Worker(w) => {
                if let Some(asked) = w.serve() {
                    let directive = self.threads[tid].directive;
                    self.emit_workload(SimEvent::Request {
                        ts: now,
                        directive,
                        asked,
                    });
                }
                None
            }
        }
    }

    /// Arms the timer of a thread whose activation ended: it wakes at
    /// `next` (its nominal time, where latency counts from) plus slack.
    #[inline]
    pub(super) fn sleep_until(&mut self, tid: Tid, next: Nanos, now: Nanos) {
        let t = &mut self.threads[tid];
        t.wake_stamp = Some(next);
        let at = next.max(now) + t.slack;
        self.arm_timer(tid, at, now);
    }

    /// Arms `tid`'s timer to fire at `at`.
    pub(super) fn arm_timer(&mut self, tid: Tid, at: Nanos, now: Nanos) {
        self.threads[tid].timer_at = Some(at);
        self.q.schedule(at, Ev::Timer { tid });
        let cpu = self.threads[tid].cpu;
        self.timer_armed(cpu, at, now);
    }

    /// A schbench message thread asks worker `w` for a request if it is
    /// idle: the wake call runs in the message thread's context and
    /// costs it `wake` (`owe_wakes`); the worker is queued when it ends.
    pub(super) fn ask_worker(&mut self, tid: Tid, w: Tid, now: Nanos) {
        if self.threads[w].state != State::Sleeping {
            return;
        }
        let waker = Some(self.threads[tid].cpu);
        let t = &mut self.threads[w];
        if let Role::Worker(worker) = &mut t.role {
            worker.ask(now);
        }
        t.state = State::Waking;
        t.wake_stamp = Some(now);
        if let Some(at) = self.owe_wakes(tid, 1, now).next() {
            let wake = Ev::Wake {
                tid: w,
                sync: false,
                from_task: true,
                waker,
            };
            self.q.schedule(at, wake);
        }
    }

    /// Feeds a workload event to the statistics the result is built
    /// from, and to any observer that takes them.
    #[inline]
    pub(super) fn emit_workload(&mut self, e: SimEvent) {
        self.stats.take(&e);
        if self.observers.wants(Interest::WORKLOAD) {
            self.observers.emit(e);
        }
    }
}
