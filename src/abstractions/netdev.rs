// SPDX-License-Identifier: GPL-2.0

//! Ethernet net devices: allocation, registration, pairs, and the locks their
//! control operations run under.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! [`NetDevAlloc`] allocates a multi-queue Ethernet device whose private area
//! holds an `Arc<T::Priv>` (see [`super::netdev_ops`]), points its ops at the
//! tables of [`Vtables`], and registers it. Unregistration and freeing happen
//! in its drop, or earlier with [`NetDevAlloc::unregister`] when several devices
//! must all be unregistered before any is freed (a [`NetDevPair`]).
//!
//! (Over ~600 lines: the device handle's accessors and the allocation that
//! establishes what they rely on, its private area and parent, belong
//! together.)

use super::{
    bindings,
    debugfs::{DeviceDir, RestartKnob},
    netdev_ops::NetDevOps,
    platform::PlatformDevice,
    vtables::Vtables,
};
use core::{any::TypeId, ffi::c_void, marker::PhantomData, ptr::NonNull};
use kernel::{error::to_result, prelude::*, str::CStr, sync::Arc};

/// A net device allocated by [`NetDevAlloc`], seen from one of its callbacks or
/// its owner.
///
/// # Invariants
///
/// The wrapped `net_device` was allocated by [`NetDevAlloc`] or made by a
/// link kind (`link.rs`), so its private area is a [`DevPriv`] and its parent
/// device is set and outlives it, and is not freed for as long as the
/// reference exists.
#[repr(transparent)]
pub(crate) struct NetDev(kernel::types::Opaque<bindings::net_device>);

// SAFETY: the methods of `NetDev` call net core functions that are safe to call
// from any thread; the device outlives every reference (type invariant).
unsafe impl Sync for NetDev {}
// SAFETY: as above.
unsafe impl Send for NetDev {}

impl NetDev {
    /// Borrows a raw device.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a device allocated by [`NetDevAlloc`] that stays
    /// allocated for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a NetDev {
        // SAFETY: `NetDev` is a transparent wrapper; the caller guarantees validity
        // and origin (the type invariant).
        unsafe { &*ptr.cast::<NetDev>() }
    }

    /// The raw device, for other abstractions.
    pub(crate) fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// Takes the locks this device's control operations run under (rtnl, and
    /// the instance lock where the kernel has one); sleeps.
    pub(crate) fn lock_ops(&self) -> OpsLock<'_> {
        // SAFETY: process context (callers may sleep); released by `OpsLock`'s drop.
        unsafe { bindings::dmn_netdev_ops_lock(self.as_raw()) };
        OpsLock { dev: self }
    }

    /// The MTU.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: the device is allocated; a plain read of a field the core
        // changes under the ops locks (a racing reader sees old or new).
        unsafe { core::ptr::addr_of!((*self.as_raw()).mtu).read_volatile() }
    }

    /// Sets the MTU field; called from `change_mtu` under the ops locks.
    pub(crate) fn set_mtu_field(&self, mtu: u32) {
        // SAFETY: the device is allocated; the core calls `ndo_change_mtu` with the
        // ops locks held and expects the driver to store the new value.
        unsafe { (*self.as_raw()).mtu = mtu };
    }

    /// Brings the device up (`dev_open`), with its ops locks held.
    pub(crate) fn open(&self, lock: &OpsLock<'_>) -> Result {
        lock.check(self)?;
        // `netif_open` where devices are ops-locked (`dev_open` would take
        // the instance lock again).
        #[cfg(dmn_ops_lock)]
        let open = bindings::netif_open;
        #[cfg(not(dmn_ops_lock))]
        let open = bindings::dev_open;
        // SAFETY: the device is allocated and its ops locks are held (checked);
        // no extack.
        to_result(unsafe { open(self.as_raw(), core::ptr::null_mut()) })
    }

    /// Takes the device down (`dev_close`), with its ops locks held.
    pub(crate) fn close(&self, lock: &OpsLock<'_>) -> Result {
        lock.check(self)?;
        // As in `open`.
        #[cfg(dmn_ops_lock)]
        let close = bindings::netif_close;
        #[cfg(not(dmn_ops_lock))]
        let close = bindings::dev_close;
        // SAFETY: the device is allocated and its ops locks are held (checked).
        unsafe { close(self.as_raw()) };
        Ok(())
    }

    /// The private area every device of [`NetDevAlloc`] has.
    fn dev_priv(&self) -> *mut DevPriv {
        // SAFETY: the device is allocated by `NetDevAlloc` (type invariant), whose
        // private area is a `DevPriv`.
        unsafe { bindings::dmn_netdev_priv(self.as_raw()).cast::<DevPriv>() }
    }

    /// The other device of its pair (see [`NetDevPair`]), if any.
    pub(crate) fn peer(&self) -> Option<&NetDev> {
        // SAFETY: `dev_priv` is our `DevPriv` (type invariant); `peer` is set only
        // by `NetDevPair`, which unregisters both devices before freeing either, so
        // while `self` can be reached (a callback or the pair's owner) the peer is
        // an allocated `NetDevAlloc` device.
        unsafe {
            let peer = (*self.dev_priv()).peer;
            (!peer.is_null()).then(|| NetDev::from_raw(peer))
        }
    }

    /// The driver data of a device of driver `T` (its callbacks get the same
    /// `&T::Priv`), or `None` if `T` did not make the device: how a callback
    /// of one device reaches the data of its pair's other device.
    pub(crate) fn data<T: NetDevOps>(&self) -> Option<&T::Priv> {
        // SAFETY: `dev_priv` is our `DevPriv` (type invariant), written once
        // before registration.
        let owner = unsafe { (*self.dev_priv()).owner };
        // SAFETY: `owner` is the `TypeId` of the `T` whose `NetDevAlloc<T>` made
        // the device (`DevPriv`), so the private area holds an `Arc<T::Priv>`;
        // the device, and so the data, outlives `&self` (type invariant).
        (owner == TypeId::of::<T>()).then(|| unsafe { priv_of::<T>(self.as_raw()) })
    }

    /// The parent device, which NIC DMA addresses belong to.
    pub(crate) fn dma_dev(&self) -> super::dma::DmaDev<'_> {
        // SAFETY: `NetDevAlloc` sets a platform parent before registering, and the
        // parent outlives the net device (type invariant).
        unsafe { super::dma::DmaDev::from_raw(bindings::dmn_netdev_parent(self.as_raw())) }
    }

    /// Whether a memory provider (devmem or io_uring) is set on RX queue `idx`.
    pub(crate) fn rxq_has_provider(&self, idx: u32) -> bool {
        // SAFETY: the device is allocated; the helper range-checks `idx` and reads
        // the queue's provider under the ops locks (callers' context) or racily for
        // a hint.
        unsafe { bindings::dmn_rxq_has_provider(self.as_raw(), idx) }
    }

    /// Whether userspace set the RSS indirection table (then it is kept as is).
    pub(crate) fn rxfh_configured(&self) -> bool {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_netif_rxfh_configured(self.as_raw()) }
    }

    /// The features on (`dev->features`, `ethtool -k`).
    fn features(&self) -> u64 {
        // SAFETY: the device is allocated; a plain read of a field the core
        // changes under rtnl (a racing reader sees old or new).
        unsafe { core::ptr::addr_of!((*self.as_raw()).features).read_volatile() }
    }

    /// Whether ntuple filters are enabled (`ethtool -K ntuple`).
    pub(crate) fn ntuple_enabled(&self) -> bool {
        self.features() & netif_f(bindings::NETIF_F_NTUPLE_BIT) != 0
    }

    /// Whether the receive checksum engine is on (`ethtool -K rx-checksumming`).
    pub(crate) fn rx_csum_enabled(&self) -> bool {
        self.features() & netif_f(bindings::NETIF_F_RXCSUM_BIT) != 0
    }

    /// Whether receive coalescing is on (`ethtool -K rx-gro-hw`).
    pub(crate) fn gro_hw_enabled(&self) -> bool {
        self.features() & feature_gro_hw() != 0
    }

    /// Resets the header-split configuration the core holds to a new
    /// device's (7.2: what it reports, compares rings requests with, and
    /// holds bindings to): tcp-data-split unset, threshold `thresh`, as a
    /// driver sets its default (fbnic, bnxt); the core of 6.12 keeps none.
    /// Under the ops locks, or before the device is registered.
    pub(crate) fn reset_core_hds(&self, thresh: u32) {
        // SAFETY: the device is allocated (type invariant); callers hold the
        // ops locks or the device is not registered yet.
        unsafe { reset_core_hds(self.as_raw(), thresh) }
    }

    /// Whether the device is administratively up.
    pub(crate) fn is_running(&self) -> bool {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_netif_running(self.as_raw()) }
    }

    /// Counts a received frame lost before it reached a queue (the core's
    /// `rx_dropped`, which `ip -s link` shows).
    pub(crate) fn core_rx_dropped_inc(&self) {
        // SAFETY: the device is allocated (type invariant); the per-CPU
        // counter may be bumped from any context.
        unsafe { bindings::dmn_netdev_core_rx_dropped_inc(self.as_raw()) }
    }

    /// Whether the carrier is on.
    pub(crate) fn carrier_ok(&self) -> bool {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_netif_carrier_ok(self.as_raw()) }
    }

    /// Turns the carrier on.
    pub(crate) fn carrier_on(&self) {
        // SAFETY: the device is allocated (type invariant); callable from any context.
        unsafe { bindings::netif_carrier_on(self.as_raw()) }
    }

    /// Turns the carrier off.
    pub(crate) fn carrier_off(&self) {
        // SAFETY: as above.
        unsafe { bindings::netif_carrier_off(self.as_raw()) }
    }

    /// RX queues allocated (the most that can be active).
    pub(crate) fn num_rx_queues(&self) -> u32 {
        // SAFETY: the device is allocated; the field is fixed at allocation.
        unsafe { (*self.as_raw()).num_rx_queues }
    }

    /// TX queues allocated.
    pub(crate) fn num_tx_queues(&self) -> u32 {
        // SAFETY: the device is allocated; the field is fixed at allocation.
        unsafe { (*self.as_raw()).num_tx_queues }
    }

    /// Active RX queues.
    pub(crate) fn real_num_rx_queues(&self) -> u32 {
        // SAFETY: the device is allocated; a plain read of a field the core
        // changes under rtnl (a racing reader sees old or new).
        unsafe { core::ptr::addr_of!((*self.as_raw()).real_num_rx_queues).read_volatile() }
    }

    /// Active TX queues.
    pub(crate) fn real_num_tx_queues(&self) -> u32 {
        // SAFETY: as in `real_num_rx_queues`.
        unsafe { core::ptr::addr_of!((*self.as_raw()).real_num_tx_queues).read_volatile() }
    }

    /// Changes the active queue counts; from `set_channels` (rtnl held: see
    /// `EthtoolOps`, which asks the core for rtnl there).
    pub(crate) fn set_real_num_queues(&self, tx: u32, rx: u32) -> Result {
        if tx == 0 || rx == 0 || tx > self.num_tx_queues() || rx > self.num_rx_queues() {
            return Err(EINVAL);
        }
        // SAFETY: the device is allocated; the counts are in range; ethtool's
        // `set_channels` runs under rtnl.
        to_result(unsafe { bindings::netif_set_real_num_queues(self.as_raw(), tx, rx) })
    }

    /// Stops TX queue `idx` (ring full).
    pub(crate) fn txq_stop(&self, idx: u32) {
        if idx < self.real_num_tx_queues() {
            // SAFETY: `idx` is a valid TX queue of this allocated device.
            unsafe { bindings::dmn_txq_stop(self.as_raw(), idx) }
        }
    }

    /// Wakes TX queue `idx` if it was stopped.
    pub(crate) fn txq_wake(&self, idx: u32) {
        if idx < self.real_num_tx_queues() {
            // SAFETY: as above.
            unsafe { bindings::dmn_txq_wake(self.as_raw(), idx) }
        }
    }

    /// Whether TX queue `idx` is stopped.
    pub(crate) fn txq_stopped(&self, idx: u32) -> bool {
        // SAFETY: as above, range checked first.
        idx < self.real_num_tx_queues() && unsafe { bindings::dmn_txq_stopped(self.as_raw(), idx) }
    }

    /// Starts all TX queues (on open).
    pub(crate) fn tx_start_all(&self) {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_tx_start_all(self.as_raw()) }
    }

    /// Stops all TX queues (on stop).
    pub(crate) fn tx_stop_all(&self) {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::netif_tx_stop_all_queues(self.as_raw()) }
    }

    /// Restarts RX queue `idx` the way the core does on bind and unbind: new
    /// memory from the queue ops, stop, start on it, old memory freed.
    pub(crate) fn restart_rx_queue(&self, lock: &OpsLock<'_>, idx: u32) -> Result {
        lock.check(self)?;
        // SAFETY: the device is allocated, with our queue ops or none, and its
        // ops locks are held (checked).
        unsafe { super::queue_mgmt::restart_rx_queue(self.as_raw(), idx) }
    }
}

/// The locks one device's control operations run under: rtnl, and on kernels
/// with ops-locked devices the device's instance lock. Held while this lives.
///
/// # Invariants
///
/// `dev`'s ops locks were taken by [`NetDev::lock_ops`] and are released on drop.
pub(crate) struct OpsLock<'a> {
    dev: &'a NetDev,
}

impl OpsLock<'_> {
    /// Fails unless this guard holds `dev`'s locks.
    fn check(&self, dev: &NetDev) -> Result {
        if core::ptr::eq(self.dev, dev) {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }
}

impl Drop for OpsLock<'_> {
    fn drop(&mut self) {
        // SAFETY: taken by `lock_ops` on this device (type invariant).
        unsafe { bindings::dmn_netdev_ops_unlock(self.dev.as_raw()) };
    }
}

/// What a device's private area holds.
#[repr(C)]
pub(super) struct DevPriv {
    /// `Arc<T::Priv>` from `Arc::into_raw`.
    pub(super) data: *const c_void,
    /// The other device of a [`NetDevPair`], or null.
    peer: *mut bindings::net_device,
    /// The `T` of the `NetDevAlloc<T>` (or link kind) that made the device
    /// ([`NetDev::data`]).
    owner: TypeId,
    /// A link device's `ethtool_ops` copy (`KBox::into_raw`), freed by its
    /// destructor; null for [`NetDevAlloc`]'s, which keeps its own.
    pub(super) owned_ethtool_ops: *mut bindings::ethtool_ops,
}

/// Returns the `Priv` a device's private area holds.
///
/// # Safety
///
/// `dev` must have been allocated by [`NetDevAlloc<T>`] (this `T`) and not yet
/// freed; the reference must not outlive it.
pub(super) unsafe fn priv_of<'a, T: NetDevOps>(dev: *mut bindings::net_device) -> &'a T::Priv {
    // SAFETY: the private area of a `NetDevAlloc<T>` device holds an
    // `Arc<T::Priv>` from `Arc::into_raw`, released only after the device is
    // freed, so the pointee lives as long as the device.
    unsafe {
        let slot = bindings::dmn_netdev_priv(dev).cast::<DevPriv>();
        &*(*slot).data.cast::<T::Priv>()
    }
}

/// Settings of a new device.
pub(crate) struct NetDevConfig<'a> {
    /// Exact interface name, e.g. `dmnic0`.
    pub(crate) name: &'a CStr,
    /// TX queues allocated.
    pub(crate) tx_queues: u32,
    /// RX queues allocated.
    pub(crate) rx_queues: u32,
    /// TX and RX queues in use at registration (`real_num_*_queues`): at
    /// least 1, at most the allocated counts.
    pub(crate) active_queues: u32,
    /// Smallest MTU accepted.
    pub(crate) min_mtu: u32,
    /// Largest MTU accepted.
    pub(crate) max_mtu: u32,
    /// Feature flags (`NETIF_F_*`) advertised and enabled.
    pub(crate) features: u64,
    /// Feature flags advertised but off until `ethtool -K` turns them on.
    pub(crate) offered_features: u64,
    /// Whether the device sends from device memory (devmem TX: it reads
    /// net_iov frags by bus address), on kernels that have devmem TX.
    pub(crate) devmem_tx: bool,
    /// Whether ntuple rules naming an RSS context add their queue to the
    /// table's entry (`cap_rss_rxnfc_adds`; else the core refuses a nonzero
    /// queue in such a rule).
    pub(crate) rss_rxnfc_adds: bool,
}

/// An allocated (and maybe registered) net device; unregistered and freed on drop.
///
/// # Invariants
///
/// `ptr` is a device from `alloc_netdev_mqs()` with `T`'s ops, a parent device
/// that outlives it, and a [`DevPriv`] private area holding an `Arc<T::Priv>`;
/// `registered` says whether `register_netdev()` succeeded and no unregister
/// happened since; the device's `ethtool_ops`, if any, is `ethtool_ops`.
pub(crate) struct NetDevAlloc<T: NetDevOps> {
    ptr: NonNull<bindings::net_device>,
    registered: bool,
    /// The device's debugfs queue-restart knob, if added; removed first.
    knob: Option<RestartKnob>,
    /// The device's `ethtool_ops` (`dev->ethtool_ops`); freed after the device.
    ethtool_ops: Option<KBox<bindings::ethtool_ops>>,
    _t: PhantomData<T>,
}

// SAFETY: the handle only hands out `&NetDev` (thread safe) and unregisters or
// frees through functions that may run on any thread.
unsafe impl<T: NetDevOps> Send for NetDevAlloc<T> {}
// SAFETY: as above.
unsafe impl<T: NetDevOps> Sync for NetDevAlloc<T> {}

impl<T: NetDevOps> NetDevAlloc<T> {
    /// Allocates an Ethernet device under `parent`, not yet registered.
    ///
    /// `parent` must outlive the device: owners keep it until after the drop.
    pub(crate) fn new(
        parent: &PlatformDevice,
        cfg: &NetDevConfig<'_>,
        vtables: Vtables<T>,
        data: Arc<T::Priv>,
    ) -> Result<Self> {
        let priv_size = i32::try_from(core::mem::size_of::<DevPriv>()).map_err(|_| EINVAL)?;
        if cfg.active_queues == 0 {
            return Err(EINVAL);
        }
        // SAFETY: `name` is NUL-terminated and copied by the call; `ether_setup` is the
        // core's own setup function.
        let raw = unsafe {
            bindings::alloc_netdev_mqs(
                priv_size,
                cfg.name.as_char_ptr().cast(),
                bindings::NET_NAME_USER as u8,
                Some(bindings::ether_setup),
                cfg.tx_queues,
                cfg.rx_queues,
            )
        };
        let ptr = NonNull::new(raw).ok_or(ENOMEM)?;
        // SAFETY: a fresh device, private area of `DevPriv`'s size (zeroed),
        // not registered.
        let ethtool_ops = match unsafe { init_device(raw, parent, cfg, vtables, data, false) } {
            Ok(ops) => ops,
            Err(e) => {
                // SAFETY: allocated above, never registered, private area unused
                // (`init_device` writes it only on success).
                unsafe { bindings::free_netdev(raw) };
                return Err(e);
            }
        };
        // SAFETY: as above; the link devices of `link.rs` get theirs from
        // the core.
        unsafe { bindings::dmn_eth_hw_addr_random(raw) };
        // INVARIANT: allocated with `T`'s ops, a parent, and an `Arc<T::Priv>`.
        Ok(Self {
            ptr,
            registered: false,
            knob: None,
            ethtool_ops,
            _t: PhantomData,
        })
    }

    /// Adds `restart_rx_queue` to the device's directory `dir` (see
    /// [`RestartKnob`]); it goes when the device is unregistered or dropped.
    pub(crate) fn add_restart_knob(&mut self, dir: &DeviceDir) {
        // SAFETY: a device of ours that stays allocated while `self.knob`
        // exists: `unregister` and `drop` remove the knob first.
        self.knob = Some(unsafe { RestartKnob::new(dir, self.ptr.as_ptr()) });
    }

    /// The device.
    pub(crate) fn dev(&self) -> &NetDev {
        // SAFETY: allocated by us and allocated while `self` exists (type invariant).
        unsafe { NetDev::from_raw(self.ptr.as_ptr()) }
    }

    /// Registers the device (takes rtnl).
    pub(crate) fn register(&mut self) -> Result {
        if self.registered {
            return Err(EBUSY);
        }
        // SAFETY: the device is fully set up by `new` and not registered.
        to_result(unsafe { bindings::register_netdev(self.ptr.as_ptr()) })?;
        // INVARIANT: registration succeeded.
        self.registered = true;
        Ok(())
    }

    /// Unregisters the device (takes rtnl); it stays allocated until drop.
    pub(crate) fn unregister(&mut self) {
        // The knob goes first (waiting for a write in progress).
        self.knob = None;
        if self.registered {
            // SAFETY: registered and not yet unregistered (type invariant).
            unsafe { bindings::unregister_netdev(self.ptr.as_ptr()) };
            // INVARIANT: no longer registered.
            self.registered = false;
        }
    }
}

impl<T: NetDevOps> Drop for NetDevAlloc<T> {
    fn drop(&mut self) {
        self.unregister();
        let raw = self.ptr.as_ptr();
        // SAFETY: unregistered, so no callback runs any more; the private area holds
        // the `Arc` put there by `new`, read before the device memory is freed and
        // reclaimed exactly once, after (the device may still point into the data,
        // e.g. at NAPIs, until it is freed).
        let data = unsafe {
            let data = (*bindings::dmn_netdev_priv(raw).cast::<DevPriv>()).data;
            bindings::free_netdev(raw);
            Arc::from_raw(data.cast::<T::Priv>())
        };
        drop(data);
        // The device no longer points at its `ethtool_ops`.
        drop(self.ethtool_ops.take());
    }
}

/// Sets up a device allocated with a [`DevPriv`] private area (by
/// [`NetDevAlloc`], or by the core for a link kind): queue counts, the
/// private data, parent, ops tables, MTU limits and features. Returns the
/// device's `ethtool_ops` copy, or keeps it in the private area for the
/// device's destructor (`own_ethtool`).
///
/// # Safety
///
/// `raw` is allocated, not registered, with a zeroed private area of
/// `DevPriv`'s size and `cfg`'s queue counts; `parent` outlives it; a kept
/// `ethtool_ops` copy and the data are released by the device's destructor.
pub(super) unsafe fn init_device<T: NetDevOps>(
    raw: *mut bindings::net_device,
    parent: &PlatformDevice,
    cfg: &NetDevConfig<'_>,
    vtables: Vtables<T>,
    data: Arc<T::Priv>,
    own_ethtool: bool,
) -> Result<Option<KBox<bindings::ethtool_ops>>> {
    let active = cfg.active_queues;
    // SAFETY: allocated (the caller's guarantee).
    let (txqs, rxqs) = unsafe { ((*raw).num_tx_queues, (*raw).num_rx_queues) };
    if cfg.tx_queues != txqs || cfg.rx_queues != rxqs {
        return Err(EINVAL);
    }
    if active == 0 || active > cfg.tx_queues || active > cfg.rx_queues {
        return Err(EINVAL);
    }
    let mut ethtool_ops = vtables.ethtool_copy(cfg)?;
    // SAFETY: `raw` is allocated with at least `active` queues each way
    // (checked above) and not registered, so no lock is needed.
    to_result(unsafe { bindings::netif_set_real_num_queues(raw, active, active) })?;
    let ops_ptr = ethtool_ops
        .as_deref()
        .map_or(core::ptr::null(), core::ptr::from_ref);
    let owned_ethtool_ops = if own_ethtool {
        ethtool_ops
            .take()
            .map_or(core::ptr::null_mut(), KBox::into_raw)
    } else {
        core::ptr::null_mut()
    };
    let data = Arc::into_raw(data).cast::<c_void>();
    // SAFETY: `raw` is a fresh device with a zeroed `DevPriv` private area;
    // nothing else sees it before registration. The tables are `T`'s (the
    // `Vtables<T>` type says so), matching the `Arc<T::Priv>` stored here;
    // the `ethtool_ops` copy lives until after the device is freed (kept by
    // the caller or the destructor).
    unsafe {
        bindings::dmn_netdev_priv(raw)
            .cast::<DevPriv>()
            .write(DevPriv {
                data,
                peer: core::ptr::null_mut(),
                owner: TypeId::of::<T>(),
                owned_ethtool_ops,
            });
        bindings::dmn_netdev_set_parent(raw, parent.as_raw_device());
        vtables.install(raw, ops_ptr.as_ref());
        (*raw).min_mtu = cfg.min_mtu;
        (*raw).max_mtu = cfg.max_mtu;
        (*raw).hw_features = cfg.features | cfg.offered_features;
        (*raw).features = cfg.features;
        if cfg.devmem_tx {
            bindings::dmn_netdev_init_netmem_tx(raw);
        }
        if T::HAS_XDP_SETUP {
            // What the trampolines of `ndo_bpf` and the driver's receive
            // path give, and the RX metadata of its frames.
            (*raw).xdp_features = super::xdp::XDP_FEATURES;
            (*raw).xdp_metadata_ops = &super::xdp::XDP_METADATA_OPS;
        }
    }
    Ok(ethtool_ops)
}

/// Resets `dev`'s header-split configuration in the core (see
/// [`NetDev::reset_core_hds`]). Both copies: an ethtool netlink request in
/// flight swaps `cfg_pending` in on success.
///
/// # Safety
///
/// `dev` is allocated; the caller holds its ops locks or it is not registered.
pub(super) unsafe fn reset_core_hds(dev: *mut bindings::net_device, thresh: u32) {
    #[cfg(dmn_hds_thresh)]
    {
        // SAFETY: as the caller guarantees; the core allocates both with the
        // device.
        unsafe {
            (*(*dev).cfg).hds_thresh = thresh;
            (*(*dev).cfg_pending).hds_thresh = thresh;
        }
    }
    #[cfg(dmn_core_hds)]
    {
        let unset = bindings::DMN_TCP_DATA_SPLIT_UNKNOWN as u8;
        // SAFETY: as above.
        unsafe {
            (*(*dev).cfg).hds_config = unset;
            (*(*dev).cfg_pending).hds_config = unset;
        }
    }
    #[cfg(not(dmn_hds_thresh))]
    let _ = thresh;
    #[cfg(not(any(dmn_hds_thresh, dmn_core_hds)))]
    let _ = dev;
}

/// Makes two link devices each other's [`NetDev::peer`].
///
/// # Safety
///
/// Both set up by [`init_device`], neither registered; they are unregistered
/// together (one batch) before either is freed.
pub(super) unsafe fn set_peers(a: *mut bindings::net_device, b: *mut bindings::net_device) {
    // SAFETY: `DevPriv` private areas (set up); not registered, so no
    // callback reads them meanwhile.
    unsafe {
        (*bindings::dmn_netdev_priv(a).cast::<DevPriv>()).peer = b;
        (*bindings::dmn_netdev_priv(b).cast::<DevPriv>()).peer = a;
    }
}

/// Makes a link device forget its peer.
///
/// # Safety
///
/// Set up by [`init_device`]; no callback of it runs (its registration
/// failed, or it is about to be unregistered with nothing sent to it yet).
pub(super) unsafe fn unset_peer(a: *mut bindings::net_device) {
    // SAFETY: a `DevPriv` private area nothing reads concurrently.
    unsafe { (*bindings::dmn_netdev_priv(a).cast::<DevPriv>()).peer = core::ptr::null_mut() };
}

/// Two devices wired to each other (each is the other's [`NetDev::peer`]).
///
/// Both are registered on creation; on drop both are unregistered before either
/// is freed, which is what makes `peer` safe to follow from callbacks.
pub(crate) struct NetDevPair<T: NetDevOps> {
    devs: [NetDevAlloc<T>; 2],
}

impl<T: NetDevOps> NetDevPair<T> {
    /// Device 0 or 1.
    pub(crate) fn dev(&self, i: usize) -> &NetDev {
        self.devs[i & 1].dev()
    }

    /// Wires two allocated, unregistered devices together and registers them;
    /// on failure gives both back, unregistered and naming no peer (either
    /// may then be dropped first).
    #[allow(clippy::type_complexity)]
    pub(crate) fn new(
        mut a: NetDevAlloc<T>,
        mut b: NetDevAlloc<T>,
    ) -> core::result::Result<Self, (Error, NetDevAlloc<T>, NetDevAlloc<T>)> {
        if a.registered || b.registered {
            return Err((EINVAL, a, b));
        }
        Self::wire(&a, &b, true);
        if let Err(e) = a.register() {
            Self::wire(&a, &b, false);
            return Err((e, a, b));
        }
        if let Err(e) = b.register() {
            a.unregister();
            Self::wire(&a, &b, false);
            return Err((e, a, b));
        }
        Ok(Self { devs: [a, b] })
    }

    /// Makes each device the other's peer, or neither's; only while neither
    /// is registered (else nothing changes).
    fn wire(a: &NetDevAlloc<T>, b: &NetDevAlloc<T>, on: bool) {
        if a.registered || b.registered {
            return;
        }
        let (to_b, to_a) = if on {
            (b.ptr.as_ptr(), a.ptr.as_ptr())
        } else {
            (core::ptr::null_mut(), core::ptr::null_mut())
        };
        // SAFETY: both devices are allocated by us and not registered (checked;
        // `unregister` waits for running callbacks), so no callback reads the
        // private areas while they are written.
        unsafe {
            (*a.dev().dev_priv()).peer = to_b;
            (*b.dev().dev_priv()).peer = to_a;
        }
    }

    /// Unregisters both devices (idempotent); they stay allocated until drop.
    pub(crate) fn unregister(&mut self) {
        self.devs[0].unregister();
        self.devs[1].unregister();
    }
}

impl<T: NetDevOps> Drop for NetDevPair<T> {
    fn drop(&mut self) {
        // Both unregistered first; the allocations are freed as fields drop after.
        self.unregister();
    }
}

/// The `NETIF_F_*` flag of feature bit `bit` (`netdev_features.h`'s `__NETIF_F`).
const fn netif_f(bit: u32) -> u64 {
    1 << bit
}

/// The feature flags devmemnic devices advertise: SG and checksum offload (the
/// wire is virtual), TSO (the receiving side keeps super-frames whole, like
/// hardware GRO), flow steering and hashing.
pub(crate) fn default_features() -> u64 {
    netif_f(bindings::NETIF_F_SG_BIT)
        | netif_f(bindings::NETIF_F_HW_CSUM_BIT)
        | netif_f(bindings::NETIF_F_RXCSUM_BIT)
        | netif_f(bindings::NETIF_F_HIGHDMA_BIT)
        | netif_f(bindings::NETIF_F_TSO_BIT)
        | netif_f(bindings::NETIF_F_TSO6_BIT)
        | netif_f(bindings::NETIF_F_NTUPLE_BIT)
        | netif_f(bindings::NETIF_F_RXHASH_BIT)
}

/// Receive coalescing in the device (`NETIF_F_GRO_HW`, `rx-gro-hw`).
pub(crate) fn feature_gro_hw() -> u64 {
    netif_f(bindings::NETIF_F_GRO_HW_BIT)
}
