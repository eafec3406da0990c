// SPDX-License-Identifier: GPL-2.0

//! Receive coalescing (`rx-gro-hw`): the aggregates a queue holds between
//! frames, and when they go up.
//!
//! Which segments merge is pure logic (`logic::gro`, the kernel's GRO rules);
//! here those rules meet skbs. An aggregate is the skb of its first frame,
//! held in a slot found by the flow's hash; a merging frame's payload is
//! "DMA"ed into payload buffers appended as frags (`mod.rs`). In host memory
//! a small payload, the first frame's too, takes a fragment of a shared
//! page instead. An aggregate goes
//! up when a segment ends it (short, or PSH, FIN, SYN, RST, URG), when a
//! segment of its flow cannot join, or, as a NIC's aggregation timer does,
//! when the queue has been idle for [`GRO_IDLE_FLUSH_MS`] or the oldest
//! aggregate is [`GRO_MAX_AGE_NS`] old, then oldest first (`AgeOrder`). Under
//! TCG a sender's frames come tens of microseconds apart, so the timer is
//! milliseconds where hardware's is microseconds.

use super::{packs, RxError, Wire, MAX_FRAGS};
use crate::abstractions::{
    delay::monotonic_ns,
    delayed_call::{DelayedCall, DelayedCallback},
    napi::NapiCtx,
    skb::GroLayout,
};
use crate::driver::nic::{GroTable, Held, QueueMem, RxQueue, Slot};
use crate::logic::gro::{same_flow, AgeLink, AgeOrder, Segment};
use crate::logic::personality::{FrameShape, Place, Placement};
use kernel::prelude::*;

/// Aggregates a queue can hold at once (upstream's `gro_hw.py` holds 512
/// flows' first segments until their second ones arrive).
pub(crate) const GRO_SLOTS: usize = 1024;
/// Slots a flow may take, from the one its hash names.
const GRO_PROBE: usize = 8;
/// Idle time after which a queue's aggregates go up.
pub(crate) const GRO_IDLE_FLUSH_MS: u32 = 20;
const GRO_IDLE_FLUSH_NS: u64 = GRO_IDLE_FLUSH_MS as u64 * 1_000_000;
/// Age at which aggregates go up even while frames keep arriving.
pub(crate) const GRO_MAX_AGE_NS: u64 = 1_000_000_000;

impl GroTable {
    /// An empty table.
    pub(crate) fn new() -> Result<Self> {
        let mut slots = KVVec::with_capacity(GRO_SLOTS, GFP_KERNEL)?;
        let mut ages = KVVec::with_capacity(GRO_SLOTS, GFP_KERNEL)?;
        for _ in 0..GRO_SLOTS {
            slots.push(None, GFP_KERNEL)?;
            ages.push(AgeLink::UNLINKED, GFP_KERNEL)?;
        }
        Ok(Self {
            slots,
            ages,
            order: AgeOrder::EMPTY,
            held: 0,
            last_rx_ns: 0,
        })
    }

    /// Finds `seg`'s flow (`hdr`: its frame's first bytes).
    pub(crate) fn find(&self, hdr: &[u8], seg: &Segment) -> Slot {
        let start = seg.hash as usize;
        let mut free = None;
        for i in 0..GRO_PROBE {
            let idx = (start + i) % GRO_SLOTS;
            match self.slots.get(idx) {
                Some(Some(h)) if same_flow(h.skb.head(), &h.run.first, hdr, seg) => {
                    return Slot::Held(idx)
                }
                Some(None) if free.is_none() => free = Some(idx),
                _ => {}
            }
        }
        free.map_or(Slot::Full, Slot::Free)
    }

    /// The aggregate in slot `idx`.
    pub(crate) fn get_mut(&mut self, idx: usize) -> Option<&mut Held> {
        self.slots.get_mut(idx)?.as_mut()
    }

    /// Takes the aggregate out of slot `idx`.
    pub(crate) fn take(&mut self, idx: usize) -> Option<Held> {
        let h = self.slots.get_mut(idx)?.take()?;
        self.order.remove(&mut self.ages, idx);
        self.held -= 1;
        Some(h)
    }

    /// Holds `h` in free slot `idx` (else hands it back). Its first segment's
    /// headers must be in the skb's linear part (`same_flow` compares them).
    pub(crate) fn hold(&mut self, idx: usize, mut h: Held, now_ns: u64) -> Result<(), Held> {
        if h.skb.head().len() < h.run.first.header_len() {
            return Err(h);
        }
        match self.slots.get_mut(idx) {
            Some(slot @ None) => {
                if !self.order.push_newest(&mut self.ages, idx) {
                    return Err(h);
                }
                h.started_ns = now_ns;
                *slot = Some(h);
                self.held += 1;
                Ok(())
            }
            _ => Err(h),
        }
    }

    /// Aggregates held.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// Notes that the queue took frames at `now_ns`.
    pub(crate) fn saw_frames(&mut self, now_ns: u64) {
        self.last_rx_ns = now_ns;
    }

    /// Whether the held aggregates are due to go up at `now_ns`.
    pub(crate) fn due(&self, now_ns: u64) -> bool {
        let oldest_ns = self
            .order
            .oldest()
            .and_then(|i| self.slots.get(i)?.as_ref())
            .map_or(now_ns, |h| h.started_ns);
        self.held > 0
            && (now_ns.saturating_sub(self.last_rx_ns) >= GRO_IDLE_FLUSH_NS
                || now_ns.saturating_sub(oldest_ns) >= GRO_MAX_AGE_NS)
    }

    /// Takes every held aggregate out to `f`, oldest first.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(Held)) {
        while let Some(i) = self.order.oldest() {
            match self.take(i) {
                Some(h) => f(h),
                // A listed slot holds an aggregate (`hold`, `take`); should
                // one not, unlist it rather than loop.
                None => self.order.remove(&mut self.ages, i),
            }
        }
        // `hold` lists every aggregate it takes, so none is left; were one
        // left unlisted, it still goes (a queue stopping drains here).
        if self.held > 0 {
            for slot in self.slots.iter_mut() {
                if let Some(h) = slot.take() {
                    f(h);
                }
            }
            self.held = 0;
        }
    }
}

impl DelayedCallback for RxQueue {
    fn run(&self) {
        // As a NIC's aggregation timer raises the queue's vector.
        self.kick();
    }
}

impl RxQueue {
    /// Merges a frame of the flow held in slot `i` if the rules and its
    /// buffers allow: `Some(complete)` if it joined (its payload appended),
    /// `None` if it cannot.
    pub(super) fn merge(
        &self,
        ctx: &NapiCtx<'_>,
        mem: &mut QueueMem,
        i: usize,
        wire: &Wire<'_>,
        peek: &[u8],
        seg: &Segment,
    ) -> Result<Option<bool>, RxError> {
        let thresh = self.hds_thresh();
        let QueueMem {
            payload,
            devmem,
            profile,
            split,
            gro,
            ..
        } = mem;
        let Some(h) = gro.get_mut(i) else {
            return Ok(None);
        };
        let Some(fixed_id) = h.run.accepts(h.skb.head(), peek, seg) else {
            return Ok(None);
        };
        let payload_len = seg.payload_len as usize;
        // Device memory takes only payload that header split would put there,
        // after the headers, after a first frame whose payload went there too
        // (an skb's frags are all readable or none).
        if *devmem {
            let shape = FrameShape {
                len: wire.len,
                segments: 1,
                tcp: Some((seg.header_len(), payload_len)),
            };
            let room = MAX_FRAGS * payload.buf_size();
            let whole = profile.placement(&shape, *split, thresh, room, true)
                == Placement::Split {
                    head: seg.header_len(),
                };
            if !h.split || !whole {
                return Ok(None);
            }
        }
        // (A segment joins right after the one before: `Fresh` is for a first.)
        let packed = match profile.payload_packing.merged {
            Place::Own => None,
            Place::Packed(align) => Some(align),
            Place::Fresh => Some(1),
        };
        let frags = if packed.is_some() { 2 } else { 1 };
        if payload_len > payload.buf_size() || h.skb.free_frags() < frags {
            return Ok(None);
        }
        let from = seg.header_len();
        if let Some(align) = packed {
            self.packed_merge(ctx, (payload, align), wire, &mut h.skb, from, payload_len)?;
        } else if packs(*devmem, payload_len) {
            self.packed_frag_from(ctx, payload, wire, &mut h.skb, from, payload_len)?;
        } else {
            self.frags_from(ctx, payload, wire, &mut h.skb, from, payload_len)?;
        }
        h.wire_bytes += wire.len as u64;
        self.stats.gro_merged.add(1);
        Ok(Some(h.run.merge(seg, fixed_id)))
    }

    /// Hands a held aggregate to the stack: headers rewritten for the whole
    /// and marked as coalesced when more than one frame joined.
    pub(super) fn deliver_held(&self, ctx: &NapiCtx<'_>, mut h: Held) {
        let run = h.run;
        if run.count > 1 {
            let first = &run.first;
            let inner = first.inner();
            let layout = GroLayout {
                outer_off: (first.layers > 1).then_some(first.ip[0].off),
                outer_v6: first.ip[0].v6,
                inner_off: inner.off,
                inner_v6: inner.v6,
                tcp_off: first.tcp_off,
                fixed_id: run.fixed_id & (1 << (first.layers - 1)) != 0,
            };
            let rewritten = match h.skb.head_mut() {
                Some(head) if head.len() >= first.header_len() => {
                    run.finish_headers(&mut head[..first.header_len()]);
                    true
                }
                _ => false,
            };
            let mss = u16::try_from(run.mss).unwrap_or(0);
            if !rewritten || mss == 0 || h.skb.complete_gro(&layout, mss, run.count).is_err() {
                // Cannot happen for what `hold` accepted; never deliver a lie.
                self.stats.gro_discarded.add(u64::from(run.count));
                return;
            }
            // Each segment's sum was verified as it joined, whatever the
            // first reported alone (mlx5 marks its aggregates partial).
            h.skb.set_csum_unnecessary();
            self.stats.gro_packets.add(1);
            self.stats.gro_bytes.add(h.skb.len() as u64);
            self.stats.gro_wire_packets.add(u64::from(run.count));
            self.stats.gro_wire_bytes.add(h.wire_bytes);
        }
        self.deliver(ctx, h.skb, h.hash, h.l4);
    }

    /// End of a poll: aggregates go up when due (or all of them when
    /// coalescing was turned off); any left get the timer.
    pub(super) fn age_aggregates(
        &self,
        ctx: &NapiCtx<'_>,
        mem: &mut QueueMem,
        gro: bool,
        took: bool,
    ) {
        if mem.gro.held() == 0 {
            return;
        }
        let now = monotonic_ns();
        if took {
            mem.gro.saw_frames(now);
        }
        if !gro || mem.gro.due(now) {
            mem.gro.drain(|h| self.deliver_held(ctx, h));
        }
        if mem.gro.held() > 0 {
            DelayedCall::schedule(self, GRO_IDLE_FLUSH_MS);
        }
    }
}
