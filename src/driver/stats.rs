// SPDX-License-Identifier: GPL-2.0

//! Counters read by ethtool and netlink while the datapath updates them, and
//! the per-queue statistics (qstats) the netdev family reports.
//!
//! Each queue counter is declared once, in [`RxStats`] or [`TxStats`]: that
//! one line makes the field the datapath bumps, its `ethtool -S` entry
//! (`rx<N>_<name>`, `tx<N>_<name>`) and, with `=> field`, the qstats field it
//! reports as; the device's link counters (`ip -s link`) and the qstats of
//! deactivated queues are sums of the qstats.

use super::nic::{Nic, NicPriv, Side};
use crate::abstractions::{
    netdev::NetDev,
    netdev_ops::LinkStats,
    qstats::{QueueRxStats, QueueStats, QueueTxStats},
};
use core::sync::atomic::{AtomicU64, Ordering};

/// A 64-bit counter.
///
/// `add` is for the one context that owns the counter (a NAPI poll, a TX
/// queue under its lock): a plain load and store, no locked instruction.
/// `add_shared` is for counters several CPUs bump (rare events).
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`; only from the counter's single writer.
    pub(crate) fn add(&self, n: u64) {
        self.0.store(
            self.0.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }

    /// Adds `n` from any context.
    pub(crate) fn add_shared(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// The current value.
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Declares a queue's counters from one list: each entry is a [`Counter`]
/// field, an `ethtool -S` name (the field's) in [`Self::NAMES`] order, and,
/// with `=> qstat`, the field of `$qstats` it reports as.
macro_rules! queue_counters {
    (
        $(#[$meta:meta])*
        $name:ident reports $qstats:ident {
            $( $(#[$fmeta:meta])* $field:ident $(=> $qfield:ident)? ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Default)]
        pub(crate) struct $name {
            $( $(#[$fmeta])* pub(crate) $field: Counter, )+
        }

        impl $name {
            /// The counters' `ethtool -S` names, in declaration order.
            pub(crate) const NAMES: &'static [&'static str] = &[$(stringify!($field)),+];

            /// The counters' values, in the order of [`Self::NAMES`].
            pub(crate) fn values(&self) -> impl Iterator<Item = u64> + '_ {
                [$(&self.$field),+].into_iter().map(Counter::get)
            }

            /// The counters qstats reports.
            pub(crate) fn qstats(&self) -> $qstats {
                let mut q = $qstats::default();
                $( $( q.$qfield = self.$field.get(); )? )+
                q
            }
        }
    };
}

queue_counters! {
    /// Per-RX-queue counters.
    RxStats reports QueueRxStats {
        /// Frames delivered to the stack.
        packets => packets,
        /// Bytes delivered.
        bytes => bytes,
        /// Frames received with header split (headers host, payload pool).
        hds_packets,
        /// Of those, frames whose payload went to dma-buf memory (devmem).
        devmem_packets,
        /// Frames received whole into host memory (no split possible or wanted).
        linear,
        /// Of those, TCP frames not split because their payload (per segment) was
        /// at or below the header-split threshold.
        below_hds_thresh,
        /// Frames dropped: no buffer from a pool.
        alloc_fail => alloc_fail,
        /// Frames dropped: ring full, queue down, DMA failure, or too large for
        /// the XDP program.
        drops => hw_drops,
        /// Packets coalesced from two or more frames (`rx-gro-hw`) delivered.
        gro_packets => hw_gro_packets,
        /// Their bytes.
        gro_bytes => hw_gro_bytes,
        /// The frames they were coalesced from.
        gro_wire_packets => hw_gro_wire_packets,
        /// Those frames' bytes.
        gro_wire_bytes => hw_gro_wire_bytes,
        /// Frames whose payload joined a held aggregate (the others are counted
        /// as `hds_packets` or `linear` when built).
        gro_merged,
        /// Frames of aggregates dropped, not delivered: their queue's memory was
        /// replaced (a ring reset) while they were held.
        gro_discarded,
        /// Frames an XDP program dropped (`XDP_DROP`).
        xdp_drop,
        /// Frames an XDP program redirected (`XDP_REDIRECT`) that their target took.
        xdp_redirect,
        /// Frames an XDP program sent back out (`XDP_TX`), and their bytes: this
        /// channel's XDP TX ring, reported with its TX queue.
        xdp_tx,
        xdp_tx_bytes,
        /// `XDP_TX` frames the peer could not take (down, or its ring full).
        xdp_tx_errors,
        /// `XDP_ABORTED`, unknown actions, failed redirects, and frames no skb
        /// could be built for.
        xdp_exception,
        /// Frames too large for the attached program (counted in `drops` too).
        xdp_oversize,
    }
}

queue_counters! {
    /// Per-TX-queue counters.
    TxStats reports QueueTxStats {
        /// Frames handed to the peer.
        packets => packets,
        /// Bytes handed to the peer.
        bytes => bytes,
        /// Frames dropped (peer down).
        dropped => hw_drops,
        /// Times the queue stopped: its ring full, or the peer's RX ring.
        stops => stop,
        /// Times a stopped queue was woken (completions or a larger ring made room).
        wakes => wake,
        /// Frames sent from device memory (devmem TX: payload read by bus address).
        devmem_packets,
        /// TSO super-frames the "hardware" took (received whole by the peer, as
        /// its GRO would have merged them), their bytes, and the wire segments
        /// they stand for.
        gso_packets => hw_gso_packets,
        gso_bytes => hw_gso_bytes,
        gso_wire_packets => hw_gso_wire_packets,
        /// Frames XDP programs redirected to this device (`ndo_xdp_xmit`) sent
        /// from this queue's CPU, their bytes, and those the peer did not take.
        xdp_xmit,
        xdp_xmit_bytes,
        xdp_xmit_errors,
    }
}

/// TX queue `idx`'s qstats: its counters, with the XDP TX ring of its
/// channel's RX queue (frames a program sent back out leave through the
/// channel) and the frames XDP programs redirected to it.
fn tx_qstats(side: &Side, idx: usize) -> QueueTxStats {
    let Some(t) = side.txqs.get(idx) else {
        return QueueTxStats::default();
    };
    let t = &t.stats;
    let mut q = t.qstats();
    q.packets += t.xdp_xmit.get();
    q.bytes += t.xdp_xmit_bytes.get();
    if let Some(r) = side.rxqs.get(idx) {
        q.packets += r.stats.xdp_tx.get();
        q.bytes += r.stats.xdp_tx_bytes.get();
    }
    q
}

/// RX queue `idx`'s qstats.
fn rx_qstats(side: &Side, idx: usize) -> QueueRxStats {
    side.rxqs
        .get(idx)
        .map_or_else(QueueRxStats::default, |q| q.stats.qstats())
}

/// The qstats of RX queues `rx_from..` and TX queues `tx_from..`, summed.
fn sum(side: &Side, rx_from: usize, tx_from: usize) -> (QueueRxStats, QueueTxStats) {
    let mut rx = QueueRxStats::default();
    for i in rx_from..side.rxqs.len() {
        rx += rx_qstats(side, i);
    }
    let mut tx = QueueTxStats::default();
    for i in tx_from..side.txqs.len() {
        tx += tx_qstats(side, i);
    }
    (rx, tx)
}

/// The device's link counters (`ip -s link`): every queue's qstats summed;
/// RX drops are the hardware's and the allocation failures.
pub(crate) fn link_stats(data: &NicPriv) -> LinkStats {
    let (rx, tx) = sum(data.me(), 0, 0);
    LinkStats {
        rx_packets: rx.packets,
        rx_bytes: rx.bytes,
        rx_dropped: rx.hw_drops + rx.alloc_fail,
        tx_packets: tx.packets,
        tx_bytes: tx.bytes,
        tx_dropped: tx.hw_drops,
    }
}

impl QueueStats for Nic {
    fn queue_stats_rx(_dev: &NetDev, data: &NicPriv, idx: u32) -> QueueRxStats {
        rx_qstats(data.me(), idx as usize)
    }

    fn queue_stats_tx(_dev: &NetDev, data: &NicPriv, idx: u32) -> QueueTxStats {
        tx_qstats(data.me(), idx as usize)
    }

    /// The queues beyond the active ones: counters of deactivated queues.
    fn base_stats(dev: &NetDev, data: &NicPriv) -> (QueueRxStats, QueueTxStats) {
        sum(
            data.me(),
            dev.real_num_rx_queues() as usize,
            dev.real_num_tx_queues() as usize,
        )
    }
}
