// SPDX-License-Identifier: GPL-2.0

//! The device type: its `net_device_ops` (open, stop, transmit, MTU, link
//! counters) and the set of ops tables every devmemnic device gets.

use super::{
    nic::{Nic, NicPriv},
    queues, stacked, stats, tx, xdp,
};
use crate::abstractions::{
    ethtool::Extack,
    netdev::NetDev,
    netdev_ops::{LinkStats, NetDevOps, TxOutcome, Vtables},
    skb::SkBuff,
    xdp::{XdpProg, XdpXmitBatch},
};
use kernel::prelude::*;

/// What every devmemnic device offers: ethtool, qstats and the queue-management
/// API (which makes it a devmem- and zcrx-capable, ops-locked device).
pub(crate) const VTABLES: Vtables<Nic> = Vtables::new().ethtool().qstats().queue_mgmt();

#[vtable]
impl NetDevOps for Nic {
    type Priv = NicPriv;

    fn open(dev: &NetDev, data: &NicPriv) -> Result {
        if let Err(e) = queues::start_all(dev, data) {
            queues::stop_all(dev, data);
            return Err(e);
        }
        dev.tx_start_all();
        if let Some(st) = data.stacked() {
            stacked::open(dev, st);
        }
        // The core sets the running flag after `ndo_open` returns: decide on the
        // peer's state alone here.
        if let Some(peer) = dev.peer() {
            if peer.is_running() {
                dev.carrier_on();
                peer.carrier_on();
            }
        }
        Ok(())
    }

    fn stop(dev: &NetDev, data: &NicPriv) -> Result {
        dev.carrier_off();
        if let Some(peer) = dev.peer() {
            peer.carrier_off();
        }
        if let Some(st) = data.stacked() {
            stacked::stop(dev, st);
        }
        dev.tx_stop_all();
        queues::stop_all(dev, data);
        Ok(())
    }

    fn start_xmit(dev: &NetDev, data: &NicPriv, skb: SkBuff) -> TxOutcome {
        match data.stacked() {
            Some(st) => stacked::transmit(dev, st, skb),
            None => tx::transmit(dev, data, skb),
        }
    }

    fn get_stats64(_dev: &NetDev, data: &NicPriv) -> LinkStats {
        stats::link_stats(data)
    }

    fn change_mtu(dev: &NetDev, data: &NicPriv, mtu: u32) -> Result {
        // The core checked min/max; buffers are page chunks, so any MTU fits,
        // but a single-buffer XDP program sees one page.
        if !xdp::mtu_allowed(data, mtu) {
            return Err(EINVAL);
        }
        // A stacked device's frames must fit its lower device.
        if let Some(st) = data.stacked() {
            if !stacked::mtu_allowed(st, mtu) {
                return Err(EINVAL);
            }
        }
        dev.set_mtu_field(mtu);
        Ok(())
    }

    fn get_iflink(dev: &NetDev, data: &NicPriv) -> i32 {
        data.stacked()
            .map_or_else(|| dev.ifindex(), |st| stacked::iflink(dev, st))
    }

    fn xdp_setup(
        dev: &NetDev,
        data: &NicPriv,
        prog: Option<XdpProg>,
        extack: &Extack,
    ) -> core::result::Result<(), (Error, Option<XdpProg>)> {
        xdp::setup(dev, data, prog, extack)
    }

    fn xdp_xmit(dev: &NetDev, data: &NicPriv, frames: &mut XdpXmitBatch<'_>) {
        xdp::xdp_redirected(dev, data, frames)
    }
}
