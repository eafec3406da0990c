// SPDX-License-Identifier: GPL-2.0

//! Link kinds: the devices `ip link add NAME [link LOWER] type KIND` makes.
//!
//! C header: [`include/net/rtnetlink.h`](srctree/include/net/rtnetlink.h)
//!
//! A driver implements [`LinkKind`] (a `#[vtable]` trait) and registers it
//! with [`LinkRegistration`] (`table.rs`, which builds the kind's
//! `rtnl_link_ops` from it): this file holds the trait and what its
//! `newlink` is given and returns.
//!
//! [`LinkRegistration`]: super::LinkRegistration

use super::{
    lower::{LowerDev, LowerEvent},
    Rtnl,
};
use crate::abstractions::{
    bindings,
    extack::Extack,
    netdev::{priv_of, NetDev, NetDevConfig},
    netdev_ops::NetDevOps,
    platform::PlatformDevice,
    skb::SkBuff,
    vtables::Vtables,
};
use core::ffi::c_void;
use kernel::{build_error, prelude::*, str::CStr, sync::Arc};

/// A link kind's device as the core allocated it, before the driver sets it up.
///
/// # Invariants
///
/// `dev` was allocated by the core for `T`'s kind and is not registered.
pub(crate) struct NewLink<'a> {
    pub(super) dev: *mut bindings::net_device,
    pub(super) lower: Option<&'a LowerDev>,
    pub(super) mtu_given: bool,
    pub(super) paired: bool,
}

impl NewLink<'_> {
    /// The interface name the core gave it.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: the device is allocated and named (type invariant): a
        // NUL-terminated array inside it.
        unsafe { CStr::from_char_ptr(core::ptr::addr_of!((*self.dev).name).cast()) }
    }

    /// Whether it comes with a peer ([`LinkKind::PEER_PATTERN`]): then
    /// [`NewLinkSetup::peer`] must set that up.
    pub(crate) fn paired(&self) -> bool {
        self.paired
    }

    /// The device named by `link DEV`, if given.
    pub(crate) fn lower(&self) -> Option<&LowerDev> {
        self.lower
    }

    /// Whether the request set an MTU (`mtu N`), already checked against
    /// the device's limits and stored.
    pub(crate) fn mtu_given(&self) -> bool {
        self.mtu_given
    }

    /// The MTU the device will have.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: the device is allocated and not registered (type
        // invariant): nothing else writes the field.
        unsafe { (*self.dev).mtu }
    }

    /// The queues it has: (TX, RX).
    pub(crate) fn queue_counts(&self) -> (u32, u32) {
        // SAFETY: the device is allocated (type invariant); fixed fields.
        unsafe { ((*self.dev).num_tx_queues, (*self.dev).num_rx_queues) }
    }

    /// Sets the MTU it will have (not registered yet: no lock needed).
    pub(crate) fn set_mtu(&self, mtu: u32) {
        // SAFETY: the device is allocated and not registered (type invariant).
        unsafe { (*self.dev).mtu = mtu };
    }
}

/// What [`LinkKind::newlink`] makes of a new device (and its peer).
pub(crate) struct NewLinkSetup<'a, T: NetDevOps> {
    /// Its settings (the queue counts must be the core's; the name is).
    pub(crate) cfg: NetDevConfig<'a>,
    /// Its data.
    pub(crate) data: Arc<T::Priv>,
    /// The header-split threshold the core starts it with (see
    /// [`NetDev::reset_core_hds`]).
    pub(crate) hds_thresh: u32,
    /// The peer's, for a paired device ([`NewLink::paired`]).
    pub(crate) peer: Option<PeerSetup<'a, T>>,
}

/// A peer's settings and data.
pub(crate) struct PeerSetup<'a, T: NetDevOps> {
    /// Its settings (queue counts as the device's).
    pub(crate) cfg: NetDevConfig<'a>,
    /// Its data.
    pub(crate) data: Arc<T::Priv>,
    /// As [`NewLinkSetup::hds_thresh`].
    pub(crate) hds_thresh: u32,
}

/// A kind of device rtnetlink makes (`ip link add ... type KIND`); optional
/// methods follow `#[vtable]`'s `HAS_*` rules.
#[vtable]
pub(crate) trait LinkKind: NetDevOps {
    /// The kind's name.
    const KIND: &'static CStr;

    /// The ops tables its devices get.
    const VTABLES: Vtables<Self>;

    /// The name pattern (`"dmnic%d"`) of the peer a device made without a
    /// lower device gets, registered with it and deleted with it (as veth
    /// makes pairs), unless the request names it (`IFLA_DEVMEMNIC_PEER`);
    /// `None`: no peers (a request naming one is refused).
    const PEER_PATTERN: Option<&'static CStr>;

    /// Sets up a new device: its settings and data, or an error (with a
    /// message in `extack`); rtnl held.
    fn newlink<'a>(new: &'a NewLink<'a>, extack: &Extack) -> Result<NewLinkSetup<'a, Self>>;

    /// The platform device a device's DMA belongs to: kept by its data.
    fn parent(data: &Self::Priv) -> &PlatformDevice;

    /// The device is registered (a pair's: both are; called for each, the
    /// peer's with no lower device); an error unregisters it (them) again.
    /// rtnl held.
    fn registered(
        dev: &NetDev,
        data: &Self::Priv,
        lower: Option<&LowerDev>,
        rtnl: &Rtnl,
        extack: &Extack,
    ) -> Result;

    /// The device is about to be unregistered (with its peer, if any);
    /// rtnl held. Without it the device just goes.
    fn dellink(_dev: &NetDev, _data: &Self::Priv, _rtnl: &Rtnl) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `event` happened to `lower`, which carries `upper` (a device of this
    /// kind, with its data) or nothing; rtnl held. Without it the kind
    /// listens to no device's changes (no notifier).
    fn lower_event(
        _lower: &LowerDev,
        _upper: Option<(&NetDev, &Self::Priv)>,
        _event: LowerEvent,
        _rtnl: &Rtnl,
    ) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// A frame from `dev`'s lower device for `dev` (its address, or
    /// broadcast or multicast), starting at its Ethernet header; softirq.
    fn receive(dev: &NetDev, data: &Self::Priv, skb: SkBuff);
}

/// Calls `f` on every device of kind `T` in `lower`'s netns.
pub(crate) fn for_each_device<T: LinkKind, F: FnMut(&NetDev, &T::Priv)>(
    lower: &LowerDev,
    _rtnl: &Rtnl,
    mut f: F,
) {
    /// # Safety
    ///
    /// `ctx` is an `F`; `dev` a registered device of kind `T`, under rtnl.
    unsafe extern "C" fn each<T: LinkKind, F: FnMut(&NetDev, &T::Priv)>(
        dev: *mut bindings::net_device,
        ctx: *mut c_void,
    ) {
        // SAFETY: the helper passes registered devices of our kind (made by
        // `newlink`, data set before registration) under rtnl; `ctx` is the
        // caller's `F`, alive for the call.
        unsafe {
            let (nd, data) = (NetDev::from_raw(dev), priv_of::<T>(dev));
            (*ctx.cast::<F>())(nd, data);
        }
    }
    let ops = super::table::registered_ops();
    if ops.is_null() {
        return;
    }
    // SAFETY: rtnl is held (the token); `f` outlives the call; `ops` is the
    // registered kind's, whose devices are `T`'s (one kind a module).
    unsafe {
        bindings::dmn_link_for_each(
            lower.as_raw(),
            ops,
            Some(each::<T, F>),
            core::ptr::from_mut(&mut f).cast(),
        )
    };
}
