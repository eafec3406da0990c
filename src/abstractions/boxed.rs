// SPDX-License-Identifier: GPL-2.0

//! Boxes for values too large for a kernel stack frame.
//!
//! `KVBox::new(value)` builds `value` on the stack before copying it into the
//! allocation; for a table of tens of KiB, cloned in an ethtool call already
//! deep in the stack, that temporary would overflow it (kernel stacks are
//! 16 KiB). The boxes are `KVBox`es: kmalloc, or vmalloc when no contiguous
//! pages are free.

use kernel::alloc::{AllocError, Flags};
use kernel::prelude::*;

/// A new box holding a copy of `src`, copied straight from `src` into the
/// allocation.
pub(crate) fn box_copy<T: Copy>(src: &T, flags: Flags) -> Result<KVBox<T>, AllocError> {
    let mut b = KVBox::<T>::new_uninit(flags)?;
    // SAFETY: `b` is a fresh allocation for one `T`, so it cannot overlap
    // `src`; `T: Copy`, so a byte copy of a valid `T` is a valid `T`.
    unsafe { core::ptr::copy_nonoverlapping(src, b.as_mut_ptr(), 1) };
    // SAFETY: fully written just above.
    Ok(unsafe { b.assume_init() })
}
