//! hackbench's threads on the simulator's CPUs: planning a burst from
//! the pipes (`hackbench::sender_batch`, `receiver_batch`), moving
//! messages and the wakeups they cause, and `pipe->mutex` across a
//! preemption (docs/model.md §6).

use super::*;

impl Sim {
    /// A hackbench thread plans its batch when it starts running, from
    /// the pipes as they are then (`hackbench::sender_batch`,
    /// `receiver_batch`). Progress into an unfinished message, left by a
    /// preemption, is kept. A batch of 0 still runs one message's work:
    /// the write or read that finds no room or no data and sleeps.
    pub(super) fn plan_hackbench(&mut self, tid: Tid) {
        let Some((unit, batch)) = unit_and_batch(&self.threads[tid].role) else {
            return;
        };
        let t = &self.threads[tid];
        let into = if batch > 0 {
            batch.saturating_mul(unit).saturating_sub(t.remaining)
        } else {
            0
        };
        debug_assert!(into < unit, "progress into one message only (thread {tid})");
        let by = hackbench::Planner {
            me: tid,
            mid_message: hackbench::past_mutex_lock(mutex_window(&t.role), into, unit),
            any_held: self.mutexes_held > 0,
        };
        let mut n = match &t.role {
            Role::Sender {
                pipe_base,
                npipes,
                next,
                left,
                waited,
                ..
            } => hackbench::sender_batch(
                &self.pipes[*pipe_base..*pipe_base + *npipes],
                *next,
                *left,
                *waited,
                by,
            ),
            Role::Receiver { pipe, left, .. } => {
                hackbench::receiver_batch(&self.pipes[*pipe], *left, by)
            }
            _ => unreachable!(),
        };
        // A holder others wait for ends its burst at the unlock.
        let p = current_pipe(&t.role);
        if self.pipes[p].mutex_owner == Some(tid) && !self.pipes[p].mutex_waiters.is_empty() {
            n = n.min(1);
        }
        let t = &mut self.threads[tid];
        t.remaining = n.max(1).saturating_mul(unit).min(FOREVER) - into;
        set_batch(&mut t.role, n);
    }

    /// A hackbench burst ended: its messages move, then the thread plans
    /// its next burst, or sleeps where the pipe says (no room: in the
    /// write, until a reader makes some; no data: in the read).
    pub(super) fn hackbench_burst_end(
        &mut self,
        tid: Tid,
        batch: u64,
        now: Nanos,
    ) -> Option<Nanos> {
        self.move_messages(tid, batch, now);
        let left = match self.threads[tid].role {
            Role::Sender { left, .. } | Role::Receiver { left, .. } => left,
            _ => unreachable!("only hackbench threads have batches"),
        };
        if left == 0 {
            self.hackbench_thread_done(self.threads[tid].directive, now);
            return None;
        }
        self.threads[tid].remaining = 0;
        set_batch(&mut self.threads[tid].role, 0);
        self.plan_hackbench(tid);
        match &mut self.threads[tid].role {
            Role::Sender {
                batch: 0,
                pipe_base,
                next,
                waited,
                ..
            } => {
                let p = *pipe_base + *next;
                if self.pipes[p].locked_against(tid) {
                    self.sleep_on_mutex(tid, p);
                } else {
                    *waited = true;
                    self.pipes[p].writers_waiting.push(tid);
                    self.pass_mutex_on(tid, p, now);
                }
                None
            }
            Role::Receiver { batch: 0, pipe, .. } => {
                let p = *pipe;
                if self.pipes[p].locked_against(tid) {
                    self.sleep_on_mutex(tid, p);
                } else {
                    self.pipes[p].reader_waiting = true;
                    self.pass_mutex_on(tid, p, now);
                }
                None
            }
            _ => Some(self.threads[tid].remaining),
        }
    }

    /// A hackbench thread switched out in the middle of its batch: the
    /// messages it finished reach the pipe now (and wake whom they wake),
    /// not at the end of the batch.
    /// Preempted in the kernel (`in_kernel`) inside a message, it keeps
    /// that pipe's mutex until it finishes the message.
    pub(super) fn hackbench_preempted(&mut self, tid: Tid, now: Nanos, in_kernel: bool) {
        let Some((unit, batch)) = unit_and_batch(&self.threads[tid].role) else {
            return;
        };
        let done_work = batch
            .saturating_mul(unit)
            .saturating_sub(self.threads[tid].remaining);
        let done = (done_work / unit).min(batch);
        if done > 0 {
            self.move_messages(tid, done, now);
            set_batch(&mut self.threads[tid].role, batch - done);
        }
        let window = mutex_window(&self.threads[tid].role);
        if in_kernel && done < batch && hackbench::under_mutex(window, done_work % unit, unit) {
            let p = current_pipe(&self.threads[tid].role);
            let free = self.pipes[p].mutex_owner.is_none();
            self.pipes[p].hold_mutex(tid);
            if free && self.pipes[p].mutex_owner.is_some() {
                self.mutexes_held += 1;
            }
        }
    }

    /// `tid` is through pipe `p`: its unlock (if it held the mutex or
    /// had it handed over) and the waiter that wakes.
    pub(super) fn unlock(&mut self, tid: Tid, p: usize) -> Option<Tid> {
        if self.pipes[p].mutex_owner == Some(tid) {
            self.mutexes_held -= 1;
        }
        let woken = self.pipes[p].release_mutex(tid);
        if let Some(w) = woken {
            // Off the wait list: its wakeup is on its way.
            self.threads[w].on_mutex = false;
        }
        woken
    }

    /// Blocks `tid` in `mutex_lock()` on pipe `p` (the caller sleeps it).
    pub(super) fn sleep_on_mutex(&mut self, tid: Tid, p: usize) {
        self.pipes[p].wait_for_mutex(tid);
        self.threads[tid].on_mutex = true;
    }

    /// A thread leaves pipe `p` without a message to sleep for room or
    /// data: `pipe_write()`/`pipe_read()` unlock before they wait, and a
    /// woken waiter passes the wakeup on.
    pub(super) fn pass_mutex_on(&mut self, tid: Tid, p: usize, now: Nanos) {
        if let Some(w) = self.unlock(tid, p) {
            let waker = Some(self.threads[tid].cpu);
            if let Some(at) = self.owe_wakes(tid, 1, now).next() {
                self.q.schedule(
                    at,
                    Ev::Wake {
                        tid: w,
                        sync: false,
                        from_task: true,
                        waker,
                    },
                );
            }
        }
    }

    /// Writes (a sender) or reads (a receiver) `count` messages, waking
    /// whom the pipes say; returns how many moved (a pipe another CPU
    /// filled or drained may take fewer).
    pub(super) fn move_messages(&mut self, tid: Tid, count: u64, now: Nanos) -> u64 {
        let mut woken = std::mem::take(&mut self.woken);
        let first = current_pipe(&self.threads[tid].role);
        let mut sent = 0;
        let moved = match &mut self.threads[tid].role {
            Role::Sender {
                pipe_base,
                npipes,
                next,
                left,
                waited,
                ..
            } => {
                let pipes = &mut self.pipes[*pipe_base..*pipe_base + *npipes];
                let wrote = hackbench::write_round_robin(
                    pipes,
                    *next,
                    count.min(*left),
                    *waited,
                    &mut woken,
                );
                if wrote > 0 {
                    *waited = false;
                }
                *next = (*next + (wrote % *npipes as u64) as usize) % *npipes;
                if *left != u64::MAX {
                    *left -= wrote;
                }
                sent = wrote;
                wrote
            }
            Role::Receiver { pipe, left, .. } => {
                let got = self.pipes[*pipe].read_many(count.min(*left), &mut woken);
                if *left != u64::MAX {
                    *left -= got;
                }
                got
            }
            _ => 0,
        };
        if sent > 0 {
            let directive = self.threads[tid].directive;
            self.emit_workload(SimEvent::Messages {
                ts: now,
                directive,
                count: sent,
            });
        }
        // mutex_unlock() comes before the pipe's wakeups, and its
        // wake_up_q() is not a sync wakeup.
        let unlocked = if moved > 0 {
            self.unlock(tid, first)
        } else {
            None
        };
        let waker = Some(self.threads[tid].cpu);
        let n = woken.len() + usize::from(unlocked.is_some());
        let at = self.owe_wakes(tid, n, now);
        let mutex_wake = unlocked.map(|w| (w, false));
        let pipe_wakes = woken.drain(..).map(|w| (w, true));
        for ((w, sync), at) in mutex_wake.into_iter().chain(pipe_wakes).zip(at) {
            self.q.schedule(
                at,
                Ev::Wake {
                    tid: w,
                    sync,
                    from_task: true,
                    waker,
                },
            );
        }
        self.woken = woken;
        moved
    }

    pub(super) fn hackbench_thread_done(&mut self, d: usize, now: Nanos) {
        if self.hb_left[d] != u64::MAX && self.hb_left[d] > 0 {
            self.hb_left[d] -= 1;
            if self.hb_left[d] == 0 {
                self.emit_workload(SimEvent::HackbenchDone {
                    ts: now,
                    directive: d,
                });
            }
        }
    }

    /// A running hackbench thread's work into its current message, and
    /// the message's cost.
    pub(super) fn message_pos(&self, cpu: u32, tid: Tid, now: Nanos) -> Option<(Nanos, Nanos)> {
        let c = &self.cpus[cpu as usize];
        let t = &self.threads[tid];
        let (unit, batch) = unit_and_batch(&t.role).filter(|&(u, _)| u > 0)?;
        let ran = now
            .saturating_sub(c.run_start)
            .min(c.burst_end.saturating_sub(c.run_start));
        let left = t.remaining.saturating_sub(work_in_wall(ran, c.capacity));
        let done = batch.max(1).saturating_mul(unit).saturating_sub(left);
        Some((done % unit, unit))
    }

    /// Every held mutex is counted and its holder is not asleep; every
    /// thread on a mutex sleeps there and only there.
    pub(super) fn check_pipe_mutexes(&self) -> Result<(), String> {
        let held = self
            .pipes
            .iter()
            .filter(|p| p.mutex_owner.is_some())
            .count();
        if held != self.mutexes_held as usize {
            return Err(format!(
                "{held} pipe mutexes held, {} counted",
                self.mutexes_held
            ));
        }
        for (i, p) in self.pipes.iter().enumerate() {
            if let Some(o) = p.mutex_owner {
                if self.threads[o].state == State::Sleeping {
                    return Err(format!("pipe {i}: mutex held by sleeping thread {o}"));
                }
            }
            for &w in &p.mutex_waiters {
                if !self.threads[w].on_mutex
                    || !matches!(self.threads[w].state, State::Sleeping | State::Blocking)
                {
                    return Err(format!("pipe {i}: waiter {w} is not asleep on it"));
                }
            }
        }
        let waiting = self
            .pipes
            .iter()
            .map(|p| p.mutex_waiters.len())
            .sum::<usize>();
        let on_mutex = self.threads.iter().filter(|t| t.on_mutex).count();
        if waiting != on_mutex {
            return Err(format!("{on_mutex} threads on a mutex, {waiting} waiting"));
        }
        Ok(())
    }
}

/// A hackbench thread's work per message and the messages of its burst
/// in progress.
pub(super) fn unit_and_batch(role: &Role) -> Option<(Nanos, u64)> {
    match *role {
        Role::Sender { send, batch, .. } => Some((send, batch)),
        Role::Receiver { recv, batch, .. } => Some((recv, batch)),
        _ => None,
    }
}

/// Where a hackbench thread's message holds `pipe->mutex`.
pub(super) fn mutex_window(role: &Role) -> (u64, u64) {
    match role {
        Role::Sender { .. } => hackbench::WRITE_LOCKED,
        _ => hackbench::READ_LOCKED,
    }
}

/// The pipe of a hackbench thread's next (or current) message.
pub(super) fn current_pipe(role: &Role) -> usize {
    match *role {
        Role::Sender {
            pipe_base, next, ..
        } => pipe_base + next,
        Role::Receiver { pipe, .. } => pipe,
        _ => unreachable!("only hackbench threads use pipes"),
    }
}

/// The messages of a hackbench thread's burst in progress.
pub(super) fn set_batch(role: &mut Role, n: u64) {
    match role {
        Role::Sender { batch, .. } | Role::Receiver { batch, .. } => *batch = n,
        _ => unreachable!("only hackbench threads have batches"),
    }
}
