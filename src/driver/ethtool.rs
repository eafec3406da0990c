// SPDX-License-Identifier: GPL-2.0

//! The ethtool handlers: rings and TCP data split, channels, RSS, ntuple
//! rules, per-queue counters, private flags (the personality). Limits and
//! refusals are the device's personality's (`logic::personality`).

use super::{
    nic::{Nic, NicPriv, RxStats, TxStats},
    personality, queues, tx_completion,
};
use crate::abstractions::{
    boxed::box_copy,
    errno::eopnotsupp,
    ethtool::{
        Channels, EthtoolOps, Extack, FlowRule, HashFields, HashedFlow, RingParams, RuleSpace,
    },
    napi::Napi,
    netdev::NetDev,
};
use crate::logic::{
    personality::{Personality, RuleLocations},
    steering::{
        hash_class, InsertError, HASH_ADDRS, HASH_IP_DST, HASH_IP_SRC, HASH_L4_DST, HASH_L4_SRC,
        INDIR_SIZE, MAX_RSS_CONTEXTS, MAX_RULES,
    },
    toeplitz::RSS_KEY_LEN,
};
use core::sync::atomic::Ordering;
use kernel::{c_str, prelude::*};

#[vtable]
impl EthtoolOps for Nic {
    const DRIVER: &'static kernel::str::CStr = c_str!("devmemnic");

    fn get_ringparam(_dev: &NetDev, data: &NicPriv) -> RingParams {
        let me = data.me();
        let p = me.profile();
        RingParams {
            rx: me.rxqs.first().map_or(0, |q| q.ring.size()),
            rx_max: p.ring_max,
            tx: me.tx_ring.load(Ordering::Relaxed),
            tx_max: p.ring_max,
            tcp_data_split: Some(me.header_split.load(Ordering::Relaxed)),
            hds_thresh: me.rxqs.first().map(|q| q.hds_thresh()),
            hds_thresh_max: p.hds_thresh.map_or(0, |h| h.max),
        }
    }

    fn set_ringparam(dev: &NetDev, data: &NicPriv, req: &RingParams, extack: &Extack) -> Result {
        let me = data.me();
        let p = me.profile();
        // Everything that can be refused is checked, and everything that can
        // fail is done, before anything changes: a failed request leaves the
        // device as it was.
        if !p.ring_ok(req.rx) || !p.ring_ok(req.tx) {
            extack.msg(c_str!(
                "ring size out of this NIC's range (ethtool -g shows the maximum)"
            ));
            return Err(EINVAL);
        }
        let current = me.header_split.load(Ordering::Relaxed);
        // "auto": on where this NIC splits by default (strict, bnxt, fbnic),
        // else no change (gve, mlx5).
        let split = req.tcp_data_split.unwrap_or(p.split_default || current);
        let active = dev.real_num_rx_queues();
        let bound = (0..active).any(|i| dev.rxq_has_provider(i));
        if !split {
            if let Some(msg) = p.split_off_refused {
                extack.msg_c(msg);
                return Err(EINVAL);
            }
        }
        if split && !current && p.split_needs_gro_hw && !dev.gro_hw_enabled() {
            extack.msg(c_str!(
                "TCP-data-split is not supported when GRO HW is disabled"
            ));
            return Err(EINVAL);
        }
        if !split && bound {
            extack.msg(c_str!(
                "a devmem binding on this device needs TCP data split"
            ));
            return Err(EBUSY);
        }
        let old_thresh = me.rxqs.first().map_or(0, |q| q.hds_thresh());
        if let Some(t) = req.hds_thresh.filter(|&t| t != old_thresh) {
            let Some(h) = p.hds_thresh else {
                extack.msg(c_str!("setting hds-thresh is not supported"));
                return Err(eopnotsupp());
            };
            if t > h.max {
                extack.msg(c_str!("hds-thresh is above hds-thresh-max"));
                return Err(EINVAL);
            }
            if t != 0 && bound {
                extack.msg(c_str!("a devmem binding on this device needs hds-thresh 0"));
                return Err(EBUSY);
            }
        }
        let split_changes = me.header_split.load(Ordering::Relaxed) != split;
        // Every queue's new memory is built before any queue changes.
        let fresh = if split_changes && dev.is_running() {
            match queues::new_mems(dev, data, 0..active, split) {
                Ok(fresh) => Some(fresh),
                Err(e) => {
                    extack.msg(c_str!("devmemnic: no memory for the new queue buffers"));
                    return Err(e);
                }
            }
        } else {
            None
        };
        // (In place, queued frames kept; all or none.)
        if let Err(e) = me.resize_rx_rings(req.rx) {
            extack.msg(c_str!(
                "devmemnic: an RX ring holds more frames than the new size (or no memory)"
            ));
            return Err(e);
        }
        me.tx_ring.store(req.tx, Ordering::Relaxed);
        // A larger ring has room for queues stopped on the old one's fill.
        tx_completion::wake_with_room(dev, me);
        if let Some(t) = req.hds_thresh {
            // (Read per frame by each queue's poll: a change applies from the
            // next frame on, with no queue restart.)
            me.rxqs.iter().for_each(|q| q.set_hds_thresh(t));
        }
        me.header_split.store(split, Ordering::Relaxed);
        if let Some(fresh) = fresh {
            for (q, mem) in me.rxqs.iter().zip(fresh) {
                me.retire(q.napi.with_state(|st, off| st.install(mem, off)));
            }
        }
        Ok(())
    }

    fn get_channels(dev: &NetDev, data: &NicPriv) -> Channels {
        let me = data.me();
        let max = me.rxqs.len() as u32;
        let (rx, tx) = (dev.real_num_rx_queues(), dev.real_num_tx_queues());
        let combined = me.combined.load(Ordering::Relaxed).min(rx).min(tx);
        Channels {
            max_rx: max,
            max_tx: max,
            max_combined: max,
            rx: rx - combined,
            tx: tx - combined,
            combined,
        }
    }

    fn set_channels(dev: &NetDev, data: &NicPriv, req: &Channels) -> Result {
        let me = data.me();
        let max = me.rxqs.len() as u32;
        // Combined channels count on both sides; RX-only and TX-only ones
        // come on top of them.
        let (Some(rx), Some(tx)) = (
            req.combined.checked_add(req.rx),
            req.combined.checked_add(req.tx),
        ) else {
            return Err(EINVAL);
        };
        if rx == 0 || tx == 0 || rx > max || tx > max {
            return Err(EINVAL);
        }
        // Queues a rule or an RSS context names stay active (the core checks
        // too, but 6.12's skips rules that name a context).
        if me.steering.read(|s| s.queues_needed()) > rx {
            return Err(EINVAL);
        }
        let old_rx = dev.real_num_rx_queues();
        // What can fail comes first (memory for queues that become active, the
        // new RSS spread), so a failed request leaves the device as it was.
        let fresh = if dev.is_running() && rx > old_rx {
            queues::new_mems(
                dev,
                data,
                old_rx..rx,
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
            let mut n = me.steering.read_sleepable(|s| box_copy(s, GFP_KERNEL))?;
            n.spread(rx);
            Some(n)
        };
        dev.set_real_num_queues(tx, rx)?;
        if dev.is_running() {
            // Queues that became active get memory; ones that went away lose it.
            for (q, mem) in me.rxqs.iter().skip(old_rx as usize).zip(fresh) {
                me.retire(q.napi.with_state(|st, off| st.install(mem, off)));
                Napi::activate(q.as_ref(), dev, q.index);
            }
            for q in me
                .rxqs
                .iter()
                .skip(rx as usize)
                .take(old_rx.saturating_sub(rx) as usize)
            {
                queues::stop_one(dev, data, q);
            }
            // Every active queue polls once: a sender that saw the old count
            // may have queued a frame on a new queue after it stopped, and TX
            // queues now map to other channels, which reap the completions
            // posted to the channels that served them before.
            for q in me.rxqs.iter().take(rx as usize) {
                q.kick();
            }
        }
        me.combined.store(req.combined, Ordering::Relaxed);
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
            indir.iter_mut().zip(&s.indir).for_each(|(d, v)| *d = *v);
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
            let mut n = box_copy(s, GFP_KERNEL)?;
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

    fn rules(_dev: &NetDev, data: &NicPriv, out: &mut dyn FnMut(&FlowRule)) {
        data.me().steering.read(|s| s.rules().iter().for_each(out));
    }

    fn rule_space(_dev: &NetDev, data: &NicPriv) -> RuleSpace {
        let p = data.me().profile();
        RuleSpace {
            max: p.max_rules,
            driver_picks_location: p.rule_locations != RuleLocations::ExplicitOnly,
        }
    }

    fn insert_rule(dev: &NetDev, data: &NicPriv, rule: FlowRule, loc: Option<u32>) -> Result<u32> {
        let p = data.me().profile();
        match (p.rule_locations, loc) {
            // (bnxt and fbnic place rules themselves; mlx5 and gve take the
            // location ethtool picked, and have no "any".)
            (RuleLocations::AnyOnly, Some(_)) => return Err(EINVAL),
            (RuleLocations::ExplicitOnly, None) => return Err(ENOSPC),
            (_, Some(l)) if l >= p.max_rules => return Err(EINVAL),
            _ => {}
        }
        let active = dev.real_num_rx_queues();
        let mut rule = rule;
        let mut placed = 0;
        let replace_same = data.me().rules_replace_same_match;
        data.me().steering.update(|s| {
            // Every queue the rule can pick must be active: its own, or its
            // offset plus each entry of the context's table.
            match s.highest_queue(&rule) {
                Some(q) if q < active => {}
                _ => return Err(EINVAL),
            }
            let mut n = box_copy(s, GFP_KERNEL)?;
            rule.loc = match loc {
                Some(l) => l,
                None => n.loc_for(&rule, replace_same).ok_or(ENOSPC)?,
            };
            let replaces = n.rules().iter().any(|r| r.loc == rule.loc);
            if !replaces && n.nrules >= p.max_rules as usize {
                return Err(ENOSPC);
            }
            n.insert(rule).map_err(|InsertError::Full| ENOSPC)?;
            placed = rule.loc;
            Ok(n)
        })?;
        Ok(placed)
    }

    fn rss_hash_fields(_dev: &NetDev, data: &NicPriv, flow: HashedFlow) -> HashFields {
        let bits = match flow {
            HashedFlow::Transport { ipv6, udp } => data
                .me()
                .steering
                .read(|s| s.hash_fields[hash_class(ipv6, udp)]),
            HashedFlow::OtherIp { .. } => HASH_ADDRS,
        };
        HashFields {
            ip_src: bits & HASH_IP_SRC != 0,
            ip_dst: bits & HASH_IP_DST != 0,
            l4_src: bits & HASH_L4_SRC != 0,
            l4_dst: bits & HASH_L4_DST != 0,
        }
    }

    fn set_rss_hash_fields(
        _dev: &NetDev,
        data: &NicPriv,
        flow: HashedFlow,
        fields: HashFields,
        extack: &Extack,
    ) -> Result {
        let bits = [
            (fields.ip_src, HASH_IP_SRC),
            (fields.ip_dst, HASH_IP_DST),
            (fields.l4_src, HASH_L4_SRC),
            (fields.l4_dst, HASH_L4_DST),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, bit)| acc | bit);
        let HashedFlow::Transport { ipv6, udp } = flow else {
            // Other IP traffic has no ports to add, and always hashes on both addresses.
            if bits == HASH_ADDRS {
                return Ok(());
            }
            extack.msg(c_str!("non-TCP/UDP traffic hashes on both addresses only"));
            return Err(eopnotsupp());
        };
        data.me().steering.update(|s| {
            let mut n = box_copy(s, GFP_KERNEL)?;
            n.hash_fields[hash_class(ipv6, udp)] = bits;
            Ok(n)
        })
    }

    fn stats_block_usecs(_dev: &NetDev, _data: &NicPriv) -> u32 {
        // Counters are per-queue atomics, read live.
        0
    }

    const RSS_CONTEXTS: u32 = MAX_RSS_CONTEXTS as u32;

    fn set_rss_context(
        dev: &NetDev,
        data: &NicPriv,
        id: u32,
        indir: &[u32],
        extack: &Extack,
    ) -> Result {
        let limit = data.me().profile().rss_contexts;
        if limit == 0 {
            extack.msg(c_str!("RSS contexts not supported"));
            return Err(eopnotsupp());
        }
        if id > limit {
            extack.msg(c_str!("Out of RSS contexts"));
            return Err(EINVAL);
        }
        if indir.len() != INDIR_SIZE || indir.iter().any(|&q| q >= dev.real_num_rx_queues()) {
            extack.msg(c_str!("indirection table names a queue that is not active"));
            return Err(EINVAL);
        }
        data.me().steering.update(|s| {
            let mut n = box_copy(s, GFP_KERNEL)?;
            if !n.set_context(id, indir) {
                extack.msg(c_str!("no such RSS context"));
                return Err(EINVAL);
            }
            Ok(n)
        })
    }

    fn remove_rss_context(_dev: &NetDev, data: &NicPriv, id: u32) -> Result {
        data.me().steering.update(|s| {
            // A context a rule names stays (7.2's core checks this; 6.12's
            // does not).
            if s.context_in_use(id) {
                return Err(EBUSY);
            }
            let mut n = box_copy(s, GFP_KERNEL)?;
            if !n.remove_context(id) {
                return Err(ENOENT);
            }
            Ok(n)
        })
    }

    fn delete_rule(_dev: &NetDev, data: &NicPriv, loc: u32) -> Result {
        data.me().steering.update(|s| {
            let mut n = box_copy(s, GFP_KERNEL)?;
            if !n.remove(loc) {
                return Err(ENOENT);
            }
            Ok(n)
        })
    }

    const PRIV_FLAGS: &'static [&'static str] = &Personality::FLAGS;

    fn priv_flags(_dev: &NetDev, data: &NicPriv) -> u32 {
        personality::flags(data.me())
    }

    fn set_priv_flags(dev: &NetDev, data: &NicPriv, flags: u32) -> Result {
        personality::set_flags(dev, data, flags)
    }

    const RX_QUEUE_STATS: &'static [&'static str] = RxStats::NAMES;
    const TX_QUEUE_STATS: &'static [&'static str] = TxStats::NAMES;

    fn rx_queue_stats(_dev: &NetDev, data: &NicPriv, q: u32, out: &mut [u64]) {
        if let Some(q) = data.me().rxqs.get(q as usize) {
            for (slot, v) in out.iter_mut().zip(q.stats.values()) {
                *slot = v;
            }
        }
    }

    fn tx_queue_stats(_dev: &NetDev, data: &NicPriv, q: u32, out: &mut [u64]) {
        if let Some(t) = data.me().txqs.get(q as usize) {
            for (slot, v) in out.iter_mut().zip(t.stats.values()) {
                *slot = v;
            }
        }
    }
}
