// SPDX-License-Identifier: GPL-2.0

//! Counters read by ethtool and netlink while the datapath updates them, and
//! the per-queue statistics (qstats) the netdev family reports.

use super::{device::Nic, pair::NicPriv, rx::RxStats, tx::TxStats};
use crate::abstractions::{
    netdev::NetDev,
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

/// The per-RX-queue counters of `ethtool -S` (`rx<N>_<name>`): names and values.
pub(crate) type RxField = fn(&RxStats) -> &Counter;
/// The per-TX-queue counters of `ethtool -S` (`tx<N>_<name>`).
pub(crate) type TxField = fn(&TxStats) -> &Counter;

pub(crate) const RX_STATS: [(&str, RxField); 21] = [
    ("packets", |s| &s.packets),
    ("bytes", |s| &s.bytes),
    ("hds_packets", |s| &s.hds_packets),
    ("devmem_packets", |s| &s.devmem_packets),
    ("linear", |s| &s.linear),
    ("below_hds_thresh", |s| &s.below_hds_thresh),
    ("alloc_fail", |s| &s.alloc_fail),
    ("drops", |s| &s.drops),
    ("gro_packets", |s| &s.gro_packets),
    ("gro_bytes", |s| &s.gro_bytes),
    ("gro_wire_packets", |s| &s.gro_wire_packets),
    ("gro_wire_bytes", |s| &s.gro_wire_bytes),
    ("gro_merged", |s| &s.gro_merged),
    ("gro_discarded", |s| &s.gro_discarded),
    ("xdp_drop", |s| &s.xdp_drop),
    ("xdp_redirect", |s| &s.xdp_redirect),
    ("xdp_tx", |s| &s.xdp_tx),
    ("xdp_tx_bytes", |s| &s.xdp_tx_bytes),
    ("xdp_tx_errors", |s| &s.xdp_tx_errors),
    ("xdp_exception", |s| &s.xdp_exception),
    ("xdp_oversize", |s| &s.xdp_oversize),
];
pub(crate) const TX_STATS: [(&str, TxField); 12] = [
    ("packets", |t| &t.packets),
    ("bytes", |t| &t.bytes),
    ("dropped", |t| &t.dropped),
    ("stops", |t| &t.stops),
    ("wakes", |t| &t.wakes),
    ("devmem_packets", |t| &t.devmem_packets),
    ("gso_packets", |t| &t.gso_packets),
    ("gso_bytes", |t| &t.gso_bytes),
    ("gso_wire_packets", |t| &t.gso_wire_packets),
    ("xdp_xmit", |t| &t.xdp_xmit),
    ("xdp_xmit_bytes", |t| &t.xdp_xmit_bytes),
    ("xdp_xmit_errors", |t| &t.xdp_xmit_errors),
];

/// The names of `RX_STATS` and `TX_STATS`, as ethtool's trait wants them.
pub(crate) const RX_STAT_NAMES: [&str; RX_STATS.len()] = names(&RX_STATS);
pub(crate) const TX_STAT_NAMES: [&str; TX_STATS.len()] = names(&TX_STATS);

const fn names<F, const N: usize>(table: &[(&'static str, F); N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = table[i].0;
        i += 1;
    }
    out
}

fn rx_qstats(s: &RxStats) -> QueueRxStats {
    QueueRxStats {
        packets: s.packets.get(),
        bytes: s.bytes.get(),
        alloc_fail: s.alloc_fail.get(),
        hw_drops: s.drops.get(),
        hw_gro_packets: s.gro_packets.get(),
        hw_gro_bytes: s.gro_bytes.get(),
        hw_gro_wire_packets: s.gro_wire_packets.get(),
        hw_gro_wire_bytes: s.gro_wire_bytes.get(),
    }
}

/// TX queue `t`'s counters, with the XDP TX ring of its channel's RX queue
/// `xdp` (if any): frames a program sent back out leave through the channel.
fn tx_qstats(t: &TxStats, xdp: Option<&RxStats>) -> QueueTxStats {
    QueueTxStats {
        packets: t.packets.get() + t.xdp_xmit.get() + xdp.map_or(0, |s| s.xdp_tx.get()),
        bytes: t.bytes.get() + t.xdp_xmit_bytes.get() + xdp.map_or(0, |s| s.xdp_tx_bytes.get()),
        hw_drops: t.dropped.get(),
        stop: t.stops.get(),
        wake: t.wakes.get(),
        hw_gso_packets: t.gso_packets.get(),
        hw_gso_bytes: t.gso_bytes.get(),
        hw_gso_wire_packets: t.gso_wire_packets.get(),
    }
}

impl QueueStats for Nic {
    fn queue_stats_rx(_dev: &NetDev, data: &NicPriv, idx: u32) -> QueueRxStats {
        data.me()
            .rxqs
            .get(idx as usize)
            .map_or_else(QueueRxStats::default, |q| rx_qstats(&q.stats))
    }

    fn queue_stats_tx(_dev: &NetDev, data: &NicPriv, idx: u32) -> QueueTxStats {
        let me = data.me();
        let xdp = me.rxqs.get(idx as usize).map(|q| &q.stats);
        me.txqs
            .get(idx as usize)
            .map_or_else(QueueTxStats::default, |t| tx_qstats(t, xdp))
    }

    fn base_stats(dev: &NetDev, data: &NicPriv) -> (QueueRxStats, QueueTxStats) {
        let me = data.me();
        let mut rx = QueueRxStats::default();
        for q in me.rxqs.iter().skip(dev.real_num_rx_queues() as usize) {
            let s = rx_qstats(&q.stats);
            rx.packets += s.packets;
            rx.bytes += s.bytes;
            rx.alloc_fail += s.alloc_fail;
            rx.hw_drops += s.hw_drops;
            rx.hw_gro_packets += s.hw_gro_packets;
            rx.hw_gro_bytes += s.hw_gro_bytes;
            rx.hw_gro_wire_packets += s.hw_gro_wire_packets;
            rx.hw_gro_wire_bytes += s.hw_gro_wire_bytes;
        }
        let mut tx = QueueTxStats::default();
        // (A channel's XDP TX ring goes with its TX queue.)
        for (i, t) in me
            .txqs
            .iter()
            .enumerate()
            .skip(dev.real_num_tx_queues() as usize)
        {
            let s = tx_qstats(t, me.rxqs.get(i).map(|q| &q.stats));
            tx.packets += s.packets;
            tx.bytes += s.bytes;
            tx.hw_drops += s.hw_drops;
            tx.stop += s.stop;
            tx.wake += s.wake;
            tx.hw_gso_packets += s.hw_gso_packets;
            tx.hw_gso_bytes += s.hw_gso_bytes;
            tx.hw_gso_wire_packets += s.hw_gso_wire_packets;
        }
        (rx, tx)
    }
}
