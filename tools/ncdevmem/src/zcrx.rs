//! io_uring zero-copy receive (zcrx, Linux 6.15+; large buffers 7.2+) into a
//! dma-buf area: the dma-buf becomes the memory provider of one RX queue,
//! `IORING_OP_RECV_ZC` completions name the payload's place in it, and each
//! chunk goes back to the NIC through the refill queue once it was read.
//!
//! Linux 7.2's events are taken too: the kernel posts a completion when it
//! had to copy payload (it arrived in host memory, not in this queue's area:
//! `ZCRX_EVENT_COPY`) and when the queue's page pool found no free buffer
//! (`ZCRX_EVENT_ALLOC_FAIL`), and keeps copy counters in the refill region
//! (`struct zcrx_stats`). Each event fires once until re-armed
//! (`ZCRX_CTRL_ARM_EVENT`); after an allocation failure the refill queue is
//! also flushed (`ZCRX_CTRL_FLUSH_RQ`), so what was given back reaches the
//! pool without waiting for the NIC's next allocation.
//!
//! The `io-uring` crate provides the ring, the opcode and the registration
//! call; the zcrx registration structures are its bindings of the uAPI. By
//! hand only: the refill ring's layout (the kernel reports offsets into a
//! region we map), 7.2's `rx_buf_len` and `event_desc`, which the crate's
//! bindings (6.15's uAPI) still call `__resv2` and `__resv[0]`, 7.2's
//! `struct zcrx_event_desc` and `struct zcrx_stats`, and `struct zcrx_ctrl`
//! (7.2's flush and arm, 7.3's `ZCRX_CTRL_ADD_AREA`, which adds more areas to
//! a registered queue): the crate has neither the register opcode nor the
//! structures.
//!
//! (Its length over ~600 lines is its tests, from `mod tests` on.)

use io_uring::types::{
    io_uring_region_desc, io_uring_zcrx_area_reg, io_uring_zcrx_ifq_reg, io_uring_zcrx_rqe,
    IORING_MEM_REGION_TYPE_USER, IORING_ZCRX_AREA_SHIFT,
};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// Completion-queue entries.
const CQ_ENTRIES: u32 = 4096;
/// Refill-queue entries (as upstream's iou-zcrx).
const RQ_ENTRIES: u32 = 4096;
/// `IORING_ZCRX_AREA_DMABUF` (the crate does not re-export the flag enum).
const AREA_DMABUF: u32 = 1;
const USER_DATA_RECV: u64 = 2;
/// The `user_data` of event completions (`zcrx_event_desc::user_data`).
const USER_DATA_EVENT: u64 = 3;
/// Offset bits of an area offset; the bits above name the area.
const OFFSET_MASK: u64 = (1 << IORING_ZCRX_AREA_SHIFT) - 1;
/// `IORING_REGISTER_ZCRX_CTRL` (7.2) and its ops (`enum zcrx_ctrl_op`,
/// include/uapi/linux/io_uring/zcrx.h; `ZCRX_CTRL_ADD_AREA` is 7.3's).
const IORING_REGISTER_ZCRX_CTRL: libc::c_uint = 36;
const ZCRX_CTRL_FLUSH_RQ: u32 = 0;
const ZCRX_CTRL_ARM_EVENT: u32 = 2;
const ZCRX_CTRL_ADD_AREA: u32 = 3;
/// `ZCRX_EVENT_DESC_FLAG_STATS`: the descriptor names where `zcrx_stats` goes.
const EVENT_DESC_FLAG_STATS: u32 = 1;

/// `struct zcrx_ctrl`: 72 bytes, a 24-byte head and a 48-byte union whose
/// members are an area pointer (`zcrx_ctrl_add_area`), an event type
/// (`zcrx_ctrl_arm_event`) or nothing (`zcrx_ctrl_flush_rq`); reserved
/// words zero.
#[repr(C)]
struct ZcrxCtrl {
    zcrx_id: u32,
    op: u32,
    resv: [u64; 2],
    arg: CtrlArg,
}

/// The union of `struct zcrx_ctrl`.
#[repr(C)]
#[derive(Clone, Copy)]
union CtrlArg {
    /// `zc_area.area_ptr` in the first word.
    words: [u64; 6],
    /// `zc_arm_event.event_type` in the first.
    event: [u32; 12],
}
const _: () = assert!(std::mem::size_of::<ZcrxCtrl>() == 72);

/// `struct zcrx_event_desc` (7.2): 96 bytes.
#[repr(C)]
struct EventDesc {
    user_data: u64,
    type_mask: u32,
    flags: u32,
    stats_offset: u64,
    resv2: [u64; 9],
}
const _: () = assert!(std::mem::size_of::<EventDesc>() == 96);

/// An event the kernel posts on a zcrx queue (`enum zcrx_event_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// `ZCRX_EVENT_ALLOC_FAIL`: the queue's page pool found no free buffer
    /// in the areas (all out to userspace or in sockets).
    AllocFail = 0,
    /// `ZCRX_EVENT_COPY`: payload arrived in host memory and was copied
    /// into the area (a frame off this queue, or not split).
    Copy = 1,
}

impl Event {
    fn from_type(t: i32) -> Option<Self> {
        match t {
            0 => Some(Self::AllocFail),
            1 => Some(Self::Copy),
            _ => None,
        }
    }
}

/// The kernel's copy-fallback counters (`struct zcrx_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyStats {
    /// Completions whose payload the kernel copied.
    pub chunks: u64,
    /// Bytes it copied.
    pub bytes: u64,
}

/// One area of a queue: a dma-buf, or host memory (which the kernel may
/// also copy payload into), and how long it is.
#[derive(Clone, Copy, Debug)]
pub enum Area {
    /// A dma-buf.
    Dmabuf {
        /// The dma-buf.
        fd: RawFd,
        /// Its length in bytes.
        len: u64,
    },
    /// Pages of our address space (page-aligned, whole pages).
    Host {
        /// Where they start.
        addr: u64,
        /// Their length in bytes.
        len: u64,
    },
}

fn area_reg(a: Area) -> io_uring_zcrx_area_reg {
    // SAFETY: a plain-data uAPI structure: all-zeroes is valid.
    let mut reg: io_uring_zcrx_area_reg = unsafe { std::mem::zeroed() };
    match a {
        Area::Dmabuf { fd, len } => {
            reg.len = len;
            reg.flags = AREA_DMABUF;
            reg.dmabuf_fd = fd as u32;
        }
        Area::Host { addr, len } => {
            reg.addr = addr;
            reg.len = len;
        }
    }
    reg
}

/// One registered zcrx interface queue: the ring and its refill queue.
///
/// The refill queue is `rq_len` bytes of our anonymous mapping at `rq`, which
/// the kernel shares (registered as a user region); `head`, `tail` and `rqes`
/// point into it at the offsets the kernel reported.
pub struct Zcrx {
    ring: IoUring<squeue::Entry, cqueue::Entry32>,
    rq: *mut libc::c_void,
    rq_len: usize,
    head: *const AtomicU32,
    tail: *const AtomicU32,
    rqes: *mut io_uring_zcrx_rqe,
    rq_tail: u32,
    /// The kernel's token of each area (its index in the high bits).
    area_tokens: Vec<u64>,
    zcrx_id: u32,
    /// Buffer size the queue runs with (what was asked for, or a page).
    pub rx_buf_len: u32,
    /// Where the kernel keeps `struct zcrx_stats` in the refill region
    /// (two u64s), when it takes events (7.2+).
    stats: Option<*const u64>,
    /// Whether the areas are host memory (the kernel can copy into them).
    host_memory: bool,
}

/// What one completion delivered.
#[derive(Debug, PartialEq, Eq)]
pub enum Chunk {
    /// `len` payload bytes at `offset` in area `area` (in registration
    /// order).
    Data { area: usize, offset: u64, len: u32 },
    /// The peer closed the stream.
    End,
    /// The multishot receive stopped (re-armed by the caller) with no data.
    Rearm,
    /// The kernel posted an event (re-armed by the caller).
    Event(Event),
}

impl Zcrx {
    /// Registers the dma-buf `first` as the area of RX queue `queue` of
    /// `ifindex`, with `rx_buf_len`-byte buffers (0: a page), taking events
    /// where the kernel has them (7.2+; before, EINVAL for the descriptor,
    /// and the queue is registered without).
    pub fn register(ifindex: u32, queue: u32, first: Area, rx_buf_len: u32) -> io::Result<Self> {
        match Self::try_register(ifindex, queue, first, rx_buf_len, true) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                Self::try_register(ifindex, queue, first, rx_buf_len, false)
            }
            r => r,
        }
    }

    fn try_register(
        ifindex: u32,
        queue: u32,
        first: Area,
        rx_buf_len: u32,
        events: bool,
    ) -> io::Result<Self> {
        let ring = IoUring::<squeue::Entry, cqueue::Entry32>::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_submit_all()
            // Room for a burst of one-buffer chunks between two waits (each
            // frag is a completion); when it does fill, see `wait`.
            .setup_cqsize(CQ_ENTRIES)
            .build(512)?;
        // The refill ring is mapped whole pages (the kernel rounds it up),
        // and one more page holds the copy counters (the kernel wants them
        // past the ring's entries, 8-byte aligned, inside the region).
        let page = crate::dmabuf::page_size();
        let stats_offset = (RQ_ENTRIES as usize * std::mem::size_of::<io_uring_zcrx_rqe>() + page)
            .next_multiple_of(page);
        let rq_len = stats_offset + page;
        // SAFETY: a fresh anonymous mapping; checked below.
        let rq = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                rq_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_ANONYMOUS | libc::MAP_PRIVATE,
                -1,
                0,
            )
        };
        if rq == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: plain-data uAPI structures: all-zeroes is valid.
        let (area, mut region, mut reg): (
            io_uring_zcrx_area_reg,
            io_uring_region_desc,
            io_uring_zcrx_ifq_reg,
        ) = unsafe { (area_reg(first), std::mem::zeroed(), std::mem::zeroed()) };
        region.user_addr = rq as u64;
        region.size = rq_len as u64;
        region.flags = IORING_MEM_REGION_TYPE_USER;
        reg.if_idx = ifindex;
        reg.if_rxq = queue;
        reg.rq_entries = RQ_ENTRIES;
        // 7.2's rx_buf_len (the crate's bindings predate it).
        reg.__resv2 = rx_buf_len;
        let desc = Box::new(EventDesc {
            user_data: USER_DATA_EVENT,
            type_mask: 1 << Event::AllocFail as u32 | 1 << Event::Copy as u32,
            flags: EVENT_DESC_FLAG_STATS,
            stats_offset: stats_offset as u64,
            resv2: [0; 9],
        });
        if events {
            // 7.2's event_desc (the crate's __resv[0]).
            reg.__resv[0] = &*desc as *const EventDesc as u64;
        }
        // The kernel writes its answers (offsets, id, area token) back into
        // `reg` and `area`, which the crate takes by shared reference: keep
        // them in heap cells only raw pointers name, and read them back
        // volatile, so nothing assumes they stayed as written.
        let area = Box::into_raw(Box::new(area));
        let region = Box::new(region);
        reg.area_ptr = area as u64;
        reg.region_ptr = &*region as *const _ as u64;
        let reg = Box::into_raw(Box::new(reg));
        // SAFETY: `reg` is a live heap allocation of ours.
        let registered = ring.submitter().register_ifq(unsafe { &*reg });
        // SAFETY: both are live heap allocations of ours, taken back once.
        let (reg, area) = unsafe {
            let r = (std::ptr::read_volatile(reg), std::ptr::read_volatile(area));
            drop(Box::from_raw(reg));
            drop(Box::from_raw(area));
            r
        };
        if let Err(e) = registered {
            // SAFETY: our mapping, unused by anyone else (registration failed).
            unsafe { libc::munmap(rq, rq_len) };
            if events && e.raw_os_error() == Some(libc::EINVAL) {
                // (The caller retries without events: keep the errno.)
                return Err(e);
            }
            return Err(io::Error::new(
                e.kind(),
                format!("io_uring zcrx registration: {e}"),
            ));
        }
        let at = |off: u32| {
            // SAFETY: the kernel reported offsets inside the region it accepted.
            unsafe { rq.cast::<u8>().add(off as usize) }
        };
        Ok(Self {
            head: at(reg.offsets.head).cast(),
            tail: at(reg.offsets.tail).cast(),
            rqes: at(reg.offsets.rqes).cast(),
            ring,
            rq,
            rq_len,
            rq_tail: 0,
            area_tokens: vec![area.rq_area_token],
            zcrx_id: reg.zcrx_id,
            rx_buf_len: if reg.__resv2 != 0 {
                reg.__resv2
            } else {
                page as u32
            },
            stats: events.then(|| at(stats_offset as u32).cast::<u64>().cast_const()),
            host_memory: matches!(first, Area::Host { .. }),
        })
    }

    /// Whether the kernel posts events and keeps copy counters for the
    /// queue (7.2+).
    pub fn has_events(&self) -> bool {
        self.stats.is_some()
    }

    /// The kernel's copy-fallback counters so far (7.2+).
    pub fn copy_stats(&self) -> Option<CopyStats> {
        // SAFETY: two u64s inside our live mapping, which the kernel writes;
        // read volatile, as it changes them under us.
        self.stats.map(|p| unsafe {
            CopyStats {
                chunks: std::ptr::read_volatile(p),
                bytes: std::ptr::read_volatile(p.add(1)),
            }
        })
    }

    /// Re-arms event `e`, which fired (the kernel posts each once until then).
    pub fn arm_event(&self, e: Event) -> io::Result<()> {
        let mut event = [0; 12];
        event[0] = e as u32;
        self.ctrl(ZCRX_CTRL_ARM_EVENT, CtrlArg { event })
            .map_err(|err| {
                io::Error::new(err.kind(), format!("io_uring zcrx: arming {e:?}: {err}"))
            })
    }

    /// Hands the refill queue's entries to the queue's pool now, rather than
    /// at its next allocation.
    pub fn flush_refill(&self) -> io::Result<()> {
        self.ctrl(ZCRX_CTRL_FLUSH_RQ, CtrlArg { words: [0; 6] })
            .map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!("io_uring zcrx: flushing the refill queue: {err}"),
                )
            })
    }

    /// Issues `IORING_REGISTER_ZCRX_CTRL` op `op` for this queue.
    fn ctrl(&self, op: u32, arg: CtrlArg) -> io::Result<()> {
        let ctrl = ZcrxCtrl {
            zcrx_id: self.zcrx_id,
            op,
            resv: [0; 2],
            arg,
        };
        // SAFETY: the ring's fd and a `struct zcrx_ctrl` that lives across
        // the call (pointers in it are the caller's, live too).
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.ring.as_raw_fd(),
                IORING_REGISTER_ZCRX_CTRL,
                &ctrl as *const ZcrxCtrl,
                0,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Adds the dma-buf `a` as one more area of the queue (Linux 7.3's
    /// `ZCRX_CTRL_ADD_AREA`; the queue's buffer size applies), returning its
    /// index.
    pub fn add_area(&mut self, a: Area) -> io::Result<usize> {
        // The kernel writes the area's token back into the registration.
        let reg = Box::into_raw(Box::new(area_reg(a)));
        let mut words = [0; 6];
        words[0] = reg as u64;
        let r = self.ctrl(ZCRX_CTRL_ADD_AREA, CtrlArg { words });
        // SAFETY: our live heap allocation, taken back once.
        let reg = unsafe {
            let r = std::ptr::read_volatile(reg);
            drop(Box::from_raw(reg));
            r
        };
        if let Err(err) = r {
            return Err(io::Error::new(
                err.kind(),
                format!(
                    "io_uring zcrx: adding area {}: {err}",
                    self.area_tokens.len()
                ),
            ));
        }
        self.area_tokens.push(reg.rq_area_token);
        Ok(self.area_tokens.len() - 1)
    }

    /// Arms a multishot zero-copy receive on `fd`.
    pub fn arm(&mut self, fd: RawFd) -> io::Result<()> {
        let e = opcode::RecvZc::new(types::Fd(fd), 0)
            .ifq(self.zcrx_id)
            .build()
            .user_data(USER_DATA_RECV);
        // SAFETY: the entry names only `fd`, which outlives the ring's use of it
        // (the caller keeps the connection until the stream ends).
        unsafe { self.ring.submission().push(&e) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        Ok(())
    }

    /// Waits for completions and hands each to `f`; an error completion (other
    /// than a full completion queue) ends it.
    pub fn wait(&mut self, mut f: impl FnMut(Chunk)) -> io::Result<()> {
        self.ring.submit_and_wait(1)?;
        let events = self.has_events();
        for cqe in self.ring.completion() {
            if cqe.user_data() == USER_DATA_EVENT && events {
                let e = Event::from_type(cqe.result()).ok_or_else(|| {
                    io::Error::other(format!("io_uring zcrx: unknown event {}", cqe.result()))
                })?;
                f(Chunk::Event(e));
                continue;
            }
            if cqe.user_data() != USER_DATA_RECV {
                return Err(io::Error::other("unexpected io_uring completion"));
            }
            let res = cqe.result();
            if res == -libc::ENOSPC {
                // The completion queue filled up: the receive stopped before
                // taking more from the socket (nothing is lost); the caller
                // re-arms once it has read these completions.
                f(Chunk::Rearm);
                continue;
            }
            if res < 0 {
                let err = io::Error::from_raw_os_error(-res);
                // ENOMEM: the kernel had to copy payload (it arrived in host
                // memory) and found no area buffer to copy into.
                let why = match (res == -libc::ENOMEM, self.host_memory) {
                    (true, false) => ": payload arrived in host memory (off this queue, or not split) and a dma-buf area cannot take the kernel's copy; steer the flow to the queue, or use --zcrx-host-memory",
                    (true, true) => ": payload arrived in host memory (off this queue, or not split) and no area buffer was free for the kernel's copy",
                    _ => "",
                };
                return Err(io::Error::new(err.kind(), format!("recv_zc: {err}{why}")));
            }
            let more = cqueue::more(cqe.flags());
            if res == 0 {
                f(if more { Chunk::Rearm } else { Chunk::End });
                continue;
            }
            let place = cqe.big_cqe()[0];
            let token = place & !OFFSET_MASK;
            let Some(area) = self.area_tokens.iter().position(|&t| t == token) else {
                return Err(io::Error::other(format!(
                    "recv_zc: a completion in area token {token:#x}, not one of ours"
                )));
            };
            f(Chunk::Data {
                area,
                offset: place & OFFSET_MASK,
                len: res as u32,
            });
            if !more {
                f(Chunk::Rearm);
            }
        }
        Ok(())
    }

    /// Gives `len` bytes at `offset` of area `area` back to the NIC.
    pub fn refill(&mut self, area: usize, offset: u64, len: u32) {
        let i = (self.rq_tail & (RQ_ENTRIES - 1)) as usize;
        // SAFETY: `rqes` has RQ_ENTRIES entries (as registered); the kernel only
        // reads entries below the tail we publish next.
        unsafe {
            self.rqes.add(i).write(io_uring_zcrx_rqe {
                off: offset | self.area_tokens[area],
                len,
                __pad: 0,
            })
        };
        self.rq_tail = self.rq_tail.wrapping_add(1);
        // SAFETY: `tail` points into the live shared region.
        unsafe { &*self.tail }.store(self.rq_tail, Ordering::Release);
    }

    /// Entries the kernel has not taken back yet.
    pub fn refill_pending(&self) -> u32 {
        // SAFETY: `head` points into the live shared region.
        self.rq_tail
            .wrapping_sub(unsafe { &*self.head }.load(Ordering::Acquire))
    }
}

/// What a zcrx queue's events said (Linux 7.2+): how often each fired, and
/// how often the refill queue was flushed in answer.
#[derive(Default)]
pub struct EventLog {
    /// Events of the last wait, to answer.
    pub fired: Vec<Event>,
    copy: u64,
    alloc_fail: u64,
    flushes: u64,
}

impl EventLog {
    /// Answers the events of the last wait: says once what a copy means,
    /// flushes the refill queue after an allocation failure (so what was
    /// given back reaches the pool at once), and re-arms each.
    pub fn handle(&mut self, zc: &Zcrx, queue: u32) -> io::Result<()> {
        for e in std::mem::take(&mut self.fired) {
            match e {
                Event::Copy => {
                    if self.copy == 0 {
                        eprintln!(
                            "zcrx: the kernel copied payload into the area (copy fallback): it arrived in host memory, on another queue than {queue} or not split; the summary counts it"
                        );
                    }
                    self.copy += 1;
                }
                Event::AllocFail => {
                    if self.alloc_fail == 0 {
                        eprintln!(
                            "zcrx: RX queue {queue} found no free buffer in the area (every buffer was out, in sockets or with us): frames are dropped at the NIC until buffers come back; flushing the refill queue"
                        );
                    }
                    self.alloc_fail += 1;
                    zc.flush_refill()?;
                    self.flushes += 1;
                }
            }
            zc.arm_event(e)?;
        }
        Ok(())
    }

    /// The summary's fields (JSON members or `key=value` words); the
    /// kernel's counters are null (`n/a`) without events.
    pub fn fields(&self, stats: Option<CopyStats>, on: bool, json: bool) -> String {
        let n = |v: Option<u64>| {
            v.map_or_else(
                || if json { "null".into() } else { "n/a".into() },
                |v| v.to_string(),
            )
        };
        let f = [
            ("copy_fallback_chunks", n(stats.map(|s| s.chunks))),
            ("copy_fallback_bytes", n(stats.map(|s| s.bytes))),
            ("copy_events", n(on.then_some(self.copy))),
            ("alloc_fail_events", n(on.then_some(self.alloc_fail))),
            ("refill_flushes", n(on.then_some(self.flushes))),
        ];
        f.iter()
            .map(|(k, v)| {
                if json {
                    format!("\"{k}\":{v}")
                } else {
                    format!("{k}={v}")
                }
            })
            .collect::<Vec<_>>()
            .join(if json { "," } else { " " })
    }
}

impl Drop for Zcrx {
    fn drop(&mut self) {
        // (The kernel pinned the region's pages at registration and keeps
        // them until the ring, dropped after this, releases the interface queue.)
        // SAFETY: our mapping, not referenced by us after this.
        unsafe { libc::munmap(self.rq, self.rq_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_fields_name_counters_and_null_without_events() {
        let log = EventLog {
            fired: Vec::new(),
            copy: 2,
            alloc_fail: 1,
            flushes: 1,
        };
        let stats = Some(CopyStats {
            chunks: 5,
            bytes: 7000,
        });
        assert_eq!(
            log.fields(stats, true, false),
            "copy_fallback_chunks=5 copy_fallback_bytes=7000 copy_events=2 alloc_fail_events=1 refill_flushes=1"
        );
        assert_eq!(
            log.fields(stats, true, true),
            "\"copy_fallback_chunks\":5,\"copy_fallback_bytes\":7000,\"copy_events\":2,\"alloc_fail_events\":1,\"refill_flushes\":1"
        );
        let none = EventLog::default().fields(None, false, true);
        assert_eq!(none.matches(":null").count(), 5, "{none}");
        assert!(EventLog::default()
            .fields(None, false, false)
            .split(' ')
            .all(|w| w.ends_with("=n/a")));
    }

    #[test]
    fn events_are_the_uapi_types() {
        assert_eq!(Event::from_type(0), Some(Event::AllocFail));
        assert_eq!(Event::from_type(1), Some(Event::Copy));
        // __ZCRX_EVENT_TYPE_LAST and beyond are not events.
        assert_eq!(Event::from_type(2), None);
        assert_eq!(Event::from_type(-1), None);
    }
}
