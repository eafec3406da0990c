// SPDX-License-Identifier: GPL-2.0

//! The module's load parameters (`modprobe devmemnic pairs=N queues=N`).
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
