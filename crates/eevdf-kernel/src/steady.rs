//! What a hackbench message costs a running hackbench on a kernel, and
//! the `send` and `recv` that make its twin charge the same.
//!
//! `eevdf kernel calibrate` times a 100-byte write and read in batches,
//! one thread alone on the CPU. A hackbench run on the same kernel pays
//! more per message (its senders' and receivers' `cpu_ms` over the
//! messages sent), with 2 or 10 fds, as threads or processes: fitted
//! to it, `send` and `recv` come out 8 to 22 % over the batch's, on both
//! kernels and both channels (docs/model.md §6, "What a message
//! costs": for one, the run's processes share their descriptor tables,
//! the batch's does not). So a twin
//! takes `send` and `recv` from a hackbench run instead: the values at
//! which the twin of that run charges its senders and receivers what
//! the kernel did, per message, found by [`fit`]. The runs are the
//! committed `tests/kernel-ref/steady.jsonl` (`make steady-ref`).

use std::time::Duration;

use eevdf_scenario::scenario::Scenario;
use eevdf_sim::{RoleKind, SimResult, Workload};
use serde::Deserialize;

use crate::calibrate::Derived;
use crate::guest_bin::GuestBinary;
use crate::qemu::Phase;
use crate::run::{Image, Options};
use crate::KernelError;

/// The channels a steady-state run measures, as the scenario spells them.
pub const IPCS: [&str; 2] = ["pipe", "socket"];

/// The run [`fit`] works on: one group of ten senders and ten receivers
/// as threads (the fidelity rows' hackbench) alone on one CPU for 2 s,
/// with the kernel's own settings.
pub fn scenario_text(ipc: &str) -> String {
    format!(
        "eevdf-scenario v1\n# steady-state hackbench\nmachine up\nduration 2s\n\
         task hb kind=hackbench groups=1 fds=10 mode=thread ipc={ipc} loops=0\nend\n"
    )
}

/// CPU per message sent, in ns: the senders' and the receivers' CPU
/// (what the kernel's `cpu_ms` holds: their own work, the switches into
/// them and the interrupts they lost) over the messages of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerMessage {
    pub send_ns: u64,
    pub recv_ns: u64,
}

impl PerMessage {
    /// Of a result; `None` without hackbench or messages.
    pub fn of(r: &SimResult) -> Option<PerMessage> {
        let messages: u64 = r.hackbench.iter().map(|h| h.messages).sum();
        let cpu = |role| {
            r.tasks
                .iter()
                .filter(|t| t.role == role)
                .map(|t| u128::from(t.cpu_ns))
                .sum::<u128>()
        };
        per_message(cpu(RoleKind::Sender), cpu(RoleKind::Receiver), messages)
    }
}

fn per_message(send_cpu_ns: u128, recv_cpu_ns: u128, messages: u64) -> Option<PerMessage> {
    if messages == 0 {
        return None;
    }
    let m = u128::from(messages);
    let div = |cpu: u128| u64::try_from((cpu + m / 2) / m).ok();
    Some(PerMessage {
        send_ns: div(send_cpu_ns)?,
        recv_ns: div(recv_cpu_ns)?,
    })
}

/// The parts of an `eevdf kernel run --format json` result (schema
/// `eevdf.result.v1` with a `source` block) that a fit or a twin needs.
#[derive(Clone, Debug, Deserialize)]
pub struct KernelResult {
    pub scenario: String,
    pub tasks: Vec<KernelTask>,
    /// Absent without hackbench.
    #[serde(default)]
    pub hackbench: Vec<KernelHackbench>,
    pub source: KernelSource,
}

#[derive(Clone, Debug, Deserialize)]
pub struct KernelTask {
    pub role: String,
    pub cpu_ms: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct KernelHackbench {
    pub messages: u64,
}

/// The read-back settings a twin takes.
#[derive(Clone, Debug, Deserialize)]
pub struct KernelSource {
    pub kernel: String,
    pub features: String,
    pub preempt: String,
    pub hz: Option<u32>,
    pub base_slice_ns: u64,
    pub seed: u64,
}

impl KernelResult {
    pub fn parse(json: &str) -> Result<KernelResult, String> {
        serde_json::from_str(json).map_err(|e| format!("not a kernel run's JSON result: {e}"))
    }

    /// The kernel's CPU per message (`cpu_ms` is rounded to whole ns).
    pub fn per_message(&self) -> Option<PerMessage> {
        let cpu = |role: &str| {
            self.tasks
                .iter()
                .filter(|t| t.role == role)
                // cpu_ms has 3 decimals: whole ns.
                .map(|t| (t.cpu_ms * 1e6).round() as u128)
                .sum::<u128>()
        };
        let messages = self.hackbench.iter().map(|h| h.messages).sum();
        per_message(cpu("sender"), cpu("receiver"), messages)
    }

    /// The twin of this run.
    pub fn twin(&self) -> Result<Scenario, String> {
        let sc = Scenario::parse(&self.scenario).map_err(|e| e.to_string())?;
        self.source.twin(&sc)
    }
}

impl KernelSource {
    /// The twin of `sc` run under these settings (`run::sim_twin`: the
    /// read-back settings and the guest costs of the kernel's series).
    pub fn twin(&self, sc: &Scenario) -> Result<Scenario, String> {
        crate::run::sim_twin(
            sc,
            self.seed,
            &self.kernel,
            &self.features,
            self.base_slice_ns,
            &self.preempt,
            self.hz,
        )
    }
}

impl From<&eevdf_scenario::report::Source> for KernelSource {
    fn from(s: &eevdf_scenario::report::Source) -> Self {
        KernelSource {
            kernel: s.kernel.clone(),
            features: s.features.clone(),
            preempt: s.preempt.clone(),
            hz: s.hz,
            base_slice_ns: s.base_slice_ns,
            seed: s.seed,
        }
    }
}

/// Sets every hackbench task's `send` and `recv`.
pub fn set_message_costs(sc: &mut Scenario, c: PerMessage) {
    for t in &mut sc.sim.tasks {
        if let Workload::Hackbench {
            send_ns, recv_ns, ..
        } = &mut t.workload
        {
            *send_ns = c.send_ns;
            *recv_ns = c.recv_ns;
        }
    }
}

/// The outcome of [`fit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    /// The `send` and `recv` found.
    pub costs: PerMessage,
    /// The twin's CPU per message with them, to hold against the kernel's.
    pub twin: PerMessage,
    /// The round that found them.
    pub rounds: u32,
}

/// Rounds [`fit`] takes at most.
pub const MAX_ROUNDS: u32 = 12;
/// Close enough: each side within this many thousandths of the
/// kernel's. The twin's CPU per message moves by about that much from
/// one `send` to the next nanosecond, as switches come and go, so a
/// tighter fit would chase noise.
pub const TOLERANCE_PERMILLE: u64 = 10;

/// The larger of the two sides' gaps, in thousandths of the kernel's.
pub fn gap_permille(got: PerMessage, kernel: PerMessage) -> u64 {
    let one = |g: u64, k: u64| g.abs_diff(k).saturating_mul(1000) / k.max(1);
    one(got.send_ns, kernel.send_ns).max(one(got.recv_ns, kernel.recv_ns))
}

/// The `send` and `recv` at which the twin `twin` charges its senders
/// and receivers `kernel`'s CPU per message: from `start`, each round
/// adds to `send` and `recv` what the twin's senders and receivers
/// still lack per message (the twin's switches, wakeups and ticks keep
/// their costs), half of it after the second round, so that a twin that
/// moves between regimes settles. The closest of [`MAX_ROUNDS`] rounds
/// wins; none within [`TOLERANCE_PERMILLE`] is an error.
pub fn fit(twin: &Scenario, kernel: PerMessage, start: PerMessage) -> Result<Fit, String> {
    let mut costs = start;
    let mut best: Option<(u64, Fit)> = None;
    for round in 1..=MAX_ROUNDS {
        let mut sc = twin.clone();
        set_message_costs(&mut sc, costs);
        let got = PerMessage::of(&eevdf_sim::simulate(sc.sim_config()))
            .ok_or("the twin sent no message")?;
        let gap = gap_permille(got, kernel);
        if best.is_none_or(|(g, _)| gap < g) {
            let f = Fit {
                costs,
                twin: got,
                rounds: round,
            };
            best = Some((gap, f));
        }
        if gap == 0 {
            break;
        }
        let damp = if round <= 2 { 1 } else { 2 };
        let step = |c: u64, want: u64, have: u64| {
            let moved = (i128::from(want) - i128::from(have)) / damp;
            u64::try_from((i128::from(c) + moved).max(1)).unwrap_or(u64::MAX)
        };
        costs = PerMessage {
            send_ns: step(costs.send_ns, kernel.send_ns, got.send_ns),
            recv_ns: step(costs.recv_ns, kernel.recv_ns, got.recv_ns),
        };
    }
    match best {
        Some((gap, f)) if gap <= TOLERANCE_PERMILLE => Ok(f),
        _ => Err(format!(
            "no send and recv within {TOLERANCE_PERMILLE} per mille of the kernel's \
             {kernel:?} in {MAX_ROUNDS} rounds (closest {best:?})"
        )),
    }
}

/// One channel's steady-state run on a kernel and its fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Steady {
    pub ipc: &'static str,
    /// The kernel's CPU per message.
    pub kernel: PerMessage,
    /// The calibration batch's costs, where the fit started.
    pub batch: PerMessage,
    pub fit: Fit,
}

/// Runs [`scenario_text`] over each of [`IPCS`] on `image` and fits the
/// twin of each run, the other costs being the calibration's `d`, from
/// the batch's message costs.
pub fn measure(
    image: &Image,
    guest: &GuestBinary,
    opts: &Options,
    d: &Derived,
    progress: &mut dyn FnMut(Phase, Duration),
) -> Result<Vec<Steady>, KernelError> {
    let mut out = Vec::new();
    for ipc in IPCS {
        let sc = Scenario::parse(&scenario_text(ipc))
            .map_err(|e| KernelError::new(format!("the steady-state run: {e}"), ""))?;
        let mut opts = opts.clone();
        opts.workdir = opts.workdir.join(format!("steady-{ipc}"));
        let run = crate::run::run(&sc, image, guest, &opts, progress)?;
        let fail = |e: String| KernelError::new(format!("steady-state {ipc}: {e}"), "");
        let kernel =
            PerMessage::of(&run.result).ok_or_else(|| fail("the kernel sent no message".into()))?;
        let mut twin = KernelSource::from(&run.source).twin(&sc).map_err(fail)?;
        let c = &mut twin.sim.costs;
        (c.switch_ns, c.wake_ns, c.sleep_ns, c.tick_ns) =
            (d.switch_ns, d.wake_ns, d.sleep_ns, d.tick_ns);
        let batch = if ipc == "socket" {
            PerMessage {
                send_ns: d.sock_send_ns,
                recv_ns: d.sock_recv_ns,
            }
        } else {
            PerMessage {
                send_ns: d.send_ns,
                recv_ns: d.recv_ns,
            }
        };
        let fit = fit(&twin, kernel, batch).map_err(fail)?;
        out.push(Steady {
            ipc,
            kernel,
            batch,
            fit,
        });
    }
    Ok(out)
}

/// The lines `eevdf kernel calibrate` prints for [`measure`]'s runs.
pub fn render(runs: &[Steady]) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let mut o = String::from(
        "\nsteady-state hackbench (one group of threads alone for 2 s; CPU per message):\n",
    );
    for r in runs {
        o.push_str(&format!(
            "{:<8} kernel send {} recv {} ns; batch {} and {} ns; fitted send={} recv={} \
             (twin {} and {} ns, {} rounds)\n",
            r.ipc,
            r.kernel.send_ns,
            r.kernel.recv_ns,
            r.batch.send_ns,
            r.batch.recv_ns,
            crate::calibrate::dur(r.fit.costs.send_ns),
            crate::calibrate::dur(r.fit.costs.recv_ns),
            r.fit.twin.send_ns,
            r.fit.twin.recv_ns,
            r.fit.rounds
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_message_rounds_to_whole_ns_and_needs_messages() {
        assert_eq!(
            per_message(3_000_001, 1_999_999, 1000),
            Some(PerMessage {
                send_ns: 3000,
                recv_ns: 2000
            })
        );
        assert_eq!(per_message(5, 5, 0), None);
    }

    #[test]
    fn the_run_is_a_scenario_with_one_hackbench_directive() {
        for ipc in IPCS {
            let sc = Scenario::parse(&scenario_text(ipc)).unwrap();
            assert_eq!(sc.sim.tasks.len(), 1);
            assert!(matches!(
                sc.sim.tasks[0].workload,
                Workload::Hackbench { fds: 10, .. }
            ));
        }
    }

    #[test]
    fn a_fit_recovers_the_costs_a_twin_was_run_with() {
        // A simulated "kernel" with known costs: the fit, started from
        // other costs, finds costs that reproduce its CPU per message.
        // 6.12's settings and guest costs keep it in one regime (few
        // switches), as the kernel's runs are.
        let text = scenario_text("pipe").replace(
            "machine up\n",
            "machine up\nkernel v6.12\npreempt voluntary\n\
             costs switch=4765ns wake=3678ns sleep=4986ns tick=6481ns\n",
        );
        let sc = Scenario::parse(&text).unwrap();
        let truth = PerMessage {
            send_ns: 2_900,
            recv_ns: 2_700,
        };
        let mut k = sc.clone();
        set_message_costs(&mut k, truth);
        let kernel = PerMessage::of(&eevdf_sim::simulate(k.sim_config())).unwrap();
        let start = PerMessage {
            send_ns: 2_000,
            recv_ns: 2_000,
        };
        let f = fit(&sc, kernel, start).unwrap();
        assert!(f.rounds > 1, "{f:?}");
        assert!(gap_permille(f.twin, kernel) <= TOLERANCE_PERMILLE, "{f:?}");
        assert!(f.costs.send_ns.abs_diff(truth.send_ns) <= 20, "{f:?}");
        assert!(f.costs.recv_ns.abs_diff(truth.recv_ns) <= 20, "{f:?}");
    }
}
