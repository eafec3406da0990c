// SPDX-License-Identifier: GPL-2.0

//! The transmit path: a frame sent on one side goes onto the ring of the RX
//! queue the other side's steering picks (ntuple rule, else RSS).
//!
//! A frame sent from device memory (devmem TX) travels as it is: its payload
//! is read by bus address when the receiving side "DMA"s it, and the sender's
//! buffers complete (the skb is freed) only after that read.

use super::{pair::NicPriv, stats::Counter};
use crate::abstractions::{netdev::NetDev, netdev_ops::TxOutcome, skb::SkBuff};
use crate::logic::parse::parse_prefix;
use core::sync::atomic::Ordering;

/// Bytes of a frame the transmit side reads to steer it.
const STEER_PEEK: usize = 128;

/// Per-TX-queue counters.
#[derive(Default)]
pub(crate) struct TxStats {
    /// Frames handed to the peer.
    pub(crate) packets: Counter,
    /// Bytes handed to the peer.
    pub(crate) bytes: Counter,
    /// Frames dropped (peer down).
    pub(crate) dropped: Counter,
    /// Times the queue stopped on a full peer ring.
    pub(crate) stops: Counter,
    /// Frames sent from device memory (devmem TX: payload read by bus address).
    pub(crate) devmem_packets: Counter,
    /// TSO super-frames the "hardware" took (received whole by the peer, as
    /// its GRO would have merged them), their bytes, and the wire segments
    /// they stand for.
    pub(crate) gso_packets: Counter,
    pub(crate) gso_bytes: Counter,
    pub(crate) gso_wire_packets: Counter,
}

/// `ndo_start_xmit`: hands `skb` to the peer's RX queue, or reports the ring full.
pub(crate) fn transmit(dev: &NetDev, data: &NicPriv, mut skb: SkBuff) -> TxOutcome {
    let txq = u32::from(skb.queue_mapping());
    let Some(stats) = data.me().txqs.get(txq as usize) else {
        drop(skb);
        return TxOutcome::Done;
    };
    let Some(peer) = dev.peer() else {
        stats.dropped.add(1);
        drop(skb);
        return TxOutcome::Done;
    };
    let active = peer.real_num_rx_queues();
    if !peer.is_running() || !dev.carrier_ok() || active == 0 {
        stats.dropped.add(1);
        drop(skb);
        return TxOutcome::Done;
    }
    // Steer on the receiving side's configuration.
    let mut peek = [0u8; STEER_PEEK];
    let n = skb.len().min(STEER_PEEK);
    let key = match skb.read_as_device(dev.dma_dev(), 0, &mut peek[..n]) {
        Ok(()) => parse_prefix(&peek[..n], skb.len()).key,
        Err(_) => None,
    };
    let ntuple = peer.ntuple_enabled();
    let target = data.peer();
    let decision = target
        .steering
        .read(|s| s.decide(key.as_ref(), ntuple, active));
    let Some(q) = target.rxqs.get(decision.queue as usize) else {
        stats.dropped.add(1);
        drop(skb);
        return TxOutcome::Done;
    };
    let len = skb.len() as u64;
    let segments = skb.segments();
    let from_device_memory = !skb.frags_readable();
    // The receive side reports this hash (NETIF_F_RXHASH).
    if decision.hash != 0 {
        skb.set_hash(decision.hash, decision.l4);
    }
    let limit = data.me().tx_ring.load(Ordering::Relaxed);
    match q.ring.produce(skb, limit) {
        Ok(()) => {
            stats.packets.add(1);
            stats.bytes.add(len);
            if from_device_memory {
                stats.devmem_packets.add(1);
            }
            if segments > 1 {
                stats.gso_packets.add(1);
                stats.gso_bytes.add(len);
                stats.gso_wire_packets.add(u64::from(segments));
            }
            q.irq.trigger();
            TxOutcome::Done
        }
        Err(skb) => {
            // Back-pressure: stop this queue until the peer's poll drains a ring.
            dev.txq_stop(txq);
            q.sender_stopped.store(true, Ordering::SeqCst);
            stats.stops.add(1);
            q.irq.trigger();
            if q.ring.len_hint() < limit.min(q.ring.size()) {
                dev.txq_wake(txq);
            }
            TxOutcome::Busy(skb)
        }
    }
}
