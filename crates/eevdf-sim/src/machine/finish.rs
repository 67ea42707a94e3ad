//! The end of a run: every CPU's running time accounted to `end`,
//! then the result's per-thread, per-name, per-CPU and per-workload
//! sections.

use super::*;

impl Sim {
    /// Collects the result at time `end`.
    pub fn finish(mut self, end: Nanos) -> SimResult {
        for c in 0..self.cpus.len() {
            self.account_running(c as u32, end);
            let cpu = &mut self.cpus[c];
            cpu.rq.set_clock(end);
            cpu.rq.update_curr_all();
            if let Some(s) = cpu.busy_since {
                cpu.busy_ns += end.saturating_sub(s);
            }
        }
        let mut tasks = Vec::new();
        let mut by_name: Vec<(NameResult, LatencyHist)> = self
            .cfg
            .tasks
            .iter()
            .map(|t| {
                (
                    NameResult {
                        name: t.name.clone(),
                        tasks: 0,
                        cpu_ns: 0,
                        latency: Default::default(),
                    },
                    LatencyHist::new(),
                )
            })
            .collect();
        for t in &self.threads {
            let cpu_ns = self.cpus[t.cpu as usize].rq.se(t.eid).sum_exec_runtime;
            let name = format!("{}.{}", self.cfg.tasks[t.directive].name, t.index);
            debug_assert_eq!(name, self.thread_name(tasks.len()));
            tasks.push(TaskResult {
                name,
                directive: t.directive,
                role: t.role.kind(),
                cpu_ns,
                wakeups: t.wakeups,
                migrations: t.migrations,
                latency: t.hist.stats(),
            });
            let (n, h) = &mut by_name[t.directive];
            n.tasks += 1;
            n.cpu_ns += cpu_ns;
            h.merge(&t.hist);
        }
        let by_name = by_name
            .into_iter()
            .map(|(mut n, h)| {
                n.latency = h.stats();
                n
            })
            .collect();
        for c in 0..self.cpus.len() {
            self.pelt_cpu(c as u32, end);
        }
        let cpus: Vec<CpuResult> = self
            .cpus
            .iter()
            .enumerate()
            .map(|(i, c)| CpuResult {
                cpu: i as u32,
                busy_ns: c.busy_ns,
                switches: c.switches,
                nr_running_milli: (c.nr_area * 1000 / u128::from(end.max(1))) as u64,
                util: super::balance::cpu_util(c, c.util.avg),
                capacity: self.topo.capacity(i as u32),
            })
            .collect();
        let domains = self.topo.domains[0]
            .iter()
            .enumerate()
            .map(|(i, sd)| DomainResult {
                level: sd.level.name(),
                migrations: self.domain_migrations.get(i).copied().unwrap_or(0),
            })
            .collect();
        let totals = Totals {
            switches: cpus.iter().map(|c| c.switches).sum(),
            migrations: self.threads.iter().map(|t| t.migrations).sum(),
            wakeups: self.threads.iter().map(|t| t.wakeups).sum(),
        };
        let secs = end as f64 / 1e9;
        let mut hackbench = Vec::new();
        let mut schbench = Vec::new();
        for (d, spec) in self.cfg.tasks.iter().enumerate() {
            match spec.workload {
                Workload::Hackbench { .. } => hackbench.push(HackbenchResult {
                    name: spec.name.clone(),
                    messages: self.stats.messages[d],
                    completion_ns: self.stats.done[d],
                    throughput: if secs > 0.0 {
                        self.stats.messages[d] as f64 / secs
                    } else {
                        0.0
                    },
                }),
                Workload::Schbench { .. } => schbench.push(SchbenchResult {
                    name: spec.name.clone(),
                    requests: self.stats.requests[d],
                    rps: if secs > 0.0 {
                        self.stats.requests[d] as f64 / secs
                    } else {
                        0.0
                    },
                    request_latency: self.stats.request_hist[d].stats(),
                }),
                _ => {}
            }
        }
        let partial = self.stopped_at.map(|_| crate::result::Partial {
            max_events: self.budget,
        });
        SimResult {
            sim_ns: end,
            warmup_ns: self.cfg.warmup_ns,
            partial,
            events: self.events,
            by_name,
            tasks,
            cpus,
            totals,
            domains,
            hackbench,
            schbench,
        }
    }
}
