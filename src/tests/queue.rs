// SPDX-License-Identifier: GPL-2.0

//! KUnit: queue memory (which pools, with which flags) and the restart sequence
//! `netdev_rx_queue_restart()` drives, on a pair of the module's own devices.

use crate::kunit::Test;
use crate::netdev::{NetDev, QueueMgmt, Rtnl};
use crate::nic::{Nic, NicPriv, Pair};
use crate::skb::SkBuff;

/// Pair number 120: `dmnic240`/`dmnic241`, 4 queues, out of the way of the module's.
fn test_pair(test: &mut Test) -> Option<Pair> {
    match Pair::new(120, 4) {
        Ok(p) => Some(p),
        Err(e) => {
            test.fail(format_args!("creating the test pair failed: {:?}", e));
            None
        }
    }
}

/// The private data of side 0, as the callbacks see it.
fn side0(pair: &Pair) -> NicPriv {
    NicPriv::for_test(pair, 0)
}

fn pools_follow_header_split(test: &mut Test) {
    let Some(pair) = test_pair(test) else { return };
    let dev = pair.dev(0);
    let data = side0(&pair);
    let rtnl = Rtnl::lock();
    kunit_expect!(test, dev.open(&rtnl).is_ok());
    for split in [true, false] {
        data.me()
            .header_split
            .store(split, core::sync::atomic::Ordering::Relaxed);
        match Nic::queue_mem_alloc(dev, &data, 2) {
            Ok(mem) => {
                let (hdr, payload) = mem.pools();
                kunit_expect_eq!(test, mem.splits(), split);
                // Only the payload pool may take a memory provider, and only with split on.
                kunit_expect_eq!(test, payload.allows_unreadable(), split);
                kunit_expect!(test, !hdr.allows_unreadable());
                // Both are tied to the device and queue (the kernel's provider lookup
                // and the netlink page-pool listing use this).
                kunit_expect_eq!(test, payload.queue_of(dev), (2, true));
                kunit_expect_eq!(test, hdr.queue_of(dev), (2, true));
                // No binding: host memory.
                kunit_expect!(test, !mem.is_devmem());
            }
            Err(e) => test.fail(format_args!("queue_mem_alloc failed: {:?}", e)),
        }
    }
    dev.close(&rtnl);
}

fn restart_swaps_memory_and_keeps_frames(test: &mut Test) {
    let Some(pair) = test_pair(test) else { return };
    let dev = pair.dev(0);
    let data = side0(&pair);
    let q = &pair.state().side(0).rxqs[1];
    let rtnl = Rtnl::lock();
    kunit_expect!(test, dev.open(&rtnl).is_ok());
    kunit_expect_eq!(
        test,
        q.napi.with_state(|st, _| st.mem().map(|m| m.splits())),
        Some(true)
    );
    // The core's order: alloc new, stop (old out), start (new in), free old.
    data.me()
        .header_split
        .store(false, core::sync::atomic::Ordering::Relaxed);
    let new = Nic::queue_mem_alloc(dev, &data, 1);
    kunit_expect!(test, new.is_ok());
    let old = Nic::queue_stop(dev, &data, 1);
    kunit_expect!(test, matches!(old, Ok(Some(ref m)) if m.splits()));
    kunit_expect!(test, q.napi.with_state(|st, _| st.mem().is_none()));
    // Frames accepted while the queue is stopped wait in its ring.
    let before = q.stats.linear.get() + q.stats.drops.get();
    for _ in 0..5 {
        match SkBuff::test_frame(60) {
            Ok(skb) => kunit_expect!(test, q.ring.produce(skb).is_ok()),
            Err(_) => test.fail(format_args!("no test frame")),
        }
    }
    let mut new = new.ok();
    kunit_expect!(test, Nic::queue_start(dev, &data, 1, &mut new).is_ok());
    kunit_expect!(test, new.is_none());
    kunit_expect_eq!(
        test,
        q.napi.with_state(|st, _| st.mem().map(|m| m.splits())),
        Some(false)
    );
    drop(old);
    drop(rtnl);
    // The restarted queue's NAPI receives what waited (into host memory).
    let mut waited = 0;
    while !q.ring.is_empty() && waited < 100 {
        crate::delay::msleep(10);
        waited += 1;
    }
    kunit_expect!(test, q.ring.is_empty());
    kunit_expect_eq!(test, q.stats.linear.get() + q.stats.drops.get() - before, 5);
    kunit_expect_eq!(test, q.stats.drops.get(), 0);
    let rtnl = Rtnl::lock();
    dev.close(&rtnl);
}

fn queue_mem_refused_when_down_or_out_of_range(test: &mut Test) {
    let Some(pair) = test_pair(test) else { return };
    let dev: &NetDev = pair.dev(0);
    let data = side0(&pair);
    let rtnl = Rtnl::lock();
    kunit_expect!(test, Nic::queue_mem_alloc(dev, &data, 0).is_err());
    kunit_expect!(test, dev.open(&rtnl).is_ok());
    kunit_expect!(test, Nic::queue_mem_alloc(dev, &data, 0).is_ok());
    kunit_expect_eq!(
        test,
        Nic::queue_mem_alloc(dev, &data, 4).err(),
        Some(kernel::error::code::EINVAL)
    );
    kunit_expect_eq!(
        test,
        Nic::queue_stop(dev, &data, 9).err(),
        Some(kernel::error::code::EINVAL)
    );
    dev.close(&rtnl);
}

kunit_suite!(
    queue_suite,
    "devmemnic_queue",
    [
        pools_follow_header_split,
        restart_swaps_memory_and_keeps_frames,
        queue_mem_refused_when_down_or_out_of_range,
    ]
);
