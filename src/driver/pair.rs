// SPDX-License-Identifier: GPL-2.0

//! The virtual NIC: a pair of multi-queue Ethernet devices wired back to back.
//!
//! A frame sent on one side (`tx.rs`) is steered to an RX queue of the other
//! side, queued on that queue's ring, and received in that queue's NAPI poll
//! (`rx/`), which "DMA"s it into page-pool buffers. This file creates a
//! pair and tears it down; its state is in `nic.rs`.

use super::{
    device::VTABLES,
    nic::{device_config, link_config, link_shape, new_side, Nic, NicPriv, PairShape, PairState},
};
use crate::abstractions::{
    ethtool::Extack,
    link::{NewLink, NewLinkSetup, PeerSetup},
    netdev::{NetDev, NetDevAlloc, NetDevPair},
    page_pool::wait_for_provider_release,
    platform::{PlatformDevice, PLATFORM_DEVID_AUTO},
};
use kernel::{c_str, prelude::*, str::CString, sync::Arc};

/// A registered pair of devices, unregistered on drop.
pub(crate) struct Pair {
    devs: NetDevPair<Nic>,
    /// Keeps the queues (and their NAPIs) alive until the devices are freed.
    state: Arc<PairState>,
}

impl Pair {
    /// Creates and registers `dmnic{2n}` and `dmnic{2n+1}` shaped `shape`,
    /// each with a queue-restart knob in its debugfs directory if
    /// `restart_knobs` (the module's pairs; not KUnit's).
    pub(crate) fn new(n: u32, shape: &PairShape, restart_knobs: bool) -> Result<Self> {
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
            if let Some(dir) = pair.side(side).debugfs.as_ref().filter(|_| restart_knobs) {
                alloc.add_restart_knob(dir);
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
/// (`link_shape`).
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
