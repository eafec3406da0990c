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

use super::{
    bindings,
    extack::Extack,
    netdev::{init_device, set_peers, unset_peer, DevPriv, NetDev, NetDevConfig},
    netdev_ops::NetDevOps,
    platform::PlatformDevice,
    skb::SkBuff,
    vtables::Vtables,
};
use core::{
    ffi::c_void,
    marker::PhantomData,
    ptr::null_mut,
    sync::atomic::{AtomicBool, AtomicPtr, Ordering},
};
use kernel::{c_str, error::to_result, prelude::*, str::CStr, sync::Arc};

/// Proof that rtnl is held: only the abstraction makes one, in callbacks the
/// core runs under rtnl, or [`Rtnl::held`] after checking.
pub(crate) struct Rtnl(PhantomData<*mut ()>);

impl Rtnl {
    /// A token for a context the core runs under rtnl (`ndo_open`,
    /// `ndo_stop`, `ndo_change_mtu`), checked: `None` if rtnl is not held.
    pub(crate) fn held() -> Option<Self> {
        // SAFETY: reads the lock's state.
        unsafe { bindings::dmn_rtnl_is_locked() }.then_some(Self(PhantomData))
    }
}

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
    unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a LowerDev {
        // SAFETY: transparent wrapper; validity as the caller guarantees.
        unsafe { &*ptr.cast::<LowerDev>() }
    }

    fn as_raw(&self) -> *mut bindings::net_device {
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
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_netdev_ifindex(self.as_raw()) }
    }

    /// The MTU.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_netdev_mtu(self.as_raw()) }
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
    /// one of ours, no other receive handler); the reason goes to `extack`.
    pub(crate) fn check(&self, extack: &Extack) -> Result {
        // SAFETY: the device is allocated; the extack is valid or null.
        to_result(unsafe { bindings::dmn_lower_check(self.as_raw(), extack.as_raw()) })
    }
}

/// A device's name as a string (`?` if not UTF-8).
///
/// # Safety
///
/// `dev` is an allocated device that outlives the borrow.
unsafe fn name_of<'a>(dev: *mut bindings::net_device) -> &'a str {
    // SAFETY: the name is a NUL-terminated array inside the device.
    let c = unsafe { CStr::from_char_ptr(bindings::dmn_netdev_name(dev).cast()) };
    c.to_str().unwrap_or("?")
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
            let (nd, data) = (NetDev::from_raw(dev), super::netdev::priv_of::<T>(dev));
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
        let (nd, data) = unsafe { (NetDev::from_raw(dev), super::netdev::priv_of::<T>(dev)) };
        let mut r = T::registered(nd, data, lower, &rtnl, extack);
        if let (Ok(()), Some(p)) = (&r, peer) {
            // SAFETY: as above.
            let (pd, pdata) = unsafe { (NetDev::from_raw(p), super::netdev::priv_of::<T>(p)) };
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
        let (nd, data) = unsafe { (NetDev::from_raw(dev), super::netdev::priv_of::<T>(dev)) };
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
            Some(unsafe { (NetDev::from_raw(upper), super::netdev::priv_of::<T>(upper)) })
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
                super::netdev::priv_of::<T>(upper),
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
        // SAFETY: both registered; rtnl held (the token). The rx_handler's
        // data, `upper`, outlives the attachment: `LinkKind::dellink` runs
        // before the device is unregistered, and `detach` is the only way off.
        to_result(unsafe {
            bindings::dmn_lower_attach(lower.as_raw(), upper.as_raw(), extack.as_raw())
        })?;
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
        // SAFETY: attached (type invariant); rtnl held. The helper's removal
        // of the rx_handler waits for RCU readers, which covers `with` and
        // `xmit` callers that loaded the pointer before the swap.
        unsafe { bindings::dmn_lower_detach(lower, upper.as_raw()) };
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
        // stays; `upper` is registered.
        unsafe {
            if on {
                bindings::dmn_lower_uc_add(lower, upper.as_raw());
            } else {
                bindings::dmn_lower_uc_del(lower, upper.as_raw());
            }
        }
    }

    /// Sets `upper`'s carrier: on while both devices are up and the lower
    /// one has a carrier.
    pub(crate) fn sync_carrier(&self, _rtnl: &Rtnl, upper: &NetDev) {
        // SAFETY: attached or null (type invariant), stable under rtnl.
        unsafe {
            bindings::dmn_lower_sync_carrier(self.dev.load(Ordering::Acquire), upper.as_raw())
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
            // SAFETY: reads a return code.
            if unsafe { bindings::dmn_xmit_ok(ret) } {
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

impl NetDev {
    /// The interface name, for messages (stable under rtnl).
    pub(crate) fn name(&self) -> &str {
        // SAFETY: the device is allocated (type invariant).
        unsafe { name_of(self.as_raw()) }
    }

    /// Sets the MTU as `ip link set mtu` would (notifying, checking limits).
    pub(crate) fn set_mtu(&self, _rtnl: &Rtnl, mtu: u32) -> Result {
        // SAFETY: the device is allocated; rtnl held (the token).
        to_result(unsafe { bindings::dmn_netdev_set_mtu(self.as_raw(), mtu) })
    }

    /// The interface index.
    pub(crate) fn ifindex(&self) -> i32 {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_netdev_ifindex(self.as_raw()) }
    }
}
