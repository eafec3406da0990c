// SPDX-License-Identifier: GPL-2.0

//! The abstraction layer: safe Rust APIs over the kernel's C networking,
//! platform, DMA, page pool, IRQ and KUnit interfaces.
//!
//! Every `unsafe` block, every binding and every difference between the
//! kernels devmemnic builds against (6.12 LTS, 7.2 and 7.3, self-built or
//! Debian's stock) lives here and in the C
//! helpers (`src/helpers/`, version differences in `compat.c`). Kbuild probes
//! the tree being built and passes `--cfg dmn_*` flags that only this folder
//! reads. Nothing here imports the driver (`crate::driver`) or its logic.
//!
//! One concern a file, as `rust/kernel/` lays its own out: a subsystem with
//! several concerns is a folder whose `mod.rs` introduces it and re-exports
//! its files' types, so users name them by the subsystem (`ethtool/`: the
//! trait and its values, flow specs, the C table; `link/`: the link kind,
//! the lower device), and what several subsystems share has a file of its
//! own ([`extack`]: a request's error message; [`vtables`]: the set of ops
//! tables a device gets).

pub(crate) mod bindings;
pub(crate) mod boxed;
pub(crate) mod debugfs;
pub(crate) mod delay;
pub(crate) mod delayed_call;
pub(crate) mod dma;
pub(crate) mod errno;
pub(crate) mod ethtool;
pub(crate) mod extack;
#[macro_use]
pub(crate) mod kunit;
pub(crate) mod frame_reader;
pub(crate) mod irq;
pub(crate) mod link;
pub(crate) mod module;
pub(crate) mod module_ref;
pub(crate) mod napi;
pub(crate) mod netdev;
pub(crate) mod netdev_ops;
pub(crate) mod page_pool;
pub(crate) mod params;
pub(crate) mod platform;
pub(crate) mod qstats;
pub(crate) mod queue_mgmt;
pub(crate) mod rcu;
pub(crate) mod ring;
pub(crate) mod skb;
pub(crate) mod vtables;
pub(crate) mod xdp;

/// The `F` at byte `offset` inside `owner`: the embedded-field lookup of the
/// `Has*` traits ([`napi::HasNapi`], [`delayed_call::HasDelayedCall`]).
///
/// # Safety
///
/// `offset` is the offset of a field of type `F` in `O`.
pub(crate) unsafe fn field_at<O: ?Sized, F>(owner: &O, offset: usize) -> &F {
    // SAFETY: per the contract the pointer is in bounds of `owner` and points
    // to an `F`, valid for `owner`'s lifetime.
    unsafe { &*core::ptr::from_ref(owner).cast::<u8>().add(offset).cast() }
}
