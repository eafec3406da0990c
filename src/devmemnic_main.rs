// SPDX-License-Identifier: GPL-2.0

//! devmemnic: virtual NICs that support device memory TCP: pairs, and
//! devices stacked on an Ethernet device (the `devmemnic` link kind).
//!
//! Layers, one folder each: `abstractions` (safe APIs over the kernel's C
//! interfaces; every `unsafe` block and every difference between kernels),
//! `driver` (the virtual NIC, safe Rust), `logic` (pure logic shared with the
//! host tests in `tools/logic`), and `tests` (KUnit suites).

// Kernels without KUnit built in (Debian's stock ones) leave out `tests`,
// and with it the only users of the test helpers of the other layers; the
// lint stays on where the suites are built (every self-built kernel).
#![cfg_attr(not(CONFIG_KUNIT), allow(dead_code))]

#[macro_use]
mod abstractions;
mod driver;
mod logic;

#[cfg(CONFIG_KUNIT)]
mod tests;

use abstractions::{debugfs::DebugfsRoot, link::LinkRegistration, params};
use driver::{
    nic::{Nic, PairShape, MAX_MTU},
    pair::Pair,
};
use kernel::prelude::*;
use logic::personality::Personality;

kernel_module! {
    type: Devmemnic,
    name: "devmemnic",
    author: "devmemnic developers",
    description: "Virtual multi-queue NIC pairs with header split for device memory TCP",
    license: "GPL",
}

/// The module's name, as `kernel_module!` below gives it (KUnit reports the
/// module's cases under it).
pub(crate) const MODULE_NAME: &core::ffi::CStr = c"devmemnic";

/// Most device pairs one load creates.
const MAX_PAIRS: u32 = 16;
/// Most RX/TX queues per device (RSS context tables name queues in bytes).
const MAX_QUEUES: u32 = 128;

/// Module parameters, validated.
struct Params {
    pairs: u32,
    shape: PairShape,
}

impl Params {
    fn load() -> Result<Self> {
        let (pairs, queues) = (params::pairs(), params::queues());
        if !(1..=MAX_PAIRS).contains(&pairs) {
            pr_err!("pairs={} is out of range 1..={}\n", pairs, MAX_PAIRS);
            return Err(EINVAL);
        }
        if !(1..=MAX_QUEUES).contains(&queues) {
            pr_err!("queues={} is out of range 1..={}\n", queues, MAX_QUEUES);
            return Err(EINVAL);
        }
        let max_queues = match params::max_queues() {
            0 => queues,
            n => n,
        };
        if !(queues..=MAX_QUEUES).contains(&max_queues) {
            pr_err!(
                "max_queues={} is out of range {}..={} (queues={})\n",
                max_queues,
                queues,
                MAX_QUEUES,
                queues
            );
            return Err(EINVAL);
        }
        let Some(personality) = Personality::from_name(params::personality()) else {
            pr_err!(
                "personality={} is not one of strict, gve, bnxt, mlx5, fbnic, fbnic-6.18\n",
                params::personality()
            );
            return Err(EINVAL);
        };
        Ok(Self {
            pairs,
            shape: PairShape {
                queues,
                max_queues,
                rss_queue_offset: params::rss_queue_offset(),
                personality,
            },
        })
    }
}

struct Devmemnic {
    /// The `devmemnic` link kind: devices stacked on other devices (`ip
    /// link add dmn0 link eth0 type devmemnic`), deleted first on unload.
    _link: LinkRegistration<Nic>,
    /// Device pairs: `dmnic0`/`dmnic1`, `dmnic2`/`dmnic3`, ...
    pairs: KVec<Pair>,
    /// `devmemnic/` in debugfs, where every device makes its directory
    /// (dropped last: the devices' directories are gone by then).
    _debugfs: DebugfsRoot,
}

impl kernel::Module for Devmemnic {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let params = Params::load()?;
        let debugfs = DebugfsRoot::new()?;
        let mut pairs = KVec::with_capacity(params.pairs as usize, GFP_KERNEL)?;
        for n in 0..params.pairs {
            // On error, `pairs` drops and tears down what was created.
            let pair = Pair::new(n, &params.shape, true).inspect_err(|e| {
                pr_err!("creating pair {} failed: {:?}\n", n, e);
            })?;
            pairs.push(pair, GFP_KERNEL)?;
        }
        let link = LinkRegistration::<Nic>::register(params.shape.max_queues, MAX_MTU)
            .inspect_err(|e| pr_err!("registering the devmemnic link kind failed: {:?}\n", e))?;
        pr_info!(
            "{} pairs (dmnic0..dmnic{}), {} of {} queues per device in use, parents devmemnic.0..devmemnic.{}, personality {}\n",
            params.pairs,
            params.pairs * 2 - 1,
            params.shape.queues,
            params.shape.max_queues,
            params.pairs * 2 - 1,
            params.shape.personality.name()
        );
        Ok(Self {
            _link: link,
            pairs,
            _debugfs: debugfs,
        })
    }
}

impl Drop for Devmemnic {
    fn drop(&mut self) {
        pr_info!("unloading {} pairs\n", self.pairs.len());
    }
}
