//! The module's pure-logic files, compiled for the host.
//!
//! These are the very files `devmemnic.ko` builds (no copies): they use only
//! `core`, so `cargo test` runs them here while KUnit runs them in the kernel.

#[path = "../../../src/toeplitz.rs"]
pub mod toeplitz;
