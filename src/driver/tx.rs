// SPDX-License-Identifier: GPL-2.0

//! The transmit path: a frame sent on one side goes onto the ring of the RX
//! queue the other side's steering picks (ntuple rule, else RSS).
//!
//! A frame sent from device memory (devmem TX) travels as it is: its payload
//! is read by bus address when the receiving side "DMA"s it, and the sender's
//! buffers complete (the skb is freed) only after that read.
//!
//! Each frame takes a descriptor of its TX queue's ring until the wire
//! completes it (`tx_completion.rs`).

use super::{
    nic::{enqueue, steer, NicPriv},
    tx_completion::stop_queue,
};
use crate::abstractions::{netdev::NetDev, netdev_ops::TxOutcome, skb::SkBuff};
use core::sync::atomic::Ordering;

/// `ndo_start_xmit` of a pair's device: hands `skb` to the peer's RX queue,
/// or reports the ring full (a stacked device's is `stacked::transmit`).
///
/// A peer running XDP sees wire frames: what this side would leave to the
/// device (TSO, a checksum) is done in software first, as a NIC's engines
/// would before the wire, and each resulting frame takes a descriptor; those
/// that find the ring full are dropped (counted), not requeued.
pub(crate) fn transmit(dev: &NetDev, data: &NicPriv, skb: SkBuff) -> TxOutcome {
    let Some(peer) = data.peer() else {
        return TxOutcome::Done;
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
    match enqueue(q, skb) {
        Ok(()) => {
            tq.count_sent(len, segments, from_device_memory);
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
