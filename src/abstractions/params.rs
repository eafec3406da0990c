// SPDX-License-Identifier: GPL-2.0

//! The module's load parameters (`modprobe devmemnic pairs=N queues=N ...`)
//! and the running kernel's version.
//!
//! Declared in C (`src/helpers/params.c`): 6.12's `module!` has no parameters.

use super::bindings;
use kernel::prelude::*;

/// `pairs=`: device pairs to create, as loaded (unchecked).
pub(crate) fn pairs() -> u32 {
    // SAFETY: a module parameter the loader set before init; read-only
    // (0444) since.
    unsafe { bindings::dmn_pairs }
}

/// `queues=`: RX/TX queues per device, as loaded (unchecked).
pub(crate) fn queues() -> u32 {
    // SAFETY: as for `pairs`.
    unsafe { bindings::dmn_queues }
}

/// `max_queues=`: RX/TX queues each device has (0: as many as `queues`), as
/// loaded (unchecked).
pub(crate) fn max_queues() -> u32 {
    // SAFETY: as for `pairs`.
    unsafe { bindings::dmn_max_queues }
}

/// `rss_queue_offset=`: whether rules naming an RSS context add their queue
/// to the table's entry.
pub(crate) fn rss_queue_offset() -> bool {
    // SAFETY: as for `pairs`.
    unsafe { bindings::dmn_rss_queue_offset }
}

/// `personality=`: the personality name every device starts with, as loaded
/// (unchecked; not UTF-8 reads as empty).
pub(crate) fn personality() -> &'static str {
    // SAFETY: as for `pairs`.
    let p = unsafe { bindings::dmn_personality };
    if p.is_null() {
        return "";
    }
    // SAFETY: a NUL-terminated string the loader set (`charp`), which lives,
    // unchanged, as long as the module.
    unsafe { CStr::from_char_ptr(p) }.to_str().unwrap_or("")
}

/// The kernel's version, (major, minor): the one built against, which is the
/// one that loads the module (`LINUX_VERSION_CODE`, major << 16 | minor << 8).
pub(crate) fn kernel_version() -> (u32, u32) {
    let v = bindings::LINUX_VERSION_CODE;
    (v >> 16, (v >> 8) & 0xff)
}
