// SPDX-License-Identifier: GPL-2.0

//! A callback run later, in process context, by a field of its owner.
//!
//! C helper: `src/helpers/delayed_call.c` (a `delayed_work` on
//! `system_long_wq`). The kernel crate has `DelayedWork` on 7.2 only; this
//! works on both kernels.

use super::bindings;
use core::marker::PhantomPinned;
use kernel::{prelude::*, types::Opaque};

/// What a [`DelayedCall`] runs: `run` on its owner.
pub(crate) trait DelayedCallback: HasDelayedCall + Send + Sync {
    /// Runs in process context (may sleep; may schedule the call again).
    fn run(&self);
}

/// Locates the [`DelayedCall`] inside its owner.
///
/// # Safety
///
/// `OFFSET` must be the byte offset of a `DelayedCall` field in `Self`, and
/// that field must be dropped before any field `run` uses (declared before
/// them): its drop cancels the call, waits for a running one and refuses any
/// later [`DelayedCall::schedule`], so code that still runs on the owner
/// while its fields drop (a NAPI poll re-arming a timer) cannot bring the
/// call back. Use [`impl_has_delayed_call!`], which computes the offset and
/// checks the field's type.
pub(crate) unsafe trait HasDelayedCall {
    /// Byte offset of the `DelayedCall` field.
    const OFFSET: usize;

    /// The `DelayedCall` field.
    fn delayed_call(&self) -> &DelayedCall {
        // SAFETY: `OFFSET` is the offset of a `DelayedCall` field of `Self`
        // (trait contract).
        unsafe { super::field_at(self, Self::OFFSET) }
    }
}

/// Implements [`HasDelayedCall`] for `$owner` whose `DelayedCall` field,
/// declared before the fields its `run` uses, is `$field`.
#[macro_export]
macro_rules! impl_has_delayed_call {
    ($owner:ty, $field:ident) => {
        // SAFETY: `offset_of!` gives the offset of the named field, whose type
        // the function below checks to be `DelayedCall`; the caller declares it
        // before the fields `run` uses.
        unsafe impl $crate::abstractions::delayed_call::HasDelayedCall for $owner {
            const OFFSET: usize = core::mem::offset_of!($owner, $field);
        }
        const _: () = {
            #[allow(dead_code)]
            fn field_is_the_delayed_call(
                o: &$owner,
            ) -> &$crate::abstractions::delayed_call::DelayedCall {
                &o.$field
            }
        };
    };
}

/// A call of its owner's [`DelayedCallback::run`], scheduled with
/// [`DelayedCall::schedule`]; disabled (cancelled, waited for, and never
/// scheduled again) by [`DelayedCall::disable`] or its drop.
///
/// # Invariants
///
/// `raw` was initialised by `dmn_delayed_call_init()`; a function set in it
/// is `trampoline::<O>` for the `O` this value is the [`HasDelayedCall`]
/// field of.
#[pin_data(PinnedDrop)]
pub(crate) struct DelayedCall {
    #[pin]
    raw: Opaque<bindings::dmn_delayed_call>,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: the C side serialises scheduling and running through the workqueue;
// the owner's callback is `Send + Sync`.
unsafe impl Send for DelayedCall {}
// SAFETY: as above.
unsafe impl Sync for DelayedCall {}

impl DelayedCall {
    /// A call not scheduled yet.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `slot` is valid for writes; the helper initialises it.
            raw <- Opaque::ffi_init(|slot: *mut bindings::dmn_delayed_call| unsafe {
                bindings::dmn_delayed_call_init(slot)
            }),
            _pin: PhantomPinned,
        })
    }

    /// Runs `owner.run()` in about `ms` milliseconds; returns whether this
    /// call scheduled it (not: already pending, or disabled).
    pub(crate) fn schedule<O: DelayedCallback>(owner: &O, ms: u32) -> bool {
        let call = owner.delayed_call();
        // INVARIANT: the function is `trampoline::<O>` and `call` is `owner`'s
        // `HasDelayedCall` field.
        // SAFETY: `call.raw` was initialised (type invariant) and is pinned.
        unsafe { bindings::dmn_delayed_call_schedule(call.raw.get(), Some(trampoline::<O>), ms) }
    }

    /// Cancels the call, waits for a running one, and refuses every later
    /// [`DelayedCall::schedule`]: the owner's teardown. May sleep.
    pub(crate) fn disable(&self) {
        // SAFETY: initialised (type invariant); disabling is idempotent.
        unsafe { bindings::dmn_delayed_call_disable_sync(self.raw.get()) };
    }
}

#[pinned_drop]
impl PinnedDrop for DelayedCall {
    fn drop(self: Pin<&mut Self>) {
        // After this no call runs or is pending, and none can be scheduled, so
        // the owner's fields `run` uses (declared after this one) may go.
        self.disable();
    }
}

/// # Safety
///
/// Called by the helper with a `dmn_delayed_call` scheduled by
/// [`DelayedCall::schedule::<O>`].
unsafe extern "C" fn trampoline<O: DelayedCallback>(raw: *mut bindings::dmn_delayed_call) {
    // SAFETY: `raw` is the `raw` field of a `DelayedCall` (`Opaque::get` returns
    // the inner value's address) which is the `HasDelayedCall` field of a live,
    // pinned `O` at `O::OFFSET` (type invariant; the field's drop cancels and
    // waits for this call before the owner goes).
    let owner = unsafe {
        let call = raw
            .cast::<u8>()
            .sub(core::mem::offset_of!(DelayedCall, raw))
            .cast::<DelayedCall>();
        &*call.cast::<u8>().sub(O::OFFSET).cast::<O>()
    };
    owner.run();
}
