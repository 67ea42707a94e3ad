//! hackbench (rt-tests): `groups` groups of `fds` senders and `fds`
//! receivers; every receiver has one channel (a pipe, or a unix stream
//! socket pair) that all senders of its group write to. A sender writes
//! `loops` rounds of one 100-byte message to each receiver of its group
//! (0 = until the window's end); a receiver reads `fds * loops`.
//!
//! Thread mode shares the channels inside one process; process mode is
//! in [`super::members`].

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use eevdf_scenario::guest::GuestReport;
use eevdf_sim::{TaskSpec, Workload};
use nix::fcntl::{fcntl, FcntlArg, OFlag};

use super::{wait_start_on_time, Ctx, Work};
use crate::clock::{self, Nanos};
use crate::plan::{Planned, Role};

/// hackbench's message size.
pub const DATASIZE: usize = 100;
/// The simulator's default channel capacities (messages): a pipe of 16
/// pages, a socket of 208 KiB at 768 bytes per message.
const DEFAULT_PIPE_MSGS: u32 = 655;
const DEFAULT_SOCKET_MSGS: u32 = 277;

#[derive(Debug)]
pub(in crate::workload) struct Sender {
    pub(super) outs: Vec<Arc<File>>,
    pub(super) loops: u64,
}

#[derive(Debug)]
pub(in crate::workload) struct Receiver {
    pub(super) input: Arc<File>,
    /// Messages to read; 0 = until the window's end.
    pub(super) expect: u64,
}

impl Sender {
    pub(super) fn run(self, ctx: &mut Ctx) -> Result<Option<Nanos>, String> {
        if wait_start_on_time(ctx)?.is_none() {
            return Ok(None);
        }
        let data = [0u8; DATASIZE];
        let mut round = 0u64;
        while self.loops == 0 || round < self.loops {
            for out in &self.outs {
                match send_one(out, &data, ctx.window.t1) {
                    Ok(true) => {}
                    Ok(false) => return Ok(None),
                    // Receivers leave at the window's end, and with them
                    // the pipe's last reader.
                    Err(_) if clock::now() >= ctx.window.t1 => return Ok(None),
                    Err(e) => return Err(format!("sender write: {e}")),
                }
            }
            round += 1;
        }
        Ok(Some(clock::now()))
    }
}

impl Receiver {
    pub(super) fn run(self, ctx: &mut Ctx) -> Result<Option<Nanos>, String> {
        if wait_start_on_time(ctx)?.is_none() {
            return Ok(None);
        }
        let mut data = [0u8; DATASIZE];
        let mut got = 0u64;
        while self.expect == 0 || got < self.expect {
            match recv_one(&self.input, &mut data, ctx.window.t1) {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                // Every sender is gone (process mode, after the window).
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(None),
                Err(_) if clock::now() >= ctx.window.t1 => return Ok(None),
                Err(e) => return Err(format!("receiver read: {e}")),
            }
            got += 1;
            ctx.record().count.store(got, Ordering::Release);
        }
        Ok(Some(clock::now()))
    }
}

/// One message of a sender: the window check, then the write. `false`:
/// the window is over. `eevdf kernel calibrate` times this (the
/// simulator's `send`), so the cost it measures is the loop's.
pub fn send_one(out: &File, data: &[u8; DATASIZE], t1: Nanos) -> std::io::Result<bool> {
    if clock::now() >= t1 {
        return Ok(false);
    }
    (&*out).write_all(data).map(|()| true)
}

/// One message of a receiver: the read, then the window check (the
/// simulator's `recv`, timed by calibration as [`send_one`] is).
pub fn recv_one(input: &File, data: &mut [u8; DATASIZE], t1: Nanos) -> std::io::Result<bool> {
    (&*input).read_exact(data)?;
    Ok(clock::now() < t1)
}

pub(super) struct Params {
    pub(super) groups: u32,
    pub(super) fds: u32,
    pub(super) pipe: bool,
    pub(super) loops: u64,
    pub(super) pipe_msgs: u32,
}

pub(super) fn params(spec: &TaskSpec) -> Params {
    match spec.workload {
        Workload::Hackbench {
            groups,
            fds,
            pipe,
            loops,
            pipe_msgs,
            ..
        } => Params {
            groups: groups.max(1),
            fds: fds.max(1),
            pipe,
            loops,
            pipe_msgs,
        },
        _ => Params {
            groups: 1,
            fds: 1,
            pipe: true,
            loops: 0,
            pipe_msgs: DEFAULT_PIPE_MSGS,
        },
    }
}

/// One receiver's channel: (read end, write end).
fn channel(p: &Params, warnings: &mut Vec<String>) -> Result<(File, File), String> {
    if !p.pipe {
        if p.pipe_msgs != DEFAULT_SOCKET_MSGS {
            push_once(
                warnings,
                "hackbench: pipe_msgs is ignored for sockets".into(),
            );
        }
        let (r, w) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
        return Ok((File::from(OwnedFd::from(r)), File::from(OwnedFd::from(w))));
    }
    let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| format!("pipe: {e}"))?;
    if p.pipe_msgs != DEFAULT_PIPE_MSGS {
        // The simulator's pipe of `pipe_msgs` messages: a power of two
        // pages, as round_pipe_size() makes of pipe_msgs * 100 bytes.
        let pages = eevdf_sim::hackbench::pipe_pages(p.pipe_msgs);
        let bytes = u32::try_from(pages * eevdf_sim::hackbench::PAGE_BYTES).unwrap_or(u32::MAX);
        let size = i32::try_from(bytes).unwrap_or(i32::MAX);
        match fcntl(&w, FcntlArg::F_SETPIPE_SZ(size)) {
            Ok(got) if got != size => push_once(
                warnings,
                format!("hackbench: pipes hold {got} bytes, not {bytes} (pipe_msgs)"),
            ),
            Ok(_) => {}
            Err(e) => return Err(format!("F_SETPIPE_SZ {size}: {e}")),
        }
    }
    Ok((File::from(r), File::from(w)))
}

fn push_once(warnings: &mut Vec<String>, w: String) {
    if !warnings.contains(&w) {
        warnings.push(w);
    }
}

/// Every group's channels, receiver by receiver.
pub(super) fn channels(
    p: &Params,
    warnings: &mut Vec<String>,
) -> Result<Vec<Vec<(File, File)>>, String> {
    (0..p.groups)
        .map(|_| (0..p.fds).map(|_| channel(p, warnings)).collect())
        .collect()
}

/// Thread mode: the works of one process sharing the channels.
pub(super) fn thread_works(
    spec: &TaskSpec,
    threads: &[Planned],
    report: &mut GuestReport,
) -> Result<Vec<Work>, String> {
    let p = params(spec);
    let chans: Vec<Vec<(Arc<File>, Arc<File>)>> = channels(&p, &mut report.warnings)?
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|(r, w)| (Arc::new(r), Arc::new(w)))
                .collect()
        })
        .collect();
    let expect = p.loops.saturating_mul(u64::from(p.fds));
    threads
        .iter()
        .map(|t| match t.role {
            Role::Sender { group } => {
                let g = chans
                    .get(group as usize)
                    .ok_or("hackbench: no such group")?;
                Ok(Work::Sender(Sender {
                    outs: g.iter().map(|c| Arc::clone(&c.1)).collect(),
                    loops: p.loops,
                }))
            }
            Role::Receiver { group, index } => {
                let c = chans
                    .get(group as usize)
                    .and_then(|g| g.get(index as usize))
                    .ok_or("hackbench: no such receiver")?;
                Ok(Work::Receiver(Receiver {
                    input: Arc::clone(&c.0),
                    expect,
                }))
            }
            _ => Err("hackbench: a thread that is neither sender nor receiver".into()),
        })
        .collect()
}
