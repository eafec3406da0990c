// SPDX-License-Identifier: GPL-2.0

//! Native XDP: attaching a program (`ndo_bpf`), what it asks of the MTU, and
//! the frames programs send out (`XDP_TX`, `ndo_xdp_xmit`).
//!
//! A program sees each frame as the wire carries it, in host pages of the
//! queue's header pool: up to [`xdp_first_page_capacity`] bytes in the first
//! page, the rest (multi-buffer programs only) in whole pages as frags. The
//! receive side is in `rx/xdp.rs`; the sender does in software what it would
//! leave to the device (TSO, checksums) for a peer running XDP (`tx.rs`).

use super::nic::{enqueue, steer, NicPriv};
use crate::abstractions::{
    ethtool::Extack,
    netdev::NetDev,
    skb::SkBuff,
    xdp::{xdp_first_page_capacity, XdpProg, XdpXmitBatch},
};
use kernel::{c_str, prelude::*};

/// Ethernet header plus one VLAN tag: the frame bytes beyond the MTU.
const L2_OVERHEAD: usize = 18;

/// The largest MTU whose frames fit a single-buffer program's one page.
pub(crate) fn single_buffer_max_mtu() -> u32 {
    (xdp_first_page_capacity() - L2_OVERHEAD) as u32
}

/// Attaches (or with `None` detaches) the device's program.
pub(crate) fn setup(
    dev: &NetDev,
    data: &NicPriv,
    prog: Option<XdpProg>,
    extack: &Extack,
) -> core::result::Result<(), (Error, Option<XdpProg>)> {
    if let Some(p) = &prog {
        if !p.has_frags() && dev.mtu() > single_buffer_max_mtu() {
            extack.msg(c_str!(
                "MTU too large for single-buffer XDP: lower it or load an xdp.frags program"
            ));
            return Err((EINVAL, prog));
        }
        // (7.2's core refuses this itself; 6.12's does not.)
        if (0..dev.real_num_rx_queues()).any(|q| dev.rxq_has_provider(q)) {
            extack.msg(c_str!(
                "unable to attach XDP to a device with a memory provider"
            ));
            return Err((EBUSY, prog));
        }
    }
    drop(data.me().xdp.replace(prog));
    Ok(())
}

/// Whether `mtu` suits the attached program (any MTU without one).
pub(crate) fn mtu_allowed(data: &NicPriv, mtu: u32) -> bool {
    data.me().xdp.attached_has_frags() != Some(false) || mtu <= single_buffer_max_mtu()
}

/// The TX queue number XDP_TX frames carry: no TX queue of the stack's, so
/// the wire posts no completion for them.
const XDP_TX_QUEUE: u16 = u16::MAX;

/// XDP_TX: sends a frame a program turned around back out of `dev`, on the
/// channel's XDP TX ring (no descriptor of the stack's TX queues). Returns
/// whether the peer's RX ring took it.
pub(crate) fn xdp_transmit(dev: &NetDev, data: &NicPriv, mut skb: SkBuff) -> bool {
    if let Some(st) = data.stacked() {
        // A stacked device's: out of the lower device, if it takes it.
        return st.lower.xmit(skb).is_ok();
    }
    let (Some(peer), Some(target)) = (dev.peer(), data.peer()) else {
        return false;
    };
    let active = peer.real_num_rx_queues();
    if !peer.is_running() || !dev.carrier_ok() || active == 0 {
        return false;
    }
    let Some((q, hash, l4)) = steer(dev, peer, target, &skb, active) else {
        return false;
    };
    if hash != 0 {
        skb.set_hash(hash, l4);
    }
    skb.set_queue_mapping(XDP_TX_QUEUE);
    enqueue(q, skb).is_ok()
}

/// `ndo_xdp_xmit`: sends frames other programs redirected to `dev` (or its
/// own, redirected to itself) to the peer, as XDP_TX does, counted on the TX
/// queue of the sending CPU (several CPUs may send at once).
pub(crate) fn xdp_redirected(dev: &NetDev, data: &NicPriv, frames: &mut XdpXmitBatch<'_>) {
    let active = dev.real_num_tx_queues().max(1);
    let tq = data.me().txqs.get((frames.cpu() % active) as usize);
    for skb in frames {
        let bytes = skb.len() as u64;
        let sent = xdp_transmit(dev, data, skb);
        if let Some(tq) = tq {
            if sent {
                tq.stats.xdp_xmit.add_shared(1);
                tq.stats.xdp_xmit_bytes.add_shared(bytes);
            } else {
                tq.stats.xdp_xmit_errors.add_shared(1);
            }
        }
    }
}
