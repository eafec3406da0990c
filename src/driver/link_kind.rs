// SPDX-License-Identifier: GPL-2.0

//! The `devmemnic` link kind: what `ip link add` makes. With `link DEV`, a
//! device stacked on DEV (`stacked.rs`); without, a pair, as veth makes
//! them (`pair.rs`): `ip link add dmnic4 type devmemnic` makes dmnic4 and a
//! peer named `dmnic%d` (or as `IFLA_DEVMEMNIC_PEER` names it: tools/link),
//! deleted together.

use super::{
    device::VTABLES,
    nic::{Nic, NicPriv},
    pair, stacked,
};
use crate::abstractions::{
    ethtool::Extack,
    link::{LinkKind, LowerDev, LowerEvent, NewLink, NewLinkSetup, Rtnl},
    netdev::NetDev,
    netdev_ops::Vtables,
    platform::PlatformDevice,
    skb::SkBuff,
};
use kernel::{c_str, prelude::*, str::CStr};

#[vtable]
impl LinkKind for Nic {
    const KIND: &'static CStr = c_str!("devmemnic");
    const VTABLES: Vtables<Nic> = VTABLES;
    const PEER_PATTERN: Option<&'static CStr> = Some(c_str!("dmnic%d"));

    fn newlink<'a>(new: &'a NewLink<'a>, extack: &Extack) -> Result<NewLinkSetup<'a, Self>> {
        match new.lower() {
            Some(lower) => stacked::newlink(new, lower, extack),
            None => pair::newlink(new, extack),
        }
    }

    fn parent(data: &NicPriv) -> &PlatformDevice {
        &data.me().parent
    }

    fn registered(
        dev: &NetDev,
        data: &NicPriv,
        lower: Option<&LowerDev>,
        rtnl: &Rtnl,
        extack: &Extack,
    ) -> Result {
        match (data.stacked(), lower) {
            (Some(st), Some(lower)) => stacked::registered(dev, st, lower, rtnl, extack),
            (None, None) => {
                // A pair's device: no carrier until both are up (see `open`).
                dev.carrier_off();
                Ok(())
            }
            _ => Err(EINVAL),
        }
    }

    fn dellink(dev: &NetDev, data: &NicPriv, rtnl: &Rtnl) {
        if let Some(st) = data.stacked() {
            stacked::dellink(dev, st, rtnl);
        }
    }

    fn lower_event(
        lower: &LowerDev,
        upper: Option<(&NetDev, &NicPriv)>,
        event: LowerEvent,
        rtnl: &Rtnl,
    ) {
        match upper {
            Some((dev, data)) => {
                if let Some(st) = data.stacked() {
                    stacked::lower_event(lower, Some((dev, st)), event, rtnl);
                }
            }
            None => stacked::lower_event(lower, None, event, rtnl),
        }
    }

    fn receive(dev: &NetDev, data: &NicPriv, skb: SkBuff) {
        if let Some(st) = data.stacked() {
            stacked::receive(dev, st, skb);
        }
    }
}
