//! hackbench's process mode: every sender and receiver is its own
//! process, as hackbench's fork makes them. The channels are made here
//! and inherited across `exec` by the processes that use them; this
//! process relays the window and merges their reports.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::Arc;

use eevdf_scenario::guest::{GuestHackbench, GuestReport};
use eevdf_sim::{SimConfig, TaskSpec};
use nix::fcntl::{fcntl, FcntlArg, FdFlag};

use super::hackbench::{channels, params, Receiver, Sender};
use super::{run_threads, RunOpts, Work};
use crate::plan::{self, Planned, Role};
use crate::proto::{merge, Handshake, Peer};
use crate::sys;

/// Subcommand of a process-mode sender or receiver.
pub const MEMBER_ARGS: &str = "member";

fn set_inherited(fds: &[&File], inherit: bool) -> Result<(), String> {
    let flag = if inherit {
        FdFlag::empty()
    } else {
        FdFlag::FD_CLOEXEC
    };
    for f in fds {
        fcntl(f.as_fd(), FcntlArg::F_SETFD(flag)).map_err(|e| format!("F_SETFD: {e}"))?;
    }
    Ok(())
}

/// Runs directive `spec`'s senders and receivers as processes.
pub(super) fn run_processes(
    spec: &TaskSpec,
    threads: &[Planned],
    opts: &RunOpts,
    hs: &mut dyn Handshake,
    report: &mut GuestReport,
) -> Result<(), String> {
    let p = params(spec);
    let chans = channels(&p, &mut report.warnings)?;
    let mut peers: Vec<Peer> = Vec::with_capacity(threads.len());
    let r = spawn_members(&chans, threads, opts, &mut peers);
    drop(chans);
    let r = r.and_then(|()| peers.iter_mut().try_for_each(Peer::wait_ready));
    let r = r.and_then(|()| {
        let w = hs.ready()?;
        peers.iter_mut().try_for_each(|m| m.send_window(w))
    });
    if let Err(e) = r {
        peers.into_iter().for_each(Peer::kill);
        return Err(e);
    }
    let mut parts = GuestReport::new();
    for m in peers {
        let label = m.label.clone();
        match m.report() {
            Ok(part) => merge(&mut parts, part),
            Err(e) => {
                parts.error.get_or_insert(e);
                parts.warnings.push(format!("{label}: no report"));
            }
        }
    }
    let d = threads.first().map_or(0, |t| t.directive);
    let mut hb = GuestHackbench {
        directive: d,
        messages: 0,
        completion_ns: Some(0),
    };
    for h in &parts.hackbench {
        hb.messages += h.messages;
        hb.completion_ns = match (hb.completion_ns, h.completion_ns) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    parts.hackbench = vec![hb];
    parts.warnings.dedup();
    merge(report, parts);
    Ok(())
}

fn spawn_members(
    chans: &[Vec<(File, File)>],
    threads: &[Planned],
    opts: &RunOpts,
    peers: &mut Vec<Peer>,
) -> Result<(), String> {
    for t in threads {
        let fds: Vec<&File> = match t.role {
            Role::Sender { group } => chans
                .get(group as usize)
                .map(|g| g.iter().map(|c| &c.1).collect())
                .unwrap_or_default(),
            Role::Receiver { group, index } => chans
                .get(group as usize)
                .and_then(|g| g.get(index as usize))
                .map(|c| vec![&c.0])
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        if fds.is_empty() {
            return Err(format!("{}: no channel", t.name));
        }
        let list: Vec<String> = fds.iter().map(|f| f.as_raw_fd().to_string()).collect();
        let args = vec![
            MEMBER_ARGS.to_string(),
            opts.scenario_path.display().to_string(),
            opts.mode.name().to_string(),
            t.directive.to_string(),
            t.index.to_string(),
            list.join(","),
        ];
        // Only this member's descriptors cross its exec; this process is
        // single-threaded here, so no other spawn can inherit them.
        set_inherited(&fds, true)?;
        let peer = Peer::spawn(&opts.exe, &args, t.name.clone());
        set_inherited(&fds, false)?;
        peers.push(peer?);
    }
    Ok(())
}

/// Parses `a,b,c` into distinct descriptor numbers.
pub fn member_fds(list: &str) -> Result<Vec<RawFd>, String> {
    let mut out: Vec<RawFd> = Vec::new();
    for s in list.split(',') {
        let fd: RawFd = s.parse().map_err(|_| format!("bad descriptor {s:?}"))?;
        if fd < 3 || out.contains(&fd) {
            return Err(format!("descriptor {fd} is not usable"));
        }
        out.push(fd);
    }
    Ok(out)
}

/// A process-mode sender or receiver: thread `index` of directive `d`,
/// using the inherited descriptors `fds` (in the `member` arguments).
pub fn run_member(
    cfg: &SimConfig,
    d: usize,
    index: u32,
    fds: &str,
    opts: &RunOpts,
    hs: &mut dyn Handshake,
) -> GuestReport {
    let mut report = GuestReport::new();
    let r = member(cfg, d, index, fds, opts, hs, &mut report);
    if let Err(e) = r {
        report.error.get_or_insert(e);
    }
    report
}

fn member(
    cfg: &SimConfig,
    d: usize,
    index: u32,
    fds: &str,
    opts: &RunOpts,
    hs: &mut dyn Handshake,
    report: &mut GuestReport,
) -> Result<(), String> {
    let spec = cfg.tasks.get(d).ok_or("no such directive")?;
    let me = plan::plan(cfg)?
        .into_iter()
        .find(|t| t.directive == d && t.index == index)
        .ok_or_else(|| format!("directive {d} has no thread {index}"))?;
    let files: Vec<Arc<File>> = member_fds(fds)?
        .into_iter()
        .map(|fd| sys::adopt_inherited_fd(fd).map(|o| Arc::new(File::from(o))))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("inherited descriptor: {e}"))?;
    let p = params(spec);
    let work = match me.role {
        Role::Sender { .. } if files.len() == p.fds as usize => Work::Sender(Sender {
            outs: files,
            loops: p.loops,
        }),
        Role::Receiver { .. } if files.len() == 1 => Work::Receiver(Receiver {
            input: Arc::clone(&files[0]),
            expect: p.loops.saturating_mul(u64::from(p.fds)),
        }),
        _ => return Err(format!("{}: wrong descriptors for its role", me.name)),
    };
    run_threads(spec, vec![(me, work)], opts, hs, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_lists_are_distinct_and_above_stdio() {
        assert_eq!(member_fds("5,7,9").unwrap(), [5, 7, 9]);
        for bad in ["", "5,5", "2", "x", "5,,6", "-1"] {
            assert!(member_fds(bad).is_err(), "{bad}");
        }
    }
}
