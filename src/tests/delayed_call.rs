// SPDX-License-Identifier: GPL-2.0

//! KUnit: a delayed call runs once per schedule, and once disabled (its
//! owner's teardown, or its drop) it neither runs nor can be scheduled.

use crate::abstractions::delay::msleep;
use crate::abstractions::delayed_call::{DelayedCall, DelayedCallback};
use crate::abstractions::kunit::Test;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;

/// An owner that counts its calls.
#[pin_data]
struct Counter {
    #[pin]
    call: DelayedCall,
    runs: AtomicU32,
}

crate::impl_has_delayed_call!(Counter, call);

impl DelayedCallback for Counter {
    fn run(&self) {
        self.runs.fetch_add(1, Ordering::Relaxed);
    }
}

fn new_counter(test: &mut Test) -> Option<Pin<KBox<Counter>>> {
    let init = pin_init!(Counter {
        call <- DelayedCall::new(),
        runs: AtomicU32::new(0),
    });
    match KBox::pin_init(init, GFP_KERNEL) {
        Ok(c) => Some(c),
        Err(e) => {
            test.fail(format_args!("no counter: {:?}", e));
            None
        }
    }
}

/// Waits up to a second for `runs` to reach `n`.
fn wait_runs(c: &Counter, n: u32) -> u32 {
    for _ in 0..100 {
        if c.runs.load(Ordering::Relaxed) >= n {
            break;
        }
        msleep(10);
    }
    c.runs.load(Ordering::Relaxed)
}

fn scheduled_call_runs_once(test: &mut Test) {
    let Some(c) = new_counter(test) else { return };
    kunit_expect!(test, DelayedCall::schedule(&*c, 1));
    kunit_expect_eq!(test, wait_runs(&c, 1), 1);
    // It ran, so it can be scheduled again.
    kunit_expect!(test, DelayedCall::schedule(&*c, 1));
    kunit_expect_eq!(test, wait_runs(&c, 2), 2);
}

fn disabled_call_is_cancelled_and_refused(test: &mut Test) {
    let Some(c) = new_counter(test) else { return };
    // Pending far in the future, then disabled: it never runs.
    kunit_expect!(test, DelayedCall::schedule(&*c, 10_000));
    c.call.disable();
    // What a NAPI poll still running on the owner would try: refused.
    kunit_expect!(test, !DelayedCall::schedule(&*c, 1));
    msleep(50);
    kunit_expect_eq!(test, c.runs.load(Ordering::Relaxed), 0);
    // Disabling twice (the teardown, then the drop) is fine.
    c.call.disable();
}

kunit_suite!(
    delayed_call_suite,
    "devmemnic_delayed_call",
    [
        scheduled_call_runs_once,
        disabled_call_is_cancelled_and_refused,
    ]
);
