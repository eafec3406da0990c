// SPDX-License-Identifier: GPL-2.0

//! Platform devices that stand in for a NIC's bus device.
//!
//! Each devmemnic netdev gets a platform device as its parent: that is the
//! device page pools DMA-map on and dma-bufs attach to, so it carries a 64-bit
//! DMA mask like a real NIC's PCI function.

use super::bindings;
use core::ptr::NonNull;
use kernel::{
    error::from_err_ptr,
    prelude::*,
    str::{CStr, CString},
};

/// A platform device registered by this module, unregistered on drop.
///
/// # Invariants
///
/// `ptr` points to a device returned by a successful
/// `platform_device_register_full()` that has not been unregistered.
pub(crate) struct PlatformDevice {
    ptr: NonNull<bindings::platform_device>,
}

// SAFETY: the platform core serialises registration and unregistration; the
// handle only hands out pointers that stay valid while it exists.
unsafe impl Send for PlatformDevice {}
// SAFETY: all methods taking `&self` only read immutable device fields or call
// thread-safe driver-core and DMA functions.
unsafe impl Sync for PlatformDevice {}

/// An instance id the core picks (`name.N.auto`).
pub(crate) const PLATFORM_DEVID_AUTO: i32 = -2;

impl PlatformDevice {
    /// Registers `name.id` (or `name.N.auto` for [`PLATFORM_DEVID_AUTO`])
    /// with a DMA mask of `dma_bits` bits.
    pub(crate) fn register(name: &'static CStr, id: i32, dma_bits: u32) -> Result<Self> {
        if !(32..=64).contains(&dma_bits) {
            return Err(EINVAL);
        }
        let info = bindings::platform_device_info {
            name: name.as_char_ptr().cast(),
            id,
            dma_mask: if dma_bits == 64 {
                u64::MAX
            } else {
                (1u64 << dma_bits) - 1
            },
            ..Default::default()
        };
        // SAFETY: `info` is fully initialised and only read during the call; `name`
        // is static, so the copy the core keeps a pointer to outlives the device.
        let raw = unsafe { bindings::platform_device_register_full(&info) };
        let raw = from_err_ptr(raw)?;
        // INVARIANT: registration succeeded and returned a non-error pointer.
        NonNull::new(raw).map(|ptr| Self { ptr }).ok_or(ENOMEM)
    }

    /// The embedded `struct device`, for DMA and as a netdev parent.
    pub(crate) fn as_raw_device(&self) -> *mut bindings::device {
        // SAFETY: `ptr` is a live platform device (type invariant), so taking the
        // address of its embedded `dev` field is valid.
        unsafe { &raw mut (*self.ptr.as_ptr()).dev }
    }

    /// The device's name, as the core gives it (`name.id`, or `name.N.auto`).
    pub(crate) fn name(&self) -> Result<CString> {
        // SAFETY: `ptr` is a live platform device (type invariant); its name is
        // the static string it was registered with, and `id` and `id_auto`
        // are set by registration and never change.
        let (name, id, auto) = unsafe {
            let p = self.ptr.as_ptr();
            (CStr::from_char_ptr((*p).name), (*p).id, (*p).id_auto)
        };
        let name = name.to_str().map_err(|_| EINVAL)?;
        let auto = if auto { ".auto" } else { "" };
        CString::try_from_fmt(format_args!("{name}.{id}{auto}"))
    }

    /// The device's instance id (`name.id`).
    pub(crate) fn id(&self) -> i32 {
        // SAFETY: `ptr` is a live platform device (type invariant); `id` is set
        // before registration and never changes.
        unsafe { (*self.ptr.as_ptr()).id }
    }

    /// The streaming DMA mask the device was registered with.
    pub(crate) fn dma_mask(&self) -> u64 {
        // SAFETY: the device is live (type invariant); reading the mask has no
        // other precondition.
        unsafe { bindings::dmn_dma_get_mask(self.as_raw_device()) }
    }
}

impl PlatformDevice {
    /// Keeps the device's memory alive after this handle unregisters it, for
    /// kernel objects that point at it and outlive the module (a dma-buf
    /// attachment whose release is still pending). Only for that case: the
    /// reference is never dropped.
    pub(crate) fn pin_forever(&self) {
        // SAFETY: the device is registered (type invariant); taking a reference
        // has no other precondition.
        unsafe { bindings::get_device(self.as_raw_device()) };
    }
}

impl Drop for PlatformDevice {
    fn drop(&mut self) {
        // SAFETY: `ptr` is registered and not yet unregistered (type invariant);
        // after this, the handle is gone.
        unsafe { bindings::platform_device_unregister(self.ptr.as_ptr()) };
    }
}
