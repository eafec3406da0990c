// SPDX-License-Identifier: GPL-2.0

//! The receive path with an XDP program attached: the frame is "DMA"ed
//! into whole host pages of the queue's header pool (headroom first, the
//! rest as frags for a multi-buffer program), the program runs, and its
//! verdict is carried out: up the stack, back out to the peer, or the pages
//! straight back to the pool.

use super::{RxError, Wire};
use crate::abstractions::{
    napi::NapiCtx,
    xdp::{xdp_first_page_capacity, xdp_headroom, xdp_max_frags, XdpFrame, XdpProgRef, XdpVerdict},
};
use crate::driver::{
    nic::{Nic, QueueMem, RxQueue},
    xdp::xdp_transmit,
};
use kernel::page::PAGE_SIZE;

impl RxQueue {
    /// Runs `prog` over one frame and carries out its verdict; returns
    /// whether it was redirected (the poll then flushes redirects). A frame
    /// the program cannot take (too long for its buffers, or a super-frame
    /// sent before the sender saw the program) is dropped and counted.
    pub(super) fn receive_xdp(
        &self,
        ctx: &NapiCtx<'_>,
        mem: &QueueMem,
        wire: &Wire<'_>,
        prog: &XdpProgRef<'_>,
    ) -> Result<bool, RxError> {
        let frame = wire.frame;
        let len = wire.len;
        let first = len.min(xdp_first_page_capacity());
        let rest = len - first;
        if frame.segments() > 1
            || (rest > 0 && !prog.has_frags())
            || rest.div_ceil(PAGE_SIZE) > xdp_max_frags()
        {
            self.stats.xdp_oversize.add(1);
            return Err(RxError::Fault);
        }
        let pool = &mem.header;
        let mut src = wire.reader(0)?;
        let mut head = pool.alloc_netmem(ctx.owner()).ok_or(RxError::NoBuffer)?;
        head.device_write(xdp_headroom(), first, &mut src)?;
        let mut buf = XdpFrame::new(pool, head, first)?;
        let mut left = rest;
        while left > 0 {
            let mut page = pool.alloc_netmem(ctx.owner()).ok_or(RxError::NoBuffer)?;
            let n = left.min(page.size());
            page.device_write(0, n, &mut src)?;
            buf.push_frag(page, n)?;
            left -= n;
        }
        let (hash, l4) = frame.hash();
        match buf.run(prog, &mem.xdp_rxq, hash, l4) {
            XdpVerdict::Pass(skb) => {
                self.stats.linear.add(1);
                self.deliver(ctx, skb, hash, l4);
            }
            XdpVerdict::Tx(skb) => {
                let bytes = skb.len() as u64;
                let sent = ctx
                    .dev()
                    .data::<Nic>()
                    .is_some_and(|d| xdp_transmit(ctx.dev(), d, skb));
                if sent {
                    self.stats.xdp_tx.add(1);
                    self.stats.xdp_tx_bytes.add(bytes);
                } else {
                    self.stats.xdp_tx_errors.add(1);
                }
            }
            XdpVerdict::Drop => self.stats.xdp_drop.add(1),
            XdpVerdict::Redirect => {
                self.stats.xdp_redirect.add(1);
                return Ok(true);
            }
            XdpVerdict::Exception => self.stats.xdp_exception.add(1),
        }
        Ok(false)
    }
}
