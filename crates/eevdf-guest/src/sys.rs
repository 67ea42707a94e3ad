//! The crate's only `unsafe`: system calls nix does not wrap
//! (`sched_setattr`) and adopting file descriptors inherited across
//! `exec` (hackbench's process mode shares pipes as fork would).

#![allow(unsafe_code)]

use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;

/// `SCHED_OTHER`, `SCHED_BATCH`, `SCHED_IDLE` (uapi/linux/sched.h).
pub const SCHED_OTHER: u32 = 0;
pub const SCHED_BATCH: u32 = 3;
pub const SCHED_IDLE: u32 = 5;

/// `struct sched_attr`, `SCHED_ATTR_SIZE_VER0` layout (48 bytes).
#[repr(C)]
#[derive(Debug, Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// Sets the calling thread's fair policy, nice and custom slice
/// (`sched_runtime`; 0 = the base slice) in one `sched_setattr`.
pub fn sched_setattr_self(policy: u32, nice: i32, runtime_ns: u64) -> Result<(), Errno> {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: policy,
        sched_nice: nice,
        sched_runtime: runtime_ns,
        ..Default::default()
    };
    // SAFETY: `attr` is a fully initialised VER0 sched_attr whose `size`
    // says so; it lives across the call, which only reads it. pid 0 is
    // the calling thread and flags must be 0.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            0 as libc::pid_t,
            &attr as *const SchedAttr,
            0 as libc::c_uint,
        )
    };
    Errno::result(r).map(drop)
}

/// Takes ownership of descriptor `fd`, inherited from the parent across
/// `exec`. Fails if it is not open. Call once per descriptor.
pub fn adopt_inherited_fd(fd: RawFd) -> Result<OwnedFd, Errno> {
    if fd < 3 {
        return Err(Errno::EBADF);
    }
    // SAFETY: F_GETFD only inspects the descriptor table.
    Errno::result(unsafe { libc::fcntl(fd, libc::F_GETFD) })?;
    // SAFETY: `fd` is open (checked above) and was created by the parent
    // for this process alone; nothing else in this process owns it,
    // because it arrived through exec and the caller adopts each number
    // once (`workload::member_fds` rejects duplicates).
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Runs exactly `2 * n` instructions (`dec; jnz` on one register), for
/// calibrating the virtual clock under `-icount`, where time is counted
/// in instructions. `n = 0` runs none.
#[cfg(target_arch = "x86_64")]
pub fn spin_exact(n: u64) {
    if n == 0 {
        return;
    }
    // SAFETY: the loop only decrements the register it is given; it
    // touches no memory and no stack.
    unsafe {
        core::arch::asm!(
            "2:",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) n => _,
            options(nomem, nostack),
        );
    }
}

/// Elsewhere: a loop of unknown length per iteration (`Burner` calibrates it).
#[cfg(not(target_arch = "x86_64"))]
pub fn spin_exact(n: u64) {
    for i in 0..n {
        std::hint::black_box(i);
    }
}
