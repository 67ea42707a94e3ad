//! The twins' hackbench message costs against committed kernel runs (no
//! QEMU here): `tests/kernel-ref/steady.jsonl` is `make steady-ref`, one
//! hackbench group as threads alone on one CPU for 2 s (`steady.txt`)
//! over a pipe and over a socket on 6.12.95 and 7.2.13. The twin of each
//! run must charge its senders and receivers what the kernel did per
//! message, which is what `GUEST_COSTS`' `send` and `recv` were fitted
//! for (`eevdf_kernel::steady`).

use std::path::PathBuf;

use eevdf_kernel::calibrate::guest_costs;
use eevdf_kernel::steady::{
    fit, gap_permille, scenario_text, KernelResult, PerMessage, TOLERANCE_PERMILLE,
};
use eevdf_sim::Workload;

fn read(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/kernel-ref")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Each line's name (`ipc` on `series`) and its kernel run.
fn runs() -> Vec<(String, KernelResult)> {
    let text = read("steady.jsonl");
    let mut v = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let cell: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {n}: {e}"));
        let axis = |k: &str| {
            cell["axes"]
                .as_array()
                .and_then(|a| a.iter().find(|p| p[0] == k))
                .and_then(|p| p[1].as_str())
                .unwrap_or_else(|| panic!("line {n}: no {k} axis"))
                .to_string()
        };
        let name = format!("{} on {}", axis("task.hb.ipc"), axis("kernel"));
        let r = KernelResult::parse(&cell["result"].to_string())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        v.push((name, r));
    }
    v
}

#[test]
fn the_runs_ran_the_committed_scenario_on_both_channels_and_kernels() {
    assert_eq!(read("steady.txt"), scenario_text("pipe"));
    let runs = runs();
    let mut names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "pipe on 6.12",
            "pipe on 7.2",
            "socket on 6.12",
            "socket on 7.2"
        ]
    );
    for (name, r) in &runs {
        let sc = eevdf_scenario::scenario::Scenario::parse(&r.scenario).unwrap();
        let ipc_pipe = name.starts_with("pipe");
        assert!(
            matches!(
                sc.sim.tasks[..],
                [eevdf_sim::TaskSpec {
                    workload: Workload::Hackbench {
                        groups: 1,
                        fds: 10,
                        pipe,
                        ..
                    },
                    ..
                }] if pipe == ipc_pipe
            ),
            "{name}: {}",
            r.scenario
        );
        assert_eq!(r.source.seed, 1, "{name}");
    }
}

#[test]
fn a_twin_charges_a_message_what_the_kernel_did() {
    let mut wrong = Vec::new();
    for (name, r) in runs() {
        let kernel = r.per_message().expect("the kernel sent messages");
        let twin = r.twin().unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = PerMessage::of(&eevdf_sim::simulate(twin.sim_config())).expect("messages");
        if gap_permille(got, kernel) > TOLERANCE_PERMILLE {
            // What GUEST_COSTS should hold, fitted from its values.
            let g = guest_costs(&r.source.kernel).expect("a series with guest costs");
            let start = if name.starts_with("socket") {
                PerMessage {
                    send_ns: g.sock_send_ns,
                    recv_ns: g.sock_recv_ns,
                }
            } else {
                PerMessage {
                    send_ns: g.send_ns,
                    recv_ns: g.recv_ns,
                }
            };
            let f = fit(&twin, kernel, start);
            wrong.push(format!(
                "{name}: the kernel {kernel:?}, the twin {got:?}; fitted: {f:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
