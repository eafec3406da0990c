// SPDX-License-Identifier: GPL-2.0

//! NAPI contexts that own the state their poll function works on.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! [`Napi<S>`] embeds a `napi_struct` and a state `S`. The poll function (of
//! the owner, a [`NapiPoll`] type that embeds the `Napi`) gets `&mut S`; the
//! control path gets `&mut S` only through [`Napi::with_state`], which disables
//! NAPI around it. So the state needs no lock: at any time either the poll or
//! one control-path closure has it.
//!
//! `enable`, `disable` and `with_state` are for control paths, which hold the
//! device's ops locks (an NDO, an ethtool or queue op, or an `OpsLock`): on
//! kernels with ops-locked devices they use the `_locked` NAPI calls, which
//! lockdep checks.

use super::{bindings, netdev::NetDev, skb::SkBuff};
use core::{
    cell::UnsafeCell,
    marker::{PhantomData, PhantomPinned},
    sync::atomic::{AtomicBool, Ordering},
};

use kernel::{prelude::*, sync::Mutex, types::Opaque};

/// A NAPI context with the state its poll owns.
///
/// # Invariants
///
/// `state` is accessed only by the owner's poll (which NAPI runs one at a time,
/// never while disabled) or inside `with_state` with NAPI disabled or never
/// enabled, under `ctl`. `enabled` mirrors the `napi_struct`'s state and
/// changes only under `ctl`, and only while `added`. `added` (the context is
/// on the device's NAPI list) changes only under `ctl`: set by `activate`,
/// cleared by `deactivate` with `enabled` false.
///
/// `ctl` is held across the `_locked` add and delete of `activate` and
/// `deactivate`: their callers hold the device's instance lock, which is
/// taken before `ctl`.
#[pin_data(PinnedDrop)]
pub(crate) struct Napi<S> {
    #[pin]
    raw: Opaque<bindings::napi_struct>,
    state: UnsafeCell<S>,
    added: AtomicBool,
    enabled: AtomicBool,
    #[pin]
    ctl: Mutex<()>,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: access to `state` is serialised as the type invariant says; `S: Send`
// lets it be used from the CPU running the poll.
unsafe impl<S: Send> Sync for Napi<S> {}
// SAFETY: as above.
unsafe impl<S: Send> Send for Napi<S> {}

/// A type that embeds a [`Napi`] and polls for it.
pub(crate) trait NapiPoll: HasNapi<<Self as NapiPoll>::State> + Sized + Send + Sync {
    /// The state the poll owns.
    type State: Send;

    /// Processes up to `budget` units of work; returns how many were done.
    fn poll(&self, ctx: &NapiCtx<'_>, state: &mut Self::State, budget: i32) -> i32;

    /// Whether work is pending (checked after completing, to close the race with
    /// a producer that found NAPI still scheduled).
    fn has_work(&self) -> bool;

    /// Runs after a poll completed (NAPI off; not when the core keeps it
    /// scheduled, as `napi_defer_hard_irqs` does): where a NIC re-enables its
    /// interrupt. The default polls again if work is pending.
    fn completed(&self) {
        if self.has_work() {
            self.napi().schedule();
        }
    }

    /// The IRQ the NAPI is reported with (netdev `napi-get`), if any.
    fn irq(&self) -> Option<u32> {
        None
    }
}

/// Locates the [`Napi<S>`] inside its owner.
///
/// # Safety
///
/// `OFFSET` must be the byte offset of a `Napi<S>` field in `Self`, and that
/// field must be dropped before any field the owner's poll uses (declared
/// before them), other than [`DelayedCall`]s, which refuse to be scheduled
/// once dropped: the `Napi`'s drop stops a NAPI still polling (waiting for a
/// running poll) and deletes it. Owners deactivate their NAPI before they are
/// dropped; one that did not is a bug the drop reports with a kernel warning
/// (which fails every test run) after making it safe. Use [`impl_has_napi!`],
/// which computes the offset and checks the field's type.
///
/// [`DelayedCall`]: super::delayed_call::DelayedCall
pub(crate) unsafe trait HasNapi<S> {
    /// Byte offset of the `Napi` field.
    const OFFSET: usize;

    /// The `Napi` field.
    fn napi(&self) -> &Napi<S> {
        // SAFETY: `OFFSET` is the offset of a `Napi<S>` field of `Self` (trait
        // contract).
        unsafe { super::field_at(self, Self::OFFSET) }
    }
}

/// Implements [`HasNapi`] for `$owner` (a [`NapiPoll`]) whose `Napi` field,
/// declared before the fields its poll uses, is `$field`.
#[macro_export]
macro_rules! impl_has_napi {
    ($owner:ty, $field:ident) => {
        // SAFETY: `offset_of!` gives the offset of the named field, whose type the
        // function below checks to be `Napi<State>`; the caller declares it
        // before the fields the poll uses.
        unsafe impl
            $crate::abstractions::napi::HasNapi<
                <$owner as $crate::abstractions::napi::NapiPoll>::State,
            > for $owner
        {
            const OFFSET: usize = core::mem::offset_of!($owner, $field);
        }
        const _: () = {
            #[allow(dead_code)]
            fn field_is_the_napi(
                o: &$owner,
            ) -> &$crate::abstractions::napi::Napi<
                <$owner as $crate::abstractions::napi::NapiPoll>::State,
            > {
                &o.$field
            }
        };
    };
}

/// Proof, inside [`Napi::with_state`], that the NAPI is not polling.
pub(crate) struct NapiOff {
    /// The NAPI stopped.
    raw: *mut bindings::napi_struct,
}

impl NapiOff {
    /// The stopped NAPI, as the owner of its page pools' allocations.
    pub(crate) fn owner(&self) -> NapiOwner<'_> {
        NapiOwner {
            raw: self.raw,
            _p: PhantomData,
        }
    }
}

/// Which NAPI a [`NapiCtx`] (its poll runs) or a [`NapiOff`] (it is stopped)
/// speaks for, while that proof lives.
///
/// A page pool's lockless allocation cache belongs to the NAPI it was
/// created for: only that NAPI's poll, or someone who stopped it, may
/// allocate from the pool ([`super::page_pool::PagePool::alloc_netmem`]
/// checks that it is given its own NAPI's owner).
#[derive(Clone, Copy)]
pub(crate) struct NapiOwner<'a> {
    raw: *mut bindings::napi_struct,
    _p: PhantomData<&'a ()>,
}

impl NapiOwner<'_> {
    /// The NAPI (for the layer's other wrappers to compare).
    pub(super) fn as_raw(self) -> *mut bindings::napi_struct {
        self.raw
    }
}

/// Proof that bottom halves are off on this CPU, as in a NAPI poll
/// ([`NapiCtx::bh_off`]) or inside [`with_bh_disabled`]: what the per-CPU
/// NAPI caches (`napi_build_skb`'s skb cache) need.
///
/// Not `Send`: the proof holds on the CPU that made it.
#[derive(Clone, Copy)]
pub(crate) struct BhOff<'a> {
    _p: PhantomData<(&'a (), *mut ())>,
}

/// Runs `f` with bottom halves disabled on this CPU (process context, as
/// tests and control paths that build receive skbs need).
pub(crate) fn with_bh_disabled<R>(f: impl FnOnce(BhOff<'_>) -> R) -> R {
    // SAFETY: paired with the enable below, on this thread (BH stays off
    // across `f`, which cannot sleep-switch CPUs while it is off).
    unsafe { bindings::dmn_local_bh_disable() };
    let r = f(BhOff { _p: PhantomData });
    // SAFETY: disabled above.
    unsafe { bindings::dmn_local_bh_enable() };
    r
}

/// What a poll function can do with its NAPI context.
pub(crate) struct NapiCtx<'a> {
    raw: *mut bindings::napi_struct,
    dev: &'a NetDev,
}

impl NapiCtx<'_> {
    /// Hands a received frame to GRO.
    pub(crate) fn gro_receive(&self, skb: SkBuff) {
        // SAFETY: `raw` is the NAPI being polled, and GRO takes the skb.
        unsafe { bindings::dmn_napi_gro_receive(self.raw, skb.into_raw()) };
    }

    /// The device the NAPI belongs to.
    pub(crate) fn dev(&self) -> &NetDev {
        self.dev
    }

    /// The polling NAPI, as the owner of its page pools' allocations.
    pub(crate) fn owner(&self) -> NapiOwner<'_> {
        NapiOwner {
            raw: self.raw,
            _p: PhantomData,
        }
    }

    /// A poll runs with bottom halves off.
    pub(crate) fn bh_off(&self) -> BhOff<'_> {
        BhOff { _p: PhantomData }
    }
}

impl<S> Napi<S> {
    /// A NAPI context, not yet added to a device.
    pub(crate) fn new(state: S) -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: all-zeroes is the state `netif_napi_add()` expects to start from.
            raw <- Opaque::ffi_init(|slot: *mut bindings::napi_struct| unsafe {
                core::ptr::write_bytes(slot, 0, 1)
            }),
            state: UnsafeCell::new(state),
            added: AtomicBool::new(false),
            enabled: AtomicBool::new(false),
            ctl <- kernel::new_mutex!(()),
            _pin: PhantomPinned,
        })
    }

    /// The raw `napi_struct`, for page pools' direct recycling.
    pub(super) fn as_raw(&self) -> *mut bindings::napi_struct {
        self.raw.get()
    }

    /// Adds `owner`'s context to `dev` for queue `index` (its poll is
    /// `O::poll`) if it is not added, and enables it: a queue becomes active
    /// (device open, more channels). Where the kernel keeps NAPI config per
    /// index (7.2), the context keeps its NAPI ID and settings across
    /// deactivation. Callers hold the device's ops locks.
    ///
    /// The device lists a NAPI only while its queue is active, as drivers
    /// that add NAPIs on open do: the core acts on every listed NAPI (7.2's
    /// threaded switch waits for each one's kthread to park, which a disabled
    /// NAPI never does).
    pub(crate) fn activate<O: NapiPoll<State = S>>(owner: Pin<&O>, dev: &NetDev, index: u32) {
        let this = owner.napi();
        {
            let _ctl = this.ctl.lock();
            if !this.added.load(Ordering::Relaxed) {
                let irq = owner
                    .irq()
                    .and_then(|n| i32::try_from(n).ok())
                    .unwrap_or(-1);
                // SAFETY: `this` is the `HasNapi` field of the pinned `owner`, which is
                // what the trampoline recovers from it; the field's drop deletes the
                // NAPI before the owner's other fields go (`HasNapi` contract); the
                // device is live and its ops locks are held (caller); the state change
                // under `ctl` makes this the only add; the helper checks `index`
                // against the device's NAPI config array.
                unsafe {
                    bindings::dmn_napi_add_locked(
                        dev.as_raw(),
                        this.raw.get(),
                        Some(poll_trampoline::<O>),
                        index,
                        irq,
                    )
                };
                this.added.store(true, Ordering::Relaxed);
            }
        }
        this.enable(dev, index);
    }

    /// Disables the context and removes it from its device: its queue became
    /// inactive (device stop, fewer channels). Callers hold the ops locks.
    pub(crate) fn deactivate(&self, dev: &NetDev, queue: u32) {
        self.disable(dev, queue);
        let _ctl = self.ctl.lock();
        if self.added.load(Ordering::Relaxed) {
            // SAFETY: added and disabled (`disable` above; `enabled` changes only
            // under `ctl`, held); the ops locks are held (caller). Deleting waits
            // for an RCU grace period.
            unsafe { bindings::dmn_napi_del_locked(self.raw.get()) };
            self.added.store(false, Ordering::Relaxed);
        }
    }

    /// Enables polling (device open) and links the context to RX queue `queue`.
    pub(crate) fn enable(&self, dev: &NetDev, queue: u32) {
        let _ctl = self.ctl.lock();
        if !self.added.load(Ordering::Relaxed) || self.enabled.load(Ordering::Relaxed) {
            return;
        }
        // SAFETY: added and disabled (checked under `ctl`); callers hold the ops
        // locks, as `netif_queue_set_napi()` requires.
        unsafe {
            enable_locked(self.raw.get());
            bindings::netif_queue_set_napi(
                dev.as_raw(),
                queue,
                bindings::netdev_queue_type_NETDEV_QUEUE_TYPE_RX,
                self.raw.get(),
            );
        }
        self.enabled.store(true, Ordering::Relaxed);
    }

    /// Disables polling, waiting for a running poll to finish (device stop).
    pub(crate) fn disable(&self, dev: &NetDev, queue: u32) {
        let _ctl = self.ctl.lock();
        if !self.enabled.load(Ordering::Relaxed) {
            return;
        }
        // SAFETY: enabled (checked under `ctl`); callers hold the ops locks.
        unsafe {
            bindings::netif_queue_set_napi(
                dev.as_raw(),
                queue,
                bindings::netdev_queue_type_NETDEV_QUEUE_TYPE_RX,
                core::ptr::null_mut(),
            );
            disable_locked(self.raw.get());
        }
        self.enabled.store(false, Ordering::Relaxed);
    }

    /// Schedules a poll if the context is enabled; returns whether this call
    /// scheduled it (not: disabled, or already scheduled).
    pub(crate) fn schedule(&self) -> bool {
        if !self.enabled.load(Ordering::Relaxed) {
            return false;
        }
        // SAFETY: the NAPI is added; scheduling a disabled one is a no-op.
        unsafe { bindings::dmn_napi_schedule(self.raw.get()) }
    }

    /// Runs `f` on the state with polling stopped, then resumes (and reschedules) it.
    pub(crate) fn with_state<R>(&self, f: impl FnOnce(&mut S, &NapiOff) -> R) -> R {
        let _ctl = self.ctl.lock();
        let was_enabled = self.enabled.load(Ordering::Relaxed);
        if was_enabled {
            // SAFETY: enabled, so disabling is valid; it waits for a running poll;
            // callers hold the ops locks.
            unsafe { disable_locked(self.raw.get()) };
        }
        // SAFETY: polling is disabled or was never enabled and `ctl` is held, so
        // nothing else touches the state (type invariant).
        let state = unsafe { &mut *self.state.get() };
        let r = f(
            state,
            &NapiOff {
                raw: self.raw.get(),
            },
        );
        if was_enabled {
            // SAFETY: disabled just above; re-enable and poll once for anything that
            // arrived meanwhile (producers could not schedule a disabled NAPI).
            unsafe {
                enable_locked(self.raw.get());
                bindings::dmn_napi_schedule(self.raw.get())
            };
        }
        r
    }
}

#[pinned_drop]
impl<S> PinnedDrop for Napi<S> {
    fn drop(self: Pin<&mut Self>) {
        // Owners deactivate before dropping; if one did not, that is a bug:
        // warn (a splat fails the test run), then stop the poll before the
        // owner's fields go and unlink the NAPI so the device keeps no pointer
        // to freed memory.
        if self.added.load(Ordering::Relaxed) {
            // SAFETY: the message is NUL-terminated.
            unsafe {
                bindings::dmn_warn(
                    kernel::c_str!("devmemnic: NAPI dropped while still added to its device")
                        .as_char_ptr(),
                )
            };
            // SAFETY: as in `disable` and `deactivate`: the state flags say what is
            // valid; with the owner being dropped, no device lock is held
            // (`napi_disable` takes the instance lock itself).
            unsafe {
                if self.enabled.load(Ordering::Relaxed) {
                    bindings::napi_disable(self.raw.get());
                }
                bindings::dmn_napi_del(self.raw.get());
            }
        }
    }
}

/// Enables a NAPI from a control path that holds the device's ops locks:
/// `napi_enable_locked()` where devices are ops-locked (`napi_enable()`
/// would take the instance lock again), else `napi_enable()`.
///
/// # Safety
///
/// `napi` is added and disabled; the caller holds its device's ops locks.
unsafe fn enable_locked(napi: *mut bindings::napi_struct) {
    #[cfg(dmn_ops_lock)]
    let enable = bindings::napi_enable_locked;
    #[cfg(not(dmn_ops_lock))]
    let enable = bindings::napi_enable;
    // SAFETY: as the caller guarantees.
    unsafe { enable(napi) };
}

/// Disables a NAPI (waiting for a running poll) as [`enable_locked`] enables it.
///
/// # Safety
///
/// `napi` is enabled; the caller holds its device's ops locks.
unsafe fn disable_locked(napi: *mut bindings::napi_struct) {
    #[cfg(dmn_ops_lock)]
    let disable = bindings::napi_disable_locked;
    #[cfg(not(dmn_ops_lock))]
    let disable = bindings::napi_disable;
    // SAFETY: as the caller guarantees.
    unsafe { disable(napi) };
}

/// The poll function registered with the core for owner type `O`.
///
/// # Safety
///
/// Called by NAPI with a `napi_struct` added by [`Napi::activate::<O>`].
unsafe extern "C" fn poll_trampoline<O: NapiPoll>(
    raw: *mut bindings::napi_struct,
    budget: i32,
) -> i32 {
    // SAFETY: `raw` is the `raw` field of a `Napi<O::State>` (`Opaque::get`
    // returns the address of the inner value) which `Napi::activate::<O>` took from a
    // live, pinned `O` at `O::OFFSET` (`HasNapi`).
    let (owner, napi) = unsafe {
        let napi_off = core::mem::offset_of!(Napi<O::State>, raw);
        let napi = raw.cast::<u8>().sub(napi_off).cast::<Napi<O::State>>();
        let owner = napi.cast::<u8>().sub(O::OFFSET).cast::<O>();
        (&*owner, &*napi)
    };
    // SAFETY: a polled NAPI belongs to a live device.
    let dev = unsafe { NetDev::from_raw(bindings::dmn_napi_dev(raw)) };
    let ctx = NapiCtx { raw, dev };
    // SAFETY: NAPI runs one poll at a time and never while disabled, and
    // `with_state` only touches the state with NAPI disabled (type invariant).
    let state = unsafe { &mut *napi.state.get() };
    let done = owner.poll(&ctx, state, budget).clamp(0, budget);
    // SAFETY: we are the poll of `raw`; completing with less than the budget done
    // hands the NAPI back, and scheduling it again after that is allowed.
    if done < budget && unsafe { bindings::napi_complete_done(raw, done) } {
        owner.completed();
    }
    done
}
