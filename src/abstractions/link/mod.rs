// SPDX-License-Identifier: GPL-2.0

//! Link kinds and lower devices: net devices `ip link add NAME link LOWER
//! type KIND` makes, and the Ethernet device such a stacked device rides on.
//!
//! C header: [`include/net/rtnetlink.h`](srctree/include/net/rtnetlink.h)
//!
//! A driver implements [`LinkKind`] and registers it with
//! [`LinkRegistration`]. The core allocates each device (the driver's
//! [`NetDevOps`] private area, `num_queues` queues each way) and calls
//! [`LinkKind::newlink`], which returns the device's settings and data; the
//! abstraction sets the device up as [`super::netdev::NetDevAlloc`] does,
//! registers it and calls [`LinkKind::registered`]. `ip link del`, the
//! device's netns going away and the module's unload call
//! [`LinkKind::dellink`] before unregistering it; the core frees it after its
//! data is dropped. A [`LowerLink`] attaches a device to its lower device:
//! frames for the device's address come to [`LinkKind::receive`], and the
//! lower device's changes to [`LinkKind::lower_event`].
//!
//! `kind.rs` holds the link kind (the trait, the new device's setup),
//! `table.rs` its `rtnl_link_ops` built from the trait, the registration and
//! the callbacks (the notifier and the rx_handler too), `peer.rs` a paired
//! device's peer, `lower.rs` the lower device and the link to it; this file
//! what all use: the rtnl token and device names.
//!
//! [`NetDevOps`]: super::netdev_ops::NetDevOps

use super::{bindings, netdev::NetDev};
use core::marker::PhantomData;
use kernel::{error::to_result, prelude::*, str::CStr};

mod kind;
mod lower;
mod peer;
mod table;

pub(crate) use kind::{for_each_device, LinkKind, NewLink, NewLinkSetup, PeerSetup};
pub(crate) use lower::{IfName, LowerDev, LowerEvent, LowerLink, XmitError};
pub(crate) use table::LinkRegistration;

/// Proof that rtnl is held: only the abstraction makes one, in callbacks the
/// core runs under rtnl, or [`Rtnl::held`] after checking.
pub(crate) struct Rtnl(PhantomData<*mut ()>);

impl Rtnl {
    /// A token for a context the core runs under rtnl (`ndo_open`,
    /// `ndo_stop`, `ndo_change_mtu`), checked: `None` if rtnl is not held.
    pub(crate) fn held() -> Option<Self> {
        // SAFETY: reads the lock's state.
        (unsafe { bindings::rtnl_is_locked() } != 0).then_some(Self(PhantomData))
    }
}

/// A device's name as a string (`?` if not UTF-8).
///
/// # Safety
///
/// `dev` is an allocated device that outlives the borrow.
unsafe fn name_of<'a>(dev: *mut bindings::net_device) -> &'a str {
    // SAFETY: the name is a NUL-terminated array inside the device.
    let c = unsafe { CStr::from_char_ptr(core::ptr::addr_of!((*dev).name).cast()) };
    c.to_str().unwrap_or("?")
}

impl NetDev {
    /// The interface name, for messages (stable under rtnl).
    pub(crate) fn name(&self) -> &str {
        // SAFETY: the device is allocated (type invariant).
        unsafe { name_of(self.as_raw()) }
    }

    /// Sets the MTU as `ip link set mtu` would (notifying, checking limits).
    pub(crate) fn set_mtu(&self, _rtnl: &Rtnl, mtu: u32) -> Result {
        let mtu = i32::try_from(mtu).map_err(|_| EINVAL)?;
        // SAFETY: the device is allocated; rtnl held (the token).
        to_result(unsafe { bindings::dev_set_mtu(self.as_raw(), mtu) })
    }

    /// The interface index.
    pub(crate) fn ifindex(&self) -> i32 {
        // SAFETY: the device is allocated (type invariant); a plain field.
        unsafe { (*self.as_raw()).ifindex }
    }
}
