// SPDX-License-Identifier: GPL-2.0

//! Per-queue statistics for the netdev netlink family (`netdev_stat_ops`).
//!
//! C header: [`include/net/netdev_queues.h`](srctree/include/net/netdev_queues.h)

use super::{
    bindings,
    netdev::{priv_of, NetDev},
    netdev_ops::NetDevOps,
};
use core::marker::PhantomData;

/// Counters of one RX queue for qstats.
#[derive(Default, Clone, Copy)]
pub(crate) struct QueueRxStats {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) alloc_fail: u64,
    pub(crate) hw_drops: u64,
    pub(crate) hw_gro_packets: u64,
    pub(crate) hw_gro_bytes: u64,
    pub(crate) hw_gro_wire_packets: u64,
    pub(crate) hw_gro_wire_bytes: u64,
}

/// Counters of one TX queue for qstats.
#[derive(Default, Clone, Copy)]
pub(crate) struct QueueTxStats {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) hw_drops: u64,
    pub(crate) stop: u64,
    pub(crate) wake: u64,
    pub(crate) hw_gso_packets: u64,
    pub(crate) hw_gso_bytes: u64,
    pub(crate) hw_gso_wire_packets: u64,
}

/// A device that reports per-queue counters.
pub(crate) trait QueueStats: NetDevOps {
    /// qstats of active RX queue `idx`.
    fn queue_stats_rx(dev: &NetDev, data: &Self::Priv, idx: u32) -> QueueRxStats;

    /// qstats of active TX queue `idx`.
    fn queue_stats_tx(dev: &NetDev, data: &Self::Priv, idx: u32) -> QueueTxStats;

    /// Counters not in any active queue (from queues since deactivated).
    fn base_stats(dev: &NetDev, data: &Self::Priv) -> (QueueRxStats, QueueTxStats);
}

struct StatTable<T>(PhantomData<T>);

impl<T: QueueStats> StatTable<T> {
    fn put_rx(s: &QueueRxStats, out: &mut bindings::netdev_queue_stats_rx) {
        out.packets = s.packets;
        out.bytes = s.bytes;
        out.alloc_fail = s.alloc_fail;
        out.hw_drops = s.hw_drops;
        out.hw_gro_packets = s.hw_gro_packets;
        out.hw_gro_bytes = s.hw_gro_bytes;
        out.hw_gro_wire_packets = s.hw_gro_wire_packets;
        out.hw_gro_wire_bytes = s.hw_gro_wire_bytes;
    }

    fn put_tx(s: &QueueTxStats, out: &mut bindings::netdev_queue_stats_tx) {
        out.packets = s.packets;
        out.bytes = s.bytes;
        out.hw_drops = s.hw_drops;
        out.stop = s.stop;
        out.wake = s.wake;
        out.hw_gso_packets = s.hw_gso_packets;
        out.hw_gso_bytes = s.hw_gso_bytes;
        out.hw_gso_wire_packets = s.hw_gso_wire_packets;
    }

    /// # Safety
    ///
    /// Called by the core with a live device of ours and a writable `out`.
    unsafe extern "C" fn rx(
        dev: *mut bindings::net_device,
        idx: i32,
        out: *mut bindings::netdev_queue_stats_rx,
    ) {
        let Ok(idx) = u32::try_from(idx) else { return };
        // SAFETY: as the function's contract says.
        let (nd, data, out) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *out) };
        Self::put_rx(&T::queue_stats_rx(nd, data, idx), out);
    }

    /// # Safety
    ///
    /// As for `rx`.
    unsafe extern "C" fn tx(
        dev: *mut bindings::net_device,
        idx: i32,
        out: *mut bindings::netdev_queue_stats_tx,
    ) {
        let Ok(idx) = u32::try_from(idx) else { return };
        // SAFETY: as the function's contract says.
        let (nd, data, out) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *out) };
        Self::put_tx(&T::queue_stats_tx(nd, data, idx), out);
    }

    /// # Safety
    ///
    /// As for `rx`.
    unsafe extern "C" fn base(
        dev: *mut bindings::net_device,
        rx: *mut bindings::netdev_queue_stats_rx,
        tx: *mut bindings::netdev_queue_stats_tx,
    ) {
        // SAFETY: as the function's contract says.
        let (nd, data, rx, tx) =
            unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *rx, &mut *tx) };
        let (r, t) = T::base_stats(nd, data);
        Self::put_rx(&r, rx);
        Self::put_tx(&t, tx);
    }

    const VTABLE: bindings::netdev_stat_ops = bindings::netdev_stat_ops {
        get_queue_stats_rx: Some(Self::rx),
        get_queue_stats_tx: Some(Self::tx),
        get_base_stats: Some(Self::base),
    };
}

/// The `netdev_stat_ops` of `T` (see `Vtables::qstats`).
pub(super) const fn build<T: QueueStats>() -> &'static bindings::netdev_stat_ops {
    &StatTable::<T>::VTABLE
}
