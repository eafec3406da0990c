// SPDX-License-Identifier: GPL-2.0

//! KUnit: the RX ring between a sender and a queue's NAPI (resizing keeps
//! every accepted frame, the TX ring limit).

use crate::abstractions::kunit::Test;
use crate::abstractions::ring::SkbRing;
use crate::abstractions::skb::SkBuff;
use kernel::prelude::*;

/// Queues test frames of lengths `lens` (each distinct, to check the order).
fn fill(test: &mut Test, ring: &SkbRing, lens: core::ops::Range<u32>) {
    for len in lens {
        match SkBuff::test_frame(len) {
            Ok(skb) => kunit_expect!(test, ring.produce(skb, u32::MAX).is_ok()),
            Err(_) => test.fail(format_args!("no test frame")),
        }
    }
}

fn resize_keeps_frames_in_order(test: &mut Test) {
    let Ok(ring) = SkbRing::new(8) else {
        return test.fail(format_args!("no ring"));
    };
    fill(test, &ring, 60..65);
    kunit_expect_eq!(test, ring.len_hint(), 5);
    // Five frames do not fit in four entries: refused, nothing changes.
    kunit_expect_eq!(test, ring.resize(4), Err(EBUSY));
    kunit_expect_eq!(test, ring.size(), 8);
    kunit_expect_eq!(test, ring.len_hint(), 5);
    kunit_expect!(test, ring.resize(5).is_ok());
    kunit_expect_eq!(test, ring.size(), 5);
    kunit_expect!(test, ring.resize(64).is_ok());
    kunit_expect_eq!(test, ring.size(), 64);
    for len in 60..65 {
        kunit_expect_eq!(test, ring.consume().map(|s| s.len()), Some(len as usize));
    }
    kunit_expect!(test, ring.consume().is_none());
    kunit_expect_eq!(test, ring.len_hint(), 0);
    kunit_expect_eq!(test, ring.resize(0), Err(EINVAL));
}

fn produce_stops_at_the_limit(test: &mut Test) {
    let Ok(ring) = SkbRing::new(16) else {
        return test.fail(format_args!("no ring"));
    };
    fill(test, &ring, 60..63);
    let Ok(skb) = SkBuff::test_frame(70) else {
        return test.fail(format_args!("no test frame"));
    };
    // Three queued: a limit of 3 refuses and hands the frame back.
    let back = ring.produce(skb, 3);
    kunit_expect!(test, matches!(back, Err(ref s) if s.len() == 70));
    if let Err(skb) = back {
        kunit_expect!(test, ring.produce(skb, 4).is_ok());
    }
    kunit_expect_eq!(test, ring.len_hint(), 4);
    kunit_expect_eq!(test, ring.purge(), 4);
}

kunit_suite!(
    ring_suite,
    "devmemnic_ring",
    [resize_keeps_frames_in_order, produce_stops_at_the_limit]
);
