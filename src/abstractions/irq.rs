// SPDX-License-Identifier: GPL-2.0

//! Interrupt lines a virtual device raises itself, one per queue.
//!
//! C header: [`include/linux/irqdomain.h`](srctree/include/linux/irqdomain.h)
//!
//! A real NIC raises a queue's MSI-X vector on the CPU its affinity names, and
//! the handler schedules the queue's NAPI there. devmemnic has no hardware, so
//! each device gets its own IRQ domain (as `kernel/irq/irq_sim.c` makes one)
//! whose chip accepts any affinity (irq_sim's does not:
//! `/proc/irq/N/smp_affinity` must be writable), and a line is raised by an
//! IPI to the CPU of its effective affinity, whose function runs the line's
//! flow handler in hardirq context. To the rest of the kernel the lines are
//! ordinary IRQs: numbered and named in `/proc/interrupts`, with affinity,
//! reported per NAPI. An affinity write takes effect at once, not at the
//! line's next interrupt (`dmn_irq_set_movable()`, `compat.c`).
//!
//! A line is masked from the moment it is raised until its owner unmasks it
//! (a NIC masks a queue's vector while NAPI polls), so a burst of events
//! raises it once. The chip and the domain's ops are built here;
//! `src/helpers/irq.c` has the static inlines and macros of the IRQ, IPI and
//! cpumask APIs.

use super::bindings;
use core::{
    ffi::c_void,
    ptr::{null, NonNull},
    sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering},
};
use kernel::{
    ffi::{c_int, c_uint, c_ulong},
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
    types::Opaque,
};

/// A registered IRQ domain and its firmware node.
///
/// # Invariants
///
/// `domain` is a live linear domain over the named node `fwnode`, built with
/// [`DOMAIN_OPS`]; every line mapped in it holds a reference to this value
/// until the mapping is disposed, so the drop removes an empty domain.
struct Domain {
    domain: NonNull<bindings::irq_domain>,
    fwnode: NonNull<bindings::fwnode_handle>,
}

// SAFETY: the pointers are only handed to the IRQ core, which locks as it
// needs.
unsafe impl Send for Domain {}
// SAFETY: as above; `&Domain` exposes nothing.
unsafe impl Sync for Domain {}

impl Drop for Domain {
    fn drop(&mut self) {
        // SAFETY: live (type invariant), with no mapping left; process context
        // (the last `IrqDomain` or line goes in teardown).
        unsafe {
            bindings::irq_domain_remove(self.domain.as_ptr());
            bindings::irq_domain_free_fwnode(self.fwnode.as_ptr());
        }
    }
}

/// An IRQ domain: the lines of one device. Each requested line holds a
/// reference, so the domain goes with the last of them.
pub(crate) struct IrqDomain {
    inner: Arc<Domain>,
}

impl IrqDomain {
    /// A domain named `name` with room for `lines` lines.
    pub(crate) fn new(name: &CStr, lines: u32) -> Result<Self> {
        // SAFETY: `name` is NUL-terminated; the node keeps a copy.
        let fwnode = unsafe { bindings::dmn_irq_domain_alloc_named_fwnode(name.as_char_ptr()) };
        let fwnode = NonNull::new(fwnode).ok_or(ENOMEM)?;
        // SAFETY: a live node; the ops are `'static`.
        let domain =
            unsafe { bindings::dmn_irq_domain_create_linear(fwnode.as_ptr(), lines, domain_ops()) };
        let Some(domain) = NonNull::new(domain) else {
            // SAFETY: our node, which no domain uses.
            unsafe { bindings::irq_domain_free_fwnode(fwnode.as_ptr()) };
            return Err(ENOMEM);
        };
        // INVARIANT: a fresh domain with our ops and no mapping; if the `Arc`
        // cannot be allocated, dropping the value removes it.
        let inner = Arc::new(Domain { domain, fwnode }, GFP_KERNEL)?;
        Ok(Self { inner })
    }
}

/// `irq_chip.irq_mask` and `irq_unmask`: a line has no hardware to mask
/// ([`IrqLine`] masks it itself).
extern "C" fn noop(_d: *mut bindings::irq_data) {}

/// `irq_chip.irq_set_affinity`: any online CPU of the mask will do; the line
/// is raised there.
///
/// # Safety
///
/// Called by the IRQ core with a line of ours and a valid mask, under the
/// line's descriptor lock.
unsafe extern "C" fn set_affinity(
    d: *mut bindings::irq_data,
    mask: *const bindings::cpumask,
    _force: bool,
) -> c_int {
    // SAFETY: a valid mask (the function's contract).
    let cpu = unsafe { bindings::dmn_cpumask_first_online(mask) };
    // SAFETY: reads a variable set at boot.
    if cpu >= unsafe { bindings::nr_cpu_ids } {
        return EINVAL.to_errno();
    }
    // SAFETY: `d` is the line's data under its descriptor lock (the function's
    // contract); `cpu` is a possible CPU, whose mask is static.
    unsafe { bindings::dmn_irq_data_update_effective_affinity(d, bindings::dmn_cpumask_of(cpu)) };
    bindings::IRQ_SET_MASK_OK as c_int
}

/// The chip of every line: named `devmemnic` in `/proc/interrupts`, nothing
/// to mask, any affinity taken.
const CHIP: bindings::irq_chip = {
    // SAFETY: all-zeroes is a valid `irq_chip` (no name, every callback absent).
    let mut chip: bindings::irq_chip = unsafe { core::mem::zeroed() };
    chip.name = c"devmemnic".to_bytes_with_nul().as_ptr().cast();
    chip.irq_mask = Some(noop);
    chip.irq_unmask = Some(noop);
    chip.irq_set_affinity = Some(set_affinity);
    chip
};

/// The `'static` [`CHIP`], one address for every line.
const fn chip() -> &'static bindings::irq_chip {
    &CHIP
}

/// `irq_domain_ops.map`: a new line gets the chip and the simple flow handler
/// (the raising IPI runs it), is never probed for, and may move its affinity
/// in process context.
///
/// # Safety
///
/// Called by the IRQ core for a line it maps in one of our domains.
unsafe extern "C" fn map(
    _d: *mut bindings::irq_domain,
    virq: c_uint,
    _hw: bindings::irq_hw_number_t,
) -> c_int {
    // SAFETY: `virq` is being mapped (the function's contract); the chip is
    // `'static` and `handle_simple_irq` the core's. These are what the static
    // inlines `irq_set_chip_and_handler()` and `irq_set_noprobe()` call.
    unsafe {
        bindings::irq_set_chip_and_handler_name(
            virq,
            chip(),
            Some(bindings::handle_simple_irq),
            null(),
        );
        bindings::irq_modify_status(virq, 0, bindings::IRQ_NOPROBE as c_ulong);
        bindings::dmn_irq_set_movable(virq);
    }
    0
}

/// `irq_domain_ops.unmap`: the line loses its chip and handler.
///
/// # Safety
///
/// Called by the IRQ core for a line of one of our domains.
unsafe extern "C" fn unmap(_d: *mut bindings::irq_domain, virq: c_uint) {
    // SAFETY: `virq` is being unmapped (the function's contract).
    unsafe { bindings::irq_set_chip_and_handler_name(virq, null(), None, null()) };
}

/// The ops of every domain.
const DOMAIN_OPS: bindings::irq_domain_ops = {
    // SAFETY: all-zeroes is a valid `irq_domain_ops` (every callback absent).
    let mut ops: bindings::irq_domain_ops = unsafe { core::mem::zeroed() };
    ops.map = Some(map);
    ops.unmap = Some(unmap);
    ops
};

/// The `'static` [`DOMAIN_OPS`], one address for every domain.
const fn domain_ops() -> &'static bindings::irq_domain_ops {
    &DOMAIN_OPS
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

// C aligns `call_single_data_t` to its size so that it spans one cache line:
// `Line` does the same for the one it starts with.
const _: () = assert!(core::mem::size_of::<bindings::call_single_data_t>() == 32);

/// A requested line: what raising it needs.
///
/// # Invariants
///
/// `csd` calls [`ipi`] with this line, which does not move; `irq` is mapped
/// in `_domain` and requested with [`action`] for the owner `dev_id`; the
/// line lives until no raise is in flight (`in_flight` is zero).
#[repr(C, align(32))]
struct Line {
    /// The raising IPI.
    csd: Opaque<bindings::call_single_data_t>,
    /// Raises not yet handled: nonzero from a raise until the IPI's function
    /// has run the handler after the last of them.
    in_flight: AtomicI32,
    irq: c_uint,
    /// The owner, as `request_threaded_irq()` and `free_irq()` take it.
    dev_id: *mut c_void,
    /// The name `/proc/interrupts` shows, which the IRQ core does not copy.
    name: CString,
    _domain: Arc<Domain>,
}

impl Line {
    /// Raises the line on the CPU of its effective affinity: the handler runs
    /// after this call, once for any number of raises while one is in flight.
    /// Any context.
    fn raise(&self) {
        if self.in_flight.fetch_add(1, Ordering::Acquire) != 0 {
            return;
        }
        // SAFETY: a mapped line (type invariant); its effective mask is read
        // as the IRQ core does, without its lock.
        let cpu = unsafe {
            bindings::dmn_cpumask_first_online(bindings::dmn_irq_effective_affinity(self.irq))
        };
        // SAFETY: the csd calls `ipi` with this line, alive while a raise is in
        // flight (type invariant); it is ours to send (the last IPI's function
        // has finished, or the call says `EBUSY`).
        if unsafe { bindings::smp_call_function_single_async(cpu as c_int, self.csd.get()) } != 0 {
            // No online CPU in the affinity, the target went offline meanwhile,
            // or the last IPI has not released the csd yet: run the IPI's
            // function here, as it runs, with interrupts off.
            // SAFETY: saves and disables interrupts, restored below.
            let flags = unsafe { bindings::dmn_local_irq_save() };
            // SAFETY: this line, with interrupts off; no other run of `ipi` is
            // under way (this raise took `in_flight` from zero).
            unsafe { ipi(core::ptr::from_ref(self).cast_mut().cast()) };
            // SAFETY: the flags saved above.
            unsafe { bindings::dmn_local_irq_restore(flags) };
        }
    }

    /// Waits for a raise in flight, then frees the IRQ, its mapping and the
    /// line (dropping its reference to the domain). Process context.
    ///
    /// # Safety
    ///
    /// `line` came from `KBox::into_raw` in [`IrqLine::request`]; nothing
    /// raises it any more.
    unsafe fn free(line: *mut Line) {
        // SAFETY: live until freed below (the function's contract).
        let l = unsafe { &*line };
        while l.in_flight.load(Ordering::Acquire) != 0 {
            super::delay::msleep(1);
        }
        // SAFETY: requested with this `dev_id` and mapped (type invariant); no
        // raise is in flight, and `free_irq` waits for a running handler.
        unsafe {
            bindings::free_irq(l.irq, l.dev_id);
            bindings::irq_dispose_mapping(l.irq);
        }
        // SAFETY: from `KBox::into_raw`; nothing uses the line any more.
        drop(unsafe { KBox::from_raw(line) });
    }
}

/// The raising IPI's function, in hardirq context on the target CPU (or
/// called by [`Line::raise`] with interrupts off). Raises that came while the
/// handler ran get another run: the handler may have looked before their
/// event (a NAPI still disabled, say), and they sent no IPI of their own.
///
/// # Safety
///
/// `info` is a live [`Line`] whose raise is in flight.
unsafe extern "C" fn ipi(info: *mut c_void) {
    // SAFETY: the function's contract.
    let line = unsafe { &*info.cast::<Line>() };
    loop {
        let seen = line.in_flight.load(Ordering::Relaxed);
        // SAFETY: a mapped line (type invariant); hardirq context or
        // interrupts off, as the function's callers run it.
        unsafe { bindings::generic_handle_irq_safe(line.irq) };
        if line.in_flight.fetch_sub(seen, Ordering::Release) - seen <= 0 {
            break;
        }
    }
}

/// The line's action for owner type `O`: runs its handler.
///
/// # Safety
///
/// Called by the IRQ core with the `dev_id` [`IrqLine::request::<O>`] gave it.
unsafe extern "C" fn action<O: IrqHandler>(
    _irq: c_int,
    dev_id: *mut c_void,
) -> bindings::irqreturn_t {
    // SAFETY: `dev_id` is the pinned owner, alive until its line's drop
    // returns, which waits for this handler (type invariant of `IrqLine`).
    let owner = unsafe { &*dev_id.cast::<O>() };
    owner.handle_irq();
    bindings::irqreturn_IRQ_HANDLED
}

/// An interrupt line of an [`IrqDomain`], embedded in the owner that handles it.
///
/// # Invariants
///
/// `raw` is null or a [`Line`] from `KBox::into_raw` whose action is
/// `action::<O>` for the pinned `O` this line is the [`HasIrqLine`] field of;
/// it is freed only by the drop.
pub(crate) struct IrqLine {
    raw: AtomicPtr<Line>,
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
    /// robin (as NICs spread their vectors). `EBUSY` if the line is already
    /// requested. May sleep.
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
        let name = CString::try_from(name)?;
        let dom = domain.inner.clone();
        // SAFETY: the domain is live (type invariant of `Domain`). What the
        // static inline `irq_create_mapping()` calls.
        let irq = unsafe {
            bindings::irq_create_mapping_affinity(dom.domain.as_ptr(), hwirq as c_ulong, null())
        };
        if irq == 0 {
            return Err(ENOMEM);
        }
        let line = Line {
            csd: Opaque::uninit(),
            in_flight: AtomicI32::new(0),
            irq,
            dev_id: core::ptr::from_ref(owner.get_ref()).cast_mut().cast(),
            name,
            _domain: dom,
        };
        let line = match KBox::new(line, GFP_KERNEL) {
            Ok(line) => KBox::into_raw(line),
            Err(e) => {
                // SAFETY: mapped above, not requested.
                unsafe { bindings::irq_dispose_mapping(irq) };
                return Err(e.into());
            }
        };
        // SAFETY: `line` stays where it is until `Line::free`.
        let l = unsafe { &*line };
        // SAFETY: the csd is ours, not sent yet; `ipi` gets this line.
        unsafe { bindings::dmn_init_csd(l.csd.get(), Some(ipi), line.cast()) };
        // SAFETY: a line mapped in our domain; the name lives as long as the
        // line; `dev_id` is the pinned owner, which outlives the line (its
        // field, freed by the field's drop), as `action::<O>` expects. What
        // the static inline `request_irq()` calls.
        let err = unsafe {
            bindings::request_threaded_irq(
                irq,
                Some(action::<O>),
                None,
                bindings::IRQF_COND_ONESHOT as c_ulong,
                l.name.as_char_ptr(),
                l.dev_id,
            )
        };
        if err != 0 {
            // SAFETY: mapped above, not requested; from `KBox::into_raw`, never
            // published.
            unsafe {
                bindings::irq_dispose_mapping(irq);
                drop(KBox::from_raw(line));
            }
            return Err(ENOMEM);
        }
        // SAFETY: CPU hotplug is held off while the online mask is read; the
        // line is requested; a CPU's mask is static.
        unsafe {
            bindings::cpus_read_lock();
            let cpu = bindings::dmn_online_cpu_round_robin(hwirq);
            if cpu < bindings::nr_cpu_ids {
                bindings::irq_set_affinity(irq, bindings::dmn_cpumask_of(cpu));
            }
            bindings::cpus_read_unlock();
        }
        // INVARIANT: a line whose action is `action::<O>` for this owner.
        if this
            .raw
            .compare_exchange(
                core::ptr::null_mut(),
                line,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            // SAFETY: never published; nothing raised it.
            unsafe { Line::free(line) };
            return Err(EBUSY);
        }
        Ok(())
    }

    /// The line's IRQ number, once requested.
    pub(crate) fn number(&self) -> Option<u32> {
        let raw = self.raw.load(Ordering::Acquire);
        // SAFETY: a non-null line is live until the drop (type invariant).
        (!raw.is_null()).then(|| unsafe { (*raw).irq })
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
            unsafe { (*raw).raise() };
        }
    }
}

impl Drop for IrqLine {
    fn drop(&mut self) {
        let raw = *self.raw.get_mut();
        if !raw.is_null() {
            // SAFETY: requested and not freed (type invariant); with `&mut self`
            // nothing triggers it any more, and `free` waits for a raise in
            // flight and a running handler.
            unsafe { Line::free(raw) };
        }
    }
}
