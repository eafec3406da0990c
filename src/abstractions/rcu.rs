// SPDX-License-Identifier: GPL-2.0

//! A value readers see lock-free and writers replace whole (RCU).
//!
//! Steering tables are read for every transmitted frame, in any context, and
//! changed rarely by ethtool. [`RcuBox`] publishes an immutable `KBox<T>`;
//! readers borrow it inside an RCU read-side section; a writer swaps in a new
//! box and frees the old one after a grace period.

use super::bindings;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::{prelude::*, sync::Mutex};

/// An RCU-published, replace-only value.
///
/// # Invariants
///
/// `ptr` always points to a live value from `KBox::into_raw`; a replaced value
/// is freed only after a grace period (`synchronize_net()`), so a reader
/// inside a read-side section never sees it freed. Writers serialise on
/// `writer`.
#[pin_data(PinnedDrop)]
pub(crate) struct RcuBox<T: Send + Sync> {
    ptr: AtomicPtr<T>,
    #[pin]
    writer: Mutex<()>,
}

impl<T: Send + Sync> RcuBox<T> {
    /// Publishes `value`.
    pub(crate) fn new(value: KBox<T>) -> impl PinInit<Self> {
        // INVARIANT: a live boxed value.
        pin_init!(Self {
            ptr: AtomicPtr::new(KBox::into_raw(value)),
            writer <- kernel::new_mutex!(()),
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

    /// Builds a new value from the current one and publishes it; may sleep.
    pub(crate) fn update(&self, f: impl FnOnce(&T) -> Result<KBox<T>>) -> Result {
        let _w = self.writer.lock();
        let old = self.ptr.load(Ordering::Acquire);
        // SAFETY: only writers free values, and we are the only writer now.
        let new = f(unsafe { &*old })?;
        self.ptr.store(KBox::into_raw(new), Ordering::Release);
        // SAFETY: may sleep (callers are in process context, as `Mutex` already
        // requires); afterwards no reader can hold `old`. (Under rtnl, as
        // ethtool calls are, the grace period is expedited: a key change under
        // load then takes milliseconds, not a normal grace period's tens.)
        unsafe { bindings::synchronize_net() };
        // SAFETY: `old` came from `KBox::into_raw` and is no longer reachable.
        drop(unsafe { KBox::from_raw(old) });
        Ok(())
    }
}

#[pinned_drop]
impl<T: Send + Sync> PinnedDrop for RcuBox<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: being dropped, the box has no readers left; the value came from
        // `KBox::into_raw` and is freed once, here.
        drop(unsafe { KBox::from_raw(self.ptr.load(Ordering::Relaxed)) });
    }
}
