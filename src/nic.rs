// SPDX-License-Identifier: GPL-2.0

//! The virtual NIC: a pair of multi-queue Ethernet devices wired back to back.
//!
//! A frame sent on one side is steered to an RX queue of the other side,
//! queued on that queue's ring, and received in that queue's NAPI poll
//! (`rx.rs`), which "DMA"s it into page-pool buffers. Safe Rust only.

use crate::{
    errno::enetdown,
    ethtool::{Channels, EthtoolOps, Extack, RingParams},
    module_ref::ModuleRef,
    napi::Napi,
    netdev::{
        LinkStats, NetDev, NetDevAlloc, NetDevConfig, NetDevOps, NetDevPair, QueueMgmt,
        QueueRxStats, QueueTxStats, TxOutcome,
    },
    parse::parse_prefix,
    platform::PlatformDevice,
    rcu::RcuBox,
    rx::{QueueMem, RxState},
    skb::SkBuff,
    stats::Counter,
    steering::{InsertError, NtupleRule, Steering, INDIR_SIZE, MAX_RULES},
    toeplitz::{DEFAULT_RSS_KEY, RSS_KEY_LEN},
};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{c_str, fmt, prelude::*, str::CString, sync::Arc};

/// Entries of each RX ring (frames in flight from the peer).
pub(crate) const RING_SIZE: u32 = 1024;
/// Smallest MTU (IPv4's minimum).
pub(crate) const MIN_MTU: u32 = 68;
/// Largest MTU (jumbo frames).
pub(crate) const MAX_MTU: u32 = 9216;
/// Bytes of a frame the transmit side reads to steer it.
const STEER_PEEK: usize = 128;

/// Per-RX-queue counters (`ethtool -S`, qstats).
#[derive(Default)]
pub(crate) struct RxStats {
    /// Frames delivered to the stack.
    pub(crate) packets: Counter,
    /// Bytes delivered.
    pub(crate) bytes: Counter,
    /// Frames received with header split (headers host, payload pool).
    pub(crate) hds_packets: Counter,
    /// Of those, frames whose payload went to dma-buf memory (devmem).
    pub(crate) devmem_packets: Counter,
    /// Frames received whole into host memory (no split possible or wanted).
    pub(crate) linear: Counter,
    /// Frames dropped: no buffer from a pool.
    pub(crate) alloc_fail: Counter,
    /// Frames dropped: ring full, queue down, or DMA failure.
    pub(crate) drops: Counter,
}

/// Per-TX-queue counters.
#[derive(Default)]
pub(crate) struct TxStats {
    /// Frames handed to the peer.
    pub(crate) packets: Counter,
    /// Bytes handed to the peer.
    pub(crate) bytes: Counter,
    /// Frames dropped (peer down).
    pub(crate) dropped: Counter,
    /// Times the queue stopped on a full peer ring.
    pub(crate) stops: Counter,
}

/// One RX queue: the ring the peer fills and the NAPI that empties it.
#[pin_data]
pub(crate) struct RxQueue {
    #[pin]
    pub(crate) napi: Napi<RxState>,
    pub(crate) ring: crate::ring::SkbRing,
    pub(crate) stats: RxStats,
    pub(crate) index: u32,
    /// A peer TX queue stopped on this full ring since the last poll that
    /// took frames: that poll wakes the peer's stopped queues (set after the
    /// stop, so a poll that misses it leaves the sender's own recheck to wake).
    pub(crate) sender_stopped: AtomicBool,
    /// Held while the kernel has a devmem binding on this queue (under rtnl).
    #[pin]
    binding_ref: kernel::sync::Mutex<Option<ModuleRef>>,
}

crate::impl_has_napi!(RxQueue, napi);

impl RxQueue {
    fn new(index: u32) -> Result<impl PinInit<Self, Error>> {
        let ring = crate::ring::SkbRing::new(RING_SIZE)?;
        Ok(try_pin_init!(Self {
            napi <- Napi::new(RxState::new()),
            ring,
            stats: RxStats::default(),
            index,
            sender_stopped: AtomicBool::new(false),
            binding_ref <- kernel::new_mutex!(None),
        }? Error))
    }

    /// Keeps the module loaded exactly while a devmem binding sits on this queue:
    /// the binding's dma-buf attachment points at our parent device and outlives
    /// the net device. Called wherever the kernel may have changed the binding
    /// (it always restarts the queue after binding and after unbinding).
    pub(crate) fn refresh_binding(&self, dev: &NetDev) {
        let bound = dev.rxq_has_provider(self.index);
        let mut r = self.binding_ref.lock();
        match (bound, r.is_some()) {
            (true, false) => *r = Some(ModuleRef::new()),
            (false, true) => *r = None,
            _ => {}
        }
    }
}

/// One device of a pair.
#[pin_data]
pub(crate) struct Side {
    pub(crate) rxqs: KVec<Pin<KBox<RxQueue>>>,
    pub(crate) txqs: KVec<TxStats>,
    #[pin]
    pub(crate) steering: RcuBox<Steering>,
    /// Configured TCP data split; queues pick it up when their memory is (re)built.
    pub(crate) header_split: AtomicBool,
    /// Retired devmem queue memory whose buffers are still out (see `retire`).
    #[pin]
    graveyard: kernel::sync::Mutex<KVec<Option<QueueMem>>>,
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
        self.reap();
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

/// The state both devices of a pair share.
#[pin_data]
pub(crate) struct PairState {
    #[pin]
    side0: Side,
    #[pin]
    side1: Side,
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
    /// The private data of side `side` of `pair`, as its callbacks get it.
    #[cfg_attr(not(CONFIG_KUNIT), allow(dead_code))]
    pub(crate) fn for_test(pair: &Pair, side: usize) -> Self {
        Self {
            pair: pair.state.clone(),
            side,
        }
    }

    pub(crate) fn me(&self) -> &Side {
        self.pair.side(self.side)
    }
    pub(crate) fn peer(&self) -> &Side {
        self.pair.side(1 - self.side)
    }
}

fn new_side(parent: PlatformDevice, queues: u32) -> Result<impl PinInit<Side, Error>> {
    let mut rxqs = KVec::with_capacity(queues as usize, GFP_KERNEL)?;
    let mut txqs = KVec::with_capacity(queues as usize, GFP_KERNEL)?;
    for i in 0..queues {
        rxqs.push(KBox::pin_init(RxQueue::new(i)?, GFP_KERNEL)?, GFP_KERNEL)?;
        txqs.push(TxStats::default(), GFP_KERNEL)?;
    }
    let steering = KBox::new(Steering::new(DEFAULT_RSS_KEY, queues), GFP_KERNEL)?;
    Ok(try_pin_init!(Side {
        rxqs,
        txqs,
        steering <- RcuBox::new(steering),
        header_split: AtomicBool::new(true),
        graveyard <- kernel::new_mutex!(KVec::new()),
        parent,
    }? Error))
}

/// The device type: a [`NetDevOps`] and [`EthtoolOps`] implementation.
pub(crate) struct Nic;

crate::netdev_ops_tables!(Nic);

/// A registered pair of devices, unregistered on drop.
pub(crate) struct Pair {
    devs: NetDevPair<Nic>,
    /// Keeps the queues (and their NAPIs) alive until the devices are freed.
    state: Arc<PairState>,
}

impl Pair {
    /// Creates and registers `dmnic{2n}` and `dmnic{2n+1}` with `queues` queues each.
    pub(crate) fn new(n: u32, queues: u32) -> Result<Self> {
        let parents = [
            PlatformDevice::register(c_str!("devmemnic"), (2 * n) as i32, 64)?,
            PlatformDevice::register(c_str!("devmemnic"), (2 * n + 1) as i32, 64)?,
        ];
        let [p0, p1] = parents;
        let pair = Arc::pin_init(
            try_pin_init!(PairState {
                side0 <- new_side(p0, queues)?,
                side1 <- new_side(p1, queues)?,
            }? Error),
            GFP_KERNEL,
        )?;
        let alloc_side = |side: usize| -> Result<NetDevAlloc<Nic>> {
            let name = CString::try_from_fmt(fmt!("dmnic{}", 2 * n + side as u32))?;
            let cfg = NetDevConfig {
                name: &name,
                tx_queues: queues,
                rx_queues: queues,
                min_mtu: MIN_MTU,
                max_mtu: MAX_MTU,
                features: crate::netdev::default_features(),
            };
            let data = Arc::new(
                NicPriv {
                    pair: pair.clone(),
                    side,
                },
                GFP_KERNEL,
            )?;
            let alloc = NetDevAlloc::<Nic>::new(&pair.side(side).parent, &cfg, data)?;
            // No carrier until both sides are up (see `open`).
            alloc.dev().carrier_off();
            for q in pair.side(side).rxqs.iter() {
                q.napi.add::<RxQueue>(alloc.dev());
            }
            Ok(alloc)
        };
        let a = alloc_side(0);
        let b = alloc_side(1);
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => {
                Self::del_napis(&pair);
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
                Self::del_napis(&pair);
                drop((a, b));
                return Err(e);
            }
        };
        Ok(Self { devs, state: pair })
    }

    /// Removes every queue's NAPI from its (unregistered) device before it is freed.
    fn del_napis(state: &PairState) {
        for side in 0..2 {
            for q in state.side(side).rxqs.iter() {
                q.napi.del();
            }
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

/// How long teardown waits for page pools with buffers in flight.
const POOL_RELEASE_WAIT_MS: u32 = 30_000;

impl Drop for Pair {
    fn drop(&mut self) {
        // Unregistering closes both devices (NAPIs disabled, queue memory
        // retired) and deleting the NAPIs frees what GRO still held. Devmem
        // pools with buffers still out are kept (`Side::retire`) until the
        // buffers come back, so their release, which frees the binding and
        // detaches the dma-buf from our parent device, happens while the parent
        // lives: wait for them here. The devices are freed as `devs` drops, and
        // the parents with `state`, after this.
        self.devs.unregister();
        Self::del_napis(&self.state);
        for side in 0..2 {
            let s = self.state.side(side);
            let mut waited = 0;
            while {
                crate::netdev::flush_deferred_skbs();
                s.reap() > 0
            } && waited < POOL_RELEASE_WAIT_MS
            {
                if waited % 5000 == 0 {
                    pr_info!("waiting for devmem buffers still out to return\n");
                    for m in s.graveyard.lock().iter().flatten() {
                        m.debug();
                    }
                }
                crate::delay::msleep(50);
                waited += 50;
            }
            if s.reap() > 0 {
                // A process still holds buffers: never free the parent under them.
                pr_warn!(
                    "devmem buffers still out after {} s; keeping the parent device\n",
                    POOL_RELEASE_WAIT_MS / 1000
                );
                s.parent.pin_forever();
            }
        }
    }
}

impl Nic {
    /// Builds (or rebuilds) the memory of every active RX queue of an up device.
    fn start_queues(dev: &NetDev, data: &NicPriv) -> Result {
        let me = data.me();
        let split = me.header_split.load(Ordering::Relaxed);
        let active = dev.real_num_rx_queues();
        for q in me.rxqs.iter().take(active as usize) {
            q.refresh_binding(dev);
            let mem = QueueMem::new(dev, q, split)?;
            me.retire(q.napi.with_state(|st, off| st.install(mem, off)));
            q.napi.enable(dev, q.index);
        }
        Ok(())
    }

    /// New memory for RX queues `range` (indices), all or none.
    fn new_queue_mems(
        dev: &NetDev,
        data: &NicPriv,
        range: core::ops::Range<u32>,
        split: bool,
    ) -> Result<KVec<QueueMem>> {
        let rxqs = &data.me().rxqs;
        let mut mems = KVec::with_capacity(range.len(), GFP_KERNEL)?;
        for q in rxqs.iter().skip(range.start as usize).take(range.len()) {
            mems.push(QueueMem::new(dev, q, split)?, GFP_KERNEL)?;
        }
        Ok(mems)
    }

    /// Stops every RX queue: NAPI off, memory freed, ring purged.
    fn stop_queues(dev: &NetDev, data: &NicPriv) {
        for q in data.me().rxqs.iter() {
            q.napi.disable(dev, q.index);
            data.me().retire(q.napi.with_state(|st, off| st.take(off)));
            q.stats.drops.add_shared(q.ring.purge());
        }
    }
}

#[vtable]
impl NetDevOps for Nic {
    type Priv = NicPriv;

    fn open(dev: &NetDev, data: &NicPriv) -> Result {
        if let Err(e) = Self::start_queues(dev, data) {
            Self::stop_queues(dev, data);
            return Err(e);
        }
        dev.tx_start_all();
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
        dev.tx_stop_all();
        Self::stop_queues(dev, data);
        Ok(())
    }

    fn start_xmit(dev: &NetDev, data: &NicPriv, mut skb: SkBuff) -> TxOutcome {
        let txq = u32::from(skb.queue_mapping());
        let Some(stats) = data.me().txqs.get(txq as usize) else {
            drop(skb);
            return TxOutcome::Done;
        };
        let Some(peer) = dev.peer() else {
            stats.dropped.add(1);
            drop(skb);
            return TxOutcome::Done;
        };
        let active = peer.real_num_rx_queues();
        if !peer.is_running() || !dev.carrier_ok() || active == 0 {
            stats.dropped.add(1);
            drop(skb);
            return TxOutcome::Done;
        }
        // Steer on the receiving side's configuration.
        let mut peek = [0u8; STEER_PEEK];
        let n = skb.len().min(STEER_PEEK);
        let key = match skb.copy_bits(0, &mut peek[..n]) {
            Ok(()) => parse_prefix(&peek[..n], skb.len()).key,
            Err(_) => None,
        };
        let ntuple = peer.ntuple_enabled();
        let target = data.peer();
        let decision = target
            .steering
            .read(|s| s.decide(key.as_ref(), ntuple, active));
        let Some(q) = target.rxqs.get(decision.queue as usize) else {
            stats.dropped.add(1);
            drop(skb);
            return TxOutcome::Done;
        };
        let len = skb.len() as u64;
        // The receive side reports this hash (NETIF_F_RXHASH).
        if decision.hash != 0 {
            skb.set_hash(decision.hash, decision.l4);
        }
        match q.ring.produce(skb) {
            Ok(()) => {
                stats.packets.add(1);
                stats.bytes.add(len);
                q.napi.schedule();
                TxOutcome::Done
            }
            Err(skb) => {
                // Back-pressure: stop this queue until the peer's poll drains a ring.
                dev.txq_stop(txq);
                q.sender_stopped.store(true, Ordering::SeqCst);
                stats.stops.add(1);
                q.napi.schedule();
                if !q.ring.is_full() {
                    dev.txq_wake(txq);
                }
                TxOutcome::Busy(skb)
            }
        }
    }

    fn get_stats64(_dev: &NetDev, data: &NicPriv) -> LinkStats {
        let me = data.me();
        let mut s = LinkStats::default();
        for q in me.rxqs.iter() {
            s.rx_packets += q.stats.packets.get();
            s.rx_bytes += q.stats.bytes.get();
            s.rx_dropped += q.stats.drops.get() + q.stats.alloc_fail.get();
        }
        for t in me.txqs.iter() {
            s.tx_packets += t.packets.get();
            s.tx_bytes += t.bytes.get();
            s.tx_dropped += t.dropped.get();
        }
        s
    }

    fn change_mtu(dev: &NetDev, _data: &NicPriv, mtu: u32) -> Result {
        // The core checked min/max; buffers are page chunks, so any MTU fits.
        dev.set_mtu_field(mtu);
        Ok(())
    }

    fn queue_stats_rx(_dev: &NetDev, data: &NicPriv, idx: u32) -> QueueRxStats {
        data.me()
            .rxqs
            .get(idx as usize)
            .map_or_else(QueueRxStats::default, |q| rx_qstats(&q.stats))
    }

    fn queue_stats_tx(_dev: &NetDev, data: &NicPriv, idx: u32) -> QueueTxStats {
        data.me()
            .txqs
            .get(idx as usize)
            .map_or_else(QueueTxStats::default, tx_qstats)
    }

    fn base_stats(dev: &NetDev, data: &NicPriv) -> (QueueRxStats, QueueTxStats) {
        let me = data.me();
        let mut rx = QueueRxStats::default();
        for q in me.rxqs.iter().skip(dev.real_num_rx_queues() as usize) {
            let s = rx_qstats(&q.stats);
            rx.packets += s.packets;
            rx.bytes += s.bytes;
            rx.alloc_fail += s.alloc_fail;
            rx.hw_drops += s.hw_drops;
        }
        let mut tx = QueueTxStats::default();
        for t in me.txqs.iter().skip(dev.real_num_tx_queues() as usize) {
            let s = tx_qstats(t);
            tx.packets += s.packets;
            tx.bytes += s.bytes;
            tx.hw_drops += s.hw_drops;
            tx.stop += s.stop;
        }
        (rx, tx)
    }
}

fn rx_qstats(s: &RxStats) -> QueueRxStats {
    QueueRxStats {
        packets: s.packets.get(),
        bytes: s.bytes.get(),
        alloc_fail: s.alloc_fail.get(),
        hw_drops: s.drops.get(),
    }
}

fn tx_qstats(t: &TxStats) -> QueueTxStats {
    QueueTxStats {
        packets: t.packets.get(),
        bytes: t.bytes.get(),
        hw_drops: t.dropped.get(),
        stop: t.stops.get(),
    }
}

impl QueueMgmt for Nic {
    type QueueMem = QueueMem;

    fn queue_mem_alloc(dev: &NetDev, data: &NicPriv, idx: u32) -> Result<QueueMem> {
        let q = data.me().rxqs.get(idx as usize).ok_or(EINVAL)?;
        // Binding and unbinding both end in a restart: see what changed first.
        q.refresh_binding(dev);
        if !dev.is_running() {
            return Err(enetdown());
        }
        if idx >= dev.real_num_rx_queues() {
            return Err(EINVAL);
        }
        QueueMem::new(dev, q, data.me().header_split.load(Ordering::Relaxed))
    }

    fn queue_stop(dev: &NetDev, data: &NicPriv, idx: u32) -> Result<Option<QueueMem>> {
        let q = data.me().rxqs.get(idx as usize).ok_or(EINVAL)?;
        // Frames keep arriving in the ring (the sender stops on a full ring):
        // nothing accepted is lost while the queue has no memory.
        q.napi.disable(dev, idx);
        Ok(q.napi.with_state(|st, off| st.take(off)))
    }

    fn queue_mem_free(_dev: &NetDev, data: &NicPriv, mem: QueueMem) {
        data.me().retire(Some(mem));
    }

    fn queue_start(dev: &NetDev, data: &NicPriv, idx: u32, mem: &mut Option<QueueMem>) -> Result {
        let q = data.me().rxqs.get(idx as usize).ok_or(EINVAL)?;
        if let Some(m) = mem.take() {
            let me = data.me();
            me.retire(q.napi.with_state(|st, off| st.install(m, off)));
        }
        q.napi.enable(dev, idx);
        q.napi.schedule();
        Ok(())
    }
}

/// The per-queue counters of `ethtool -S`: one table for names and values.
type RxField = fn(&RxStats) -> &Counter;
type TxField = fn(&TxStats) -> &Counter;
const RX_STATS: [(&str, RxField); 7] = [
    ("packets", |s| &s.packets),
    ("bytes", |s| &s.bytes),
    ("hds_packets", |s| &s.hds_packets),
    ("devmem_packets", |s| &s.devmem_packets),
    ("linear", |s| &s.linear),
    ("alloc_fail", |s| &s.alloc_fail),
    ("drops", |s| &s.drops),
];
const TX_STATS: [(&str, TxField); 4] = [
    ("packets", |t| &t.packets),
    ("bytes", |t| &t.bytes),
    ("dropped", |t| &t.dropped),
    ("stops", |t| &t.stops),
];

#[vtable]
impl EthtoolOps for Nic {
    const DRIVER: &'static kernel::str::CStr = c_str!("devmemnic");

    fn get_ringparam(_dev: &NetDev, data: &NicPriv) -> RingParams {
        RingParams {
            rx: RING_SIZE,
            rx_max: RING_SIZE,
            tx: RING_SIZE,
            tx_max: RING_SIZE,
            tcp_data_split: Some(data.me().header_split.load(Ordering::Relaxed)),
        }
    }

    fn set_ringparam(dev: &NetDev, data: &NicPriv, req: &RingParams, extack: &Extack) -> Result {
        if req.rx != RING_SIZE || req.tx != RING_SIZE {
            extack.msg(c_str!("devmemnic rings have a fixed size of 1024"));
            return Err(EINVAL);
        }
        // "auto" means on: splitting is what this NIC is for.
        let split = req.tcp_data_split.unwrap_or(true);
        let me = data.me();
        let active = dev.real_num_rx_queues();
        if !split && (0..active).any(|i| dev.rxq_has_provider(i)) {
            extack.msg(c_str!(
                "a devmem binding on this device needs TCP data split"
            ));
            return Err(EBUSY);
        }
        if me.header_split.load(Ordering::Relaxed) == split {
            return Ok(());
        }
        if !dev.is_running() {
            me.header_split.store(split, Ordering::Relaxed);
            return Ok(());
        }
        // Every queue's new memory is built before any queue changes: a failure
        // leaves the device as it was (old layout, old flag).
        let fresh = match Self::new_queue_mems(dev, data, 0..dev.real_num_rx_queues(), split) {
            Ok(fresh) => fresh,
            Err(e) => {
                extack.msg(c_str!("devmemnic: no memory for the new queue buffers"));
                return Err(e);
            }
        };
        me.header_split.store(split, Ordering::Relaxed);
        for (q, mem) in me.rxqs.iter().zip(fresh) {
            me.retire(q.napi.with_state(|st, off| st.install(mem, off)));
        }
        Ok(())
    }

    fn get_channels(dev: &NetDev, data: &NicPriv) -> Channels {
        let max = data.me().rxqs.len() as u32;
        Channels {
            max_rx: max,
            max_tx: max,
            rx: dev.real_num_rx_queues(),
            tx: dev.real_num_tx_queues(),
        }
    }

    fn set_channels(dev: &NetDev, data: &NicPriv, req: &Channels) -> Result {
        let max = data.me().rxqs.len() as u32;
        if req.rx == 0 || req.tx == 0 || req.rx > max || req.tx > max {
            return Err(EINVAL);
        }
        let me = data.me();
        let old_rx = dev.real_num_rx_queues();
        // What can fail comes first (memory for queues that become active, the
        // new RSS spread), so a failed request leaves the device as it was.
        let fresh = if dev.is_running() && req.rx > old_rx {
            Self::new_queue_mems(
                dev,
                data,
                old_rx..req.rx,
                me.header_split.load(Ordering::Relaxed),
            )?
        } else {
            KVec::new()
        };
        // The default RSS spread follows the channel count; a table set by the
        // user stays (the ethtool core refused shrinking below its entries).
        let spread = if dev.rxfh_configured() {
            None
        } else {
            // (Allocating: outside the RCU read side; rtnl keeps other writers out.)
            let mut n = me
                .steering
                .read_sleepable(|s| KBox::new(s.clone(), GFP_KERNEL))?;
            n.spread(req.rx);
            Some(n)
        };
        dev.set_real_num_queues(req.tx, req.rx)?;
        if dev.is_running() {
            // Queues that became active get memory; ones that went away lose it.
            for (q, mem) in me.rxqs.iter().skip(old_rx as usize).zip(fresh) {
                me.retire(q.napi.with_state(|st, off| st.install(mem, off)));
                q.napi.enable(dev, q.index);
            }
            for q in me
                .rxqs
                .iter()
                .skip(req.rx as usize)
                .take(old_rx.saturating_sub(req.rx) as usize)
            {
                q.napi.disable(dev, q.index);
                me.retire(q.napi.with_state(|st, off| st.take(off)));
                q.stats.drops.add_shared(q.ring.purge());
            }
        }
        if let Some(n) = spread {
            me.steering.update(|_| Ok(n))?;
        }
        Ok(())
    }

    fn get_rss(
        _dev: &NetDev,
        data: &NicPriv,
        key: &mut [u8; RSS_KEY_LEN],
        indir: &mut [u32; INDIR_SIZE],
    ) {
        data.me().steering.read(|s| {
            *key = s.key;
            *indir = s.indir;
        });
    }

    fn set_rss(
        dev: &NetDev,
        data: &NicPriv,
        key: Option<&[u8; RSS_KEY_LEN]>,
        indir: Option<&[u32; INDIR_SIZE]>,
        extack: &Extack,
    ) -> Result {
        if let Some(t) = indir {
            if t.iter().any(|&q| q >= dev.real_num_rx_queues()) {
                extack.msg(c_str!("indirection table names a queue that is not active"));
                return Err(EINVAL);
            }
        }
        data.me().steering.update(|s| {
            let mut n = KBox::new(s.clone(), GFP_KERNEL)?;
            if let Some(k) = key {
                n.key = *k;
            }
            if let Some(t) = indir {
                n.indir = *t;
            }
            Ok(n)
        })
    }

    const MAX_RULES: u32 = MAX_RULES as u32;

    fn rules(_dev: &NetDev, data: &NicPriv, out: &mut dyn FnMut(&NtupleRule)) {
        data.me().steering.read(|s| s.rules().iter().for_each(out));
    }

    fn insert_rule(
        dev: &NetDev,
        data: &NicPriv,
        mut rule: NtupleRule,
        loc: Option<u32>,
    ) -> Result<u32> {
        if rule.queue >= dev.real_num_rx_queues() {
            return Err(EINVAL);
        }
        let mut placed = 0;
        data.me().steering.update(|s| {
            let mut n = KBox::new(s.clone(), GFP_KERNEL)?;
            rule.loc = match loc {
                Some(l) => l,
                None => n.free_loc().ok_or(ENOSPC)?,
            };
            n.insert(rule).map_err(|InsertError::Full| ENOSPC)?;
            placed = rule.loc;
            Ok(n)
        })?;
        Ok(placed)
    }

    fn delete_rule(_dev: &NetDev, data: &NicPriv, loc: u32) -> Result {
        data.me().steering.update(|s| {
            let mut n = KBox::new(s.clone(), GFP_KERNEL)?;
            if !n.remove(loc) {
                return Err(ENOENT);
            }
            Ok(n)
        })
    }

    fn stat_names(_dev: &NetDev, data: &NicPriv, out: &mut dyn FnMut(&str)) {
        let me = data.me();
        let mut buf = [0u8; 32];
        for q in 0..me.rxqs.len() {
            for (n, _) in RX_STATS {
                out(fmt_name(&mut buf, "rx", q, n));
            }
        }
        for q in 0..me.txqs.len() {
            for (n, _) in TX_STATS {
                out(fmt_name(&mut buf, "tx", q, n));
            }
        }
    }

    fn stat_values(_dev: &NetDev, data: &NicPriv, out: &mut [u64]) {
        let me = data.me();
        let rx = me
            .rxqs
            .iter()
            .flat_map(|q| RX_STATS.iter().map(move |(_, f)| f(&q.stats).get()));
        let tx = me
            .txqs
            .iter()
            .flat_map(|t| TX_STATS.iter().map(move |(_, f)| f(t).get()));
        for (slot, v) in out.iter_mut().zip(Iterator::chain(rx, tx)) {
            *slot = v;
        }
    }
}

/// Formats `"{dir}{q}_{name}"` into `buf` (ethtool names are at most 31 bytes).
fn fmt_name<'a>(buf: &'a mut [u8; 32], dir: &str, q: usize, name: &str) -> &'a str {
    let mut w = crate::stats::ByteWriter::new(&mut buf[..31]);
    let _ = core::fmt::Write::write_fmt(&mut w, format_args!("{}{}_{}", dir, q, name));
    let n = w.len();
    core::str::from_utf8(&buf[..n]).unwrap_or("")
}
