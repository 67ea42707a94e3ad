//! The threads of a scenario, in the simulator's creation order, with its
//! names (`NAME.I`), roles and start offsets.
//!
//! The offsets are drawn exactly as `Sim::new` draws them (the same
//! seeded [`SimRng`] stream: one tick phase per CPU, then one draw per
//! thread), so the real kernel starts every thread at the phase it has
//! in the simulation.

use eevdf_sim::topology::{MachineSpec, Topology};
use eevdf_sim::{Nanos, RoleKind, SimConfig, SimRng, Workload};

/// Most threads a guest run creates.
pub const MAX_THREADS: usize = 4096;
/// Longest measured window.
pub const MAX_DURATION_NS: Nanos = 3600 * 1_000_000_000;

/// What one thread does (the simulator's `Role`, static part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    Timer {
        period_ns: Nanos,
        run_ns: Nanos,
    },
    Periodic {
        run_ns: Nanos,
        sleep_ns: Nanos,
        period_ns: Option<Nanos>,
    },
    Hog,
    /// Writes to every receiver of hackbench group `group`.
    Sender {
        group: u32,
    },
    /// Receiver `index` of hackbench group `group`.
    Receiver {
        group: u32,
        index: u32,
    },
    /// A schbench message thread; its workers are the next `workers`
    /// threads of the directive.
    Message {
        workers: u32,
    },
    /// A schbench worker of the message thread at directive index
    /// `message`.
    Worker {
        message: u32,
    },
}

impl Role {
    /// The simulator's kind of this thread.
    pub fn kind(&self) -> RoleKind {
        match self {
            Role::Timer { .. } => RoleKind::Timer,
            Role::Periodic { .. } => RoleKind::Periodic,
            Role::Hog => RoleKind::Hog,
            Role::Sender { .. } => RoleKind::Sender,
            Role::Receiver { .. } => RoleKind::Receiver,
            Role::Message { .. } => RoleKind::Message,
            Role::Worker { .. } => RoleKind::Worker,
        }
    }

    /// The simulator's role name (`RoleKind::as_str`).
    pub fn name(&self) -> &'static str {
        self.kind().as_str()
    }
}

/// One thread of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// `NAME.I`.
    pub name: String,
    pub directive: usize,
    /// Index within the directive (the `I` of the name).
    pub index: u32,
    pub role: Role,
    /// Start, relative to the window start; `None` for threads that
    /// only run when woken (schbench workers).
    pub start_ns: Option<Nanos>,
    /// Position among all the run's threads (directive by directive):
    /// orders the threads' settle before the window.
    pub ordinal: u32,
}

/// CPU 0's tick phase in the simulation (the first draw of its seeded
/// stream): where the window puts the kernel's first tick.
pub fn tick_phase_ns(cfg: &SimConfig) -> (Nanos, Nanos) {
    let tick = 1_000_000_000 / u64::from(cfg.hz.max(1));
    (tick, eevdf_sim::first_tick_phase(cfg))
}

/// Every thread of `cfg`, directive by directive; refuses scenarios over
/// the guest's bounds.
pub fn plan(cfg: &SimConfig) -> Result<Vec<Planned>, String> {
    if cfg.duration_ns > MAX_DURATION_NS {
        return Err(format!(
            "duration {} ns is over the guest's limit of one hour",
            cfg.duration_ns
        ));
    }
    let total: u64 = cfg.tasks.iter().map(|t| t.nr_threads()).sum();
    if total > MAX_THREADS as u64 {
        return Err(format!(
            "the scenario has {total} threads, over the guest's limit of {MAX_THREADS}"
        ));
    }
    let flat = MachineSpec::Flat(cfg.nr_cpus.max(1));
    let spec = cfg.machine.clone().unwrap_or(flat.clone());
    let nr = Topology::build(&spec)
        .or_else(|_| Topology::build(&flat))
        .map_or(cfg.nr_cpus.max(1), |t| t.nr_cpus());
    let tick = 1_000_000_000 / u64::from(cfg.hz.max(1));
    let mut rng = SimRng::new(cfg.seed);
    for _ in 0..nr {
        rng.below(tick);
    }
    let mut out = Vec::with_capacity(total as usize);
    for (d, spec) in cfg.tasks.iter().enumerate() {
        let mut roles: Vec<(Role, Option<Nanos>)> = Vec::new();
        let at = |off: Nanos| Some(spec.start_ns.saturating_add(off));
        match &spec.workload {
            Workload::Timer { period_ns, run_ns } => {
                let period_ns = (*period_ns).max(1);
                for _ in 0..spec.count.max(1) {
                    let off = rng.below(period_ns);
                    let run_ns = *run_ns;
                    roles.push((Role::Timer { period_ns, run_ns }, at(off)));
                }
            }
            Workload::Periodic {
                run_ns,
                sleep_ns,
                period_ns,
            } => {
                let window = period_ns.unwrap_or(run_ns.saturating_add(*sleep_ns)).max(1);
                for _ in 0..spec.count.max(1) {
                    let off = rng.below(window);
                    let role = Role::Periodic {
                        run_ns: (*run_ns).max(1),
                        sleep_ns: *sleep_ns,
                        period_ns: *period_ns,
                    };
                    roles.push((role, at(off)));
                }
            }
            Workload::Hog => {
                for _ in 0..spec.count.max(1) {
                    let off = rng.below(tick);
                    roles.push((Role::Hog, at(off)));
                }
            }
            Workload::Hackbench { groups, fds, .. } => {
                let fds = (*fds).max(1);
                for group in 0..(*groups).max(1) {
                    // Senders first, then receivers, as the simulator.
                    for _ in 0..fds {
                        let off = rng.below(tick);
                        roles.push((Role::Sender { group }, at(off)));
                    }
                    for index in 0..fds {
                        let off = rng.below(tick);
                        roles.push((Role::Receiver { group, index }, at(off)));
                    }
                }
            }
            Workload::Schbench {
                message_threads,
                workers,
                ..
            } => {
                let workers = (*workers).max(1);
                for _ in 0..(*message_threads).max(1) {
                    let message = roles.len() as u32;
                    let off = rng.below(tick);
                    roles.push((Role::Message { workers }, at(off)));
                    for _ in 0..workers {
                        roles.push((Role::Worker { message }, None));
                    }
                }
            }
        }
        for (i, (role, start_ns)) in roles.into_iter().enumerate() {
            out.push(Planned {
                name: format!("{}.{}", spec.name, i),
                directive: d,
                index: i as u32,
                role,
                start_ns,
                ordinal: out.len() as u32,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use eevdf_scenario::scenario::Scenario;
    use eevdf_sim::trace::TraceEvent;
    use eevdf_sim::Sim;

    const ALL_KINDS: &str = "eevdf-scenario v1\nmachine smp2\nseed 7\nduration 1s\n\
        task hb kind=hackbench groups=2 fds=3 loops=10\n\
        task sb kind=schbench messages=2 workers=3\n\
        task hog count=2 kind=hog\n\
        task ct count=3 kind=timer period=10ms run=10us start=1ms\n\
        task rt count=2 kind=periodic run=1ms sleep=9ms\n\
        task pp kind=periodic run=1ms period=7ms\n\
        end\n";

    #[test]
    fn names_roles_and_order_are_the_simulators() {
        let sc = Scenario::parse(ALL_KINDS).unwrap();
        let p = plan(&sc.sim_config()).unwrap();
        let res = Sim::new(sc.sim_config()).finish(0);
        assert_eq!(p.len(), res.tasks.len());
        for (a, b) in p.iter().zip(&res.tasks) {
            assert_eq!(
                (a.name.as_str(), a.directive),
                (b.name.as_str(), b.directive)
            );
            assert_eq!(a.role.kind(), b.role);
        }
        assert_eq!(p[0].role, Role::Sender { group: 0 });
        assert_eq!(p[3].role, Role::Receiver { group: 0, index: 0 });
        assert_eq!(p[13].role, Role::Worker { message: 0 });
    }

    #[test]
    fn the_tick_phase_is_the_simulators() {
        // ct-4hog on 6.12, where a tick late in a hog's run makes ct wait
        // for the next tick: its tail hangs on the phase.
        let text = "eevdf-scenario v1\nmachine up\nkernel v6.12\nduration 1s\n\
                    task ct kind=timer period=1ms run=20us slice=100us\n\
                    task hog kind=hog count=4\nend\n";
        let mut differs = 0;
        for seed in 1..=8 {
            let mut sc = Scenario::parse(text).unwrap();
            sc.set(&format!("seed={seed}")).unwrap();
            let (tick, phase) = tick_phase_ns(&sc.sim_config());
            assert_eq!(tick, 4_000_000);
            let drawn = eevdf_sim::simulate(sc.sim_config());
            let mut given = sc.sim_config();
            given.tick_phase_ns = Some(phase);
            assert_eq!(eevdf_sim::simulate(given.clone()), drawn, "seed {seed}");
            given.tick_phase_ns = Some(phase + 2_000_000);
            differs += usize::from(eevdf_sim::simulate(given) != drawn);
        }
        assert!(differs > 0, "the phase never mattered");
    }

    #[test]
    fn start_offsets_are_the_simulators() {
        // Without costs or slack a thread's first wakeup in the trace is
        // at its nominal start.
        let text = ALL_KINDS
            .replace(
                "duration 1s\n",
                "duration 1s\ncosts switch=0ns wake=0ns migrate=0ns\n",
            )
            .replace("run=10us", "run=10us slack=0ns")
            .replace("sleep=9ms", "sleep=9ms slack=0ns")
            .replace("period=7ms", "period=7ms slack=0ns");
        let sc = Scenario::parse(&text).unwrap();
        let p = plan(&sc.sim_config()).unwrap();
        let mut sim = Sim::new(sc.sim_config());
        sim.record_trace();
        sim.run_until(30_000_000);
        let trace = sim.take_trace();
        let mut first = vec![None; p.len()];
        for e in &trace.events {
            if let TraceEvent::Wakeup { ts, task, .. } = *e {
                first[task].get_or_insert(ts);
            }
        }
        let mut checked = 0;
        for (t, f) in p.iter().zip(first) {
            if t.start_ns.is_some() {
                assert_eq!(f, t.start_ns, "{}", t.name);
                checked += 1;
            }
        }
        assert_eq!(checked, p.len() - 6);
    }

    #[test]
    fn bounds_are_refused() {
        let big = "eevdf-scenario v1\ntask a count=4096 kind=hog\ntask b kind=hog\nend\n";
        let sc = Scenario::parse(big).unwrap();
        assert!(plan(&sc.sim_config()).unwrap_err().contains("4097 threads"));
        let mut sc = Scenario::parse(ALL_KINDS).unwrap();
        sc.sim.duration_ns = MAX_DURATION_NS + 1;
        assert!(plan(&sc.sim_config()).unwrap_err().contains("one hour"));
    }
}
