// SPDX-License-Identifier: GPL-2.0

//! Streaming DMA mappings and the virtual NIC's "DMA engine".
//!
//! A real NIC writes received bytes to a bus address, and reads the bytes it
//! sends from one. devmemnic does the same with the CPU: it turns the bus
//! address back into the page behind it (the parent device uses dma-direct,
//! so bus address = physical address) and copies
//! through a temporary kernel mapping. Nothing else ever looks at the buffer's
//! `struct page`, which is what keeps dma-buf net_iovs usable later.

use super::{bindings, platform::PlatformDevice};
use kernel::{page::Page, prelude::*};

/// A bus address on a device.
pub(crate) type DmaAddr = bindings::dma_addr_t;

/// The direction of every mapping: the device writes, the CPU reads (RX).
const FROM_DEVICE: i32 = bindings::dma_data_direction_DMA_FROM_DEVICE as i32;

/// A page mapped for the device to write (an RX buffer), unmapped on drop.
///
/// # Invariants
///
/// `addr` is a successful `FROM_DEVICE` mapping of `len` bytes of `page` on
/// `dev`, not yet unmapped; `dev` outlives the mapping.
pub(crate) struct PageMapping<'a> {
    dev: &'a PlatformDevice,
    page: Page,
    addr: DmaAddr,
    len: usize,
}

impl<'a> PageMapping<'a> {
    /// Maps a whole page on `dev` for the device to write.
    pub(crate) fn new(dev: &'a PlatformDevice, page: Page) -> Result<Self> {
        let len = kernel::page::PAGE_SIZE;
        let raw_page = page.as_ptr().cast::<bindings::page>();
        // SAFETY: `dev` is a live device and `raw_page` a page owned by `page`, which
        // the mapping keeps until it is unmapped.
        let addr = unsafe {
            bindings::dmn_dma_map_page(dev.as_raw_device(), raw_page, 0, len, FROM_DEVICE)
        };
        // SAFETY: `addr` was just returned by a mapping call on this device.
        if unsafe { bindings::dmn_dma_mapping_error(dev.as_raw_device(), addr) } {
            return Err(ENOMEM);
        }
        // INVARIANT: the mapping succeeded.
        Ok(Self {
            dev,
            page,
            addr,
            len,
        })
    }

    /// The bus address the device uses.
    pub(crate) fn dma_addr(&self) -> DmaAddr {
        self.addr
    }

    /// Reads `out.len()` bytes of the page at `offset` through the CPU (what a
    /// driver does after the device wrote and the mapping is synced: tests).
    pub(crate) fn read(&self, offset: usize, out: &mut [u8]) -> Result {
        match offset.checked_add(out.len()) {
            Some(end) if end <= kernel::page::PAGE_SIZE => {}
            _ => return Err(EINVAL),
        }
        // SAFETY: `out` is valid for writes of its length; the range is inside the
        // page (checked); `Page::read_raw` copies through a local mapping.
        unsafe { self.page.read_raw(out.as_mut_ptr(), offset, out.len()) }
    }
}

impl Drop for PageMapping<'_> {
    fn drop(&mut self) {
        // SAFETY: the mapping is live (type invariant) and is unmapped once, here.
        unsafe {
            bindings::dmn_dma_unmap_page(self.dev.as_raw_device(), self.addr, self.len, FROM_DEVICE)
        };
    }
}

/// The device a bus address belongs to.
///
/// # Invariants
///
/// `raw` is a live `struct device` for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct DmaDev<'a> {
    raw: *mut bindings::device,
    _p: core::marker::PhantomData<&'a ()>,
}

impl<'a> DmaDev<'a> {
    /// The DMA device of a platform device.
    pub(crate) fn of_platform(dev: &'a PlatformDevice) -> Self {
        // INVARIANT: the platform device lives for `'a`.
        Self {
            raw: dev.as_raw_device(),
            _p: core::marker::PhantomData,
        }
    }

    /// Wraps a raw device.
    ///
    /// # Safety
    ///
    /// `raw` must be a live device for `'a`.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::device) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self {
            raw,
            _p: core::marker::PhantomData,
        }
    }

    /// The raw device.
    pub(crate) fn as_raw(&self) -> *mut bindings::device {
        self.raw
    }
}

/// Writes `data` at bus address `addr` of `dev`, as the device's DMA engine would.
///
/// The write must stay inside the page `addr` lands in; returns `EFAULT` if the
/// address is not RAM reachable by dma-direct or the write would cross the page.
pub(crate) fn device_write(dev: DmaDev<'_>, addr: DmaAddr, data: &[u8]) -> Result {
    device_write_with(dev, addr, data.len(), |dst| {
        dst.copy_from_slice(data);
        Ok(())
    })
}

/// Lets `fill` write `len` bytes at bus address `addr` of `dev` (the NIC's DMA).
///
/// Same rules as [`device_write`]; `fill` gets exactly the `len` target bytes.
pub(crate) fn device_write_with(
    dev: DmaDev<'_>,
    addr: DmaAddr,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result,
) -> Result {
    with_bus_bytes(dev, addr, len, fill)?
}

/// Reads `out.len()` bytes at bus address `addr` of `dev`, as the device's TX
/// DMA would (the bytes may span pages that are contiguous on the bus).
///
/// Returns `EFAULT` if part of the range is not RAM reachable by dma-direct.
pub(crate) fn device_read(dev: DmaDev<'_>, addr: DmaAddr, out: &mut [u8]) -> Result {
    let mut done = 0;
    while done < out.len() {
        let at = addr.checked_add(done as DmaAddr).ok_or(EFAULT)?;
        let offset = (at as usize) & (kernel::page::PAGE_SIZE - 1);
        let n = (kernel::page::PAGE_SIZE - offset).min(out.len() - done);
        let dst = &mut out[done..done + n];
        with_bus_bytes(dev, at, n, |src| dst.copy_from_slice(src))?;
        done += n;
    }
    Ok(())
}

/// Runs `f` on the `len` bytes at bus address `addr` of `dev`, through a
/// temporary kernel mapping of the page behind it: the NIC's DMA engine.
///
/// `EFAULT` if the bytes would cross the page `addr` lands in, or the address
/// is not RAM reachable by dma-direct.
fn with_bus_bytes<R>(
    dev: DmaDev<'_>,
    addr: DmaAddr,
    len: usize,
    f: impl FnOnce(&mut [u8]) -> R,
) -> Result<R> {
    let offset = (addr as usize) & (kernel::page::PAGE_SIZE - 1);
    if len > kernel::page::PAGE_SIZE - offset {
        return Err(EFAULT);
    }
    // SAFETY: `dev` is a live device (its invariant); the helper only translates.
    let page = unsafe { bindings::dmn_dma_addr_to_page(dev.as_raw(), addr) };
    if page.is_null() {
        return Err(EFAULT);
    }
    // SAFETY: `page` is a valid RAM page (checked by the helper); the local mapping
    // is released below, and `f` cannot map anything that outlives it.
    let va = unsafe { bindings::dmn_kmap_local_page(page) }.cast::<u8>();
    // SAFETY: `va + offset .. + len` lies inside the mapped page (checked above);
    // the buffer is mapped for the device's DMA (an RX buffer the device owns, or
    // a TX buffer its owner leaves alone until the send completes), so nobody
    // else accesses it now.
    let bytes = unsafe { core::slice::from_raw_parts_mut(va.add(offset), len) };
    let r = f(bytes);
    // SAFETY: `va` is the address returned by the matching `kmap_local_page()`.
    unsafe { bindings::dmn_kunmap_local(va.cast()) };
    Ok(r)
}
