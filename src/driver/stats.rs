// SPDX-License-Identifier: GPL-2.0

//! What the counters report: the per-queue statistics (qstats) the netdev
//! family reads, and the device's link counters (`ip -s link`) and the
//! qstats of deactivated queues, both sums of the qstats. The counters are
//! declared in `nic.rs` (`RxStats`, `TxStats`), each once.

use super::nic::{Nic, NicPriv, Side};
use crate::abstractions::{
    netdev::NetDev,
    netdev_ops::LinkStats,
    qstats::{QueueRxFields, QueueRxStats, QueueStats, QueueTxFields, QueueTxStats},
};
use crate::logic::personality::Personality;

/// The qstats fields a personality's driver reports, of those devmemnic
/// counts: per queue (RX, TX) and in the base (RX, TX). Read from each
/// driver's `netdev_stat_ops` in 7.2.13 (the same in 7.3.4); fields a driver
/// reports that devmemnic does not count (checksum counters, fbnic's
/// `hw_drop_overruns`) are left out. Documentation/personalities.rst.
fn qstats_fields(p: Personality) -> [(QueueRxFields, QueueTxFields); 2] {
    const RX_NONE: QueueRxFields = QueueRxFields::NONE;
    const TX_NONE: QueueTxFields = QueueTxFields::NONE;
    // packets, bytes, alloc_fail: every driver.
    const RX_BASIC: QueueRxFields = QueueRxFields {
        packets: true,
        bytes: true,
        alloc_fail: true,
        ..RX_NONE
    };
    const TX_BASIC: QueueTxFields = QueueTxFields {
        packets: true,
        bytes: true,
        ..TX_NONE
    };
    match p {
        Personality::Strict => [(QueueRxFields::ALL, QueueTxFields::ALL); 2],
        // gve_main.c gve_get_rx_queue_stats(), gve_get_tx_queue_stats(),
        // gve_get_base_stats().
        Personality::Gve => [(RX_BASIC, TX_BASIC); 2],
        // bnxt.c bnxt_get_queue_stats_rx/_tx(), bnxt_get_base_stats().
        Personality::Bnxt => {
            let rx = QueueRxFields {
                hw_gro_packets: true,
                hw_gro_wire_packets: true,
                ..RX_BASIC
            };
            [(rx, TX_BASIC); 2]
        }
        // en_main.c mlx5e_get_queue_stats_rx/_tx(), mlx5e_get_base_stats().
        Personality::Mlx5 => {
            let rx = QueueRxFields {
                hw_gro_packets: true,
                hw_gro_wire_packets: true,
                hw_gro_wire_bytes: true,
                ..RX_BASIC
            };
            let tx = QueueTxFields {
                hw_gso_packets: true,
                hw_gso_bytes: true,
                stop: true,
                wake: true,
                ..TX_BASIC
            };
            [(rx, tx); 2]
        }
        // fbnic_netdev.c fbnic_get_queue_stats_rx/_tx(),
        // fbnic_get_base_stats(): hw_drops per queue only.
        Personality::Fbnic | Personality::Fbnic618 => {
            let tx = QueueTxFields {
                hw_gso_wire_packets: true,
                stop: true,
                wake: true,
                ..TX_BASIC
            };
            let rx = QueueRxFields {
                hw_drops: true,
                ..RX_BASIC
            };
            [(rx, tx), (RX_BASIC, tx)]
        }
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

    fn reported(_dev: &NetDev, data: &NicPriv) -> (QueueRxFields, QueueTxFields) {
        qstats_fields(data.me().personality())[0]
    }

    fn base_reported(_dev: &NetDev, data: &NicPriv) -> (QueueRxFields, QueueTxFields) {
        qstats_fields(data.me().personality())[1]
    }
}
