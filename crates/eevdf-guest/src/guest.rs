//! PID 1 of a guest: mount, run, print the report on the second serial
//! port (and the trace on the third), power off. Whatever happens, a
//! report is printed and the machine powers off: a watchdog covers
//! hangs, a panic hook covers bugs (a panic in PID 1 would be a kernel
//! panic with no report).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use eevdf_scenario::guest::{GuestReport, BEGIN_MARK, END_MARK};
use nix::sys::reboot::{reboot, RebootMode};
use nix::sys::termios::{cfmakeraw, tcdrain, tcgetattr, tcsetattr, SetArg};

use crate::calibrate;
use crate::clock::{self, Nanos};
use crate::run::{self, log, Deadline, Options};
use crate::setup;
use crate::trace::Capture;
use crate::workload::Mode;

const SCENARIO: &str = "/eevdf/scenario.txt";
const OPTIONS: &str = "/eevdf/options";
const REPORT_PORT: &str = "/dev/ttyS1";
const TRACE_PORT: &str = "/dev/ttyS2";

/// Set by whoever prints the report first (main flow, watchdog, panic).
static EMITTED: AtomicBool = AtomicBool::new(false);

/// PID 1's whole life.
pub fn main() -> ! {
    std::panic::set_hook(Box::new(|info| {
        let mut r = GuestReport::new();
        r.uname = setup::uname();
        r.error = Some(format!("eevdf-guest panicked: {info}"));
        emit(&r, None);
        power_off();
    }));
    let mut report = GuestReport::new();
    report.uname = setup::uname();
    log(&format!("starting on {}", report.uname));
    let r = (|| {
        setup::mount_all(&mut report.warnings)?;
        let options_text = std::fs::read_to_string(OPTIONS);
        if options_text.as_deref().is_ok_and(calibrate::requested) {
            calibrate::main(&report.uname, REPORT_PORT);
        }
        let options = match options_text {
            Ok(t) => Options::parse(&t, &mut report.warnings),
            Err(_) => Options::default(),
        };
        let watchdog = Watchdog::start(clock::now().saturating_add(300_000_000_000));
        run::run_scenario(
            Mode::Guest,
            Path::new(SCENARIO),
            Path::new("/proc/self/exe"),
            &options,
            &mut report,
            Some(&watchdog),
        )
    })();
    let capture = match r {
        Ok(c) => c,
        Err(e) => {
            report.error.get_or_insert(e);
            None
        }
    };
    if let Some(e) = &report.error {
        log(&format!("error: {e}"));
    }
    emit(&report, capture.as_ref());
    power_off()
}

/// Opens a serial port for output, raw (no `\n` to `\r\n`).
pub(crate) fn open_port(path: &str) -> Result<File, String> {
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(path)
        .map_err(|e| format!("{path}: {e}"))?;
    if let Ok(mut t) = tcgetattr(&f) {
        cfmakeraw(&mut t);
        let _ = tcsetattr(&f, SetArg::TCSANOW, &t);
    }
    Ok(f)
}

/// Prints the report (once per boot), then the trace.
fn emit(report: &GuestReport, capture: Option<&Capture>) {
    if EMITTED.swap(true, Ordering::SeqCst) {
        return;
    }
    let text = format!("{BEGIN_MARK}\n{}\n{END_MARK}\n", report.to_json());
    match open_port(REPORT_PORT) {
        Ok(mut f) => {
            if let Err(e) = f.write_all(text.as_bytes()) {
                log(&format!("{REPORT_PORT}: {e}"));
            }
            // Power-off does not wait for the UART to drain.
            let _ = tcdrain(&f);
        }
        Err(e) => {
            log(&format!("{e}; the report follows on the console"));
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
    }
    if let Some(c) = capture {
        match open_port(TRACE_PORT).and_then(|mut f| {
            let n = c.dump(&mut f)?;
            let _ = tcdrain(&f);
            Ok(n)
        }) {
            Ok(n) => log(&format!("trace: {n} bytes on {TRACE_PORT}")),
            Err(e) => log(&e),
        }
    }
    log("report written");
}

pub(crate) fn power_off() -> ! {
    nix::unistd::sync();
    let e = reboot(RebootMode::RB_POWER_OFF);
    log(&format!("power off failed: {e:?}"));
    // Exiting PID 1 panics the kernel; QEMU runs with -no-reboot.
    std::process::exit(1)
}

/// Prints an error report and powers off if the run is not over by its
/// deadline. Waits on a condition variable, so moving the deadline
/// wakes it at once (before the window), never inside the window.
#[derive(Debug, Clone)]
struct Watchdog {
    state: Arc<(Mutex<Nanos>, Condvar)>,
}

impl Watchdog {
    fn start(deadline: Nanos) -> Watchdog {
        let w = Watchdog {
            state: Arc::new((Mutex::new(deadline), Condvar::new())),
        };
        let state = Arc::clone(&w.state);
        let spawned = std::thread::Builder::new()
            .name("watchdog".into())
            .spawn(move || watch(&state));
        if let Err(e) = spawned {
            log(&format!("no watchdog: {e}"));
        }
        w
    }
}

impl Deadline for Watchdog {
    fn set(&self, at: Nanos) {
        let (m, cv) = &*self.state;
        *m.lock().unwrap_or_else(|p| p.into_inner()) = at;
        cv.notify_all();
    }
}

fn watch(state: &(Mutex<Nanos>, Condvar)) {
    let (m, cv) = state;
    let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let now = clock::now();
        if now >= *g {
            break;
        }
        let left = Duration::from_nanos(*g - now);
        g = cv
            .wait_timeout(g, left)
            .map_or_else(|p| p.into_inner().0, |r| r.0);
    }
    let mut r = GuestReport::new();
    r.uname = setup::uname();
    r.error = Some("watchdog: the run did not finish in time (a process hung?)".into());
    log("watchdog fired");
    emit(&r, None);
    power_off();
}
