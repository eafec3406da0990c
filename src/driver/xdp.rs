// SPDX-License-Identifier: GPL-2.0

//! Native XDP: attaching a program (`ndo_bpf`) and what it asks of the MTU.
//!
//! A program sees each frame as the wire carries it, in host pages of the
//! queue's header pool: up to [`xdp_first_page_capacity`] bytes in the first
//! page, the rest (multi-buffer programs only) in whole pages as frags. The
//! receive side is in `rx_xdp.rs`; the sender does in software what it would
//! leave to the device (TSO, checksums) for a peer running XDP (`tx.rs`).

use super::nic::NicPriv;
use crate::abstractions::{
    ethtool::Extack,
    netdev::NetDev,
    xdp::{xdp_first_page_capacity, XdpProg},
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
