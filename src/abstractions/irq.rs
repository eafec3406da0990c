// SPDX-License-Identifier: GPL-2.0

//! Interrupt lines a virtual device raises itself, one per queue.
//!
//! C helper: `src/helpers/irq_lines.c` (an IRQ domain per device whose lines
//! are raised by an IPI to the CPU of their affinity). To the rest of the
//! kernel they are ordinary IRQs: listed in `/proc/interrupts`, with a
//! writable affinity, reported per NAPI. A line is masked from the moment it
//! is raised until its owner unmasks it (a NIC masks a queue's vector while
//! NAPI polls), so a burst of events raises it once.

use super::bindings;
use core::{
    ptr::NonNull,
    sync::atomic::{AtomicBool, AtomicPtr, Ordering},
};
use kernel::{prelude::*, str::CStr};

/// An IRQ domain: the lines of one device.
///
/// # Invariants
///
/// `raw` holds one reference to a live domain from `dmn_irq_domain_create()`.
pub(crate) struct IrqDomain {
    raw: NonNull<bindings::dmn_irq_domain>,
}

// SAFETY: the domain is only handed to the C helpers, which lock as the IRQ
// core requires; the reference count is atomic.
unsafe impl Send for IrqDomain {}
// SAFETY: as above.
unsafe impl Sync for IrqDomain {}

impl IrqDomain {
    /// A domain named `name` with room for `lines` lines.
    pub(crate) fn new(name: &CStr, lines: u32) -> Result<Self> {
        // SAFETY: `name` is NUL-terminated; the helper copies what it keeps.
        let raw = unsafe { bindings::dmn_irq_domain_create(name.as_char_ptr(), lines) };
        // INVARIANT: the helper returns a live domain with one reference, or null.
        Ok(Self {
            raw: NonNull::new(raw).ok_or(ENOMEM)?,
        })
    }
}

impl Drop for IrqDomain {
    fn drop(&mut self) {
        // SAFETY: our reference (type invariant), dropped once; lines still
        // requested hold their own.
        unsafe { bindings::dmn_irq_domain_put(self.raw.as_ptr()) };
    }
}

/// What an interrupt line's owner does when the line is raised.
pub(crate) trait IrqHandler: HasIrqLine + Sync {
    /// Runs in hardirq context, on the CPU of the line's affinity.
    fn handle_irq(&self);
}

/// Locates the [`IrqLine`] inside its owner.
///
/// # Safety
///
/// `OFFSET` must be the byte offset of an `IrqLine` field in `Self`. The
/// line's drop frees the IRQ, waiting for a raise in flight and a running
/// handler; the owner must raise it only while every field `handle_irq` uses
/// is alive. Use [`impl_has_irq_line!`], which computes the offset and checks
/// the field's type.
pub(crate) unsafe trait HasIrqLine {
    /// Byte offset of the `IrqLine` field.
    const OFFSET: usize;

    /// The `IrqLine` field.
    fn irq_line(&self) -> &IrqLine {
        // SAFETY: `OFFSET` is the offset of an `IrqLine` field of `Self` (trait
        // contract).
        unsafe { super::field_at(self, Self::OFFSET) }
    }
}

/// Implements [`HasIrqLine`] for `$owner` whose `IrqLine` field is `$field`.
#[macro_export]
macro_rules! impl_has_irq_line {
    ($owner:ty, $field:ident) => {
        // SAFETY: `offset_of!` gives the offset of the named field, whose type
        // the function below checks to be `IrqLine`; the owner raises the line
        // only while what its handler uses is alive.
        unsafe impl $crate::abstractions::irq::HasIrqLine for $owner {
            const OFFSET: usize = core::mem::offset_of!($owner, $field);
        }
        const _: () = {
            #[allow(dead_code)]
            fn field_is_the_irq_line(o: &$owner) -> &$crate::abstractions::irq::IrqLine {
                &o.$field
            }
        };
    };
}

/// An interrupt line of an [`IrqDomain`], embedded in the owner that handles it.
///
/// # Invariants
///
/// `raw` is null or a line from `dmn_irq_line_request()` whose handler is
/// `trampoline::<O>` with the address of the pinned `O` this line is the
/// [`HasIrqLine`] field of; it is freed only by the drop.
pub(crate) struct IrqLine {
    raw: AtomicPtr<bindings::dmn_irq_line>,
    /// Unmasked: the next [`IrqLine::trigger`] raises the line.
    unmasked: AtomicBool,
}

impl IrqLine {
    /// A line not requested yet (and masked).
    pub(crate) const fn new() -> Self {
        Self {
            raw: AtomicPtr::new(core::ptr::null_mut()),
            unmasked: AtomicBool::new(false),
        }
    }

    /// Requests line `hwirq` of `domain` for `owner`, named `name` (as
    /// `/proc/interrupts` shows it), on the `hwirq`-th online CPU, round
    /// robin. `EBUSY` if the line is already requested. May sleep.
    pub(crate) fn request<O: IrqHandler>(
        owner: Pin<&O>,
        domain: &IrqDomain,
        hwirq: u32,
        name: &CStr,
    ) -> Result {
        let this = owner.irq_line();
        if !this.raw.load(Ordering::Acquire).is_null() {
            return Err(EBUSY);
        }
        let ctx = core::ptr::from_ref(owner.get_ref()).cast_mut().cast();
        // SAFETY: the domain is live (type invariant of `IrqDomain`); `name` is
        // NUL-terminated and copied; `ctx` is the pinned owner, which outlives
        // the line (its field, freed by the field's drop), as `trampoline::<O>`
        // expects.
        let raw = unsafe {
            bindings::dmn_irq_line_request(
                domain.raw.as_ptr(),
                hwirq,
                name.as_char_ptr(),
                Some(trampoline::<O>),
                ctx,
            )
        };
        if raw.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: a line whose handler is `trampoline::<O>` for this owner.
        if this
            .raw
            .compare_exchange(
                core::ptr::null_mut(),
                raw,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            // SAFETY: never published; nothing raised it.
            unsafe { bindings::dmn_irq_line_free(raw) };
            return Err(EBUSY);
        }
        Ok(())
    }

    /// The line's IRQ number, once requested.
    pub(crate) fn number(&self) -> Option<u32> {
        let raw = self.raw.load(Ordering::Acquire);
        // SAFETY: a non-null line is live until the drop (type invariant).
        (!raw.is_null()).then(|| unsafe { bindings::dmn_irq_line_number(raw) })
    }

    /// Lets the next [`IrqLine::trigger`] raise the line.
    pub(crate) fn unmask(&self) {
        self.unmasked.store(true, Ordering::SeqCst);
    }

    /// Signals an event: raises the line and masks it, unless it is masked
    /// (raised since the owner last unmasked it) or not requested. Any context.
    pub(crate) fn trigger(&self) {
        if !self.unmasked.swap(false, Ordering::SeqCst) {
            return;
        }
        let raw = self.raw.load(Ordering::Acquire);
        if !raw.is_null() {
            // SAFETY: live until the drop (type invariant), which cannot run while
            // `&self` is borrowed.
            unsafe { bindings::dmn_irq_line_raise(raw) };
        }
    }
}

impl Drop for IrqLine {
    fn drop(&mut self) {
        let raw = *self.raw.get_mut();
        if !raw.is_null() {
            // SAFETY: requested and not freed (type invariant); with `&mut self`
            // nothing triggers it any more, and the helper waits for a raise in
            // flight and a running handler before freeing.
            unsafe { bindings::dmn_irq_line_free(raw) };
        }
    }
}

/// The handler registered for owner type `O`.
///
/// # Safety
///
/// Called by the helper with the `ctx` that [`IrqLine::request::<O>`] gave it.
unsafe extern "C" fn trampoline<O: IrqHandler>(ctx: *mut core::ffi::c_void) {
    // SAFETY: `ctx` is the pinned owner, alive until its line's drop returns,
    // which waits for this handler (type invariant of `IrqLine`).
    let owner = unsafe { &*ctx.cast::<O>() };
    owner.handle_irq();
}
