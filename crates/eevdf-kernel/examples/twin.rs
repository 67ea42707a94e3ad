//! Runs the simulator's twin of one seed of a fidelity reference, exactly
//! as `eevdf kernel fidelity-doc` builds it (the kernel's features line,
//! base slice, HZ, preemption model, guest costs and tick phase), and
//! optionally writes its trace and decision log to hold against a kernel
//! run's `--trace` and `--probe`:
//!
//! ```text
//! cargo run --release -p eevdf-kernel --example twin -- \
//!     tests/kernel-ref/ct-hackbench.default.7.2.json 1 /tmp/twin
//! ```
//!
//! writes `/tmp/twin.trace` (ftrace text) and `/tmp/twin.dec` (the
//! decisions). A throughput reference's cell works the same way, named
//! by its JSON line (from 0) instead of a seed:
//! `twin tests/kernel-ref/hackbench-smp4.jsonl 20 /tmp/twin`. Any
//! `eevdf kernel run --format json` result works too, named by the seed
//! it ran (`twin run.json 1 /tmp/twin`): its scenario and read-back
//! settings make the twin, for a scenario no reference holds. The twin's
//! text may not print within 72 columns (guest costs lengthen the task
//! line), which is why this runs it directly;
//! `TWIN_TEXT=1` prints it to stderr, to edit and rerun with `eevdf run`
//! (the text has no vCPU turns: a multi-CPU rerun runs on real CPUs; it
//! holds the guest's kernel threads as a `task` line, which a kernel
//! run of that text would add to the guest's own);
//! `TWIN_FEATURES="NO_DELAY_ZERO ..."` applies feature tokens over the
//! kernel's line, and `TWIN_SET="costs.switch=8us ..."` applies `--set`
//! edits (not `seed` or `hz`, which place the twin's ticks and kworker),
//! to ask which rule or cost a difference hangs on;
//! `TWIN_REAL_CPUS=1` runs a multi-CPU twin without QEMU's vCPU turns,
//! as real CPUs would.

use std::process::ExitCode;

use eevdf_kernel::fidelity::Reference;
use eevdf_kernel::steady::KernelResult;
use eevdf_kernel::throughput_ref::ThroughputRef;
use eevdf_scenario::decisions::DecisionLog;
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::RoleKind;

fn run(args: &[String]) -> Result<String, String> {
    let [file, seed, rest @ ..] = args else {
        return Err(
            "usage: twin REFERENCE.json SEED [OUT] | twin REFERENCE.jsonl CELL [OUT] \
             | twin KERNEL-RUN.json SEED [OUT]"
                .into(),
        );
    };
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let seed: u64 = seed.parse().map_err(|e| format!("seed {seed}: {e}"))?;
    let mut sc = match file.strip_suffix(".jsonl") {
        Some(stem) => throughput_twin(stem, &text, seed)?,
        None => fidelity_twin(file, &text, seed)?,
    };
    if let Ok(line) = std::env::var("TWIN_FEATURES") {
        sc.apply_features(&line)
            .map_err(|e| format!("TWIN_FEATURES: {e}"))?;
    }
    if let Ok(edits) = std::env::var("TWIN_SET") {
        for kv in edits.split_whitespace() {
            if kv.starts_with("seed=") || kv.starts_with("hz=") {
                // The twin's ticks and kworker are placed for the run's own.
                return Err(format!(
                    "TWIN_SET {kv}: give the seed as SEED; HZ is the kernel's"
                ));
            }
            sc.set(kv).map_err(|e| format!("TWIN_SET {kv}: {e}"))?;
        }
    }
    if std::env::var_os("TWIN_REAL_CPUS").is_some() {
        sc.sim.vcpu_turns = false;
    }
    if std::env::var_os("TWIN_TEXT").is_some() {
        eprintln!("{}", sc.to_text());
    }
    let kthreads_name = sc
        .sim
        .tasks
        .last()
        .map(|t| t.name.clone())
        .unwrap_or_default();
    let mut sim = eevdf_sim::Sim::new(sc.sim_config());
    let out = rest.first();
    if out.is_some() {
        sim.observe(Box::new(DecisionLog::new(sim.trace_tasks())));
        sim.record_trace();
    }
    sim.run_until(sim.duration());
    if let Some(out) = out {
        let trace = eevdf_scenario::ftrace::to_ftrace(&sim.take_trace());
        let log = sim.detach_observer::<DecisionLog>().map(|d| d.text());
        std::fs::write(format!("{out}.trace"), trace).map_err(|e| format!("{out}: {e}"))?;
        std::fs::write(format!("{out}.dec"), log.unwrap_or_default())
            .map_err(|e| format!("{out}: {e}"))?;
    }
    let end = sim.duration();
    let turns = sim.turn_counts();
    let res = sim.finish(end);
    let what = if file.ends_with(".jsonl") {
        "cell"
    } else {
        "seed"
    };
    let mut line = format!("{what} {seed}: {} switches", res.totals.switches);
    for n in res.by_name.iter().filter(|n| n.name == "ct") {
        let l = &n.latency;
        line.push_str(&format!(
            ", ct cpu {} us/sample, p50 {} p90 {} p99 {} p99.9 {} max {} us",
            n.cpu_ns / 1000 / l.samples.max(1),
            l.p50 / 1000,
            l.p90 / 1000,
            l.p99 / 1000,
            l.p99_9 / 1000,
            l.max / 1000
        ));
    }
    for h in &res.hackbench {
        line.push_str(&format!(", {} {} messages", h.name, h.messages));
    }
    if turns.turns > 0 {
        // QEMU's vCPU turns, to hold against a kernel trace's handovers
        // (`eevdf import trace --regime`).
        line.push_str(&format!(
            ", {} vCPU turns ({} ended by a spin)",
            turns.turns, turns.spins
        ));
    }
    // The CPU charged to each side of hackbench, as a kernel run's
    // `cpu_ms` summed by `role`: on vCPU turns, who is charged for a
    // standstill decides who turns ineligible (docs/model.md, "A vCPU
    // that spins hands its turn over").
    let charged = |role| -> u64 {
        res.tasks
            .iter()
            .filter(|t| t.role == role)
            .map(|t| t.cpu_ns)
            .sum()
    };
    if !res.hackbench.is_empty() {
        line.push_str(&format!(
            ", senders cpu {} ms, receivers cpu {} ms",
            charged(RoleKind::Sender) / 1_000_000,
            charged(RoleKind::Receiver) / 1_000_000
        ));
    }
    // A periodic task's CPU per wakeup: its burst and what the
    // interrupts inside it took, as a kernel run's `cpu_ms` / `wakeups`
    // (the first activation, its start, is no wakeup). The guest's
    // kernel threads are left out.
    // (`sim_twin` adds them as the last task.)
    let kthreads = format!("{}.", kthreads_name);
    let periodic =
        |t: &&eevdf_sim::TaskResult| t.role == RoleKind::Periodic && !t.name.starts_with(&kthreads);
    for t in res.tasks.iter().filter(periodic) {
        let per = t.cpu_ns / t.wakeups.max(1);
        line.push_str(&format!(", {} cpu {} us/wakeup", t.name, per / 1000));
    }
    Ok(line)
}

fn fidelity_twin(file: &str, text: &str, seed: u64) -> Result<Scenario, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    if v.get("schema").and_then(|s| s.as_str()) == Some("eevdf.result.v1") {
        return kernel_run_twin(file, text, seed);
    }
    let r: Reference = serde_json::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    let ks = r
        .seeds
        .iter()
        .find(|s| s.seed == seed)
        .ok_or_else(|| format!("{file} has no seed {seed}"))?;
    r.sim_scenario(ks)
}

/// The twin of an `eevdf kernel run --format json` result: its scenario
/// with the `source` block's read-back settings, as a reference's.
fn kernel_run_twin(file: &str, text: &str, seed: u64) -> Result<Scenario, String> {
    let r = KernelResult::parse(text).map_err(|e| format!("{file}: {e}"))?;
    if r.source.seed != seed {
        return Err(format!("{file} ran seed {}, not {seed}", r.source.seed));
    }
    r.twin().map_err(|e| format!("{file}: {e}"))
}

/// `stem.jsonl`'s cell `n`, checked against `stem.txt` beside it.
fn throughput_twin(stem: &str, jsonl: &str, n: u64) -> Result<Scenario, String> {
    let txt = format!("{stem}.txt");
    let scenario = std::fs::read_to_string(&txt).map_err(|e| format!("{txt}: {e}"))?;
    let name = stem.rsplit('/').next().unwrap_or(stem);
    let r = ThroughputRef::parse(name, &scenario, jsonl)?;
    r.twin(usize::try_from(n).map_err(|e| e.to_string())?)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("twin: {e}");
            ExitCode::from(2)
        }
    }
}
