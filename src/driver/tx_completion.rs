// SPDX-License-Identifier: GPL-2.0

//! TX queues' descriptor rings and their completions.
//!
//! Each TX queue has a descriptor ring of `tx_ring` entries: a frame holds
//! one from `ndo_start_xmit` until the NAPI of the queue's channel reaps its
//! completion, which the wire (the peer taking the frame off its RX ring)
//! posts, raising that channel's interrupt when the queue is stopped or half
//! a ring of completions waits. A full ring stops the queue; the reap that
//! makes room wakes it. So TX completions follow the sender's interrupt
//! moderation (`napi_defer_hard_irqs`, `gro_flush_timeout`) and netpoll's
//! budget-0 polls, as on a NIC.

use super::nic::{Nic, NicPriv, Side, TxQueue};
use crate::abstractions::netdev::NetDev;
use core::sync::atomic::{fence, Ordering};

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
    pub(super) fn release(&self, n: u32) {
        let _ = self
            .in_flight
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |f| {
                Some(f.saturating_sub(n))
            });
    }
}

/// Stops TX queue `txq`, whose ring is full, unless a reap made room meanwhile.
pub(super) fn stop_queue(dev: &NetDev, side: &Side, tq: &TxQueue, txq: u32, limit: u32) {
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
