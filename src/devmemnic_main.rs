// SPDX-License-Identifier: GPL-2.0

//! devmemnic: virtual NIC pairs that support device memory TCP.
//!
//! Layers: `bindings`, `debugfs`, `delay`, `dma`, `ethtool`, `kunit`,
//! `module_ref`, `napi`, `netdev`, `page_pool`, `platform`, `rcu`, `ring` and
//! `skb` are the thin abstraction layer holding every `unsafe` block; the rest
//! (`nic`, `rx`, `parse`, `steering`, `toeplitz`, `stats`, `errno`) is driver logic in
//! safe Rust.

mod bindings;
mod debugfs;
mod delay;
mod dma;
mod errno;
mod ethtool;
#[macro_use]
mod kunit;
mod module_ref;
mod napi;
mod netdev;
mod nic;
mod page_pool;
mod parse;
mod platform;
mod rcu;
mod ring;
mod rx;
mod skb;
mod stats;
mod steering;
mod toeplitz;

#[cfg(CONFIG_KUNIT)]
mod tests;

use kernel::prelude::*;
use nic::Pair;

module! {
    type: Devmemnic,
    name: "devmemnic",
    author: "devmemnic developers",
    description: "Virtual multi-queue NIC pairs with header split for device memory TCP",
    license: "GPL",
}

/// Most device pairs one load creates.
const MAX_PAIRS: u32 = 16;
/// Most RX/TX queues per device.
const MAX_QUEUES: u32 = 64;

/// Module parameters, validated.
struct Params {
    pairs: u32,
    queues: u32,
}

impl Params {
    fn load() -> Result<Self> {
        // SAFETY: the helpers only read the module's parameter variables, which the
        // module loader set before init runs.
        let (pairs, queues) =
            unsafe { (bindings::dmn_param_pairs(), bindings::dmn_param_queues()) };
        if !(1..=MAX_PAIRS).contains(&pairs) {
            pr_err!("pairs={} is out of range 1..={}\n", pairs, MAX_PAIRS);
            return Err(EINVAL);
        }
        if !(1..=MAX_QUEUES).contains(&queues) {
            pr_err!("queues={} is out of range 1..={}\n", queues, MAX_QUEUES);
            return Err(EINVAL);
        }
        Ok(Self { pairs, queues })
    }
}

struct Devmemnic {
    /// Device pairs: `dmnic0`/`dmnic1`, `dmnic2`/`dmnic3`, ...
    pairs: KVec<Pair>,
    /// Dropped after the pairs (fields drop in order), which remove their own
    /// directories first.
    _debugfs: debugfs::DebugfsRoot,
}

impl kernel::Module for Devmemnic {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let params = Params::load()?;
        // SAFETY: module init, once; the root is a field declared after `pairs`,
        // so it drops after every device's directory.
        let debugfs = unsafe { debugfs::DebugfsRoot::new() };
        let mut pairs = KVec::with_capacity(params.pairs as usize, GFP_KERNEL)?;
        for n in 0..params.pairs {
            // On error, `pairs` drops and tears down what was created.
            let pair = Pair::new(n, params.queues).inspect_err(|e| {
                pr_err!("creating pair {} failed: {:?}\n", n, e);
            })?;
            pairs.push(pair, GFP_KERNEL)?;
        }
        pr_info!(
            "{} pairs (dmnic0..dmnic{}), {} queues per device, parents devmemnic.0..devmemnic.{}\n",
            params.pairs,
            params.pairs * 2 - 1,
            params.queues,
            params.pairs * 2 - 1
        );
        Ok(Self {
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
