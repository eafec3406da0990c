// SPDX-License-Identifier: GPL-2.0

//! A devmemnic device stacked on an Ethernet device (`ip link add dmn0 link
//! eth0 type devmemnic`): a NIC whose wire is the lower device.
//!
//! Receive: the lower device's frames for this device's address (and a copy
//! of each broadcast and multicast one) are steered to an RX queue's ring
//! as a pair's frames are, and that queue's NAPI receives them the same way
//! (`rx/`: header split, page pools, dma-bufs, XDP). Transmit: frames go
//! out of the lower device as ordinary frames, a devmem TX frame's payload
//! read from its dma-buf into host pages first (the lower NIC cannot read
//! device memory); the core segments and checksums them for the lower
//! device's features.
//!
//! The lower device going down takes the carrier away; its MTU caps this
//! device's; its unregistration detaches this device, which stays (no
//! carrier, bindings kept) and takes the next device registered under the
//! same name in the netns.

use super::nic::{
    enqueue, link_config, link_shape, new_side, steer, Nic, NicPriv, Stacked, MAX_MTU, MIN_MTU,
};
use crate::abstractions::{
    ethtool::Extack,
    link::{
        for_each_device, LowerDev, LowerEvent, LowerLink, NewLink, NewLinkSetup, Rtnl, XmitError,
    },
    netdev::NetDev,
    netdev_ops::TxOutcome,
    platform::{PlatformDevice, PLATFORM_DEVID_AUTO},
    skb::SkBuff,
};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{c_str, prelude::*, sync::Arc};

/// Sets up a device stacked on `lower` (`ip link add NAME link LOWER type
/// devmemnic`).
pub(crate) fn newlink<'a>(
    new: &'a NewLink<'a>,
    lower: &LowerDev,
    extack: &Extack,
) -> Result<NewLinkSetup<'a, Nic>> {
    lower.check(extack)?;
    if new.mtu_given() {
        if new.mtu() > lower.mtu() {
            extack.msg(c_str!("devmemnic: MTU above the lower device's"));
            return Err(EINVAL);
        }
    } else {
        new.set_mtu(lower.mtu().clamp(MIN_MTU, MAX_MTU));
    }
    let (tx_queues, rx_queues) = new.queue_counts();
    let shape = link_shape(tx_queues.min(rx_queues));
    let parent = PlatformDevice::register(c_str!("devmemnic"), PLATFORM_DEVID_AUTO, 64)?;
    let lower_name = lower.ifname();
    let st = Arc::pin_init(
        try_pin_init!(Stacked {
            side <- new_side(parent, new.name(), &shape)?,
            lower: LowerLink::new(),
            lower_name <- kernel::new_mutex!(lower_name),
            registered: AtomicBool::new(false),
        }? Error),
        GFP_KERNEL,
    )?;
    let data = Arc::new(NicPriv::Stacked(st), GFP_KERNEL)?;
    Ok(NewLinkSetup {
        cfg: link_config(new, &shape),
        data,
        hds_thresh: shape.personality.profile().hds_thresh_default(),
        peer: None,
    })
}

/// The stacked device is registered: takes its lower device.
pub(crate) fn registered(
    dev: &NetDev,
    st: &Stacked,
    lower: &LowerDev,
    rtnl: &Rtnl,
    extack: &Extack,
) -> Result {
    st.registered.store(true, Ordering::Relaxed);
    // No carrier until it is up on a lower device with one.
    dev.carrier_off();
    st.lower.attach(rtnl, dev, lower, extack)
}

/// `ip link del`: lets the lower device go.
pub(crate) fn dellink(dev: &NetDev, st: &Stacked, rtnl: &Rtnl) {
    st.lower.detach(rtnl, dev);
}

/// `event` happened to `lower`, which carries `upper` or nothing.
pub(crate) fn lower_event(
    lower: &LowerDev,
    upper: Option<(&NetDev, &Stacked)>,
    event: LowerEvent,
    rtnl: &Rtnl,
) {
    let Some((dev, st)) = upper else {
        if event == LowerEvent::Registered {
            take_returning(lower, rtnl);
        }
        return;
    };
    match event {
        LowerEvent::Unregistering => {
            st.lower.detach(rtnl, dev);
            dev.carrier_off();
            pr_info!(
                "{}: lower device {} gone; waiting for it to return\n",
                dev.name(),
                lower.name()
            );
        }
        LowerEvent::State => st.lower.sync_carrier(rtnl, dev),
        LowerEvent::Mtu => cap_mtu(dev, lower, rtnl),
        LowerEvent::Registered => {}
    }
}

/// Lowers `dev`'s MTU to its lower device's if above it.
fn cap_mtu(dev: &NetDev, lower: &LowerDev, rtnl: &Rtnl) {
    if dev.mtu() > lower.mtu() && dev.set_mtu(rtnl, lower.mtu().max(MIN_MTU)).is_err() {
        pr_warn!(
            "{}: cannot follow {}'s MTU {}\n",
            dev.name(),
            lower.name(),
            lower.mtu()
        );
    }
}

/// Takes `lower`, just registered, as the lower device of every detached
/// stacked device of its netns that rode on a device of its name.
fn take_returning(lower: &LowerDev, rtnl: &Rtnl) {
    for_each_device::<Nic, _>(lower, rtnl, |dev, data| {
        let Some(st) = data.stacked() else { return };
        if st.lower.is_attached() || *st.lower_name.lock() != lower.ifname() {
            return;
        }
        if let Err(e) = st.lower.attach(rtnl, dev, lower, &Extack::none()) {
            pr_warn!(
                "{}: cannot take {} back ({:?})\n",
                dev.name(),
                lower.name(),
                e
            );
            return;
        }
        cap_mtu(dev, lower, rtnl);
        if dev.is_running() {
            st.lower.listen(rtnl, dev, true);
        }
        st.lower.sync_carrier(rtnl, dev);
        pr_info!("{}: lower device {} is back\n", dev.name(), lower.name());
    });
}

/// `ndo_open`'s part for a stacked device: its address on the lower
/// device's filter, the carrier if the lower device has one (the core marks
/// the device running only after `ndo_open`).
pub(crate) fn open(dev: &NetDev, st: &Stacked) {
    if let Some(rtnl) = Rtnl::held() {
        st.lower.listen(&rtnl, dev, true);
    }
    if st.lower.with(LowerDev::has_carrier) == Some(true) {
        dev.carrier_on();
    }
}

/// `ndo_stop`'s part: the address off the lower device's filter.
pub(crate) fn stop(dev: &NetDev, st: &Stacked) {
    if let Some(rtnl) = Rtnl::held() {
        st.lower.listen(&rtnl, dev, false);
    }
}

/// Whether `mtu` fits the lower device (any does while detached).
pub(crate) fn mtu_allowed(st: &Stacked, mtu: u32) -> bool {
    st.lower.with(|l| mtu <= l.mtu()).unwrap_or(true)
}

/// The lower device's interface index (`ip link` shows `dmn0@eth0`), or
/// the device's own while detached.
pub(crate) fn iflink(dev: &NetDev, st: &Stacked) -> i32 {
    st.lower
        .with(LowerDev::ifindex)
        .unwrap_or_else(|| dev.ifindex())
}

/// A frame from the lower device: onto the ring of the RX queue this
/// device's steering picks (ntuple rule, else RSS), or dropped and counted
/// when that ring is full, as a NIC drops what its RX ring cannot hold.
///
/// With an XDP program attached, the program sees wire frames: a frame a
/// software sender left work on (a veth peer's TSO super-frame or partial
/// checksum, or one the lower device's GRO merged) is segmented and summed
/// first, as the sender's NIC would have before the wire; else an XDP_TX
/// echo would leave with the sender's partial sum.
pub(crate) fn receive(dev: &NetDev, st: &Stacked, skb: SkBuff) {
    if !st.side.xdp.is_attached() || !skb.offloads_pending() {
        return receive_one(dev, st, skb);
    }
    let Some(frames) = skb.offloads_in_software() else {
        dev.core_rx_dropped_inc();
        return;
    };
    for frame in frames {
        receive_one(dev, st, frame);
    }
}

/// One wire frame from the lower device onto its RX queue's ring.
fn receive_one(dev: &NetDev, st: &Stacked, mut skb: SkBuff) {
    let active = dev.real_num_rx_queues();
    if !dev.is_running() || active == 0 {
        return;
    }
    let Some((q, hash, l4)) = steer(dev, dev, &st.side, &skb, active) else {
        return;
    };
    if hash != 0 {
        skb.set_hash(hash, l4);
    }
    if let Err(skb) = enqueue(q, skb) {
        drop(skb);
        q.stats.drops.add_shared(1);
    }
}

/// `ndo_start_xmit` of a stacked device: out of the lower device.
pub(crate) fn transmit(dev: &NetDev, st: &Stacked, skb: SkBuff) -> TxOutcome {
    let Some(tq) = st.side.txqs.get(usize::from(skb.queue_mapping())) else {
        return TxOutcome::Done;
    };
    let len = skb.len() as u64;
    let segments = skb.segments();
    let from_device_memory = !skb.frags_readable();
    let sent = if from_device_memory {
        // The "DMA" read of a devmem TX payload: into host pages, which the
        // lower device can send; the dma-buf's buffers complete as the
        // original goes.
        match skb.copy_to_host(dev) {
            Ok(copy) => {
                drop(skb);
                st.lower.xmit(copy)
            }
            Err(_) => Err(XmitError::Dropped),
        }
    } else {
        st.lower.xmit(skb)
    };
    match sent {
        Ok(()) => tq.count_sent(len, segments, from_device_memory),
        Err(_) => tq.stats.dropped.add(1),
    }
    TxOutcome::Done
}
