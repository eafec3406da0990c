// SPDX-License-Identifier: GPL-2.0

//! KUnit: TX completion. A TX queue's ring bounds its frames in flight; the
//! receiver completes them and the sender's own NAPI reaps the completions
//! and wakes the stopped queue.

use crate::abstractions::kunit::Test;
use crate::abstractions::netdev_ops::TxOutcome;
use crate::abstractions::queue_mgmt::QueueMgmt;
use crate::abstractions::skb::SkBuff;
use crate::driver::nic::Nic;
use crate::driver::nic::NicPriv;
use crate::driver::tx::transmit;
use core::sync::atomic::Ordering;

/// TX ring size of the test: small, so a few frames fill it.
const RING: u32 = 4;

fn ring_bounds_in_flight_until_napi_reaps(test: &mut Test) {
    // Pair 121: `dmnic242`/`dmnic243`, out of the way of the module's.
    let Some(pair) = super::test_pair(test, 121, 2, 2) else {
        return;
    };
    let (dev, peer) = (pair.dev(0), pair.dev(1));
    let (data, peer_data) = (NicPriv::for_test(&pair, 0), NicPriv::for_test(&pair, 1));
    for d in [dev, peer] {
        let lock = d.lock_ops();
        kunit_expect!(test, d.open(&lock).is_ok());
    }
    data.me().tx_ring.store(RING, Ordering::Relaxed);
    let tq = &data.me().txqs[0];
    let stats = &tq.stats;
    let (stops0, wakes0) = (stats.stops.get(), stats.wakes.get());
    // The receiving queue (non-IP frames go to queue 0) stops: frames wait
    // in its ring, so nothing completes.
    let lock = peer.lock_ops();
    let mut old = Nic::queue_stop(peer, &peer_data, 0).ok().flatten();
    // (The stack may send on this queue too: send until the ring is full.)
    let mut sent = 0;
    while !dev.txq_stopped(0) && sent < RING {
        match SkBuff::test_frame(60) {
            Ok(skb) => kunit_expect!(test, matches!(transmit(dev, &data, skb), TxOutcome::Done)),
            Err(_) => test.fail(format_args!("no test frame")),
        }
        sent += 1;
    }
    kunit_expect!(test, dev.txq_stopped(0));
    kunit_expect!(test, tq.in_flight() >= RING);
    kunit_expect_eq!(test, stats.stops.get() - stops0, 1);
    // A full ring takes no more.
    if let Ok(skb) = SkBuff::test_frame(60) {
        kunit_expect!(
            test,
            matches!(transmit(dev, &data, skb), TxOutcome::Busy(_))
        );
    }
    // The receiver takes the frames: their completions reach our NAPI, whose
    // reap empties the ring and wakes the queue.
    kunit_expect!(
        test,
        Nic::queue_start(peer, &peer_data, 0, &mut old).is_ok()
    );
    drop(lock);
    let mut waited = 0;
    while (dev.txq_stopped(0) || tq.in_flight() > 0) && waited < 200 {
        crate::abstractions::delay::msleep(10);
        waited += 1;
    }
    kunit_expect!(test, !dev.txq_stopped(0));
    kunit_expect_eq!(test, tq.in_flight(), 0);
    kunit_expect!(test, stats.wakes.get() > wakes0);
    if stats.wakes.get() <= wakes0 {
        test.fail(format_args!(
            "woken without a counted wake: stops {} -> {}, wakes {} -> {}, in flight {}, waited {} ms",
            stops0,
            stats.stops.get(),
            wakes0,
            stats.wakes.get(),
            tq.in_flight(),
            waited * 10
        ));
    }
    for d in [dev, peer] {
        let lock = d.lock_ops();
        kunit_expect!(test, d.close(&lock).is_ok());
    }
}

kunit_suite!(
    tx_suite,
    "devmemnic_tx",
    [ring_bounds_in_flight_until_napi_reaps]
);
