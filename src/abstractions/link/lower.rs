// SPDX-License-Identifier: GPL-2.0

//! Lower devices: the Ethernet device a stacked device rides on.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! A [`LowerDev`] is any driver's device, seen under rtnl or while a
//! reference is held; a [`LowerLink`] attaches a stacked device to one (a
//! reference, our rx_handler, the upper link), sends through it and listens
//! for the stacked device's address on it. What happens to it comes to the
//! link kind as a [`LowerEvent`].

use super::{
    name_of,
    table::{registered_ops, rx_handler},
    Rtnl,
};
use crate::abstractions::{bindings, extack::Extack, netdev::NetDev, skb::SkBuff};
use core::{
    ptr::null_mut,
    sync::atomic::{AtomicBool, AtomicPtr, Ordering},
};
use kernel::{c_str, error::to_result, prelude::*};

/// Something that happened to a lower device.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum LowerEvent {
    /// A device appeared (registered, or moved into a netns).
    Registered,
    /// The device is going away (unregistered, or moving to another netns).
    Unregistering,
    /// It went up or down, or its carrier changed.
    State,
    /// Its MTU changed.
    Mtu,
}

/// A device the core knows, seen under rtnl or while a reference is held:
/// a lower device (any driver's).
///
/// # Invariants
///
/// The wrapped `net_device` is registered and stays allocated while the
/// reference exists.
#[repr(transparent)]
pub(crate) struct LowerDev(kernel::types::Opaque<bindings::net_device>);

impl LowerDev {
    /// Borrows a raw device.
    ///
    /// # Safety
    ///
    /// `ptr` is a registered device that stays allocated for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a LowerDev {
        // SAFETY: transparent wrapper; validity as the caller guarantees.
        unsafe { &*ptr.cast::<LowerDev>() }
    }

    pub(super) fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The interface name, for messages.
    pub(crate) fn name(&self) -> &str {
        // SAFETY: the device is allocated (type invariant).
        unsafe { name_of(self.as_raw()) }
    }

    /// The interface name, to compare (changed only under rtnl, which
    /// callers that compare hold).
    pub(crate) fn ifname(&self) -> IfName {
        // SAFETY: the device is allocated (type invariant).
        IfName::from_bytes(unsafe { name_of(self.as_raw()) }.as_bytes())
    }

    /// The interface index.
    pub(crate) fn ifindex(&self) -> i32 {
        // SAFETY: the device is allocated (type invariant); a plain field.
        unsafe { (*self.as_raw()).ifindex }
    }

    /// The MTU.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: the device is allocated (type invariant); a plain read of
        // a field its driver changes under rtnl (a racing reader sees old or
        // new).
        unsafe { core::ptr::addr_of!((*self.as_raw()).mtu).read_volatile() }
    }

    /// Whether it is up with a carrier.
    pub(crate) fn has_carrier(&self) -> bool {
        // SAFETY: the device is allocated (type invariant).
        unsafe {
            bindings::dmn_netif_running(self.as_raw())
                && bindings::dmn_netif_carrier_ok(self.as_raw())
        }
    }

    /// Whether a stacked device could ride on it (Ethernet, not loopback, not
    /// one of ours, no other receive handler: a bridge port, macvlan or bond
    /// has one); the reason goes to `extack`. rtnl held, as by callers that
    /// attach.
    pub(crate) fn check(&self, extack: &Extack) -> Result {
        let dev = self.as_raw();
        // SAFETY: the device is allocated (type invariant); plain fields,
        // which change under rtnl.
        let (ty, flags, ops) = unsafe { ((*dev).type_, (*dev).flags, (*dev).rtnl_link_ops) };
        if u32::from(ty) != bindings::ARPHRD_ETHER
            || flags & bindings::net_device_flags_IFF_LOOPBACK != 0
        {
            extack.msg(c_str!("devmemnic: the lower device must be Ethernet"));
            return Err(EINVAL);
        }
        let ours = registered_ops();
        if !ours.is_null() && ops == ours {
            extack.msg(c_str!("devmemnic: cannot stack on a devmemnic device"));
            return Err(EINVAL);
        }
        // SAFETY: as above; callers hold rtnl, which the core asserts.
        if unsafe { bindings::netdev_is_rx_handler_busy(dev) } {
            extack.msg(c_str!(
                "devmemnic: the lower device already has a receive handler (a bridge port, macvlan, bond, ...)"
            ));
            return Err(EBUSY);
        }
        Ok(())
    }
}

/// An interface name, copied (`IFNAMSIZ` bytes, NUL-padded).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct IfName([u8; 16]);

impl IfName {
    fn from_bytes(b: &[u8]) -> Self {
        let mut name = [0u8; 16];
        let n = b.len().min(15);
        name[..n].copy_from_slice(&b[..n]);
        Self(name)
    }
}

/// Why a lower device did not take a frame.
#[derive(Debug)]
pub(crate) enum XmitError {
    /// No lower device attached.
    Detached,
    /// Its queue dropped it.
    Dropped,
}

/// The lower device a stacked device rides on, if attached.
///
/// # Invariants
///
/// `dev`, when not null, is attached ([`LowerLink::attach`]): a reference
/// held, our rx_handler on it with the upper device as its data, the upper
/// link made; it stays so until [`LowerLink::detach`], which clears `dev`
/// before the rx_handler's removal waits for RCU readers. `listening` says
/// whether the upper device's address is in `dev`'s unicast list.
pub(crate) struct LowerLink {
    dev: AtomicPtr<bindings::net_device>,
    listening: AtomicBool,
}

impl Default for LowerLink {
    fn default() -> Self {
        Self::new()
    }
}

impl LowerLink {
    /// Not attached.
    pub(crate) const fn new() -> Self {
        Self {
            dev: AtomicPtr::new(null_mut()),
            listening: AtomicBool::new(false),
        }
    }

    /// Attaches `upper` (a device of a [`LinkKind`]) to `lower`; `EBUSY` if
    /// already attached.
    pub(crate) fn attach(
        &self,
        _rtnl: &Rtnl,
        upper: &NetDev,
        lower: &LowerDev,
        extack: &Extack,
    ) -> Result {
        if !self.dev.load(Ordering::Acquire).is_null() {
            return Err(EBUSY);
        }
        // Only a device of the registered kind: the handler reads its data.
        let ops = registered_ops();
        // SAFETY: the device is allocated; a plain field, set before its
        // registration.
        if ops.is_null() || unsafe { (*upper.as_raw()).rtnl_link_ops } != ops {
            return Err(EINVAL);
        }
        lower.check(extack)?;
        let (l, u) = (lower.as_raw(), upper.as_raw());
        // SAFETY: both registered; rtnl held (the token); the kind's handler.
        // The rx_handler's data, `upper`, outlives the attachment:
        // `LinkKind::dellink` runs before the device is unregistered, and
        // `detach` is the only way off. Each step is undone if a later one
        // fails.
        unsafe {
            bindings::dmn_dev_hold(l);
            let mut r = to_result(bindings::netdev_rx_handler_register(
                l,
                rx_handler(),
                u.cast(),
            ));
            if r.is_ok() {
                r = to_result(bindings::netdev_upper_dev_link(l, u, extack.as_raw()));
                if r.is_err() {
                    bindings::netdev_rx_handler_unregister(l);
                }
            }
            if r.is_err() {
                bindings::dmn_dev_put(l);
            }
            r?;
        }
        // INVARIANT: attached.
        self.dev.store(lower.as_raw(), Ordering::Release);
        Ok(())
    }

    /// Detaches from the lower device (stops listening first); returns
    /// whether it was attached. No frame reaches the upper device from it
    /// after, and no send through [`LowerLink::xmit`] is running.
    pub(crate) fn detach(&self, rtnl: &Rtnl, upper: &NetDev) -> bool {
        self.listen(rtnl, upper, false);
        let lower = self.dev.swap(null_mut(), Ordering::AcqRel);
        if lower.is_null() {
            return false;
        }
        // SAFETY: attached (type invariant); rtnl held. The removal of the
        // rx_handler waits for RCU readers, which covers `with` and `xmit`
        // callers that loaded the pointer before the swap; the reference
        // `attach` took goes last.
        unsafe {
            bindings::netdev_upper_dev_unlink(lower, upper.as_raw());
            bindings::netdev_rx_handler_unregister(lower);
            bindings::dmn_dev_put(lower);
        }
        true
    }

    /// Whether a lower device is attached.
    pub(crate) fn is_attached(&self) -> bool {
        !self.dev.load(Ordering::Acquire).is_null()
    }

    /// Adds `upper`'s address to the lower device's unicast filter (`on`) or
    /// removes it, once each way: its frames reach the rx_handler through
    /// the lower device's filter only while the upper device is up.
    pub(crate) fn listen(&self, _rtnl: &Rtnl, upper: &NetDev, on: bool) {
        let lower = self.dev.load(Ordering::Acquire);
        if lower.is_null() || self.listening.load(Ordering::Relaxed) == on {
            return;
        }
        self.listening.store(on, Ordering::Relaxed);
        // SAFETY: attached (type invariant: held), rtnl held, so `lower`
        // stays; `upper` is registered, its address changed only under rtnl.
        unsafe {
            let addr = (*upper.as_raw()).dev_addr;
            if on {
                bindings::dev_uc_add(lower, addr);
            } else {
                bindings::dev_uc_del(lower, addr);
            }
        }
    }

    /// Sets `upper`'s carrier: on while both devices are up and the lower
    /// one has a carrier.
    pub(crate) fn sync_carrier(&self, _rtnl: &Rtnl, upper: &NetDev) {
        let lower = self.dev.load(Ordering::Acquire);
        // SAFETY: attached (type invariant), stable under rtnl.
        let carried = !lower.is_null() && unsafe { LowerDev::from_raw(lower) }.has_carrier();
        if carried && upper.is_running() {
            upper.carrier_on();
        } else {
            upper.carrier_off();
        }
    }

    /// Calls `f` on the lower device, if attached.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&LowerDev) -> R) -> Option<R> {
        // SAFETY: entering a read-side section has no precondition.
        unsafe { bindings::dmn_rcu_read_lock() };
        let lower = self.dev.load(Ordering::Acquire);
        // SAFETY: an attached device stays allocated until `detach` has
        // waited for RCU readers (type invariant); we are one.
        let r = (!lower.is_null()).then(|| f(unsafe { LowerDev::from_raw(lower) }));
        // SAFETY: matches the lock above.
        unsafe { bindings::dmn_rcu_read_unlock() };
        r
    }

    /// Sends `skb` out of the lower device (host memory only: a frame with
    /// device-memory frags is copied first, as the lower NIC cannot read
    /// them); the core segments and checksums it as the lower device's
    /// features require.
    pub(crate) fn xmit(&self, skb: SkBuff) -> core::result::Result<(), XmitError> {
        if !skb.frags_readable() {
            return Err(XmitError::Dropped);
        }
        let raw = skb.into_raw();
        // SAFETY: entering a read-side section has no precondition.
        unsafe { bindings::dmn_rcu_read_lock() };
        let lower = self.dev.load(Ordering::Acquire);
        let r = if lower.is_null() {
            // SAFETY: ours, not handed on.
            drop(unsafe { SkBuff::from_raw(raw) });
            Err(XmitError::Detached)
        } else {
            // SAFETY: attached, so allocated until the RCU readers are done
            // (type invariant); the skb is handed over.
            let ret = unsafe { bindings::dmn_lower_xmit(lower, raw) };
            // Sent, or queued with congestion noted.
            if ret == bindings::NET_XMIT_SUCCESS as i32 || ret == bindings::NET_XMIT_CN as i32 {
                Ok(())
            } else {
                Err(XmitError::Dropped)
            }
        };
        // SAFETY: matches the lock above.
        unsafe { bindings::dmn_rcu_read_unlock() };
        r
    }
}

impl Drop for LowerLink {
    fn drop(&mut self) {
        if self.is_attached() {
            // `LinkKind::dellink` detaches before the device goes; a
            // reference left would keep the lower device from unregistering.
            pr_err!("devmemnic: a stacked device's data went while attached\n");
        }
    }
}
