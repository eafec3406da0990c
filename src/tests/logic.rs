// SPDX-License-Identifier: GPL-2.0

//! The pure-logic suites of `src/logic/tests/`, run by KUnit here; `tools/logic`
//! runs the same files under `cargo test` (one copy, two harnesses).
//!
//! A shared test is `fn case(t: &mut Ctx)` using `check!`/`check_eq!`, and each
//! file lists its cases with `logic_suite!`; this module maps them to KUnit.

use crate::abstractions::boxed::box_copy;
use crate::logic::{gro, parse, personality, steering, toeplitz, wire_faults};
use kernel::prelude::*;

/// What a shared case runs with: KUnit's context.
type Ctx = crate::abstractions::kunit::Test;

/// A default steering table over `queues` queues, on the heap (about 10 KiB:
/// too much for a test's stack frame); `None`, the case failed, without memory.
fn boxed_steering(t: &mut Ctx, queues: u32) -> Option<KVBox<steering::Steering>> {
    match box_copy(&steering::Steering::EMPTY, GFP_KERNEL) {
        Ok(mut s) => {
            s.reset(toeplitz::DEFAULT_RSS_KEY, queues);
            Some(s)
        }
        Err(_) => {
            t.fail(format_args!("no memory for a steering table"));
            None
        }
    }
}

/// Fails the case unless the condition holds (`kunit_expect!`).
macro_rules! check {
    ($t:expr, $cond:expr $(,)?) => {
        kunit_expect!($t, $cond)
    };
}

/// Fails the case unless both sides are equal (`kunit_expect_eq!`).
macro_rules! check_eq {
    ($t:expr, $left:expr, $right:expr $(,)?) => {
        kunit_expect_eq!($t, $left, $right)
    };
}

/// Registers a file's cases as a KUnit suite.
macro_rules! logic_suite {
    ($glue:ident, $name:literal, [$($case:ident),+ $(,)?]) => {
        kunit_suite!($glue, $name, [$($case),+]);
    };
}

#[path = "../logic/tests/gro.rs"]
mod gro_tests;
#[path = "../logic/tests/parse.rs"]
mod parse_tests;
#[path = "../logic/tests/personality.rs"]
mod personality_tests;
#[path = "../logic/tests/steering.rs"]
mod steering_tests;
#[path = "../logic/tests/toeplitz.rs"]
mod toeplitz_tests;
#[path = "../logic/tests/wire_faults.rs"]
mod wire_faults_tests;
