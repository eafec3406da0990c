// SPDX-License-Identifier: GPL-2.0

//! A reference on this module, keeping it loaded while it exists.

use super::bindings;

/// One reference on this module (`__module_get(THIS_MODULE)`), dropped with it.
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
        unsafe { bindings::dmn_this_module_get() };
        // INVARIANT: one reference taken.
        Self { _private: () }
    }
}

impl Drop for ModuleRef {
    fn drop(&mut self) {
        // SAFETY: releases the reference this value owns (type invariant).
        unsafe { bindings::dmn_this_module_put() };
    }
}
