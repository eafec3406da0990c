//! io_uring zero-copy receive (zcrx, Linux 6.15+; large buffers 7.2+) into a
//! dma-buf area: the dma-buf becomes the memory provider of one RX queue,
//! `IORING_OP_RECV_ZC` completions name the payload's place in it, and each
//! chunk goes back to the NIC through the refill queue once it was read.
//!
//! The `io-uring` crate provides the ring, the opcode and the registration
//! call; the zcrx registration structures are its bindings of the uAPI. By
//! hand only: the refill ring's layout (the kernel reports offsets into a
//! region we map), 7.2's `rx_buf_len`, which the crate's bindings (6.15's
//! uAPI) still call `__resv2`, and 7.3's `ZCRX_CTRL_ADD_AREA`, which adds
//! more areas to a registered queue (the crate has neither the register
//! opcode nor `struct zcrx_ctrl`).

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
/// Offset bits of an area offset; the bits above name the area.
const OFFSET_MASK: u64 = (1 << IORING_ZCRX_AREA_SHIFT) - 1;
/// `IORING_REGISTER_ZCRX_CTRL` (7.2 has it) and its op `ZCRX_CTRL_ADD_AREA`
/// (7.3; include/uapi/linux/io_uring/zcrx.h).
const IORING_REGISTER_ZCRX_CTRL: libc::c_uint = 36;
const ZCRX_CTRL_ADD_AREA: u32 = 3;

/// `struct zcrx_ctrl` with its `zc_area` member (`struct
/// zcrx_ctrl_add_area`): 72 bytes (a 24-byte head, a 48-byte union),
/// reserved words zero.
#[repr(C)]
struct ZcrxCtrlAddArea {
    zcrx_id: u32,
    op: u32,
    resv: [u64; 2],
    area_ptr: u64,
    area_resv: [u64; 5],
}
const _: () = assert!(std::mem::size_of::<ZcrxCtrlAddArea>() == 72);

/// One area of a queue: a dma-buf and how long it is.
#[derive(Clone, Copy, Debug)]
pub struct Area {
    /// The dma-buf.
    pub dmabuf_fd: RawFd,
    /// Its length in bytes.
    pub len: u64,
}

fn area_reg(a: Area) -> io_uring_zcrx_area_reg {
    // SAFETY: a plain-data uAPI structure: all-zeroes is valid.
    let mut reg: io_uring_zcrx_area_reg = unsafe { std::mem::zeroed() };
    reg.len = a.len;
    reg.flags = AREA_DMABUF;
    reg.dmabuf_fd = a.dmabuf_fd as u32;
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
}

impl Zcrx {
    /// Registers the dma-buf `first` as the area of RX queue `queue` of
    /// `ifindex`, with `rx_buf_len`-byte buffers (0: a page).
    pub fn register(ifindex: u32, queue: u32, first: Area, rx_buf_len: u32) -> io::Result<Self> {
        let ring = IoUring::<squeue::Entry, cqueue::Entry32>::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_submit_all()
            // Room for a burst of one-buffer chunks between two waits (each
            // frag is a completion); when it does fill, see `wait`.
            .setup_cqsize(CQ_ENTRIES)
            .build(512)?;
        // The refill ring is mapped whole pages (the kernel rounds it up).
        let page = crate::dmabuf::page_size();
        let rq_len = (RQ_ENTRIES as usize * std::mem::size_of::<io_uring_zcrx_rqe>() + page)
            .next_multiple_of(page);
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
        })
    }

    /// Adds the dma-buf `a` as one more area of the queue (Linux 7.3's
    /// `ZCRX_CTRL_ADD_AREA`; the queue's buffer size applies), returning its
    /// index.
    pub fn add_area(&mut self, a: Area) -> io::Result<usize> {
        // The kernel writes the area's token back into the registration.
        let reg = Box::into_raw(Box::new(area_reg(a)));
        let ctrl = ZcrxCtrlAddArea {
            zcrx_id: self.zcrx_id,
            op: ZCRX_CTRL_ADD_AREA,
            resv: [0; 2],
            area_ptr: reg as u64,
            area_resv: [0; 5],
        };
        // SAFETY: the ring's fd, a `struct zcrx_ctrl` that lives across the
        // call, and `reg`, a live heap allocation it points to.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.ring.as_raw_fd(),
                IORING_REGISTER_ZCRX_CTRL,
                &ctrl as *const ZcrxCtrlAddArea,
                0,
            )
        };
        let err = io::Error::last_os_error();
        // SAFETY: our live heap allocation, taken back once.
        let reg = unsafe {
            let r = std::ptr::read_volatile(reg);
            drop(Box::from_raw(reg));
            r
        };
        if r < 0 {
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
        for cqe in self.ring.completion() {
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
                return Err(io::Error::new(
                    io::Error::from_raw_os_error(-res).kind(),
                    format!("recv_zc: {}", io::Error::from_raw_os_error(-res)),
                ));
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

impl Drop for Zcrx {
    fn drop(&mut self) {
        // (The kernel pinned the region's pages at registration and keeps
        // them until the ring, dropped after this, releases the interface queue.)
        // SAFETY: our mapping, not referenced by us after this.
        unsafe { libc::munmap(self.rq, self.rq_len) };
    }
}
