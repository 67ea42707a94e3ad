//! Boots QEMU in deterministic mode: TCG on one host thread, `-icount`
//! (virtual time counts instructions), a fixed `-seed` and a virtual RTC,
//! so the same kernel, initrd bytes, command line, seed and QEMU version
//! give a bit-identical run whatever the host load.
//!
//! Serial ports: ttyS0 is the console, ttyS1 carries the guest's report,
//! ttyS2 its optional trace. Each goes to its own file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::KernelError;

/// Where the guest is in its run, read from its console.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Booting,
    /// The measured window has started.
    Measuring,
    /// The window is over; the guest prints its report.
    Reporting,
}

/// The guest prints these on its console just before and after the window.
pub const WINDOW_START: &str = "eevdf-guest: window start";
pub const WINDOW_END: &str = "eevdf-guest: window end";

/// One boot.
#[derive(Clone, Debug)]
pub struct Boot {
    pub qemu: PathBuf,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    /// `-smp`'s value: a CPU count, or a topology
    /// ([`crate::vm_topology::VmTopology::smp`]).
    pub smp: String,
    /// More machine arguments: NUMA nodes and distances.
    pub machine_args: Vec<String>,
    pub mem_mib: u32,
    pub seed: u64,
    /// `-icount shift=`: 2^shift ns of virtual time per instruction.
    pub shift: u32,
    /// Kernel command line.
    pub append: String,
    /// Wall-clock limit; the guest is killed after it.
    pub timeout: Duration,
    /// Directory for the serial logs.
    pub workdir: PathBuf,
}

/// What a boot left behind.
#[derive(Clone, Debug)]
pub struct Serial {
    pub console: String,
    pub report: String,
    pub trace: String,
    pub wall: Duration,
}

/// The default kernel command line: serial console, no reboot on panic
/// (QEMU's `-no-reboot` turns the reboot into an exit).
/// `cryptomgr.notests`: the crypto self-tests otherwise run for about
/// 2.5 s of virtual time after boot, and the guest waits for quiet.
pub const APPEND: &str = "console=ttyS0 quiet panic=-1 8250.nr_uarts=3 cryptomgr.notests";

impl Boot {
    /// QEMU's argument list (also recorded, so a run can be reproduced by hand).
    pub fn args(&self) -> Vec<String> {
        let serial = |name: &str| format!("file:{}", self.workdir.join(name).display());
        let mut a: Vec<String> = [
            "-accel",
            "tcg,thread=single",
            "-icount",
            &format!("shift={},sleep=off,align=off", self.shift),
            "-seed",
            &self.seed.to_string(),
            "-rtc",
            "base=2024-01-01T00:00:00,clock=vm",
            "-cpu",
            "max,-cx16",
            "-smp",
            &self.smp,
            "-m",
            &format!("{}M", self.mem_mib),
            "-nodefaults",
            "-display",
            "none",
            "-no-reboot",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(self.machine_args.iter().cloned());
        for port in ["console.log", "report.log", "trace.log"] {
            a.push("-serial".into());
            a.push(serial(port));
        }
        for (k, v) in [("-kernel", &self.kernel), ("-initrd", &self.initrd)] {
            a.push(k.into());
            a.push(v.display().to_string());
        }
        a.push("-append".into());
        a.push(self.append.clone());
        a
    }

    /// Boots and waits for the guest to power off, calling `progress`
    /// about every 200 ms with the phase and the wall time so far.
    pub fn run(&self, progress: &mut dyn FnMut(Phase, Duration)) -> Result<Serial, KernelError> {
        std::fs::create_dir_all(&self.workdir).map_err(|e| KernelError::io(&self.workdir, e))?;
        let console = self.workdir.join("console.log");
        for f in ["console.log", "report.log", "trace.log"] {
            let _ = std::fs::remove_file(self.workdir.join(f));
        }
        let started = Instant::now();
        let mut child = Command::new(&self.qemu)
            .args(self.args())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| KernelError::new(
                format!("cannot start {}: {e}", self.qemu.display()),
                "install QEMU: apt-get install --no-install-recommends qemu-system-x86 (make setup does)",
            ))?;
        let status = loop {
            if let Some(st) = child
                .try_wait()
                .map_err(|e| KernelError::io(&self.qemu, e))?
            {
                break st;
            }
            let wall = started.elapsed();
            if wall > self.timeout {
                let _ = child.kill();
                let _ = child.wait();
                return Err(KernelError::new(
                    format!(
                        "the guest did not finish within {} s; console tail:\n{}",
                        self.timeout.as_secs(),
                        tail(&read_lossy(&console), 15)
                    ),
                    "raise --timeout, or shorten the scenario's duration",
                ));
            }
            progress(phase_of(&read_lossy(&console)), wall);
            std::thread::sleep(Duration::from_millis(200));
        };
        let mut stderr = String::new();
        if let Some(e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.take(1 << 16).read_to_string(&mut stderr);
        }
        if !status.success() {
            return Err(KernelError::new(
                format!("QEMU exited with {status}: {}", stderr.trim()),
                "check the kernel image and that qemu-system-x86_64 runs",
            ));
        }
        Ok(Serial {
            console: read_lossy(&console),
            report: read_lossy(&self.workdir.join("report.log")),
            trace: read_lossy(&self.workdir.join("trace.log")),
            wall: started.elapsed(),
        })
    }
}

fn phase_of(console: &str) -> Phase {
    if console.contains(WINDOW_END) {
        Phase::Reporting
    } else if console.contains(WINDOW_START) {
        Phase::Measuring
    } else {
        Phase::Booting
    }
}

/// A file's text with invalid UTF-8 replaced; empty if it is missing.
fn read_lossy(p: &Path) -> String {
    std::fs::read(p)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// The last `n` lines of a text.
pub fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// `qemu-system-x86_64 --version`'s first line.
pub fn version(qemu: &Path) -> Result<String, KernelError> {
    let out = Command::new(qemu).arg("--version").output().map_err(|e| {
        KernelError::new(
            format!("cannot run {}: {e}", qemu.display()),
            "install QEMU: apt-get install --no-install-recommends qemu-system-x86 (make setup does)",
        )
    })?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string())
}

/// Console lines between the guest's window markers: kernel messages
/// printed while the window ran, each costing the guest the serial
/// port's time, which no twin has.
pub fn window_lines(console: &str) -> usize {
    console
        .lines()
        .skip_while(|l| !l.contains(WINDOW_START))
        .skip(1)
        .take_while(|l| !l.contains(WINDOW_END))
        .filter(|l| !l.trim().is_empty())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_deterministic_mode() {
        let b = Boot {
            qemu: "qemu-system-x86_64".into(),
            kernel: "/k/vmlinuz".into(),
            initrd: "/k/initrd.gz".into(),
            smp: "2".into(),
            machine_args: Vec::new(),
            mem_mib: 1024,
            seed: 7,
            shift: 1,
            append: APPEND.into(),
            timeout: Duration::from_secs(60),
            workdir: "/w".into(),
        };
        let a = b.args().join(" ");
        for want in [
            "-accel tcg,thread=single",
            "-icount shift=1,sleep=off,align=off",
            "-seed 7",
            "-rtc base=2024-01-01T00:00:00,clock=vm",
            "-smp 2",
            "-nodefaults",
            "-no-reboot",
            "-serial file:/w/console.log -serial file:/w/report.log",
            "-kernel /k/vmlinuz -initrd /k/initrd.gz",
        ] {
            assert!(a.contains(want), "{want} missing in {a}");
        }
    }

    #[test]
    fn phases_follow_the_console() {
        assert_eq!(phase_of("Linux version 7.2"), Phase::Booting);
        assert_eq!(phase_of(&format!("x\n{WINDOW_START}\n")), Phase::Measuring);
        assert_eq!(
            phase_of(&format!("{WINDOW_START}\n{WINDOW_END}\n")),
            Phase::Reporting
        );
        assert_eq!(tail("a\nb\nc", 2), "b\nc");
    }

    #[test]
    fn kernel_messages_in_the_window_are_counted() {
        let quiet = format!("boot\n{WINDOW_START}\n{WINDOW_END}\n[ 5.0] after\n");
        assert_eq!(window_lines(&quiet), 0);
        let chatty = format!("{WINDOW_START}\n[ 1.5] rcu: stall\n\n[ 1.6] x\n{WINDOW_END}\n");
        assert_eq!(window_lines(&chatty), 2);
        assert_eq!(window_lines("no markers\n"), 0);
    }
}
