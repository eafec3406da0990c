// SPDX-License-Identifier: GPL-2.0

//! Page pools: the RX buffers of a queue, in host memory or, with a memory
//! provider attached by the kernel (devmem), in dma-buf `net_iov`s.
//!
//! The driver never reads a pool buffer through the CPU: it only writes to it
//! as the device would ([`Netmem::device_write`], [`HostFrag::device_write`]:
//! through its bus address, within its bounds), which works for pages and
//! net_iovs alike, and hands it to an skb.

use super::{
    bindings,
    dma::{bus_range, device_write, DmaAddr, DmaDev, DmaSource},
    napi::{Napi, NapiOwner},
    netdev::NetDev,
};
use core::{cell::Cell, marker::PhantomData, ptr::NonNull};
use kernel::{error::from_err_ptr, prelude::*};

// The fields of `struct page_pool` read here are where C has them.
const _: () = {
    assert!(
        core::mem::offset_of!(bindings::page_pool, mp_priv)
            == bindings::DMN_PAGE_POOL_MP_PRIV as usize
    );
    assert!(
        core::mem::offset_of!(bindings::page_pool, slow) == bindings::DMN_PAGE_POOL_SLOW as usize
    );
};

/// A page pool, destroyed on drop.
///
/// # Invariants
///
/// `ptr` is a pool from `page_pool_create()` not yet destroyed, whose buffers
/// are `buf_size` bytes, created for the NAPI `napi`, which is disabled
/// whenever the pool is dropped (the owner's NAPI state holds it). `dev` is
/// the device the pool maps its buffers on, live while the pool is (a net
/// device's parent, which its queues' memory never outlives). `fill` is
/// empty or holds a buffer of this pool (its invariant).
pub(crate) struct PagePool {
    ptr: NonNull<bindings::page_pool>,
    dev: *mut bindings::device,
    buf_size: usize,
    napi: *mut bindings::napi_struct,
    /// (Only its NAPI touches it, with that NAPI's proof; a pool is not
    /// `Sync`, so no other thread can.)
    fill: Cell<Fill>,
}

/// References a buffer being packed starts with: more than it has bytes, so
/// runs never take the last one (the rest go back when it is left).
const FILL_REFS: i32 = 1 << 30;

/// The buffer a pool's payloads are being packed into, front to back
/// ([`PagePool::pack_next`]).
///
/// # Invariants
///
/// `raw` is 0 (no buffer) or a buffer of the pool that holds this value, of
/// which it holds `refs` references (those not handed to runs); `used` of its
/// bytes have been handed out, at most the pool's buffer size.
#[derive(Clone, Copy, Default)]
struct Fill {
    raw: usize,
    used: usize,
    refs: i32,
}

// SAFETY: page pool allocation is tied to the NAPI that owns the pool's user
// (the poll); freeing and stats may run anywhere.
unsafe impl Send for PagePool {}

/// Parameters of a new pool.
pub(crate) struct PoolConfig<'a, S> {
    /// Device the pool DMA-maps pages on.
    pub(crate) dma_dev: DmaDev<'a>,
    /// The NAPI that allocates from it (for lockless direct recycling).
    pub(crate) napi: &'a Napi<S>,
    /// Device and RX queue the pool serves (shown by the netdev netlink family).
    pub(crate) netdev: &'a NetDev,
    /// RX queue index.
    pub(crate) queue: u32,
    /// Recycling ring size.
    pub(crate) size: u32,
    /// Buffers are `PAGE_SIZE << order` bytes (a memory provider must agree:
    /// devmem takes order 0 only, io_uring zcrx its `rx_buf_len`).
    pub(crate) order: u32,
    /// Lets the kernel attach a memory provider (devmem) bound to this queue;
    /// needs rtnl held.
    pub(crate) allow_unreadable: bool,
}

impl PagePool {
    /// Most buffer order a pool takes (`MAX_PAGE_ORDER` is at least 10).
    pub(crate) const MAX_ORDER: u32 = 8;

    /// Creates a pool of DMA-mapped buffers of `cfg.order`.
    pub(crate) fn new<S>(cfg: &PoolConfig<'_, S>) -> Result<Self> {
        if cfg.order > Self::MAX_ORDER {
            return Err(EINVAL);
        }
        let mut pp = bindings::page_pool_params::default();
        // SAFETY: `pp` is zeroed, a valid value of either member of its two
        // unions (integers and pointers); `fast` and `slow` are what C reads.
        let (fast, slow) =
            unsafe { (&mut pp.__bindgen_anon_1.fast, &mut pp.__bindgen_anon_2.slow) };
        fast.order = cfg.order;
        fast.pool_size = cfg.size;
        fast.nid = bindings::NUMA_NO_NODE;
        fast.dev = cfg.dma_dev.as_raw();
        // (No NAPI yet: the pool is its NAPI's from `attach_napi`, so that one
        // made for a running NAPI and dropped unused, a failed queue restart's,
        // is destroyed as never its: page_pool_destroy() warns otherwise.)
        fast.dma_dir = bindings::dma_data_direction_DMA_FROM_DEVICE;
        fast.max_len = (kernel::page::PAGE_SIZE << cfg.order) as u32;
        slow.netdev = cfg.netdev.as_raw();
        slow.queue_idx = cfg.queue;
        // A memory provider needs DMA_MAP and DMA_SYNC_DEV (it turns the sync
        // off); the kernel attaches one only to a pool that allows unreadable
        // netmem.
        slow.flags = bindings::DMN_PP_FLAG_DMA_MAP | bindings::DMN_PP_FLAG_DMA_SYNC_DEV;
        if cfg.allow_unreadable {
            slow.flags |= bindings::DMN_PP_FLAG_ALLOW_UNREADABLE_NETMEM;
        }
        // SAFETY: `pp` is valid for the call, and the pointers in it are live;
        // the pool keeps the devices, which its owner keeps alive until the
        // pool is gone.
        let raw = unsafe { bindings::page_pool_create(&pp) };
        let raw = from_err_ptr(raw)?;
        // INVARIANT: created successfully.
        NonNull::new(raw)
            .map(|ptr| Self {
                ptr,
                dev: cfg.dma_dev.as_raw(),
                buf_size: kernel::page::PAGE_SIZE << cfg.order,
                napi: cfg.napi.as_raw(),
                fill: Cell::new(Fill::default()),
            })
            .ok_or(ENOMEM)
    }

    /// Bytes in each buffer [`PagePool::alloc_netmem`] returns.
    pub(crate) fn buf_size(&self) -> usize {
        self.buf_size
    }

    /// The pool's identity (its address), to tell pools apart in tests and logs.
    pub(crate) fn id(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Whether the kernel attached a memory provider (a devmem binding).
    pub(crate) fn has_provider(&self) -> bool {
        // SAFETY: the pool is live (type invariant); its provider is set when
        // it is created, never after.
        unsafe { !(*self.ptr.as_ptr()).mp_priv.is_null() }
    }

    /// Buffers handed out and not yet back in the pool (alloc cache,
    /// recycle ring) or released: held by skbs, sockets or userspace tokens.
    /// For a pool that no longer allocates (retired), this only goes down.
    ///
    /// The ring's entries are those from `consumer_head` up to `producer`: a
    /// `ptr_ring` zeroes consumed slots lazily, in batches, so a slot behind
    /// `consumer_head` may still look full while its buffer is out. Counting
    /// non-NULL slots would call such buffers cached and let a devmem pool be
    /// destroyed with buffers out (its deferred release then outlives our
    /// parent device).
    pub(crate) fn outstanding(&self) -> isize {
        // SAFETY: the pool is live (type invariant); the helper takes the ring's
        // consumer lock itself.
        unsafe { bindings::dmn_page_pool_outstanding(self.ptr.as_ptr()) }
    }

    /// Logs the pool's accounting (debug).
    pub(crate) fn debug(&self) {
        let pool = self.ptr.as_ptr();
        // SAFETY: the pool is live (type invariant); the counters are read
        // racily, as a log line may.
        let (hold, release, cached, users, mp) = unsafe {
            (
                core::ptr::read_volatile(&(*pool).pages_state_hold_cnt),
                core::ptr::read_volatile(&(*pool).pages_state_release_cnt.counter),
                core::ptr::read_volatile(&(*pool).alloc.count),
                core::ptr::read_volatile(&(*pool).user_cnt.refs.counter),
                (*pool).mp_priv,
            )
        };
        pr_info!(
            "pool {:p} hold {} release {} alloc.count {} outstanding {} user_cnt {} mp {:p}\n",
            pool,
            hold,
            release,
            cached,
            self.outstanding(),
            users,
            mp
        );
    }

    /// Whether the pool was created with `PP_FLAG_ALLOW_UNREADABLE_NETMEM`.
    pub(crate) fn allows_unreadable(&self) -> bool {
        // SAFETY: the pool is live (type invariant); its flags are set when it
        // is created, never after.
        let flags = unsafe { (*self.ptr.as_ptr()).slow.flags };
        flags & bindings::DMN_PP_FLAG_ALLOW_UNREADABLE_NETMEM != 0
    }

    /// The RX queue index the pool was created for, and whether it names `dev`.
    pub(crate) fn queue_of(&self, dev: &NetDev) -> (u32, bool) {
        // SAFETY: the pool is live (type invariant); what it was created for
        // is set when it is created, never after.
        let slow = unsafe { &(*self.ptr.as_ptr()).slow };
        (slow.queue_idx, slow.netdev == dev.as_raw())
    }

    /// Hands the pool to its NAPI, for direct recycling in that NAPI's
    /// context, when the queue starts on it (as bnxt and fbnic do on a queue
    /// restart). `_off` proves the NAPI is not polling.
    pub(crate) fn attach_napi(&self, _off: &super::napi::NapiOff) {
        let napi = self.napi;
        #[cfg(dmn_pp_enable_direct)]
        // SAFETY: the pool is live; its NAPI (the owner's) outlives it.
        unsafe {
            bindings::page_pool_enable_direct_recycling(self.ptr.as_ptr(), napi)
        };
        #[cfg(not(dmn_pp_enable_direct))]
        // SAFETY: the pool is live and its NAPI (the owner's, which outlives
        // it) not polling: the data path reads nothing of it meanwhile; the
        // write is 7.x's page_pool_enable_direct_recycling() (netlink's dumps
        // read the field for the NAPI's id: a pointer from NULL to a live
        // NAPI).
        unsafe {
            core::ptr::addr_of_mut!((*self.ptr.as_ptr()).p.napi).write_volatile(napi)
        };
    }

    /// Unlinks the pool from its NAPI, so the pool can be destroyed after that
    /// NAPI runs again for other memory, and gives back the buffer it was
    /// packing (its runs keep their references). `_off` proves the NAPI is not
    /// polling.
    pub(crate) fn detach_napi(&self, _off: &super::napi::NapiOff) {
        self.release_fill();
        // SAFETY: the pool is live; its NAPI (the only one pools are created with,
        // the owner's) is disabled while a `NapiOff` exists.
        unsafe { bindings::page_pool_disable_direct_recycling(self.ptr.as_ptr()) };
    }

    /// The C pool (for the layer's other wrappers).
    pub(super) fn as_raw(&self) -> *mut bindings::page_pool {
        self.ptr.as_ptr()
    }

    /// A whole buffer (page or net_iov), for the pool's own NAPI (its poll,
    /// or with it stopped); `None` if there is none, or if `owner` speaks for
    /// another NAPI.
    pub(crate) fn alloc_netmem(&self, owner: NapiOwner<'_>) -> Option<Netmem<'_>> {
        if owner.as_raw() != self.napi {
            return None;
        }
        // SAFETY: the pool is live; its NAPI polls this call or is stopped
        // (`owner` is that NAPI's, while its proof lives), so nothing else uses
        // the pool's lockless cache.
        let raw = unsafe {
            bindings::page_pool_alloc_netmems(self.ptr.as_ptr(), bindings::DMN_GFP_ATOMIC_NOWARN)
        };
        // INVARIANT: a non-zero netmem is a buffer of this pool we now hold.
        (raw != 0).then(|| Netmem {
            raw,
            size: self.buf_size(),
            pool: self.ptr,
            dev: self.dev,
            _p: PhantomData,
        })
    }

    /// A host-memory fragment of `size` bytes, for the pool's own NAPI (as
    /// [`PagePool::alloc_netmem`]); only for pools without a provider.
    pub(crate) fn alloc_frag(&self, owner: NapiOwner<'_>, size: u32) -> Option<HostFrag<'_>> {
        if size as usize > kernel::page::PAGE_SIZE || owner.as_raw() != self.napi {
            return None;
        }
        let mut offset = 0u32;
        let mut dma: DmaAddr = 0;
        // SAFETY: the pool is live; its NAPI polls this call or is stopped (as
        // in `alloc_netmem`); the out-parameters are valid for writes.
        let va =
            unsafe { bindings::dmn_pp_alloc_frag(self.ptr.as_ptr(), size, &mut offset, &mut dma) };
        // INVARIANT: a fragment of a host page of this pool, `size` bytes at `va`.
        NonNull::new(va).map(|va| HostFrag {
            va,
            dma,
            size,
            dev: self.dev,
            _p: PhantomData,
        })
    }
}

impl PagePool {
    /// The next run of at most `want` bytes (at least one) of the buffer the
    /// pool's payloads are packed into, for the pool's own NAPI (as
    /// [`PagePool::alloc_netmem`]): at the first multiple of `align` (a power
    /// of two; 1: back to back) at or after where the last run ended, or at
    /// the start of a new buffer once the current one has no room there
    /// (bytes that do not fit continue in a new buffer, in a run of their
    /// own). The run is charged up to the next multiple of `align`, within
    /// the buffer. `None` if there is no buffer, `align` is not a power of
    /// two, or `owner` is another NAPI's.
    pub(crate) fn pack_next(
        &self,
        owner: NapiOwner<'_>,
        want: usize,
        align: usize,
    ) -> Option<PackedRun<'_>> {
        if want == 0 || !align.is_power_of_two() || owner.as_raw() != self.napi {
            return None;
        }
        let mut fill = self.fill.get();
        fill.used = fill.used.next_multiple_of(align);
        if fill.raw == 0 || fill.used >= self.buf_size {
            self.release_fill();
            let raw = self.alloc_netmem(owner)?.into_raw();
            // SAFETY: a buffer just allocated, whose one reference we hold.
            unsafe { bindings::dmn_pp_set_refs(raw, FILL_REFS) };
            // INVARIANT: a buffer of this pool, all `FILL_REFS` references ours.
            fill = Fill {
                raw,
                used: 0,
                refs: FILL_REFS,
            };
        }
        let off = fill.used;
        let len = want.min(self.buf_size - off);
        fill.used += len;
        let truesize = len.next_multiple_of(align).min(self.buf_size - off);
        // (Runs take at most one reference a byte: never the last.)
        fill.refs -= 1;
        self.fill.set(fill);
        // INVARIANT: one of the buffer's references moves to the run, whose
        // bytes are inside the buffer.
        Some(PackedRun {
            raw: fill.raw,
            off,
            len,
            truesize,
            size: self.buf_size,
            pool: self.ptr,
            dev: self.dev,
            _p: PhantomData,
        })
    }

    /// As [`Self::pack_next`] (back to back), from the start of a new buffer:
    /// the current one is left with whatever room it has.
    pub(crate) fn pack_fresh(&self, owner: NapiOwner<'_>, want: usize) -> Option<PackedRun<'_>> {
        if owner.as_raw() != self.napi {
            return None;
        }
        self.release_fill();
        self.pack_next(owner, want, 1)
    }

    /// Leaves the buffer being packed: its references not handed to runs go
    /// back (the buffer to the pool once the runs' are gone too).
    fn release_fill(&self) {
        let Fill { raw, refs, .. } = self.fill.take();
        if raw != 0 {
            // SAFETY: `raw` is a buffer of this live pool of which we held
            // `refs` references (`Fill`'s invariant), now given up.
            unsafe { bindings::dmn_pp_drop_refs(self.ptr.as_ptr(), raw, refs) };
        }
    }
}

impl Drop for PagePool {
    fn drop(&mut self) {
        self.release_fill();
        // SAFETY: live pool, destroyed once; buffers still in flight keep the pool's
        // memory until they come back (the core defers the release).
        unsafe { bindings::page_pool_destroy(self.ptr.as_ptr()) };
    }
}

/// Writes `len` bytes from `src` at `offset` of a pool buffer of `size`
/// bytes at bus address `base` on `dev`, as the NIC's DMA engine; `EINVAL`
/// past the buffer. Only for [`Netmem`] and [`HostFrag`], which hold their
/// buffer and pass their own fields (their invariants give what it needs).
fn write_held(
    dev: *mut bindings::device,
    base: DmaAddr,
    size: usize,
    offset: usize,
    len: usize,
    src: &mut impl DmaSource,
) -> Result {
    let addr = bus_range(base, size, offset, len)?;
    // SAFETY: `dev` is the pool's device, live while the pool is (its
    // invariant), which outlives the buffer's holder; `base..base + size` is
    // the buffer it holds, so the device owns it until it is handed on, and
    // the range is inside it (checked).
    unsafe { device_write(DmaDev::from_raw(dev), addr, len, src) }
}

/// A reference to one pool buffer (`netmem_ref`); returned to the pool on drop.
///
/// # Invariants
///
/// `raw` is a netmem of `pool` whose reference this value holds; it is
/// `size` bytes (the pool's buffer size), mapped on `dev` (the pool's).
pub(crate) struct Netmem<'a> {
    raw: usize,
    size: usize,
    pool: NonNull<bindings::page_pool>,
    dev: *mut bindings::device,
    _p: PhantomData<&'a PagePool>,
}

impl Netmem<'_> {
    /// The bus address the NIC writes to.
    fn dma_addr(&self) -> DmaAddr {
        // SAFETY: a pool buffer of a `PP_FLAG_DMA_MAP` pool (type invariant).
        unsafe { bindings::dmn_netmem_dma_addr(self.raw) }
    }

    /// Bytes in the buffer.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Writes `len` bytes from `src` at `offset` of the buffer, as the NIC's
    /// DMA engine; `EINVAL` past the buffer, `EFAULT` if its memory is not
    /// RAM reachable by dma-direct.
    pub(crate) fn device_write(
        &mut self,
        offset: usize,
        len: usize,
        src: &mut impl DmaSource,
    ) -> Result {
        write_held(self.dev, self.dma_addr(), self.size, offset, len, src)
    }

    /// The netmem reference (still this value's).
    pub(super) fn as_raw(&self) -> usize {
        self.raw
    }

    /// Whether the buffer is one of `pool`'s.
    pub(super) fn belongs_to(&self, pool: &PagePool) -> bool {
        self.pool == pool.ptr
    }

    /// Gives up the reference (to an skb frag).
    pub(crate) fn into_raw(self) -> usize {
        let raw = self.raw;
        core::mem::forget(self);
        raw
    }
}

impl Drop for Netmem<'_> {
    fn drop(&mut self) {
        // SAFETY: we hold a reference to a buffer of `pool` (type invariant), which
        // outlives us (`'a`); not from a known NAPI context, so no direct recycle.
        unsafe { bindings::dmn_pp_put_netmem(self.pool.as_ptr(), self.raw, false) };
    }
}

/// A run of bytes in a buffer a pool packs payloads into, holding one
/// reference to the buffer (returned on drop).
///
/// # Invariants
///
/// `raw` is a buffer of `pool` of `size` bytes mapped on `dev` (the pool's),
/// one of whose references this value holds; `off + len <= off + truesize
/// <= size`.
pub(crate) struct PackedRun<'a> {
    raw: usize,
    off: usize,
    len: usize,
    truesize: usize,
    size: usize,
    pool: NonNull<bindings::page_pool>,
    dev: *mut bindings::device,
    _p: PhantomData<&'a PagePool>,
}

impl PackedRun<'_> {
    /// Its bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Where it starts in its buffer.
    pub(super) fn offset(&self) -> usize {
        self.off
    }

    /// The bytes of its buffer it is charged for (its own and the padding
    /// after them up to the next run's alignment).
    pub(super) fn truesize(&self) -> usize {
        self.truesize
    }

    /// The buffer (still referenced by this value).
    pub(super) fn as_raw(&self) -> usize {
        self.raw
    }

    /// Writes its bytes from `src`, as the NIC's DMA engine; `EFAULT` if the
    /// buffer's memory is not RAM reachable by dma-direct.
    pub(crate) fn device_write(&mut self, src: &mut impl DmaSource) -> Result {
        // SAFETY: a pool buffer of a `PP_FLAG_DMA_MAP` pool (type invariant).
        let base = unsafe { bindings::dmn_netmem_dma_addr(self.raw) };
        write_held(self.dev, base, self.size, self.off, self.len, src)
    }

    /// Gives up the reference (to an skb frag).
    pub(super) fn into_raw(self) -> usize {
        let raw = self.raw;
        core::mem::forget(self);
        raw
    }
}

impl Drop for PackedRun<'_> {
    fn drop(&mut self) {
        // SAFETY: we hold a reference to a buffer of `pool` (type invariant),
        // which outlives us (`'a`); not from a known NAPI context.
        unsafe { bindings::dmn_pp_put_netmem(self.pool.as_ptr(), self.raw, false) };
    }
}

/// A fragment of a host page from a pool, for headers or a linear frame.
///
/// # Invariants
///
/// `va` is the kernel address of `size` bytes of a fragment of a page of the
/// pool of `'a` (which the page names), that this value holds a reference
/// to; `dma` is its bus address on `dev` (the pool's).
pub(crate) struct HostFrag<'a> {
    va: NonNull<core::ffi::c_void>,
    dma: DmaAddr,
    size: u32,
    dev: *mut bindings::device,
    _p: PhantomData<&'a PagePool>,
}

impl HostFrag<'_> {
    /// Size in bytes.
    pub(crate) fn size(&self) -> u32 {
        self.size
    }

    /// Writes `len` bytes from `src` at `offset` of the fragment, as the
    /// NIC's DMA engine; `EINVAL` past the fragment.
    pub(crate) fn device_write(
        &mut self,
        offset: usize,
        len: usize,
        src: &mut impl DmaSource,
    ) -> Result {
        write_held(self.dev, self.dma, self.size as usize, offset, len, src)
    }

    /// Gives up the reference, returning the kernel address (to `napi_build_skb`).
    pub(crate) fn into_raw(self) -> *mut core::ffi::c_void {
        let va = self.va.as_ptr();
        core::mem::forget(self);
        va
    }
}

impl Drop for HostFrag<'_> {
    fn drop(&mut self) {
        // SAFETY: we hold a reference to this fragment of a page of a live
        // pool, which its page names (type invariant).
        unsafe { bindings::dmn_pp_free_frag_va(self.va.as_ptr()) };
    }
}

/// Waits until memory providers released by destroyed pools have finished
/// their deferred teardown; sleeps. Owners call it before the DMA device
/// goes away.
///
/// A devmem binding's last reference can drop when a page pool is
/// destroyed; 7.2 then frees the binding (unmapping and detaching the
/// dma-buf from our parent device) from `schedule_work()`, reached through
/// its percpu_ref's release, which may itself run from the RCU callback of
/// `percpu_ref_kill()`. So: wait for pending RCU callbacks, then for the work
/// they queued (`__flush_workqueue()`: the core queues it on the system
/// queue and offers nothing else to wait on; C's `flush_workqueue()` macro
/// warns at build time about flushing a system-wide queue). 6.12 frees the
/// binding synchronously; the wait is then a no-op.
pub(crate) fn wait_for_provider_release() {
    // SAFETY: process context (callers may sleep); waiting has no other
    // precondition, and the system queues exist from boot on.
    unsafe {
        bindings::rcu_barrier();
        #[cfg(dmn_system_percpu_wq)]
        bindings::__flush_workqueue(bindings::system_percpu_wq);
        #[cfg(not(dmn_system_percpu_wq))]
        bindings::__flush_workqueue(bindings::system_wq);
    }
}
