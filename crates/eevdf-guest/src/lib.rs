//! The guest runner: PID 1 inside a QEMU guest; sets a scenario up with
//! real syscalls and measures it on the real kernel.
//!
//! One binary, several roles (by subcommand):
//!
//! - PID 1 (no subcommand): mounts, reads `/eevdf/scenario.txt` and
//!   `/eevdf/options`, configures cgroups, features, preemption and
//!   sysctls, runs the scenario, prints the [`GuestReport`] on
//!   `/dev/ttyS1` and powers off ([`guest`]).
//! - `directive SCENARIO MODE D`: one process per task directive, its
//!   threads named `NAME.I` in the simulator's order ([`workload`]).
//! - `member SCENARIO MODE D I FDS`: one hackbench sender or receiver in
//!   process mode.
//! - `local SCENARIO`: the same run on the host without any system setup,
//!   the report JSON on stdout.
//! - `calibrate`: the machine-cost measurements of `mode=calibrate`
//!   ([`calibrate`]) on the host, on stdout.
//!
//! [`GuestReport`]: eevdf_scenario::guest::GuestReport

pub mod calibrate;
pub mod clock;
pub mod entry;
pub mod guest;
pub mod measure;
pub mod plan;
pub mod proto;
pub mod run;
pub mod setup;
mod sys;
pub mod trace;
pub mod workload;

/// Descriptors a process may need: hackbench's process mode keeps two
/// pipe ends per channel and two stdio pipes per member.
const NOFILE: u64 = 1 << 16;

/// Raises the descriptor limit (as root up to [`NOFILE`], otherwise to
/// the hard limit).
fn raise_nofile() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if setrlimit(Resource::RLIMIT_NOFILE, NOFILE, NOFILE).is_err() {
        if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
        }
    }
}

/// Dispatches on the process's role; returns the exit code.
pub fn main_entry() -> i32 {
    raise_nofile();
    let args: Vec<String> = std::env::args().collect();
    if nix::unistd::getpid().as_raw() == 1 {
        guest::main();
    }
    let rest = args.get(2..).unwrap_or_default();
    match args.get(1).map(String::as_str) {
        Some("local") => entry::local_main(rest),
        Some("calibrate") => calibrate::local_main(),
        Some(entry::DIRECTIVE_ARGS) => entry::directive_main(rest),
        Some(workload::MEMBER_ARGS) => entry::member_main(rest),
        _ => {
            run::log("usage: eevdf-guest local SCENARIO_FILE (as PID 1: no arguments)");
            2
        }
    }
}
