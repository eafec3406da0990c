// SPDX-License-Identifier: GPL-2.0

//! KUnit: the bounds of what the receive path builds in a queue's host pool:
//! a frame for an XDP program (what its first page holds, how many frags it
//! takes, from which pool) and an skb head (room for `skb_shared_info`, a
//! whole Ethernet header before it goes up), and who may allocate there (the
//! pool's own NAPI), on the module's own devices.

use crate::abstractions::kunit::Test;
use crate::abstractions::napi::{with_bh_disabled, BhOff, NapiOwner};
use crate::abstractions::netdev::NetDev;
use crate::abstractions::queue_mgmt::{QueueConfig, QueueMgmt};
use crate::abstractions::skb::{build_size, rx_headroom, SkBuff};
use crate::abstractions::xdp::{xdp_first_page_capacity, xdp_headroom, xdp_max_frags, XdpFrame};
use crate::driver::nic::Nic;
use crate::driver::nic::NicPriv;
use crate::driver::nic::QueueMem;
use crate::driver::xdp::single_buffer_max_mtu;

const PAGE_CFG: QueueConfig = QueueConfig::page_sized();

/// Runs `check` on new memory of queue 0 of test pair 122
/// (`dmnic244`/`dmnic245`, 2 queues) with queue 0's NAPI stopped (its
/// pools' allocations are then ours), then `foreign` on the same memory
/// with queue 1's NAPI stopped instead (one at a time: their locks are of
/// one lockdep class).
fn with_queue_mem(
    test: &mut Test,
    check: impl FnOnce(&mut Test, &NetDev, &QueueMem, NapiOwner<'_>),
    foreign: impl FnOnce(&mut Test, &QueueMem, NapiOwner<'_>),
) {
    let Some(pair) = super::test_pair(test, 122, 2, 2) else {
        return;
    };
    let dev = pair.dev(0);
    let data = NicPriv::for_test(&pair, 0);
    let lock = dev.lock_ops();
    kunit_expect!(test, dev.open(&lock).is_ok());
    match Nic::queue_mem_alloc(dev, &data, &PAGE_CFG, 0) {
        Ok(mem) => {
            let rxqs = &pair.state().side(0).rxqs;
            rxqs[0]
                .napi
                .with_state(|_, off| check(test, dev, &mem, off.owner()));
            rxqs[1]
                .napi
                .with_state(|_, off| foreign(test, &mem, off.owner()));
        }
        Err(e) => test.fail(format_args!("queue_mem_alloc failed: {:?}", e)),
    }
    kunit_expect!(test, dev.close(&lock).is_ok());
}

fn frame_bounds(test: &mut Test) {
    with_queue_mem(
        test,
        |test, _, mem, own| check_bounds(test, mem, own),
        |_, _, _| {},
    );
}

/// An skb head must leave room for `skb_shared_info`; a head shorter than
/// an Ethernet header never goes up; a pool gives buffers only to its own
/// NAPI. Every buffer goes back before the pools do.
fn skb_head_bounds(test: &mut Test) {
    let size = build_size(100);
    let own_napi_only = |test: &mut Test, mem: &QueueMem, other: NapiOwner<'_>| {
        // Another NAPI's owner gets nothing from this queue's pools.
        let (host, payload) = mem.pools();
        kunit_expect!(test, host.alloc_netmem(other).is_none());
        kunit_expect!(test, host.alloc_frag(other, size).is_none());
        kunit_expect!(test, payload.alloc_netmem(other).is_none());
    };
    // (Heads are built as in a poll: with bottom halves off.)
    let heads = |test: &mut Test, dev: &NetDev, mem: &QueueMem, own: NapiOwner<'_>| {
        with_bh_disabled(|bh| build_heads(test, dev, mem, own, bh))
    };
    with_queue_mem(test, heads, own_napi_only);
}

/// The heads `skb_head_bounds` builds in `mem`'s host pool.
fn build_heads(test: &mut Test, dev: &NetDev, mem: &QueueMem, own: NapiOwner<'_>, bh: BhOff<'_>) {
    let size = build_size(100);
    let (host, _) = mem.pools();
    // A head whose frame would run into skb_shared_info is refused.
    let Some(frag) = host.alloc_frag(own, size) else {
        return test.fail(format_args!("no host fragment"));
    };
    kunit_expect!(
        test,
        SkBuff::build(bh, frag, rx_headroom(), size - rx_headroom()).is_err()
    );
    // 6 bytes of frame: built, but not a frame to hand up.
    let Some(frag) = host.alloc_frag(own, build_size(6)) else {
        return test.fail(format_args!("no host fragment"));
    };
    match SkBuff::build(bh, frag, rx_headroom(), 6) {
        Ok(mut skb) => kunit_expect!(test, skb.rx_finish(dev, 0, 0, false).is_err()),
        Err(e) => test.fail(format_args!("a 6-byte head refused: {:?}", e)),
    }
    // A whole Ethernet header is.
    let Some(frag) = host.alloc_frag(own, size) else {
        return test.fail(format_args!("no host fragment"));
    };
    match SkBuff::build(bh, frag, rx_headroom(), 100) {
        Ok(mut skb) => {
            kunit_expect!(test, skb.rx_finish(dev, 0, 0, false).is_ok());
            // eth_type_trans pulled the Ethernet header.
            kunit_expect_eq!(test, skb.len(), 86);
        }
        Err(e) => test.fail(format_args!("a 100-byte head refused: {:?}", e)),
    }
}

/// The checks of `frame_bounds` on the pools of `mem`.
fn check_bounds(test: &mut Test, mem: &QueueMem, own: NapiOwner<'_>) {
    let (host, payload) = mem.pools();
    let page = kernel::page::PAGE_SIZE;
    // Headroom for a 256-byte head growth plus the xdp_frame; the rest of the
    // first page minus skb_shared_info is frame; the MTU leaves L2 room.
    kunit_expect!(test, xdp_headroom() >= 256 + 40);
    kunit_expect!(test, xdp_first_page_capacity() + xdp_headroom() < page);
    kunit_expect_eq!(
        test,
        single_buffer_max_mtu() as usize + 18,
        xdp_first_page_capacity()
    );
    // One byte past the first page's room is refused (the page goes back).
    let Some(head) = host.alloc_netmem(own) else {
        return test.fail(format_args!("no host page"));
    };
    kunit_expect!(
        test,
        XdpFrame::new(host, head, xdp_first_page_capacity() + 1).is_err()
    );
    let Some(head) = host.alloc_netmem(own) else {
        return test.fail(format_args!("no host page"));
    };
    let mut frame = match XdpFrame::new(host, head, xdp_first_page_capacity()) {
        Ok(f) => f,
        Err(e) => return test.fail(format_args!("a full first page refused: {:?}", e)),
    };
    // A page of another pool is refused: the rxq info returns pages to this one.
    if let Some(other) = payload.alloc_netmem(own) {
        kunit_expect!(test, frame.push_frag(other, 100).is_err());
    }
    // Empty frags and lengths beyond a page are refused.
    if let Some(p) = host.alloc_netmem(own) {
        kunit_expect!(test, frame.push_frag(p, 0).is_err());
    }
    if let Some(p) = host.alloc_netmem(own) {
        kunit_expect!(test, frame.push_frag(p, page + 1).is_err());
    }
    // Exactly MAX_SKB_FRAGS frags fit.
    for i in 0..xdp_max_frags() {
        let Some(p) = host.alloc_netmem(own) else {
            return test.fail(format_args!("no host page for frag {}", i));
        };
        kunit_expect!(test, frame.push_frag(p, page).is_ok());
    }
    if let Some(p) = host.alloc_netmem(own) {
        kunit_expect!(test, frame.push_frag(p, 1).is_err());
    }
    // Dropped unrun, the frame gives its pages back before the pools go.
    drop(frame);
}

kunit_suite!(xdp_suite, "devmemnic_xdp", [frame_bounds, skb_head_bounds]);
