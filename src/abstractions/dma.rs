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
use core::{marker::PhantomData, ptr::NonNull};
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

    /// Writes `len` bytes from `src` at `offset` of the page, as the device
    /// would; `EINVAL` past the page.
    pub(crate) fn device_write(
        &self,
        offset: usize,
        len: usize,
        src: &mut impl DmaSource,
    ) -> Result {
        let addr = bus_range(self.addr, self.len, offset, len)?;
        // SAFETY: a range of our live mapping for the device to write (type
        // invariant; bounds checked).
        unsafe { device_write(DmaDev::of_platform(self.dev), addr, len, src) }
    }

    /// Reads `out.len()` bytes at `offset` of the page as the device would
    /// (what its TX DMA does with a buffer); `EINVAL` past the page.
    pub(crate) fn device_read(&self, offset: usize, out: &mut [u8]) -> Result {
        let addr = bus_range(self.addr, self.len, offset, out.len())?;
        // SAFETY: a range of our live mapping (type invariant; bounds checked).
        unsafe {
            device_read(
                DmaDev::of_platform(self.dev),
                addr,
                &mut DeviceBytes::from_slice(out),
            )
        }
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

/// The bus address of bytes `offset..offset + len` of a buffer of `size`
/// bytes at `base`; `EINVAL` if they are not all inside it.
pub(super) fn bus_range(base: DmaAddr, size: usize, offset: usize, len: usize) -> Result<DmaAddr> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(base + offset as DmaAddr),
        _ => Err(EINVAL),
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

/// Bytes the virtual device reads or writes, as the CPU sees them.
///
/// Device memory (a dma-buf's pages, an RX buffer a process may have mapped)
/// can be written by its other users while the device works on it, so no
/// Rust reference to it is ever made: bytes go in and out through raw-pointer
/// copies only. A plain kernel buffer can be wrapped too
/// ([`DeviceBytes::from_slice`]), so the same copy code serves both.
///
/// # Invariants
///
/// `ptr..ptr + len` is mapped and valid for reads and writes for `'a`, and
/// nothing the kernel holds a Rust reference to.
pub(crate) struct DeviceBytes<'a> {
    ptr: NonNull<u8>,
    len: usize,
    _p: PhantomData<&'a mut [u8]>,
}

impl<'a> DeviceBytes<'a> {
    /// A kernel buffer, as a target (or source) of the DMA engine's copies.
    pub(crate) fn from_slice(buf: &'a mut [u8]) -> Self {
        // INVARIANT: the slice is valid and exclusively ours for `'a`.
        Self {
            ptr: NonNull::from(&mut *buf).cast(),
            len: buf.len(),
            _p: PhantomData,
        }
    }

    /// Device memory at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be non-null and `ptr..ptr + len` mapped and valid for reads
    /// and writes for `'a`, with no Rust reference to it.
    unsafe fn from_raw(ptr: *mut u8, len: usize) -> Self {
        // INVARIANT: guaranteed by the caller (a valid range is not at null).
        Self {
            // SAFETY: a mapped address is not null (caller).
            ptr: unsafe { NonNull::new_unchecked(ptr) },
            len,
            _p: PhantomData,
        }
    }

    /// Size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes `at..at + len`; `EINVAL` past the end.
    pub(crate) fn window(&mut self, at: usize, len: usize) -> Result<DeviceBytes<'_>> {
        match at.checked_add(len) {
            Some(end) if end <= self.len => {}
            _ => return Err(EINVAL),
        }
        // SAFETY: inside our range (checked), which is valid for the borrow.
        Ok(unsafe { DeviceBytes::from_raw(self.ptr.as_ptr().add(at), len) })
    }

    /// Copies `src` to offset `at`; `EINVAL` if it does not fit.
    pub(crate) fn write(&mut self, at: usize, src: &[u8]) -> Result {
        let dst = self.window(at, src.len())?;
        // SAFETY: `dst` is valid for `src.len()` bytes of writes (its invariant);
        // `src` is a Rust slice and no Rust reference points into `dst` (its
        // invariant), so they do not overlap.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst.ptr.as_ptr(), src.len()) };
        Ok(())
    }

    /// Copies bytes `at..at + dst.len()` into `dst`; `EINVAL` past the end.
    pub(crate) fn read(&mut self, at: usize, dst: &mut [u8]) -> Result {
        let src = self.window(at, dst.len())?;
        // SAFETY: `src` is valid for `dst.len()` bytes of reads (its invariant);
        // `dst` is a Rust slice, which cannot point into `src` (its invariant).
        unsafe { core::ptr::copy_nonoverlapping(src.ptr.as_ptr(), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Copies all of `src` to offset `at` (device memory to device memory,
    /// which may be the same dma-buf: a process can send from where it
    /// receives); `EINVAL` if it does not fit.
    pub(crate) fn copy_from(&mut self, at: usize, src: &DeviceBytes<'_>) -> Result {
        let dst = self.window(at, src.len)?;
        // SAFETY: both ranges are valid for `src.len` bytes (their invariants);
        // `copy` allows them to overlap.
        unsafe { core::ptr::copy(src.ptr.as_ptr(), dst.ptr.as_ptr(), src.len) };
        Ok(())
    }

    /// The first byte, for C helpers that copy into the range.
    pub(super) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

/// Where the DMA engine takes the bytes it writes from: a frame being sent,
/// read in order, or a kernel buffer.
pub(crate) trait DmaSource {
    /// Fills all of `dst` with the source's next bytes.
    fn fill(&mut self, dst: &mut DeviceBytes<'_>) -> Result;
}

impl DmaSource for &[u8] {
    fn fill(&mut self, dst: &mut DeviceBytes<'_>) -> Result {
        if self.len() < dst.len() {
            return Err(EINVAL);
        }
        let (now, rest) = self.split_at(dst.len());
        dst.write(0, now)?;
        *self = rest;
        Ok(())
    }
}

/// Writes `len` bytes from `src` to bus addresses `addr..addr + len` of
/// `dev`, as the device's DMA engine would: a page at a time, each through a
/// temporary kernel mapping (the bus range is contiguous, its pages need not
/// be mapped together).
///
/// `EFAULT` if part of the range is not RAM reachable by dma-direct.
///
/// # Safety
///
/// `addr..addr + len` must be a live DMA mapping on `dev` of memory the
/// device may write now (an RX buffer the caller holds).
pub(super) unsafe fn device_write(
    dev: DmaDev<'_>,
    addr: DmaAddr,
    len: usize,
    src: &mut impl DmaSource,
) -> Result {
    let mut done = 0;
    while done < len {
        let at = addr.checked_add(done as DmaAddr).ok_or(EFAULT)?;
        let n = page_left(at).min(len - done);
        // SAFETY: inside the caller's mapping, within one page.
        unsafe { with_bus_bytes(dev, at, n, |dst| src.fill(dst)) }??;
        done += n;
    }
    Ok(())
}

/// Reads `out.len()` bytes at bus address `addr` of `dev`, as the device's
/// TX DMA would (the bytes may span pages that are contiguous on the bus).
///
/// Returns `EFAULT` if part of the range is not RAM reachable by dma-direct.
///
/// # Safety
///
/// `addr..addr + out.len()` must be a live DMA mapping on `dev` of memory the
/// device may read now (the frag of a frame being sent).
pub(super) unsafe fn device_read(
    dev: DmaDev<'_>,
    addr: DmaAddr,
    out: &mut DeviceBytes<'_>,
) -> Result {
    let mut done = 0;
    while done < out.len() {
        let at = addr.checked_add(done as DmaAddr).ok_or(EFAULT)?;
        let n = page_left(at).min(out.len() - done);
        // SAFETY: inside the caller's mapping, within one page.
        unsafe { with_bus_bytes(dev, at, n, |src| out.copy_from(done, src)) }??;
        done += n;
    }
    Ok(())
}

/// Bytes from bus address `addr` to the end of its page.
fn page_left(addr: DmaAddr) -> usize {
    kernel::page::PAGE_SIZE - ((addr as usize) & (kernel::page::PAGE_SIZE - 1))
}

/// Runs `f` on the `len` bytes at bus address `addr` of `dev`, through a
/// temporary kernel mapping of the page behind it: the NIC's DMA engine.
///
/// `EFAULT` if the bytes would cross the page `addr` lands in, or the address
/// is not RAM reachable by dma-direct.
///
/// # Safety
///
/// `addr..addr + len` must be a live DMA mapping on `dev` that the device
/// may access now.
unsafe fn with_bus_bytes<R>(
    dev: DmaDev<'_>,
    addr: DmaAddr,
    len: usize,
    f: impl FnOnce(&mut DeviceBytes<'_>) -> R,
) -> Result<R> {
    if len > page_left(addr) {
        return Err(EFAULT);
    }
    let offset = kernel::page::PAGE_SIZE - page_left(addr);
    // SAFETY: `dev` is a live device (its invariant); the helper only
    // translates: valid for dma-direct (no IOMMU, no DMA ops), which is what a
    // platform device gets, and null if the address does not name RAM.
    let page = unsafe { bindings::dmn_dma_addr_to_page(dev.as_raw(), addr) };
    if page.is_null() {
        return Err(EFAULT);
    }
    // SAFETY: `page` is a valid RAM page (checked by the helper); the local mapping
    // is released below, and `f` cannot keep anything that outlives it.
    let va = unsafe { bindings::dmn_kmap_local_page(page) }.cast::<u8>();
    let Some(start) = NonNull::new(va) else {
        return Err(EFAULT);
    };
    // SAFETY: `start + offset .. + len` lies inside the mapped page (checked
    // above), mapped until the unmap below; it is device memory the caller may
    // access (function contract), only ever copied through raw pointers.
    let mut bytes = unsafe { DeviceBytes::from_raw(start.as_ptr().add(offset), len) };
    let r = f(&mut bytes);
    // SAFETY: `va` is the address returned by the matching `kmap_local_page()`.
    unsafe { bindings::dmn_kunmap_local(va.cast()) };
    Ok(r)
}
