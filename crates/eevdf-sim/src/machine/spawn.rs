//! Creating a scenario's threads: each task directive's roles (a
//! hackbench group's senders and receivers, a schbench message thread
//! and its workers, ...), their entities on the CPUs they start on, and
//! their first wakeup or timer.

use super::*;
use crate::config::TaskSpec;

/// Where a directive's threads may run and which group they join.
struct Home {
    allowed: Rc<[u32]>,
    group: Option<usize>,
    kernel: Option<(u32, Nanos)>,
}

impl Sim {
    pub(super) fn spawn_threads(&mut self, rng: &mut SimRng) {
        let nr = self.cpus.len() as u32;
        let mut rr = 0u32;
        let tick = self.cpus[0].rq.config.tick_nsec;
        let specs = self.cfg.tasks.clone();
        // One shared list per directive (and one for "every CPU"): 4096
        // threads on 512 CPUs would otherwise copy 8 MB of CPU numbers.
        let all: Rc<[u32]> = (0..nr).collect();
        for (d, spec) in specs.iter().enumerate() {
            let home = self.home_of(spec, &all);
            let roles = self.roles_of(d, spec, rng, tick);
            for (i, (role, start)) in roles.into_iter().enumerate() {
                // Round-robin initial placement over allowed CPUs.
                let mut cpu = rr % nr;
                for _ in 0..nr {
                    if home.allowed.contains(&cpu) {
                        break;
                    }
                    cpu = (cpu + 1) % nr;
                }
                rr = cpu + 1;
                self.spawn_thread(d, i, spec, &home, (role, start), cpu);
            }
        }
    }

    fn home_of(&self, spec: &TaskSpec, all: &Rc<[u32]>) -> Home {
        let nr = self.cpus.len() as u32;
        let pinned: Vec<u32> = spec
            .cpus
            .iter()
            .flatten()
            .copied()
            .filter(|c| *c < nr)
            .collect();
        let allowed: Rc<[u32]> = if pinned.is_empty() {
            Rc::clone(all)
        } else {
            pinned.into()
        };
        let group = spec
            .group
            .as_ref()
            .and_then(|g| self.cfg.groups.iter().position(|x| &x.path == g));
        // hackbench without `kernel`/`ksection` keys: its messages decide.
        let by_message = matches!(spec.workload, Workload::Hackbench { .. })
            && spec.kernel_pct.is_none()
            && spec.ksection_ns.is_none();
        Home {
            allowed,
            group,
            kernel: (!by_message).then(|| spec.kernel()),
        }
    }

    /// (role, start offset) for each thread of directive `d`.
    fn roles_of(
        &mut self,
        d: usize,
        spec: &TaskSpec,
        rng: &mut SimRng,
        tick: Nanos,
    ) -> Vec<(Role, Nanos)> {
        let mut roles: Vec<(Role, Nanos)> = Vec::new();
        let sleep_cost = self.cfg.costs.sleep_ns;
        match &spec.workload {
            Workload::Timer { period_ns, run_ns } => {
                for _ in 0..spec.count.max(1) {
                    let off = spec.start_ns + rng.below((*period_ns).max(1));
                    roles.push((
                        Role::Timer(Timer {
                            period: (*period_ns).max(1),
                            run: run_ns.saturating_add(sleep_cost),
                            expiry: off,
                        }),
                        off,
                    ));
                }
            }
            Workload::Periodic {
                run_ns,
                sleep_ns,
                period_ns,
            } => {
                let window = period_ns.unwrap_or(run_ns + sleep_ns).max(1);
                for _ in 0..spec.count.max(1) {
                    let off = spec.start_ns + rng.below(window);
                    roles.push((
                        Role::Periodic(Periodic {
                            run: run_ns.saturating_add(sleep_cost).max(1),
                            sleep: *sleep_ns,
                            period: *period_ns,
                            activation: off,
                        }),
                        off,
                    ));
                }
            }
            Workload::Hog => {
                for _ in 0..spec.count.max(1) {
                    roles.push((Role::Hog, spec.start_ns + rng.below(tick)));
                }
            }
            Workload::Hackbench { .. } => self.hackbench_roles(d, spec, rng, tick, &mut roles),
            Workload::Schbench { .. } => self.schbench_roles(spec, rng, tick, &mut roles),
        }
        roles
    }

    /// A hackbench directive's groups: each group's senders, then its
    /// receivers, with one pipe (or socket) per receiver.
    fn hackbench_roles(
        &mut self,
        d: usize,
        spec: &TaskSpec,
        rng: &mut SimRng,
        tick: Nanos,
        roles: &mut Vec<(Role, Nanos)>,
    ) {
        let Workload::Hackbench {
            groups,
            fds,
            loops,
            send_ns,
            recv_ns,
            pipe,
            pipe_msgs,
            ..
        } = &spec.workload
        else {
            unreachable!("hackbench roles of another workload")
        };
        let fds = (*fds).max(1) as usize;
        let first_tid = self.threads.len();
        let kind = if *pipe {
            hackbench::Kind::Pipe {
                pages: hackbench::pipe_pages(*pipe_msgs),
            }
        } else {
            hackbench::Kind::Socket {
                capacity: u64::from((*pipe_msgs).max(1)),
            }
        };
        for _g in 0..(*groups).max(1) {
            let base = first_tid + roles.len();
            // Receivers come after the group's senders.
            let pipe_base = self.pipes.len();
            for r in 0..fds {
                self.pipes.push(Pipe::new(kind, base + fds + r, d));
            }
            let per_sender = if *loops == 0 {
                u64::MAX
            } else {
                loops * fds as u64
            };
            for _ in 0..fds {
                roles.push((
                    Role::Sender {
                        pipe_base,
                        npipes: fds,
                        next: 0,
                        left: per_sender,
                        send: (*send_ns).max(1),
                        batch: 0,
                        waited: false,
                    },
                    spec.start_ns + rng.below(tick),
                ));
            }
            for r in 0..fds {
                roles.push((
                    Role::Receiver {
                        pipe: pipe_base + r,
                        left: per_sender,
                        recv: (*recv_ns).max(1),
                        batch: 0,
                    },
                    spec.start_ns + rng.below(tick),
                ));
            }
        }
        self.hb_left[d] = if *loops == 0 {
            u64::MAX
        } else {
            roles.len() as u64
        };
    }

    /// A schbench directive's message threads, each followed by its
    /// workers (woken by the message thread, not at start).
    fn schbench_roles(
        &mut self,
        spec: &TaskSpec,
        rng: &mut SimRng,
        tick: Nanos,
        roles: &mut Vec<(Role, Nanos)>,
    ) {
        let Workload::Schbench {
            message_threads,
            workers,
            request_ns,
            sleep_ns,
        } = &spec.workload
        else {
            unreachable!("schbench roles of another workload")
        };
        let first_tid = self.threads.len();
        for _m in 0..(*message_threads).max(1) {
            let base = first_tid + roles.len();
            let ws: Vec<Tid> = (1..=(*workers).max(1) as usize).map(|w| base + w).collect();
            roles.push((
                Role::Message(Message {
                    workers: ws.clone(),
                    think: *sleep_ns,
                    next: 0,
                }),
                spec.start_ns + rng.below(tick),
            ));
            for _ in ws {
                roles.push((
                    Role::Worker(Worker {
                        request: (*request_ns).max(1),
                        asked: None,
                    }),
                    FOREVER,
                ));
            }
        }
    }

    /// Thread `i` of directive `d`: its entity on `cpu`, and its first
    /// timer or wakeup at `start` (`FOREVER`: none, a schbench worker).
    fn spawn_thread(
        &mut self,
        d: usize,
        i: usize,
        spec: &TaskSpec,
        home: &Home,
        (role, start): (Role, Nanos),
        cpu: u32,
    ) {
        let q = match home.group {
            Some(g) => self.cpus[cpu as usize].groups[g].1,
            None => CfsRqId::ROOT,
        };
        let eid = self.cpus[cpu as usize].rq.create_task(
            q,
            LoadWeight::from_nice(spec.nice),
            spec.policy,
            spec.slice_ns,
        );
        let tid = self.threads.len();
        let owner = &mut self.cpus[cpu as usize].owner;
        if owner.len() <= eid.0 as usize {
            owner.resize(eid.0 as usize + 1, None);
        }
        owner[eid.0 as usize] = Some(tid);
        let timer_like = role.timed();
        // A schbench message thread's kernel time is its wake calls, which
        // it pays explicitly (`ask_worker`); between them it runs user code.
        let own_keys = spec.kernel_pct.is_some() || spec.ksection_ns.is_some();
        let kernel = match role {
            Role::Message(_) if !own_keys => None,
            _ => home.kernel,
        };
        self.threads.push(Thread {
            directive: d,
            index: i as u32,
            role,
            cpu,
            eid,
            state: State::Sleeping,
            started: false,
            allowed: Rc::clone(&home.allowed),
            remaining: 0,
            wake_stamp: timer_like.then_some(start),
            slack: spec.slack(),
            kernel,
            hist: LatencyHist::new(),
            wakeups: 0,
            migrations: 0,
            ran_ns: 0,
            util: Pelt::default(),
            load: Pelt::default(),
            weight: self.cpus[cpu as usize].rq.se(eid).load.weight,
            last_ran: 0,
            wakee_flips: 0,
            last_wakee: None,
            flips_decay_ts: 0,
            recent_used_cpu: None,
            migrated: false,
            owed: 0,
            timer_at: None,
            on_mutex: false,
            on_wake_list: false,
            park: Park::No,
        });
        if start < FOREVER {
            if timer_like {
                let at = start + self.threads[tid].slack;
                self.arm_timer(tid, at, 0);
            } else {
                self.q.schedule(
                    start,
                    Ev::Wake {
                        tid,
                        sync: false,
                        from_task: true,
                        waker: None,
                    },
                );
            }
        }
    }
}
