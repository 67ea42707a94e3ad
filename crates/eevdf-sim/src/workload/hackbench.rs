//! hackbench's channels: the pipes (or unix stream sockets) between a
//! group's senders and its receivers, one per receiver, message by
//! message as `fs/pipe.c` (6.12.95, 7.2.13) and `net/unix/af_unix.c`
//! move them.
//!
//! A thread's burst is folded over many messages, but it ends at the
//! first message whose write or read wakes somebody, so every wakeup
//! happens where the kernel's does:
//! - `pipe_write()` wakes the reader when it writes into an empty pipe
//!   (`was_empty`); a writer that slept on a full pipe wakes the next
//!   one if it leaves room (`wake_next_writer`);
//! - `pipe_read()` wakes one writer (an exclusive wait) whenever it reads
//!   from a full pipe (`was_full`), even if the page it reads from stays
//!   in use; that writer then finds no room and sleeps again;
//! - a socket wakes its reader on every send (`sk_data_ready`), and all
//!   its writers once its buffer drains to a quarter (`unix_writable`).
//!
//! A pipe is a ring of pages: 100-byte messages merge into the newest
//! page while it has room (40 to a page), and a page is freed when its
//! last message is read, so a pipe whose oldest page is partly read holds
//! fewer messages. "Full" is the ring's slots, not the bytes.
//!
//! Each pipe has its `pipe->mutex`. A thread preempted by a kernel
//! preemption (a full request under `full` or `lazy`) between the
//! `mutex_lock()` and `mutex_unlock()` of a read or write ([`WRITE_LOCKED`],
//! [`READ_LOCKED`]) holds it until it finishes that message; whoever reaches the pipe in
//! the meantime sleeps uninterruptibly (`D`) until the unlock wakes the
//! first waiter (`mutex_unlock()`: one waiter, `wake_up_q()`, no sync).
//! On 7.2.13 (lazy, `CONFIG_PREEMPTION`), ct-hackbench has about 890
//! `D` sleeps in 1 s; 6.12.95 (voluntary) has none. While the owner runs
//! on another CPU, waiters would spin (`mutex_optimistic_spin()`), so
//! only a preempted owner blocks others.

use crate::workload::Tid;

/// Where `pipe->mutex` is held inside one message, in thousandths of
/// the message's cost from the return to user that ends the previous
/// one: from `mutex_lock()` to `mutex_unlock()` in `anon_pipe_write()`
/// (`anon_pipe_read()`; `pipe_write()`/`pipe_read()` in 6.12). Measured
/// under this project's QEMU:
/// - the lock's length, on 7.2.13 with fprobes on `vfs_write`,
///   `anon_pipe_write`, `mutex_unlock`, `vfs_read` and `anon_pipe_read`
///   (ct-hackbench seed 1, 300 ms, 15,000 messages each way), each hit's
///   probe cost (1.66 us, from the calibrated message costs) taken off:
///   a write spends 0.49 us from `vfs_write()` to the lock and 0.58 us
///   under it (of 2.25 us), a read 0.43 and 0.40 us (of 2.04 us);
/// - where the lock starts: on 6.12.95 (voluntary, where `might_sleep()`
///   in `mutex_lock()` is a preemption point), 277 of 769 preemptions
///   after a cyclictest wakeup came in the kernel (`R+`), the rest at the
///   return to user (`R`; seed 1, 1 s): 36 % of a message lies between
///   the return to user and `mutex_lock()`.
pub const WRITE_LOCKED: (u64, u64) = (360, 616);
pub const READ_LOCKED: (u64, u64) = (360, 556);

/// Work into a message of cost `unit` at which `mutex_lock()` is called.
pub fn lock_at(locked: (u64, u64), unit: u64) -> u64 {
    (u128::from(unit) * u128::from(locked.0) / 1000) as u64
}

/// Whether a thread `pos` ns into a message of cost `unit` is between
/// the `mutex_lock()` and `mutex_unlock()` of `locked` (thousandths).
pub fn under_mutex(locked: (u64, u64), pos: u64, unit: u64) -> bool {
    let unlock = (u128::from(unit) * u128::from(locked.1) / 1000) as u64;
    (lock_at(locked, unit)..unlock).contains(&pos)
}

/// Whether a thread `pos` ns into a message of cost `unit` is past its
/// `mutex_lock()` (it finishes the message whatever the mutex).
pub fn past_mutex_lock(locked: (u64, u64), pos: u64, unit: u64) -> bool {
    pos > lock_at(locked, unit)
}

/// hackbench's message size (`DATASIZE`).
pub const MESSAGE_BYTES: u64 = 100;
/// `PAGE_SIZE`.
pub const PAGE_BYTES: u64 = 4096;
/// Messages in one pipe page: a write merges into the last page only
/// while the whole message fits.
pub const MESSAGES_PER_PAGE: u64 = PAGE_BYTES / MESSAGE_BYTES;
/// Most pages a pipe may have (`pipe_max_size`, 1 MiB).
const MAX_PIPE_PAGES: u64 = 256;

/// Pages of a pipe asked to hold `msgs` messages: `F_SETPIPE_SZ` of
/// `msgs * 100` bytes, which `round_pipe_size()` rounds up to a power of
/// two pages. The default 655 messages (65,500 bytes) is the kernel's
/// default pipe of 16 pages.
pub fn pipe_pages(msgs: u32) -> u64 {
    let bytes = u64::from(msgs.max(1)) * MESSAGE_BYTES;
    bytes
        .div_ceil(PAGE_BYTES)
        .next_power_of_two()
        .min(MAX_PIPE_PAGES)
}

/// What a channel is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A pipe of this many pages.
    Pipe { pages: u64 },
    /// A unix stream socket whose send buffer holds this many messages.
    Socket { capacity: u64 },
}

/// One receiver's channel.
#[derive(Clone, Debug)]
pub struct Pipe {
    pub kind: Kind,
    /// Messages in the channel.
    pub fill: u64,
    /// Messages already read from the oldest page (pipes).
    pub tail_read: u64,
    pub reader: Tid,
    /// The reader sleeps waiting for data.
    pub reader_waiting: bool,
    /// Writers sleeping for room, in the order they went to sleep.
    pub writers_waiting: Vec<Tid>,
    /// Holder of `pipe->mutex` across a preemption (pipes only).
    pub mutex_owner: Option<Tid>,
    /// Threads sleeping in `mutex_lock()`, first come first.
    pub mutex_waiters: Vec<Tid>,
    /// The waiter the last unlock woke: it takes the mutex when it runs
    /// and its own unlock wakes the next waiter.
    pub mutex_handoff: Option<Tid>,
    /// Owning hackbench directive (for its statistics).
    pub directive: usize,
}

impl Pipe {
    pub fn new(kind: Kind, reader: Tid, directive: usize) -> Pipe {
        Pipe {
            kind,
            fill: 0,
            tail_read: 0,
            reader,
            reader_waiting: false,
            writers_waiting: Vec::new(),
            mutex_owner: None,
            mutex_waiters: Vec::new(),
            mutex_handoff: None,
            directive,
        }
    }

    /// `pipe->mutex` is held by a preempted thread other than `me`.
    pub fn locked_against(&self, me: Tid) -> bool {
        matches!(self.kind, Kind::Pipe { .. }) && self.mutex_owner.is_some_and(|o| o != me)
    }

    /// `me`, preempted inside this pipe's read or write, keeps the mutex.
    pub fn hold_mutex(&mut self, me: Tid) {
        if matches!(self.kind, Kind::Pipe { .. }) && self.mutex_owner.is_none() {
            self.mutex_owner = Some(me);
        }
    }

    /// `me` finished its message here (or leaves without one): unlocks
    /// if it held the mutex, or had it handed over, and returns the
    /// waiter the unlock wakes.
    pub fn release_mutex(&mut self, me: Tid) -> Option<Tid> {
        if self.mutex_owner == Some(me) {
            self.mutex_owner = None;
        } else if self.mutex_handoff != Some(me) {
            return None;
        }
        self.mutex_handoff = pop_front(&mut self.mutex_waiters);
        self.mutex_handoff
    }

    /// `me` sleeps in `mutex_lock()` behind a preempted holder, whose
    /// unlock will wake the first waiter.
    pub fn wait_for_mutex(&mut self, me: Tid) {
        if self.mutex_handoff == Some(me) {
            self.mutex_handoff = None;
        }
        self.mutex_waiters.push(me);
    }

    /// Messages the channel holds when nothing has been read from it.
    pub fn capacity(&self) -> u64 {
        match self.kind {
            Kind::Pipe { pages } => pages * MESSAGES_PER_PAGE,
            Kind::Socket { capacity } => capacity,
        }
    }

    /// Message positions in use: the oldest page's read ones count until
    /// the page is freed.
    fn used(&self) -> u64 {
        match self.kind {
            Kind::Pipe { .. } if self.fill > 0 => self.tail_read + self.fill,
            _ => self.fill,
        }
    }

    /// Messages that can be written before a writer must sleep.
    pub fn room(&self) -> u64 {
        self.capacity().saturating_sub(self.used())
    }

    /// `pipe_full()`: every slot of the ring holds a page (a socket: no
    /// room left).
    pub fn full(&self) -> bool {
        match self.kind {
            Kind::Pipe { pages } => self.used().div_ceil(MESSAGES_PER_PAGE) >= pages,
            Kind::Socket { .. } => self.room() == 0,
        }
    }

    /// Whether a read now would wake a sleeping writer.
    pub fn read_wakes_writer(&self) -> bool {
        if self.writers_waiting.is_empty() || self.fill == 0 {
            return false;
        }
        match self.kind {
            Kind::Pipe { .. } => self.full(),
            Kind::Socket { capacity } => self.fill - 1 <= capacity / 4,
        }
    }

    /// Whether a write now would wake the reader.
    pub fn write_wakes_reader(&self) -> bool {
        self.reader_waiting && self.room() > 0
    }

    /// Writes one message if there is room; returns whom it woke.
    /// `waited`: the writer slept on this channel before this write.
    pub fn write(&mut self, waited: bool, woken: &mut Vec<Tid>) -> bool {
        if self.room() == 0 {
            return false;
        }
        let was_empty = self.fill == 0;
        debug_assert!(
            was_empty || !self.reader_waiting || matches!(self.kind, Kind::Socket { .. }),
            "a pipe's reader sleeps only on an empty pipe"
        );
        if was_empty {
            // The write allocates a fresh page.
            self.tail_read = 0;
        }
        self.fill += 1;
        let wakes_reader = match self.kind {
            Kind::Pipe { .. } => was_empty,
            Kind::Socket { .. } => true,
        };
        if wakes_reader && std::mem::take(&mut self.reader_waiting) {
            woken.push(self.reader);
        }
        if waited && matches!(self.kind, Kind::Pipe { .. }) && !self.full() {
            if let Some(w) = pop_front(&mut self.writers_waiting) {
                woken.push(w);
            }
        }
        true
    }

    /// Reads one message if there is one; returns whom it woke.
    pub fn read(&mut self, woken: &mut Vec<Tid>) -> bool {
        if self.fill == 0 {
            return false;
        }
        let wake = self.read_wakes_writer();
        self.fill -= 1;
        if let Kind::Pipe { .. } = self.kind {
            self.tail_read += 1;
            if self.tail_read == MESSAGES_PER_PAGE || self.fill == 0 {
                // The oldest page is read out and freed.
                self.tail_read = 0;
            }
        }
        if wake {
            match self.kind {
                Kind::Pipe { .. } => woken.extend(pop_front(&mut self.writers_waiting)),
                Kind::Socket { .. } => woken.append(&mut self.writers_waiting),
            }
        }
        true
    }
}

impl Pipe {
    /// Reads up to `count` messages; returns how many. The same as
    /// `count` calls of [`Pipe::read`], in one step when no writer waits.
    pub fn read_many(&mut self, count: u64, woken: &mut Vec<Tid>) -> u64 {
        if !self.writers_waiting.is_empty() {
            let mut got = 0;
            while got < count && self.read(woken) {
                got += 1;
            }
            return got;
        }
        let got = count.min(self.fill);
        self.fill -= got;
        if let Kind::Pipe { .. } = self.kind {
            self.tail_read = if self.fill == 0 {
                0
            } else {
                (self.tail_read + got) % MESSAGES_PER_PAGE
            };
        }
        got
    }

    /// Writes `count` messages that fit (see [`write_round_robin`]); the
    /// same as `count` calls of [`Pipe::write`].
    fn write_many(&mut self, count: u64, waited: bool, woken: &mut Vec<Tid>) {
        debug_assert!(count <= self.room());
        if count == 0 {
            return;
        }
        self.write(waited, woken);
        // The rest go into a non-empty channel: only a socket's reader
        // (cleared by the first) or the next writer (first write only)
        // could have woken.
        self.fill += count - 1;
    }
}

/// Writes `count` messages round robin from `next` (hackbench's loop over
/// its receivers), stopping where a channel has no room; returns how
/// many were written. The same as one [`Pipe::write`] per message, with
/// the wakeups in message order, in one step per channel.
pub fn write_round_robin(
    pipes: &mut [Pipe],
    next: usize,
    count: u64,
    waited: bool,
    woken: &mut Vec<Tid>,
) -> u64 {
    let n = pipes.len();
    debug_assert!(n > 0 && next < n);
    let fits = (0..n)
        .map(|k| pipes[(next + k) % n].room() * n as u64 + k as u64)
        .min()
        .unwrap_or(0);
    let wrote = count.min(fits);
    for k in 0..n.min(usize::try_from(wrote).unwrap_or(n)) {
        // Messages k, k + n, k + 2n, ... go to receiver next + k.
        let m = (wrote - k as u64).div_ceil(n as u64);
        pipes[(next + k) % n].write_many(m, waited && k == 0, woken);
    }
    wrote
}

fn pop_front(v: &mut Vec<Tid>) -> Option<Tid> {
    (!v.is_empty()).then(|| v.remove(0))
}

/// Who plans a batch, and whether it is inside its first message (which
/// it finishes whatever the mutex: it is past `mutex_lock()`).
#[derive(Clone, Copy, Debug)]
pub struct Planner {
    pub me: Tid,
    pub mid_message: bool,
    /// Some pipe's mutex is held across a preemption (else no pipe
    /// needs looking at: the common case, kept cheap).
    pub any_held: bool,
}

/// Messages a sender writes, round robin from receiver `next` of its
/// group's `pipes`, before its burst must end: where a pipe has no room
/// (it sleeps there) or its mutex is held by a preempted thread (it
/// sleeps on the mutex), or right after a write that wakes somebody. At
/// most `left` and one pipe's capacity (so a burst stays short).
pub fn sender_batch(pipes: &[Pipe], next: usize, left: u64, waited: bool, by: Planner) -> u64 {
    let n = pipes.len();
    debug_assert!(n > 0 && next < n);
    // The k-th receiver is reached at index k, then once a round.
    // Inside its write to `next`, a sender meets that mutex again a
    // round later.
    let locked = (0..=n)
        .take_while(|_| by.any_held)
        .find(|&k| {
            let first_visit_inside = k == 0 && by.mid_message;
            !first_visit_inside && pipes[(next + k) % n].locked_against(by.me)
        })
        .map_or(u64::MAX, |k| k as u64);
    let mut batch = (0..n)
        .map(|k| pipes[(next + k) % n].room() * n as u64 + k as u64)
        .min()
        .unwrap_or(0)
        .min(left)
        .min(pipes[0].capacity())
        .min(locked);
    for k in 0..(batch.min(n as u64) as usize) {
        let p = &pipes[(next + k) % n];
        let wakes_next_writer = k == 0
            && waited
            && !p.writers_waiting.is_empty()
            && matches!(p.kind, Kind::Pipe { .. });
        if p.write_wakes_reader() || wakes_next_writer {
            batch = k as u64 + 1;
            break;
        }
    }
    batch
}

/// Messages a receiver reads from `pipe` before its burst must end:
/// what is there (at most `left`), or up to the read that wakes a writer;
/// none while a preempted writer holds the mutex.
pub fn receiver_batch(pipe: &Pipe, left: u64, by: Planner) -> u64 {
    if !by.mid_message && pipe.locked_against(by.me) {
        return 0;
    }
    let n = pipe.fill.min(left);
    if pipe.writers_waiting.is_empty() || n == 0 {
        return n;
    }
    match pipe.kind {
        Kind::Pipe { .. } if pipe.full() => 1,
        Kind::Pipe { .. } => n,
        Kind::Socket { capacity } => n.min((pipe.fill - capacity / 4).max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: Planner = Planner {
        me: 1000,
        mid_message: false,
        any_held: true,
    };

    fn pipe(pages: u64) -> Pipe {
        Pipe::new(Kind::Pipe { pages }, 99, 0)
    }

    #[test]
    fn the_default_pipe_is_sixteen_pages_of_forty_messages() {
        assert_eq!(pipe_pages(655), 16);
        assert_eq!(pipe_pages(100), 4, "3 pages round up to 4");
        assert_eq!(pipe_pages(1), 1);
        assert_eq!(pipe_pages(u32::MAX), MAX_PIPE_PAGES);
        assert_eq!(pipe(16).capacity(), 640);
    }

    #[test]
    fn only_a_write_into_an_empty_pipe_wakes_its_reader() {
        let mut p = pipe(1);
        p.reader_waiting = true;
        let mut woken = vec![];
        assert!(p.write(false, &mut woken));
        assert_eq!(woken, vec![99]);
        assert!(p.write(false, &mut woken));
        assert_eq!(woken, vec![99], "was_empty is false");
        assert!(!p.write_wakes_reader());
    }

    #[test]
    fn a_partly_read_page_keeps_its_slot_until_read_out() {
        let mut p = pipe(2);
        let mut woken = vec![];
        for _ in 0..80 {
            assert!(p.write(false, &mut woken));
        }
        assert!(p.full() && p.room() == 0);
        assert!(!p.write(false, &mut woken));
        p.writers_waiting = vec![7, 8];
        // Each read from the full ring wakes one writer, 40 times.
        for i in 0..40 {
            assert!(p.full(), "read {i}");
            assert_eq!(p.room(), 0, "read {i}");
            assert!(p.read(&mut woken));
            if i == 0 {
                assert_eq!(woken, vec![7]);
                p.writers_waiting.push(7); // it found no room and slept again
            }
        }
        assert!(!p.full(), "the first page is freed");
        assert_eq!(p.room(), 40);
        assert_eq!(p.fill, 40);
    }

    #[test]
    fn an_emptied_pipe_starts_a_fresh_page() {
        let mut p = pipe(1);
        let mut woken = vec![];
        for _ in 0..10 {
            p.write(false, &mut woken);
        }
        for _ in 0..10 {
            p.read(&mut woken);
        }
        assert_eq!((p.fill, p.tail_read, p.room()), (0, 0, 40));
    }

    #[test]
    fn a_writer_that_slept_wakes_the_next_if_it_leaves_room() {
        let mut p = pipe(2);
        p.writers_waiting = vec![5];
        let mut woken = vec![];
        p.write(true, &mut woken);
        assert_eq!(woken, vec![5]);
        let mut q = pipe(2);
        q.writers_waiting = vec![5];
        q.write(false, &mut woken);
        assert_eq!(woken, vec![5], "a writer that did not sleep wakes nobody");
    }

    #[test]
    fn a_sender_stops_after_the_write_that_wakes_a_reader() {
        let mut pipes = vec![pipe(16), pipe(16), pipe(16)];
        assert_eq!(sender_batch(&pipes, 0, u64::MAX, false, ME), 640);
        pipes[2].reader_waiting = true;
        assert_eq!(sender_batch(&pipes, 0, u64::MAX, false, ME), 3);
        assert_eq!(sender_batch(&pipes, 2, u64::MAX, false, ME), 1);
        assert_eq!(sender_batch(&pipes, 0, 2, false, ME), 2, "left bounds it");
    }

    #[test]
    fn a_sender_stops_at_a_full_pipe() {
        let mut pipes = vec![pipe(1), pipe(1)];
        let mut woken = vec![];
        for _ in 0..38 {
            pipes[1].write(false, &mut woken);
        }
        // Pipe 1 takes 2 more: reached at indices 1 and 3.
        assert_eq!(sender_batch(&pipes, 0, u64::MAX, false, ME), 5);
        assert_eq!(sender_batch(&pipes, 1, u64::MAX, false, ME), 4);
    }

    #[test]
    fn a_receiver_reads_one_at_a_time_from_a_full_pipe_with_writers() {
        let mut p = pipe(1);
        let mut woken = vec![];
        for _ in 0..40 {
            p.write(false, &mut woken);
        }
        assert_eq!(receiver_batch(&p, u64::MAX, ME), 40);
        p.writers_waiting.push(3);
        assert_eq!(receiver_batch(&p, u64::MAX, ME), 1);
        assert_eq!(receiver_batch(&p, 0, ME), 0);
    }

    /// The bulk operations do what one write or read per message does.
    #[test]
    fn bulk_writes_and_reads_match_one_message_at_a_time() {
        let mut rng = crate::rng::SimRng::new(7);
        for round in 0..2000 {
            let kind = if round % 3 == 0 {
                Kind::Socket {
                    capacity: 1 + rng.below(60),
                }
            } else {
                Kind::Pipe {
                    pages: 1 + rng.below(3),
                }
            };
            let n = 1 + rng.below(5) as usize;
            let mut pipes: Vec<Pipe> = (0..n).map(|r| Pipe::new(kind, 100 + r, 0)).collect();
            let mut one = pipes.clone();
            for step in 0..40 {
                let (mut wa, mut wb) = (vec![], vec![]);
                let next = rng.below(n as u64) as usize;
                let count = rng.below(150);
                let waited = rng.below(4) == 0;
                if step % 2 == 0 {
                    let a = write_round_robin(&mut pipes, next, count, waited, &mut wa);
                    let mut b = 0;
                    while b < count && one[(next + b as usize) % n].write(waited && b == 0, &mut wb)
                    {
                        b += 1;
                    }
                    assert_eq!(a, b, "round {round} step {step}");
                } else {
                    let r = rng.below(n as u64) as usize;
                    let a = pipes[r].read_many(count, &mut wa);
                    let mut b = 0;
                    while b < count && one[r].read(&mut wb) {
                        b += 1;
                    }
                    assert_eq!(a, b);
                }
                assert_eq!(wa, wb, "round {round} step {step}");
                for (x, y) in pipes.iter().zip(&one) {
                    assert_eq!((x.fill, x.tail_read), (y.fill, y.tail_read));
                }
                // Readers of empty pipes sleep; some writers wait.
                for (x, y) in pipes.iter_mut().zip(one.iter_mut()) {
                    if x.fill == 0 && rng.below(2) == 0 {
                        x.reader_waiting = true;
                        y.reader_waiting = true;
                    }
                    if x.room() == 0 && rng.below(2) == 0 {
                        x.writers_waiting.push(1);
                        y.writers_waiting.push(1);
                    }
                }
            }
        }
    }

    #[test]
    fn a_socket_wakes_its_writers_at_a_quarter() {
        let mut s = Pipe::new(Kind::Socket { capacity: 8 }, 99, 0);
        let mut woken = vec![];
        s.reader_waiting = true;
        for _ in 0..8 {
            assert!(s.write(false, &mut woken));
        }
        assert_eq!(woken, vec![99]);
        assert!(!s.write(false, &mut woken));
        s.writers_waiting = vec![1, 2];
        assert_eq!(receiver_batch(&s, u64::MAX, ME), 6);
        for _ in 0..5 {
            s.read(&mut woken);
        }
        assert_eq!(woken, vec![99]);
        s.read(&mut woken);
        assert_eq!(woken, vec![99, 1, 2], "every writer, at 2 of 8");
        // The reader waits on an empty socket; any send wakes it.
        s.reader_waiting = true;
        s.write(false, &mut woken);
        assert_eq!(woken.last(), Some(&99));
    }

    #[test]
    fn a_preempted_holder_stops_others_at_its_pipe_only() {
        let mut pipes: Vec<Pipe> = (0..4).map(|_| pipe(16)).collect();
        pipes[2].hold_mutex(7);
        // A sender from receiver 0 writes 0 and 1, then would block at 2.
        assert_eq!(sender_batch(&pipes, 0, u64::MAX, false, ME), 2);
        assert_eq!(sender_batch(&pipes, 2, u64::MAX, false, ME), 0);
        // The holder itself, and a thread already inside its write to 2,
        // go on.
        let holder = Planner { me: 7, ..ME };
        assert_eq!(sender_batch(&pipes, 2, u64::MAX, false, holder), 640);
        let inside = Planner {
            mid_message: true,
            ..ME
        };
        assert_eq!(sender_batch(&pipes, 2, u64::MAX, false, inside), 4);
        let mut r = pipe(1);
        let mut woken = vec![];
        r.write(false, &mut woken);
        r.hold_mutex(7);
        assert_eq!(receiver_batch(&r, u64::MAX, ME), 0);
    }

    #[test]
    fn the_unlock_wakes_one_waiter_in_order() {
        let mut p = pipe(16);
        p.hold_mutex(7);
        p.hold_mutex(8);
        assert_eq!(p.mutex_owner, Some(7), "the first holder keeps it");
        p.wait_for_mutex(3);
        p.wait_for_mutex(4);
        assert_eq!(p.release_mutex(8), None, "only the owner unlocks");
        assert_eq!(p.release_mutex(7), Some(3));
        assert_eq!(
            (p.mutex_owner, p.mutex_waiters.as_slice()),
            (None, &[4][..])
        );
        // The woken waiter's own unlock wakes the next one, once.
        assert_eq!(p.release_mutex(3), Some(4));
        assert_eq!(p.release_mutex(3), None);
        assert_eq!(p.release_mutex(4), None);
        assert_eq!(p.mutex_handoff, None);
    }

    #[test]
    fn sockets_have_no_pipe_mutex() {
        let mut s = Pipe::new(Kind::Socket { capacity: 8 }, 99, 0);
        s.hold_mutex(7);
        assert!(!s.locked_against(1000));
    }
}
