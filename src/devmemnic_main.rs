// SPDX-License-Identifier: GPL-2.0

//! devmemnic: virtual NIC pairs that support device memory TCP.
//!
//! Layers: `bindings`, `kunit`, `platform` and `dma` are the thin abstraction
//! layer holding every `unsafe` block; the rest is driver logic in safe Rust.

mod bindings;
mod dma;
#[macro_use]
mod kunit;
mod parse;
mod platform;
mod toeplitz;

#[cfg(CONFIG_KUNIT)]
mod tests;

use kernel::{c_str, prelude::*};
use platform::PlatformDevice;

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
/// DMA address width of the parent devices, as a modern NIC has.
const DMA_BITS: u32 = 64;

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
    /// One parent device per netdev: `devmemnic.0`, `devmemnic.1`, ...
    parents: KVec<PlatformDevice>,
}

impl kernel::Module for Devmemnic {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let params = Params::load()?;
        let devices = params.pairs * 2;
        let mut parents = KVec::with_capacity(devices as usize, GFP_KERNEL)?;
        for id in 0..devices {
            // On error, `parents` drops and unregisters what was registered.
            let dev = PlatformDevice::register(c_str!("devmemnic"), id as i32, DMA_BITS)?;
            parents.push(dev, GFP_KERNEL)?;
        }
        pr_info!(
            "{} pairs, {} queues per device, parents devmemnic.0..devmemnic.{} (dma mask {:#x})\n",
            params.pairs,
            params.queues,
            devices - 1,
            parents[0].dma_mask()
        );
        Ok(Self { parents })
    }
}

impl Drop for Devmemnic {
    fn drop(&mut self) {
        pr_info!("unloading, {} parent devices\n", self.parents.len());
    }
}
