// SPDX-License-Identifier: GPL-2.0

//! KUnit suites, run by KUnit when the module loads.

mod delayed_call;
mod logic;
mod platform;
mod queue;
mod ring;
mod tx;
mod xdp;

use crate::abstractions::kunit::Test;
use crate::driver::nic::PairShape;
use crate::driver::pair::Pair;

/// Pair number `n` of the suites (`dmnic<2n>`/`dmnic<2n+1>`, out of the
/// way of the module's), `queues` of `max_queues` in use; a failure fails
/// the case.
fn test_pair(test: &mut Test, n: u32, queues: u32, max_queues: u32) -> Option<Pair> {
    let shape = PairShape {
        queues,
        max_queues,
        rss_queue_offset: false,
        personality: crate::logic::personality::Personality::Strict,
    };
    match Pair::new(n, &shape, false) {
        Ok(p) => Some(p),
        Err(e) => {
            test.fail(format_args!("creating the test pair failed: {:?}", e));
            None
        }
    }
}
