//! The module's pure-logic suites (`src/logic/tests/`, also run by KUnit in the
//! kernel), as `cargo test` tests: one `#[test]` per case.

use crate::{gro, parse, personality, steering, toeplitz, wire_faults};

/// What a shared case runs with on the host: a failed check panics.
pub(crate) struct Ctx;

impl Ctx {
    /// Fails the running test with a message.
    pub(crate) fn fail(&mut self, args: core::fmt::Arguments<'_>) {
        panic!("{}", args)
    }
}

/// A default steering table over `queues` queues, boxed as in the kernel's
/// harness (where it is too big for a test's stack frame).
fn boxed_steering(_t: &mut Ctx, queues: u32) -> Option<Box<steering::Steering>> {
    let mut s = Box::new(steering::Steering::EMPTY);
    s.reset(toeplitz::DEFAULT_RSS_KEY, queues);
    Some(s)
}

/// `assert!` on the host.
macro_rules! check {
    ($t:expr, $cond:expr $(,)?) => {{
        let _: &mut Ctx = $t;
        assert!($cond)
    }};
}

/// `assert_eq!` on the host.
macro_rules! check_eq {
    ($t:expr, $left:expr, $right:expr $(,)?) => {{
        let _: &mut Ctx = $t;
        assert_eq!($left, $right)
    }};
}

/// One `#[test]` per listed case.
macro_rules! logic_suite {
    ($glue:ident, $name:literal, [$($case:ident),+ $(,)?]) => {
        mod $glue {
            $(
                #[test]
                fn $case() {
                    super::$case(&mut super::super::Ctx)
                }
            )+
        }
    };
}

#[path = "../../../src/logic/tests/gro.rs"]
mod gro_tests;
#[path = "../../../src/logic/tests/parse.rs"]
mod parse_tests;
#[path = "../../../src/logic/tests/personality.rs"]
mod personality_tests;
#[path = "../../../src/logic/tests/steering.rs"]
mod steering_tests;
#[path = "../../../src/logic/tests/toeplitz.rs"]
mod toeplitz_tests;
#[path = "../../../src/logic/tests/wire_faults.rs"]
mod wire_faults_tests;
