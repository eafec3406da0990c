// SPDX-License-Identifier: GPL-2.0

//! Sleeping and the monotonic clock (6.12's `kernel` crate has no `delay`
//! module, and its time API differs from 7.2's).

use super::bindings;

/// Sleeps at least `ms` milliseconds; process context only.
pub(crate) fn msleep(ms: u32) {
    // SAFETY: `msleep` has no precondition beyond process context, which every
    // caller (module teardown, KUnit cases) is in; atomic-context callers would
    // trip the kernel's might_sleep check, not memory safety.
    unsafe { bindings::msleep(ms) };
}

/// Nanoseconds of the monotonic clock (`ktime_get_ns`); any context.
pub(crate) fn monotonic_ns() -> u64 {
    // SAFETY: reads the clock outside NMI context (no caller runs in one).
    // What the static inline `ktime_get_ns()` calls: a `ktime_t` counts
    // nanoseconds, never negative for this clock.
    unsafe { bindings::ktime_get() as u64 }
}
