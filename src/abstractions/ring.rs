// SPDX-License-Identifier: GPL-2.0

//! A bounded ring of owned skbs between a sender and a NAPI poller (`ptr_ring`).
//!
//! C header: [`include/linux/ptr_ring.h`](srctree/include/linux/ptr_ring.h)
//!
//! The ring's locks are C's (`src/helpers/ring.c`). Producers are
//! `ndo_start_xmit` calls of the peer's TX queues, which netpoll (netconsole)
//! makes with hard IRQs off, possibly interrupting another TX queue's xmit on
//! the same CPU: the producer lock is taken with IRQs off (a `_bh` unlock
//! would enable softirqs with IRQs disabled), and so it is to count the
//! queued frames, which also keeps a resize from swapping the queue
//! meanwhile. Consumers are NAPI polls and process context: the `_bh`
//! variants.

use super::{bindings, skb::SkBuff};
use core::{
    ptr::NonNull,
    sync::atomic::{AtomicU32, Ordering},
};
use kernel::prelude::*;

/// A ring of skbs; producers and consumers each serialise on the ring's own
/// BH-safe locks, so any context may use it.
///
/// # Invariants
///
/// `ptr` is a ring from `dmn_ring_alloc()`; every entry is an owned skb.
pub(crate) struct SkbRing {
    ptr: NonNull<bindings::ptr_ring>,
    /// Entries the ring has (changed only by `resize`).
    size: AtomicU32,
}

// SAFETY: producers serialise on the ring's producer lock, consumers on its
// consumer lock (inside the helpers).
unsafe impl Send for SkbRing {}
// SAFETY: as above.
unsafe impl Sync for SkbRing {}

impl SkbRing {
    /// A ring of `size` entries.
    pub(crate) fn new(size: u32) -> Result<Self> {
        // SAFETY: plain allocation.
        let raw = unsafe { bindings::dmn_ring_alloc(size) };
        // INVARIANT: freshly allocated, empty.
        NonNull::new(raw)
            .map(|ptr| Self {
                ptr,
                size: AtomicU32::new(size),
            })
            .ok_or(ENOMEM)
    }

    /// Entries the ring has.
    pub(crate) fn size(&self) -> u32 {
        self.size.load(Ordering::Relaxed)
    }

    /// Frames queued (an upper bound: the consumer may take some at once).
    pub(crate) fn len_hint(&self) -> u32 {
        // SAFETY: the ring is valid; the helper takes the producer lock.
        unsafe { bindings::dmn_ring_count_hint(self.ptr.as_ptr()) }
    }

    /// Gives the ring `size` entries, keeping every queued frame in order;
    /// `EBUSY` (ring unchanged) if more than `size` frames are queued: a NIC
    /// does not drop frames it accepted because its ring shrank (which
    /// `ptr_ring_resize()` would). The helper holds both ring locks around
    /// `__ptr_ring_swap_queue()`.
    pub(crate) fn resize(&self, size: u32) -> Result {
        // SAFETY: the ring is valid; the helper takes both of its locks.
        kernel::error::to_result(unsafe { bindings::dmn_ring_resize(self.ptr.as_ptr(), size) })?;
        self.size.store(size, Ordering::Relaxed);
        Ok(())
    }

    /// Adds a frame unless `max` or more are queued or the ring is full;
    /// gives it back then.
    pub(crate) fn produce(&self, skb: SkBuff, max: u32) -> core::result::Result<(), SkBuff> {
        let raw = skb.into_raw();
        // SAFETY: the ring is valid; on success it owns `raw`.
        if unsafe { bindings::dmn_ring_produce_max(self.ptr.as_ptr(), raw.cast(), max) } == 0 {
            Ok(())
        } else {
            // SAFETY: the ring refused `raw`, so we still own it.
            Err(unsafe { SkBuff::from_raw(raw) })
        }
    }

    /// Takes the oldest frame.
    pub(crate) fn consume(&self) -> Option<SkBuff> {
        // SAFETY: the ring is valid; the helper takes the consumer lock.
        let raw = unsafe { bindings::dmn_ring_consume(self.ptr.as_ptr()) };
        // SAFETY: entries are owned skbs (type invariant), now removed from the ring.
        (!raw.is_null()).then(|| unsafe { SkBuff::from_raw(raw.cast()) })
    }

    /// Whether the ring holds no frame (a hint: producers may add at once).
    pub(crate) fn is_empty(&self) -> bool {
        // SAFETY: the ring is valid; the helper takes the consumer lock.
        unsafe { bindings::dmn_ring_empty(self.ptr.as_ptr()) }
    }

    /// Drops every queued frame; returns how many.
    pub(crate) fn purge(&self) -> u64 {
        let mut n = 0;
        while let Some(skb) = self.consume() {
            drop(skb);
            n += 1;
        }
        n
    }
}

impl Drop for SkbRing {
    fn drop(&mut self) {
        self.purge();
        // SAFETY: the ring is valid and now empty; nobody else holds it.
        unsafe { bindings::dmn_ring_free(self.ptr.as_ptr()) };
    }
}
