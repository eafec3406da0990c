// SPDX-License-Identifier: GPL-2.0

//! Socket buffers owned by the driver.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use super::{bindings, netdev::NetDev};
use core::ptr::NonNull;
use kernel::prelude::*;

pub(crate) use super::frame_reader::FrameReader;

/// An `sk_buff` the driver owns; dropping it frees it as a drop.
///
/// # Invariants
///
/// `ptr` is a valid skb owned by this value alone.
pub(crate) struct SkBuff {
    ptr: NonNull<bindings::sk_buff>,
}

// SAFETY: an owned skb may be handed between CPUs (the net core does so).
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Takes ownership of a raw skb.
    ///
    /// # Safety
    ///
    /// `ptr` must be a valid skb whose ownership the caller gives up.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::sk_buff) -> Self {
        // SAFETY: a valid skb pointer is not null.
        let ptr = unsafe { NonNull::new_unchecked(ptr) };
        // INVARIANT: the caller hands over a valid skb.
        Self { ptr }
    }

    /// Gives up ownership, returning the raw skb.
    pub(crate) fn into_raw(self) -> *mut bindings::sk_buff {
        let ptr = self.ptr.as_ptr();
        core::mem::forget(self);
        ptr
    }

    /// Total length in bytes (linear part and frags).
    pub(crate) fn len(&self) -> usize {
        // SAFETY: the skb is valid (type invariant).
        unsafe { bindings::dmn_skb_len(self.ptr.as_ptr()) as usize }
    }

    /// Whether the CPU may read every frag (none is device memory: a dma-buf
    /// or io_uring area net_iov).
    pub(crate) fn frags_readable(&self) -> bool {
        // SAFETY: the skb is valid (type invariant).
        unsafe { bindings::dmn_skb_frags_readable(self.ptr.as_ptr()) }
    }

    /// The skb, still this value's, for the layer's other readers of it.
    pub(super) fn as_ptr(&self) -> *mut bindings::sk_buff {
        self.ptr.as_ptr()
    }

    /// Bytes in the linear part.
    pub(super) fn headlen(&self) -> usize {
        // SAFETY: the skb is valid (type invariant).
        unsafe { bindings::dmn_skb_headlen(self.ptr.as_ptr()) as usize }
    }

    /// The linear part (from `data`).
    pub(crate) fn head(&self) -> &[u8] {
        let len = self.headlen();
        // SAFETY: the skb is valid (type invariant): `data` points at `headlen`
        // initialised bytes that live as long as the skb, which `&self` borrows.
        unsafe {
            core::slice::from_raw_parts(bindings::dmn_skb_data(self.ptr.as_ptr()).cast(), len)
        }
    }

    /// The linear part to write; `None` when a clone shares it.
    pub(crate) fn head_mut(&mut self) -> Option<&mut [u8]> {
        let len = self.headlen();
        // SAFETY: the skb is valid and ours (type invariant).
        let data = unsafe { bindings::dmn_skb_data_mut(self.ptr.as_ptr()) };
        if data.is_null() {
            return None;
        }
        // SAFETY: `data` points at the skb's `headlen` initialised bytes, which no
        // clone shares and nothing else references while `&mut self` is held.
        Some(unsafe { core::slice::from_raw_parts_mut(data.cast(), len) })
    }

    /// Makes this skb the coalesced packet of `segs` TCP segments of `mss`
    /// bytes (the last may be shorter), whose headers the caller rewrote for
    /// the whole, TCP checksum field included (the pseudo-header sum, as
    /// `CHECKSUM_PARTIAL` wants it). `layout` gives the offsets from
    /// the Ethernet header; `EINVAL` unless its headers are in the linear part.
    pub(crate) fn complete_gro(&mut self, layout: &GroLayout, mss: u16, segs: u16) -> Result {
        let ip_len = if layout.inner_v6 { 40 } else { 20 };
        let need = usize::from(layout.tcp_off) + 20;
        if usize::from(layout.inner_off) + ip_len > usize::from(layout.tcp_off)
            || need > self.headlen()
            || (layout.outer_off.is_some_and(|o| o >= layout.inner_off))
            || segs < 2
        {
            return Err(EINVAL);
        }
        // SAFETY: the skb is ours; the IP and TCP headers the helper writes and
        // reads are inside its linear part (checked above).
        unsafe {
            bindings::dmn_skb_gro_complete(
                self.ptr.as_ptr(),
                layout.inner_off,
                layout.tcp_off,
                layout.outer_off.unwrap_or(0),
                layout.outer_v6,
                layout.inner_v6,
                mss,
                segs,
                layout.fixed_id,
            )
        };
        Ok(())
    }

    /// Copies `out.len()` bytes starting at `offset` as the NIC's DMA engine
    /// reads a frame `sender` sent (see [`FrameReader`]).
    pub(crate) fn read_as_device(
        &self,
        sender: Option<&NetDev>,
        offset: usize,
        out: &mut [u8],
    ) -> Result {
        FrameReader::new(self, sender, offset)?.read(out)
    }

    /// A copy of this frame in host memory, its bytes read as the NIC's DMA
    /// engine reads a frame `sender` sent (device-memory frags by bus
    /// address), its metadata (headers, checksum and GSO state) kept: what
    /// a device that cannot read device memory is handed.
    pub(crate) fn copy_to_host(&self, sender: &NetDev) -> Result<SkBuff> {
        // SAFETY: the skb is valid (type invariant); the helper only reads it.
        let raw = unsafe { bindings::dmn_skb_copy_shape(self.ptr.as_ptr()) };
        if raw.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: a new skb, ours.
        let mut copy = unsafe { SkBuff::from_raw(raw) };
        let mut reader = FrameReader::new(self, Some(sender), 0)?;
        reader.read(copy.head_mut().ok_or(EINVAL)?)?;
        for i in 0..copy.nr_frags() {
            // SAFETY: the copy is ours and `i` is below its frag count.
            let size = unsafe { bindings::dmn_skb_frag_size(copy.ptr.as_ptr(), i) } as usize;
            // SAFETY: as above; its frags are host pages of its own.
            let addr = unsafe { bindings::dmn_skb_frag_address(copy.ptr.as_ptr(), i) };
            // SAFETY: frag `i` is `size` bytes at `addr`, in pages only this
            // new skb references, and `&mut copy` is held.
            let frag = unsafe { core::slice::from_raw_parts_mut(addr.cast::<u8>(), size) };
            reader.read(frag)?;
        }
        Ok(copy)
    }

    /// The TX queue the core chose.
    pub(crate) fn queue_mapping(&self) -> u16 {
        // SAFETY: the skb is valid (type invariant).
        unsafe { bindings::dmn_skb_queue_mapping(self.ptr.as_ptr()) }
    }

    /// Whether the sender left the L4 checksum to the device.
    pub(crate) fn csum_partial(&self) -> bool {
        // SAFETY: the skb is valid (type invariant).
        unsafe { bindings::dmn_skb_csum_partial(self.ptr.as_ptr()) }
    }

    /// Whether the sender left work to its NIC before the wire: a TSO
    /// super-frame or a partial checksum
    /// ([`SkBuff::offloads_in_software`] does it).
    pub(crate) fn offloads_pending(&self) -> bool {
        self.segments() > 1 || self.csum_partial()
    }

    /// Number of page frags.
    pub(crate) fn nr_frags(&self) -> u32 {
        // SAFETY: the skb is valid (type invariant).
        unsafe { bindings::dmn_skb_frags(self.ptr.as_ptr()) }
    }

    /// Whether another frag fits (`MAX_SKB_FRAGS`).
    pub(crate) fn has_free_frag(&self) -> bool {
        (self.nr_frags() as usize) < bindings::MAX_SKB_FRAGS as usize
    }

    /// Frees a frame that was delivered (not a drop).
    pub(crate) fn consume(self) {
        // SAFETY: we own the skb; it is not used after this.
        unsafe { bindings::dmn_consume_skb_any(self.into_raw()) }
    }

    /// Writes the L4 checksum that `frame`'s sender left to the device into
    /// this skb, the same frame as received (TX checksum offload), where the
    /// CPU can read the frame (not GSO, not device memory).
    pub(crate) fn fill_tx_csum(&mut self, frame: &SkBuff) {
        // SAFETY: both skbs are valid (type invariant); this one is ours to write
        // and holds the same bytes, from the same offset, as `frame`.
        unsafe { bindings::dmn_skb_fill_tx_csum(self.ptr.as_ptr(), frame.ptr.as_ptr()) }
    }

    /// Marks the checksum verified (the virtual wire cannot corrupt it).
    pub(crate) fn set_csum_unnecessary(&mut self) {
        // SAFETY: the skb is valid and ours.
        unsafe { bindings::dmn_skb_set_csum_unnecessary(self.ptr.as_ptr()) }
    }

    /// Records the RX queue and hash and sets the protocol (`eth_type_trans`).
    ///
    /// `EINVAL`, the skb untouched, unless its linear part holds a whole
    /// Ethernet header (what `eth_type_trans` reads and pulls).
    pub(crate) fn rx_finish(&mut self, dev: &NetDev, rxq: u16, hash: u32, l4_hash: bool) -> Result {
        if self.headlen() < bindings::ETH_HLEN as usize {
            return Err(EINVAL);
        }
        // SAFETY: the skb is valid and ours, and its linear part starts with at
        // least `ETH_HLEN` bytes (checked above).
        unsafe { bindings::dmn_skb_rx_finish(self.ptr.as_ptr(), dev.as_raw(), rxq, hash, l4_hash) };
        Ok(())
    }

    /// Appends bytes `off..off + len` of a page-pool netmem as a frag; the skb
    /// takes over its reference. `EINVAL` if they are not inside the buffer.
    pub(crate) fn add_netmem_frag(
        &mut self,
        mem: super::page_pool::Netmem<'_>,
        off: u32,
        len: u32,
    ) -> Result {
        if !self.has_free_frag() {
            return Err(ENOSPC);
        }
        let size = mem.size();
        // (u32 + u32 fits in usize.)
        if off as usize + len as usize > size {
            return Err(EINVAL);
        }
        let truesize = u32::try_from(size).map_err(|_| EINVAL)?;
        let raw = mem.into_raw();
        // SAFETY: the skb is ours and has a free frag slot; `raw` is a pool netmem
        // whose reference moves into the skb (which is marked for recycling).
        unsafe { bindings::dmn_skb_add_rx_frag_netmem(self.ptr.as_ptr(), raw, off, len, truesize) };
        Ok(())
    }

    /// Appends the first `len` bytes of a host page-pool fragment as a frag,
    /// charged at the fragment's size; the skb takes over its reference.
    /// `EINVAL` if `len` exceeds the fragment.
    pub(crate) fn add_host_frag(
        &mut self,
        frag: super::page_pool::HostFrag<'_>,
        len: u32,
    ) -> Result {
        if !self.has_free_frag() {
            return Err(ENOSPC);
        }
        if len > frag.size() {
            return Err(EINVAL);
        }
        let truesize = frag.size();
        let va = frag.into_raw();
        // SAFETY: the skb is ours and has a free frag slot; `va` is a fragment of
        // `truesize >= len` bytes of a pool page whose reference moves into the
        // skb (marked for recycling, so it goes back to the pool).
        unsafe { bindings::dmn_skb_add_rx_frag_va(self.ptr.as_ptr(), va, len, truesize) };
        Ok(())
    }

    /// Builds an skb whose head is a page-pool fragment already holding `len`
    /// bytes of frame at `headroom`; recycles to the pool when freed. `_bh`:
    /// `napi_build_skb` takes the skb from a per-CPU cache of NAPI context.
    ///
    /// `EINVAL` (the fragment goes back) unless headroom, frame and the
    /// `skb_shared_info` that `napi_build_skb` puts at the buffer's end all fit
    /// ([`build_size`] gives a size that does).
    pub(crate) fn build(
        _bh: super::napi::BhOff<'_>,
        frag: super::page_pool::HostFrag<'_>,
        headroom: u32,
        len: u32,
    ) -> Result<SkBuff> {
        // SAFETY: returns a constant.
        let shinfo = unsafe { bindings::dmn_skb_shinfo_room() };
        let fits = match (headroom.checked_add(len), frag.size().checked_sub(shinfo)) {
            (Some(used), Some(room)) => used <= room,
            _ => false,
        };
        if !fits {
            return Err(EINVAL);
        }
        let size = frag.size();
        let va = frag.into_raw();
        // SAFETY: `va` is a fragment of `size` bytes that we own; on success the skb
        // owns it (and returns it to its pool, being marked for recycling); bottom
        // halves are off (`_bh`), as the NAPI skb cache needs.
        let raw = unsafe { bindings::napi_build_skb(va, size) };
        if raw.is_null() {
            // SAFETY: the fragment was not taken; give it back to its pool.
            unsafe { bindings::dmn_pp_free_frag_va(va) };
            return Err(ENOMEM);
        }
        // SAFETY: a fresh skb over our buffer with room for `headroom + len`.
        unsafe {
            bindings::dmn_skb_mark_for_recycle(raw);
            bindings::dmn_skb_reserve(raw, headroom as i32);
            bindings::dmn_skb_put(raw, len);
        }
        // SAFETY: we own the new skb.
        Ok(unsafe { SkBuff::from_raw(raw) })
    }

    /// Sets the queue the frame was sent on (what its completion is posted to).
    pub(crate) fn set_queue_mapping(&mut self, queue: u16) {
        // SAFETY: the skb is ours.
        unsafe { bindings::dmn_skb_set_queue_mapping(self.ptr.as_ptr(), queue) }
    }

    /// Does in software what the sender left to the device: segments a TSO
    /// super-frame, or fills a checksum left partial. `None` (the frame
    /// freed) if that is impossible, as for frags in device memory.
    pub(crate) fn offloads_in_software(self) -> Option<SkbList> {
        let raw = self.into_raw();
        // SAFETY: we own `raw`; it moves into the helper, which returns a list
        // of skbs we own or frees it.
        let head = unsafe { bindings::dmn_skb_offloads_in_software(raw) };
        // INVARIANT: a list of owned skbs.
        (!head.is_null()).then_some(SkbList { head })
    }

    /// Takes over `from`'s TCP segmentation (a TSO super-frame stays one skb).
    pub(crate) fn copy_gso_from(&mut self, from: &SkBuff) {
        // SAFETY: both skbs are valid; `self` is ours to modify.
        unsafe { bindings::dmn_skb_copy_gso(self.ptr.as_ptr(), from.ptr.as_ptr()) }
    }

    /// Wire segments this skb stands for (1 unless it is a GSO super-frame).
    pub(crate) fn segments(&self) -> u32 {
        // SAFETY: the skb is valid (type invariant).
        unsafe { bindings::dmn_skb_gso_segs(self.ptr.as_ptr()) }
    }

    /// The hash recorded on the skb (by the sender's steering) and whether it is L4.
    pub(crate) fn hash(&self) -> (u32, bool) {
        // SAFETY: the skb is valid (type invariant).
        unsafe {
            (
                bindings::dmn_skb_hash(self.ptr.as_ptr()),
                bindings::dmn_skb_l4_hash(self.ptr.as_ptr()),
            )
        }
    }

    /// Records a hash on the skb.
    pub(crate) fn set_hash(&mut self, hash: u32, l4: bool) {
        // SAFETY: the skb is valid and ours.
        unsafe { bindings::dmn_skb_set_hash(self.ptr.as_ptr(), hash, l4) }
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: we own the skb (type invariant); it is freed once, here.
        unsafe { bindings::dmn_kfree_skb_any(self.ptr.as_ptr()) }
    }
}

/// Where the headers of a coalesced packet are (see [`SkBuff::complete_gro`]).
pub(crate) struct GroLayout {
    /// The tunnel's outer IP header, if any.
    pub(crate) outer_off: Option<u16>,
    /// Whether that is IPv6.
    pub(crate) outer_v6: bool,
    /// The IP header carrying TCP.
    pub(crate) inner_off: u16,
    /// Whether that is IPv6.
    pub(crate) inner_v6: bool,
    /// The TCP header.
    pub(crate) tcp_off: u16,
    /// The (inner) IPv4 ID stayed fixed across the segments.
    pub(crate) fixed_id: bool,
}

/// Frames from [`SkBuff::offloads_in_software`], taken in order; the rest
/// are freed with the list.
///
/// # Invariants
///
/// `head` is null or the first of a list (through `next`) of skbs we own.
pub(crate) struct SkbList {
    head: *mut bindings::sk_buff,
}

impl Iterator for SkbList {
    type Item = SkBuff;

    fn next(&mut self) -> Option<SkBuff> {
        // SAFETY: a list of skbs we own (type invariant); the first is unlinked.
        let raw = unsafe { bindings::dmn_skb_list_pop(&mut self.head) };
        // SAFETY: an unlinked skb we own.
        (!raw.is_null()).then(|| unsafe { SkBuff::from_raw(raw) })
    }
}

impl Drop for SkbList {
    fn drop(&mut self) {
        for skb in self.by_ref() {
            drop(skb);
        }
    }
}

/// Bytes a buffer needs to hold `len` frame bytes as an skb head (headroom and
/// `skb_shared_info` included).
pub(crate) fn build_size(len: u32) -> u32 {
    // SAFETY: pure arithmetic on constants.
    unsafe { bindings::dmn_skb_build_size(len) }
}

/// Headroom left before received frame data in an skb head.
pub(crate) fn rx_headroom() -> u32 {
    // SAFETY: returns a constant.
    unsafe { bindings::dmn_rx_headroom() }
}

/// Frees skbs parked on CPUs' defer lists (and the page-pool buffers in them)
/// by running the NET_RX softirq on every CPU; sleeps.
///
/// Skbs that TCP freed on another CPU wait on that CPU's defer list until its
/// next NET_RX softirq (`skb_attempt_defer_free()`); on an idle CPU that can
/// be forever, with devmem buffers in their frags. `raise_softirq()` is not
/// exported: on each CPU, an empty skb handed to loopback's backlog raises
/// NET_RX there (`net_rx_action()` flushes the defer list first); the stack
/// drops the skb as an unhandled protocol (lo's `rx_nohandler`).
pub(crate) fn flush_deferred_skbs() {
    // SAFETY: process context (callers may sleep); raising a softirq on each CPU
    // has no other precondition.
    unsafe { bindings::dmn_flush_deferred_skbs() };
}
