// SPDX-License-Identifier: GPL-2.0

//! A link kind's `rtnl_link_ops`, built from [`LinkKind`], and its
//! registration.
//!
//! C header: [`include/net/rtnetlink.h`](srctree/include/net/rtnetlink.h)
//!
//! [`LinkRegistration`] builds the table (`Adapter::build`, each optional
//! trait method `Some` or `None` as `#[vtable]` says), with the netdevice
//! notifier that reports lower devices' changes and the rx_handler stacked
//! devices put on them. The trampolines set a new device (and its peer) up
//! from what [`LinkKind::newlink`] returns, register it and hand the core's
//! later calls to the trait. `newlink`'s signature is each kernel's
//! (`cfg(dmn_newlink_params)`: 7.2 passes a `struct rtnl_newlink_params`).
//!
//! Unlike `net_device_ops`, the table cannot be a `'static` constant: the
//! core links it into its list of kinds (and on 7.2 keeps an SRCU in it), so
//! [`LinkRegistration`] places the built value in memory of its own, the
//! [`KindState`] that the callbacks without an argument to find it by
//! (`setup`, `get_num_*_queues`) read through [`STATE`].
//!
//! (Over ~600 lines: one C table's trampolines, each short, with the
//! registration that owns the memory they read.)

use super::{
    kind::{LinkKind, NewLink},
    lower::{LowerDev, LowerEvent},
    peer::create_peer,
    Rtnl,
};
use crate::abstractions::{
    bindings,
    extack::Extack,
    netdev::{
        init_device, priv_of, reset_core_hds, set_peers, unset_peer, DevPriv, NetDev, NetDevConfig,
    },
    skb::SkBuff,
};
use core::{
    ffi::c_void,
    marker::PhantomData,
    ptr::{null, null_mut},
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{
    c_str,
    error::to_result,
    ffi::{c_int, c_uint, c_ulong},
    prelude::*,
    sync::Arc,
    types::Opaque,
};

/// The entries of the kind's policy: `IFLA_DEVMEMNIC_*` up to the highest.
const POLICY_LEN: usize = bindings::__IFLA_DEVMEMNIC_MAX as usize;

/// A registered kind's table and what its callbacks read, in memory the
/// core may write (its list of kinds, 7.2's SRCU in the table).
///
/// # Invariants
///
/// While [`STATE`] points at it, `ops` is registered with the core (or
/// about to be, or just unregistered), its `policy` pointing at `policy`;
/// `notifier` is registered if `T::HAS_LOWER_EVENT`; `rx_handler` is the
/// kind's rx_handler, whose data is always a registered device of the kind.
struct KindState {
    ops: Opaque<bindings::rtnl_link_ops>,
    notifier: Opaque<bindings::notifier_block>,
    policy: [bindings::nla_policy; POLICY_LEN],
    rx_handler: bindings::rx_handler_func_t,
    queues: u32,
    max_mtu: u32,
}

/// The registered kind (one per module), or null.
static STATE: AtomicPtr<KindState> = AtomicPtr::new(null_mut());

/// The registered kind's `rtnl_link_ops`, or null: what marks a device as
/// one of ours (`dev->rtnl_link_ops`).
pub(super) fn registered_ops() -> *const bindings::rtnl_link_ops {
    let s = STATE.load(Ordering::Acquire);
    if s.is_null() {
        return null();
    }
    // SAFETY: `STATE` points at allocated state: the registration's drop
    // clears it only after the core has let the kind go (no device of it
    // left, no notifier call running), and the callers (the kind's
    // callbacks, the lower device's users under rtnl) run only before.
    unsafe { (*s).ops.get() }
}

/// The registered kind's rx_handler, if a kind is registered.
pub(super) fn rx_handler() -> bindings::rx_handler_func_t {
    let s = STATE.load(Ordering::Acquire);
    // SAFETY: as in `registered_ops`.
    (!s.is_null()).then(|| unsafe { (*s).rx_handler }).flatten()
}

/// The stacked device riding on `lower` (with our rx_handler), or null.
///
/// # Safety
///
/// `lower` is a registered device; rtnl held, under which the rx_handler
/// and its data change.
unsafe fn upper_of(lower: *mut bindings::net_device) -> *mut bindings::net_device {
    // By address, as C compares them: a lower device carries ours only as
    // `LowerLink::attach` put it there, from `rx_handler()`.
    let ours = rx_handler().map(|f| f as usize);
    // SAFETY: as the caller guarantees (`rcu_access_pointer` and
    // `rtnl_dereference` of the fields: plain reads under rtnl).
    unsafe {
        let handler = core::ptr::addr_of!((*lower).rx_handler).read_volatile();
        if ours.is_none() || handler.map(|f| f as usize) != ours {
            return null_mut();
        }
        core::ptr::addr_of!((*lower).rx_handler_data)
            .read_volatile()
            .cast()
    }
}

/// `get_num_tx_queues` and `get_num_rx_queues`: the queues each device of
/// the kind gets.
///
/// # Safety
///
/// Called by the core for the registered kind (so `STATE` is set).
unsafe extern "C" fn num_queues() -> c_uint {
    // SAFETY: the core calls it only for a registered table: `STATE` is set.
    unsafe { (*STATE.load(Ordering::Acquire)).queues }
}

/// Builds `T`'s `rtnl_link_ops` and runs its callbacks.
struct Adapter<T>(PhantomData<T>);

impl<T: LinkKind> Adapter<T> {
    /// The kind's table, to be placed in a [`KindState`] (which sets `kind`
    /// and `policy`, pointers the table cannot name in a constant).
    const fn build() -> bindings::rtnl_link_ops {
        bindings::rtnl_link_ops {
            priv_size: core::mem::size_of::<DevPriv>(),
            setup: Some(Self::setup),
            maxtype: (POLICY_LEN - 1) as c_uint,
            newlink: Some(Self::newlink),
            dellink: Some(Self::dellink),
            get_num_tx_queues: Some(num_queues),
            get_num_rx_queues: Some(num_queues),
            // SAFETY: all zeroes is a valid `rtnl_link_ops` (null pointers,
            // no callbacks), what C's static initialiser leaves the rest as.
            ..unsafe { core::mem::zeroed() }
        }
    }

    /// The kind's policy: `IFLA_DEVMEMNIC_PEER` a `struct ifinfomsg` at least
    /// (followed by the peer's attributes), as veth's `VETH_INFO_PEER`.
    const fn policy() -> [bindings::nla_policy; POLICY_LEN] {
        // SAFETY: all zeroes is a valid `nla_policy` (`NLA_UNSPEC`, no
        // validation, null pointers).
        let mut p: [bindings::nla_policy; POLICY_LEN] = unsafe { core::mem::zeroed() };
        p[bindings::IFLA_DEVMEMNIC_PEER as usize].len =
            core::mem::size_of::<bindings::ifinfomsg>() as u16;
        p
    }

    /// `setup`: an Ethernet device with the kind's MTU limit that the core
    /// frees after its data goes.
    ///
    /// # Safety
    ///
    /// Called by the core while allocating a device of the registered kind.
    unsafe extern "C" fn setup(dev: *mut bindings::net_device) {
        // SAFETY: the core sets up devices of registered kinds only: `STATE`
        // is set; `dev` is being allocated, nothing else sees it.
        unsafe {
            let max_mtu = (*STATE.load(Ordering::Acquire)).max_mtu;
            bindings::ether_setup(dev);
            (*dev).max_mtu = max_mtu;
            // The core frees the device after the driver's data goes.
            (*dev).needs_free_netdev = true;
            (*dev).priv_destructor = Some(Self::destructor);
        }
    }

    /// `newlink` (7.2: the netns and attributes in `params`).
    ///
    /// # Safety
    ///
    /// Called by the core under rtnl with a device it allocated for this
    /// kind, not registered, and the request's parsed attributes.
    #[cfg(dmn_newlink_params)]
    unsafe extern "C" fn newlink(
        dev: *mut bindings::net_device,
        params: *mut bindings::rtnl_newlink_params,
        extack: *mut bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: the core's parameters, valid for the call.
        unsafe {
            let net = bindings::dmn_rtnl_newlink_link_net(params);
            Self::newlink_attrs(net, dev, (*params).tb, (*params).data, extack)
        }
    }

    /// `newlink` (6.12: `src_net` is the netns of `IFLA_LINK` when given).
    ///
    /// # Safety
    ///
    /// Called by the core under rtnl with a device it allocated for this
    /// kind, not registered, and the request's parsed attributes.
    #[cfg(not(dmn_newlink_params))]
    unsafe extern "C" fn newlink(
        src_net: *mut bindings::net,
        dev: *mut bindings::net_device,
        tb: *mut *mut bindings::nlattr,
        data: *mut *mut bindings::nlattr,
        extack: *mut bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: as the caller guarantees.
        unsafe { Self::newlink_attrs(src_net, dev, tb, data, extack) }
    }

    /// `newlink` with its arguments taken apart: `tb` the request's `IFLA_*`
    /// attributes, `data` the kind's (or null), `link_net` the netns of
    /// `IFLA_LINK`.
    ///
    /// # Safety
    ///
    /// As for `newlink`: `tb` has `IFLA_MAX + 1` entries, `data` (if not
    /// null) the policy's, each null or a validated attribute; under rtnl.
    unsafe fn newlink_attrs(
        link_net: *mut bindings::net,
        dev: *mut bindings::net_device,
        tb: *mut *mut bindings::nlattr,
        data: *mut *mut bindings::nlattr,
        extack: *mut bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: the core's extack, valid for the call.
        let ex = unsafe { Extack::from_raw(extack) };
        let peer: *const bindings::nlattr = if data.is_null() {
            null()
        } else {
            // SAFETY: `data`, if not null, has the policy's entries.
            unsafe { *data.add(bindings::IFLA_DEVMEMNIC_PEER as usize) }
        };
        // SAFETY: `tb` has `IFLA_MAX + 1` entries.
        let (link, address, mtu) = unsafe {
            (
                *tb.add(bindings::IFLA_LINK as usize),
                *tb.add(bindings::IFLA_ADDRESS as usize),
                *tb.add(bindings::IFLA_MTU as usize),
            )
        };
        let mut lower = null_mut();
        if !link.is_null() {
            // SAFETY: a validated u32 attribute (the core's policy); rtnl held,
            // which the lookup needs; `link_net` is the request's.
            lower = unsafe {
                bindings::__dev_get_by_index(link_net, bindings::dmn_nla_get_u32(link) as c_int)
            };
            if lower.is_null() {
                ex.msg(c_str!("devmemnic: no such lower device"));
                return ENODEV.to_errno();
            }
            if !peer.is_null() {
                ex.msg(c_str!(
                    "devmemnic: a device stacked on a lower device has no peer"
                ));
                return EINVAL.to_errno();
            }
        }
        // SAFETY: the core's new device, not registered.
        unsafe {
            // Its own lock classes: its transmit nests the lower device's.
            bindings::dmn_netdev_lockdep_set_classes(dev);
            if address.is_null() {
                bindings::dmn_eth_hw_addr_random(dev);
            }
        }
        // SAFETY: as the caller guarantees; `lower` registered (found under
        // rtnl) or null, `peer` the kind's validated attribute or null.
        unsafe { Self::newlink_dev(dev, lower, peer, !mtu.is_null(), extack) }
    }

    /// Makes the new device (and its peer), registers it (them).
    ///
    /// # Safety
    ///
    /// Called under rtnl with a device the core allocated for this kind,
    /// not registered, `lower` registered or null, `peer_req` the request's
    /// peer attribute (validated against the kind's policy, valid for the
    /// call) or null.
    unsafe fn newlink_dev(
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
                    // SAFETY: `dev` is the core's new device of our kind
                    // (its `rtnl_link_ops` set), rtnl held; `peer_req` is
                    // null or validated and valid for the call.
                    Some(unsafe { create_peer(dev, pattern, peer_req, &extack) }?)
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
    /// As for `newlink_dev`; `peer`, if any, is allocated by
    /// [`create_peer`], not registered, and becomes ours to free.
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
                    bindings::free_netdev(p);
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
        if let Err(e) = to_result(unsafe { bindings::register_netdevice(dev) }) {
            free_peer();
            // A failure may or may not have run the destructor: it runs at
            // most once, so run it (the core frees the device).
            // SAFETY: not registered; nothing else reads the data.
            unsafe { Self::destructor(dev) };
            return Err(e);
        }
        if let Some(p) = peer {
            // SAFETY: set up; rtnl held.
            if let Err(e) = to_result(unsafe { bindings::register_netdevice(p) }) {
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
            reset_core_hds(dev, hds_thresh);
        }
        Ok(())
    }

    /// `dellink`: `ip link del`, the device's netns going or the kind's
    /// unregistration; its peer goes with it (both unregistered in one
    /// batch, so neither is freed while the other can follow its pointer).
    ///
    /// # Safety
    ///
    /// Called by the core under rtnl with a registered device of this kind
    /// and the list it batches unregistrations on.
    unsafe extern "C" fn dellink(dev: *mut bindings::net_device, head: *mut bindings::list_head) {
        // SAFETY: a device of ours, registered, so its data is set.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        if T::HAS_DELLINK {
            T::dellink(nd, data, &Rtnl(PhantomData));
        }
        let peer = nd.peer().map_or(null_mut(), NetDev::as_raw);
        // SAFETY: registered devices, rtnl held, the core's list. (A peer
        // already queued is queued again: the list moves it in place.)
        unsafe {
            bindings::unregister_netdevice_queue(dev, head);
            if !peer.is_null() {
                bindings::unregister_netdevice_queue(peer, head);
            }
        }
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

    /// The netdevice notifier: a lower device's changes to the kind.
    ///
    /// # Safety
    ///
    /// Called by the core's netdevice notifier chain (under rtnl) with a
    /// `netdev_notifier_info` in `ptr`, while the kind is registered.
    unsafe extern "C" fn lower_event(
        _nb: *mut bindings::notifier_block,
        event: c_ulong,
        ptr: *mut c_void,
    ) -> c_int {
        let done = bindings::NOTIFY_DONE as c_int;
        let Ok(event) = u32::try_from(event) else {
            return done;
        };
        let event = match event {
            bindings::netdev_cmd_NETDEV_REGISTER => LowerEvent::Registered,
            // A netns move unregisters and registers again: a loss too.
            bindings::netdev_cmd_NETDEV_UNREGISTER => LowerEvent::Unregistering,
            bindings::netdev_cmd_NETDEV_UP
            | bindings::netdev_cmd_NETDEV_DOWN
            | bindings::netdev_cmd_NETDEV_CHANGE => LowerEvent::State,
            bindings::netdev_cmd_NETDEV_CHANGEMTU => LowerEvent::Mtu,
            _ => return done,
        };
        // SAFETY: the chain's info, for a registered device which, under
        // rtnl, is not freed during the call; our rx_handler's data is a
        // registered device of this kind (`KindState`'s invariant).
        let (dev, upper) = unsafe {
            let dev = bindings::dmn_netdev_notifier_dev(ptr);
            (dev, upper_of(dev))
        };
        // SAFETY: as above.
        let lower = unsafe { LowerDev::from_raw(dev) };
        let upper = if upper.is_null() {
            None
        } else {
            // SAFETY: as above: a device of ours with its data.
            Some(unsafe { (NetDev::from_raw(upper), priv_of::<T>(upper)) })
        };
        T::lower_event(lower, upper, event, &Rtnl(PhantomData));
        done
    }

    /// The rx_handler on a lower device: what the helper's filter lets
    /// through goes to the stacked device it carries.
    ///
    /// # Safety
    ///
    /// Called by the core's receive path (RCU read side) for a frame on a
    /// device this kind's rx_handler is registered on.
    unsafe extern "C" fn rx_handler(
        pskb: *mut *mut bindings::sk_buff,
    ) -> bindings::rx_handler_result_t {
        let mut upper = null_mut();
        let mut deliver = null_mut();
        // SAFETY: as the caller guarantees; the handler's data is a stacked
        // device of this kind (`LowerLink::attach`).
        let r = unsafe { bindings::dmn_lower_rx_filter(pskb, &mut upper, &mut deliver) };
        if !deliver.is_null() {
            // SAFETY: the filter hands over `deliver`, for `upper`, attached.
            unsafe { Self::receive(upper, deliver) };
        }
        r
    }

    /// Hands a frame to the driver.
    ///
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
}

/// A registered link kind (one per module); on drop every device of the
/// kind is deleted, then the kind.
///
/// # Invariants
///
/// `state` is the [`KindState`] [`STATE`] points at, allocated by
/// [`LinkRegistration::register`], its table and notifier registered.
pub(crate) struct LinkRegistration<T: LinkKind> {
    state: *mut KindState,
    _t: PhantomData<T>,
}

// SAFETY: the registration only holds the state to unregister and free it,
// which any thread may do.
unsafe impl<T: LinkKind> Send for LinkRegistration<T> {}
// SAFETY: no method reads through a shared reference.
unsafe impl<T: LinkKind> Sync for LinkRegistration<T> {}

impl<T: LinkKind> LinkRegistration<T> {
    /// Registers `T`: devices get `queues` queues each way (unless the
    /// request says otherwise) and accept MTUs up to `max_mtu`; `EBUSY` if a
    /// kind is registered already.
    pub(crate) fn register(queues: u32, max_mtu: u32) -> Result<Self> {
        let state = KBox::new(
            KindState {
                ops: Opaque::new(Adapter::<T>::build()),
                notifier: Opaque::new(bindings::notifier_block {
                    notifier_call: Some(Adapter::<T>::lower_event),
                    ..Default::default()
                }),
                policy: Adapter::<T>::policy(),
                rx_handler: Some(Adapter::<T>::rx_handler),
                queues,
                max_mtu,
            },
            GFP_KERNEL,
        )?;
        let state = KBox::into_raw(state);
        // SAFETY: ours, not shared yet; the kind name is static.
        unsafe {
            let ops = (*state).ops.get();
            (*ops).kind = T::KIND.as_char_ptr().cast();
            (*ops).policy = (*state).policy.as_ptr();
        }
        // INVARIANT: published before the core can call the table.
        if STATE
            .compare_exchange(null_mut(), state, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // SAFETY: never published: still ours alone.
            drop(unsafe { KBox::from_raw(state) });
            return Err(EBUSY);
        }
        // SAFETY: the table lives until `unregister` (drop) frees it, after
        // the core lets it go.
        let mut r = to_result(unsafe { bindings::rtnl_link_register((*state).ops.get()) });
        if r.is_ok() && T::HAS_LOWER_EVENT {
            // SAFETY: as the table, the notifier lives until after its
            // unregistration.
            r = to_result(unsafe {
                bindings::register_netdevice_notifier((*state).notifier.get())
            });
            if r.is_err() {
                // SAFETY: registered just above; the unregistration deletes
                // any device made meanwhile (each detached by `dellink`).
                unsafe { bindings::rtnl_link_unregister((*state).ops.get()) };
            }
        }
        if let Err(e) = r {
            STATE.store(null_mut(), Ordering::Release);
            // SAFETY: the core holds no pointer into it any more.
            drop(unsafe { KBox::from_raw(state) });
            return Err(e);
        }
        Ok(Self {
            state,
            _t: PhantomData,
        })
    }
}

impl<T: LinkKind> Drop for LinkRegistration<T> {
    fn drop(&mut self) {
        // SAFETY: registered by `register` (type invariant); the core's
        // unregistration deletes every device of the kind and waits for
        // them, then the notifier's waits for running calls. Nothing reads
        // the state after: no device of the kind is left to call `setup`,
        // the queue counts or the rx_handler (detached by `dellink`).
        unsafe {
            bindings::rtnl_link_unregister((*self.state).ops.get());
            if T::HAS_LOWER_EVENT {
                bindings::unregister_netdevice_notifier((*self.state).notifier.get());
            }
            STATE.store(null_mut(), Ordering::Release);
            drop(KBox::from_raw(self.state));
        }
    }
}
