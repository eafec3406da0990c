// SPDX-License-Identifier: GPL-2.0

//! Pure logic: frame parsing, receive steering, the Toeplitz hash, receive
//! coalescing, NIC personalities, a hostile wire's faults.
//!
//! These files use only `core`; `tools/logic` compiles the same files for
//! `cargo test` on the host (through `#[path]`, no copies), so they refer to
//! each other as `super::` siblings, which holds in both crates.

pub(crate) mod gro;
pub(crate) mod parse;
pub(crate) mod personality;
pub(crate) mod steering;
pub(crate) mod toeplitz;
pub(crate) mod wire_faults;
