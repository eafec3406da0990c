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
//! and runs the program over it with the queue's [`XdpRxq`], then does what
//! its verdict asks ([`XdpFrame::run`]). The RX metadata kfuncs read the
//! frame's RSS hash through the device's [`XDP_METADATA_OPS`].

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
    (bindings::MAX_SKB_FRAGS as usize).min(FRAG_SLOTS)
}

/// Bytes before the frame in its first page: what a program may grow the
/// head into (`XDP_PACKET_HEADROOM`) plus what the `xdp_frame` written there
/// on conversion takes (`NET_SKB_PAD`), so the whole 256 bytes stay usable
/// (upstream's `xdp.py` grows the head by 256).
pub(crate) fn xdp_headroom() -> usize {
    // SAFETY: returns a constant.
    unsafe { bindings::dmn_xdp_headroom() as usize }
}

/// Frame bytes the first page holds: a single-buffer program sees at most
/// this much.
pub(crate) fn xdp_first_page_capacity() -> usize {
    kernel::page::PAGE_SIZE - xdp_headroom() - bindings::DMN_SKB_SHINFO_ROOM as usize
}

/// The XDP features of a device whose `ndo_bpf` and receive path are this
/// module's: PASS, DROP, TX, REDIRECT, multi-buffer frames, and
/// `ndo_xdp_xmit` of single and multi-buffer frames.
pub(super) const XDP_FEATURES: u32 = bindings::netdev_xdp_act_NETDEV_XDP_ACT_BASIC
    | bindings::netdev_xdp_act_NETDEV_XDP_ACT_REDIRECT
    | bindings::netdev_xdp_act_NETDEV_XDP_ACT_RX_SG
    | bindings::netdev_xdp_act_NETDEV_XDP_ACT_NDO_XMIT
    | bindings::netdev_xdp_act_NETDEV_XDP_ACT_NDO_XMIT_SG;

/// The RX metadata a program may ask of a frame this module built: its RSS
/// hash (`bpf_xdp_metadata_rx_hash`), nothing else.
pub(super) static XDP_METADATA_OPS: bindings::xdp_metadata_ops = bindings::xdp_metadata_ops {
    xmo_rx_hash: Some(xmo_rx_hash),
    // SAFETY: the other callbacks are `Option`s of function pointers, for
    // which all zeroes is `None`.
    ..unsafe { core::mem::zeroed() }
};

/// What `bpf_xdp_metadata_rx_hash()` reports: the RSS hash steering
/// computed for the frame, and what it was taken over; `ENODATA` if none.
///
/// # Safety
///
/// Called by the kfunc with `ctx` the `xdp_buff` of a frame of a device
/// whose metadata ops are [`XDP_METADATA_OPS`] (so the first field of a
/// `dmn_xdp_buff` that [`XdpFrame::run`] filled) and `hash`, `rss_type`
/// valid for writes.
unsafe extern "C" fn xmo_rx_hash(
    ctx: *const bindings::xdp_md,
    hash: *mut u32,
    rss_type: *mut bindings::xdp_rss_hash_type,
) -> core::ffi::c_int {
    // SAFETY: `ctx` is the `xdp` field, at offset 0, of a live `dmn_xdp_buff`
    // (the function's contract).
    let buf = unsafe { &*ctx.cast::<bindings::dmn_xdp_buff>() };
    if buf.hash == 0 {
        return -(bindings::ENODATA as core::ffi::c_int);
    }
    // SAFETY: both valid for writes (the function's contract).
    unsafe {
        *hash = buf.hash;
        *rss_type = buf.hash_type;
    }
    0
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
        unsafe { prog_has_frags(self.ptr) }
    }
}

/// Whether `prog` takes frames in several buffers (`xdp.frags`).
///
/// # Safety
///
/// `prog` is a live program.
unsafe fn prog_has_frags(prog: NonNull<bindings::bpf_prog>) -> bool {
    // SAFETY: a live program has its `aux`, which lives as long as it does.
    unsafe { (*(*prog.as_ptr()).aux).xdp_has_frags }
}

impl Drop for XdpProg {
    fn drop(&mut self) {
        // SAFETY: we hold a reference (type invariant); the program is freed
        // after an RCU grace period, so a NAPI poll still running it is safe.
        unsafe { bindings::bpf_prog_put(self.ptr.as_ptr()) };
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
        unsafe { prog_has_frags(self.ptr) }
    }
}

/// A queue's `xdp_rxq_info`, with its host pool as the memory model (what
/// the core returns buffers through when a program shrinks a frame or its
/// verdict drops it).
///
/// # Invariants
///
/// `ptr` is a `KBox` allocation (`KBox::into_raw`), registered for the
/// device and the pool this value was made with, which outlive it (their
/// owner drops the rxq info first).
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
        let raw = KBox::into_raw(KBox::new(bindings::xdp_rxq_info::default(), GFP_KERNEL)?);
        // Frags are whole host pages of the pool (what tail growth checks).
        // SAFETY: `raw` is a zeroed rxq info of our own; a live device; may
        // sleep (process context).
        let reg = unsafe {
            bindings::__xdp_rxq_info_reg(
                raw,
                dev.as_raw(),
                queue,
                0,
                kernel::page::PAGE_SIZE as u32,
            )
        };
        let mut res = kernel::error::to_result(reg);
        if res.is_ok() {
            // SAFETY: `raw` is registered; a live pool.
            res = kernel::error::to_result(unsafe {
                bindings::xdp_rxq_info_reg_mem_model(
                    raw,
                    bindings::xdp_mem_type_MEM_TYPE_PAGE_POOL,
                    pool.as_raw().cast(),
                )
            });
            if res.is_err() {
                // SAFETY: registered just above, unregistered once.
                unsafe { bindings::xdp_rxq_info_unreg(raw) };
            }
        }
        if let Err(e) = res {
            // SAFETY: from `KBox::into_raw` above, not registered (any more).
            drop(unsafe { KBox::from_raw(raw) });
            return Err(e);
        }
        // SAFETY: `KBox::into_raw` does not return null.
        let ptr = unsafe { NonNull::new_unchecked(raw) };
        // INVARIANT: a `KBox` registered for `dev` and `pool`.
        Ok(Self { ptr })
    }

    /// The device the rxq info was registered for.
    fn dev(&self) -> *mut bindings::net_device {
        // SAFETY: registered (type invariant): `dev` is set and not written
        // again until the rxq info is unregistered, on drop.
        unsafe { (*self.ptr.as_ptr()).dev }
    }
}

impl Drop for XdpRxq {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant), unregistered once; then the
        // `KBox` is freed (no frame of it is in flight: its owner's polls are
        // done).
        unsafe {
            bindings::xdp_rxq_info_unreg(self.ptr.as_ptr());
            drop(KBox::from_raw(self.ptr.as_ptr()));
        }
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
    unsafe { bindings::xdp_do_flush() }
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
    /// this frame's pool) and does what its verdict asks; the pages move into
    /// the verdict or back to the pool. `hash` (0: none; `l4`: over ports
    /// too) is what the RX hash metadata kfunc reports, with its type from
    /// the frame's headers.
    ///
    /// `XDP_PASS` and `XDP_TX` get an skb built on the pages (if none can
    /// be, an exception); `XDP_REDIRECT` hands them to the target, which
    /// [`flush_redirects`] sends on before the poll ends. A failed redirect,
    /// `XDP_ABORTED` and an unknown action (warned about once) are traced
    /// as exceptions (`xdp:xdp_exception`), as the kernel's drivers do.
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
        let mut buf = bindings::dmn_xdp_buff {
            hash,
            hash_type: hash_type.0,
            ..Default::default()
        };
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: moving the head out of a value that is never dropped.
        let head = unsafe { core::ptr::read(&this.head) }.into_raw();
        let (prog, dev) = (prog.ptr.as_ptr(), rxq.dev());
        // SAFETY: a live program (borrowed for the poll) and registered rxq
        // info; the pages are host pages of its pool whose references move
        // into `buf` (type invariant); `frags` and `lens` have `nr` valid
        // entries.
        let act = unsafe {
            bindings::dmn_xdp_run_prog(
                prog,
                &mut buf,
                rxq.ptr.as_ptr(),
                head,
                this.len,
                this.frags.as_ptr(),
                this.lens.as_ptr(),
                this.nr as u32,
            )
        };
        let xdp: *mut bindings::xdp_buff = &mut buf.xdp;
        let verdict = match act {
            bindings::xdp_action_XDP_PASS | bindings::xdp_action_XDP_TX => {
                // SAFETY: `xdp` holds the frame the program passed on, whose
                // pages it holds.
                let skb = unsafe { bindings::dmn_xdp_build_skb(xdp) };
                if !skb.is_null() {
                    // SAFETY: a new skb we own, which took the pages.
                    let skb = unsafe { SkBuff::from_raw(skb) };
                    return if act == bindings::xdp_action_XDP_PASS {
                        XdpVerdict::Pass(skb)
                    } else {
                        XdpVerdict::Tx(skb)
                    };
                }
                XdpVerdict::Exception
            }
            bindings::xdp_action_XDP_REDIRECT => {
                // SAFETY: the device of the rxq info and the program that ran
                // in this poll, live; on success the target owns the pages.
                if unsafe { bindings::xdp_do_redirect(dev, xdp, prog) } == 0 {
                    return XdpVerdict::Redirect;
                }
                // SAFETY: as above.
                unsafe { bindings::dmn_trace_xdp_exception(dev, prog, act) };
                XdpVerdict::Exception
            }
            bindings::xdp_action_XDP_DROP => XdpVerdict::Drop,
            _ => {
                if act != bindings::xdp_action_XDP_ABORTED {
                    // SAFETY: a live device and program.
                    unsafe { bindings::bpf_warn_invalid_xdp_action(dev, prog, act) };
                }
                // SAFETY: as above.
                unsafe { bindings::dmn_trace_xdp_exception(dev, prog, act) };
                XdpVerdict::Exception
            }
        };
        // SAFETY: `xdp` still holds the frame's pages (no skb or target took
        // them); they go back to their pool, through the rxq's memory model.
        unsafe { bindings::xdp_return_buff(xdp) };
        verdict
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
        let raw = unsafe { bindings::xdp_build_skb_from_frame(frame, self.dev.as_raw()) };
        if raw.is_null() {
            // The frame stays the caller's, and so do the ones after it.
            self.frames = &[];
            return None;
        }
        self.taken += 1;
        // Its data at the Ethernet header, as a transmitted frame's
        // (`eth_type_trans()` pulled it).
        // SAFETY: a new skb we own, built on the frame's memory, whose
        // Ethernet header `eth_type_trans()` just pulled (so it is there).
        unsafe { bindings::skb_push(raw, bindings::ETH_HLEN) };
        // SAFETY: a new skb we own.
        Some(unsafe { SkBuff::from_raw(raw) })
    }
}
