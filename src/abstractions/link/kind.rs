// SPDX-License-Identifier: GPL-2.0

//! Link kinds: the devices `ip link add NAME [link LOWER] type KIND` makes.
//!
//! C header: [`include/net/rtnetlink.h`](srctree/include/net/rtnetlink.h)
//!
//! A driver implements [`LinkKind`] and registers it with
//! [`LinkRegistration`]; the helper's `rtnl_link_ops` call the
//! `Callbacks` trampolines, which set a new device (and its peer) up from
//! what [`LinkKind::newlink`] returns, register it and hand the core's
//! later calls to the trait.

use super::{
    lower::{LowerDev, LowerEvent},
    Rtnl,
};
use crate::abstractions::{
    bindings,
    extack::Extack,
    netdev::{init_device, priv_of, set_peers, unset_peer, DevPriv, NetDev, NetDevConfig},
    netdev_ops::NetDevOps,
    platform::PlatformDevice,
    skb::SkBuff,
    vtables::Vtables,
};
use core::{
    ffi::c_void,
    marker::PhantomData,
    ptr::null_mut,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{c_str, error::to_result, prelude::*, str::CStr, sync::Arc};

/// A link kind's device as the core allocated it, before the driver sets it up.
///
/// # Invariants
///
/// `dev` was allocated by the core for `T`'s kind and is not registered.
pub(crate) struct NewLink<'a> {
    dev: *mut bindings::net_device,
    lower: Option<&'a LowerDev>,
    mtu_given: bool,
    paired: bool,
}

impl NewLink<'_> {
    /// The interface name the core gave it.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: the device is allocated and named (type invariant): a
        // NUL-terminated array inside it.
        unsafe { CStr::from_char_ptr(bindings::dmn_netdev_name(self.dev).cast()) }
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
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_netdev_mtu(self.dev) }
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

/// A kind of device rtnetlink makes (`ip link add ... type KIND`).
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

    /// The device is about to be unregistered; rtnl held.
    fn dellink(dev: &NetDev, data: &Self::Priv, rtnl: &Rtnl);

    /// `event` happened to `lower`, which carries `upper` (a device of this
    /// kind, with its data) or nothing; rtnl held.
    fn lower_event(
        lower: &LowerDev,
        upper: Option<(&NetDev, &Self::Priv)>,
        event: LowerEvent,
        rtnl: &Rtnl,
    );

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
    // SAFETY: rtnl is held (the token); `f` outlives the call.
    unsafe {
        bindings::dmn_link_for_each(
            lower.as_raw(),
            Some(each::<T, F>),
            core::ptr::from_mut(&mut f).cast(),
        )
    };
}

struct Callbacks<T>(PhantomData<T>);

impl<T: LinkKind> Callbacks<T> {
    /// # Safety
    ///
    /// Called by the core (via the helper's `newlink`) with a device it
    /// allocated for this kind, not registered, `lower` registered or null,
    /// `peer_req` the request's peer attribute (validated against the kind's
    /// policy, valid for the call) or null, under rtnl.
    unsafe extern "C" fn newlink(
        dev: *mut bindings::net_device,
        lower: *mut bindings::net_device,
        peer_req: *const bindings::nlattr,
        mtu_given: bool,
        extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        // SAFETY: the core's extack, valid for the call.
        let extack = unsafe { Extack::from_raw(extack) };
        // SAFETY: a registered device, under rtnl for the call.
        let lower = (!lower.is_null()).then(|| unsafe { LowerDev::from_raw(lower) });
        kernel::error::from_result(|| {
            // A device made without a lower device comes with a peer, named
            // and addressed as the request asks or from the pattern.
            let peer = match (lower, T::PEER_PATTERN) {
                (None, Some(pattern)) => {
                    // SAFETY: `dev` is the core's new device, rtnl held; the
                    // pattern is static and copied; `peer_req` is null or
                    // valid for the call.
                    let p = unsafe {
                        bindings::dmn_link_create_peer(
                            dev,
                            pattern.as_char_ptr().cast(),
                            peer_req,
                            extack.as_raw(),
                        )
                    };
                    Some(kernel::error::from_err_ptr(p)?)
                }
                _ if !peer_req.is_null() => {
                    extack.msg(c_str!("devmemnic: this device has no peer"));
                    return Err(EINVAL);
                }
                _ => None,
            };
            // SAFETY: as the caller guarantees; the peer is ours, unregistered.
            unsafe { Self::set_up_and_register(dev, peer, lower, mtu_given, &extack) }.map(|()| 0)
        })
    }

    /// Sets up `dev` (and `peer`), registers it (them) and tells the driver.
    /// On failure everything is undone but `dev`'s allocation, which is the
    /// core's to free.
    ///
    /// # Safety
    ///
    /// As for `newlink`; `peer`, if any, is allocated by
    /// `dmn_link_create_peer`, not registered, and becomes ours to free.
    unsafe fn set_up_and_register(
        dev: *mut bindings::net_device,
        peer: Option<*mut bindings::net_device>,
        lower: Option<&LowerDev>,
        mtu_given: bool,
        extack: &Extack,
    ) -> Result {
        let rtnl = Rtnl(PhantomData);
        // Frees the peer while it is not registered (its data too, if set).
        let free_peer = || {
            if let Some(p) = peer {
                // SAFETY: ours and not registered; the destructor takes what
                // data it has (once).
                unsafe {
                    Self::destructor(p);
                    bindings::dmn_link_free_unregistered(p);
                }
            }
        };
        // INVARIANT: the core's new device.
        let new = NewLink {
            dev,
            lower,
            mtu_given,
            paired: peer.is_some(),
        };
        let setup = match T::newlink(&new, extack) {
            Ok(s) if s.peer.is_some() == peer.is_some() => s,
            Ok(_) => {
                free_peer();
                return Err(EINVAL);
            }
            Err(e) => {
                free_peer();
                return Err(e);
            }
        };
        // SAFETY: fresh devices of our kind, unregistered.
        if let Err(e) = unsafe { Self::init(dev, setup.cfg, setup.data, setup.hds_thresh) } {
            free_peer();
            return Err(e);
        }
        if let (Some(p), Some(ps)) = (peer, setup.peer) {
            // SAFETY: as above.
            if let Err(e) = unsafe { Self::init(p, ps.cfg, ps.data, ps.hds_thresh) } {
                free_peer();
                // SAFETY: not registered: the data goes, the core frees it.
                unsafe { Self::destructor(dev) };
                return Err(e);
            }
            // SAFETY: both set up, neither registered.
            unsafe { set_peers(dev, p) };
        }
        // SAFETY: set up; rtnl held.
        if let Err(e) = to_result(unsafe { bindings::dmn_register_netdevice(dev) }) {
            free_peer();
            // A failure may or may not have run the destructor: it runs at
            // most once, so run it (the core frees the device).
            // SAFETY: not registered; nothing else reads the data.
            unsafe { Self::destructor(dev) };
            return Err(e);
        }
        if let Some(p) = peer {
            // SAFETY: set up; rtnl held.
            if let Err(e) = to_result(unsafe { bindings::dmn_register_netdevice(p) }) {
                // SAFETY: `dev` forgets it before it goes; registered, so the
                // core frees `dev` after the unregistration.
                unsafe {
                    unset_peer(dev);
                    free_peer();
                    bindings::dmn_unregister_netdevice(dev);
                }
                return Err(e);
            }
        }
        // SAFETY: registered by us with `T`'s data, under rtnl.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        let mut r = T::registered(nd, data, lower, &rtnl, extack);
        if let (Ok(()), Some(p)) = (&r, peer) {
            // SAFETY: as above.
            let (pd, pdata) = unsafe { (NetDev::from_raw(p), priv_of::<T>(p)) };
            r = T::registered(pd, pdata, None, &rtnl, extack);
        }
        if r.is_err() {
            // The core frees them after the unregistration (and their
            // destructors drop the data).
            // SAFETY: registered; rtnl held.
            unsafe {
                bindings::dmn_unregister_netdevice(dev);
                if let Some(p) = peer {
                    bindings::dmn_unregister_netdevice(p);
                }
            }
        }
        r
    }

    /// Sets up one new device with its settings and data.
    ///
    /// # Safety
    ///
    /// A fresh device of our kind (private area of `DevPriv`'s size, zeroed,
    /// unregistered), which will get `destructor` as its priv_destructor.
    unsafe fn init(
        dev: *mut bindings::net_device,
        cfg: NetDevConfig<'_>,
        data: Arc<T::Priv>,
        hds_thresh: u32,
    ) -> Result {
        // (The data keeps the parent; this reference keeps the data.)
        let keep = data.clone();
        // SAFETY: as the caller guarantees; the tables are `T`'s; not
        // registered, so the core's HDS state needs no lock.
        unsafe {
            init_device::<T>(dev, T::parent(&keep), &cfg, T::VTABLES, data, true)?;
            bindings::dmn_netdev_reset_core_hds(dev, hds_thresh);
        }
        Ok(())
    }

    /// # Safety
    ///
    /// Called by the core under rtnl with a registered device of this kind.
    unsafe extern "C" fn dellink(dev: *mut bindings::net_device) -> *mut bindings::net_device {
        // SAFETY: a device of ours, registered, so its data is set.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        T::dellink(nd, data, &Rtnl(PhantomData));
        // Its peer goes with it (both unregistered in one batch, so neither
        // is freed while the other can follow its pointer).
        nd.peer().map_or(null_mut(), NetDev::as_raw)
    }

    /// `priv_destructor`: drops the device's data and its `ethtool_ops`.
    ///
    /// # Safety
    ///
    /// `dev` is a device of this kind no callback runs on any more
    /// (unregistered, or its registration failed).
    unsafe extern "C" fn destructor(dev: *mut bindings::net_device) {
        // SAFETY: the private area is a `DevPriv` (zeroed until `init_device`);
        // each pointer is taken once (left null), so a second call does nothing.
        unsafe {
            let p = bindings::dmn_netdev_priv(dev).cast::<DevPriv>();
            let data = (*p).data;
            let ops = (*p).owned_ethtool_ops;
            (*p).data = core::ptr::null();
            (*p).owned_ethtool_ops = null_mut();
            if !data.is_null() {
                drop(Arc::from_raw(data.cast::<T::Priv>()));
            }
            if !ops.is_null() {
                drop(KBox::from_raw(ops));
            }
        }
    }

    /// # Safety
    ///
    /// Called under rtnl; `dev` is registered; `upper`, if not null, is a
    /// registered device of this kind riding on `dev`.
    unsafe extern "C" fn lower_event(
        dev: *mut bindings::net_device,
        upper: *mut bindings::net_device,
        what: i32,
    ) {
        let event = match what as u32 {
            bindings::DMN_LOWER_REGISTER => LowerEvent::Registered,
            bindings::DMN_LOWER_UNREGISTER => LowerEvent::Unregistering,
            bindings::DMN_LOWER_STATE => LowerEvent::State,
            bindings::DMN_LOWER_MTU => LowerEvent::Mtu,
            _ => return,
        };
        // SAFETY: registered and, under rtnl, not freed during the call.
        let lower = unsafe { LowerDev::from_raw(dev) };
        let upper = if upper.is_null() {
            None
        } else {
            // SAFETY: as the caller guarantees: a device of ours with its data.
            Some(unsafe { (NetDev::from_raw(upper), priv_of::<T>(upper)) })
        };
        T::lower_event(lower, upper, event, &Rtnl(PhantomData));
    }

    /// # Safety
    ///
    /// Called by our rx_handler (RCU read side) with a device of this kind
    /// attached to the frame's device, and ownership of `skb`.
    unsafe extern "C" fn receive(upper: *mut bindings::net_device, skb: *mut bindings::sk_buff) {
        // SAFETY: attached devices stay registered until detached, which waits
        // for the handler; the skb is handed over.
        let (nd, data, skb) = unsafe {
            (
                NetDev::from_raw(upper),
                priv_of::<T>(upper),
                SkBuff::from_raw(skb),
            )
        };
        T::receive(nd, data, skb);
    }

    const TABLE: bindings::dmn_link_callbacks = bindings::dmn_link_callbacks {
        newlink: Some(Self::newlink),
        dellink: Some(Self::dellink),
        destructor: Some(Self::destructor),
        lower_event: Some(Self::lower_event),
        receive: Some(Self::receive),
    };

    const fn build() -> &'static bindings::dmn_link_callbacks {
        &Self::TABLE
    }
}

/// Whether a kind is registered: the helper holds one.
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// A registered link kind (one per module); on drop every device of the
/// kind is deleted, then the kind.
pub(crate) struct LinkRegistration<T: LinkKind> {
    _t: PhantomData<T>,
}

impl<T: LinkKind> LinkRegistration<T> {
    /// Registers `T`: devices get `queues` queues each way (unless the
    /// request says otherwise) and accept MTUs up to `max_mtu`.
    pub(crate) fn register(queues: u32, max_mtu: u32) -> Result<Self> {
        if REGISTERED.swap(true, Ordering::SeqCst) {
            return Err(EBUSY);
        }
        let table = Callbacks::<T>::build();
        // SAFETY: the kind name and the table are static; the private area
        // size is what `init_device` writes.
        let r = to_result(unsafe {
            bindings::dmn_link_register(
                T::KIND.as_char_ptr().cast(),
                core::mem::size_of::<DevPriv>(),
                queues,
                max_mtu,
                table,
            )
        });
        if let Err(e) = r {
            REGISTERED.store(false, Ordering::SeqCst);
            return Err(e);
        }
        Ok(Self { _t: PhantomData })
    }
}

impl<T: LinkKind> Drop for LinkRegistration<T> {
    fn drop(&mut self) {
        // SAFETY: registered by `register`; waits for the devices to go.
        unsafe { bindings::dmn_link_unregister() };
        REGISTERED.store(false, Ordering::SeqCst);
    }
}
