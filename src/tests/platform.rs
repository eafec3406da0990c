// SPDX-License-Identifier: GPL-2.0

//! KUnit: the parent device, the NIC's "DMA" through bus addresses (inside
//! the buffer it is given, never past it), and its reading of the frames it
//! sends.

use crate::abstractions::dma::{DeviceBytes, DmaSource, PageMapping};
use crate::abstractions::kunit::Test;
use crate::abstractions::platform::PlatformDevice;
use crate::abstractions::skb::{FrameReader, SkBuff};
use kernel::{c_str, page::Page, prelude::*};

/// A parent device with an id no module load uses.
fn test_device(test: &mut Test) -> Option<PlatformDevice> {
    match PlatformDevice::register(c_str!("devmemnic-kunit"), 1000, 64) {
        Ok(dev) => Some(dev),
        Err(e) => {
            test.fail(format_args!("registering the device failed: {:?}", e));
            None
        }
    }
}

fn parent_has_64bit_dma_mask(test: &mut Test) {
    if let Some(dev) = test_device(test) {
        kunit_expect_eq!(test, dev.dma_mask(), u64::MAX);
        kunit_expect_eq!(test, dev.id(), 1000);
    }
    kunit_expect!(
        test,
        PlatformDevice::register(c_str!("devmemnic-kunit"), 1001, 16).is_err()
    );
}

fn device_write_lands_in_mapped_page(test: &mut Test) {
    let Some(dev) = test_device(test) else { return };
    let Ok(page) = Page::alloc_page(GFP_KERNEL | __GFP_ZERO) else {
        return test.fail(format_args!("no page"));
    };
    let mapping = match PageMapping::new(&dev, page) {
        Ok(m) => m,
        Err(e) => return test.fail(format_args!("dma map failed: {:?}", e)),
    };
    let data = *b"devmemnic dma write";
    kunit_expect!(test, mapping.device_write(100, 19, &mut &data[..]).is_ok());
    let mut back = [0u8; 19];
    kunit_expect!(test, mapping.read(100, &mut back).is_ok());
    kunit_expect_eq!(test, back, data);
    // The bytes before the written range were not touched.
    let mut before = [0xffu8; 100];
    kunit_expect!(test, mapping.read(0, &mut before).is_ok());
    // Reads past the page are refused.
    kunit_expect_eq!(
        test,
        mapping.read(kernel::page::PAGE_SIZE - 4, &mut before),
        Err(EINVAL)
    );
    kunit_expect!(test, before.iter().all(|&b| b == 0));
}

fn device_write_stays_inside_its_buffer(test: &mut Test) {
    let Some(dev) = test_device(test) else { return };
    let Ok(page) = Page::alloc_page(GFP_KERNEL | __GFP_ZERO) else {
        return test.fail(format_args!("no page"));
    };
    let Ok(mapping) = PageMapping::new(&dev, page) else {
        return test.fail(format_args!("dma map failed"));
    };
    let data = [0x5au8; 64];
    let last = kernel::page::PAGE_SIZE - 32;
    // Past the buffer: refused before any byte moves.
    kunit_expect_eq!(
        test,
        mapping.device_write(last, 64, &mut &data[..]),
        Err(EINVAL)
    );
    kunit_expect_eq!(
        test,
        mapping.device_write(usize::MAX, 2, &mut &data[..]),
        Err(EINVAL)
    );
    let mut tail = [0xffu8; 32];
    kunit_expect!(test, mapping.read(last, &mut tail).is_ok());
    kunit_expect!(test, tail.iter().all(|&b| b == 0));
    // A source shorter than the write is an error too, not stale bytes.
    kunit_expect_eq!(
        test,
        mapping.device_write(0, 65, &mut &data[..]),
        Err(EINVAL)
    );
    kunit_expect!(
        test,
        mapping.device_write(last, 32, &mut &data[..32]).is_ok()
    );
    kunit_expect!(test, mapping.read(last, &mut tail).is_ok());
    kunit_expect!(test, tail.iter().all(|&b| b == 0x5a));
}

fn device_bytes_copy_within_bounds(test: &mut Test) {
    let mut a = [1u8; 16];
    let mut b = [2u8; 8];
    let mut dst = DeviceBytes::from_slice(&mut a);
    let src = DeviceBytes::from_slice(&mut b);
    kunit_expect!(test, dst.copy_from(8, &src).is_ok());
    kunit_expect_eq!(test, dst.copy_from(9, &src), Err(EINVAL));
    kunit_expect_eq!(test, dst.write(16, b"x"), Err(EINVAL));
    kunit_expect!(test, dst.window(4, 13).is_err());
    let mut out = [0u8; 4];
    kunit_expect!(test, dst.read(6, &mut out).is_ok());
    kunit_expect_eq!(test, out, [1, 1, 2, 2]);
    // A slice source advances as it fills.
    let mut s: &[u8] = b"abcdef";
    let mut c = [0u8; 4];
    kunit_expect!(test, s.fill(&mut DeviceBytes::from_slice(&mut c)).is_ok());
    kunit_expect_eq!(test, s, b"ef");
    kunit_expect_eq!(
        test,
        s.fill(&mut DeviceBytes::from_slice(&mut c)),
        Err(EINVAL)
    );
}

fn device_read_sees_what_was_written(test: &mut Test) {
    let Some(dev) = test_device(test) else { return };
    let Ok(page) = Page::alloc_page(GFP_KERNEL | __GFP_ZERO) else {
        return test.fail(format_args!("no page"));
    };
    let Ok(mapping) = PageMapping::new(&dev, page) else {
        return test.fail(format_args!("dma map failed"));
    };
    let data = *b"read back by bus address";
    let at = kernel::page::PAGE_SIZE - data.len();
    kunit_expect!(
        test,
        mapping.device_write(at, data.len(), &mut &data[..]).is_ok()
    );
    let mut back = [0u8; 24];
    kunit_expect!(test, mapping.device_read(at, &mut back).is_ok());
    kunit_expect_eq!(test, back, data);
    // Past the page: refused, not read.
    kunit_expect_eq!(test, mapping.device_read(at + 1, &mut back), Err(EINVAL));
}

/// Byte `k` of the frames `SkBuff::test_frame_with_frags` makes.
fn frame_byte(k: usize) -> u8 {
    (k * 7 % 251) as u8
}

fn frame_reader_walks_head_and_frags_in_order(test: &mut Test) {
    // 66 header bytes, then five 3000-byte frags: 15066 bytes.
    let Ok(skb) = SkBuff::test_frame_with_frags(66, 5, 3000) else {
        return test.fail(format_args!("no test frame"));
    };
    kunit_expect_eq!(test, skb.len(), 15066);
    let mut page = [0u8; 4096];
    // As the receive path reads it: from the payload's start, a page at a
    // time, across frag boundaries.
    let Ok(mut r) = FrameReader::new(&skb, None, 66) else {
        return test.fail(format_args!("no reader"));
    };
    let mut pos = 66;
    let mut wrong = 0;
    while pos < 15066 {
        let n = (15066 - pos).min(page.len());
        kunit_expect!(test, r.read(&mut page[..n]).is_ok());
        wrong += (0..n).filter(|&i| page[i] != frame_byte(pos + i)).count();
        pos += n;
    }
    kunit_expect_eq!(test, wrong, 0);
    // At the end: one byte more is refused.
    kunit_expect_eq!(test, r.read(&mut page[..1]), Err(EINVAL));
    // From inside the head into the second frag, and from inside a frag.
    let mut some = [0u8; 3100];
    kunit_expect!(test, skb.read_as_device(None, 40, &mut some).is_ok());
    kunit_expect!(test, (0..some.len()).all(|i| some[i] == frame_byte(40 + i)));
    kunit_expect!(test, skb.read_as_device(None, 9000, &mut some[..7]).is_ok());
    kunit_expect!(test, (0..7).all(|i| some[i] == frame_byte(9000 + i)));
    // Past the end: refused.
    kunit_expect_eq!(
        test,
        skb.read_as_device(None, 15060, &mut some[..7]),
        Err(EINVAL)
    );
    kunit_expect!(test, FrameReader::new(&skb, None, 15067).is_err());
}

kunit_suite!(
    platform_suite,
    "devmemnic_platform_dma",
    [
        parent_has_64bit_dma_mask,
        device_write_lands_in_mapped_page,
        device_write_stays_inside_its_buffer,
        device_bytes_copy_within_bounds,
        device_read_sees_what_was_written,
        frame_reader_walks_head_and_frags_in_order,
    ]
);
