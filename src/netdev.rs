// SPDX-License-Identifier: GPL-2.0

//! Ethernet net devices: allocation, registration, and `net_device_ops` from a trait.
//!
//! A driver implements [`NetDevOps`]; [`NetDevAlloc`] allocates a multi-queue
//! Ethernet device whose private area holds an `Arc<T::Priv>`, points its ops
//! at trampolines that hand each callback a [`NetDev`] and `&T::Priv`, and
//! registers it. Unregistration and freeing happen in [`NetDevAlloc`]'s drop,
//! or earlier with [`NetDevAlloc::unregister`] when several devices must all be
//! unregistered before any is freed (a pair whose halves reference each other).

use crate::{bindings, platform::PlatformDevice, skb::SkBuff};
use core::{ffi::c_void, marker::PhantomData, ptr::NonNull};
use kernel::{
    build_error,
    error::{from_result, to_result},
    prelude::*,
    str::CStr,
    sync::Arc,
    types::{ForeignOwnable, Opaque},
};

/// A net device seen from inside one of its callbacks or its owner.
///
/// # Invariants
///
/// The wrapped `net_device` is allocated and not freed for as long as the
/// reference exists.
#[repr(transparent)]
pub(crate) struct NetDev(Opaque<bindings::net_device>);

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
    /// `ptr` must point to an allocated `net_device` that stays allocated for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a NetDev {
        // SAFETY: `NetDev` is a transparent wrapper; the caller guarantees validity.
        unsafe { &*ptr.cast::<NetDev>() }
    }

    /// The raw device, for other abstractions.
    pub(crate) fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// Sets the MTU field; called from `change_mtu` under rtnl.
    pub(crate) fn set_mtu_field(&self, mtu: u32) {
        // SAFETY: the device is allocated; the core calls `ndo_change_mtu` under rtnl
        // and expects the driver to store the new value.
        unsafe { (*self.as_raw()).mtu = mtu };
    }

    /// Brings the device up (`dev_open`).
    pub(crate) fn open(&self, _rtnl: &Rtnl) -> Result {
        // SAFETY: the device is registered (callers own it) and rtnl is held.
        to_result(unsafe { bindings::dev_open(self.as_raw(), core::ptr::null_mut()) })
    }

    /// Takes the device down (`dev_close`).
    pub(crate) fn close(&self, _rtnl: &Rtnl) {
        // SAFETY: the device is registered and rtnl is held.
        unsafe { bindings::dev_close(self.as_raw()) }
    }

    /// The other device of its pair (see [`NetDevPair`]), if any.
    pub(crate) fn peer(&self) -> Option<&NetDev> {
        // SAFETY: every device of ours has a `DevPriv` private area; `peer` is set
        // only by `NetDevPair`, which unregisters both devices before freeing
        // either, so while `self` can be reached (a callback or the pair's owner)
        // the peer is allocated.
        unsafe {
            let slot = bindings::dmn_netdev_priv(self.as_raw()).cast::<DevPriv>();
            let peer = (*slot).peer;
            (!peer.is_null()).then(|| NetDev::from_raw(peer))
        }
    }

    /// The parent device, which NIC DMA addresses belong to.
    pub(crate) fn dma_dev(&self) -> crate::dma::DmaDev<'_> {
        // SAFETY: every device of ours has its platform parent set before it is
        // registered, and the parent outlives the net device.
        unsafe { crate::dma::DmaDev::from_raw(bindings::dmn_netdev_parent(self.as_raw())) }
    }

    /// Whether a memory provider (a devmem binding) is set on RX queue `idx`.
    pub(crate) fn rxq_has_provider(&self, idx: u32) -> bool {
        // SAFETY: the device is allocated; the helper range-checks `idx` and reads
        // the queue's provider under rtnl (callers' context) or racily for a hint.
        unsafe { bindings::dmn_rxq_has_provider(self.as_raw(), idx) }
    }

    /// Whether userspace set the RSS indirection table (then it is kept as is).
    pub(crate) fn rxfh_configured(&self) -> bool {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_netif_rxfh_configured(self.as_raw()) }
    }

    /// Whether ntuple filters are enabled (`ethtool -K ntuple`).
    pub(crate) fn ntuple_enabled(&self) -> bool {
        // SAFETY: the device is allocated (type invariant).
        unsafe {
            bindings::dmn_netdev_features(self.as_raw()) & bindings::dmn_feature_ntuple() != 0
        }
    }

    /// Whether the device is administratively up.
    pub(crate) fn is_running(&self) -> bool {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_netif_running(self.as_raw()) }
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

    /// Active RX queues.
    pub(crate) fn real_num_rx_queues(&self) -> u32 {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_real_num_rx_queues(self.as_raw()) }
    }

    /// Active TX queues.
    pub(crate) fn real_num_tx_queues(&self) -> u32 {
        // SAFETY: the device is allocated (type invariant).
        unsafe { bindings::dmn_real_num_tx_queues(self.as_raw()) }
    }

    /// Changes the active queue counts (under rtnl, as ethtool calls do).
    pub(crate) fn set_real_num_queues(&self, tx: u32, rx: u32) -> Result {
        // SAFETY: the device is allocated; ethtool callbacks run under rtnl.
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
}

/// The rtnl lock, held while this guard lives.
pub(crate) struct Rtnl {
    _private: (),
}

impl Rtnl {
    /// Takes rtnl (sleeps).
    pub(crate) fn lock() -> Self {
        // SAFETY: process context (callers may sleep); released on drop.
        unsafe { bindings::dmn_rtnl_lock() };
        Self { _private: () }
    }
}

impl Drop for Rtnl {
    fn drop(&mut self) {
        // SAFETY: taken by `lock`.
        unsafe { bindings::dmn_rtnl_unlock() };
    }
}

/// Per-device 64-bit counters reported through `ndo_get_stats64`.
#[derive(Default, Clone, Copy)]
pub(crate) struct LinkStats {
    /// Frames received.
    pub(crate) rx_packets: u64,
    /// Bytes received.
    pub(crate) rx_bytes: u64,
    /// Frames dropped on receive.
    pub(crate) rx_dropped: u64,
    /// Frames sent.
    pub(crate) tx_packets: u64,
    /// Bytes sent.
    pub(crate) tx_bytes: u64,
    /// Frames dropped on transmit.
    pub(crate) tx_dropped: u64,
}

/// Counters of one RX queue for the netdev netlink family's qstats.
#[derive(Default, Clone, Copy)]
pub(crate) struct QueueRxStats {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) alloc_fail: u64,
    pub(crate) hw_drops: u64,
}

/// Counters of one TX queue for qstats.
#[derive(Default, Clone, Copy)]
pub(crate) struct QueueTxStats {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) hw_drops: u64,
    pub(crate) stop: u64,
}

/// What `start_xmit` did with a frame.
pub(crate) enum TxOutcome {
    /// The frame was taken (queued or dropped and counted).
    Done,
    /// The queue is full: the core keeps the frame and retries later.
    Busy(SkBuff),
}

/// Net device callbacks; optional ones follow `#[vtable]`'s `HAS_*` rules.
#[vtable]
pub(crate) trait NetDevOps: Sized + 'static {
    /// The driver's per-device data, kept in the private area as an `Arc`.
    type Priv: Send + Sync;

    /// `ndo_open`: the device goes up.
    fn open(dev: &NetDev, data: &Self::Priv) -> Result;

    /// `ndo_stop`: the device goes down.
    fn stop(dev: &NetDev, data: &Self::Priv) -> Result;

    /// `ndo_start_xmit`: one frame to send on TX queue `skb.queue_mapping()`.
    fn start_xmit(dev: &NetDev, data: &Self::Priv, skb: SkBuff) -> TxOutcome;

    /// `ndo_get_stats64`.
    fn get_stats64(_dev: &NetDev, _data: &Self::Priv) -> LinkStats {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_change_mtu`: validate and store (with [`NetDev::set_mtu_field`]).
    fn change_mtu(_dev: &NetDev, _data: &Self::Priv, _mtu: u32) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// qstats of active RX queue `idx`.
    fn queue_stats_rx(dev: &NetDev, data: &Self::Priv, idx: u32) -> QueueRxStats;

    /// qstats of active TX queue `idx`.
    fn queue_stats_tx(dev: &NetDev, data: &Self::Priv, idx: u32) -> QueueTxStats;

    /// Counters not in any active queue (from queues since deactivated).
    fn base_stats(dev: &NetDev, data: &Self::Priv) -> (QueueRxStats, QueueTxStats);
}

/// The queue-management API (`netdev_queue_mgmt_ops`): what
/// `netdev_rx_queue_restart()` uses to swap an RX queue's memory, for example
/// when a devmem binding attaches or detaches. Called under rtnl.
pub(crate) trait QueueMgmt: NetDevOps {
    /// Everything an RX queue needs to run (rings' buffers, pools).
    type QueueMem: Send;

    /// Builds complete new memory for RX queue `idx`, not yet in use.
    fn queue_mem_alloc(dev: &NetDev, data: &Self::Priv, idx: u32) -> Result<Self::QueueMem>;

    /// Frees memory the core no longer needs (old memory after a restart, or
    /// new memory after a failed one).
    fn queue_mem_free(dev: &NetDev, data: &Self::Priv, mem: Self::QueueMem);

    /// Stops RX queue `idx` and hands back its memory (if it had any).
    fn queue_stop(dev: &NetDev, data: &Self::Priv, idx: u32) -> Result<Option<Self::QueueMem>>;

    /// Starts RX queue `idx` on `mem`, taking it out of the slot on success.
    fn queue_start(
        dev: &NetDev,
        data: &Self::Priv,
        idx: u32,
        mem: &mut Option<Self::QueueMem>,
    ) -> Result;
}

struct QueueTable<T>(PhantomData<T>);

impl<T: QueueMgmt> QueueTable<T> {
    /// The core's per-queue memory holds one pointer: a boxed `T::QueueMem` or null.
    const MEM_SIZE: usize = core::mem::size_of::<*mut T::QueueMem>();

    /// # Safety
    ///
    /// `slot` is the core's `ndo_queue_mem_size` bytes, zeroed or written by us.
    unsafe fn take(slot: *mut c_void) -> Option<T::QueueMem> {
        // SAFETY: per the contract, the slot holds null or a pointer from
        // `KBox::into_raw`, which we take over and clear.
        unsafe {
            let p = slot.cast::<*mut T::QueueMem>();
            let raw = core::ptr::replace(p, core::ptr::null_mut());
            (!raw.is_null()).then(|| KBox::into_inner(KBox::from_raw(raw)))
        }
    }

    /// # Safety
    ///
    /// As for `take`; the slot must be empty.
    unsafe fn put(slot: *mut c_void, mem: T::QueueMem) -> Result {
        let b = KBox::new(mem, GFP_KERNEL)?;
        // SAFETY: per the contract, the slot is ours to write.
        unsafe { *slot.cast::<*mut T::QueueMem>() = KBox::into_raw(b) };
        Ok(())
    }

    /// # Safety
    ///
    /// Called by the core under rtnl with a live device of ours.
    unsafe extern "C" fn alloc(dev: *mut bindings::net_device, slot: *mut c_void, idx: i32) -> i32 {
        from_result(|| {
            // SAFETY: as the contract says.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            let mem = T::queue_mem_alloc(nd, data, u32::try_from(idx).map_err(|_| EINVAL)?)?;
            // SAFETY: the core hands a fresh, zeroed slot.
            unsafe { Self::put(slot, mem)? };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `alloc`.
    unsafe extern "C" fn free(dev: *mut bindings::net_device, slot: *mut c_void) {
        // SAFETY: the slot is one the core gave to `alloc` or `stop`; the device is
        // a live device of ours.
        let (mem, nd, data) =
            unsafe { (Self::take(slot), NetDev::from_raw(dev), priv_of::<T>(dev)) };
        if let Some(mem) = mem {
            T::queue_mem_free(nd, data, mem);
        }
    }

    /// # Safety
    ///
    /// As for `alloc`.
    unsafe extern "C" fn stop(dev: *mut bindings::net_device, slot: *mut c_void, idx: i32) -> i32 {
        from_result(|| {
            // SAFETY: as the contract says.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            if let Some(mem) = T::queue_stop(nd, data, u32::try_from(idx).map_err(|_| EINVAL)?)? {
                // SAFETY: the core hands a fresh, zeroed slot for the old memory.
                unsafe { Self::put(slot, mem)? };
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `alloc`.
    unsafe extern "C" fn start(dev: *mut bindings::net_device, slot: *mut c_void, idx: i32) -> i32 {
        from_result(|| {
            // SAFETY: as the contract says.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            // SAFETY: the slot is one `alloc` or `stop` filled.
            let mut mem = unsafe { Self::take(slot) };
            let r = T::queue_start(nd, data, u32::try_from(idx).map_err(|_| EINVAL)?, &mut mem);
            if let Some(m) = mem {
                // Not taken (start failed): back in the slot for `free`.
                // SAFETY: the slot was emptied by `take` above.
                unsafe { Self::put(slot, m)? };
            }
            r?;
            Ok(0)
        })
    }

    const OPS: bindings::netdev_queue_mgmt_ops = bindings::netdev_queue_mgmt_ops {
        ndo_queue_mem_size: Self::MEM_SIZE,
        ndo_queue_mem_alloc: Some(Self::alloc),
        ndo_queue_mem_free: Some(Self::free),
        ndo_queue_start: Some(Self::start),
        ndo_queue_stop: Some(Self::stop),
    };
}

/// The `netdev_queue_mgmt_ops` for `T` (used by [`netdev_ops_tables!`]).
pub(crate) const fn queue_mgmt_ops_of<T: QueueMgmt>() -> bindings::netdev_queue_mgmt_ops {
    QueueTable::<T>::OPS
}

struct StatTable<T>(PhantomData<T>);

impl<T: NetDevOps> StatTable<T> {
    fn put_rx(s: &QueueRxStats, out: &mut bindings::netdev_queue_stats_rx) {
        out.packets = s.packets;
        out.bytes = s.bytes;
        out.alloc_fail = s.alloc_fail;
        out.hw_drops = s.hw_drops;
    }

    fn put_tx(s: &QueueTxStats, out: &mut bindings::netdev_queue_stats_tx) {
        out.packets = s.packets;
        out.bytes = s.bytes;
        out.hw_drops = s.hw_drops;
        out.stop = s.stop;
    }

    /// # Safety
    ///
    /// Called by the core with a live device of ours and a writable `out`.
    unsafe extern "C" fn rx(
        dev: *mut bindings::net_device,
        idx: i32,
        out: *mut bindings::netdev_queue_stats_rx,
    ) {
        // SAFETY: as the function's contract says.
        let (nd, data, out) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *out) };
        Self::put_rx(&T::queue_stats_rx(nd, data, idx as u32), out);
    }

    /// # Safety
    ///
    /// As for `rx`.
    unsafe extern "C" fn tx(
        dev: *mut bindings::net_device,
        idx: i32,
        out: *mut bindings::netdev_queue_stats_tx,
    ) {
        // SAFETY: as the function's contract says.
        let (nd, data, out) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *out) };
        Self::put_tx(&T::queue_stats_tx(nd, data, idx as u32), out);
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

    const OPS: bindings::netdev_stat_ops = bindings::netdev_stat_ops {
        get_queue_stats_rx: Some(Self::rx),
        get_queue_stats_tx: Some(Self::tx),
        get_base_stats: Some(Self::base),
    };
}

/// The `netdev_stat_ops` for `T` (used by [`netdev_ops_tables!`]).
pub(crate) const fn stat_ops_of<T: NetDevOps>() -> bindings::netdev_stat_ops {
    StatTable::<T>::OPS
}

/// What a device's private area holds.
#[repr(C)]
struct DevPriv {
    /// `Arc<T::Priv>` in foreign form.
    data: *const c_void,
    /// The other device of a [`NetDevPair`], or null.
    peer: *mut bindings::net_device,
}

/// Returns the `Priv` a device's private area holds.
///
/// # Safety
///
/// `dev` must have been allocated by [`NetDevAlloc<T>`] and not yet freed.
pub(crate) unsafe fn priv_of<'a, T: NetDevOps>(dev: *mut bindings::net_device) -> &'a T::Priv {
    // SAFETY: the private area of a `NetDevAlloc<T>` device holds the foreign form
    // of an `Arc<T::Priv>`, released only after the device is unregistered.
    unsafe {
        let slot = bindings::dmn_netdev_priv(dev).cast::<DevPriv>();
        let arc = <Arc<T::Priv> as ForeignOwnable>::borrow((*slot).data);
        &*(&*arc as *const T::Priv)
    }
}

struct OpsTable<T>(PhantomData<T>);

impl<T: NetDevOps> OpsTable<T> {
    /// # Safety
    ///
    /// Called by the net core with a device allocated by `NetDevAlloc<T>`.
    unsafe extern "C" fn open(dev: *mut bindings::net_device) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            T::open(nd, data)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `open`.
    unsafe extern "C" fn stop(dev: *mut bindings::net_device) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            T::stop(nd, data)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the core with a live device of ours and an skb it hands over.
    unsafe extern "C" fn start_xmit(
        skb: *mut bindings::sk_buff,
        dev: *mut bindings::net_device,
    ) -> bindings::netdev_tx_t {
        // SAFETY: the core passes a live device of ours and ownership of `skb`.
        let (nd, data, skb) = unsafe {
            (
                NetDev::from_raw(dev),
                priv_of::<T>(dev),
                SkBuff::from_raw(skb),
            )
        };
        match T::start_xmit(nd, data, skb) {
            TxOutcome::Done => bindings::netdev_tx_NETDEV_TX_OK,
            TxOutcome::Busy(skb) => {
                // The core keeps ownership of a frame it gets back as busy.
                skb.into_raw();
                bindings::netdev_tx_NETDEV_TX_BUSY
            }
        }
    }

    /// # Safety
    ///
    /// Called by the core with a live device of ours and a writable `stats`.
    unsafe extern "C" fn get_stats64(
        dev: *mut bindings::net_device,
        stats: *mut bindings::rtnl_link_stats64,
    ) {
        // SAFETY: the core passes a live device of ours.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        let s = T::get_stats64(nd, data);
        // SAFETY: `stats` is valid for writes for the duration of the call.
        let out = unsafe { &mut *stats };
        out.rx_packets = s.rx_packets;
        out.rx_bytes = s.rx_bytes;
        out.rx_dropped = s.rx_dropped;
        out.tx_packets = s.tx_packets;
        out.tx_bytes = s.tx_bytes;
        out.tx_dropped = s.tx_dropped;
    }

    /// # Safety
    ///
    /// Called by the core under rtnl with a live device of ours.
    unsafe extern "C" fn change_mtu(dev: *mut bindings::net_device, mtu: i32) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            T::change_mtu(nd, data, u32::try_from(mtu).map_err(|_| EINVAL)?)?;
            Ok(0)
        })
    }

    const OPS: bindings::net_device_ops = {
        // SAFETY: all-zeroes is a valid `net_device_ops` (every callback absent).
        let mut ops: bindings::net_device_ops = unsafe { core::mem::zeroed() };
        ops.ndo_open = Some(Self::open);
        ops.ndo_stop = Some(Self::stop);
        ops.ndo_start_xmit = Some(Self::start_xmit);
        if T::HAS_GET_STATS64 {
            ops.ndo_get_stats64 = Some(Self::get_stats64);
        }
        if T::HAS_CHANGE_MTU {
            ops.ndo_change_mtu = Some(Self::change_mtu);
        }
        ops
    };
}

/// Where a device's ops tables live: statics, as the core keeps pointers to them.
pub(crate) trait OpsTables: NetDevOps {
    /// The `net_device_ops` of this driver.
    const NETDEV_OPS: &'static bindings::net_device_ops;
    /// The `ethtool_ops`, if any.
    const ETHTOOL_OPS: Option<&'static bindings::ethtool_ops>;
    /// The `netdev_stat_ops`.
    const STAT_OPS: &'static bindings::netdev_stat_ops;
    /// The `netdev_queue_mgmt_ops`.
    const QUEUE_MGMT_OPS: &'static bindings::netdev_queue_mgmt_ops;
}

/// Declares the static ops tables of a [`NetDevOps`] type.
#[macro_export]
macro_rules! netdev_ops_tables {
    ($t:ty) => {
        impl $crate::netdev::OpsTables for $t {
            const NETDEV_OPS: &'static $crate::bindings::net_device_ops = {
                static OPS: $crate::bindings::net_device_ops =
                    $crate::netdev::netdev_ops_of::<$t>();
                &OPS
            };
            const ETHTOOL_OPS: Option<&'static $crate::bindings::ethtool_ops> = {
                static OPS: $crate::bindings::ethtool_ops = $crate::ethtool::ethtool_ops_of::<$t>();
                Some(&OPS)
            };
            const STAT_OPS: &'static $crate::bindings::netdev_stat_ops = {
                static OPS: $crate::bindings::netdev_stat_ops = $crate::netdev::stat_ops_of::<$t>();
                &OPS
            };
            const QUEUE_MGMT_OPS: &'static $crate::bindings::netdev_queue_mgmt_ops = {
                static OPS: $crate::bindings::netdev_queue_mgmt_ops =
                    $crate::netdev::queue_mgmt_ops_of::<$t>();
                &OPS
            };
        }
    };
}

/// The `net_device_ops` for `T` (used by [`netdev_ops_tables!`]).
pub(crate) const fn netdev_ops_of<T: NetDevOps>() -> bindings::net_device_ops {
    OpsTable::<T>::OPS
}

/// Settings of a new device.
pub(crate) struct NetDevConfig<'a> {
    /// Exact interface name, e.g. `dmnic0`.
    pub(crate) name: &'a CStr,
    /// TX queues allocated.
    pub(crate) tx_queues: u32,
    /// RX queues allocated.
    pub(crate) rx_queues: u32,
    /// Smallest MTU accepted.
    pub(crate) min_mtu: u32,
    /// Largest MTU accepted.
    pub(crate) max_mtu: u32,
    /// Feature flags (`NETIF_F_*`) advertised and enabled.
    pub(crate) features: u64,
}

/// An allocated (and maybe registered) net device; unregistered and freed on drop.
///
/// # Invariants
///
/// `ptr` is a device from `alloc_netdev_mqs()` with `T`'s ops, whose private
/// area holds an `Arc<T::Priv>` in foreign form; `registered` says whether
/// `register_netdev()` succeeded and no unregister happened since.
pub(crate) struct NetDevAlloc<T: OpsTables> {
    ptr: NonNull<bindings::net_device>,
    registered: bool,
    /// The device's debugfs directory while it is registered.
    debugfs: Option<crate::debugfs::DevDir>,
    _t: PhantomData<T>,
}

// SAFETY: the handle only hands out `&NetDev` (thread safe) and unregisters or
// frees under rtnl through functions that may run on any thread.
unsafe impl<T: OpsTables> Send for NetDevAlloc<T> {}
// SAFETY: as above.
unsafe impl<T: OpsTables> Sync for NetDevAlloc<T> {}

impl<T: OpsTables> NetDevAlloc<T> {
    /// Allocates an Ethernet device under `parent`, not yet registered.
    pub(crate) fn new(
        parent: &PlatformDevice,
        cfg: &NetDevConfig<'_>,
        data: Arc<T::Priv>,
    ) -> Result<Self> {
        let priv_size = core::mem::size_of::<DevPriv>() as i32;
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
        // SAFETY: `raw` is a fresh device with a private area of `priv_size` bytes;
        // nothing else sees it before registration.
        unsafe {
            bindings::dmn_netdev_priv(raw)
                .cast::<DevPriv>()
                .write(DevPriv {
                    data: data.into_foreign(),
                    peer: core::ptr::null_mut(),
                });
            bindings::dmn_netdev_set_parent(raw, parent.as_raw_device());
            bindings::dmn_eth_hw_addr_random(raw);
            (*raw).netdev_ops = T::NETDEV_OPS;
            if let Some(ops) = T::ETHTOOL_OPS {
                (*raw).ethtool_ops = ops;
            }
            (*raw).stat_ops = T::STAT_OPS;
            (*raw).queue_mgmt_ops = T::QUEUE_MGMT_OPS;
            (*raw).min_mtu = cfg.min_mtu;
            (*raw).max_mtu = cfg.max_mtu;
            (*raw).hw_features = cfg.features;
            (*raw).features = cfg.features;
        }
        // INVARIANT: allocated with `T`'s ops and an `Arc<T::Priv>` in its private area.
        Ok(Self {
            ptr,
            registered: false,
            debugfs: None,
            _t: PhantomData,
        })
    }

    /// The device.
    pub(crate) fn dev(&self) -> &NetDev {
        // SAFETY: the device stays allocated while `self` exists (type invariant).
        unsafe { NetDev::from_raw(self.ptr.as_ptr()) }
    }

    /// Registers the device (takes rtnl).
    pub(crate) fn register(&mut self) -> Result {
        // SAFETY: the device is fully set up by `new` and not registered yet.
        to_result(unsafe { bindings::register_netdev(self.ptr.as_ptr()) })?;
        // INVARIANT: registration succeeded.
        self.registered = true;
        // SAFETY: registered with `T`'s queue management ops (set by `new`); the
        // directory goes in `unregister` before the device does.
        self.debugfs = Some(unsafe { crate::debugfs::DevDir::new(self.ptr.as_ptr()) });
        Ok(())
    }

    /// Unregisters the device (takes rtnl); it stays allocated until drop.
    pub(crate) fn unregister(&mut self) {
        // Its knobs go first (waiting for a write in progress).
        self.debugfs = None;
        if self.registered {
            // SAFETY: registered and not yet unregistered (type invariant).
            unsafe { bindings::unregister_netdev(self.ptr.as_ptr()) };
            // INVARIANT: no longer registered.
            self.registered = false;
        }
    }
}

impl<T: OpsTables> Drop for NetDevAlloc<T> {
    fn drop(&mut self) {
        self.unregister();
        let raw = self.ptr.as_ptr();
        // SAFETY: unregistered, so no callback runs any more; the private area holds
        // the foreign `Arc` put there by `new`, read before the device memory is
        // freed and reclaimed exactly once, after (the device may still point into
        // the data, e.g. at NAPIs, until it is freed).
        let data = unsafe {
            let data = (*bindings::dmn_netdev_priv(raw).cast::<DevPriv>()).data;
            bindings::free_netdev(raw);
            <Arc<T::Priv> as ForeignOwnable>::from_foreign(data)
        };
        drop(data);
    }
}

/// Two devices wired to each other (each is the other's [`NetDev::peer`]).
///
/// Both are registered on creation; on drop both are unregistered before either
/// is freed, which is what makes `peer` safe to follow from callbacks.
pub(crate) struct NetDevPair<T: OpsTables> {
    devs: [NetDevAlloc<T>; 2],
}

impl<T: OpsTables> NetDevPair<T> {
    /// Device 0 or 1.
    #[cfg_attr(not(CONFIG_KUNIT), allow(dead_code))]
    pub(crate) fn dev(&self, i: usize) -> &NetDev {
        self.devs[i & 1].dev()
    }

    /// Wires two allocated, unregistered devices together and registers them;
    /// on failure gives both back, unregistered.
    #[allow(clippy::type_complexity)]
    pub(crate) fn new(
        mut a: NetDevAlloc<T>,
        mut b: NetDevAlloc<T>,
    ) -> core::result::Result<Self, (Error, NetDevAlloc<T>, NetDevAlloc<T>)> {
        if a.registered || b.registered {
            return Err((EINVAL, a, b));
        }
        // SAFETY: both devices are allocated by us and not yet registered, so no
        // callback reads the private areas while they are written.
        unsafe {
            (*bindings::dmn_netdev_priv(a.ptr.as_ptr()).cast::<DevPriv>()).peer = b.ptr.as_ptr();
            (*bindings::dmn_netdev_priv(b.ptr.as_ptr()).cast::<DevPriv>()).peer = a.ptr.as_ptr();
        }
        if let Err(e) = a.register() {
            return Err((e, a, b));
        }
        if let Err(e) = b.register() {
            a.unregister();
            return Err((e, a, b));
        }
        Ok(Self { devs: [a, b] })
    }

    /// Unregisters both devices (idempotent); they stay allocated until drop.
    pub(crate) fn unregister(&mut self) {
        self.devs[0].unregister();
        self.devs[1].unregister();
    }
}

impl<T: OpsTables> Drop for NetDevPair<T> {
    fn drop(&mut self) {
        // Both unregistered first; the allocations are freed as fields drop after.
        self.unregister();
    }
}

/// Frees skbs parked on CPUs' defer lists (and the page-pool buffers in them)
/// by running the NET_RX softirq on every CPU; sleeps.
pub(crate) fn flush_deferred_skbs() {
    // SAFETY: process context (callers may sleep); raising a softirq on each CPU
    // has no other precondition.
    unsafe { bindings::dmn_flush_deferred_skbs() };
}

/// The feature flags devmemnic devices advertise.
pub(crate) fn default_features() -> u64 {
    // SAFETY: returns a constant.
    unsafe { bindings::dmn_default_features() }
}
