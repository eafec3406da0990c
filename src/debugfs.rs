// SPDX-License-Identifier: GPL-2.0

//! The module's debugfs directory, `devmemnic/`, and one directory per device.
//!
//! `devmemnic/<parent device>/restart_rx_queue`: writing a queue index restarts
//! that RX queue of the device (new memory, stop, start, old memory freed), as
//! the core's `netdev_rx_queue_restart()` does on bind and unbind. Tests use it
//! to restart a devmem-bound queue under traffic.

use crate::bindings;

/// The `devmemnic/` directory, removed (with everything under it) on drop.
///
/// # Invariants
///
/// At most one exists: created in module init, dropped after every device.
pub(crate) struct DebugfsRoot {
    _private: (),
}

impl DebugfsRoot {
    /// Creates `devmemnic/` (nothing happens without debugfs).
    ///
    /// # Safety
    ///
    /// Called once, from module init; the value must outlive every [`DevDir`].
    pub(crate) unsafe fn new() -> Self {
        // SAFETY: module init, once (the caller's guarantee).
        unsafe { bindings::dmn_debugfs_init() };
        Self { _private: () }
    }
}

impl Drop for DebugfsRoot {
    fn drop(&mut self) {
        // SAFETY: every `DevDir` is gone (type invariant), nothing else uses the root.
        unsafe { bindings::dmn_debugfs_exit() };
    }
}

/// A device's directory; removing it waits for a write in progress to finish.
///
/// # Invariants
///
/// `dir` came from `dmn_debugfs_dev_add` (an error pointer when debugfs is
/// absent, which removal ignores) for a device that stays registered until
/// this is dropped.
pub(crate) struct DevDir {
    dir: *mut bindings::dentry,
}

// SAFETY: the dentry pointer is only passed to debugfs, which locks internally.
unsafe impl Send for DevDir {}
// SAFETY: as above; `&DevDir` exposes nothing.
unsafe impl Sync for DevDir {}

impl DevDir {
    /// Adds the directory of `dev`, named after its parent device.
    ///
    /// # Safety
    ///
    /// `dev` is registered with queue management ops and stays registered
    /// until the returned value is dropped; a [`DebugfsRoot`] exists.
    pub(crate) unsafe fn new(dev: *mut bindings::net_device) -> Self {
        // SAFETY: `dev` is a registered device with a parent (the caller's guarantee).
        let dir = unsafe { bindings::dmn_debugfs_dev_add(dev) };
        // INVARIANT: from `dmn_debugfs_dev_add`; the caller keeps `dev` registered.
        Self { dir }
    }
}

impl Drop for DevDir {
    fn drop(&mut self) {
        // SAFETY: `dir` came from `dmn_debugfs_dev_add` (type invariant) and is removed once.
        unsafe { bindings::dmn_debugfs_remove(self.dir) };
    }
}
