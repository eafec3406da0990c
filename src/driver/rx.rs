// SPDX-License-Identifier: GPL-2.0

//! The receive path: a queue's NAPI poll turns frames from its ring into skbs
//! built on page-pool buffers.
//!
//! With TCP data split on and a TCP frame the parser accepts, the headers are
//! "DMA"ed into a host-memory fragment (the skb head) and the payload into
//! page-sized buffers of the payload pool (host pages, or dma-buf net_iovs when
//! devmem is bound), attached as frags. Everything else goes whole into host
//! memory (the linear fallback). Each payload byte is copied once: the NIC's DMA.

use super::stats::Counter;
use crate::abstractions::{
    dma::{device_write_with, DmaDev},
    irq::{IrqHandler, IrqLine},
    module_ref::ModuleRef,
    napi::{Napi, NapiCtx, NapiOff, NapiPoll},
    netdev::NetDev,
    page_pool::{PagePool, PoolConfig},
    queue_mgmt::QueueConfig,
    ring::SkbRing,
    skb::{build_size, rx_headroom, FrameReader, SkBuff},
};
use crate::logic::parse::parse_prefix;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::{prelude::*, sync::Mutex};

/// Entries of each RX ring (frames in flight from the peer) at load, and the
/// sizes `ethtool -G rx|tx` accepts.
pub(crate) const RING_SIZE: u32 = 1024;
pub(crate) const RING_MIN: u32 = 64;
pub(crate) const RING_MAX: u32 = 4096;
/// Largest header-split threshold (`ethtool -G hds-thresh`): a page of payload.
pub(crate) const HDS_THRESH_MAX: u32 = 4096;

/// Per-RX-queue counters (`ethtool -S`, qstats).
#[derive(Default)]
pub(crate) struct RxStats {
    /// Frames delivered to the stack.
    pub(crate) packets: Counter,
    /// Bytes delivered.
    pub(crate) bytes: Counter,
    /// Frames received with header split (headers host, payload pool).
    pub(crate) hds_packets: Counter,
    /// Of those, frames whose payload went to dma-buf memory (devmem).
    pub(crate) devmem_packets: Counter,
    /// Frames received whole into host memory (no split possible or wanted).
    pub(crate) linear: Counter,
    /// Of those, TCP frames not split because their payload (per segment) was
    /// at or below the header-split threshold.
    pub(crate) below_hds_thresh: Counter,
    /// Frames dropped: no buffer from a pool.
    pub(crate) alloc_fail: Counter,
    /// Frames dropped: ring full, queue down, or DMA failure.
    pub(crate) drops: Counter,
}

/// One RX queue: the ring the peer fills and the NAPI that empties it.
#[pin_data]
pub(crate) struct RxQueue {
    /// Declared first: its drop stops and deletes the NAPI before the fields
    /// the poll uses go.
    #[pin]
    pub(crate) napi: Napi<RxState>,
    /// The queue's interrupt: raised by the sender when a frame lands on an
    /// idle ring, masked until the poll that follows completes. Raised only
    /// while the queue is active (a running device's sender, the queue's own
    /// poll), so never while the queue is being dropped.
    pub(crate) irq: IrqLine,
    pub(crate) ring: SkbRing,
    pub(crate) stats: RxStats,
    pub(crate) index: u32,
    /// A peer TX queue stopped on this full ring since the last poll that
    /// took frames: that poll wakes the peer's stopped queues (set after the
    /// stop, so a poll that misses it leaves the sender's own recheck to wake).
    pub(crate) sender_stopped: AtomicBool,
    /// Header-split threshold: TCP frames with at most this much payload per
    /// segment are received whole (`ethtool -G hds-thresh`).
    hds_thresh: AtomicU32,
    /// Held while the kernel has a memory provider on this queue.
    #[pin]
    binding_ref: Mutex<Option<ModuleRef>>,
}

crate::impl_has_napi!(RxQueue, napi);
crate::impl_has_irq_line!(RxQueue, irq);

impl IrqHandler for RxQueue {
    fn handle_irq(&self) {
        // NAPI scheduled: its completion unmasks. Not scheduled (the queue is
        // stopped, or the core holds NAPI disabled for a moment): unmask now, or
        // frames arriving after the queue restarts would never raise the line.
        if !self.napi.schedule() {
            self.irq.unmask();
        }
    }
}

impl RxQueue {
    pub(crate) fn new(index: u32) -> Result<impl PinInit<Self, Error>> {
        let ring = SkbRing::new(RING_SIZE)?;
        Ok(try_pin_init!(Self {
            napi <- Napi::new(RxState::new()),
            irq: IrqLine::new(),
            ring,
            stats: RxStats::default(),
            index,
            sender_stopped: AtomicBool::new(false),
            hds_thresh: AtomicU32::new(0),
            binding_ref <- kernel::new_mutex!(None),
        }? Error))
    }

    /// Polls the queue once, on the CPU of its interrupt, as a NIC raises a
    /// queue's vector when it is (re)enabled: the poll takes what is on the
    /// ring and unmasks the line (a raise while the queue was stopped left it
    /// masked).
    pub(crate) fn kick(&self) {
        self.irq.unmask();
        self.irq.trigger();
    }

    /// The header-split threshold.
    pub(crate) fn hds_thresh(&self) -> u32 {
        self.hds_thresh.load(Ordering::Relaxed)
    }

    /// Sets the header-split threshold (from the next frame on).
    pub(crate) fn set_hds_thresh(&self, t: u32) {
        self.hds_thresh.store(t, Ordering::Relaxed)
    }

    /// Keeps the module loaded exactly while a memory provider sits on this
    /// queue: a devmem binding's dma-buf attachment points at our parent device
    /// and outlives the net device. Called wherever the kernel may have changed
    /// the binding (it always restarts the queue after binding and unbinding).
    pub(crate) fn refresh_binding(&self, dev: &NetDev) {
        let bound = dev.rxq_has_provider(self.index);
        let mut r = self.binding_ref.lock();
        match (bound, r.is_some()) {
            (true, false) => *r = Some(ModuleRef::new()),
            (false, true) => *r = None,
            _ => {}
        }
    }
}

/// Most header bytes the split path puts in the skb head.
pub(crate) const MAX_HEADER: usize = 512;
/// Head size of a linear-fallback frame too big for one buffer.
const LINEAR_HEAD: usize = 256;
/// Pool sizes (recycling ring entries).
const HEADER_POOL_SIZE: u32 = 1024;
const PAYLOAD_POOL_SIZE: u32 = 2048;
/// Most frags an skb gets from us.
const MAX_FRAGS: usize = 16;

/// A queue's buffers: header/linear pool (host memory) and payload pool.
pub(crate) struct QueueMem {
    header: PagePool,
    payload: PagePool,
    split: bool,
    /// The kernel attached a memory provider (devmem) to the payload pool.
    devmem: bool,
}

impl QueueMem {
    /// Creates the pools of RX queue `q` of `dev` for `cfg`: headers in pages,
    /// payload in buffers of `cfg.rx_page_size`; with `split`, the payload pool
    /// accepts a memory provider (what lets a devmem binding or an io_uring
    /// zcrx area attach). Under the ops locks.
    pub(crate) fn new(dev: &NetDev, q: &RxQueue, split: bool, cfg: &QueueConfig) -> Result<Self> {
        let order = cfg.order().ok_or(EINVAL)?;
        let header = PagePool::new(&PoolConfig {
            dma_dev: dev.dma_dev(),
            napi: &q.napi,
            netdev: dev,
            queue: q.index,
            size: HEADER_POOL_SIZE,
            order: 0,
            allow_unreadable: false,
        })?;
        let payload = PagePool::new(&PoolConfig {
            dma_dev: dev.dma_dev(),
            napi: &q.napi,
            netdev: dev,
            queue: q.index,
            size: PAYLOAD_POOL_SIZE,
            order,
            allow_unreadable: split,
        })?;
        let devmem = payload.has_provider();
        Ok(Self {
            header,
            payload,
            split,
            devmem,
        })
    }

    /// Whether the payload pool got a memory provider (devmem) from the kernel.
    pub(crate) fn is_devmem(&self) -> bool {
        self.devmem
    }

    /// The header (host) pool and the payload pool.
    pub(crate) fn pools(&self) -> (&PagePool, &PagePool) {
        (&self.header, &self.payload)
    }

    /// Payload buffers still out (in skbs, sockets, or userspace as tokens).
    pub(crate) fn outstanding(&self) -> isize {
        self.payload.outstanding()
    }

    /// Logs the payload pool's accounting (debug).
    pub(crate) fn debug(&self) {
        self.payload.debug()
    }

    /// Whether this memory splits TCP headers from payload.
    pub(crate) fn splits(&self) -> bool {
        self.split
    }
}

/// What a queue's poll owns.
pub(crate) struct RxState {
    mem: Option<QueueMem>,
}

impl RxState {
    pub(crate) fn new() -> Self {
        Self { mem: None }
    }

    /// Swaps in new memory, handing back the old (see [`RxState::take`]).
    pub(crate) fn install(&mut self, mem: QueueMem, off: &NapiOff) -> Option<QueueMem> {
        let old = self.take(off);
        self.mem = Some(mem);
        old
    }

    /// Takes the memory out; its pools leave the NAPI, which may run again on
    /// other memory before these are freed (see `Side::retire`).
    pub(crate) fn take(&mut self, off: &NapiOff) -> Option<QueueMem> {
        let mem = self.mem.take()?;
        mem.header.detach_napi(off);
        mem.payload.detach_napi(off);
        Some(mem)
    }

    /// The memory in use, if any.
    pub(crate) fn mem(&self) -> Option<&QueueMem> {
        self.mem.as_ref()
    }
}

/// A frame from the ring and the device its sender's buffers are mapped for:
/// what this NIC's DMA engine reads it through (devmem TX frames carry
/// device-memory frags the CPU may not touch).
struct Wire<'a> {
    frame: &'a SkBuff,
    tx_dma: DmaDev<'a>,
}

impl<'a> Wire<'a> {
    /// Reads `out.len()` frame bytes from `offset`.
    fn read(&self, offset: usize, out: &mut [u8]) -> Result {
        self.frame.read_as_device(self.tx_dma, offset, out)
    }

    /// Reads the frame in order from `offset` on.
    fn reader(&self, offset: usize) -> Result<FrameReader<'a>> {
        FrameReader::new(self.frame, self.tx_dma, offset)
    }
}

/// Why a frame was not delivered.
enum RxError {
    /// No buffer from a pool.
    NoBuffer,
    /// The "DMA" or the skb build failed.
    Fault,
}

impl From<Error> for RxError {
    fn from(_: Error) -> Self {
        RxError::Fault
    }
}

impl NapiPoll for RxQueue {
    type State = RxState;

    fn poll(&self, ctx: &NapiCtx<'_>, st: &mut RxState, budget: i32) -> i32 {
        let mut done = 0;
        // Frames on this ring come from the peer; without one (teardown) the
        // frames are read through our own device (only host memory arrives then).
        let sender = ctx.dev().peer().unwrap_or(ctx.dev());
        while done < budget {
            let Some(frame) = self.ring.consume() else {
                break;
            };
            done += 1;
            let len = frame.len() as u64;
            let wire = Wire {
                frame: &frame,
                tx_dma: sender.dma_dev(),
            };
            match self.receive(ctx, st, &wire) {
                Ok(skb) => {
                    self.stats.packets.add(u64::from(frame.segments()));
                    self.stats.bytes.add(len);
                    ctx.gro_receive(skb);
                    frame.consume();
                }
                Err(RxError::NoBuffer) => self.stats.alloc_fail.add(1),
                Err(RxError::Fault) => self.stats.drops.add_shared(1),
            }
        }
        if done > 0 && self.sender_stopped.swap(false, Ordering::SeqCst) {
            // Room in the ring again: restart a sender stopped on back-pressure.
            if let Some(peer) = ctx.dev().peer() {
                for t in 0..peer.real_num_tx_queues() {
                    if peer.txq_stopped(t) && peer.is_running() {
                        peer.txq_wake(t);
                    }
                }
            }
        }
        done
    }

    fn has_work(&self) -> bool {
        !self.ring.is_empty()
    }

    fn completed(&self) {
        // A NIC re-enables the queue's interrupt here; frames that landed since
        // the poll's last look raise it at once.
        self.irq.unmask();
        if self.has_work() {
            self.irq.trigger();
        }
    }

    fn irq(&self) -> Option<u32> {
        self.irq.number()
    }
}

impl RxQueue {
    /// Receives one frame into pool buffers.
    fn receive(
        &self,
        ctx: &NapiCtx<'_>,
        st: &mut RxState,
        wire: &Wire<'_>,
    ) -> Result<SkBuff, RxError> {
        let dev = ctx.dev();
        let frame = wire.frame;
        let Some(mem) = st.mem.as_ref() else {
            return Err(RxError::Fault);
        };
        let len = frame.len();
        let mut peek = [0u8; MAX_HEADER];
        let n = len.min(MAX_HEADER);
        wire.read(0, &mut peek[..n])?;
        let layout = if mem.split {
            parse_prefix(&peek[..n], len).tcp.ok()
        } else {
            None
        };
        // A super-frame's payload is compared per wire segment, as a NIC sees it.
        let thresh = self.hds_thresh() as usize;
        let segment_payload = |payload: usize| payload.div_ceil(frame.segments().max(1) as usize);
        let mut skb = match layout {
            Some(l) if l.payload_len > 0 && segment_payload(l.payload_len) <= thresh => {
                let skb = self.receive_linear(dev, mem, wire, &peek[..n], len)?;
                self.stats.linear.add(1);
                self.stats.below_hds_thresh.add(1);
                skb
            }
            Some(l) if l.payload_len > 0 && l.payload_len <= MAX_FRAGS * mem.payload.buf_size() => {
                let skb =
                    self.receive_split(dev, mem, wire, &peek[..n], l.header_len, l.payload_len)?;
                self.stats.hds_packets.add(1);
                if mem.devmem {
                    self.stats.devmem_packets.add(1);
                }
                skb
            }
            _ => {
                let skb = self.receive_linear(dev, mem, wire, &peek[..n], len)?;
                self.stats.linear.add(1);
                skb
            }
        };
        if frame.csum_partial() {
            // The sender left the checksum to the "hardware": write it (what
            // packet sockets on this side see), and as the virtual wire cannot
            // corrupt it, report it verified.
            skb.fill_tx_csum(frame);
            skb.set_csum_unnecessary();
        }
        skb.copy_gso_from(frame);
        let (hash, l4) = frame.hash();
        skb.rx_finish(dev, self.index as u16, hash, l4);
        Ok(skb)
    }

    /// Headers into a host fragment (the skb head), payload into payload buffers.
    /// `peek` is the frame's start, already read.
    fn receive_split(
        &self,
        dev: &NetDev,
        mem: &QueueMem,
        wire: &Wire<'_>,
        peek: &[u8],
        header_len: usize,
        payload_len: usize,
    ) -> Result<SkBuff, RxError> {
        let mut skb = self.head_from(dev, &mem.header, wire, peek, header_len)?;
        self.frags_from(dev, &mem.payload, wire, &mut skb, header_len, payload_len)?;
        Ok(skb)
    }

    /// The whole frame into host memory: one buffer if it fits, else a head and
    /// host pages. `peek` is the frame's start, already read.
    fn receive_linear(
        &self,
        dev: &NetDev,
        mem: &QueueMem,
        wire: &Wire<'_>,
        peek: &[u8],
        len: usize,
    ) -> Result<SkBuff, RxError> {
        if build_size(len as u32) as usize <= kernel::page::PAGE_SIZE {
            return self.head_from(dev, &mem.header, wire, peek, len);
        }
        let head = LINEAR_HEAD.min(len);
        let mut skb = self.head_from(dev, &mem.header, wire, peek, head)?;
        self.frags_from(dev, &mem.header, wire, &mut skb, head, len - head)?;
        Ok(skb)
    }

    /// An skb whose head holds the frame's first `len` bytes, in a host fragment
    /// of `pool`: from `peek` (the frame's start, already read) when it has them,
    /// else from the wire.
    fn head_from(
        &self,
        dev: &NetDev,
        pool: &PagePool,
        wire: &Wire<'_>,
        peek: &[u8],
        len: usize,
    ) -> Result<SkBuff, RxError> {
        let frag = pool
            .alloc_frag(build_size(len as u32))
            .ok_or(RxError::NoBuffer)?;
        let headroom = rx_headroom();
        device_write_with(
            dev.dma_dev(),
            frag.dma_addr() + u64::from(headroom),
            len,
            |dst| match peek.get(..len) {
                Some(src) => {
                    dst.copy_from_slice(src);
                    Ok(())
                }
                None => wire.read(0, dst),
            },
        )?;
        Ok(SkBuff::build(frag, headroom, len as u32)?)
    }

    /// Appends frame bytes `from..from + len` to `skb` in buffers of `pool`
    /// (one frag per buffer, each filled a page at a time: the bus addresses
    /// of a buffer are contiguous, its pages need not be mapped together),
    /// reading the frame once, in order.
    fn frags_from(
        &self,
        dev: &NetDev,
        pool: &PagePool,
        wire: &Wire<'_>,
        skb: &mut SkBuff,
        from: usize,
        len: usize,
    ) -> Result<(), RxError> {
        let mut off = from;
        let end = from + len;
        let dma = dev.dma_dev();
        let page = kernel::page::PAGE_SIZE;
        let mut src = wire.reader(from)?;
        while off < end {
            let buf = pool.alloc_netmem().ok_or(RxError::NoBuffer)?;
            let n = (end - off).min(buf.size());
            let base = buf.dma_addr();
            let mut at = 0;
            while at < n {
                let m = (n - at).min(page);
                device_write_with(dma, base + at as u64, m, |dst| src.read(dst))?;
                at += m;
            }
            skb.add_netmem_frag(buf, 0, n as u32)?;
            off += n;
        }
        Ok(())
    }
}
