// SPDX-License-Identifier: GPL-2.0

//! The driver's header: every type its files share, declared once.
//!
//! As netdevsim keeps its types in `netdevsim.h`, every other file of the
//! driver builds on this one and on no neighbour of its own floor (see
//! `mod.rs`): the device type [`Nic`], each device's private data
//! [`NicPriv`], the state of a pair, [`PairState`] with its two [`Side`]s, a
//! stacked device's [`Stacked`], the queues a side holds ([`RxQueue`], its
//! poll's [`RxState`] and memory [`QueueMem`] with its aggregates
//! [`GroTable`], [`TxQueue`]), the shape a device is made with
//! ([`PairShape`], the MTU limits, [`new_side`]), the two steps of every
//! sender ([`steer`], [`enqueue`]), and the queues' counters, [`RxStats`] and
//! [`TxStats`]. Each type's behaviour is in the file of its concern (`rx/`,
//! `tx_completion.rs`, `queues.rs`, ...); besides the types, this file holds
//! only what they need here (constructors, accessors, the retired memory a
//! side keeps). That makes it the driver's longest file.
//!
//! Each queue counter is declared once, in the list of [`RxStats`] or
//! [`TxStats`]: that one line makes the field the datapath bumps, its
//! `ethtool -S` entry (`rx<N>_<name>`, `tx<N>_<name>`) and, with
//! `=> field`, the qstats field it reports as (`stats.rs` sums those for
//! the link counters).

use crate::abstractions::qstats::{QueueRxStats, QueueTxStats};
use crate::abstractions::{
    boxed::box_copy,
    debugfs::{DeviceDir, U32Dir, U32File, U32Knobs},
    delay::msleep,
    delayed_call::{DelayedCall, DelayedCallback},
    irq::{IrqDomain, IrqHandler, IrqLine},
    link::{IfName, LowerLink, NewLink},
    module_ref::ModuleRef,
    napi::Napi,
    netdev::{default_features, feature_gro_hw, NetDev, NetDevConfig},
    page_pool::{wait_for_provider_release, PagePool},
    params,
    platform::PlatformDevice,
    rcu::RcuBox,
    ring::SkbRing,
    skb::{flush_deferred_skbs, SkBuff},
    xdp::{XdpRxq, XdpSlot},
};
use crate::logic::{
    gro::{AgeLink, AgeOrder, Run},
    parse::parse_prefix,
    personality::{Personality, Profile},
    steering::Steering,
    toeplitz::DEFAULT_RSS_KEY,
    wire_faults::{Decision, DelayLine, FaultConfig, FaultState, HoldQueue},
};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::{
    c_str,
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
    sync::Mutex,
};

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
    /// Whether a rule inserted at any location takes the slot of one that
    /// matches the same flows (sfc, whose `context C action N` this device
    /// then offers too) rather than a free one (bnxt, mlx5, gve, fbnic).
    pub(crate) rules_replace_same_match: bool,
    /// Combined channels (an RX and a TX queue each; `ethtool -L combined`):
    /// the active queues beyond them are RX-only or TX-only channels.
    pub(crate) combined: AtomicU32,
    /// TX ring entries (`ethtool -G tx`): frames this device may have waiting
    /// in the receiving queue they were steered to before its TX queue stops.
    pub(crate) tx_ring: AtomicU32,
    /// Retired devmem queue memory whose buffers are still out (see `retire`).
    #[pin]
    pub(super) graveyard: Mutex<KVec<Option<QueueMem>>>,
    /// The faults of the wire this device receives from (`rx/wire.rs`).
    pub(crate) wire_faults: Arc<WireFaultKnobs>,
    /// `devmemnic/<parent>/wire_faults/`: the faults' knobs (without
    /// debugfs, none: the wire stays perfect).
    _wire_fault_files: Option<U32Dir<WireFaultKnobs>>,
    /// `devmemnic/<parent>/`, the device's debugfs directory.
    pub(crate) debugfs: Option<DeviceDir>,
    pub(crate) parent: PlatformDevice,
}

/// The faults a device's wire applies to what it receives: the fields of a
/// [`FaultConfig`], each a debugfs file (`devmemnic/<parent>/wire_faults/`).
pub(crate) struct WireFaultKnobs {
    seed: AtomicU32,
    drop_ppm: AtomicU32,
    burst_enter_ppm: AtomicU32,
    burst_exit_ppm: AtomicU32,
    duplicate_ppm: AtomicU32,
    reorder_ppm: AtomicU32,
    reorder_gap: AtomicU32,
    corrupt_ppm: AtomicU32,
    corrupt_from: AtomicU32,
    corrupt_to: AtomicU32,
    truncate_ppm: AtomicU32,
    delay_us: AtomicU32,
    jitter_us: AtomicU32,
    queues: AtomicU32,
}

impl WireFaultKnobs {
    /// No faults; when some are set, they hit any byte of any queue's frames.
    fn new() -> Self {
        let z = || AtomicU32::new(0);
        Self {
            seed: z(),
            drop_ppm: z(),
            burst_enter_ppm: z(),
            burst_exit_ppm: z(),
            duplicate_ppm: z(),
            reorder_ppm: z(),
            reorder_gap: AtomicU32::new(3),
            corrupt_ppm: z(),
            corrupt_from: z(),
            corrupt_to: AtomicU32::new(u32::MAX),
            truncate_ppm: z(),
            delay_us: z(),
            jitter_us: z(),
            queues: AtomicU32::new(u32::MAX),
        }
    }

    /// The faults as configured now.
    pub(crate) fn config(&self) -> FaultConfig {
        let get = |a: &AtomicU32| a.load(Ordering::Relaxed);
        FaultConfig {
            seed: get(&self.seed),
            drop_ppm: get(&self.drop_ppm),
            burst_enter_ppm: get(&self.burst_enter_ppm),
            burst_exit_ppm: get(&self.burst_exit_ppm),
            duplicate_ppm: get(&self.duplicate_ppm),
            reorder_ppm: get(&self.reorder_ppm),
            reorder_gap: get(&self.reorder_gap),
            corrupt_ppm: get(&self.corrupt_ppm),
            corrupt_from: get(&self.corrupt_from),
            corrupt_to: get(&self.corrupt_to),
            truncate_ppm: get(&self.truncate_ppm),
            delay_us: get(&self.delay_us),
            jitter_us: get(&self.jitter_us),
            queues: get(&self.queues),
        }
    }
}

impl U32Knobs for WireFaultKnobs {
    const FILES: &'static [U32File<Self>] = &[
        (c_str!("seed"), 0o600, |k| &k.seed),
        (c_str!("drop_ppm"), 0o600, |k| &k.drop_ppm),
        (c_str!("burst_enter_ppm"), 0o600, |k| &k.burst_enter_ppm),
        (c_str!("burst_exit_ppm"), 0o600, |k| &k.burst_exit_ppm),
        (c_str!("duplicate_ppm"), 0o600, |k| &k.duplicate_ppm),
        (c_str!("reorder_ppm"), 0o600, |k| &k.reorder_ppm),
        (c_str!("reorder_gap"), 0o600, |k| &k.reorder_gap),
        (c_str!("corrupt_ppm"), 0o600, |k| &k.corrupt_ppm),
        (c_str!("corrupt_from"), 0o600, |k| &k.corrupt_from),
        (c_str!("corrupt_to"), 0o600, |k| &k.corrupt_to),
        (c_str!("truncate_ppm"), 0o600, |k| &k.truncate_ppm),
        (c_str!("delay_us"), 0o600, |k| &k.delay_us),
        (c_str!("jitter_us"), 0o600, |k| &k.jitter_us),
        (c_str!("queues"), 0o600, |k| &k.queues),
    ];
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

/// A stacked device's state: its queues and the lower device.
#[pin_data(PinnedDrop)]
pub(crate) struct Stacked {
    #[pin]
    pub(crate) side: Side,
    pub(super) lower: LowerLink,
    /// The lower device's name, to take it again when a device of that name
    /// comes back.
    #[pin]
    pub(super) lower_name: Mutex<IfName>,
    /// Whether the device got registered: only then can its queues have
    /// held memory to wait for. (A device that never was goes under rtnl,
    /// where flushing the system workqueue could wait for rtnl.)
    pub(super) registered: AtomicBool,
}

#[pinned_drop]
impl PinnedDrop for Stacked {
    fn drop(self: Pin<&mut Self>) {
        // The device is unregistered (its queues stopped, memory retired):
        // as a pair's teardown does, let devmem buffers still out return
        // while the parent lives.
        if self.registered.load(Ordering::Relaxed) {
            self.side.wait_for_buffers();
            wait_for_provider_release();
        }
    }
}

/// One RX queue: the ring the peer fills and the NAPI that empties it.
#[pin_data]
pub(crate) struct RxQueue {
    /// Polls the queue when its held aggregates may be due (`rx-gro-hw`).
    /// Declared before the fields its call uses (`napi`, `irq`); its drop
    /// disables it, so the poll, which re-arms it, cannot once it is gone.
    #[pin]
    gro_timer: DelayedCall,
    /// Declared before the fields the poll uses: its drop stops a NAPI still
    /// polling (a bug it warns about: queues are deactivated first).
    #[pin]
    pub(crate) napi: Napi<RxState>,
    /// The queue's interrupt: raised by the sender when a frame lands on an
    /// idle ring, masked until the poll that follows completes. Raised only
    /// while the queue is active (a running device's sender, the queue's own
    /// poll), so never while the queue is being dropped.
    pub(crate) irq: IrqLine,
    pub(crate) ring: SkbRing,
    pub(crate) stats: RxStats,
    pub(crate) index: u32,
    /// A peer TX queue stopped on this full ring since the last poll that
    /// took frames: that poll wakes the peer's stopped queues (set after the
    /// stop, so a poll that misses it leaves the sender's own recheck to wake).
    pub(crate) sender_stopped: AtomicBool,
    /// TX completions were posted for this channel's TX queues since its poll
    /// last reaped them (see `tx_completion.rs`).
    pub(crate) tx_done: AtomicBool,
    /// The queue's delaying wire (`rx/wire.rs`) is full: the frames on the
    /// ring wait for its first to arrive (the queue's timer), not for a poll.
    pub(super) wire_full: AtomicBool,
    /// Header-split threshold: TCP frames with at most this much payload per
    /// segment are received whole (`ethtool -G hds-thresh`).
    hds_thresh: AtomicU32,
    /// Held while the kernel has a memory provider on this queue.
    #[pin]
    pub(super) binding_ref: Mutex<Option<ModuleRef>>,
}

crate::impl_has_napi!(RxQueue, napi);
crate::impl_has_irq_line!(RxQueue, irq);
crate::impl_has_delayed_call!(RxQueue, gro_timer);

impl IrqHandler for RxQueue {
    fn handle_irq(&self) {
        // NAPI scheduled: its completion unmasks. Not scheduled (the queue is
        // stopped, or the core holds NAPI disabled for a moment): unmask now, or
        // frames arriving after the queue restarts would never raise the line.
        if !self.napi.schedule() {
            self.irq.unmask();
        }
    }
}

impl RxQueue {
    /// RX queue `index` with a ring of `ring` entries and header-split
    /// threshold `hds_thresh`.
    pub(crate) fn new(index: u32, ring: u32, hds_thresh: u32) -> Result<impl PinInit<Self, Error>> {
        let ring = SkbRing::new(ring)?;
        Ok(try_pin_init!(Self {
            gro_timer <- DelayedCall::new(),
            napi <- Napi::new(RxState::new()),
            irq: IrqLine::new(),
            ring,
            stats: RxStats::default(),
            index,
            sender_stopped: AtomicBool::new(false),
            tx_done: AtomicBool::new(false),
            wire_full: AtomicBool::new(false),
            hds_thresh: AtomicU32::new(hds_thresh),
            binding_ref <- kernel::new_mutex!(None),
        }? Error))
    }

    /// Polls the queue once, on the CPU of its interrupt, as a NIC raises a
    /// queue's vector when it is (re)enabled: the poll takes what is on the
    /// ring and unmasks the line (a raise while the queue was stopped left it
    /// masked).
    pub(crate) fn kick(&self) {
        self.irq.unmask();
        self.irq.trigger();
    }

    /// The header-split threshold.
    pub(crate) fn hds_thresh(&self) -> u32 {
        self.hds_thresh.load(Ordering::Relaxed)
    }

    /// Sets the header-split threshold (from the next frame on).
    pub(crate) fn set_hds_thresh(&self, t: u32) {
        self.hds_thresh.store(t, Ordering::Relaxed)
    }
}

/// What a queue's poll owns.
pub(crate) struct RxState {
    pub(super) mem: Option<QueueMem>,
    /// An XDP program redirected a frame in this poll (to flush before it ends).
    pub(super) xdp_redirected: bool,
    /// Frames of aggregates dropped when their memory left the queue, not
    /// yet counted.
    pub(super) discarded: u64,
    /// The queue's wire, when faults are on (`rx/wire.rs`).
    pub(super) wire: WireState,
}

impl RxState {
    pub(crate) fn new() -> Self {
        Self {
            mem: None,
            xdp_redirected: false,
            discarded: 0,
            wire: WireState {
                config: FaultConfig::default(),
                faults: None,
                held: HoldQueue::new(),
                delayed: DelayLine::new(),
            },
        }
    }
}

/// What a queue's wire keeps between frames.
pub(crate) struct WireState {
    /// The configuration last seen (a change starts the sequence again).
    pub(super) config: FaultConfig,
    /// The generator, while faults are on for this queue.
    pub(super) faults: Option<FaultState>,
    /// Frames held back (reordered).
    pub(super) held: HoldQueue<HeldFrame>,
    /// Frames on the wire still, when it delays them.
    pub(super) delayed: DelayLine<SkBuff>,
}

impl WireState {
    /// Starts the fault sequence again from the seed at the next frame.
    pub(crate) fn restart(&mut self) {
        self.config = FaultConfig::default();
        self.faults = None;
    }
}

/// A frame the wire holds back, and what else it does to it.
pub(crate) struct HeldFrame {
    pub(super) frame: SkBuff,
    pub(super) fault: Decision,
}

/// A queue's buffers: header/linear pool (host memory) and payload pool, and
/// the aggregates built on them.
pub(crate) struct QueueMem {
    /// Registered with `header` as its memory model: dropped first.
    pub(super) xdp_rxq: XdpRxq,
    pub(super) header: PagePool,
    pub(super) payload: PagePool,
    pub(super) split: bool,
    /// The kernel attached a memory provider (devmem) to the payload pool.
    pub(super) devmem: bool,
    /// Where frames go: the device's personality when this memory was built
    /// (it changes only while the device is down, without queue memory).
    pub(super) profile: &'static Profile,
    pub(super) gro: GroTable,
}

impl QueueMem {
    /// Whether the payload pool got a memory provider (devmem) from the kernel.
    pub(crate) fn is_devmem(&self) -> bool {
        self.devmem
    }

    /// The header (host) pool and the payload pool.
    pub(crate) fn pools(&self) -> (&PagePool, &PagePool) {
        (&self.header, &self.payload)
    }

    /// Payload buffers still out (in skbs, sockets, or userspace as tokens).
    pub(crate) fn outstanding(&self) -> isize {
        self.payload.outstanding()
    }

    /// Logs the payload pool's accounting (debug).
    pub(crate) fn debug(&self) {
        self.payload.debug()
    }

    /// Whether this memory splits TCP headers from payload.
    pub(crate) fn splits(&self) -> bool {
        self.split
    }
}

/// A held aggregate.
pub(crate) struct Held {
    /// The first frame's skb, payload of merged frames appended.
    pub(crate) skb: SkBuff,
    /// What merging tracks (first segment, count, next sequence number).
    pub(crate) run: Run,
    /// The receive hash to report, and whether it is L4.
    pub(crate) hash: u32,
    pub(crate) l4: bool,
    /// The first frame's payload went to the payload pool (header split).
    pub(crate) split: bool,
    /// Bytes of the frames merged, as they were on the wire.
    pub(crate) wire_bytes: u64,
    /// When it started: set by `GroTable::hold`.
    pub(crate) started_ns: u64,
}

/// Where a segment's flow stands in the table.
pub(crate) enum Slot {
    /// An aggregate of the flow is held here.
    Held(usize),
    /// The flow may start one here.
    Free(usize),
    /// Every slot the flow may take is busy with other flows.
    Full,
}

/// A queue's aggregation slots.
pub(crate) struct GroTable {
    pub(super) slots: KVVec<Option<Held>>,
    /// Each slot's place in `order`.
    pub(super) ages: KVVec<AgeLink>,
    /// The held aggregates' slots, oldest first.
    pub(super) order: AgeOrder,
    pub(super) held: usize,
    /// When the queue last took a frame.
    pub(super) last_rx_ns: u64,
}

/// One TX queue: its counters and its descriptor ring's state.
#[derive(Default)]
pub(crate) struct TxQueue {
    pub(crate) stats: TxStats,
    /// Descriptors in use: frames posted and not yet reaped (at most `tx_ring`
    /// while the ring size stays).
    pub(super) in_flight: AtomicU32,
    /// Completions the wire posted that the channel's NAPI has not reaped.
    pub(super) completed: AtomicU32,
}

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
    let rules_replace_same_match = shape.rss_queue_offset;
    steering.reset(DEFAULT_RSS_KEY, queues);
    let wire_faults = Arc::new(WireFaultKnobs::new(), GFP_KERNEL)?;
    let debugfs = DeviceDir::new(&parent);
    let wire_fault_files = debugfs
        .as_ref()
        .and_then(|d| U32Dir::new(d, c_str!("wire_faults"), wire_faults.clone()));
    Ok(try_pin_init!(Side {
        reaper <- DelayedCall::new(),
        rxqs,
        _irqs: irqs,
        txqs,
        steering <- RcuBox::new(steering),
        xdp: XdpSlot::new(),
        personality: AtomicU8::new(personality.index() as u8),
        header_split: AtomicBool::new(profile.split_default),
        rules_replace_same_match,
        combined: AtomicU32::new(queues),
        tx_ring: AtomicU32::new(profile.ring_default),
        graveyard <- kernel::new_mutex!(KVec::new()),
        wire_faults,
        _wire_fault_files: wire_fault_files,
        debugfs,
        parent,
    }? Error))
}

/// The shape of a device `ip link add` makes: the module's queue count
/// (within the `queues` the core allocated), personality and RSS rule style.
pub(crate) fn link_shape(queues: u32) -> PairShape {
    PairShape {
        queues: params::queues().clamp(1, queues),
        max_queues: queues,
        rss_queue_offset: params::rss_queue_offset(),
        personality: Personality::from_name(params::personality()).unwrap_or(Personality::Strict),
    }
}

/// The settings of a device `ip link add` makes, shaped `shape`.
pub(crate) fn link_config<'a>(new: &'a NewLink<'a>, shape: &PairShape) -> NetDevConfig<'a> {
    let (tx_queues, rx_queues) = new.queue_counts();
    device_config(new.name(), tx_queues, rx_queues, shape)
}

/// Bytes of a frame the transmit side reads to steer it.
const STEER_PEEK: usize = 128;

/// Where the peer's steering puts `skb` (an RX queue of `target`, the peer
/// side, `active` queues in use) and the hash it reports.
pub(super) fn steer<'a>(
    dev: &NetDev,
    peer: &NetDev,
    target: &'a Side,
    skb: &SkBuff,
    active: u32,
) -> Option<(&'a RxQueue, u32, bool)> {
    let mut peek = [0u8; STEER_PEEK];
    let n = skb.len().min(STEER_PEEK);
    let key = match skb.read_as_device(Some(dev), 0, &mut peek[..n]) {
        Ok(()) => parse_prefix(&peek[..n], skb.len()).key,
        Err(_) => None,
    };
    let ntuple = peer.ntuple_enabled();
    let decision = target
        .steering
        .read(|s| s.decide(key.as_ref(), ntuple, active));
    let q = target.rxqs.get(decision.queue as usize)?;
    Some((q, decision.hash, decision.l4))
}

/// Produces `skb` onto the ring of RX queue `q` and raises the queue's
/// interrupt, as a NIC's DMA engine writes a descriptor and signals it;
/// hands the frame back when the ring is full.
pub(super) fn enqueue(q: &RxQueue, skb: SkBuff) -> core::result::Result<(), SkBuff> {
    q.ring.produce(skb, q.ring.size())?;
    q.irq.trigger();
    Ok(())
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
        /// Frames shorter than Ethernet's 60-byte minimum, taken in with the
        /// zeros the sending NIC padded them with (in the payload buffer
        /// when split: the stack trims them).
        padded,
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
        /// Frames dropped before device memory, their sum neither verified
        /// nor reported complete (`rx-checksumming off`, a bad sum, or not
        /// a segment the device checks), which the stack could not check
        /// there either (counted in `drops` too).
        csum_unverified,
        /// Frames reported `CHECKSUM_COMPLETE` (the mlx5 personality): their
        /// sum is the stack's to check, good or bad.
        csum_complete,
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
        /// Payload placed back to back that continued its skb's last frag in
        /// the same buffer, so extended it instead of taking a frag (and, in
        /// device memory, a token) of its own.
        frags_extended,
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
        /// Frames the wire lost (its faults, `rx/wire.rs`), and of those the
        /// ones lost in bursts.
        wire_lost,
        wire_burst_lost,
        /// Frames the wire delivered twice, held back behind later frames,
        /// with a byte corrupted, cut short.
        wire_duplicated,
        wire_reordered,
        wire_corrupted,
        wire_truncated,
        /// Frames the wire delayed (every frame, while a delay is set).
        wire_delayed,
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
