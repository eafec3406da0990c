// SPDX-License-Identifier: GPL-2.0

//! Native XDP: the program a device runs, each queue's `xdp_rxq_info`, and
//! one run of a program over a frame in host page-pool pages.
//!
//! C headers: [`include/net/xdp.h`](srctree/include/net/xdp.h),
//! [`include/linux/filter.h`](srctree/include/linux/filter.h)
//!
//! The core moves a program reference into the driver with `ndo_bpf`
//! ([`XdpProg`]); the driver publishes it in an [`XdpSlot`] that NAPI polls
//! read. A poll builds an [`XdpFrame`] (the frame "DMA"ed into whole pages of
//! a host pool, headroom and `skb_shared_info` tailroom left in the first)
//! and runs the program over it with the queue's [`XdpRxq`].

use super::{
    bindings,
    napi::NapiCtx,
    netdev::NetDev,
    page_pool::{Netmem, PagePool},
    skb::SkBuff,
};
use crate::logic::parse::{rss_hash_type, RssHashType};
use core::{
    ptr::{null_mut, NonNull},
    sync::atomic::{AtomicBool, AtomicPtr, Ordering},
};
use kernel::prelude::*;

// The hash type bits the parser names are the kernel's.
const _: () = {
    assert!(RssHashType::L3_IPV4 == bindings::xdp_rss_hash_type_XDP_RSS_L3_IPV4);
    assert!(RssHashType::L3_IPV6 == bindings::xdp_rss_hash_type_XDP_RSS_L3_IPV6);
    assert!(RssHashType::L3_DYNHDR == bindings::xdp_rss_hash_type_XDP_RSS_L3_DYNHDR);
    assert!(RssHashType::L4 == bindings::xdp_rss_hash_type_XDP_RSS_L4);
    assert!(RssHashType::L4_TCP == bindings::xdp_rss_hash_type_XDP_RSS_L4_TCP);
    assert!(RssHashType::L4_UDP == bindings::xdp_rss_hash_type_XDP_RSS_L4_UDP);
    assert!(RssHashType::NONE.0 == bindings::xdp_rss_hash_type_XDP_RSS_TYPE_NONE);
};

/// Frags an [`XdpFrame`] holds at most (`MAX_SKB_FRAGS`' default).
const FRAG_SLOTS: usize = 17;

/// Frags an [`XdpFrame`] may have beyond its first page: the kernel's
/// `MAX_SKB_FRAGS` (a config option), at most [`FRAG_SLOTS`].
pub(crate) fn xdp_max_frags() -> usize {
    // SAFETY: returns a constant.
    let max = unsafe { bindings::dmn_xdp_max_frags() } as usize;
    max.min(FRAG_SLOTS)
}

/// Bytes before the frame in its first page: what a program may grow the
/// head into (`XDP_PACKET_HEADROOM`) plus room for the `xdp_frame`.
pub(crate) fn xdp_headroom() -> usize {
    // SAFETY: returns a constant.
    unsafe { bindings::dmn_xdp_headroom() as usize }
}

/// Frame bytes the first page holds: a single-buffer program sees at most
/// this much.
pub(crate) fn xdp_first_page_capacity() -> usize {
    // SAFETY: returns a constant.
    let tail = unsafe { bindings::dmn_xdp_tailroom() } as usize;
    kernel::page::PAGE_SIZE - xdp_headroom() - tail
}

/// An XDP program reference the driver owns (`struct bpf_prog`).
///
/// # Invariants
///
/// `ptr` is a live program whose reference this value holds.
pub(crate) struct XdpProg {
    ptr: NonNull<bindings::bpf_prog>,
}

// SAFETY: a program reference may be put from any context.
unsafe impl Send for XdpProg {}
// SAFETY: the program is immutable once loaded; shared use only reads it.
unsafe impl Sync for XdpProg {}

impl XdpProg {
    /// Takes over a reference.
    ///
    /// # Safety
    ///
    /// `ptr` is a live program and the caller gives its reference to the value.
    pub(super) unsafe fn from_raw(ptr: NonNull<bindings::bpf_prog>) -> Self {
        // INVARIANT: the caller's guarantee.
        Self { ptr }
    }

    /// Gives the reference up (back to whoever moved it in).
    pub(super) fn into_raw(self) -> *mut bindings::bpf_prog {
        let p = self.ptr.as_ptr();
        core::mem::forget(self);
        p
    }

    /// Whether the program takes frames in several buffers (`xdp.frags`).
    pub(crate) fn has_frags(&self) -> bool {
        // SAFETY: a live program (type invariant).
        unsafe { bindings::dmn_bpf_prog_has_frags(self.ptr.as_ptr()) }
    }
}

impl Drop for XdpProg {
    fn drop(&mut self) {
        // SAFETY: we hold a reference (type invariant); the program is freed
        // after an RCU grace period, so a NAPI poll still running it is safe.
        unsafe { bindings::dmn_bpf_prog_put(self.ptr.as_ptr()) };
    }
}

/// The program a device runs, replaced by its `ndo_bpf`, read by its polls.
///
/// # Invariants
///
/// `ptr` is null or a program whose reference the slot holds. A replaced
/// program's reference is dropped only after it is unpublished; the core
/// frees programs an RCU grace period after their last put, and polls read
/// the slot inside NAPI (an RCU read-side section). `frags` is whether the
/// last program published took frames in several buffers.
pub(crate) struct XdpSlot {
    ptr: AtomicPtr<bindings::bpf_prog>,
    frags: AtomicBool,
}

impl XdpSlot {
    /// An empty slot.
    pub(crate) const fn new() -> Self {
        // INVARIANT: null.
        Self {
            ptr: AtomicPtr::new(null_mut()),
            frags: AtomicBool::new(false),
        }
    }

    /// Publishes `prog`, handing back the program it replaces.
    pub(crate) fn replace(&self, prog: Option<XdpProg>) -> Option<XdpProg> {
        // (Read without the program by the control paths, which serialise
        // with `replace`; polls ask the program itself.)
        self.frags.store(
            prog.as_ref().is_some_and(XdpProg::has_frags),
            Ordering::Release,
        );
        let new = prog.map_or(null_mut(), XdpProg::into_raw);
        let old = self.ptr.swap(new, Ordering::AcqRel);
        // SAFETY: the slot held the old pointer's reference; it moves out.
        NonNull::new(old).map(|p| unsafe { XdpProg::from_raw(p) })
    }

    /// Whether a program is attached.
    pub(crate) fn is_attached(&self) -> bool {
        !self.ptr.load(Ordering::Acquire).is_null()
    }

    /// Whether the attached program (if any) takes frames in several buffers.
    pub(crate) fn attached_has_frags(&self) -> Option<bool> {
        self.is_attached()
            .then(|| self.frags.load(Ordering::Acquire))
    }

    /// The attached program, for the duration of a NAPI poll.
    pub(crate) fn get<'a>(&'a self, _ctx: &'a NapiCtx<'_>) -> Option<XdpProgRef<'a>> {
        let p = NonNull::new(self.ptr.load(Ordering::Acquire))?;
        // INVARIANT: read inside the poll's RCU read-side section, so the
        // program outlives the borrow even if replaced meanwhile.
        Some(XdpProgRef {
            ptr: p,
            _p: core::marker::PhantomData,
        })
    }
}

impl Drop for XdpSlot {
    fn drop(&mut self) {
        drop(self.replace(None));
    }
}

/// A program borrowed for one poll.
///
/// # Invariants
///
/// `ptr` is a program that stays live for `'a`.
pub(crate) struct XdpProgRef<'a> {
    ptr: NonNull<bindings::bpf_prog>,
    _p: core::marker::PhantomData<&'a XdpSlot>,
}

impl XdpProgRef<'_> {
    /// Whether the program takes frames in several buffers (`xdp.frags`).
    pub(crate) fn has_frags(&self) -> bool {
        // SAFETY: a live program (type invariant).
        unsafe { bindings::dmn_bpf_prog_has_frags(self.ptr.as_ptr()) }
    }
}

/// A queue's `xdp_rxq_info`, with its host pool as the memory model (what
/// the core returns buffers through when a program shrinks a frame or its
/// verdict drops it).
///
/// # Invariants
///
/// `ptr` is registered for the pool this value was made with, which
/// outlives it (its owner drops the rxq info first).
pub(crate) struct XdpRxq {
    ptr: NonNull<bindings::xdp_rxq_info>,
}

// SAFETY: registered once; the core only reads it afterwards.
unsafe impl Send for XdpRxq {}
// SAFETY: as above.
unsafe impl Sync for XdpRxq {}

impl XdpRxq {
    /// Registers queue `queue` of `dev` with `pool` (host pages of one page
    /// each). Process context.
    pub(crate) fn new(dev: &NetDev, queue: u32, pool: &PagePool) -> Result<Self> {
        if pool.buf_size() != kernel::page::PAGE_SIZE || pool.allows_unreadable() {
            return Err(EINVAL);
        }
        // SAFETY: a live device and pool; may sleep (process context).
        let raw = unsafe { bindings::dmn_xdp_rxq_register(dev.as_raw(), queue, pool.as_raw()) };
        let ptr = kernel::error::from_err_ptr(raw)?;
        // INVARIANT: registered for `pool`.
        NonNull::new(ptr).map(|ptr| Self { ptr }).ok_or(ENOMEM)
    }
}

impl Drop for XdpRxq {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant), unregistered once.
        unsafe { bindings::dmn_xdp_rxq_unregister(self.ptr.as_ptr()) };
    }
}

/// What a program decided for a frame.
pub(crate) enum XdpVerdict {
    /// Up the stack, in this skb.
    Pass(SkBuff),
    /// Back out of the device it came in on, in this skb.
    Tx(SkBuff),
    /// Dropped by the program (its pages are back in the pool).
    Drop,
    /// Handed to a redirect target (a device map, a CPU map, an AF_XDP
    /// socket), which owns the pages: [`flush_redirects`] before the poll ends.
    Redirect,
    /// Aborted, an unknown action, a redirect that failed, or no skb
    /// could be built: counted as an exception (pages back in the pool).
    Exception,
}

/// Sends on what the poll's programs redirected (`xdp_do_flush`); a poll
/// that got [`XdpVerdict::Redirect`] calls it before it returns.
pub(crate) fn flush_redirects(_ctx: &NapiCtx<'_>) {
    // SAFETY: called from a NAPI poll (the context the per-CPU redirect
    // lists belong to), as `_ctx` shows.
    unsafe { bindings::dmn_xdp_flush() }
}

/// A frame in whole host pages of one pool, as a program will see it.
///
/// # Invariants
///
/// `head` holds `len` frame bytes at [`xdp_headroom`]; each of the first
/// `nr` `frags` holds `lens[i]` bytes from offset 0. All are pages of the
/// pool of `'a`; their references are this value's.
pub(crate) struct XdpFrame<'a> {
    head: Netmem<'a>,
    len: u32,
    frags: [usize; FRAG_SLOTS],
    lens: [u32; FRAG_SLOTS],
    nr: usize,
    pool: &'a PagePool,
}

impl<'a> XdpFrame<'a> {
    /// A frame whose first `len` bytes are in `head` at [`xdp_headroom`];
    /// `EINVAL` unless `head` is a host page of `pool` with room for them.
    pub(crate) fn new(pool: &'a PagePool, head: Netmem<'a>, len: usize) -> Result<Self> {
        if len > xdp_first_page_capacity()
            || head.size() != kernel::page::PAGE_SIZE
            || !head.belongs_to(pool)
        {
            return Err(EINVAL);
        }
        if pool.allows_unreadable() {
            return Err(EINVAL);
        }
        // INVARIANT: checked above; the caller wrote the bytes.
        Ok(Self {
            head,
            len: len as u32,
            frags: [0; FRAG_SLOTS],
            lens: [0; FRAG_SLOTS],
            nr: 0,
            pool,
        })
    }

    /// Appends a page of the pool holding `len` bytes from its start.
    pub(crate) fn push_frag(&mut self, page: Netmem<'a>, len: usize) -> Result {
        if self.nr >= xdp_max_frags()
            || len > page.size()
            || len == 0
            || !page.belongs_to(self.pool)
        {
            return Err(ENOSPC);
        }
        self.lens[self.nr] = len as u32;
        self.frags[self.nr] = page.into_raw();
        self.nr += 1;
        Ok(())
    }

    /// The frame's bytes in its first page.
    fn head_bytes(&self) -> &[u8] {
        // SAFETY: `head` is a host page of the pool holding `len` frame
        // bytes at `xdp_headroom()` (type invariant), so its address is a
        // kernel mapping of the whole page; the borrow of `self`, which
        // holds the page's reference, keeps it alive and unchanged.
        unsafe {
            core::slice::from_raw_parts(
                bindings::dmn_netmem_address(self.head.as_raw())
                    .cast::<u8>()
                    .add(xdp_headroom()),
                self.len as usize,
            )
        }
    }

    /// Runs `prog` over the frame with `rxq` (the queue's, registered for
    /// this frame's pool); the pages move into the verdict or back to the pool.
    /// `hash` (0: none; `l4`: over ports too) is what the RX hash metadata
    /// kfunc reports, with its type from the frame's headers.
    pub(crate) fn run(
        self,
        prog: &XdpProgRef<'_>,
        rxq: &XdpRxq,
        hash: u32,
        l4: bool,
    ) -> XdpVerdict {
        let hash_type = if hash == 0 {
            RssHashType::NONE
        } else {
            rss_hash_type(self.head_bytes(), l4)
        };
        let mut skb: *mut bindings::sk_buff = null_mut();
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: moving the head out of a value that is never dropped.
        let head = unsafe { core::ptr::read(&this.head) }.into_raw();
        // SAFETY: a live program (borrowed for the poll) and registered rxq
        // info; the pages are host pages of its pool whose references move in
        // (type invariant); `frags` and `lens` have `nr` valid entries.
        let act = unsafe {
            bindings::dmn_xdp_run(
                prog.ptr.as_ptr(),
                rxq.ptr.as_ptr(),
                head,
                this.len,
                this.frags.as_ptr(),
                this.lens.as_ptr(),
                this.nr as u32,
                hash,
                hash_type.0,
                &mut skb,
            )
        };
        // SAFETY: a non-null skb from `dmn_xdp_run` is a new one we own.
        let skb = (!skb.is_null()).then(|| unsafe { SkBuff::from_raw(skb) });
        match (act, skb) {
            (bindings::xdp_action_XDP_PASS, Some(s)) => XdpVerdict::Pass(s),
            (bindings::xdp_action_XDP_TX, Some(s)) => XdpVerdict::Tx(s),
            (bindings::xdp_action_XDP_DROP, _) => XdpVerdict::Drop,
            (bindings::xdp_action_XDP_REDIRECT, _) => XdpVerdict::Redirect,
            _ => XdpVerdict::Exception,
        }
    }
}

impl Drop for XdpFrame<'_> {
    fn drop(&mut self) {
        for &raw in &self.frags[..self.nr] {
            // SAFETY: a page of the pool whose reference we hold (type invariant).
            unsafe { bindings::dmn_pp_put_netmem(self.pool.as_raw(), raw, false) };
        }
        // `head` returns itself.
    }
}

/// Frames other devices' programs redirected to a device (`ndo_xdp_xmit`),
/// taken in order as skbs; those not taken stay the caller's.
///
/// # Invariants
///
/// `frames` are frames the core hands to `dev`'s `ndo_xdp_xmit`; the first
/// `taken` have been turned into skbs we own, the rest are the caller's.
pub(crate) struct XdpXmitBatch<'a> {
    dev: &'a NetDev,
    frames: &'a [*mut bindings::xdp_frame],
    taken: usize,
}

impl<'a> XdpXmitBatch<'a> {
    /// A batch of `frames` for `dev`.
    ///
    /// # Safety
    ///
    /// `frames` are what the core passed to `dev`'s `ndo_xdp_xmit`, valid
    /// for the call; the caller reports [`XdpXmitBatch::taken`] back.
    pub(super) unsafe fn new(dev: &'a NetDev, frames: &'a [*mut bindings::xdp_frame]) -> Self {
        // INVARIANT: none taken yet.
        Self {
            dev,
            frames,
            taken: 0,
        }
    }

    /// Frames taken so far.
    pub(super) fn taken(&self) -> usize {
        self.taken
    }

    /// The CPU the batch is sent from (what picks an XDP TX ring).
    pub(crate) fn cpu(&self) -> u32 {
        // SAFETY: reads the current CPU's number; no precondition.
        unsafe { bindings::dmn_current_cpu() }
    }
}

impl Iterator for XdpXmitBatch<'_> {
    type Item = SkBuff;

    fn next(&mut self) -> Option<SkBuff> {
        let frame = *self.frames.get(self.taken)?;
        // SAFETY: a frame handed to this device (type invariant), not taken yet.
        let raw = unsafe { bindings::dmn_xdp_frame_to_skb(frame, self.dev.as_raw()) };
        if raw.is_null() {
            // The frame stays the caller's, and so do the ones after it.
            self.frames = &[];
            return None;
        }
        self.taken += 1;
        // SAFETY: a new skb we own, built on the frame's memory.
        Some(unsafe { SkBuff::from_raw(raw) })
    }
}
