// SPDX-License-Identifier: GPL-2.0

//! A frame's bytes read in order, as a NIC's DMA engine reads a frame it
//! sends: host memory through the CPU, device-memory frags through their
//! bus address.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use super::{
    bindings,
    dma::{device_read, DeviceBytes, DmaAddr, DmaSource},
    netdev::NetDev,
    skb::SkBuff,
};
use kernel::prelude::*;

/// Reads a frame's bytes in order, from a start offset on, as the NIC's DMA
/// engine reads a frame it sends: host memory through the CPU, device-memory
/// frags (devmem TX) through their bus address on the sending device's
/// parent, where its TX bindings map them: only for a frame that device sent
/// (`skb->dev`), else `EFAULT`. Never touches unreadable memory through a
/// kernel address, and never makes a Rust reference to it.
///
/// It keeps its place among the frags, so reading a frame page by page walks
/// them once (`skb_copy_bits` from an offset starts over at the first frag).
///
/// # Invariants
///
/// `len`, `headlen` and `nr_frags` are `skb`'s length, linear length and
/// frag count (an skb being read does not change); `frag <= nr_frags`; when
/// `frag < nr_frags`, frag `frag` starts at frame offset `frag_start` and is
/// `frag_size` bytes long. `sender`, when set, is the device that sent
/// `skb` (its `skb->dev`), alive for `'a`.
pub(crate) struct FrameReader<'a> {
    skb: &'a SkBuff,
    sender: Option<&'a NetDev>,
    readable: bool,
    len: usize,
    headlen: usize,
    nr_frags: u32,
    /// Frame offset of the next byte to read.
    pos: usize,
    frag: u32,
    frag_start: usize,
    frag_size: usize,
}

impl<'a> FrameReader<'a> {
    /// A reader of `skb` from frame offset `offset` on. `sender` is the device
    /// that sent it, whose TX bindings map its device-memory frags: a frame of
    /// another device (or none) reads only its host memory. `EINVAL` past the
    /// frame's end.
    pub(crate) fn new(skb: &'a SkBuff, sender: Option<&'a NetDev>, offset: usize) -> Result<Self> {
        let len = skb.len();
        if offset > len {
            return Err(EINVAL);
        }
        // INVARIANT: kept only if it is the skb's device.
        // SAFETY: the skb is valid; its device pointer is only compared.
        let sent_on = unsafe { bindings::dmn_skb_dev(skb.as_ptr()) };
        let sender = sender.filter(|d| core::ptr::eq(sent_on, d.as_raw()));
        let nr_frags = skb.nr_frags();
        let headlen = skb.headlen();
        let mut r = Self {
            skb,
            sender,
            readable: skb.frags_readable(),
            len,
            headlen,
            nr_frags,
            pos: offset,
            frag: 0,
            frag_start: headlen,
            frag_size: 0,
        };
        if nr_frags > 0 {
            // INVARIANT: frag 0 starts where the linear part ends.
            r.frag_size = r.size_of(0);
        }
        Ok(r)
    }

    /// Size of frag `i`, which must be below `nr_frags`.
    fn size_of(&self, i: u32) -> usize {
        debug_assert!(i < self.nr_frags);
        // SAFETY: the skb is valid and `i` is below its frag count.
        unsafe { bindings::dmn_skb_frag_size(self.skb.as_ptr(), i) as usize }
    }

    /// Reads the next `out.len()` bytes. `EINVAL` past the frame's end;
    /// `EFAULT` if a frag of an unreadable frame has no bus address or is not
    /// reachable as RAM, or its frags end before the frame does (a readable
    /// frame's frag list is read).
    pub(crate) fn read(&mut self, out: &mut [u8]) -> Result {
        self.fill(&mut DeviceBytes::from_slice(out))
    }
}

impl DmaSource for FrameReader<'_> {
    /// Copies the frame's next `out.len()` bytes (as [`FrameReader::read`]).
    fn fill(&mut self, out: &mut DeviceBytes<'_>) -> Result {
        let end = match self.pos.checked_add(out.len()) {
            Some(end) if end <= self.len => end,
            _ => return Err(EINVAL),
        };
        let raw = self.skb.as_ptr();
        let mut done = 0;
        if self.pos < self.headlen {
            let n = (self.headlen - self.pos).min(out.len());
            let mut dst = out.window(0, n)?;
            // SAFETY: the skb is valid; `pos + n` is inside its linear part, which
            // is host memory even in an unreadable skb; `dst` is writable for `n`
            // bytes.
            kernel::error::to_result(unsafe {
                bindings::skb_copy_bits(raw, self.pos as i32, dst.as_mut_ptr().cast(), n as i32)
            })?;
            done = n;
            self.pos += n;
        }
        while self.pos < end {
            while self.frag < self.nr_frags && self.pos >= self.frag_start + self.frag_size {
                self.frag_start += self.frag_size;
                self.frag += 1;
                if self.frag < self.nr_frags {
                    self.frag_size = self.size_of(self.frag);
                }
            }
            if self.frag == self.nr_frags {
                if !self.readable {
                    return Err(EFAULT);
                }
                // Past the frags: a frag list (what a lower device's GRO
                // chains), which the core's copy walks.
                let n = end - self.pos;
                let mut dst = out.window(done, n)?;
                // SAFETY: the skb is valid and host memory; `pos + n` is inside
                // it (checked at the top); `dst` is writable for `n` bytes.
                kernel::error::to_result(unsafe {
                    bindings::skb_copy_bits(raw, self.pos as i32, dst.as_mut_ptr().cast(), n as i32)
                })?;
                self.pos += n;
                break;
            }
            let in_frag = self.pos - self.frag_start;
            let n = (self.frag_size - in_frag).min(end - self.pos);
            let mut dst = out.window(done, n)?;
            if self.readable {
                // SAFETY: the skb is valid, `frag` is below its frag count and
                // host memory (the skb is readable), and holds `in_frag + n`
                // bytes; `dst` is writable for `n` bytes.
                unsafe {
                    bindings::dmn_skb_frag_copy(
                        raw,
                        self.frag,
                        in_frag as u32,
                        dst.as_mut_ptr().cast(),
                        n as u32,
                    )
                };
            } else {
                let sender = self.sender.ok_or(EFAULT)?;
                let mut addr: DmaAddr = 0;
                // SAFETY: the skb is valid, `frag` is below its frag count;
                // `addr` is writable.
                if !unsafe { bindings::dmn_skb_frag_net_iov_dma(raw, self.frag, &mut addr) } {
                    return Err(EFAULT);
                }
                // SAFETY: the frag's net_iov is mapped for the device's DMA on the
                // sender's parent (the core checks a TX binding belongs to the
                // device the frame is sent on, `skb->dev`, which `sender` is: type
                // invariant) until the send completes, which it has not (we hold
                // the skb); `in_frag + n` is inside the frag.
                unsafe { device_read(sender.dma_dev(), addr + in_frag as DmaAddr, &mut dst)? };
            }
            done += n;
            self.pos += n;
        }
        Ok(())
    }
}
