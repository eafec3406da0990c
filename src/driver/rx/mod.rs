// SPDX-License-Identifier: GPL-2.0

//! The receive path: a queue's NAPI poll turns frames from its ring into skbs
//! built on page-pool buffers.
//!
//! With TCP data split on and a TCP frame the parser accepts, the headers are
//! "DMA"ed into a host-memory fragment (the skb head) and the payload into
//! page-sized buffers of the payload pool (host pages, or dma-buf net_iovs when
//! devmem is bound), attached as frags. Everything else goes whole into host
//! memory (the linear fallback). Each payload byte is copied once: the NIC's DMA.

use super::{
    nic::{Held, Nic, QueueMem, RxQueue, RxState, Slot},
    tx_completion,
};
use crate::abstractions::{
    delay::monotonic_ns,
    dma::{DeviceBytes, DmaSource},
    napi::{NapiCtx, NapiPoll},
    netdev::NetDev,
    page_pool::{PackedRun, PagePool},
    skb::{build_size, rx_headroom, FrameReader, SkBuff},
    xdp::{flush_redirects, XdpProgRef},
};
use crate::logic::gro::{
    csum_add, csum_fold, parse_segment, tcp_complete_sum, tcp_pseudo_sum, Run, Segment,
    TCP_CHECK_OFF,
};
use crate::logic::parse::{ip_protocol, parse_prefix, ETH_HLEN};
use crate::logic::personality::{FrameShape, Place, Placement};
use crate::logic::wire_faults::Decision;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

mod gro;
mod wire;
mod xdp;

/// Largest payload a segment of an aggregate (the first included) packs
/// into a shared host page instead of a buffer of its own, and the stride
/// such payloads take.
const GRO_PACK_MAX: usize = 1024;
const GRO_PACK_STRIDE: usize = 64;

/// Whether an aggregate's segment with `len` bytes of payload packs it into a
/// shared host page (not into device memory, not when it needs a buffer).
fn packs(devmem: bool, len: usize) -> bool {
    !devmem && (1..=GRO_PACK_MAX).contains(&len)
}

/// What the coalescer found out about a frame before it is built.
#[derive(Clone, Copy)]
struct Seen {
    /// The device's receive checksum engine is on (`rx-checksumming`).
    csum_engine: bool,
    /// Its complete TCP checksum holds (the receive engine need not sum it).
    verified: bool,
    /// It may start an aggregate: a small payload in host memory is packed,
    /// as merged payload is (`rx-gro-hw`: the aggregate is then charged for
    /// what it holds, not a whole buffer for its first segment).
    starts_run: bool,
}

/// What a device reporting `CHECKSUM_COMPLETE` found for a frame.
#[derive(Clone, Copy)]
struct CompleteSum {
    /// The folded sum of the frame's bytes after the Ethernet header, as
    /// big-endian words.
    sum: u16,
    /// The TCP checksum the device writes (its frame offset and value),
    /// when the sender left it to the device.
    tcp_check: Option<(usize, u16)>,
}

/// Most header bytes the split path puts in the skb head.
pub(crate) const MAX_HEADER: usize = 512;
/// Head size of a linear-fallback frame too big for one buffer.
const LINEAR_HEAD: usize = 256;
/// Most frags an skb gets from us.
const MAX_FRAGS: usize = 16;

/// Ethernet's shortest frame (without the FCS): a sending NIC pads a
/// shorter one with zeros, so the receiving NIC takes in the padding too.
const ETH_ZLEN: usize = 60;

/// A frame from the ring and the device that sent it, whose TX bindings map
/// its device-memory frags: what this NIC's DMA engine reads it through
/// (devmem TX frames carry frags the CPU may not touch); and what the wire
/// did to it (`wire.rs`): padded to [`ETH_ZLEN`] as any Ethernet frame is,
/// then cut to `len` bytes, with bits of a byte flipped.
pub(super) struct Wire<'a> {
    pub(super) frame: &'a SkBuff,
    sender: &'a NetDev,
    /// The bytes that arrived (the padded frame's length unless truncated).
    pub(super) len: usize,
    /// Of those, the ones the frame holds (the rest is padding).
    data: usize,
    /// The padded frame's length.
    pub(super) padded: usize,
    /// A byte's offset and the bits flipped in it.
    flip: Option<(usize, u8)>,
}

impl<'a> Wire<'a> {
    /// `frame` as the wire delivered it: padded, truncated to `len` bytes if
    /// given, with the byte at `flip.0` XORed with `flip.1` if given.
    pub(super) fn new(
        frame: &'a SkBuff,
        sender: &'a NetDev,
        len: Option<usize>,
        flip: Option<(usize, u8)>,
    ) -> Self {
        let padded = frame.len().max(ETH_ZLEN);
        let len = len.map_or(padded, |n| n.min(padded));
        Self {
            frame,
            sender,
            len,
            data: len.min(frame.len()),
            padded,
            flip: flip.filter(|&(at, _)| at < len),
        }
    }

    /// Whether the sender left the TCP or UDP checksum to the device, which
    /// writes it on receipt. Not when the wire altered the frame after the
    /// sender's device summed it: then the sum on the wire is checked (and
    /// fails, as the receiver's check of a sum over changed bytes does).
    pub(super) fn csum_partial(&self) -> bool {
        self.frame.csum_partial() && self.flip.is_none() && self.len == self.padded
    }

    /// Reads `out.len()` frame bytes from `offset`.
    fn read(&self, offset: usize, out: &mut [u8]) -> Result {
        if !matches!(offset.checked_add(out.len()), Some(end) if end <= self.len) {
            return Err(EINVAL);
        }
        let own = self.data.saturating_sub(offset).min(out.len());
        let (head, pad) = out.split_at_mut(own);
        if own > 0 {
            self.frame.read_as_device(Some(self.sender), offset, head)?;
        }
        pad.fill(0);
        if let Some((at, mask)) = self.flip {
            if let Some(b) = at.checked_sub(offset).and_then(|i| out.get_mut(i)) {
                *b ^= mask;
            }
        }
        Ok(())
    }

    /// The ones'-complement sum (unfolded) of bytes `from..to`, taken as if
    /// `from` were at an even offset; `None` if they cannot be read.
    fn sum(&self, from: usize, to: usize) -> Option<u64> {
        let mut src = self.reader(from).ok()?;
        let mut sum = 0;
        let mut left = to.checked_sub(from)?;
        // Even-sized chunks (all but the last), as csum_add wants.
        let mut chunk = [0u8; 256];
        while left > 0 {
            let m = left.min(chunk.len());
            src.read(&mut chunk[..m]).ok()?;
            sum = csum_add(sum, &chunk[..m]);
            left -= m;
        }
        Some(sum)
    }

    /// Reads the frame in order from `offset` on.
    pub(super) fn reader(&self, offset: usize) -> Result<WireReader<'a>> {
        if offset > self.len {
            return Err(EINVAL);
        }
        Ok(WireReader {
            inner: FrameReader::new(self.frame, Some(self.sender), offset.min(self.data))?,
            pos: offset,
            end: self.len,
            data: self.data,
            flip: self.flip,
        })
    }
}

/// A frame read in order as the wire delivered it (see [`Wire`]).
pub(super) struct WireReader<'a> {
    inner: FrameReader<'a>,
    /// Frame offset of the next byte.
    pos: usize,
    /// Where the delivered bytes end.
    end: usize,
    /// Where the frame's own bytes end (padding follows).
    data: usize,
    flip: Option<(usize, u8)>,
}

impl WireReader<'_> {
    /// Reads the next `out.len()` bytes.
    fn read(&mut self, out: &mut [u8]) -> Result {
        self.fill(&mut DeviceBytes::from_slice(out))
    }
}

impl DmaSource for WireReader<'_> {
    fn fill(&mut self, dst: &mut DeviceBytes<'_>) -> Result {
        let n = dst.len();
        if !matches!(self.pos.checked_add(n), Some(end) if end <= self.end) {
            return Err(EINVAL);
        }
        let own = self.data.saturating_sub(self.pos).min(n);
        if own > 0 {
            self.inner.fill(&mut dst.window(0, own)?)?;
        }
        const ZEROS: [u8; ETH_ZLEN] = [0; ETH_ZLEN];
        let mut at = own;
        while at < n {
            let m = (n - at).min(ZEROS.len());
            dst.write(at, &ZEROS[..m])?;
            at += m;
        }
        if let Some((at, mask)) = self.flip {
            if (self.pos..self.pos + n).contains(&at) {
                let mut b = [0u8];
                dst.read(at - self.pos, &mut b)?;
                dst.write(at - self.pos, &[b[0] ^ mask])?;
            }
        }
        self.pos += n;
        Ok(())
    }
}

/// Why a frame was not delivered.
pub(super) enum RxError {
    /// No buffer from a pool.
    NoBuffer,
    /// The "DMA" or the skb build failed.
    Fault,
    /// This NIC cannot split the frame and its payload buffers are device
    /// memory the driver cannot map (the personality drops it).
    Unsplit,
    /// A frame whose checksum the device could not verify (bad, or not a
    /// TCP segment it checks) would have its payload split into device
    /// memory, where the stack cannot check it either: dropped.
    CsumUnverified,
}

impl From<Error> for RxError {
    fn from(_: Error) -> Self {
        RxError::Fault
    }
}

impl NapiPoll for RxQueue {
    type State = RxState;

    fn poll(&self, ctx: &NapiCtx<'_>, st: &mut RxState, budget: i32) -> i32 {
        // TX completions first, whatever the budget (netpoll polls with 0 to
        // have them reaped when its frame finds the queue stopped).
        self.tx_done.store(false, Ordering::SeqCst);
        let reaped = ctx.dev().data::<Nic>().map_or(0, |d| {
            tx_completion::reap_completions(ctx.dev(), d.me(), self.index)
        });
        if budget == 0 {
            return 0;
        }
        let mut done = 0;
        if st.discarded > 0 {
            self.stats
                .gro_discarded
                .add(core::mem::take(&mut st.discarded));
        }
        // Frames on this ring come from the peer; without one (teardown) the
        // frames are read through our own device (only host memory arrives then).
        let peer = ctx.dev().peer();
        let sender = peer.unwrap_or(ctx.dev());
        let gro = ctx.dev().gro_hw_enabled();
        let nic = ctx.dev().data::<Nic>();
        let xdp = nic.and_then(|d| d.me().xdp.get(ctx));
        // Completions for the sender, posted per run of frames of one TX queue.
        let mut run = CompletionRun::default();
        // The wire's faults, looked up once a poll (off: one branch a poll, and
        // the frames' loop as without them).
        let faulty = nic.is_some_and(|d| self.wire_faults_on(st, d.me()));
        let rx = Rx {
            sender,
            gro,
            csum: ctx.dev().rx_csum_enabled(),
            xdp: xdp.as_ref(),
        };
        // Frames came off the ring (room for the sender).
        let mut took = false;
        if faulty {
            (done, took) = self.poll_wire(ctx, st, &rx, budget, &mut run, peer);
        } else {
            // Frames a delaying wire still carried when its faults went off.
            self.deliver_carried(ctx, st, &rx);
            self.wire_full.store(false, Ordering::Relaxed);
            while done < budget {
                let Some(frame) = self.ring.consume() else {
                    break;
                };
                done += 1;
                took = true;
                run.add(peer, frame.queue_mapping());
                self.take(ctx, st, &rx, frame, &Decision::default());
            }
        }
        self.release_held(ctx, st, &rx, faulty, done > 0);
        run.flush(peer);
        if core::mem::take(&mut st.xdp_redirected) {
            flush_redirects(ctx);
        }
        if let Some(mem) = st.mem.as_mut() {
            self.age_aggregates(ctx, mem, gro, done > 0);
        }
        if took && self.sender_stopped.swap(false, Ordering::SeqCst) {
            // Room in the ring again: restart a sender stopped on back-pressure.
            if let Some((p, side)) = peer.and_then(|p| Some((p, p.data::<Nic>()?.me()))) {
                tx_completion::wake_with_room(p, side);
            }
        }
        // Reaped completions are work done: the core's interrupt moderation
        // (napi_defer_hard_irqs) applies to a TX-only poll too.
        if reaped > 0 {
            done = done.max(1);
        }
        done
    }

    fn has_work(&self) -> bool {
        (!self.ring.is_empty() && !self.wire_full.load(Ordering::Relaxed))
            || self.tx_done.load(Ordering::SeqCst)
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

/// Consecutive frames from one TX queue of the sender whose completions are
/// not posted yet: one post (and interrupt) per run, not per frame.
#[derive(Default)]
struct CompletionRun {
    txq: u16,
    frames: u32,
}

impl CompletionRun {
    /// Counts a frame of TX queue `txq` that the wire took from `sender`.
    fn add(&mut self, sender: Option<&NetDev>, txq: u16) {
        if self.frames > 0 && self.txq != txq {
            self.flush(sender);
        }
        self.txq = txq;
        self.frames += 1;
    }

    /// Posts the run's completions.
    fn flush(&mut self, sender: Option<&NetDev>) {
        if let (Some(s), n @ 1..) = (sender, core::mem::take(&mut self.frames)) {
            tx_completion::post_completions(s, self.txq, n);
        }
    }
}

/// What a poll receives frames with.
pub(super) struct Rx<'a, 'p> {
    /// The device whose TX bindings map the frames' device-memory frags.
    pub(super) sender: &'a NetDev,
    /// `rx-gro-hw` is on.
    pub(super) gro: bool,
    /// `rx-checksumming` is on.
    pub(super) csum: bool,
    /// The XDP program attached, if any.
    pub(super) xdp: Option<&'a XdpProgRef<'p>>,
}

impl RxQueue {
    /// Receives a frame off the ring as the wire delivers it (`fault`: what
    /// the wire did to it, see `wire.rs`), and counts the outcome.
    pub(super) fn take(
        &self,
        ctx: &NapiCtx<'_>,
        st: &mut RxState,
        rx: &Rx<'_, '_>,
        frame: SkBuff,
        fault: &Decision,
    ) {
        let mut delivered = false;
        {
            let wire = Wire::new(&frame, rx.sender, fault.truncate, fault.corrupt);
            if wire.padded > frame.len() {
                self.stats.padded.add(1);
            }
            let copies = if fault.duplicate { 2 } else { 1 };
            for _ in 0..copies {
                match self.receive(ctx, st, &wire, rx) {
                    Ok(()) => {
                        self.stats.packets.add(u64::from(frame.segments()));
                        self.stats.bytes.add(wire.len as u64);
                        delivered = true;
                    }
                    Err(RxError::NoBuffer) => self.stats.alloc_fail.add(1),
                    Err(RxError::Fault) => self.stats.drops.add_shared(1),
                    Err(RxError::Unsplit) => self.stats.unsplit_drops.add(1),
                    Err(RxError::CsumUnverified) => self.stats.drops.add_shared(1),
                }
            }
        }
        if delivered {
            frame.consume();
        }
    }
}

impl RxQueue {
    /// Receives one frame: delivers it, holds it as a new aggregate, or merges
    /// it into a held one (`rx-gro-hw`, when `gro`); with an XDP program,
    /// runs it first and acts on its verdict (no split, no coalescing).
    fn receive(
        &self,
        ctx: &NapiCtx<'_>,
        st: &mut RxState,
        wire: &Wire<'_>,
        rx: &Rx<'_, '_>,
    ) -> Result<(), RxError> {
        let Some(mem) = st.mem.as_mut() else {
            return Err(RxError::Fault);
        };
        let gro = rx.gro;
        if let Some(prog) = rx.xdp {
            st.xdp_redirected |= self.receive_xdp(ctx, mem, wire, prog)?;
            return Ok(());
        }
        let frame = wire.frame;
        let len = wire.len;
        let mut peek = [0u8; MAX_HEADER];
        let n = len.min(MAX_HEADER);
        wire.read(0, &mut peek[..n])?;
        let peek = &peek[..n];
        // A segment the coalescer may track: TCP it parses, whose checksum holds.
        let seg = if gro {
            parse_segment(peek, len).filter(|s| self.tcp_csum_ok(wire, peek, s))
        } else {
            None
        };
        let single = frame.segments() == 1;
        let mut slot = None;
        if let Some(seg) = &seg {
            match mem.gro.find(peek, seg) {
                Slot::Held(i) => {
                    if single {
                        match self.merge(ctx, mem, i, wire, peek, seg)? {
                            Some(true) => {
                                if let Some(h) = mem.gro.take(i) {
                                    self.deliver_held(ctx, h);
                                }
                                return Ok(());
                            }
                            Some(false) => return Ok(()),
                            None => {}
                        }
                    }
                    // It cannot join: the aggregate goes first, in order.
                    if let Some(h) = mem.gro.take(i) {
                        self.deliver_held(ctx, h);
                    }
                    slot = Some(i);
                }
                Slot::Free(i) => slot = Some(i),
                Slot::Full => {}
            }
        }
        // A complete sum the coalescer verified (a single segment it parsed)
        // is not summed again by the receive engine.
        let verified = seg.is_some() && single && !wire.csum_partial();
        // A frame that may start an aggregate: its payload is packed as
        // merged ones are (so the whole is charged for what it holds).
        let starts_run =
            single && slot.is_some() && seg.as_ref().is_some_and(|s| s.may_start_run());
        let seen = Seen {
            csum_engine: rx.csum,
            verified,
            starts_run,
        };
        let (mut skb, split) = self.build(ctx, mem, wire, peek, len, seen)?;
        let (hash, l4) = frame.hash();
        if let (Some(seg), Some(i), true) = (&seg, slot, starts_run) {
            let h = Held {
                skb,
                run: Run::start(seg, len as u32),
                hash,
                l4,
                split,
                wire_bytes: len as u64,
                started_ns: 0,
            };
            skb = match mem.gro.hold(i, h, monotonic_ns()) {
                Ok(()) => return Ok(()),
                Err(h) => h.skb,
            };
        }
        self.deliver(ctx, skb, hash, l4);
        Ok(())
    }

    /// Builds the skb of one frame in pool buffers (not yet handed to the
    /// stack); also says whether its payload went to the payload pool.
    /// `seen`: what the coalescer found before.
    fn build(
        &self,
        ctx: &NapiCtx<'_>,
        mem: &QueueMem,
        wire: &Wire<'_>,
        peek: &[u8],
        len: usize,
        seen: Seen,
    ) -> Result<(SkBuff, bool), RxError> {
        let Seen {
            csum_engine,
            verified,
            starts_run,
        } = seen;
        let frame = wire.frame;
        let shape = FrameShape {
            len,
            segments: frame.segments().max(1) as usize,
            // (Without split nothing needs the layout: no parse.)
            tcp: if mem.split {
                parse_prefix(peek, len)
                    .tcp
                    .ok()
                    .map(|l| (l.header_len, l.payload_len))
            } else {
                None
            },
        };
        let room = MAX_FRAGS * mem.payload.buf_size();
        let placement =
            mem.profile
                .placement(&shape, mem.split, self.hds_thresh(), room, mem.devmem);
        // The device's receive checksum engine. A personality that reports
        // `CHECKSUM_COMPLETE` (mlx5) sums the frame and leaves the verdict
        // to the stack. Otherwise a sum the sender left to the device is
        // written below; a complete one (a frame forwarded onto the wire, or
        // a raw socket's) is verified, as a NIC does. With the engine off
        // (`rx-checksumming off`) it checks and reports nothing: the stack
        // sums every frame itself (`CHECKSUM_NONE`).
        // (`None`: a partial sum; `Some(None)`: not a segment it checks.)
        let complete = if csum_engine
            && mem
                .profile
                .reports_complete(len, frame.segments(), || ip_protocol(peek))
        {
            self.complete_sum(wire, peek, len)
        } else {
            None
        };
        let verdict = (complete.is_none() && !wire.csum_partial()).then(|| {
            if !csum_engine {
                None
            } else if verified {
                Some(true)
            } else {
                self.rx_csum(wire, peek, len)
            }
        });
        let into_device_memory = mem.devmem
            && matches!(placement, Placement::Split { head }
                if build_size(head as u32) as usize <= kernel::page::PAGE_SIZE);
        // A sum neither verified nor reported complete: the stack could not
        // check it over device memory either (it would warn and drop).
        let unverified = match verdict {
            Some(v) => v != Some(true),
            None => complete.is_none() && !csum_engine,
        };
        if into_device_memory && unverified {
            if verdict == Some(Some(false)) {
                self.stats.csum_bad.add(1);
            }
            self.stats.csum_unverified.add(1);
            return Err(RxError::CsumUnverified);
        }
        let mut split = false;
        let mut skb = match placement {
            Placement::Split { head }
                if build_size(head as u32) as usize <= kernel::page::PAGE_SIZE =>
            {
                // The whole frame, Ethernet padding included, as a NIC places
                // it: the stack trims the padding (`pskb_trim_rcsum()`).
                let end = len;
                let place = mem.profile.payload_packing.first(starts_run);
                let skb = if starts_run && place == Place::Own && packs(mem.devmem, end - head) {
                    // Packed as merged payload is, so that the aggregate it
                    // starts is charged for what it holds.
                    let mut skb = self.head_from(ctx, &mem.header, wire, peek, head)?;
                    self.packed_frag_from(ctx, &mem.payload, wire, &mut skb, head, end - head)?;
                    skb
                } else {
                    self.receive_split(ctx, mem, wire, peek, (head, end - head), place)?
                };
                self.stats.hds_packets.add(1);
                if mem.devmem {
                    self.stats.devmem_packets.add(1);
                }
                split = true;
                skb
            }
            Placement::Drop => return Err(RxError::Unsplit),
            Placement::Linear { below_thresh } => {
                let skb = self.receive_linear(ctx, mem, wire, peek, len)?;
                self.stats.linear.add(1);
                if below_thresh {
                    self.stats.below_hds_thresh.add(1);
                }
                skb
            }
            // (A cut a header buffer cannot hold: whole, as too big to split.)
            Placement::Split { .. } => {
                let skb = self.receive_linear(ctx, mem, wire, peek, len)?;
                self.stats.linear.add(1);
                skb
            }
        };
        match (complete, verdict) {
            (Some(c), _) => self.report_complete(&mut skb, frame, c),
            (None, None) => {
                // The sender left the checksum to the "hardware": write it
                // (what packet sockets on this side see), and as the virtual
                // wire cannot corrupt it, report it verified (if the engine
                // reports anything).
                skb.fill_tx_csum(frame);
                if csum_engine {
                    skb.set_csum_unnecessary();
                }
            }
            (None, Some(Some(true))) => skb.set_csum_unnecessary(),
            (None, Some(Some(false))) => self.stats.csum_bad.add(1),
            // Not checked: the stack checks it, in host memory.
            (None, Some(None)) => {}
        }
        skb.copy_gso_from(frame);
        Ok((skb, split))
    }

    /// Reports `c` as the built frame's `CHECKSUM_COMPLETE`, writing the TCP
    /// checksum the sender left to the device into its header first; a
    /// header it cannot write (never, for what the builders make) is
    /// reported verified, as before the sum.
    fn report_complete(&self, skb: &mut SkBuff, frame: &SkBuff, c: CompleteSum) {
        let written = match c.tcp_check {
            None => true,
            Some((at, check)) => skb
                .head_mut()
                .and_then(|h| h.get_mut(at..at + 2))
                .map(|f| f.copy_from_slice(&check.to_be_bytes()))
                .is_some(),
        };
        if written {
            skb.set_csum_complete(c.sum);
            self.stats.csum_complete.add(1);
        } else {
            skb.fill_tx_csum(frame);
            skb.set_csum_unnecessary();
        }
    }

    /// Whether the TCP checksum of a frame whose sender wrote its own sum
    /// holds (over the IP datagram: Ethernet padding is not summed); `None`
    /// for frames the device does not check (not a TCP segment it parses),
    /// which the stack checks in host memory.
    fn rx_csum(&self, wire: &Wire<'_>, peek: &[u8], len: usize) -> Option<bool> {
        let l = parse_prefix(peek, len).tcp.ok()?;
        let end = l.header_len + l.payload_len;
        let seg = parse_segment(peek, end)?;
        Some(self.tcp_sum_holds(wire, peek, &seg, end))
    }

    /// Whether a segment's TCP checksum holds, as a NIC verifies each segment
    /// it coalesces. A sum the sender left to the device is written on
    /// receipt and the virtual wire cannot corrupt it; a super-frame is never
    /// merged (its sums are the sender's partial ones).
    fn tcp_csum_ok(&self, wire: &Wire<'_>, peek: &[u8], seg: &Segment) -> bool {
        let frame = wire.frame;
        if wire.csum_partial() || frame.segments() > 1 {
            return true;
        }
        self.tcp_sum_holds(wire, peek, seg, wire.len)
    }

    /// Whether the TCP checksum of segment `seg`, whose IP datagram ends at
    /// byte `end` of the frame, holds.
    fn tcp_sum_holds(&self, wire: &Wire<'_>, peek: &[u8], seg: &Segment, end: usize) -> bool {
        wire.sum(usize::from(seg.tcp_off), end)
            .is_some_and(|s| csum_fold(tcp_pseudo_sum(peek, seg) + s) == 0xffff)
    }

    /// What a device reporting `CHECKSUM_COMPLETE` gives the stack for a
    /// frame of `len` bytes: the sum of its bytes from the end of the
    /// Ethernet header on. `None` if it cannot say (a sum the sender left
    /// partial on anything but TCP it parses): then it is verified instead.
    fn complete_sum(&self, wire: &Wire<'_>, peek: &[u8], len: usize) -> Option<CompleteSum> {
        if !wire.csum_partial() {
            let sum = wire.sum(ETH_HLEN, len)?;
            return Some(CompleteSum {
                sum: csum_fold(sum),
                tcp_check: None,
            });
        }
        // The device writes the TCP checksum the sender left to it: the
        // frame is summed as the wire then carries it.
        let l = parse_prefix(peek, len).tcp.ok()?;
        let end = l.header_len + l.payload_len;
        let seg = parse_segment(peek, end)?;
        let tcp_off = usize::from(seg.tcp_off);
        let tail = if end < len {
            Some(csum_fold(wire.sum(end, len)?))
        } else {
            None
        };
        let (check, sum) = tcp_complete_sum(peek, &seg, wire.sum(tcp_off, end)?, tail)?;
        Some(CompleteSum {
            sum,
            tcp_check: Some((tcp_off + TCP_CHECK_OFF, check)),
        })
    }

    /// Hands a built frame to the stack (GRO) with its queue and hash; one
    /// without a whole Ethernet header in its linear part is a counted drop
    /// (the builders never make one; the XDP program may have shrunk it).
    pub(super) fn deliver(&self, ctx: &NapiCtx<'_>, mut skb: SkBuff, hash: u32, l4: bool) {
        if skb
            .rx_finish(ctx.dev(), self.index as u16, hash, l4)
            .is_err()
        {
            self.stats.drops.add(1);
            return;
        }
        ctx.gro_receive(skb);
    }

    /// Headers into a host fragment (the skb head), payload into payload
    /// buffers where `place` says. `peek` is the frame's start, already read;
    /// `(header_len, payload_len)` its two parts.
    fn receive_split(
        &self,
        ctx: &NapiCtx<'_>,
        mem: &QueueMem,
        wire: &Wire<'_>,
        peek: &[u8],
        (header_len, payload_len): (usize, usize),
        place: Place,
    ) -> Result<SkBuff, RxError> {
        let mut skb = self.head_from(ctx, &mem.header, wire, peek, header_len)?;
        self.packed_from(
            ctx,
            (&mem.payload, place),
            wire,
            &mut skb,
            header_len,
            payload_len,
        )?;
        Ok(skb)
    }

    /// The whole frame into host memory: one buffer if it fits, else a head and
    /// host pages. `peek` is the frame's start, already read.
    fn receive_linear(
        &self,
        ctx: &NapiCtx<'_>,
        mem: &QueueMem,
        wire: &Wire<'_>,
        peek: &[u8],
        len: usize,
    ) -> Result<SkBuff, RxError> {
        if build_size(len as u32) as usize <= kernel::page::PAGE_SIZE {
            return self.head_from(ctx, &mem.header, wire, peek, len);
        }
        let head = LINEAR_HEAD.min(len);
        let mut skb = self.head_from(ctx, &mem.header, wire, peek, head)?;
        self.frags_from(ctx, &mem.header, wire, &mut skb, head, len - head)?;
        Ok(skb)
    }

    /// An skb whose head holds the frame's first `len` bytes, in a host fragment
    /// of `pool`: from `peek` (the frame's start, already read) when it has them,
    /// else from the wire.
    fn head_from(
        &self,
        ctx: &NapiCtx<'_>,
        pool: &PagePool,
        wire: &Wire<'_>,
        peek: &[u8],
        len: usize,
    ) -> Result<SkBuff, RxError> {
        let mut frag = pool
            .alloc_frag(ctx.owner(), build_size(len as u32))
            .ok_or(RxError::NoBuffer)?;
        let headroom = rx_headroom();
        match peek.get(..len) {
            Some(mut bytes) => frag.device_write(headroom as usize, len, &mut bytes)?,
            None => frag.device_write(headroom as usize, len, &mut wire.reader(0)?)?,
        }
        Ok(SkBuff::build(ctx.bh_off(), frag, headroom, len as u32)?)
    }

    /// Appends frame bytes `from..from + len` (at most [`GRO_PACK_MAX`]) to
    /// `skb` as one fragment of a host page of `pool` sized to them (a stride
    /// multiple), as NICs that aggregate pack small payloads into shared
    /// pages: the aggregate is charged for what it holds, not a whole buffer.
    fn packed_frag_from(
        &self,
        ctx: &NapiCtx<'_>,
        pool: &PagePool,
        wire: &Wire<'_>,
        skb: &mut SkBuff,
        from: usize,
        len: usize,
    ) -> Result<(), RxError> {
        let size = len.next_multiple_of(GRO_PACK_STRIDE);
        let mut frag = pool
            .alloc_frag(ctx.owner(), size as u32)
            .ok_or(RxError::NoBuffer)?;
        frag.device_write(0, len, &mut wire.reader(from)?)?;
        skb.add_host_frag(frag, len as u32)?;
        Ok(())
    }

    /// Appends frame bytes `from..from + len` to `skb` in `pool`'s buffers
    /// where `place` says: buffers of their own, or packed after the
    /// payloads before them (a frag per buffer at most, none where they
    /// continue the skb's last frag), reading the frame once, in order, each
    /// run at a multiple of the placement's alignment. On an error `skb` may
    /// hold part of them: for a new skb only.
    fn packed_from(
        &self,
        ctx: &NapiCtx<'_>,
        (pool, place): (&PagePool, Place),
        wire: &Wire<'_>,
        skb: &mut SkBuff,
        from: usize,
        len: usize,
    ) -> Result<(), RxError> {
        let (align, mut fresh) = match place {
            Place::Own => return self.frags_from(ctx, pool, wire, skb, from, len),
            Place::Packed(align) => (align, false),
            Place::Fresh => (1, true),
        };
        let mut off = from;
        let end = from + len;
        let mut src = wire.reader(from)?;
        while off < end {
            let run = if core::mem::take(&mut fresh) {
                pool.pack_fresh(ctx.owner(), end - off)
            } else {
                pool.pack_next(ctx.owner(), end - off, align)
            };
            let mut run = run.ok_or(RxError::NoBuffer)?;
            let n = run.len();
            run.device_write(&mut src)?;
            self.append_packed(skb, run)?;
            off += n;
        }
        Ok(())
    }

    /// As [`Self::packed_from`], for a held aggregate: all the bytes or none
    /// (at most a buffer's worth, in at most two runs, both written before
    /// either is appended; `skb` needs two free frags).
    pub(super) fn packed_merge(
        &self,
        ctx: &NapiCtx<'_>,
        (pool, align): (&PagePool, usize),
        wire: &Wire<'_>,
        skb: &mut SkBuff,
        from: usize,
        len: usize,
    ) -> Result<(), RxError> {
        if len > pool.buf_size() || skb.free_frags() < 2 {
            return Err(RxError::Fault);
        }
        let mut src = wire.reader(from)?;
        let mut first = pool
            .pack_next(ctx.owner(), len, align)
            .ok_or(RxError::NoBuffer)?;
        let rest = len - first.len();
        let mut second = match rest {
            0 => None,
            _ => Some(
                pool.pack_next(ctx.owner(), rest, align)
                    .ok_or(RxError::NoBuffer)?,
            ),
        };
        first.device_write(&mut src)?;
        if let Some(run) = second.as_mut() {
            run.device_write(&mut src)?;
        }
        self.append_packed(skb, first)?;
        if let Some(run) = second {
            self.append_packed(skb, run)?;
        }
        Ok(())
    }

    /// Appends a packed run to `skb`, counting it when it extended the last frag.
    fn append_packed(&self, skb: &mut SkBuff, run: PackedRun<'_>) -> Result<(), RxError> {
        if skb.add_packed(run)? {
            self.stats.frags_extended.add(1);
        }
        Ok(())
    }

    /// Appends frame bytes `from..from + len` to `skb` in buffers of `pool`
    /// (one frag per buffer), reading the frame once, in order.
    fn frags_from(
        &self,
        ctx: &NapiCtx<'_>,
        pool: &PagePool,
        wire: &Wire<'_>,
        skb: &mut SkBuff,
        from: usize,
        len: usize,
    ) -> Result<(), RxError> {
        let mut off = from;
        let end = from + len;
        let mut src = wire.reader(from)?;
        while off < end {
            let mut buf = pool.alloc_netmem(ctx.owner()).ok_or(RxError::NoBuffer)?;
            let n = (end - off).min(buf.size());
            buf.device_write(0, n, &mut src)?;
            skb.add_netmem_frag(buf, 0, n as u32)?;
            off += n;
        }
        Ok(())
    }
}
