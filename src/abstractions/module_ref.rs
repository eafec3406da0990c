// SPDX-License-Identifier: GPL-2.0

//! A reference on this module, keeping it loaded while it exists.
//!
//! C header: [`include/linux/module.h`](srctree/include/linux/module.h)

use super::bindings;

/// This module, as C's `THIS_MODULE` names it (the `module!` macros of the
/// kernels name it differently).
fn this_module() -> *mut bindings::module {
    // Only the address (taking it needs no `unsafe`); the loader fills the
    // `struct module` in before any of the module's code runs.
    &raw mut bindings::__this_module
}

/// One reference on this module (`__module_get(THIS_MODULE)`), dropped with it.
///
/// A devmem binding's dma-buf attachment points at our parent device, and the
/// binding can outlive the net device (the netlink socket holds it): the
/// module stays loaded while any queue of ours has one.
///
/// # Invariants
///
/// Each value owns exactly one reference taken by `new`.
pub(crate) struct ModuleRef {
    _private: (),
}

impl ModuleRef {
    /// Takes a reference; the module is live while its code runs, so this
    /// cannot fail.
    pub(crate) fn new() -> Self {
        // SAFETY: called from the module's own code, so the module is live.
        unsafe { bindings::__module_get(this_module()) };
        // INVARIANT: one reference taken.
        Self { _private: () }
    }
}

impl Drop for ModuleRef {
    fn drop(&mut self) {
        // SAFETY: releases the reference this value owns (type invariant).
        unsafe { bindings::module_put(this_module()) };
    }
}
