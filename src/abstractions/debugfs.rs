// SPDX-License-Identifier: GPL-2.0

//! The module's debugfs directory, `devmemnic/`, one directory per device
//! under it, named after the device's parent (`devmemnic/devmemnic.0/`), and
//! what the driver puts in those: directories of `u32` knobs, and the
//! queue-restart file.
//!
//! `devmemnic/<parent device>/restart_rx_queue`: writing a queue index restarts
//! that RX queue of the device (new memory, stop, start, old memory freed), as
//! the core does on bind and unbind (see `src/helpers/debugfs.c`). Tests use it
//! to restart a devmem-bound queue under traffic.
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)

use super::{bindings, platform::PlatformDevice};
use core::ptr::null_mut;
use core::sync::atomic::AtomicU32;
use kernel::{c_str, prelude::*, str::CStr, sync::Arc};

/// The name of the module's directory at debugfs's root.
const ROOT: &CStr = c_str!("devmemnic");

/// Whether `d` is a dentry (not null, not an error pointer: debugfs hands
/// those out without debugfs or on failure, and its calls ignore them).
fn is_dentry(d: *mut bindings::dentry) -> bool {
    !d.is_null() && kernel::error::from_err_ptr(d).is_ok()
}

/// The `devmemnic/` directory, removed on drop (with whatever is left in it).
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
    /// Creates `devmemnic/` (nothing happens without debugfs). The module
    /// keeps it for as long as it is loaded: devices find it by name
    /// ([`DeviceDir::new`]).
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: a NUL-terminated name; creating a directory at debugfs's root
        // has no other precondition.
        let dir = unsafe { bindings::debugfs_create_dir(ROOT.as_char_ptr(), null_mut()) };
        // INVARIANT: from `debugfs_create_dir`.
        Ok(Self { dir })
    }
}

impl Drop for DebugfsRoot {
    fn drop(&mut self) {
        // SAFETY: the directory is removed once (type invariant); a device
        // directory still holding a reference to its dentry (none is left when
        // the module unloads) would keep the dentry, not a dangling pointer.
        unsafe { bindings::debugfs_remove(self.dir) };
    }
}

/// A directory's dentry, removed with its contents on drop; the parent's
/// dentry reference is dropped after.
///
/// # Invariants
///
/// `dir` is a dentry from `debugfs_create_dir`, removed once, on drop;
/// `parent`, if not null, is a dentry reference from `debugfs_lookup`, put
/// once, after.
struct Dir {
    dir: *mut bindings::dentry,
    parent: *mut bindings::dentry,
}

// SAFETY: the dentry pointers are only passed to debugfs and the VFS, which
// lock internally.
unsafe impl Send for Dir {}
// SAFETY: as above; `&Dir` exposes nothing.
unsafe impl Sync for Dir {}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: removed once (type invariant); removal waits for readers and
        // writers of its files to finish.
        unsafe { bindings::debugfs_remove(self.dir) };
        if !self.parent.is_null() {
            // SAFETY: our reference from `debugfs_lookup`, put once (type invariant).
            unsafe { bindings::dput(self.parent) };
        }
    }
}

/// A device's directory, `devmemnic/<parent device>/`, removed when the last
/// clone drops (the files in it hold one).
#[derive(Clone)]
pub(crate) struct DeviceDir {
    dir: Arc<Dir>,
}

impl DeviceDir {
    /// Creates the directory of the device whose parent is `parent`, under
    /// `devmemnic/`; `None` without debugfs or the module's directory (KUnit
    /// runs before the module creates it), or when the name is taken.
    pub(crate) fn new(parent: &PlatformDevice) -> Option<Self> {
        // SAFETY: a NUL-terminated name at debugfs's root; the result is a
        // dentry reference (or null or an error pointer), checked below.
        let root = unsafe { bindings::debugfs_lookup(ROOT.as_char_ptr(), null_mut()) };
        if !is_dentry(root) {
            return None;
        }
        let Ok(name) = parent.name() else {
            // SAFETY: our reference from `debugfs_lookup`, put once.
            unsafe { bindings::dput(root) };
            return None;
        };
        // SAFETY: a NUL-terminated name; `root` is a live dentry (we hold a
        // reference).
        let dir = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), root) };
        if !is_dentry(dir) {
            // SAFETY: our reference from `debugfs_lookup`, put once.
            unsafe { bindings::dput(root) };
            return None;
        }
        // INVARIANT: a dentry from `debugfs_create_dir`, and the parent's
        // reference from `debugfs_lookup` (without memory, the `Dir` dropped
        // by the failed allocation removes and puts them).
        let dir = Arc::new(Dir { dir, parent: root }, GFP_KERNEL).ok()?;
        Some(Self { dir })
    }

    /// The dentry, for files made in the directory.
    pub(super) fn as_raw(&self) -> *mut bindings::dentry {
        self.dir.dir
    }
}

/// A `u32` file of a [`U32Knobs`] value: its name, mode and field.
pub(crate) type U32File<T> = (&'static CStr, u16, fn(&T) -> &AtomicU32);

/// Fields of a `T` that debugfs exposes as `u32` files.
pub(crate) trait U32Knobs: Send + Sync + 'static {
    /// Each file's name, mode and field.
    const FILES: &'static [U32File<Self>];
}

/// A subdirectory of a device's directory with one `u32` file per field of
/// a [`U32Knobs`] value (`cat` reads it, `echo N >` sets it), removed on
/// drop, before the value can go.
///
/// The files read and write the fields as debugfs does any `u32` (plain
/// aligned word accesses, as netdevsim's knobs); the driver reads them as
/// atomics.
///
/// # Invariants
///
/// `dir`'s files point into `*values`, which this keeps alive, and `dir` is
/// removed (on drop) before `values` is released.
pub(crate) struct U32Dir<T: U32Knobs> {
    _dir: Dir,
    _values: Arc<T>,
    _parent: DeviceDir,
}

impl<T: U32Knobs> U32Dir<T> {
    /// Creates `name/` in `parent` with `T`'s files over `values`; `None`
    /// when debugfs makes no directory.
    pub(crate) fn new(parent: &DeviceDir, name: &CStr, values: Arc<T>) -> Option<Self> {
        // SAFETY: a NUL-terminated name; the parent directory is live (we hold
        // a clone of it).
        let raw = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), parent.as_raw()) };
        if !is_dentry(raw) {
            return None;
        }
        // INVARIANT: a dentry from `debugfs_create_dir`; no reference to put.
        let dir = Dir {
            dir: raw,
            parent: null_mut(),
        };
        for (file, mode, field) in T::FILES {
            // SAFETY: a NUL-terminated name in our live directory; the value
            // is an aligned `u32` (an `AtomicU32` has `u32`'s layout) inside
            // `*values`, which outlives the file (type invariant).
            unsafe {
                bindings::debugfs_create_u32(
                    file.as_char_ptr(),
                    *mode,
                    raw,
                    field(&values).as_ptr(),
                )
            };
        }
        // INVARIANT: the files point into `values`, kept here; `dir` drops
        // (removing them) in `drop` order before `values` (declared after).
        Some(Self {
            _dir: dir,
            _values: values,
            _parent: parent.clone(),
        })
    }
}

/// A device's `restart_rx_queue` file; removing it waits for a write in
/// progress to finish.
///
/// # Invariants
///
/// `file` came from `dmn_debugfs_restart_add` in `_dir` (kept alive here)
/// for a net device that stays allocated until this is dropped.
pub(crate) struct RestartKnob {
    file: *mut bindings::dentry,
    _dir: DeviceDir,
}

// SAFETY: the dentry pointer is only passed to debugfs, which locks internally.
unsafe impl Send for RestartKnob {}
// SAFETY: as above; `&RestartKnob` exposes nothing.
unsafe impl Sync for RestartKnob {}

impl RestartKnob {
    /// Adds the file of `dev` to its directory `dir`.
    ///
    /// # Safety
    ///
    /// `dev` is a device of `NetDevAlloc` that stays allocated until the
    /// returned value is dropped.
    pub(super) unsafe fn new(dir: &DeviceDir, dev: *mut bindings::net_device) -> Self {
        // SAFETY: the directory is live (we keep a clone); the caller keeps
        // `dev` allocated while the file exists.
        let file = unsafe { bindings::dmn_debugfs_restart_add(dir.as_raw(), dev) };
        // INVARIANT: from `dmn_debugfs_restart_add`; the caller keeps `dev` allocated.
        Self {
            file,
            _dir: dir.clone(),
        }
    }
}

impl Drop for RestartKnob {
    fn drop(&mut self) {
        // SAFETY: `file` came from `dmn_debugfs_restart_add` (type invariant)
        // and is removed once; a write in progress finishes first.
        unsafe { bindings::debugfs_remove(self.file) };
    }
}
