// SPDX-License-Identifier: GPL-2.0

//! Sleeping (6.12's `kernel` crate has no `delay` module).

use super::bindings;

/// Sleeps at least `ms` milliseconds; process context only.
pub(crate) fn msleep(ms: u32) {
    // SAFETY: `msleep` has no precondition beyond process context, which every
    // caller (module teardown, KUnit cases) is in; atomic-context callers would
    // trip the kernel's might_sleep check, not memory safety.
    unsafe { bindings::dmn_msleep(ms) };
}
