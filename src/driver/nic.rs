// SPDX-License-Identifier: GPL-2.0

//! The driver's shared types, in one place (as netdevsim keeps its in
//! `netdevsim.h`): the device type [`Nic`], each device's private data
//! [`NicPriv`], and the state of a pair, [`PairState`] with its two
//! [`Side`]s, which hold the queues (`rx.rs`, `tx.rs`), steering and XDP.

use super::{
    rx::{QueueMem, RxQueue},
    tx::TxQueue,
};
use crate::abstractions::{
    delayed_call::{DelayedCall, DelayedCallback},
    irq::IrqDomain,
    platform::PlatformDevice,
    rcu::RcuBox,
    xdp::XdpSlot,
};
use crate::logic::steering::Steering;
use core::sync::atomic::{AtomicBool, AtomicU32};
use kernel::{prelude::*, sync::Arc, sync::Mutex};

/// A devmemnic device: implements every ops trait of the abstraction layer.
pub(crate) struct Nic;

/// One device of a pair.
#[pin_data]
pub(crate) struct Side {
    /// Reaps the graveyard while it keeps memory (declared first: its drop
    /// waits for a running reap before the graveyard goes).
    #[pin]
    pub(super) reaper: DelayedCall,
    pub(crate) rxqs: KVec<Pin<KBox<RxQueue>>>,
    /// The RX queues' interrupt lines (each line keeps the domain alive).
    pub(super) _irqs: IrqDomain,
    pub(crate) txqs: KVec<TxQueue>,
    #[pin]
    pub(crate) steering: RcuBox<Steering>,
    /// The XDP program this device runs on receive (native mode).
    pub(crate) xdp: XdpSlot,
    /// Configured TCP data split; queues pick it up when their memory is (re)built.
    pub(crate) header_split: AtomicBool,
    /// Combined channels (an RX and a TX queue each; `ethtool -L combined`):
    /// the active queues beyond them are RX-only or TX-only channels.
    pub(crate) combined: AtomicU32,
    /// TX ring entries (`ethtool -G tx`): frames this device may have waiting
    /// in the receiving queue they were steered to before its TX queue stops.
    pub(crate) tx_ring: AtomicU32,
    /// Retired devmem queue memory whose buffers are still out (see `retire`).
    #[pin]
    pub(super) graveyard: Mutex<KVec<Option<QueueMem>>>,
    pub(crate) parent: PlatformDevice,
}

impl Side {
    /// Frees queue memory taken out of a queue, or keeps it while its devmem
    /// buffers are out. Destroying a devmem pool with buffers out defers its
    /// release, which then frees the binding and detaches the dma-buf from our
    /// parent device, possibly after the module is gone. Kept here, the pool
    /// takes its buffers back and is destroyed (released at once) by `reap`.
    pub(crate) fn retire(&self, mem: Option<QueueMem>) {
        let Some(mem) = mem else { return };
        if mem.is_devmem() && mem.outstanding() > 0 {
            let mut g = self.graveyard.lock();
            match g.iter_mut().find(|s| s.is_none()) {
                Some(slot) => *slot = Some(mem),
                None => {
                    if let Err(e) = g.push(Some(mem), GFP_KERNEL) {
                        // Nowhere to keep it: keep the parent device instead.
                        pr_warn!("no memory to keep a retired devmem queue ({:?})\n", e);
                        self.parent.pin_forever();
                    }
                }
            }
        }
        self.reap_or_look_again();
    }

    /// Reaps; while memory is still kept, looks again later: nothing tells us
    /// when its buffers are back, and the binding (and its dma-buf) should go
    /// soon after the last one.
    fn reap_or_look_again(&self) {
        if self.reap() > 0 {
            DelayedCall::schedule(self, REAP_INTERVAL_MS);
        }
    }

    /// Frees retired memory whose buffers have all come back; returns how much
    /// is still kept.
    pub(crate) fn reap(&self) -> usize {
        let mut g = self.graveyard.lock();
        let mut kept = 0;
        for slot in g.iter_mut() {
            match slot {
                Some(m) if m.outstanding() > 0 => kept += 1,
                Some(_) => drop(slot.take()),
                None => {}
            }
        }
        kept
    }
}

/// How often retired memory is checked for its buffers' return.
const REAP_INTERVAL_MS: u32 = 200;

impl DelayedCallback for Side {
    fn run(&self) {
        self.reap_or_look_again();
    }
}

crate::impl_has_delayed_call!(Side, reaper);

/// The state both devices of a pair share.
#[pin_data]
pub(crate) struct PairState {
    #[pin]
    pub(super) side0: Side,
    #[pin]
    pub(super) side1: Side,
}

impl PairState {
    /// Side 0 or 1.
    pub(crate) fn side(&self, i: usize) -> &Side {
        if i & 1 == 0 {
            &self.side0
        } else {
            &self.side1
        }
    }
}

/// A device's private data: its pair and which side it is.
pub(crate) struct NicPriv {
    pub(crate) pair: Arc<PairState>,
    pub(crate) side: usize,
}

impl NicPriv {
    /// This device's side.
    pub(crate) fn me(&self) -> &Side {
        self.pair.side(self.side)
    }

    /// The other device's side.
    pub(crate) fn peer(&self) -> &Side {
        self.pair.side(1 - self.side)
    }
}
