// SPDX-License-Identifier: GPL-2.0

//! The module's load parameters (`modprobe devmemnic pairs=N queues=N ...`)
//! and the running kernel's version.
//!
//! Declared in C (`src/helpers/params.c`): 6.12's `module!` has no parameters.

use super::bindings;

/// `pairs=`: device pairs to create, as loaded (unchecked).
pub(crate) fn pairs() -> u32 {
    // SAFETY: reads a module parameter the loader set before init.
    unsafe { bindings::dmn_param_pairs() }
}

/// `queues=`: RX/TX queues per device, as loaded (unchecked).
pub(crate) fn queues() -> u32 {
    // SAFETY: reads a module parameter the loader set before init.
    unsafe { bindings::dmn_param_queues() }
}

/// `max_queues=`: RX/TX queues each device has (0: as many as `queues`), as
/// loaded (unchecked).
pub(crate) fn max_queues() -> u32 {
    // SAFETY: reads a module parameter the loader set before init.
    unsafe { bindings::dmn_param_max_queues() }
}

/// `rss_queue_offset=`: whether rules naming an RSS context add their queue
/// to the table's entry.
pub(crate) fn rss_queue_offset() -> bool {
    // SAFETY: reads a module parameter the loader set before init.
    unsafe { bindings::dmn_param_rss_queue_offset() }
}

/// `personality=`: the personality name every device starts with, as loaded
/// (unchecked; not UTF-8 reads as empty).
pub(crate) fn personality() -> &'static str {
    // SAFETY: a module parameter the loader set before init: a string of
    // that many bytes that lives, unchanged (read-only, 0444), as long as
    // the module.
    let bytes = unsafe {
        core::slice::from_raw_parts(
            bindings::dmn_param_personality().cast::<u8>(),
            bindings::dmn_param_personality_len(),
        )
    };
    core::str::from_utf8(bytes).unwrap_or("")
}

/// The running kernel's version, (major, minor).
pub(crate) fn kernel_version() -> (u32, u32) {
    // SAFETY: returns a constant.
    let v = unsafe { bindings::dmn_kernel_version() };
    (v >> 16, (v >> 8) & 0xff)
}
