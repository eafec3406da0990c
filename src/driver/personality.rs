// SPDX-License-Identifier: GPL-2.0

//! Choosing the NIC a device behaves like: the module's `personality=` for
//! every device at creation, and per device an ethtool private flag,
//! `personality-<name>` (`ethtool --set-priv-flags dmnic1 personality-gve on`).
//!
//! Private flags, not a devlink parameter: they reach every device on every
//! kernel through the tool devmem users already run, with no devlink
//! instance to create per parent, and they are how drivers switch RX modes
//! that reshape the datapath (mlx5's `rx_striding_rq`). A change needs the
//! device down (its queues are rebuilt on open) and nothing on it a
//! personality limits: no memory provider bound, no ntuple rule, no RSS
//! context. It resets what the personality sets on a new device: TCP data
//! split, the header-split threshold, ring sizes.

use super::nic::{NicPriv, Side};
use crate::abstractions::netdev::NetDev;
use crate::logic::personality::{Errno, Personality};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// The private flags of a device: its personality's bit.
pub(crate) fn flags(side: &Side) -> u32 {
    1 << side.personality().index()
}

/// Applies a private-flags request (see the module doc).
pub(crate) fn set_flags(dev: &NetDev, data: &NicPriv, flags: u32) -> Result {
    let me = data.me();
    let current = me.personality();
    let Some(next) = Personality::from_flags(flags, current) else {
        pr_info!("set exactly one personality-* private flag\n");
        return Err(EINVAL);
    };
    if next == current {
        return Ok(());
    }
    if dev.is_running() {
        pr_info!("a personality changes only while the device is down\n");
        return Err(EBUSY);
    }
    let bound = (0..dev.num_rx_queues()).any(|i| dev.rxq_has_provider(i));
    let steered = me.steering.read(|s| s.nrules > 0 || s.contexts_used != 0);
    if bound || steered {
        pr_info!("unbind memory providers and delete ntuple rules and RSS contexts before changing the personality\n");
        return Err(EBUSY);
    }
    let p = next.profile();
    // Rings first: the one step that can fail (memory), before anything
    // else changed. The device is down, so the rings are empty.
    me.resize_rx_rings(p.ring_default)?;
    me.tx_ring.store(p.ring_default, Ordering::Relaxed);
    let thresh = p.hds_thresh_default();
    me.rxqs.iter().for_each(|q| q.set_hds_thresh(thresh));
    dev.reset_core_hds(thresh);
    me.header_split.store(p.split_default, Ordering::Relaxed);
    me.personality.store(next.index() as u8, Ordering::Relaxed);
    pr_info!("personality {}\n", next.name());
    Ok(())
}

/// The error of an errno a profile names.
pub(crate) fn error(errno: Errno) -> Error {
    Error::from_errno(-errno)
}
