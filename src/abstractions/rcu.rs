// SPDX-License-Identifier: GPL-2.0

//! A value readers see lock-free and writers replace whole (RCU).
//!
//! Steering tables are read for every transmitted frame, in any context, and
//! changed rarely by ethtool. [`RcuBox`] publishes an immutable `KVBox<T>`
//! (tables of tens of KiB: kmalloc, or vmalloc when no contiguous pages are
//! free);
//! readers borrow it inside an RCU read-side section; a writer swaps in a new
//! box and frees the old one after a grace period.
//!
//! A writer does not wait for that grace period: it starts one, keeps the old
//! value, and frees it at the next update (waiting only if that grace period
//! has not ended yet) or when the box goes. An RSS key change under load then
//! takes what the ethtool call costs, not a grace period (7.2 runs ethtool's
//! RSS set without rtnl, so `synchronize_net()` would not even be expedited).

use super::bindings;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::{prelude::*, sync::Mutex};

/// A value replaced by an update, and the grace period that must end before
/// it is freed.
struct Retired<T> {
    value: KVBox<T>,
    /// A cookie from `start_poll_synchronize_rcu()`.
    grace_period: kernel::ffi::c_ulong,
}

impl<T> Retired<T> {
    /// Frees the value once its grace period has ended (waiting if needed).
    fn free(self) {
        // SAFETY: may sleep; callers are in process context (they hold the
        // writer `Mutex` or drop the box). The cookie came from
        // `start_poll_synchronize_rcu()`.
        unsafe { bindings::cond_synchronize_rcu(self.grace_period) };
        drop(self.value);
    }
}

/// An RCU-published, replace-only value.
///
/// # Invariants
///
/// `ptr` always points to a live value from `KVBox::into_raw`; a replaced value
/// is kept in `writer`'s [`Retired`] and freed only after the grace period
/// started when it was replaced, so a reader inside a read-side section never
/// sees it freed. Writers serialise on `writer`.
#[pin_data(PinnedDrop)]
pub(crate) struct RcuBox<T: Send + Sync> {
    ptr: AtomicPtr<T>,
    #[pin]
    writer: Mutex<Option<Retired<T>>>,
}

impl<T: Send + Sync> RcuBox<T> {
    /// Publishes `value`.
    pub(crate) fn new(value: KVBox<T>) -> impl PinInit<Self> {
        // INVARIANT: a live boxed value.
        pin_init!(Self {
            ptr: AtomicPtr::new(KVBox::into_raw(value)),
            writer <- kernel::new_mutex!(None),
        })
    }

    /// Runs `f` on the current value, inside an RCU read-side section.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        // SAFETY: entering a read-side section has no precondition.
        unsafe { bindings::dmn_rcu_read_lock() };
        // SAFETY: the pointer is live and, within this read-side section, is not
        // freed even if a writer replaces it (type invariant).
        let r = f(unsafe { &*self.ptr.load(Ordering::Acquire) });
        // SAFETY: matches the lock above.
        unsafe { bindings::dmn_rcu_read_unlock() };
        r
    }

    /// Runs `f` on the current value as a writer sees it: under the writer
    /// lock, outside any read-side section, so `f` may sleep (allocate with
    /// `GFP_KERNEL`, say). Callers that publish a value built here later must
    /// keep other writers out in between (ethtool calls hold rtnl).
    pub(crate) fn read_sleepable<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        let _w = self.writer.lock();
        // SAFETY: only writers free values, and no writer runs while we hold
        // the writer lock (type invariant).
        f(unsafe { &*self.ptr.load(Ordering::Acquire) })
    }

    /// Builds a new value from the current one and publishes it; may sleep
    /// (only to free the value an earlier update replaced, if its grace period
    /// is still running).
    pub(crate) fn update(&self, f: impl FnOnce(&T) -> Result<KVBox<T>>) -> Result {
        let mut retired = self.writer.lock();
        let old = self.ptr.load(Ordering::Acquire);
        // SAFETY: only writers free values, and we are the only writer now.
        let new = f(unsafe { &*old })?;
        self.ptr.store(KVBox::into_raw(new), Ordering::Release);
        if let Some(r) = retired.take() {
            r.free();
        }
        // INVARIANT: `old` is kept until the grace period starting now ends;
        // readers that could have loaded it are inside that grace period.
        *retired = Some(Retired {
            // SAFETY: `old` came from `KVBox::into_raw` and is no longer published.
            value: unsafe { KVBox::from_raw(old) },
            // SAFETY: no precondition; starts a grace period if none is running.
            grace_period: unsafe { bindings::start_poll_synchronize_rcu() },
        });
        Ok(())
    }
}

#[pinned_drop]
impl<T: Send + Sync> PinnedDrop for RcuBox<T> {
    fn drop(self: Pin<&mut Self>) {
        if let Some(r) = self.writer.lock().take() {
            r.free();
        }
        // SAFETY: being dropped, the box has no readers left; the value came from
        // `KVBox::into_raw` and is freed once, here.
        drop(unsafe { KVBox::from_raw(self.ptr.load(Ordering::Relaxed)) });
    }
}
