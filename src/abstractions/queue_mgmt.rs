// SPDX-License-Identifier: GPL-2.0

//! The queue-management API (`netdev_queue_mgmt_ops`) from a trait.
//!
//! C header: [`include/net/netdev_queues.h`](srctree/include/net/netdev_queues.h)
//!
//! What the core uses to swap an RX queue's memory (`netdev_rx_queue_restart()`),
//! for example when a memory provider (devmem, io_uring zcrx) attaches or
//! detaches. The core keeps each queue's memory in a slot of
//! `ndo_queue_mem_size` bytes; here the slot holds a boxed `T::QueueMem` or
//! null, so the driver only sees typed `Option<T::QueueMem>`.
//!
//! Kernels differ: 7.2 passes a queue configuration (`struct
//! netdev_queue_config`: the RX buffer size) to alloc and start, asks the driver
//! for defaults and to validate, and may alloc and free while the device is
//! down. On 6.12 the configuration is always the default ([`QueueConfig`]).

use super::{
    bindings, errno,
    netdev::{priv_of, NetDev},
    netdev_ops::NetDevOps,
};
use core::{ffi::c_void, marker::PhantomData};
use kernel::{
    build_error,
    error::{from_result, to_result},
    ffi::{c_int, c_uint},
    prelude::*,
};

/// The configuration of one RX queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueueConfig {
    /// Bytes of each RX payload buffer.
    pub(crate) rx_page_size: u32,
}

impl QueueConfig {
    /// The default: one page per buffer.
    pub(crate) const fn page_sized() -> Self {
        Self {
            rx_page_size: kernel::page::PAGE_SIZE as u32,
        }
    }

    /// The buffer size as a page-allocation order (`rx_page_size` is a power
    /// of two of at least a page), or `None` if it is not one.
    pub(crate) fn order(&self) -> Option<u32> {
        let page = kernel::page::PAGE_SIZE as u32;
        (self.rx_page_size.is_power_of_two() && self.rx_page_size >= page)
            .then(|| (self.rx_page_size / page).ilog2())
    }
}

/// The queue-management API. Every method runs with the device's ops locks held.
#[vtable]
pub(crate) trait QueueMgmt: NetDevOps {
    /// Everything an RX queue needs to run (rings' buffers, pools).
    type QueueMem: Send;

    /// Builds complete new memory for RX queue `idx` with `cfg`, not yet in use.
    /// May be called while the device is down.
    fn queue_mem_alloc(
        dev: &NetDev,
        data: &Self::Priv,
        cfg: &QueueConfig,
        idx: u32,
    ) -> Result<Self::QueueMem>;

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

    /// The configuration of RX queue `idx` before the user's settings apply.
    fn default_config(_dev: &NetDev, _data: &Self::Priv) -> QueueConfig {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Whether the device can run a queue with `cfg`.
    fn validate_config(_dev: &NetDev, _data: &Self::Priv, _cfg: &QueueConfig) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Whether the driver honours [`QueueConfig::rx_page_size`] other than one
    /// page (`QCFG_RX_PAGE_SIZE`): memory providers may then ask for larger
    /// buffers (io_uring zcrx's `rx_buf_len`), checked by `validate_config`.
    const SUPPORTS_RX_PAGE_SIZE: bool = false;
}

/// The configuration RX queue `idx` of `dev` runs with now: the driver's
/// default with the queue's memory provider's request applied (io_uring
/// zcrx's `rx_buf_len`), as the core renders it; one page on kernels
/// without queue configurations. Ops locks held.
pub(crate) fn current_config(dev: &NetDev, idx: u32) -> QueueConfig {
    #[cfg(dmn_queue_qcfg)]
    {
        // SAFETY: the device is allocated (`NetDev` invariant); a field set
        // before registration.
        let has_ops = !unsafe { (*dev.as_raw()).queue_mgmt_ops }.is_null();
        if let (true, true, Ok(rxq)) = (idx < dev.num_rx_queues(), has_ops, i32::try_from(idx)) {
            let mut qcfg = bindings::netdev_queue_config::default();
            // SAFETY: `idx` is in range; the core reads the queue's provider
            // parameters under the caller's ops locks.
            unsafe { bindings::netdev_queue_config(dev.as_raw(), rxq, &mut qcfg) };
            if qcfg.rx_page_size != 0 {
                return QueueConfig {
                    rx_page_size: qcfg.rx_page_size,
                };
            }
        }
    }
    #[cfg(not(dmn_queue_qcfg))]
    let _ = (dev, idx);
    QueueConfig::page_sized()
}

/// Restarts RX queue `idx` of `dev` as the core does on bind and unbind
/// (`netdev_rx_queue_restart()`): new memory from the queue ops, stop, start
/// on it, old memory freed. `ENETDOWN` while the device is down, `EINVAL`
/// for a queue not active.
///
/// # Safety
///
/// `dev` is a device of ours (a [`NetDev`]), with `dev->queue_mgmt_ops` null
/// or valid; the caller holds its ops locks.
pub(super) unsafe fn restart_rx_queue(dev: *mut bindings::net_device, idx: u32) -> Result {
    // SAFETY: allocated (the caller's guarantee).
    if !unsafe { bindings::dmn_netif_running(dev) } {
        return Err(errno::enetdown());
    }
    // SAFETY: as above; a field the core changes under the caller's locks.
    if idx >= unsafe { (*dev).real_num_rx_queues } {
        return Err(EINVAL);
    }
    // SAFETY: as the caller guarantees; `idx` is an active queue.
    unsafe { restart_checked(dev, idx) }
}

/// `netdev_rx_queue_restart()` itself (7.2 exports it, in the namespace
/// `NETDEV_INTERNAL` that `module.rs` imports).
///
/// # Safety
///
/// As for [`restart_rx_queue`]; `idx` is an active queue, the device up.
#[cfg(dmn_restart_exported)]
unsafe fn restart_checked(dev: *mut bindings::net_device, idx: u32) -> Result {
    // SAFETY: as the caller guarantees.
    to_result(unsafe { bindings::netdev_rx_queue_restart(dev, idx) })
}

/// `netdev_rx_queue_restart()` as 6.12's core does it
/// (`net/core/netdev_rx_queue.c`), which 6.12 does not export: new memory
/// first, then stop, start on the new memory, free the old; if the start
/// fails, the queue goes back on its old memory. The core's slots are
/// zeroed `ndo_queue_mem_size` bytes (`kvzalloc`), here of `u64`s, so that
/// they hold the pointer the driver puts there.
///
/// # Safety
///
/// As for [`restart_rx_queue`]; `idx` is an active queue, the device up.
#[cfg(not(dmn_restart_exported))]
unsafe fn restart_checked(dev: *mut bindings::net_device, idx: u32) -> Result {
    // SAFETY: rtnl's state is readable from anywhere.
    if unsafe { bindings::rtnl_is_locked() } == 0 {
        // As the core's `ASSERT_RTNL()`.
        let msg = kernel::c_str!("RTNL: assertion failed in dmn_rx_queue_restart");
        // SAFETY: a NUL-terminated message.
        unsafe { bindings::dmn_warn(msg.as_char_ptr()) };
    }
    // SAFETY: null or a static table (the caller's guarantee).
    let Some(ops) = (unsafe { (*dev).queue_mgmt_ops.as_ref() }) else {
        return Err(errno::eopnotsupp());
    };
    let (Some(alloc), Some(stop), Some(start), Some(free)) = (
        ops.ndo_queue_mem_alloc,
        ops.ndo_queue_stop,
        ops.ndo_queue_start,
        ops.ndo_queue_mem_free,
    ) else {
        return Err(errno::eopnotsupp());
    };
    let words = ops.ndo_queue_mem_size.div_ceil(core::mem::size_of::<u64>());
    let mut new_mem = KVVec::from_elem(0u64, words, GFP_KERNEL)?;
    let mut old_mem = KVVec::from_elem(0u64, words, GFP_KERNEL)?;
    let (new, old) = (
        new_mem.as_mut_ptr().cast::<c_void>(),
        old_mem.as_mut_ptr().cast::<c_void>(),
    );
    let q = i32::try_from(idx).map_err(|_| EINVAL)?;
    // SAFETY: the device's own queue ops, under its ops locks, each slot
    // zeroed and of the size they asked for, used as the core uses them:
    // `new` filled by alloc, `old` by stop, each freed once.
    unsafe {
        to_result(alloc(dev, new, q))?;
        if let Err(e) = to_result(stop(dev, old, q)) {
            free(dev, new);
            return Err(e);
        }
        if let Err(e) = to_result(start(dev, new, q)) {
            if start(dev, old, q) != 0 {
                let name = NetDev::from_raw(dev).name();
                pr_err!("devmemnic: {name}: RX queue {idx} did not restart on its old memory\n");
                free(dev, old);
            }
            free(dev, new);
            return Err(e);
        }
        free(dev, old);
    }
    Ok(())
}

/// `dmn_rx_queue_restart()` of `include/devmemnic_helpers.h`, for the
/// debugfs knob (`src/helpers/debugfs.c`): [`restart_rx_queue`].
///
/// # Safety
///
/// `dev` is a device of ours; the caller holds its ops locks.
#[no_mangle]
unsafe extern "C" fn dmn_rx_queue_restart(dev: *mut bindings::net_device, idx: c_uint) -> c_int {
    // SAFETY: as the caller guarantees.
    match unsafe { restart_rx_queue(dev, idx) } {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
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

    /// The configuration the core passed, in the driver's terms.
    ///
    /// # Safety
    ///
    /// `qcfg` is null or valid for reads.
    #[cfg(dmn_queue_qcfg)]
    unsafe fn config(qcfg: *const bindings::netdev_queue_config) -> QueueConfig {
        // SAFETY: the caller's guarantee.
        match unsafe { qcfg.as_ref() } {
            Some(c) if c.rx_page_size != 0 => QueueConfig {
                rx_page_size: c.rx_page_size,
            },
            _ => QueueConfig::page_sized(),
        }
    }

    /// # Safety
    ///
    /// Called by the core with the ops locks held and a live device of ours.
    unsafe fn alloc(
        dev: *mut bindings::net_device,
        cfg: QueueConfig,
        slot: *mut c_void,
        idx: i32,
    ) -> i32 {
        from_result(|| {
            // SAFETY: as the contract says.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            let idx = u32::try_from(idx).map_err(|_| EINVAL)?;
            let mem = T::queue_mem_alloc(nd, data, &cfg, idx)?;
            // SAFETY: the core hands a fresh, zeroed slot.
            unsafe { Self::put(slot, mem)? };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `alloc`.
    #[cfg(dmn_queue_qcfg)]
    unsafe extern "C" fn alloc_c(
        dev: *mut bindings::net_device,
        qcfg: *mut bindings::netdev_queue_config,
        slot: *mut c_void,
        idx: i32,
    ) -> i32 {
        // SAFETY: the core passes a valid configuration (or none) and our contract.
        unsafe { Self::alloc(dev, Self::config(qcfg), slot, idx) }
    }

    /// # Safety
    ///
    /// As for `alloc`.
    #[cfg(not(dmn_queue_qcfg))]
    unsafe extern "C" fn alloc_c(
        dev: *mut bindings::net_device,
        slot: *mut c_void,
        idx: i32,
    ) -> i32 {
        // SAFETY: our contract.
        unsafe { Self::alloc(dev, QueueConfig::page_sized(), slot, idx) }
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
    unsafe fn start(dev: *mut bindings::net_device, slot: *mut c_void, idx: i32) -> i32 {
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

    /// # Safety
    ///
    /// As for `alloc`.
    #[cfg(dmn_queue_qcfg)]
    unsafe extern "C" fn start_c(
        dev: *mut bindings::net_device,
        _qcfg: *mut bindings::netdev_queue_config,
        slot: *mut c_void,
        idx: i32,
    ) -> i32 {
        // SAFETY: our contract; the memory was built for this configuration.
        unsafe { Self::start(dev, slot, idx) }
    }

    /// # Safety
    ///
    /// As for `alloc`.
    #[cfg(not(dmn_queue_qcfg))]
    unsafe extern "C" fn start_c(
        dev: *mut bindings::net_device,
        slot: *mut c_void,
        idx: i32,
    ) -> i32 {
        // SAFETY: our contract.
        unsafe { Self::start(dev, slot, idx) }
    }

    /// # Safety
    ///
    /// As for `alloc`; `qcfg` is valid for writes.
    #[cfg(dmn_queue_qcfg)]
    unsafe extern "C" fn default_qcfg(
        dev: *mut bindings::net_device,
        qcfg: *mut bindings::netdev_queue_config,
    ) {
        // SAFETY: as the contract says.
        let (nd, data, out) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *qcfg) };
        out.rx_page_size = T::default_config(nd, data).rx_page_size;
    }

    /// # Safety
    ///
    /// As for `alloc`; `qcfg` is valid for reads, `extack` null or valid.
    #[cfg(dmn_queue_qcfg)]
    unsafe extern "C" fn validate_qcfg(
        dev: *mut bindings::net_device,
        qcfg: *mut bindings::netdev_queue_config,
        extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        from_result(|| {
            // SAFETY: as the contract says.
            let (nd, data, cfg) =
                unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), Self::config(qcfg)) };
            T::validate_config(nd, data, &cfg).inspect_err(|_| {
                // SAFETY: the core's extack of this call, null or valid during it.
                unsafe { super::extack::Extack::from_raw(extack) }
                    .msg(kernel::c_str!("RX buffer size not supported by this queue"));
            })?;
            Ok(0)
        })
    }

    const VTABLE: bindings::netdev_queue_mgmt_ops = {
        // SAFETY: all-zeroes is a valid `netdev_queue_mgmt_ops` (nothing optional set).
        let mut ops: bindings::netdev_queue_mgmt_ops = unsafe { core::mem::zeroed() };
        ops.ndo_queue_mem_size = Self::MEM_SIZE;
        ops.ndo_queue_mem_alloc = Some(Self::alloc_c);
        ops.ndo_queue_mem_free = Some(Self::free);
        ops.ndo_queue_start = Some(Self::start_c);
        ops.ndo_queue_stop = Some(Self::stop);
        #[cfg(dmn_queue_qcfg)]
        if T::HAS_DEFAULT_CONFIG {
            ops.ndo_default_qcfg = Some(Self::default_qcfg);
        }
        #[cfg(dmn_queue_qcfg)]
        if T::HAS_VALIDATE_CONFIG {
            ops.ndo_validate_qcfg = Some(Self::validate_qcfg);
        }
        #[cfg(dmn_queue_qcfg)]
        if T::SUPPORTS_RX_PAGE_SIZE {
            ops.supported_params = bindings::DMN_QCFG_RX_PAGE_SIZE;
        }
        ops
    };
}

/// The `netdev_queue_mgmt_ops` of `T` (see `Vtables::queue_mgmt`).
pub(super) const fn build<T: QueueMgmt>() -> &'static bindings::netdev_queue_mgmt_ops {
    &QueueTable::<T>::VTABLE
}
