// SPDX-License-Identifier: GPL-2.0

//! RX queue memory over a queue's life: built on open, rebuilt when header
//! split or the channel count changes, and swapped by the kernel's queue
//! management API (`netdev_rx_queue_restart()`: memory provider bind/unbind).

use super::{
    nic::{GroTable, Nic, NicPriv, QueueMem, RxQueue, RxState},
    personality, tx_completion,
};
use crate::abstractions::{
    errno::enetdown,
    module_ref::ModuleRef,
    napi::{Napi, NapiOff},
    netdev::NetDev,
    page_pool::{PagePool, PoolConfig},
    params::kernel_version,
    queue_mgmt::{current_config, QueueConfig, QueueMgmt},
    xdp::XdpRxq,
};
use crate::logic::personality::{Profile, ERANGE};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// Pool sizes (recycling ring entries).
const HEADER_POOL_SIZE: u32 = 1024;
const PAYLOAD_POOL_SIZE: u32 = 2048;

impl QueueMem {
    /// Creates the pools of RX queue `q` of `dev` for `cfg`: headers in pages,
    /// payload in buffers of `cfg.rx_page_size`; with `split`, the payload pool
    /// accepts a memory provider (what lets a devmem binding or an io_uring
    /// zcrx area attach). Under the ops locks.
    pub(crate) fn new(
        dev: &NetDev,
        q: &RxQueue,
        split: bool,
        profile: &'static Profile,
        cfg: &QueueConfig,
    ) -> Result<Self> {
        let order = cfg.order().ok_or(EINVAL)?;
        let header = PagePool::new(&PoolConfig {
            dma_dev: dev.dma_dev(),
            napi: &q.napi,
            netdev: dev,
            queue: q.index,
            size: HEADER_POOL_SIZE,
            order: 0,
            allow_unreadable: false,
        })?;
        let payload = PagePool::new(&PoolConfig {
            dma_dev: dev.dma_dev(),
            napi: &q.napi,
            netdev: dev,
            queue: q.index,
            size: PAYLOAD_POOL_SIZE,
            order,
            allow_unreadable: split,
        })?;
        let devmem = payload.has_provider();
        Ok(Self {
            xdp_rxq: XdpRxq::new(dev, q.index, &header)?,
            header,
            payload,
            split,
            devmem,
            profile,
            gro: GroTable::new()?,
        })
    }
}

impl RxState {
    /// Swaps in new memory, handing back the old (see [`RxState::take`]).
    /// The queue's wire starts its fault sequence again from the seed (see
    /// `rx/wire.rs`), as on every configuration change.
    pub(crate) fn install(&mut self, mem: QueueMem, off: &NapiOff) -> Option<QueueMem> {
        let old = self.take(off);
        mem.header.attach_napi(off);
        mem.payload.attach_napi(off);
        self.mem = Some(mem);
        self.wire.restart();
        old
    }

    /// Takes the memory out; its pools leave the NAPI, which may run again on
    /// other memory before these are freed (see `Side::retire`).
    /// Aggregates still held are dropped with it (a ring reset drops what a
    /// NIC holds; counted in `gro_discarded` at the next poll): they must not
    /// keep payload buffers out of a retired pool.
    pub(crate) fn take(&mut self, off: &NapiOff) -> Option<QueueMem> {
        let mut mem = self.mem.take()?;
        let mut discarded = 0;
        mem.gro.drain(|h| discarded += u64::from(h.run.count));
        self.discarded += discarded;
        mem.header.detach_napi(off);
        mem.payload.detach_napi(off);
        Some(mem)
    }

    /// Drops the frames the wire holds back or still carries (`rx/wire.rs`),
    /// as the ring's are when the queue stops; returns how many.
    fn drop_held(&mut self) -> u64 {
        let mut n = 0;
        while self.wire.held.pop_due(true).is_some() {
            n += 1;
        }
        while self.wire.delayed.arrive(0, true).is_some() {
            n += 1;
        }
        n
    }

    /// The memory in use, if any.
    pub(crate) fn mem(&self) -> Option<&QueueMem> {
        self.mem.as_ref()
    }
}

impl RxQueue {
    /// Keeps the module loaded exactly while a memory provider sits on this
    /// queue: a devmem binding's dma-buf attachment points at our parent device
    /// and outlives the net device. Called wherever the kernel may have changed
    /// the binding (it always restarts the queue after binding and unbinding).
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

/// Builds (or rebuilds) the memory of every active RX queue of an up device.
pub(crate) fn start_all(dev: &NetDev, data: &NicPriv) -> Result {
    let me = data.me();
    let split = me.header_split.load(Ordering::Relaxed);
    let active = dev.real_num_rx_queues();
    for q in me.rxqs.iter().take(active as usize) {
        q.refresh_binding(dev);
        let mem = QueueMem::new(dev, q, split, me.profile(), &current_config(dev, q.index))?;
        me.retire(q.napi.with_state(|st, off| st.install(mem, off)));
        Napi::activate(q.as_ref(), dev, q.index);
        q.kick();
    }
    Ok(())
}

/// Stops every RX queue: NAPI off, memory retired, ring purged.
pub(crate) fn stop_all(dev: &NetDev, data: &NicPriv) {
    for q in data.me().rxqs.iter() {
        stop_one(dev, data, q);
    }
}

/// Stops one RX queue: NAPI off and removed from the device, memory retired,
/// ring and the frames its wire held back purged (counted as drops; the wire
/// took those frames, so their senders' descriptors complete).
pub(crate) fn stop_one(dev: &NetDev, data: &NicPriv, q: &RxQueue) {
    q.napi.deactivate(dev, q.index);
    data.me().retire(q.napi.with_state(|st, off| st.take(off)));
    let mut purged = q.napi.with_state(|st, _| st.drop_held());
    q.wire_full.store(false, Ordering::Relaxed);
    while let Some(frame) = q.ring.consume() {
        let txq = frame.queue_mapping();
        drop(frame);
        if let Some(sender) = dev.peer() {
            tx_completion::post_completions(sender, txq, 1);
        }
        purged += 1;
    }
    q.stats.drops.add_shared(purged);
}

/// New memory for RX queues `range` (indices), all or none.
pub(crate) fn new_mems(
    dev: &NetDev,
    data: &NicPriv,
    range: core::ops::Range<u32>,
    split: bool,
) -> Result<KVec<QueueMem>> {
    let rxqs = &data.me().rxqs;
    let mut mems = KVec::with_capacity(range.len(), GFP_KERNEL)?;
    for q in rxqs.iter().skip(range.start as usize).take(range.len()) {
        let cfg = current_config(dev, q.index);
        mems.push(
            QueueMem::new(dev, q, split, data.me().profile(), &cfg)?,
            GFP_KERNEL,
        )?;
    }
    Ok(mems)
}

#[vtable]
impl QueueMgmt for Nic {
    type QueueMem = QueueMem;

    fn queue_mem_alloc(
        dev: &NetDev,
        data: &NicPriv,
        cfg: &QueueConfig,
        idx: u32,
    ) -> Result<QueueMem> {
        Self::validate_config(dev, data, cfg)?;
        let q = data.me().rxqs.get(idx as usize).ok_or(EINVAL)?;
        // A provider being bound: refused where this NIC's driver refuses it
        // (on the kernel under test), before the binding is counted: the
        // core then drops the provider without another restart.
        if dev.rxq_has_provider(idx) {
            let p = data.me().profile();
            p.devmem_rx(kernel_version()).map_err(personality::error)?;
            if p.queue0_unbindable && idx == 0 {
                return Err(personality::error(ERANGE));
            }
        }
        // Binding and unbinding both end in a restart: see what changed first.
        q.refresh_binding(dev);
        if idx >= dev.real_num_rx_queues() {
            return Err(EINVAL);
        }
        // (The device may be down: the core then frees this memory at once, and
        // the queue gets fresh memory, with any provider, on open.)
        let me = data.me();
        QueueMem::new(
            dev,
            q,
            me.header_split.load(Ordering::Relaxed),
            me.profile(),
            cfg,
        )
    }

    fn queue_stop(dev: &NetDev, data: &NicPriv, idx: u32) -> Result<Option<QueueMem>> {
        let q = data.me().rxqs.get(idx as usize).ok_or(EINVAL)?;
        // Only a running queue stops (some cores restart without checking; a
        // refusal here fails the restart before anything changed).
        if !dev.is_running() {
            return Err(enetdown());
        }
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
        if !dev.is_running() {
            return Err(enetdown());
        }
        if let Some(m) = mem.take() {
            let me = data.me();
            me.retire(q.napi.with_state(|st, off| st.install(m, off)));
        }
        q.napi.enable(dev, idx);
        q.kick();
        Ok(())
    }

    fn default_config(_dev: &NetDev, _data: &NicPriv) -> QueueConfig {
        QueueConfig::page_sized()
    }

    fn validate_config(_dev: &NetDev, data: &NicPriv, cfg: &QueueConfig) -> Result {
        // Payload buffers of a power of two from a page to MAX_RX_BUF bytes,
        // within what this NIC takes.
        let page = kernel::page::PAGE_SIZE as u32;
        data.me()
            .profile()
            .rx_page_size_ok(cfg.rx_page_size, page)
            .map_err(personality::error)?;
        match cfg.order() {
            Some(_) if cfg.rx_page_size <= MAX_RX_BUF => Ok(()),
            _ => Err(EINVAL),
        }
    }

    const SUPPORTS_RX_PAGE_SIZE: bool = true;
}

/// Largest RX payload buffer a queue takes (what a memory provider such as
/// io_uring zcrx may ask for).
pub(crate) const MAX_RX_BUF: u32 = 64 * 1024;
const _: () = assert!(MAX_RX_BUF as usize <= kernel::page::PAGE_SIZE << PagePool::MAX_ORDER);
