//! Read-only views of a running simulator (its threads, CPUs and
//! queues) for tests, teaching and the page, and the invariant check
//! of its threads.

use super::*;

impl Sim {
    /// The CPU thread `tid` (creation order) is on or last ran on.
    pub fn thread_cpu(&self, tid: usize) -> u32 {
        self.threads[tid].cpu
    }

    /// Whether a thread is queued on its CPU (runnable, not running).
    pub fn thread_queued(&self, tid: usize) -> bool {
        self.threads[tid].state == State::Runnable
    }

    /// The time of the next event, if any.
    pub fn next_event_time(&self) -> Option<Nanos> {
        self.q.peek_time()
    }

    /// When thread `tid`'s armed timer fires (a timer or periodic task's
    /// next activation plus slack), if one is armed.
    pub fn thread_timer_at(&self, tid: usize) -> Option<Nanos> {
        self.threads[tid].timer_at
    }

    /// Thread `tid`'s name, `NAME.I` (task name, index in its count).
    pub fn thread_name(&self, tid: usize) -> String {
        let t = &self.threads[tid];
        format!("{}.{}", self.cfg.tasks[t.directive].name, t.index)
    }

    /// A name for entity `eid` of `cpu`'s runqueue: `NAME.I` for a
    /// thread, the group path for a group entity.
    pub fn entity_name(&self, cpu: u32, eid: EntityId) -> String {
        let c = &self.cpus[cpu as usize];
        if let Some(Some(tid)) = c.owner.get(eid.0 as usize) {
            return self.thread_name(*tid);
        }
        if let Some(g) = c.groups.iter().position(|(e, _)| *e == eid) {
            if let Some(spec) = self.cfg.groups.get(g) {
                return spec.path.clone();
            }
        }
        format!("se{}", eid.0)
    }

    /// The `task` directive of the thread owning `eid` on `cpu`, if a thread does.
    pub fn entity_directive(&self, cpu: u32, eid: EntityId) -> Option<usize> {
        let c = &self.cpus[cpu as usize];
        c.owner
            .get(eid.0 as usize)
            .copied()
            .flatten()
            .map(|tid| self.threads[tid].directive)
    }

    /// The threads as traces name them (pid 1000 + creation order).
    pub fn trace_tasks(&self) -> Vec<TraceTask> {
        self.threads
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let spec = &self.cfg.tasks[t.directive];
                TraceTask {
                    comm: spec.name.chars().take(15).collect(),
                    pid: 1000 + i as u32,
                    prio: 120 + spec.nice,
                }
            })
            .collect()
    }

    /// One CPU's runqueue (read-only), for tests and the teaching view.
    pub fn rq(&self, cpu: u32) -> &Rq {
        &self.cpus[cpu as usize].rq
    }

    /// Checks that every thread is where its state says (docs/model.md §9
    /// invariant 14, no lost wakeups): running threads are their CPU's
    /// current task; runnable ones are queued and not delayed; sleeping
    /// ones are off the queue or delayed; each thread's entity lives on
    /// its CPU; every runqueue passes its own invariant check.
    pub fn check_threads(&self) -> Result<(), String> {
        for (tid, t) in self.threads.iter().enumerate() {
            let c = &self.cpus[t.cpu as usize];
            if c.owner.get(t.eid.0 as usize).copied().flatten() != Some(tid) {
                return Err(format!("thread {tid}: entity not owned on CPU {}", t.cpu));
            }
            let se = c.rq.se(t.eid);
            match t.state {
                State::Running | State::Blocking => {
                    if c.curr != Some(tid) || c.rq.curr_task != Some(t.eid) || !se.on_rq {
                        return Err(format!(
                            "thread {tid}: running but not current on CPU {}",
                            t.cpu
                        ));
                    }
                }
                State::Runnable => {
                    if !se.on_rq || se.sched_delayed {
                        return Err(format!(
                            "thread {tid}: runnable but not queued (lost wakeup)"
                        ));
                    }
                }
                State::Sleeping | State::Waking => {
                    if se.on_rq && !se.sched_delayed {
                        return Err(format!("thread {tid}: asleep but queued"));
                    }
                    if c.curr == Some(tid) {
                        return Err(format!("thread {tid}: asleep but current"));
                    }
                }
            }
            // A wakee on a halted vCPU's wakelist sleeps until that
            // vCPU's turn, which the vCPU's flag promises (turns.rs).
            if t.on_wake_list
                && (!c.ttwu_pending || !matches!(t.state, State::Sleeping | State::Waking))
            {
                return Err(format!(
                    "thread {tid}: on CPU {}'s wakelist, which is not pending, or awake",
                    t.cpu
                ));
            }
            if !t.allowed.contains(&t.cpu) && t.started {
                return Err(format!(
                    "thread {tid}: on CPU {} outside its affinity",
                    t.cpu
                ));
            }
        }
        for (i, c) in self.cpus.iter().enumerate() {
            c.rq.check_invariants()
                .map_err(|e| format!("CPU {i}: {e}"))?;
            if let Some(tid) = c.curr {
                if self.threads[tid].cpu != i as u32 {
                    return Err(format!(
                        "CPU {i} runs thread {tid} of CPU {}",
                        self.threads[tid].cpu
                    ));
                }
            }
        }
        self.check_pipe_mutexes()
    }

    /// The thread running on `cpu` (an index in creation order), if any;
    /// for live views.
    pub fn cpu_curr(&self, cpu: u32) -> Option<usize> {
        self.cpus[cpu as usize].curr
    }

    /// Tasks queued on `cpu` (running and delayed ones included), the
    /// kernel's `rq->cfs.h_nr_queued`.
    pub fn cpu_queued(&self, cpu: u32) -> u32 {
        self.cpus[cpu as usize].rq.h_nr_queued
    }

    /// CPU time of each thread so far, in creation order, as of its
    /// queue's last `update_curr` (a progress view's figure: `finish`
    /// brings it to the end). O(threads), and it changes nothing.
    pub fn thread_cpu_ns(&self) -> Vec<Nanos> {
        self.threads
            .iter()
            .map(|t| self.cpus[t.cpu as usize].rq.se(t.eid).sum_exec_runtime)
            .collect()
    }

    /// Busy time of `cpu` up to `now` and its PELT utilisation.
    pub fn cpu_busy_util(&self, cpu: u32, now: Nanos) -> (Nanos, u64) {
        let c = &self.cpus[cpu as usize];
        let open = c.busy_since.map_or(0, |s| now.saturating_sub(s));
        (c.busy_ns + open, balance::cpu_util(c, c.util.avg))
    }

    /// `cfs_rq->avg.util_avg` of `cpu` at `now`: not capped at its
    /// capacity, as the kernel keeps it (readers cap it, `cpu_util()`).
    pub fn cpu_util_avg(&self, cpu: u32, now: Nanos) -> u64 {
        let c = &self.cpus[cpu as usize];
        c.util.peek(now, balance::busy_level(c))
    }

    /// `se->avg.util_avg` of a thread at `now`.
    pub fn thread_util_avg(&self, tid: usize, now: Nanos) -> u64 {
        let (running, _) = self.pelt_levels(tid);
        self.threads[tid].util.peek(now, running)
    }

    /// The `task` directive each thread came from, in creation order.
    pub fn thread_directives(&self) -> Vec<usize> {
        self.threads.iter().map(|t| t.directive).collect()
    }

    /// The machine being simulated.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// CPU time consumed so far by each thread, in creation order.
    pub fn thread_runtimes(&self) -> Vec<Nanos> {
        self.threads
            .iter()
            .map(|t| self.cpus[t.cpu as usize].rq.se(t.eid).sum_exec_runtime)
            .collect()
    }
}
