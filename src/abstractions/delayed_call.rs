// SPDX-License-Identifier: GPL-2.0

//! A callback run later, in process context, by a field of its owner.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h)
//!
//! A `delayed_work` on `system_long_wq` (its calls may sleep and repeat for
//! as long as a process holds buffers) whose function is set when it is
//! scheduled, and which, once disabled, stays disabled. The kernel crate has
//! `DelayedWork` on 7.2 only; this works on every kernel.

use super::bindings;
use core::{
    marker::{PhantomData, PhantomPinned},
    ptr::{from_ref, null_mut},
    sync::atomic::{AtomicPtr, Ordering},
};
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
/// `work` was initialised with [`work_fn`]; `run` is null or the
/// [`Runner`] of the `O` this value is the [`HasDelayedCall`] field of.
#[pin_data(PinnedDrop)]
pub(crate) struct DelayedCall {
    #[pin]
    work: Opaque<bindings::delayed_work>,
    /// What the work runs, set when it is scheduled (only then is the owner's
    /// type known).
    run: AtomicPtr<Runner>,
    #[pin]
    _pin: PhantomPinned,
}

/// The function that runs the owner of a [`DelayedCall`] (`trampoline::<O>`).
struct Runner(unsafe fn(&DelayedCall));

/// The `'static` [`Runner`] of each owner type.
struct Runners<O>(PhantomData<O>);

impl<O: DelayedCallback> Runners<O> {
    const RUNNER: Runner = Runner(trampoline::<O>);
}

// SAFETY: the workqueue serialises scheduling and running; the owner's
// callback is `Send + Sync`.
unsafe impl Send for DelayedCall {}
// SAFETY: as above.
unsafe impl Sync for DelayedCall {}

impl DelayedCall {
    /// A call not scheduled yet.
    pub(crate) fn new() -> impl PinInit<Self> {
        // INVARIANT: the work runs `work_fn`, nothing set to run yet.
        pin_init!(Self {
            // SAFETY: `slot` is valid for writes; the helper initialises it.
            work <- Opaque::ffi_init(|slot: *mut bindings::delayed_work| unsafe {
                bindings::dmn_init_delayed_work(slot, Some(work_fn))
            }),
            run: AtomicPtr::new(null_mut()),
            _pin: PhantomPinned,
        })
    }

    /// Runs `owner.run()` in about `ms` milliseconds; returns whether this
    /// call scheduled it (not: already pending, or disabled).
    pub(crate) fn schedule<O: DelayedCallback>(owner: &O, ms: u32) -> bool {
        let call = owner.delayed_call();
        let runner: &'static Runner = &Runners::<O>::RUNNER;
        // INVARIANT: `O`'s runner, and `call` is `owner`'s `HasDelayedCall`
        // field.
        call.run
            .store(from_ref(runner).cast_mut(), Ordering::Release);
        // SAFETY: `call.work` was initialised (type invariant) and is pinned;
        // `system_long_wq` is set at boot.
        unsafe { bindings::dmn_queue_delayed_work(bindings::system_long_wq, call.work.get(), ms) }
    }

    /// Cancels the call, waits for a running one (which may have requeued
    /// itself), and refuses every later [`DelayedCall::schedule`]: whoever
    /// still holds the owner (a NAPI poll) cannot re-arm it once it is gone.
    /// The owner's teardown. May sleep.
    pub(crate) fn disable(&self) {
        // SAFETY: initialised (type invariant); disabling is idempotent.
        unsafe { bindings::disable_delayed_work_sync(self.work.get()) };
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

/// The work's function: runs what the call was last scheduled with.
///
/// # Safety
///
/// Called by the workqueue with the `work` of an initialised [`DelayedCall`].
unsafe extern "C" fn work_fn(work: *mut bindings::work_struct) {
    // SAFETY: `work` is the `work` member of the `delayed_work` that
    // `DelayedCall::work` holds (`Opaque::get` returns the inner value's
    // address), in a live `DelayedCall` (the function's contract; its drop
    // waits for this call).
    let call = unsafe {
        &*work
            .cast::<u8>()
            .sub(core::mem::offset_of!(bindings::delayed_work, work))
            .sub(core::mem::offset_of!(DelayedCall, work))
            .cast::<DelayedCall>()
    };
    let run = call.run.load(Ordering::Acquire);
    if !run.is_null() {
        // SAFETY: a `'static` runner of the call's owner type (type invariant).
        unsafe { ((*run).0)(call) };
    }
}

/// # Safety
///
/// Called by [`work_fn`] with a `DelayedCall` scheduled by
/// [`DelayedCall::schedule::<O>`].
unsafe fn trampoline<O: DelayedCallback>(call: &DelayedCall) {
    // SAFETY: `call` is the `HasDelayedCall` field of a live, pinned `O` at
    // `O::OFFSET` (type invariant; the field's drop cancels and waits for
    // this call before the owner goes).
    let owner = unsafe { &*from_ref(call).cast::<u8>().sub(O::OFFSET).cast::<O>() };
    owner.run();
}
