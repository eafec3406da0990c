// SPDX-License-Identifier: GPL-2.0

//! What the counters report: the per-queue statistics (qstats) the netdev
//! family reads, and the device's link counters (`ip -s link`) and the
//! qstats of deactivated queues, both sums of the qstats. The counters are
//! declared in `nic.rs` (`RxStats`, `TxStats`), each once.

use super::nic::{Nic, NicPriv, Side};
use crate::abstractions::{
    netdev::NetDev,
    netdev_ops::LinkStats,
    qstats::{QueueRxStats, QueueStats, QueueTxStats},
};

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
