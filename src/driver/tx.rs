// SPDX-License-Identifier: GPL-2.0

//! The transmit path: a frame sent on one side goes onto the ring of the RX
//! queue the other side's steering picks (ntuple rule, else RSS).
//!
//! A frame sent from device memory (devmem TX) travels as it is: its payload
//! is read by bus address when the receiving side "DMA"s it, and the sender's
//! buffers complete (the skb is freed) only after that read.
//!
//! Each TX queue has a descriptor ring of `tx_ring` entries: a frame holds
//! one from `ndo_start_xmit` until the NAPI of the queue's channel reaps its
//! completion, which the wire (the peer taking the frame off its RX ring)
//! posts, raising that channel's interrupt when the queue is stopped or half
//! a ring of completions waits. A full ring stops the queue; the reap that
//! makes room wakes it. So TX completions follow the sender's interrupt
//! moderation (`napi_defer_hard_irqs`, `gro_flush_timeout`) and netpoll's
//! budget-0 polls, as on a NIC.

use super::{
    nic::{Nic, NicPriv, Side, TxStats},
    rx::RxQueue,
    stacked,
};
use crate::abstractions::{netdev::NetDev, netdev_ops::TxOutcome, skb::SkBuff, xdp::XdpXmitBatch};
use crate::logic::parse::parse_prefix;
use core::sync::atomic::{fence, AtomicU32, Ordering};

/// Bytes of a frame the transmit side reads to steer it.
const STEER_PEEK: usize = 128;

/// One TX queue: its counters and its descriptor ring's state.
#[derive(Default)]
pub(crate) struct TxQueue {
    pub(crate) stats: TxStats,
    /// Descriptors in use: frames posted and not yet reaped (at most `tx_ring`
    /// while the ring size stays).
    in_flight: AtomicU32,
    /// Completions the wire posted that the channel's NAPI has not reaped.
    completed: AtomicU32,
}

/// The TX queue number XDP_TX frames carry: no TX queue of the stack's, so
/// the wire posts no completion for them.
const XDP_TX_QUEUE: u16 = u16::MAX;

/// `ndo_start_xmit`: hands `skb` to the peer's RX queue, or reports the ring full.
///
/// A peer running XDP sees wire frames: what this side would leave to the
/// device (TSO, a checksum) is done in software first, as a NIC's engines
/// would before the wire, and each resulting frame takes a descriptor; those
/// that find the ring full are dropped (counted), not requeued.
pub(crate) fn transmit(dev: &NetDev, data: &NicPriv, skb: SkBuff) -> TxOutcome {
    let Some(peer) = data.peer() else {
        return match data.stacked() {
            Some(st) => stacked::transmit(dev, st, skb),
            None => TxOutcome::Done,
        };
    };
    if !peer.xdp.is_attached() || !skb.offloads_pending() {
        return transmit_one(dev, data, skb);
    }
    let txq = usize::from(skb.queue_mapping());
    let dropped = |n: u64| {
        if let Some(tq) = data.me().txqs.get(txq) {
            tq.stats.dropped.add(n);
        }
    };
    let Some(frames) = skb.offloads_in_software() else {
        dropped(1);
        return TxOutcome::Done;
    };
    for frame in frames {
        if let TxOutcome::Busy(frame) = transmit_one(dev, data, frame) {
            drop(frame);
            dropped(1);
        }
    }
    TxOutcome::Done
}

/// Where the peer's steering puts `skb` (an RX queue of `target`, the peer
/// side, `active` queues in use) and the hash it reports.
pub(super) fn steer<'a>(
    dev: &NetDev,
    peer: &NetDev,
    target: &'a Side,
    skb: &SkBuff,
    active: u32,
) -> Option<(&'a RxQueue, u32, bool)> {
    let mut peek = [0u8; STEER_PEEK];
    let n = skb.len().min(STEER_PEEK);
    let key = match skb.read_as_device(Some(dev), 0, &mut peek[..n]) {
        Ok(()) => parse_prefix(&peek[..n], skb.len()).key,
        Err(_) => None,
    };
    let ntuple = peer.ntuple_enabled();
    let decision = target
        .steering
        .read(|s| s.decide(key.as_ref(), ntuple, active));
    let q = target.rxqs.get(decision.queue as usize)?;
    Some((q, decision.hash, decision.l4))
}

/// XDP_TX: sends a frame a program turned around back out of `dev`, on the
/// channel's XDP TX ring (no descriptor of the stack's TX queues). Returns
/// whether the peer's RX ring took it.
pub(crate) fn xdp_transmit(dev: &NetDev, data: &NicPriv, mut skb: SkBuff) -> bool {
    if let Some(st) = data.stacked() {
        return stacked::xdp_transmit(st, skb);
    }
    let (Some(peer), Some(target)) = (dev.peer(), data.peer()) else {
        return false;
    };
    let active = peer.real_num_rx_queues();
    if !peer.is_running() || !dev.carrier_ok() || active == 0 {
        return false;
    }
    let Some((q, hash, l4)) = steer(dev, peer, target, &skb, active) else {
        return false;
    };
    if hash != 0 {
        skb.set_hash(hash, l4);
    }
    skb.set_queue_mapping(XDP_TX_QUEUE);
    match q.ring.produce(skb, q.ring.size()) {
        Ok(()) => {
            q.irq.trigger();
            true
        }
        Err(skb) => {
            drop(skb);
            false
        }
    }
}

/// `ndo_xdp_xmit`: sends frames other programs redirected to `dev` (or its
/// own, redirected to itself) to the peer, as XDP_TX does, counted on the TX
/// queue of the sending CPU (several CPUs may send at once).
pub(crate) fn xdp_redirected(dev: &NetDev, data: &NicPriv, frames: &mut XdpXmitBatch<'_>) {
    let active = dev.real_num_tx_queues().max(1);
    let tq = data.me().txqs.get((frames.cpu() % active) as usize);
    for skb in frames {
        let bytes = skb.len() as u64;
        let sent = xdp_transmit(dev, data, skb);
        if let Some(tq) = tq {
            if sent {
                tq.stats.xdp_xmit.add_shared(1);
                tq.stats.xdp_xmit_bytes.add_shared(bytes);
            } else {
                tq.stats.xdp_xmit_errors.add_shared(1);
            }
        }
    }
}

/// Hands one wire frame to the peer's RX queue, or reports the ring full.
fn transmit_one(dev: &NetDev, data: &NicPriv, mut skb: SkBuff) -> TxOutcome {
    let txq = u32::from(skb.queue_mapping());
    let Some(tq) = data.me().txqs.get(txq as usize) else {
        drop(skb);
        return TxOutcome::Done;
    };
    let (Some(peer), Some(target)) = (dev.peer(), data.peer()) else {
        tq.stats.dropped.add(1);
        drop(skb);
        return TxOutcome::Done;
    };
    let active = peer.real_num_rx_queues();
    if !peer.is_running() || !dev.carrier_ok() || active == 0 {
        tq.stats.dropped.add(1);
        drop(skb);
        return TxOutcome::Done;
    }
    // Steer on the receiving side's configuration.
    let Some((q, hash, l4)) = steer(dev, peer, target, &skb, active) else {
        tq.stats.dropped.add(1);
        drop(skb);
        return TxOutcome::Done;
    };
    let len = skb.len() as u64;
    let segments = skb.segments();
    let from_device_memory = !skb.frags_readable();
    // The receive side reports this hash (NETIF_F_RXHASH).
    if hash != 0 {
        skb.set_hash(hash, l4);
    }
    let limit = data.me().tx_ring.load(Ordering::Relaxed);
    if tq.in_flight.load(Ordering::SeqCst) >= limit {
        // The ring shrank below its fill: wait for completions.
        stop_queue(dev, data.me(), tq, txq, limit);
        return TxOutcome::Busy(skb);
    }
    // The descriptor is taken before the wire can complete it.
    tq.in_flight.fetch_add(1, Ordering::SeqCst);
    match q.ring.produce(skb, q.ring.size()) {
        Ok(()) => {
            tq.count_sent(len, segments, from_device_memory);
            q.irq.trigger();
            if tq.in_flight.load(Ordering::SeqCst) >= limit {
                stop_queue(dev, data.me(), tq, txq, limit);
            }
            TxOutcome::Done
        }
        Err(skb) => {
            tq.release(1);
            // Back-pressure: stop this queue until the peer's poll drains a ring.
            dev.txq_stop(txq);
            q.sender_stopped.store(true, Ordering::SeqCst);
            tq.stats.stops.add(1);
            q.irq.trigger();
            if q.ring.len_hint() < q.ring.size() {
                // The peer's poll drained it meanwhile (and may have seen
                // no stopped queue): wake, as `stop_queue` does.
                dev.txq_wake(txq);
                tq.stats.wakes.add_shared(1);
            }
            TxOutcome::Busy(skb)
        }
    }
}

impl TxQueue {
    /// Counts a frame of `len` bytes (`segments` on the wire; its payload
    /// from device memory or not) the queue sent.
    pub(crate) fn count_sent(&self, len: u64, segments: u32, from_device_memory: bool) {
        self.stats.packets.add(1);
        self.stats.bytes.add(len);
        if from_device_memory {
            self.stats.devmem_packets.add(1);
        }
        if segments > 1 {
            self.stats.gso_packets.add(1);
            self.stats.gso_bytes.add(len);
            self.stats.gso_wire_packets.add(u64::from(segments));
        }
    }

    /// Descriptors in use: frames sent and not yet reaped.
    pub(crate) fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Frees `n` descriptors (saturating: frames put on a ring by anything
    /// but `transmit`, such as the KUnit tests' own, complete too).
    fn release(&self, n: u32) {
        let _ = self
            .in_flight
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |f| {
                Some(f.saturating_sub(n))
            });
    }
}

/// Stops TX queue `txq`, whose ring is full, unless a reap made room meanwhile.
fn stop_queue(dev: &NetDev, side: &Side, tq: &TxQueue, txq: u32, limit: u32) {
    dev.txq_stop(txq);
    tq.stats.stops.add(1);
    fence(Ordering::SeqCst);
    if tq.in_flight.load(Ordering::SeqCst) < limit {
        // A reap between the caller's check and the stop saw a running queue.
        dev.txq_wake(txq);
        tq.stats.wakes.add_shared(1);
    } else if tq.completed.load(Ordering::SeqCst) > 0 {
        // Completions posted while the queue ran raised no interrupt (see
        // `post_completions`): the stopped queue waits for them.
        raise_completion_irq(dev, side, txq);
    }
}

/// The wire took `n` frames of `sender`'s TX queue `txq` (the peer received
/// or dropped them): posts their completions to the queue's channel.
///
/// The channel's interrupt is moderated, as a NIC's TX completion interrupt
/// is (`tx-frames`): raised for a stopped queue, which waits for room, or
/// once completions for half the ring are pending; others wait for the
/// channel's next poll. (The stop rechecks for pending completions after
/// stopping, so one of the two sides sees the other.)
pub(crate) fn post_completions(sender: &NetDev, txq: u16, n: u32) {
    let Some(side) = sender.data::<Nic>().map(NicPriv::me) else {
        return;
    };
    let Some(tq) = side.txqs.get(usize::from(txq)) else {
        return;
    };
    let pending = tq.completed.fetch_add(n, Ordering::SeqCst).wrapping_add(n);
    fence(Ordering::SeqCst);
    let txq = u32::from(txq);
    if sender.txq_stopped(txq) || pending >= side.tx_ring.load(Ordering::Relaxed) / 2 {
        raise_completion_irq(sender, side, txq);
    }
}

/// Raises the interrupt of the channel that serves TX queue `txq` of `dev`
/// (`txq % channels`), flagging completions for its poll.
fn raise_completion_irq(dev: &NetDev, side: &Side, txq: u32) {
    let channels = dev.real_num_rx_queues();
    if channels == 0 {
        // Down: the channels reap when they start.
        return;
    }
    if let Some(q) = side.rxqs.get((txq % channels) as usize) {
        q.tx_done.store(true, Ordering::SeqCst);
        q.irq.trigger();
    }
}

/// TX completion in the NAPI of `channel`: reaps the completions of the TX
/// queues the channel serves (`txq % channels == channel`) and wakes those
/// stopped with room again. Returns the frames reaped.
pub(crate) fn reap_completions(dev: &NetDev, side: &Side, channel: u32) -> u32 {
    let channels = dev.real_num_rx_queues();
    if channels == 0 {
        return 0;
    }
    let limit = side.tx_ring.load(Ordering::Relaxed);
    let mut reaped = 0;
    let txqs = side.txqs.iter().take(dev.real_num_tx_queues() as usize);
    for (t, tq) in (0u32..)
        .zip(txqs)
        .skip(channel as usize)
        .step_by(channels as usize)
    {
        let n = tq.completed.swap(0, Ordering::SeqCst);
        if n > 0 {
            tq.release(n);
            reaped += n;
        }
        wake_if_room(dev, tq, t, limit);
    }
    reaped
}

/// Wakes every stopped TX queue of `dev` (of `side`) with room in its ring:
/// the ring grew, or the peer's RX ring a queue stopped on drained.
pub(crate) fn wake_with_room(dev: &NetDev, side: &Side) {
    let limit = side.tx_ring.load(Ordering::Relaxed);
    let txqs = side.txqs.iter().take(dev.real_num_tx_queues() as usize);
    for (t, tq) in (0u32..).zip(txqs) {
        wake_if_room(dev, tq, t, limit);
    }
}

fn wake_if_room(dev: &NetDev, tq: &TxQueue, txq: u32, limit: u32) {
    fence(Ordering::SeqCst);
    if dev.txq_stopped(txq) && dev.is_running() && tq.in_flight.load(Ordering::SeqCst) < limit {
        dev.txq_wake(txq);
        tq.stats.wakes.add_shared(1);
    }
}
