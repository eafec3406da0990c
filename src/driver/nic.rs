// SPDX-License-Identifier: GPL-2.0

//! The driver's shared types, in one place (as netdevsim keeps its in
//! `netdevsim.h`): the device type [`Nic`], each device's private data
//! [`NicPriv`], the state of a pair, [`PairState`] with its two [`Side`]s,
//! which hold the queues (`rx.rs`, `tx.rs`), steering and XDP, and the
//! queues' counters, [`RxStats`] and [`TxStats`].
//!
//! Each queue counter is declared once, in the list of [`RxStats`] or
//! [`TxStats`]: that one line makes the field the datapath bumps, its
//! `ethtool -S` entry (`rx<N>_<name>`, `tx<N>_<name>`) and, with
//! `=> field`, the qstats field it reports as (`stats.rs` sums those for
//! the link counters).

use super::{
    rx::{QueueMem, RxQueue},
    stacked::Stacked,
    tx::TxQueue,
};
use crate::abstractions::qstats::{QueueRxStats, QueueTxStats};
use crate::abstractions::{
    delay::msleep,
    delayed_call::{DelayedCall, DelayedCallback},
    irq::IrqDomain,
    platform::PlatformDevice,
    rcu::RcuBox,
    skb::flush_deferred_skbs,
    xdp::XdpSlot,
};
use crate::logic::{
    personality::{Personality, Profile},
    steering::Steering,
};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
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
    /// The NIC this device behaves like (an index of `Personality::ALL`);
    /// changed only while the device is down (`personality.rs`).
    pub(crate) personality: AtomicU8,
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
    /// The NIC this device behaves like.
    pub(crate) fn personality(&self) -> Personality {
        Personality::from_index(self.personality.load(Ordering::Relaxed).into())
            .unwrap_or(Personality::Strict)
    }

    /// What that NIC does.
    pub(crate) fn profile(&self) -> &'static Profile {
        self.personality().profile()
    }

    /// Resizes every RX ring to `size` entries, frames queued in them kept;
    /// a ring holding more frames than that refuses, and the rings resized
    /// before it go back (shrinking back after a failed growth could itself
    /// find too many frames: that ring then keeps the new size, still valid).
    pub(crate) fn resize_rx_rings(&self, size: u32) -> Result {
        let old = self.rxqs.first().map_or(size, |q| q.ring.size());
        if size == old {
            return Ok(());
        }
        for (i, q) in self.rxqs.iter().enumerate() {
            if let Err(e) = q.ring.resize(size) {
                for back in self.rxqs.iter().take(i) {
                    let _ = back.ring.resize(old);
                }
                return Err(e);
            }
        }
        Ok(())
    }

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

impl Side {
    /// After the device is unregistered: waits for the devmem buffers still
    /// out of retired pools to come back, so their release, which frees the
    /// binding and detaches the dma-buf from the parent device, happens while
    /// the parent lives; if they do not, keeps the parent forever.
    pub(crate) fn wait_for_buffers(&self) {
        let mut waited = 0;
        while {
            flush_deferred_skbs();
            self.reap() > 0
        } && waited < POOL_RELEASE_WAIT_MS
        {
            if waited % 5000 == 0 {
                pr_info!("waiting for devmem buffers still out to return\n");
                for m in self.graveyard.lock().iter().flatten() {
                    m.debug();
                }
            }
            msleep(50);
            waited += 50;
        }
        if self.reap() > 0 {
            // A process still holds buffers: never free the parent under them.
            pr_warn!(
                "devmem buffers still out after {} s; keeping the parent device\n",
                POOL_RELEASE_WAIT_MS / 1000
            );
            self.parent.pin_forever();
        }
    }
}

/// How long teardown waits for page pools with buffers in flight.
const POOL_RELEASE_WAIT_MS: u32 = 30_000;

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

/// A device's private data: the queues and state it was made with.
pub(crate) enum NicPriv {
    /// One device of a pair (`pair.rs`): its pair and which side it is.
    Paired { pair: Arc<PairState>, side: usize },
    /// A device stacked on a lower device (`stacked.rs`).
    Stacked(Arc<Stacked>),
}

impl NicPriv {
    /// This device's side.
    pub(crate) fn me(&self) -> &Side {
        match self {
            Self::Paired { pair, side } => pair.side(*side),
            Self::Stacked(st) => &st.side,
        }
    }

    /// The other device's side (a pair's).
    pub(crate) fn peer(&self) -> Option<&Side> {
        match self {
            Self::Paired { pair, side } => Some(pair.side(1 - *side)),
            Self::Stacked(_) => None,
        }
    }

    /// The stacked device's state, if this is one.
    pub(crate) fn stacked(&self) -> Option<&Stacked> {
        match self {
            Self::Paired { .. } => None,
            Self::Stacked(st) => Some(st),
        }
    }
}

/// A 64-bit counter.
///
/// `add` is for the one context that owns the counter (a NAPI poll, a TX
/// queue under its lock): a plain load and store, no locked instruction.
/// `add_shared` is for counters several CPUs bump (rare events).
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`; only from the counter's single writer.
    pub(crate) fn add(&self, n: u64) {
        self.0.store(
            self.0.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }

    /// Adds `n` from any context.
    pub(crate) fn add_shared(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// The current value.
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Declares a queue's counters from one list: each entry is a [`Counter`]
/// field, an `ethtool -S` name (the field's) in [`Self::NAMES`] order, and,
/// with `=> qstat`, the field of `$qstats` it reports as.
macro_rules! queue_counters {
    (
        $(#[$meta:meta])*
        $name:ident reports $qstats:ident {
            $( $(#[$fmeta:meta])* $field:ident $(=> $qfield:ident)? ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Default)]
        pub(crate) struct $name {
            $( $(#[$fmeta])* pub(crate) $field: Counter, )+
        }

        impl $name {
            /// The counters' `ethtool -S` names, in declaration order.
            pub(crate) const NAMES: &'static [&'static str] = &[$(stringify!($field)),+];

            /// The counters' values, in the order of [`Self::NAMES`].
            pub(crate) fn values(&self) -> impl Iterator<Item = u64> + '_ {
                [$(&self.$field),+].into_iter().map(Counter::get)
            }

            /// The counters qstats reports.
            pub(crate) fn qstats(&self) -> $qstats {
                let mut q = $qstats::default();
                $( $( q.$qfield = self.$field.get(); )? )+
                q
            }
        }
    };
}

queue_counters! {
    /// Per-RX-queue counters.
    RxStats reports QueueRxStats {
        /// Frames delivered to the stack.
        packets => packets,
        /// Bytes delivered.
        bytes => bytes,
        /// Frames received with header split (headers host, payload pool).
        hds_packets,
        /// Of those, frames whose payload went to dma-buf memory (devmem).
        devmem_packets,
        /// Frames received whole into host memory (no split possible or wanted).
        linear,
        /// Of those, TCP frames not split because their payload (per segment) was
        /// at or below the header-split threshold.
        below_hds_thresh,
        /// Frames dropped: no buffer from a pool.
        alloc_fail => alloc_fail,
        /// Frames dropped: not splittable, on a queue whose payload buffers
        /// are device memory, where the personality's driver drops them (gve,
        /// mlx5).
        unsplit_drops,
        /// TCP segments whose sender wrote the checksum (forwarded or raw)
        /// and whose sum the device found bad: delivered unverified, or
        /// dropped (counted in `drops` too) when their payload went to device
        /// memory, where the stack cannot check it.
        csum_bad => csum_bad,
        /// Frames dropped: ring full, queue down, DMA failure, too large for
        /// the XDP program, or an unverified checksum over device memory.
        drops => hw_drops,
        /// Packets coalesced from two or more frames (`rx-gro-hw`) delivered.
        gro_packets => hw_gro_packets,
        /// Their bytes.
        gro_bytes => hw_gro_bytes,
        /// The frames they were coalesced from.
        gro_wire_packets => hw_gro_wire_packets,
        /// Those frames' bytes.
        gro_wire_bytes => hw_gro_wire_bytes,
        /// Frames whose payload joined a held aggregate (the others are counted
        /// as `hds_packets` or `linear` when built).
        gro_merged,
        /// Frames of aggregates dropped, not delivered: their queue's memory was
        /// replaced (a ring reset) while they were held.
        gro_discarded,
        /// Frames an XDP program dropped (`XDP_DROP`).
        xdp_drop,
        /// Frames an XDP program redirected (`XDP_REDIRECT`) that their target took.
        xdp_redirect,
        /// Frames an XDP program sent back out (`XDP_TX`), and their bytes: this
        /// channel's XDP TX ring, reported with its TX queue.
        xdp_tx,
        xdp_tx_bytes,
        /// `XDP_TX` frames the peer could not take (down, or its ring full).
        xdp_tx_errors,
        /// `XDP_ABORTED`, unknown actions, failed redirects, and frames no skb
        /// could be built for.
        xdp_exception,
        /// Frames too large for the attached program (counted in `drops` too).
        xdp_oversize,
    }
}

queue_counters! {
    /// Per-TX-queue counters.
    TxStats reports QueueTxStats {
        /// Frames handed to the peer.
        packets => packets,
        /// Bytes handed to the peer.
        bytes => bytes,
        /// Frames dropped (peer down).
        dropped => hw_drops,
        /// Times the queue stopped: its ring full, or the peer's RX ring.
        stops => stop,
        /// Times a stopped queue was woken (completions or a larger ring made room).
        wakes => wake,
        /// Frames sent from device memory (devmem TX: payload read by bus address).
        devmem_packets,
        /// TSO super-frames the "hardware" took (received whole by the peer, as
        /// its GRO would have merged them), their bytes, and the wire segments
        /// they stand for.
        gso_packets => hw_gso_packets,
        gso_bytes => hw_gso_bytes,
        gso_wire_packets => hw_gso_wire_packets,
        /// Frames XDP programs redirected to this device (`ndo_xdp_xmit`) sent
        /// from this queue's CPU, their bytes, and those the peer did not take.
        xdp_xmit,
        xdp_xmit_bytes,
        xdp_xmit_errors,
    }
}
