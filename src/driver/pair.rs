// SPDX-License-Identifier: GPL-2.0

//! The virtual NIC: a pair of multi-queue Ethernet devices wired back to back.
//!
//! A frame sent on one side (`tx.rs`) is steered to an RX queue of the other
//! side, queued on that queue's ring, and received in that queue's NAPI poll
//! (`rx.rs`), which "DMA"s it into page-pool buffers. This file creates a
//! pair and tears it down; its state is in `nic.rs`.

use super::{
    device::VTABLES,
    nic::{Nic, NicPriv, PairState, Side},
    rx::RxQueue,
    stacked::{link_config, link_shape},
    tx::TxQueue,
};
use crate::abstractions::{
    boxed::box_copy,
    debugfs::DebugfsRoot,
    delayed_call::DelayedCall,
    ethtool::Extack,
    irq::{IrqDomain, IrqLine},
    link::{NewLink, NewLinkSetup, PeerSetup},
    netdev::{default_features, feature_gro_hw, NetDev, NetDevAlloc, NetDevConfig, NetDevPair},
    page_pool::wait_for_provider_release,
    platform::{PlatformDevice, PLATFORM_DEVID_AUTO},
    rcu::RcuBox,
    xdp::XdpSlot,
};
use crate::logic::{personality::Personality, steering::Steering, toeplitz::DEFAULT_RSS_KEY};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU8};
use kernel::{
    c_str,
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
};

/// Smallest MTU (IPv4's minimum).
pub(crate) const MIN_MTU: u32 = 68;
/// Largest MTU (jumbo frames).
pub(crate) const MAX_MTU: u32 = 9216;

/// How many queues each device of a pair has and uses, and how its RSS-context
/// rules pick a queue.
#[derive(Clone, Copy)]
pub(crate) struct PairShape {
    /// Queues in use at creation (`ethtool -l`'s current combined count).
    pub(crate) queues: u32,
    /// Queues each device has (`ethtool -l`'s maximum): at least `queues`.
    pub(crate) max_queues: u32,
    /// Whether rules naming an RSS context add their queue to the table's
    /// entry (`context C action N`), as sfc does; bnxt, mlx5, gve and fbnic
    /// refuse such rules.
    pub(crate) rss_queue_offset: bool,
    /// The NIC both devices behave like at creation.
    pub(crate) personality: Personality,
}

/// The settings of device `name` with `tx_queues` and `rx_queues` queues,
/// shaped `shape`: any devmemnic device's, paired or stacked.
pub(crate) fn device_config<'a>(
    name: &'a CStr,
    tx_queues: u32,
    rx_queues: u32,
    shape: &PairShape,
) -> NetDevConfig<'a> {
    NetDevConfig {
        name,
        tx_queues,
        rx_queues,
        active_queues: shape.queues,
        min_mtu: MIN_MTU,
        max_mtu: MAX_MTU,
        features: default_features(),
        // Off at creation, as mlx5 ships it: coalescing changes what every
        // receiver sees, so users ask for it.
        offered_features: feature_gro_hw(),
        devmem_tx: true,
        rss_rxnfc_adds: shape.rss_queue_offset,
    }
}

/// The queues and state of device `name` (its interrupt lines are named
/// after it), shaped `shape`.
pub(crate) fn new_side(
    parent: PlatformDevice,
    name: &CStr,
    shape: &PairShape,
) -> Result<impl PinInit<Side, Error>> {
    let max = shape.max_queues;
    let personality = shape.personality;
    let profile = personality.profile();
    let irqs = IrqDomain::new(name, max)?;
    let mut rxqs = KVec::with_capacity(max as usize, GFP_KERNEL)?;
    let mut txqs = KVec::with_capacity(max as usize, GFP_KERNEL)?;
    for i in 0..max {
        let q = KBox::pin_init(
            RxQueue::new(i, profile.ring_default, profile.hds_thresh_default())?,
            GFP_KERNEL,
        )?;
        let irq_name = CString::try_from_fmt(format_args!(
            "{}-rx-{i}",
            name.to_str().map_err(|_| EINVAL)?
        ))?;
        IrqLine::request(q.as_ref(), &irqs, i, &irq_name)?;
        rxqs.push(q, GFP_KERNEL)?;
        txqs.push(TxQueue::default(), GFP_KERNEL)?;
    }
    let mut steering = box_copy(&Steering::EMPTY, GFP_KERNEL)?;
    let queues = shape.queues;
    steering.reset(DEFAULT_RSS_KEY, queues);
    Ok(try_pin_init!(Side {
        reaper <- DelayedCall::new(),
        rxqs,
        _irqs: irqs,
        txqs,
        steering <- RcuBox::new(steering),
        xdp: XdpSlot::new(),
        personality: AtomicU8::new(personality.index() as u8),
        header_split: AtomicBool::new(profile.split_default),
        combined: AtomicU32::new(queues),
        tx_ring: AtomicU32::new(profile.ring_default),
        graveyard <- kernel::new_mutex!(KVec::new()),
        parent,
    }? Error))
}

/// A registered pair of devices, unregistered on drop.
pub(crate) struct Pair {
    devs: NetDevPair<Nic>,
    /// Keeps the queues (and their NAPIs) alive until the devices are freed.
    state: Arc<PairState>,
}

impl Pair {
    /// Creates and registers `dmnic{2n}` and `dmnic{2n+1}` shaped `shape`,
    /// with a queue-restart knob under `debugfs` if given.
    pub(crate) fn new(
        n: u32,
        shape: &PairShape,
        debugfs: Option<&Arc<DebugfsRoot>>,
    ) -> Result<Self> {
        let id = |side: u32| i32::try_from(2 * n + side).map_err(|_| EINVAL);
        let parents = [
            PlatformDevice::register(c_str!("devmemnic"), id(0)?, 64)?,
            PlatformDevice::register(c_str!("devmemnic"), id(1)?, 64)?,
        ];
        let [p0, p1] = parents;
        let name = |side: u32| CString::try_from_fmt(format_args!("dmnic{}", 2 * n + side));
        let pair = Arc::pin_init(
            try_pin_init!(PairState {
                side0 <- new_side(p0, &name(0)?, shape)?,
                side1 <- new_side(p1, &name(1)?, shape)?,
            }? Error),
            GFP_KERNEL,
        )?;
        let alloc_side = |side: usize| -> Result<NetDevAlloc<Nic>> {
            let name = CString::try_from_fmt(format_args!("dmnic{}", 2 * n + side as u32))?;
            let cfg = device_config(&name, shape.max_queues, shape.max_queues, shape);
            let data = Arc::new(
                NicPriv::Paired {
                    pair: pair.clone(),
                    side,
                },
                GFP_KERNEL,
            )?;
            let mut alloc = NetDevAlloc::<Nic>::new(&pair.side(side).parent, &cfg, VTABLES, data)?;
            if let Some(root) = debugfs {
                alloc.add_restart_knob(root);
            }
            alloc
                .dev()
                .reset_core_hds(shape.personality.profile().hds_thresh_default());
            // No carrier until both sides are up (see `open`).
            alloc.dev().carrier_off();
            // (Queues' NAPIs are added on open: `queues::start_all`.)
            Ok(alloc)
        };
        let a = alloc_side(0);
        let b = alloc_side(1);
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => {
                let e = a
                    .as_ref()
                    .err()
                    .or(b.as_ref().err())
                    .copied()
                    .unwrap_or(EINVAL);
                drop((a, b));
                return Err(e);
            }
        };
        let devs = match NetDevPair::new(a, b) {
            Ok(devs) => devs,
            Err((e, a, b)) => {
                drop((a, b));
                return Err(e);
            }
        };
        Ok(Self { devs, state: pair })
    }
}

/// Sets up a pair `ip link add NAME type devmemnic` makes: NAME and its
/// peer (named as the request asks, else by the core from `dmnic%d`), each
/// with its own parent, shaped by the module's parameters
/// (`stacked::link_shape`).
pub(crate) fn newlink<'a>(new: &'a NewLink<'a>, _extack: &Extack) -> Result<NewLinkSetup<'a, Nic>> {
    if !new.paired() {
        return Err(EINVAL);
    }
    let (tx_queues, rx_queues) = new.queue_counts();
    let shape = link_shape(tx_queues.min(rx_queues));
    let parents = [
        PlatformDevice::register(c_str!("devmemnic"), PLATFORM_DEVID_AUTO, 64)?,
        PlatformDevice::register(c_str!("devmemnic"), PLATFORM_DEVID_AUTO, 64)?,
    ];
    let [p0, p1] = parents;
    // (The peer's name is known once registered: its interrupt lines are
    // named after the device's.)
    let peer_irqs = CString::try_from_fmt(format_args!(
        "{}-peer",
        new.name().to_str().map_err(|_| EINVAL)?
    ))?;
    let pair = Arc::pin_init(
        try_pin_init!(PairState {
            side0 <- new_side(p0, new.name(), &shape)?,
            side1 <- new_side(p1, &peer_irqs, &shape)?,
        }? Error),
        GFP_KERNEL,
    )?;
    let data = |side| {
        Arc::new(
            NicPriv::Paired {
                pair: pair.clone(),
                side,
            },
            GFP_KERNEL,
        )
    };
    let hds_thresh = shape.personality.profile().hds_thresh_default();
    Ok(NewLinkSetup {
        cfg: link_config(new, &shape),
        data: data(0)?,
        hds_thresh,
        peer: Some(PeerSetup {
            cfg: link_config(new, &shape),
            data: data(1)?,
            hds_thresh,
        }),
    })
}

impl NicPriv {
    /// The private data of side `side` of `pair`, as its callbacks get it.
    #[cfg_attr(not(CONFIG_KUNIT), allow(dead_code))]
    pub(crate) fn for_test(pair: &Pair, side: usize) -> Self {
        Self::Paired {
            pair: pair.state.clone(),
            side,
        }
    }
}

#[cfg_attr(not(CONFIG_KUNIT), allow(dead_code))]
impl Pair {
    /// Device 0 or 1 of the pair.
    pub(crate) fn dev(&self, i: usize) -> &NetDev {
        self.devs.dev(i)
    }

    /// The shared state (queues).
    pub(crate) fn state(&self) -> &PairState {
        &self.state
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        // Unregistering closes both devices: NAPIs removed (which frees what
        // GRO still held), queue memory retired. The devices are freed as
        // `devs` drops, and the parents with `state`, after this.
        self.devs.unregister();
        for side in 0..2 {
            self.state.side(side).wait_for_buffers();
        }
        // The pools are gone; a binding they released may still be detaching
        // its dma-buf from a parent (deferred by the kernel): let that finish.
        wait_for_provider_release();
    }
}
