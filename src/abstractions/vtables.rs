// SPDX-License-Identifier: GPL-2.0

//! The set of ops tables a device gets, built in a constant.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! `Vtables::new()` holds `T`'s `net_device_ops` ([`NetDevOps`]); `.ethtool()`,
//! `.qstats()` and `.queue_mgmt()` add the tables of [`EthtoolOps`],
//! [`QueueStats`] and [`QueueMgmt`], each a `'static` table built by its own
//! module. Allocation ([`super::netdev`]) and link kinds ([`super::link`])
//! point a new device at them.
//!
//! [`EthtoolOps`]: super::ethtool::EthtoolOps
//! [`QueueMgmt`]: super::queue_mgmt::QueueMgmt
//! [`QueueStats`]: super::qstats::QueueStats

use super::{bindings, netdev_ops::NetDevOps};
use core::marker::PhantomData;
use kernel::prelude::*;

/// The ops tables of a device whose callbacks are `T`'s.
///
/// # Invariants
///
/// Every table's callbacks are trampolines for `T`: they read the private area
/// as `NetDevAlloc<T>` writes it.
pub(crate) struct Vtables<T: NetDevOps> {
    netdev: &'static bindings::net_device_ops,
    ethtool: Option<&'static bindings::ethtool_ops>,
    /// Sets the capability bits in a device's copy of `ethtool`.
    ethtool_caps: fn(&mut bindings::ethtool_ops, &super::netdev::NetDevConfig<'_>),
    stat: Option<&'static bindings::netdev_stat_ops>,
    queue_mgmt: Option<&'static bindings::netdev_queue_mgmt_ops>,
    _t: PhantomData<T>,
}

impl<T: NetDevOps> Vtables<T> {
    /// `T`'s `net_device_ops` alone.
    pub(crate) const fn new() -> Self {
        // INVARIANT: `T`'s tables.
        Self {
            netdev: super::netdev_ops::build::<T>(),
            ethtool: None,
            ethtool_caps: |_, _| {},
            stat: None,
            queue_mgmt: None,
            _t: PhantomData,
        }
    }

    /// Adds `T`'s `ethtool_ops`.
    pub(crate) const fn ethtool(mut self) -> Self
    where
        T: super::ethtool::EthtoolOps,
    {
        self.ethtool = Some(super::ethtool::build::<T>());
        self.ethtool_caps = super::ethtool::set_caps::<T>;
        self
    }

    /// Adds `T`'s `netdev_stat_ops` (per-queue statistics, qstats).
    pub(crate) const fn qstats(mut self) -> Self
    where
        T: super::qstats::QueueStats,
    {
        self.stat = Some(super::qstats::build::<T>());
        self
    }

    /// Adds `T`'s `netdev_queue_mgmt_ops`; on kernels with ops-locked devices
    /// this makes the device ops-locked.
    pub(crate) const fn queue_mgmt(mut self) -> Self
    where
        T: super::queue_mgmt::QueueMgmt,
    {
        self.queue_mgmt = Some(super::queue_mgmt::build::<T>());
        self
    }

    /// A device's own copy of the `ethtool_ops`, capability bits set for `cfg`.
    pub(super) fn ethtool_copy(
        &self,
        cfg: &super::netdev::NetDevConfig<'_>,
    ) -> Result<Option<KBox<bindings::ethtool_ops>>> {
        let Some(ops) = self.ethtool else {
            return Ok(None);
        };
        let mut copy = KBox::new(*ops, GFP_KERNEL)?;
        (self.ethtool_caps)(&mut copy, cfg);
        Ok(Some(copy))
    }

    /// Points a new device at the tables (`ethtool`: from `ethtool_copy`).
    ///
    /// # Safety
    ///
    /// `dev` is allocated, not registered, and its private area will hold `T`'s
    /// data as `NetDevAlloc<T>` writes it; `ethtool` stays allocated until the
    /// device is freed.
    pub(super) unsafe fn install(
        &self,
        dev: *mut bindings::net_device,
        ethtool: Option<&bindings::ethtool_ops>,
    ) {
        // SAFETY: the caller's guarantee: nothing reads the fields concurrently.
        unsafe {
            (*dev).netdev_ops = self.netdev;
            if let Some(ops) = ethtool {
                (*dev).ethtool_ops = ops;
            }
            if let Some(ops) = self.stat {
                (*dev).stat_ops = ops;
            }
            if let Some(ops) = self.queue_mgmt {
                (*dev).queue_mgmt_ops = ops;
            }
        }
    }
}
