// SPDX-License-Identifier: GPL-2.0

//! Socket buffers owned by the driver.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use super::{bindings, netdev::NetDev};
use crate::logic::gro::TCP_CWR;
use core::ptr::NonNull;
use kernel::prelude::*;

pub(crate) use super::frame_reader::FrameReader;

/// The `SKB_GSO_*` bits set here (`gso_type`).
mod gso {
    pub(super) use super::bindings::{
        DMN_SKB_GSO_IPXIP4 as IPXIP4, DMN_SKB_GSO_IPXIP6 as IPXIP6, DMN_SKB_GSO_TCPV4 as TCPV4,
        DMN_SKB_GSO_TCPV6 as TCPV6, DMN_SKB_GSO_TCP_ECN as TCP_ECN,
        DMN_SKB_GSO_TCP_FIXEDID as TCP_FIXEDID,
    };
    /// The GSO types of TCP (IPv4, IPv6, ECN, fixed IPv4 ID): what a TSO
    /// super-frame of the peer carries over to the receiver.
    pub(super) const TCP: u32 = TCPV4 | TCPV6 | TCP_ECN | TCP_FIXEDID;
}

// The fields of `struct sk_buff` read here are where C has them (the rest,
// bitfields and members of unions that differ between kernels, are read by
// the C helpers).
const _: () = {
    use core::mem::offset_of;
    assert!(offset_of!(bindings::sk_buff, len) == bindings::DMN_SKB_LEN as usize);
    assert!(offset_of!(bindings::sk_buff, data) == bindings::DMN_SKB_DATA as usize);
    assert!(
        offset_of!(bindings::sk_buff, queue_mapping) == bindings::DMN_SKB_QUEUE_MAPPING as usize
    );
};

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
        unsafe { (*self.ptr.as_ptr()).len as usize }
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
        // SAFETY: the skb is valid (type invariant); `len` and `data_len` are
        // plain fields (`skb_headlen()`).
        let (len, data_len) = unsafe { ((*self.ptr.as_ptr()).len, (*self.ptr.as_ptr()).data_len) };
        (len - data_len) as usize
    }

    /// The linear part (from `data`).
    pub(crate) fn head(&self) -> &[u8] {
        let len = self.headlen();
        // SAFETY: the skb is valid (type invariant): `data` points at `headlen`
        // initialised bytes that live as long as the skb, which `&self` borrows.
        unsafe { core::slice::from_raw_parts((*self.ptr.as_ptr()).data.cast_const(), len) }
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
    ///
    /// Receive coalescing's last step, as `tcp_gro_complete()` ends the
    /// kernel's GRO and bnxt and mlx5 end their hardware GRO: the header
    /// offsets (a tunnel's outer IP header as the network header, its inner
    /// headers as the inner ones), `CHECKSUM_PARTIAL` over the TCP header,
    /// and the GSO type: TCP over IPv4 or IPv6, `SKB_GSO_TCP_FIXEDID` if the
    /// IPv4 ID stayed fixed (not under a tunnel, whose flag for it 6.12
    /// lacks), the tunnel's `SKB_GSO_IPXIP4`/`6`, `SKB_GSO_TCP_ECN` if the
    /// TCP header has CWR.
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
        let mut ty = if layout.inner_v6 {
            gso::TCPV6
        } else if layout.fixed_id && layout.outer_off.is_none() {
            gso::TCPV4 | gso::TCP_FIXEDID
        } else {
            gso::TCPV4
        };
        if layout.outer_off.is_some() {
            ty |= if layout.outer_v6 {
                gso::IPXIP6
            } else {
                gso::IPXIP4
            };
        }
        // (The TCP flags byte: inside the linear part, checked above.)
        if self.head()[usize::from(layout.tcp_off) + 13] & TCP_CWR != 0 {
            ty |= gso::TCP_ECN;
        }
        let inner_proto: u16 = if layout.inner_v6 {
            bindings::ETH_P_IPV6 as u16
        } else {
            bindings::ETH_P_IP as u16
        };
        let gso = bindings::dmn_gso {
            type_: ty,
            size: mss,
            segs,
        };
        let (nh_off, inner_nh_off) = match layout.outer_off {
            Some(outer) => (outer, layout.inner_off),
            None => (layout.inner_off, 0),
        };
        // SAFETY: the skb is ours; the headers whose offsets are set are
        // inside its linear part (checked above).
        unsafe {
            bindings::dmn_skb_set_gro(
                self.ptr.as_ptr(),
                nh_off,
                layout.tcp_off,
                inner_nh_off,
                inner_proto.to_be(),
                gso,
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
        unsafe { (*self.ptr.as_ptr()).queue_mapping }
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
        self.free_frags() > 0
    }

    /// Frag slots still free.
    pub(crate) fn free_frags(&self) -> usize {
        (bindings::MAX_SKB_FRAGS as usize).saturating_sub(self.nr_frags() as usize)
    }

    /// Frees a frame that was delivered (not a drop).
    pub(crate) fn consume(self) {
        // SAFETY: we own the skb; it is not used after this.
        unsafe {
            bindings::dev_kfree_skb_any_reason(
                self.into_raw(),
                bindings::skb_drop_reason_SKB_CONSUMED,
            )
        }
    }

    /// Writes the L4 checksum that `frame`'s sender left to the device
    /// (`CHECKSUM_PARTIAL`) into this skb, the same frame as received, as a
    /// NIC writes it on the wire (TX checksum offload; 0xffff for a zero
    /// sum, `CSUM_MANGLED_0`, as `skb_checksum_help()` does).
    ///
    /// Done on the receiver's copy, which this device owns, rather than on
    /// the sent skb, which TCP shares with its retransmit queue. A GSO frame
    /// stands for segments whose sums nobody reads (it is received whole, as
    /// GRO would merge them), and device memory is not readable by the CPU:
    /// both keep the sender's partial sum, as does a field outside the
    /// linear part.
    pub(crate) fn fill_tx_csum(&mut self, frame: &SkBuff) {
        if !frame.csum_partial() || frame.gso().size != 0 || !self.frags_readable() {
            return;
        }
        let mut off = 0u16;
        // SAFETY: the skb is valid (type invariant); `off` is valid for a write.
        let start = unsafe { bindings::dmn_skb_csum_start(frame.ptr.as_ptr(), &mut off) };
        let Ok(begin) = usize::try_from(start) else {
            return;
        };
        let field = begin + usize::from(off);
        if field + 2 > self.headlen() {
            return;
        }
        // SAFETY: this skb is ours to write, holds the same bytes from the
        // same offset as `frame`, all readable (checked), and the 2-byte field
        // at `field` is inside its linear part (checked).
        unsafe { bindings::dmn_skb_csum_write(self.ptr.as_ptr(), start, field as i32) }
    }

    /// Reports the checksum as `CHECKSUM_COMPLETE`: `sum` is the folded
    /// ones'-complement sum, as big-endian words, of every byte after the
    /// Ethernet header (what the stack's `skb->csum` covers once the
    /// header is pulled).
    pub(crate) fn set_csum_complete(&mut self, sum: u16) {
        // (`__wsum` holds the sum as the CPU reads the words from memory.)
        let wsum = u32::from(u16::from_ne_bytes(sum.to_be_bytes()));
        // SAFETY: the skb is valid and ours (type invariant).
        unsafe { bindings::dmn_skb_set_csum_complete(self.ptr.as_ptr(), wsum) }
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

    /// Appends a run a pool packed, charged at its truesize: as more bytes
    /// of the last frag where that one ends where the run starts in the same
    /// buffer (the run's reference goes back: the frag holds one), else as a
    /// new frag taking the run's reference.
    /// `ENOSPC` if it needs a frag and none is free (the run goes back).
    /// `Ok(true)`: the last frag was extended.
    pub(crate) fn add_packed(&mut self, run: super::page_pool::PackedRun<'_>) -> Result<bool> {
        let (raw, off) = (run.as_raw(), run.offset() as u32);
        // (Runs are inside a pool buffer, whose size fits in u32.)
        let (len, truesize) = (run.len() as u32, run.truesize() as u32);
        // SAFETY: the skb is ours; the helper extends its last frag only if
        // that frag is of `raw` and ends at `off`, so it then covers bytes of
        // `raw` written for it, which the frag's own reference keeps.
        if unsafe {
            bindings::dmn_skb_coalesce_rx_frag_netmem(self.ptr.as_ptr(), raw, off, len, truesize)
        } {
            return Ok(true);
        }
        if !self.has_free_frag() {
            return Err(ENOSPC);
        }
        let raw = run.into_raw();
        // SAFETY: the skb is ours and has a free frag slot; `raw` is a pool
        // buffer whose reference moves into the skb (marked for recycling),
        // `off..off + len` inside it (the run's invariant).
        unsafe { bindings::dmn_skb_add_rx_frag_netmem(self.ptr.as_ptr(), raw, off, len, truesize) };
        Ok(false)
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
        let shinfo = bindings::DMN_SKB_SHINFO_ROOM;
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
        unsafe { bindings::dmn_skb_build_init(raw, headroom, len) };
        // SAFETY: we own the new skb.
        Ok(unsafe { SkBuff::from_raw(raw) })
    }

    /// Sets the queue the frame was sent on (what its completion is posted to).
    pub(crate) fn set_queue_mapping(&mut self, queue: u16) {
        // SAFETY: the skb is ours.
        unsafe { (*self.ptr.as_ptr()).queue_mapping = queue }
    }

    /// Does in software what the sender left to the device, for a receiver
    /// that runs XDP (which sees wire frames): segments a TSO super-frame, or
    /// fills a checksum left partial. `None` (the frame freed) if that fails
    /// or is impossible: the CPU cannot read device-memory frags (devmem TX)
    /// to segment or checksum them.
    pub(crate) fn offloads_in_software(self) -> Option<SkbList> {
        if !self.frags_readable() {
            return None;
        }
        if self.gso().size != 0 {
            // (`skb_gso_segment()`: no features, the TX path.)
            // SAFETY: we own the skb, a readable GSO one.
            let segs = unsafe { bindings::__skb_gso_segment(self.ptr.as_ptr(), 0, true) };
            if segs.is_null() || kernel::error::from_err_ptr(segs).is_err() {
                return None;
            }
            self.consume();
            // INVARIANT: the segments are new skbs we own.
            return Some(SkbList { head: segs });
        }
        // SAFETY: we own the skb, readable (checked).
        if self.csum_partial() && unsafe { bindings::skb_checksum_help(self.ptr.as_ptr()) } != 0 {
            return None;
        }
        // INVARIANT: a list of the one skb we own (not on any list).
        Some(SkbList {
            head: self.into_raw(),
        })
    }

    /// The skb's GSO fields (all 0 unless it is a GSO super-frame).
    fn gso(&self) -> bindings::dmn_gso {
        // SAFETY: the skb is valid (type invariant).
        unsafe { bindings::dmn_skb_gso(self.ptr.as_ptr()) }
    }

    /// Takes over `from`'s TCP segmentation: a TSO super-frame from the
    /// peer arrives as one skb, as hardware GRO delivers it, keeping its
    /// segmentation so the stack (and GRO) see the wire segments.
    pub(crate) fn copy_gso_from(&mut self, from: &SkBuff) {
        let theirs = from.gso();
        if theirs.size == 0 || theirs.type_ & gso::TCP == 0 {
            return;
        }
        let ours = bindings::dmn_gso {
            type_: theirs.type_ & gso::TCP,
            ..theirs
        };
        // SAFETY: the skb is ours to modify.
        unsafe { bindings::dmn_skb_set_gso(self.ptr.as_ptr(), ours) }
    }

    /// Wire segments this skb stands for (1 unless it is a GSO super-frame).
    pub(crate) fn segments(&self) -> u32 {
        let gso = self.gso();
        if gso.size == 0 {
            1
        } else {
            u32::from(gso.segs.max(1))
        }
    }

    /// The hash recorded on the skb (by the sender's steering) and whether it is L4.
    pub(crate) fn hash(&self) -> (u32, bool) {
        let mut l4 = false;
        // SAFETY: the skb is valid (type invariant); `l4` is valid for a write.
        let hash = unsafe { bindings::dmn_skb_hash(self.ptr.as_ptr(), &mut l4) };
        (hash, l4)
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
        unsafe {
            bindings::dev_kfree_skb_any_reason(
                self.ptr.as_ptr(),
                bindings::skb_drop_reason_SKB_DROP_REASON_NOT_SPECIFIED,
            )
        }
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
