//! The subcommands' mains: a directive's process, a hackbench member's
//! process, and `local` (the whole run on this host).

use std::io::Write;
use std::path::Path;

use eevdf_scenario::guest::GuestReport;

use crate::proto::{print_report, StdioHandshake};
use crate::run::{self, log, Options};
use crate::setup;
use crate::workload::{self, Mode, RunOpts};

/// Subcommand of a directive's process.
pub const DIRECTIVE_ARGS: &str = "directive";

/// The `directive SCENARIO MODE D` process: runs directive D and prints
/// its part of the report.
pub fn directive_main(args: &[String]) -> i32 {
    let r = (|| {
        let [path, mode, d] = args else {
            return Err(format!("usage: {DIRECTIVE_ARGS} SCENARIO MODE INDEX"));
        };
        let mode = Mode::parse(mode).ok_or_else(|| format!("bad mode {mode:?}"))?;
        let d: usize = d.parse().map_err(|_| format!("bad directive {d:?}"))?;
        let (_, sc) = run::load(Path::new(path))?;
        let opts = child_opts(mode, path);
        Ok(workload::run_directive(
            &sc.sim_config(),
            d,
            &opts,
            &mut StdioHandshake,
        ))
    })();
    finish_child(r)
}

/// The `member SCENARIO MODE D I FDS` process of hackbench's process mode.
pub fn member_main(args: &[String]) -> i32 {
    let r = (|| {
        let [path, mode, d, i, fds] = args else {
            return Err(format!(
                "usage: {} SCENARIO MODE D I FDS",
                workload::MEMBER_ARGS
            ));
        };
        let mode = Mode::parse(mode).ok_or_else(|| format!("bad mode {mode:?}"))?;
        let d: usize = d.parse().map_err(|_| format!("bad directive {d:?}"))?;
        let i: u32 = i.parse().map_err(|_| format!("bad thread {i:?}"))?;
        let (_, sc) = run::load(Path::new(path))?;
        let opts = child_opts(mode, path);
        Ok(workload::run_member(
            &sc.sim_config(),
            d,
            i,
            fds,
            &opts,
            &mut StdioHandshake,
        ))
    })();
    finish_child(r)
}

fn child_opts(mode: Mode, path: &str) -> RunOpts {
    RunOpts {
        mode,
        exe: "/proc/self/exe".into(),
        scenario_path: path.into(),
        hold_until_end: true,
        warmup_ns: 0,
    }
}

fn finish_child(r: Result<GuestReport, String>) -> i32 {
    let report = r.unwrap_or_else(|e| GuestReport {
        error: Some(e),
        ..GuestReport::new()
    });
    print_report(&report);
    // Threads still blocked (a receiver whose senders stopped) end here.
    i32::from(report.error.is_some())
}

/// `local SCENARIO`: the run on this host, without any system setup;
/// prints the report JSON on stdout.
pub fn local_main(args: &[String]) -> i32 {
    let [path] = args else {
        log("usage: eevdf-guest local SCENARIO_FILE");
        return 2;
    };
    let mut report = GuestReport::new();
    report.uname = setup::uname();
    let r = run::run_scenario(
        Mode::Local,
        Path::new(path),
        Path::new("/proc/self/exe"),
        &Options::default(),
        &mut report,
        None,
    );
    if let Err(e) = r {
        report.error.get_or_insert(e);
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", report.to_json());
    let _ = out.flush();
    i32::from(report.error.is_some())
}
