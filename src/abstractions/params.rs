// SPDX-License-Identifier: GPL-2.0

//! The module's load parameters (`modprobe devmemnic pairs=N queues=N ...`).
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
