// SPDX-License-Identifier: GPL-2.0

//! Receive coalescing (`rx-gro-hw`): the aggregates a queue holds between
//! frames, and when they go up.
//!
//! Which segments merge is pure logic (`logic::gro`, the kernel's GRO rules);
//! here those rules meet skbs. An aggregate is the skb of its first frame,
//! held in a slot found by the flow's hash; a merging frame's payload is
//! "DMA"ed into payload buffers appended as frags (`rx.rs`). In host memory
//! a small payload, the first frame's too, takes a fragment of a shared
//! page instead. An aggregate goes
//! up when a segment ends it (short, or PSH, FIN, SYN, RST, URG), when a
//! segment of its flow cannot join, or, as a NIC's aggregation timer does,
//! when the queue has been idle for [`GRO_IDLE_FLUSH_MS`] or the oldest
//! aggregate is [`GRO_MAX_AGE_NS`] old, then oldest first (`AgeOrder`). Under
//! TCG a sender's frames come tens of microseconds apart, so the timer is
//! milliseconds where hardware's is microseconds.

use crate::abstractions::skb::SkBuff;
use crate::logic::gro::{same_flow, AgeLink, AgeOrder, Run, Segment};
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

/// A held aggregate.
pub(crate) struct Held {
    /// The first frame's skb, payload of merged frames appended.
    pub(crate) skb: SkBuff,
    /// What merging tracks (first segment, count, next sequence number).
    pub(crate) run: Run,
    /// The receive hash to report, and whether it is L4.
    pub(crate) hash: u32,
    pub(crate) l4: bool,
    /// The first frame's payload went to the payload pool (header split).
    pub(crate) split: bool,
    /// Bytes of the frames merged, as they were on the wire.
    pub(crate) wire_bytes: u64,
    /// When it started: set by [`GroTable::hold`].
    pub(crate) started_ns: u64,
}

/// Where a segment's flow stands in the table.
pub(crate) enum Slot {
    /// An aggregate of the flow is held here.
    Held(usize),
    /// The flow may start one here.
    Free(usize),
    /// Every slot the flow may take is busy with other flows.
    Full,
}

/// A queue's aggregation slots.
pub(crate) struct GroTable {
    slots: KVVec<Option<Held>>,
    /// Each slot's place in `order`.
    ages: KVVec<AgeLink>,
    /// The held aggregates' slots, oldest first.
    order: AgeOrder,
    held: usize,
    /// When the queue last took a frame.
    last_rx_ns: u64,
}

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
