//! `eevdf kernel calibrate`: boots a kernel with the guest in
//! `mode=calibrate` (see `eevdf-guest`'s `calibrate` module) on one CPU,
//! reads the measured costs back and maps them onto the simulator's
//! keys (`costs switch= wake=`, hackbench `send= recv=`), hackbench's
//! from the steady-state runs of [`crate::steady`] where they ran. The
//! committed results are the `qemu-icount` machine preset
//! (`eevdf_sim::topology::QEMU_ICOUNT_COSTS`) and [`GUEST_COSTS`].

use std::time::Duration;

use eevdf_scenario::guest::{GuestReport, BEGIN_MARK, END_MARK};
use eevdf_scenario::scenario::{Scenario, DEFAULT_HB_MSG_NS};
use eevdf_sim::Workload;
use serde::Deserialize;

use crate::guest_bin::GuestBinary;
use crate::initramfs::Initramfs;
use crate::qemu::{self, Phase};
use crate::run::{Image, Options};
use crate::KernelError;

/// The `schema` of the report's first line.
pub const CALIBRATE_SCHEMA: &str = "eevdf.calibrate.v1";
/// The `/eevdf/options` line that selects calibration.
pub const OPTION: &str = "mode=calibrate";
/// Largest report accepted.
const MAX_BYTES: usize = 1 << 20;

/// The report's first line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
struct Header {
    schema: String,
    uname: String,
    nr_cpus: u32,
    default_slack_ns: i64,
    #[serde(default)]
    errors: Vec<String>,
}

/// One measured quantity (order statistics over `samples`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Stat {
    pub name: String,
    /// `ns` or `ps`.
    pub unit: String,
    pub samples: u64,
    pub min: u64,
    pub median: u64,
    pub p90: u64,
    pub max: u64,
}

/// What the guest measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calibration {
    pub uname: String,
    pub nr_cpus: u32,
    /// `PR_GET_TIMERSLACK` of PID 1 (the kernel's default).
    pub default_slack_ns: i64,
    /// Measurements that failed.
    pub errors: Vec<String>,
    pub stats: Vec<Stat>,
}

/// The simulator's keys, derived from a [`Calibration`] (medians).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Derived {
    /// Picoseconds per guest instruction.
    pub insn_ps: u64,
    /// `costs switch`: a context switch between two threads yielding in
    /// turn, minus one null system call.
    pub switch_ns: u64,
    /// `costs wake`: idle timer wakeup latency (slack 1 ns) − switch, as
    /// the simulator adds `switch` after `wake` on an idle CPU.
    pub wake_ns: u64,
    /// The idle timer wakeup latency itself (slack 1 ns).
    pub timer_wake_ns: u64,
    /// `costs sleep`: a timer thread's CPU per period with no run, minus
    /// `switch`, which the simulator charges the incoming task already.
    pub sleep_ns: u64,
    /// The timer thread's CPU per period itself.
    pub timer_loop_ns: u64,
    /// hackbench `send`: one 100-byte pipe write.
    pub send_ns: u64,
    /// hackbench `recv`: one 100-byte pipe read.
    pub recv_ns: u64,
    /// hackbench `send` and `recv` with `ipc=socket`: the same over a
    /// UNIX stream socket pair.
    pub sock_send_ns: u64,
    pub sock_recv_ns: u64,
    /// A hog's loss per local timer interrupt (`costs tick`).
    pub tick_ns: u64,
    /// The pipe ping-pong's leg (write, wakeup, switch, read) as
    /// measured, and as the simulator would take it with these costs
    /// (`send + recv + wake + switch`).
    pub pingpong_leg_ns: u64,
    pub sim_leg_ns: u64,
    /// Latency with the default slack − with slack 1 ns.
    pub slack_ns: u64,
}

impl Calibration {
    /// Finds the report between the marks of a serial log and parses it.
    /// A guest that failed prints a `GuestReport` with `error` there;
    /// that error is returned.
    pub fn parse(log: &str) -> Result<Calibration, String> {
        if log.len() > MAX_BYTES {
            return Err(format!("calibration output is {} bytes", log.len()));
        }
        let mut lines = log.lines().map(|l| l.trim_end_matches('\r'));
        if !lines.any(|l| l == BEGIN_MARK) {
            return Err(format!("no {BEGIN_MARK} line in the guest's output"));
        }
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != END_MARK).collect();
        let first = body.first().copied().unwrap_or("");
        if first.contains("\"eevdf.guest.v1\"") {
            let r = GuestReport::parse(log).map_err(|e| e.message)?;
            return Err(r
                .error
                .unwrap_or_else(|| "the guest ran a scenario, not the calibration".into()));
        }
        let h: Header =
            serde_json::from_str(first).map_err(|e| format!("calibration header: {e}"))?;
        if h.schema != CALIBRATE_SCHEMA {
            return Err(format!(
                "calibration schema {:?}, expected {CALIBRATE_SCHEMA}",
                h.schema
            ));
        }
        let mut stats = Vec::new();
        for (i, l) in body.iter().enumerate().skip(1) {
            let s: Stat =
                serde_json::from_str(l).map_err(|e| format!("calibration line {}: {e}", i + 1))?;
            stats.push(s);
        }
        if body.len() == 1 && h.errors.is_empty() {
            return Err("the calibration report has no measurements".into());
        }
        Ok(Calibration {
            uname: h.uname,
            nr_cpus: h.nr_cpus,
            default_slack_ns: h.default_slack_ns,
            errors: h.errors,
            stats,
        })
    }

    pub fn get(&self, name: &str) -> Option<&Stat> {
        self.stats.iter().find(|s| s.name == name)
    }

    fn median(&self, name: &str) -> u64 {
        self.get(name).map_or(0, |s| s.median)
    }

    /// The simulator's keys (medians; see [`Derived`]).
    pub fn derived(&self) -> Derived {
        let send_ns = self.median("pipe_write_ns");
        let recv_ns = self.median("pipe_read_ns");
        let switch_ns = self
            .median("yield_switch_ns")
            .saturating_sub(self.median("syscall_ns"));
        let timer_wake_ns = self.median("timer_wake_ns");
        let wake_ns = timer_wake_ns.saturating_sub(switch_ns);
        let timer_loop_ns = self.median("timer_loop_ns");
        Derived {
            sleep_ns: timer_loop_ns.saturating_sub(switch_ns),
            timer_loop_ns,
            pingpong_leg_ns: self.median("pingpong_leg_ns"),
            sim_leg_ns: send_ns + recv_ns + wake_ns + switch_ns,
            insn_ps: self.median("insn_ps"),
            switch_ns,
            wake_ns,
            timer_wake_ns,
            send_ns,
            recv_ns,
            sock_send_ns: self.median("socket_write_ns"),
            sock_recv_ns: self.median("socket_read_ns"),
            tick_ns: self.median("tick_ns"),
            slack_ns: self
                .median("timer_wake_default_slack_ns")
                .saturating_sub(timer_wake_ns),
        }
    }

    /// The table `eevdf kernel calibrate` prints, then the steady-state
    /// runs, then the scenario keys: hackbench's `send` and `recv` are
    /// the steady-state fits where `steady` has them, the batch's
    /// otherwise.
    pub fn render(&self, shift: u32, steady: &[crate::steady::Steady]) -> String {
        let mut o = format!("# {} ({} CPU)\n", self.uname, self.nr_cpus);
        o.push_str(&format!(
            "{:<28} {:>4} {:>7} {:>9} {:>9} {:>9} {:>9}\n",
            "quantity", "unit", "samples", "min", "median", "p90", "max"
        ));
        for s in &self.stats {
            o.push_str(&format!(
                "{:<28} {:>4} {:>7} {:>9} {:>9} {:>9} {:>9}\n",
                s.name, s.unit, s.samples, s.min, s.median, s.p90, s.max
            ));
        }
        for e in &self.errors {
            o.push_str(&format!("failed: {e}\n"));
        }
        let d = self.derived().with_steady(steady);
        let want = 1000u64 << shift.min(20);
        o.push_str(&format!(
            "\ninstruction time  {} ps (icount shift={shift}: {want} ps){}\n",
            d.insn_ps,
            if d.insn_ps.abs_diff(want) * 100 > want {
                "  MISMATCH"
            } else {
                ""
            }
        ));
        o.push_str(&format!(
            "timer slack       {} ns (default {} ns)\n",
            d.slack_ns, self.default_slack_ns
        ));
        o.push_str(&format!(
            "tick              {} ns lost per local timer interrupt (`costs tick`)\n",
            d.tick_ns
        ));
        o.push_str(&format!(
            "idle timer wake   {} ns = wake {} + switch {}\n",
            d.timer_wake_ns, d.wake_ns, d.switch_ns
        ));
        o.push_str(&format!(
            "timer loop        {} ns CPU per period = switch {} + sleep {}\n",
            d.timer_loop_ns, d.switch_ns, d.sleep_ns
        ));
        o.push_str(&format!(
            "pipe ping-pong    {} ns per leg; the simulator: send + recv + wake + switch = {} ns\n",
            d.pingpong_leg_ns, d.sim_leg_ns
        ));
        o.push_str(&crate::steady::render(steady));
        o.push_str("\nscenario keys:\n");
        o.push_str(&format!(
            "costs switch={} wake={} sleep={} tick={}\n",
            dur(d.switch_ns),
            dur(d.wake_ns),
            dur(d.sleep_ns),
            dur(d.tick_ns)
        ));
        o.push_str(&format!(
            "task hb kind=hackbench send={} recv={}\n",
            dur(d.send_ns),
            dur(d.recv_ns)
        ));
        if d.sock_send_ns > 0 {
            o.push_str(&format!(
                "task hb kind=hackbench ipc=socket send={} recv={}\n",
                dur(d.sock_send_ns),
                dur(d.sock_recv_ns)
            ));
        }
        o
    }
}

impl Derived {
    /// Fitted hackbench message costs, where `steady` has them, in place
    /// of the batch's (and in the ping-pong's sum).
    pub fn with_steady(mut self, steady: &[crate::steady::Steady]) -> Derived {
        let fitted = |ipc: &str| steady.iter().find(|r| r.ipc == ipc).map(|r| r.fit.costs);
        if let Some(c) = fitted("pipe") {
            (self.send_ns, self.recv_ns) = (c.send_ns, c.recv_ns);
            self.sim_leg_ns = c.send_ns + c.recv_ns + self.wake_ns + self.switch_ns;
        }
        if let Some(c) = fitted("socket") {
            (self.sock_send_ns, self.sock_recv_ns) = (c.send_ns, c.recv_ns);
        }
        self
    }
}

/// The costs `eevdf kernel calibrate` measured in one kernel's guest:
/// what the simulator's twin of a kernel run (`run::sim_twin`) charges,
/// so that it models the QEMU machine the kernel ran on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GuestCosts {
    /// The series (`6.12`, `7.2`) whose guest was measured.
    pub series: &'static str,
    pub switch_ns: u64,
    pub wake_ns: u64,
    /// A timed sleep's own CPU (`costs sleep`).
    pub sleep_ns: u64,
    /// A tick's interrupt, lost by the task it interrupts (`costs tick`).
    pub tick_ns: u64,
    /// hackbench's 100-byte pipe write and read, as a running
    /// hackbench pays them (`crate::steady`), not the batch's.
    pub send_ns: u64,
    pub recv_ns: u64,
    /// The same over a UNIX stream socket (`ipc=socket`).
    pub sock_send_ns: u64,
    pub sock_recv_ns: u64,
}

/// Measured on this project's QEMU (`-icount shift=1`, one CPU) with
/// `eevdf kernel calibrate --kernel 6.12` and `--kernel 7.2` (medians;
/// 6.12.95+deb12, 7.2.13+deb14). Rerun it after a QEMU or kernel bump.
/// `sleep` came later (timer loop 9,749 and 9,610 ns per period, less
/// that run's switch, 4,763 and 5,241 ns), and the socket messages later
/// still; `tick` (`tick_ns`) from the runs of 2026-12-06; `switch` and
/// `wake` are from the first run. The message costs are not the
/// batch's (`pipe_write_ns` 2,640 and 2,252 ns, `pipe_read_ns` 2,469 and
/// 2,042, `socket_write_ns` 5,155 and 4,916, `socket_read_ns` 4,733 and
/// 3,996), which a running hackbench exceeds by 8 to 22 %, but fitted to
/// the committed steady-state runs (`crate::steady::fit`, 2026-12-07;
/// `tests/steady.rs` holds the twins to them within 1 %).
pub const GUEST_COSTS: [GuestCosts; 2] = [
    GuestCosts {
        series: "6.12",
        switch_ns: 4_765,
        wake_ns: 3_678,
        sleep_ns: 4_986,
        tick_ns: 6_481,
        send_ns: 2_886,
        recv_ns: 2_743,
        sock_send_ns: 6_306,
        sock_recv_ns: 5_143,
    },
    GuestCosts {
        series: "7.2",
        switch_ns: 5_244,
        wake_ns: 3_298,
        sleep_ns: 4_369,
        tick_ns: 14_687,
        send_ns: 2_441,
        recv_ns: 2_365,
        sock_send_ns: 5_312,
        sock_recv_ns: 4_800,
    },
];

/// The measured costs of the series a release (`6.12.95+deb12-...`)
/// belongs to.
pub fn guest_costs(release: &str) -> Option<GuestCosts> {
    GUEST_COSTS.iter().copied().find(|g| {
        release
            .strip_prefix(g.series)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
    })
}

impl GuestCosts {
    /// Charges these costs where the scenario keeps the defaults: the
    /// machine's `switch`, `wake`, `sleep` and `tick` costs, and each
    /// hackbench task's `send` and `recv` (its pipe's or its socket's).
    /// A scenario's own values stay.
    pub fn apply(&self, sc: &mut Scenario) {
        let d = sc.machine.default_costs();
        let c = &mut sc.sim.costs;
        for (cost, default, measured) in [
            (&mut c.switch_ns, d.switch_ns, self.switch_ns),
            (&mut c.wake_ns, d.wake_ns, self.wake_ns),
            (&mut c.sleep_ns, d.sleep_ns, self.sleep_ns),
            (&mut c.tick_ns, d.tick_ns, self.tick_ns),
        ] {
            if *cost == default {
                *cost = measured;
            }
        }
        for t in &mut sc.sim.tasks {
            if let Workload::Hackbench {
                send_ns,
                recv_ns,
                pipe,
                ..
            } = &mut t.workload
            {
                let (send, recv) = if *pipe {
                    (self.send_ns, self.recv_ns)
                } else {
                    (self.sock_send_ns, self.sock_recv_ns)
                };
                if *send_ns == DEFAULT_HB_MSG_NS {
                    *send_ns = send;
                }
                if *recv_ns == DEFAULT_HB_MSG_NS {
                    *recv_ns = recv;
                }
            }
        }
    }
}

/// A duration in scenario syntax (largest exact unit).
pub fn dur(ns: u64) -> String {
    match ns {
        0 => "0s".into(),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// The initramfs of a calibration boot.
pub fn initramfs(guest: &GuestBinary) -> Result<Vec<u8>, KernelError> {
    let mut fs = Initramfs::new();
    fs.file("init", 0o755, guest.bytes.clone());
    fs.file("eevdf/options", 0o644, format!("{OPTION}\n").into_bytes());
    fs.gzip()
        .map_err(|e| KernelError::new(format!("building the initramfs: {e}"), ""))
}

/// Boots `image` on one CPU in calibration mode; returns what the guest
/// measured and the wall time.
pub fn run(
    image: &Image,
    guest: &GuestBinary,
    opts: &Options,
    progress: &mut dyn FnMut(Phase, Duration),
) -> Result<(Calibration, Duration), KernelError> {
    let initrd = initramfs(guest)?;
    let timeout = opts.timeout.unwrap_or(Duration::from_secs(900));
    let serial = crate::run::boot(
        &initrd,
        &crate::vm_topology::VmTopology::flat(1),
        image,
        opts,
        timeout,
        progress,
    )?;
    let cal = Calibration::parse(&serial.report).map_err(|e| {
        KernelError::new(
            format!("{e}; console tail:\n{}", qemu::tail(&serial.console, 15)),
            "",
        )
    })?;
    Ok((cal, serial.wall))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "noise\r\nEEVDF-GUEST-REPORT-BEGIN\r\n\
{\"schema\":\"eevdf.calibrate.v1\",\"uname\":\"7.2.13 #1\",\"nr_cpus\":1,\"default_slack_ns\":50000,\"errors\":[]}\n\
{\"name\":\"insn_ps\",\"unit\":\"ps\",\"samples\":40,\"min\":2000,\"median\":2000,\"p90\":2000,\"max\":2004}\n\
{\"name\":\"tick_ns\",\"unit\":\"ns\",\"samples\":3,\"min\":5000,\"median\":5200,\"p90\":5200,\"max\":6000}\n\
{\"name\":\"timer_wake_default_slack_ns\",\"unit\":\"ns\",\"samples\":200,\"min\":60000,\"median\":70000,\"p90\":71000,\"max\":90000}\n\
{\"name\":\"timer_wake_ns\",\"unit\":\"ns\",\"samples\":400,\"min\":19000,\"median\":20000,\"p90\":21000,\"max\":40000}\n\
{\"name\":\"timer_loop_ns\",\"unit\":\"ns\",\"samples\":20,\"min\":9000,\"median\":9500,\"p90\":9600,\"max\":12000}\n\
{\"name\":\"pipe_write_ns\",\"unit\":\"ns\",\"samples\":30,\"min\":1900,\"median\":2000,\"p90\":2100,\"max\":9000}\n\
{\"name\":\"pipe_read_ns\",\"unit\":\"ns\",\"samples\":30,\"min\":1400,\"median\":1500,\"p90\":1600,\"max\":9000}\n\
{\"name\":\"socket_write_ns\",\"unit\":\"ns\",\"samples\":30,\"min\":4000,\"median\":4100,\"p90\":4200,\"max\":9000}\n\
{\"name\":\"socket_read_ns\",\"unit\":\"ns\",\"samples\":30,\"min\":3400,\"median\":3500,\"p90\":3600,\"max\":9000}\n\
{\"name\":\"pingpong_leg_ns\",\"unit\":\"ns\",\"samples\":30,\"min\":9000,\"median\":9500,\"p90\":9900,\"max\":20000}\n\
{\"name\":\"syscall_ns\",\"unit\":\"ns\",\"samples\":20,\"min\":400,\"median\":400,\"p90\":410,\"max\":900}\n\
{\"name\":\"yield_switch_ns\",\"unit\":\"ns\",\"samples\":20,\"min\":5000,\"median\":6400,\"p90\":6500,\"max\":9000}\n\
EEVDF-GUEST-REPORT-END\n";

    #[test]
    fn a_report_parses_and_maps_onto_the_keys() {
        let c = Calibration::parse(LOG).unwrap();
        assert_eq!(c.uname, "7.2.13 #1");
        assert_eq!((c.nr_cpus, c.default_slack_ns), (1, 50_000));
        assert_eq!(c.stats.len(), 12);
        assert_eq!(c.get("tick_ns").unwrap().p90, 5200);
        let d = c.derived();
        assert_eq!(
            d,
            Derived {
                insn_ps: 2000,
                switch_ns: 6000,
                wake_ns: 14_000,
                timer_wake_ns: 20_000,
                sleep_ns: 3_500,
                timer_loop_ns: 9_500,
                send_ns: 2000,
                recv_ns: 1500,
                sock_send_ns: 4100,
                sock_recv_ns: 3500,
                tick_ns: 5200,
                slack_ns: 50_000,
                pingpong_leg_ns: 9500,
                sim_leg_ns: 23_500,
            }
        );
        let t = c.render(1, &[]);
        assert!(
            t.contains("costs switch=6us wake=14us sleep=3500ns tick=5200ns\n"),
            "{t}"
        );
        assert!(t.contains("send=2us recv=1500ns\n"), "{t}");
        assert!(t.contains("ipc=socket send=4100ns recv=3500ns\n"), "{t}");
        assert!(!t.contains("MISMATCH"), "{t}");
        assert!(c.render(2, &[]).contains("MISMATCH"));
    }

    #[test]
    fn the_keys_take_the_steady_state_fits() {
        use crate::steady::{Fit, PerMessage, Steady};
        let c = Calibration::parse(LOG).unwrap();
        let pm = |send_ns, recv_ns| PerMessage { send_ns, recv_ns };
        let pipe = Steady {
            ipc: "pipe",
            kernel: pm(2400, 1800),
            batch: pm(2000, 1500),
            fit: Fit {
                costs: pm(2300, 1700),
                twin: pm(2401, 1799),
                rounds: 3,
            },
        };
        let t = c.render(1, &[pipe]);
        assert!(t.contains("send=2300ns recv=1700ns\n"), "{t}");
        assert!(t.contains("ipc=socket send=4100ns recv=3500ns\n"), "{t}");
        assert!(
            t.contains("pipe     kernel send 2400 recv 1800 ns; batch 2000"),
            "{t}"
        );
        // The ping-pong's sum takes the keys: 2300 + 1700 + wake + switch.
        assert!(t.contains("= 24000 ns\n"), "{t}");
    }

    #[test]
    fn a_twin_pays_its_channels_measured_costs() {
        let mut sc = Scenario::parse(
            "eevdf-scenario v1\ntask p kind=hackbench ipc=pipe\n\
             task s kind=hackbench ipc=socket\ntask o kind=hackbench ipc=socket send=1us\nend\n",
        )
        .unwrap();
        let g = guest_costs("7.2.13+deb14-cloud-amd64").unwrap();
        g.apply(&mut sc);
        let costs: Vec<(u64, u64)> = sc
            .sim
            .tasks
            .iter()
            .map(|t| match t.workload {
                Workload::Hackbench {
                    send_ns, recv_ns, ..
                } => (send_ns, recv_ns),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            costs,
            [
                (g.send_ns, g.recv_ns),
                (g.sock_send_ns, g.sock_recv_ns),
                (1_000, g.sock_recv_ns),
            ],
            "a pipe's costs, a socket's, and the scenario's own send kept"
        );
        assert!(g.sock_send_ns > g.send_ns, "a socket message costs more");
        assert!(guest_costs("7.20.1").is_none());
        assert_eq!(sc.sim.costs.tick_ns, g.tick_ns, "the tick's interrupt");
        let mut own = Scenario::parse("eevdf-scenario v1\ncosts tick=1us\nend\n").unwrap();
        g.apply(&mut own);
        assert_eq!(own.sim.costs.tick_ns, 1_000, "the scenario's own tick kept");
    }

    #[test]
    fn failures_are_said() {
        assert!(Calibration::parse("boot log only")
            .unwrap_err()
            .contains("BEGIN"));
        let bad = LOG.replace("eevdf.calibrate.v1", "eevdf.calibrate.v9");
        assert!(Calibration::parse(&bad).unwrap_err().contains("schema"));
        let broken = LOG.replace("\"median\":2000,", "");
        assert!(Calibration::parse(&broken).unwrap_err().contains("line 2"));
        let mut r = GuestReport::new();
        r.error = Some("eevdf-guest panicked: boom".into());
        let panicked = format!("{BEGIN_MARK}\n{}\n{END_MARK}\n", r.to_json());
        assert_eq!(
            Calibration::parse(&panicked).unwrap_err(),
            "eevdf-guest panicked: boom"
        );
        let empty = LOG
            .lines()
            .filter(|l| !l.starts_with("{\"name"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(Calibration::parse(&empty)
            .unwrap_err()
            .contains("no measurements"));
    }

    #[test]
    fn durations_and_the_initramfs() {
        assert_eq!(
            [dur(0), dur(1500), dur(2000), dur(3_000_000)],
            ["0s", "1500ns", "2us", "3ms"]
        );
        let g = GuestBinary {
            path: "/g".into(),
            bytes: b"\x7fELF guest".to_vec(),
            sha256: String::new(),
        };
        assert_eq!(initramfs(&g).unwrap(), initramfs(&g).unwrap());
    }
}
