// SPDX-License-Identifier: GPL-2.0

//! KUnit: the parent device and the NIC's "DMA" through bus addresses, and
//! its reading of the frames it sends.

use crate::abstractions::dma::{device_read, device_write, DmaDev, PageMapping};
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
    kunit_expect!(
        test,
        device_write(DmaDev::of_platform(&dev), mapping.dma_addr() + 100, &data).is_ok()
    );
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

fn device_write_refuses_page_overrun(test: &mut Test) {
    let Some(dev) = test_device(test) else { return };
    let Ok(page) = Page::alloc_page(GFP_KERNEL) else {
        return test.fail(format_args!("no page"));
    };
    let Ok(mapping) = PageMapping::new(&dev, page) else {
        return test.fail(format_args!("dma map failed"));
    };
    let data = [0u8; 64];
    let last = mapping.dma_addr() + (kernel::page::PAGE_SIZE as u64) - 32;
    kunit_expect_eq!(
        test,
        device_write(DmaDev::of_platform(&dev), last, &data),
        Err(EFAULT)
    );
    kunit_expect!(
        test,
        device_write(DmaDev::of_platform(&dev), last, &data[..32]).is_ok()
    );
}

fn device_write_refuses_non_ram_address(test: &mut Test) {
    let Some(dev) = test_device(test) else { return };
    // Far above any RAM a test machine has: no valid pfn.
    kunit_expect_eq!(
        test,
        device_write(DmaDev::of_platform(&dev), 1u64 << 62, b"x"),
        Err(EFAULT)
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
    let dma = DmaDev::of_platform(&dev);
    let data = *b"read back by bus address";
    let at = mapping.dma_addr() + (kernel::page::PAGE_SIZE as u64) - data.len() as u64;
    kunit_expect!(test, device_write(dma, at, &data).is_ok());
    let mut back = [0u8; 24];
    kunit_expect!(test, device_read(dma, at, &mut back).is_ok());
    kunit_expect_eq!(test, back, data);
    // An address that names no RAM is refused, not read.
    kunit_expect_eq!(test, device_read(dma, 1u64 << 62, &mut back), Err(EFAULT));
}

/// Byte `k` of the frames `SkBuff::test_frame_with_frags` makes.
fn frame_byte(k: usize) -> u8 {
    (k * 7 % 251) as u8
}

fn frame_reader_walks_head_and_frags_in_order(test: &mut Test) {
    let Some(dev) = test_device(test) else { return };
    let dma = DmaDev::of_platform(&dev);
    // 66 header bytes, then five 3000-byte frags: 15066 bytes.
    let Ok(skb) = SkBuff::test_frame_with_frags(66, 5, 3000) else {
        return test.fail(format_args!("no test frame"));
    };
    kunit_expect_eq!(test, skb.len(), 15066);
    let mut page = [0u8; 4096];
    // As the receive path reads it: from the payload's start, a page at a
    // time, across frag boundaries.
    let Ok(mut r) = FrameReader::new(&skb, dma, 66) else {
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
    kunit_expect!(test, skb.read_as_device(dma, 40, &mut some).is_ok());
    kunit_expect!(test, (0..some.len()).all(|i| some[i] == frame_byte(40 + i)));
    kunit_expect!(test, skb.read_as_device(dma, 9000, &mut some[..7]).is_ok());
    kunit_expect!(test, (0..7).all(|i| some[i] == frame_byte(9000 + i)));
    // Past the end: refused.
    kunit_expect_eq!(
        test,
        skb.read_as_device(dma, 15060, &mut some[..7]),
        Err(EINVAL)
    );
    kunit_expect!(test, FrameReader::new(&skb, dma, 15067).is_err());
}

kunit_suite!(
    platform_suite,
    "devmemnic_platform_dma",
    [
        parent_has_64bit_dma_mask,
        device_write_lands_in_mapped_page,
        device_write_refuses_page_overrun,
        device_write_refuses_non_ram_address,
        device_read_sees_what_was_written,
        frame_reader_walks_head_and_frags_in_order,
    ]
);
