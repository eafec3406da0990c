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

/// Declares a qstats struct from the fields of its C `netdev_queue_stats_*`
/// it fills: the struct, the set of its fields a device reports, its copy
/// into the C struct, and `+=` (sums over queues), from one list.
macro_rules! queue_stats {
    ($(#[$meta:meta])* $name:ident, $fields:ident => $c:ident { $($field:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) struct $name {
            $(pub(crate) $field: u64,)+
        }

        /// Which fields of the counters a device reports (a field it does
        /// not report is absent from the netdev family's answer, and from
        /// the device's totals when a queue or the base leaves it out).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) struct $fields {
            $(pub(crate) $field: bool,)+
        }

        impl $fields {
            /// Every field.
            pub(crate) const ALL: Self = Self { $($field: true,)+ };
            /// No field.
            pub(crate) const NONE: Self = Self { $($field: false,)+ };
        }

        impl $name {
            /// Fills the fields `reported` names (the core set the others
            /// to "not reported").
            fn put(&self, out: &mut bindings::$c, reported: &$fields) {
                $(if reported.$field {
                    out.$field = self.$field;
                })+
            }
        }

        impl core::ops::AddAssign for $name {
            fn add_assign(&mut self, o: Self) {
                $(self.$field += o.$field;)+
            }
        }
    };
}

queue_stats! {
    /// Counters of one RX queue for qstats.
    QueueRxStats, QueueRxFields => netdev_queue_stats_rx {
        packets,
        bytes,
        alloc_fail,
        hw_drops,
        csum_bad,
        hw_gro_packets,
        hw_gro_bytes,
        hw_gro_wire_packets,
        hw_gro_wire_bytes,
    }
}

queue_stats! {
    /// Counters of one TX queue for qstats.
    QueueTxStats, QueueTxFields => netdev_queue_stats_tx {
        packets,
        bytes,
        hw_drops,
        stop,
        wake,
        hw_gso_packets,
        hw_gso_bytes,
        hw_gso_wire_packets,
    }
}

/// A device that reports per-queue counters.
pub(crate) trait QueueStats: NetDevOps {
    /// qstats of active RX queue `idx`.
    fn queue_stats_rx(dev: &NetDev, data: &Self::Priv, idx: u32) -> QueueRxStats;

    /// qstats of active TX queue `idx`.
    fn queue_stats_tx(dev: &NetDev, data: &Self::Priv, idx: u32) -> QueueTxStats;

    /// Counters not in any active queue (from queues since deactivated).
    fn base_stats(dev: &NetDev, data: &Self::Priv) -> (QueueRxStats, QueueTxStats);

    /// The fields reported per queue (RX, TX); all by default.
    fn reported(_dev: &NetDev, _data: &Self::Priv) -> (QueueRxFields, QueueTxFields) {
        (QueueRxFields::ALL, QueueTxFields::ALL)
    }

    /// The fields reported in the base; those of the queues by default.
    fn base_reported(dev: &NetDev, data: &Self::Priv) -> (QueueRxFields, QueueTxFields) {
        Self::reported(dev, data)
    }
}

struct StatTable<T>(PhantomData<T>);

impl<T: QueueStats> StatTable<T> {
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
        T::queue_stats_rx(nd, data, idx).put(out, &T::reported(nd, data).0);
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
        T::queue_stats_tx(nd, data, idx).put(out, &T::reported(nd, data).1);
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
        let (rf, tf) = T::base_reported(nd, data);
        r.put(rx, &rf);
        t.put(tx, &tf);
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
