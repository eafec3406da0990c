// SPDX-License-Identifier: GPL-2.0

//! The ethtool handlers: rings and TCP data split, channels, RSS, ntuple
//! rules, per-queue counters.

use super::{
    device::Nic,
    pair::NicPriv,
    queues,
    rx::RING_SIZE,
    stats::{RX_STATS, RX_STAT_NAMES, TX_STATS, TX_STAT_NAMES},
};
use crate::abstractions::{
    ethtool::{Channels, EthtoolOps, Extack, RingParams, TcpFlowRule},
    netdev::NetDev,
};
use crate::logic::{
    steering::{InsertError, NtupleRule, INDIR_SIZE, MAX_RULES},
    toeplitz::RSS_KEY_LEN,
};
use core::sync::atomic::Ordering;
use kernel::{c_str, prelude::*};

impl From<&TcpFlowRule> for NtupleRule {
    fn from(r: &TcpFlowRule) -> Self {
        NtupleRule {
            loc: r.loc,
            ipv6: r.ipv6,
            src: r.src,
            src_mask: r.src_mask,
            dst: r.dst,
            dst_mask: r.dst_mask,
            sport: r.sport,
            sport_mask: r.sport_mask,
            dport: r.dport,
            dport_mask: r.dport_mask,
            queue: r.queue,
        }
    }
}

impl From<&NtupleRule> for TcpFlowRule {
    fn from(r: &NtupleRule) -> Self {
        TcpFlowRule {
            loc: r.loc,
            ipv6: r.ipv6,
            src: r.src,
            src_mask: r.src_mask,
            dst: r.dst,
            dst_mask: r.dst_mask,
            sport: r.sport,
            sport_mask: r.sport_mask,
            dport: r.dport,
            dport_mask: r.dport_mask,
            queue: r.queue,
        }
    }
}

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
        let fresh = match queues::new_mems(dev, data, 0..active, split) {
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
            queues::new_mems(
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
            // (Allocating: outside the RCU read side; the ops locks keep other
            // writers out.)
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
                queues::stop_one(dev, data, q);
            }
        }
        if let Some(n) = spread {
            me.steering.update(|_| Ok(n))?;
        }
        Ok(())
    }

    const RSS_KEY_LEN: usize = RSS_KEY_LEN;
    const RSS_INDIR_SIZE: usize = INDIR_SIZE;

    fn get_rss(_dev: &NetDev, data: &NicPriv, key: &mut [u8], indir: &mut [u32]) {
        // (Sized by the abstraction from our constants; zip copies cannot panic.)
        data.me().steering.read(|s| {
            key.iter_mut().zip(s.key).for_each(|(d, v)| *d = v);
            indir.iter_mut().zip(s.indir).for_each(|(d, v)| *d = v);
        });
    }

    fn set_rss(
        dev: &NetDev,
        data: &NicPriv,
        key: Option<&[u8]>,
        indir: Option<&[u32]>,
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
                n.key.iter_mut().zip(k).for_each(|(d, v)| *d = *v);
            }
            if let Some(t) = indir {
                n.indir.iter_mut().zip(t).for_each(|(d, v)| *d = *v);
            }
            Ok(n)
        })
    }

    const MAX_RULES: u32 = MAX_RULES as u32;

    fn rules(_dev: &NetDev, data: &NicPriv, out: &mut dyn FnMut(&TcpFlowRule)) {
        data.me()
            .steering
            .read(|s| s.rules().iter().for_each(|r| out(&r.into())));
    }

    fn insert_rule(
        dev: &NetDev,
        data: &NicPriv,
        rule: TcpFlowRule,
        loc: Option<u32>,
    ) -> Result<u32> {
        if rule.queue >= dev.real_num_rx_queues() {
            return Err(EINVAL);
        }
        let mut rule = NtupleRule::from(&rule);
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

    const RX_QUEUE_STATS: &'static [&'static str] = &RX_STAT_NAMES;
    const TX_QUEUE_STATS: &'static [&'static str] = &TX_STAT_NAMES;

    fn rx_queue_stats(_dev: &NetDev, data: &NicPriv, q: u32, out: &mut [u64]) {
        if let Some(q) = data.me().rxqs.get(q as usize) {
            for (slot, (_, f)) in out.iter_mut().zip(RX_STATS.iter()) {
                *slot = f(&q.stats).get();
            }
        }
    }

    fn tx_queue_stats(_dev: &NetDev, data: &NicPriv, q: u32, out: &mut [u64]) {
        if let Some(t) = data.me().txqs.get(q as usize) {
            for (slot, (_, f)) in out.iter_mut().zip(TX_STATS.iter()) {
                *slot = f(t).get();
            }
        }
    }
}
