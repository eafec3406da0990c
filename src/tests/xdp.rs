// SPDX-License-Identifier: GPL-2.0

//! KUnit: the bounds of a frame built for an XDP program (what its first
//! page holds, how many frags it takes, from which pool), on the host pool
//! of a queue of the module's own devices.

use crate::abstractions::kunit::Test;
use crate::abstractions::queue_mgmt::{QueueConfig, QueueMgmt};
use crate::abstractions::xdp::{xdp_first_page_capacity, xdp_headroom, xdp_max_frags, XdpFrame};
use crate::driver::device::Nic;
use crate::driver::pair::NicPriv;
use crate::driver::rx::QueueMem;
use crate::driver::xdp::single_buffer_max_mtu;

const PAGE_CFG: QueueConfig = QueueConfig::page_sized();

fn frame_bounds(test: &mut Test) {
    // Pair 122: `dmnic244`/`dmnic245`.
    let Some(pair) = super::test_pair(test, 122, 2, 2) else {
        return;
    };
    let dev = pair.dev(0);
    let data = NicPriv::for_test(&pair, 0);
    let lock = dev.lock_ops();
    kunit_expect!(test, dev.open(&lock).is_ok());
    match Nic::queue_mem_alloc(dev, &data, &PAGE_CFG, 0) {
        Ok(mem) => check_bounds(test, &mem),
        Err(e) => test.fail(format_args!("queue_mem_alloc failed: {:?}", e)),
    }
    kunit_expect!(test, dev.close(&lock).is_ok());
}

/// The checks of `frame_bounds` on the pools of `mem`.
fn check_bounds(test: &mut Test, mem: &QueueMem) {
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
    let Some(head) = host.alloc_netmem() else {
        return test.fail(format_args!("no host page"));
    };
    kunit_expect!(
        test,
        XdpFrame::new(host, head, xdp_first_page_capacity() + 1).is_err()
    );
    let Some(head) = host.alloc_netmem() else {
        return test.fail(format_args!("no host page"));
    };
    let mut frame = match XdpFrame::new(host, head, xdp_first_page_capacity()) {
        Ok(f) => f,
        Err(e) => return test.fail(format_args!("a full first page refused: {:?}", e)),
    };
    // A page of another pool is refused: the rxq info returns pages to this one.
    if let Some(other) = payload.alloc_netmem() {
        kunit_expect!(test, frame.push_frag(other, 100).is_err());
    }
    // Empty frags and lengths beyond a page are refused.
    if let Some(p) = host.alloc_netmem() {
        kunit_expect!(test, frame.push_frag(p, 0).is_err());
    }
    if let Some(p) = host.alloc_netmem() {
        kunit_expect!(test, frame.push_frag(p, page + 1).is_err());
    }
    // Exactly MAX_SKB_FRAGS frags fit.
    for i in 0..xdp_max_frags() {
        let Some(p) = host.alloc_netmem() else {
            return test.fail(format_args!("no host page for frag {}", i));
        };
        kunit_expect!(test, frame.push_frag(p, page).is_ok());
    }
    if let Some(p) = host.alloc_netmem() {
        kunit_expect!(test, frame.push_frag(p, 1).is_err());
    }
    // Dropped unrun, the frame gives its pages back before the pools go.
    drop(frame);
}

kunit_suite!(xdp_suite, "devmemnic_xdp", [frame_bounds]);
