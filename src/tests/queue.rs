// SPDX-License-Identifier: GPL-2.0

//! KUnit: queue memory (which pools, with which flags) and the restart sequence
//! `netdev_rx_queue_restart()` drives, on a pair of the module's own devices,
//! under the device's ops locks as the core calls the queue ops.

use crate::abstractions::errno::enetdown;
use crate::abstractions::kunit::Test;
use crate::abstractions::netdev::NetDev;
use crate::abstractions::queue_mgmt::{QueueConfig, QueueMgmt};
use crate::abstractions::skb::SkBuff;
use crate::driver::nic::Nic;
use crate::driver::nic::NicPriv;
use crate::driver::pair::Pair;
use core::sync::atomic::Ordering;

/// Pair number 120: `dmnic240`/`dmnic241`, 4 of 6 queues in use, out of the
/// way of the module's.
fn test_pair(test: &mut Test) -> Option<Pair> {
    super::test_pair(test, 120, 4, 6)
}

/// The private data of side 0, as the callbacks see it.
fn side0(pair: &Pair) -> NicPriv {
    NicPriv::for_test(pair, 0)
}

const PAGE_CFG: QueueConfig = QueueConfig::page_sized();

fn pools_follow_header_split(test: &mut Test) {
    let Some(pair) = test_pair(test) else { return };
    let dev = pair.dev(0);
    let data = side0(&pair);
    let lock = dev.lock_ops();
    kunit_expect!(test, dev.open(&lock).is_ok());
    for split in [true, false] {
        data.me().header_split.store(split, Ordering::Relaxed);
        match Nic::queue_mem_alloc(dev, &data, &PAGE_CFG, 2) {
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
    kunit_expect!(test, dev.close(&lock).is_ok());
}

fn restart_swaps_memory_and_keeps_frames(test: &mut Test) {
    let Some(pair) = test_pair(test) else { return };
    let dev = pair.dev(0);
    let data = side0(&pair);
    let q = &pair.state().side(0).rxqs[1];
    let lock = dev.lock_ops();
    kunit_expect!(test, dev.open(&lock).is_ok());
    kunit_expect_eq!(
        test,
        q.napi.with_state(|st, _| st.mem().map(|m| m.splits())),
        Some(true)
    );
    // The core's order: alloc new, stop (old out), start (new in), free old.
    data.me().header_split.store(false, Ordering::Relaxed);
    let new = Nic::queue_mem_alloc(dev, &data, &PAGE_CFG, 1);
    kunit_expect!(test, new.is_ok());
    let old = Nic::queue_stop(dev, &data, 1);
    kunit_expect!(test, matches!(old, Ok(Some(ref m)) if m.splits()));
    kunit_expect!(test, q.napi.with_state(|st, _| st.mem().is_none()));
    // Frames accepted while the queue is stopped wait in its ring.
    let before = q.stats.linear.get() + q.stats.drops.get();
    for _ in 0..5 {
        match SkBuff::test_frame(60) {
            Ok(skb) => kunit_expect!(test, q.ring.produce(skb, u32::MAX).is_ok()),
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
    if let Ok(Some(old)) = old {
        Nic::queue_mem_free(dev, &data, old);
    }
    drop(lock);
    // The restarted queue's NAPI receives what waited (into host memory).
    let mut waited = 0;
    while !q.ring.is_empty() && waited < 100 {
        crate::abstractions::delay::msleep(10);
        waited += 1;
    }
    kunit_expect!(test, q.ring.is_empty());
    kunit_expect_eq!(test, q.stats.linear.get() + q.stats.drops.get() - before, 5);
    kunit_expect_eq!(test, q.stats.drops.get(), 0);
    let lock = dev.lock_ops();
    kunit_expect!(test, dev.close(&lock).is_ok());
}

fn queue_ops_check_their_arguments(test: &mut Test) {
    let Some(pair) = test_pair(test) else { return };
    let dev: &NetDev = pair.dev(0);
    let data = side0(&pair);
    let lock = dev.lock_ops();
    // 6 queues allocated, the first 4 in use (queue 4 below exists but is
    // not active).
    kunit_expect_eq!(test, dev.num_rx_queues(), 6);
    kunit_expect_eq!(test, dev.real_num_rx_queues(), 4);
    kunit_expect_eq!(test, dev.real_num_tx_queues(), 4);
    // Memory may be built while the device is down (7.2's core does so when a
    // provider binds to a closed device), but a down queue neither stops nor
    // starts (6.12's core would restart it regardless).
    match Nic::queue_mem_alloc(dev, &data, &PAGE_CFG, 0) {
        Ok(mem) => {
            let mut mem = Some(mem);
            kunit_expect_eq!(
                test,
                Nic::queue_start(dev, &data, 0, &mut mem).err(),
                Some(enetdown())
            );
            kunit_expect!(test, mem.is_some());
            kunit_expect_eq!(test, Nic::queue_stop(dev, &data, 0).err(), Some(enetdown()));
            if let Some(m) = mem {
                Nic::queue_mem_free(dev, &data, m);
            }
        }
        Err(e) => test.fail(format_args!("queue_mem_alloc while down failed: {:?}", e)),
    }
    kunit_expect!(test, dev.open(&lock).is_ok());
    kunit_expect!(test, Nic::queue_mem_alloc(dev, &data, &PAGE_CFG, 0).is_ok());
    kunit_expect_eq!(
        test,
        Nic::queue_mem_alloc(dev, &data, &PAGE_CFG, 4).err(),
        Some(kernel::error::code::EINVAL)
    );
    kunit_expect_eq!(
        test,
        Nic::queue_stop(dev, &data, 9).err(),
        Some(kernel::error::code::EINVAL)
    );
    // Payload buffers of a power of two from a page to 64 KiB (io_uring zcrx's
    // rx_buf_len); memory for one has a payload pool of that buffer size and
    // a page-sized header pool.
    let sized = |n: usize| QueueConfig {
        rx_page_size: n as u32,
    };
    let page = kernel::page::PAGE_SIZE;
    for bad in [page / 2, 3 * page, 128 * 1024, 0] {
        kunit_expect!(test, Nic::validate_config(dev, &data, &sized(bad)).is_err());
        kunit_expect!(
            test,
            Nic::queue_mem_alloc(dev, &data, &sized(bad), 0).is_err()
        );
    }
    for good in [page, 4 * page, 64 * 1024] {
        kunit_expect!(test, Nic::validate_config(dev, &data, &sized(good)).is_ok());
        match Nic::queue_mem_alloc(dev, &data, &sized(good), 0) {
            Ok(mem) => {
                let (header, payload) = mem.pools();
                kunit_expect_eq!(test, payload.buf_size(), good);
                kunit_expect_eq!(test, header.buf_size(), page);
                Nic::queue_mem_free(dev, &data, mem);
            }
            Err(e) => test.fail(format_args!("{} byte buffers: {:?}", good, e)),
        }
    }
    // A lock guard of one device does not open another.
    let other = pair.dev(1);
    kunit_expect_eq!(
        test,
        other.open(&lock).err(),
        Some(kernel::error::code::EINVAL)
    );
    kunit_expect!(test, dev.close(&lock).is_ok());
}

/// The core's own restart sequence (6.12: devmemnic's copy of it; 7.2: the
/// exported `netdev_rx_queue_restart()`), as the debugfs knob runs it.
fn core_restart_under_ops_lock(test: &mut Test) {
    let Some(pair) = test_pair(test) else { return };
    let dev = pair.dev(0);
    let q = &pair.state().side(0).rxqs[3];
    let lock = dev.lock_ops();
    kunit_expect_eq!(test, dev.restart_rx_queue(&lock, 3).err(), Some(enetdown()));
    kunit_expect!(test, dev.open(&lock).is_ok());
    let before = q
        .napi
        .with_state(|st, _| st.mem().map(|m| m.pools().1.id()));
    kunit_expect!(test, before.is_some());
    kunit_expect!(test, dev.restart_rx_queue(&lock, 3).is_ok());
    let after = q
        .napi
        .with_state(|st, _| st.mem().map(|m| m.pools().1.id()));
    // New memory in place (a fresh allocation), queue running.
    kunit_expect!(test, after.is_some() && after != before);
    kunit_expect_eq!(
        test,
        dev.restart_rx_queue(&lock, 4).err(),
        Some(kernel::error::code::EINVAL)
    );
    kunit_expect!(test, dev.close(&lock).is_ok());
}

kunit_suite!(
    queue_suite,
    "devmemnic_queue",
    [
        pools_follow_header_split,
        restart_swaps_memory_and_keeps_frames,
        queue_ops_check_their_arguments,
        core_restart_under_ops_lock,
    ]
);
