//! The module's pure-logic files, compiled for the host.
//!
//! These are the very files `devmemnic.ko` builds (no copies): they use only
//! `core`, so `cargo test` runs them here while KUnit runs them in the kernel.
//! Their items are `pub(crate)` as the module needs, hence the tests live here.

// Not every item is used by the host tests.
#![allow(dead_code)]

#[path = "../../../src/logic/gro.rs"]
mod gro;
#[path = "../../../src/logic/parse.rs"]
mod parse;
#[path = "../../../src/logic/personality.rs"]
mod personality;
#[path = "../../../src/logic/steering.rs"]
mod steering;
#[path = "../../../src/logic/toeplitz.rs"]
mod toeplitz;
#[path = "../../../src/logic/wire_faults.rs"]
mod wire_faults;

#[cfg(test)]
mod logic_tests;
#[cfg(test)]
mod parse_tests;
#[cfg(test)]
mod toeplitz_tests;
