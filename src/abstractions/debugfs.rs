// SPDX-License-Identifier: GPL-2.0

//! The module's debugfs directory, `devmemnic/`, and one directory per device.
//!
//! `devmemnic/<parent device>/restart_rx_queue`: writing a queue index restarts
//! that RX queue of the device (new memory, stop, start, old memory freed), as
//! the core does on bind and unbind (see `src/helpers/debugfs.c`). Tests use it
//! to restart a devmem-bound queue under traffic.

use super::bindings;
use core::ptr::null_mut;
use kernel::{c_str, prelude::*, sync::Arc};

/// The `devmemnic/` directory; removed when the last holder drops it.
///
/// # Invariants
///
/// `dir` came from `debugfs_create_dir` (an error pointer without debugfs,
/// which removal ignores) and is removed once, on drop.
pub(crate) struct DebugfsRoot {
    dir: *mut bindings::dentry,
}

// SAFETY: the dentry pointer is only passed to debugfs, which locks internally.
unsafe impl Send for DebugfsRoot {}
// SAFETY: as above; `&DebugfsRoot` exposes nothing.
unsafe impl Sync for DebugfsRoot {}

impl DebugfsRoot {
    /// Creates `devmemnic/` (nothing happens without debugfs).
    pub(crate) fn new() -> Result<Arc<Self>> {
        // SAFETY: a NUL-terminated name; creating a directory at debugfs's root
        // has no other precondition.
        let dir =
            unsafe { bindings::debugfs_create_dir(c_str!("devmemnic").as_char_ptr(), null_mut()) };
        // INVARIANT: from `debugfs_create_dir`.
        Ok(Arc::new(Self { dir }, GFP_KERNEL)?)
    }
}

impl Drop for DebugfsRoot {
    fn drop(&mut self) {
        // SAFETY: every `RestartKnob` holds an `Arc` of the root, so none is left;
        // the directory is removed once (type invariant).
        unsafe { bindings::debugfs_remove(self.dir) };
    }
}

/// A device's `restart_rx_queue` file and its directory; removing it waits for
/// a write in progress to finish.
///
/// # Invariants
///
/// `dir` came from `dmn_debugfs_dev_add` under `root`'s directory for a net
/// device that stays allocated until this is dropped.
pub(crate) struct RestartKnob {
    dir: *mut bindings::dentry,
    _root: Arc<DebugfsRoot>,
}

// SAFETY: the dentry pointer is only passed to debugfs, which locks internally.
unsafe impl Send for RestartKnob {}
// SAFETY: as above; `&RestartKnob` exposes nothing.
unsafe impl Sync for RestartKnob {}

impl RestartKnob {
    /// Adds the directory of `dev`, named after its parent device.
    ///
    /// # Safety
    ///
    /// `dev` is a device of `NetDevAlloc` (with a parent) that stays allocated
    /// until the returned value is dropped.
    pub(super) unsafe fn new(root: &Arc<DebugfsRoot>, dev: *mut bindings::net_device) -> Self {
        // SAFETY: `dev` has a parent (the caller's guarantee); the root is live.
        let dir = unsafe { bindings::dmn_debugfs_dev_add(root.dir, dev) };
        // INVARIANT: from `dmn_debugfs_dev_add`; the caller keeps `dev` allocated.
        Self {
            dir,
            _root: root.clone(),
        }
    }
}

impl Drop for RestartKnob {
    fn drop(&mut self) {
        // SAFETY: `dir` came from `dmn_debugfs_dev_add` (type invariant) and is
        // removed once; a write in progress finishes first.
        unsafe { bindings::debugfs_remove(self.dir) };
    }
}
