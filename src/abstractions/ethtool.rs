// SPDX-License-Identifier: GPL-2.0

//! `ethtool_ops` from a trait: rings (with TCP data split), channels, driver
//! info, per-queue statistics, RSS and ntuple rules.
//!
//! C header: [`include/linux/ethtool.h`](srctree/include/linux/ethtool.h)
//!
//! On kernels with ops-locked devices (7.2) ethtool ops run under the device's
//! instance lock and, for `set_channels`, rtnl too (`op_needs_rtnl`), since
//! changing the queue counts needs rtnl; 7.2 also asks `get_rx_ring_count` for
//! `ETHTOOL_GRXRINGS`. The trait is the same on every kernel.

use super::{
    bindings,
    errno::{emsgsize, eopnotsupp},
    netdev::{priv_of, NetDev},
    netdev_ops::NetDevOps,
};
use core::marker::PhantomData;
use kernel::{error::from_result, prelude::*, str::CStr};

/// A TCP flow steering rule as ethtool describes it (`ethtool -N ... flow-type
/// tcp4|tcp6`): flows whose fields match under the masks go to `queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct TcpFlowRule {
    /// Rule slot (`loc`).
    pub(crate) loc: u32,
    /// `tcp6` (else `tcp4`).
    pub(crate) ipv6: bool,
    /// Source address and mask (IPv4 in the first 4 bytes), network order.
    pub(crate) src: [u8; 16],
    pub(crate) src_mask: [u8; 16],
    /// Destination address and mask.
    pub(crate) dst: [u8; 16],
    pub(crate) dst_mask: [u8; 16],
    /// Source port and mask (host order).
    pub(crate) sport: u16,
    pub(crate) sport_mask: u16,
    /// Destination port and mask.
    pub(crate) dport: u16,
    pub(crate) dport_mask: u16,
    /// Target RX queue.
    pub(crate) queue: u32,
}

/// Ring sizes and TCP data split, as `ethtool -g/-G` show and set them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RingParams {
    /// RX ring entries.
    pub(crate) rx: u32,
    /// Largest RX ring.
    pub(crate) rx_max: u32,
    /// TX ring entries.
    pub(crate) tx: u32,
    /// Largest TX ring.
    pub(crate) tx_max: u32,
    /// Header split: `None` = unknown/auto in a request, else on or off.
    pub(crate) tcp_data_split: Option<bool>,
    /// Header split threshold: frames with at most this much payload are not
    /// split. `None` in a request on a kernel without the setting (6.12),
    /// where a reply's value is not reported either.
    pub(crate) hds_thresh: Option<u32>,
    /// Largest threshold accepted.
    pub(crate) hds_thresh_max: u32,
}

/// Channel counts, as `ethtool -l/-L` show and set them: a combined channel
/// is an RX and a TX queue, an RX (TX) channel an RX-only (TX-only) queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Channels {
    /// Most RX-only channels.
    pub(crate) max_rx: u32,
    /// Most TX-only channels.
    pub(crate) max_tx: u32,
    /// Most combined channels.
    pub(crate) max_combined: u32,
    /// Active RX-only channels.
    pub(crate) rx: u32,
    /// Active TX-only channels.
    pub(crate) tx: u32,
    /// Active combined channels.
    pub(crate) combined: u32,
}

/// Where an ethtool request's error message goes (netlink extack).
///
/// # Invariants
///
/// The pointer is null or a valid extack for the callback's duration.
pub(crate) struct Extack(*mut bindings::netlink_ext_ack);

impl Extack {
    /// Wraps the extack a callback got.
    ///
    /// The caller (a trampoline) passes the core's extack argument, null or valid
    /// for the callback's duration, and drops the value before returning.
    pub(super) fn from_raw(extack: *mut bindings::netlink_ext_ack) -> Self {
        // INVARIANT: see above.
        Self(extack)
    }

    /// Sets the message userspace sees with the error.
    pub(crate) fn msg(&self, msg: &'static CStr) {
        if !self.0.is_null() {
            // SAFETY: a non-null extack is valid for the callback's duration; the
            // message is static, as `NL_SET_ERR_MSG` requires.
            unsafe { bindings::dmn_extack_msg(self.0, msg.as_char_ptr().cast()) };
        }
    }
}

/// Ethtool callbacks for a [`NetDevOps`] driver.
///
/// Every callback runs with the device's ops locks held (see the module doc).
#[vtable]
pub(crate) trait EthtoolOps: NetDevOps {
    /// Driver name for `ethtool -i`.
    const DRIVER: &'static CStr;

    /// `ethtool -g`.
    fn get_ringparam(dev: &NetDev, data: &Self::Priv) -> RingParams;

    /// `ethtool -G`: `req` holds the full requested state.
    fn set_ringparam(dev: &NetDev, data: &Self::Priv, req: &RingParams, extack: &Extack) -> Result;

    /// `ethtool -l`.
    fn get_channels(dev: &NetDev, data: &Self::Priv) -> Channels;

    /// `ethtool -L`: `req.rx`/`req.tx` are the requested counts.
    fn set_channels(dev: &NetDev, data: &Self::Priv, req: &Channels) -> Result;

    /// Names of each RX queue's `ethtool -S` counters (shown as `rx<N>_<name>`,
    /// for every allocated RX queue).
    const RX_QUEUE_STATS: &'static [&'static str];

    /// Names of each TX queue's counters (`tx<N>_<name>`).
    const TX_QUEUE_STATS: &'static [&'static str];

    /// Values of RX queue `q`'s counters, in `RX_QUEUE_STATS` order (`out` has
    /// exactly that many entries).
    fn rx_queue_stats(dev: &NetDev, data: &Self::Priv, q: u32, out: &mut [u64]);

    /// Values of TX queue `q`'s counters, in `TX_QUEUE_STATS` order.
    fn tx_queue_stats(dev: &NetDev, data: &Self::Priv, q: u32, out: &mut [u64]);

    /// RSS hash key length in bytes.
    const RSS_KEY_LEN: usize;

    /// RSS indirection table entries.
    const RSS_INDIR_SIZE: usize;

    /// `ethtool -x`: the RSS key (`RSS_KEY_LEN` bytes) and indirection table
    /// (`RSS_INDIR_SIZE` entries).
    fn get_rss(dev: &NetDev, data: &Self::Priv, key: &mut [u8], indir: &mut [u32]);

    /// `ethtool -X`: new key and/or table, sized as `get_rss`'s (entries already
    /// checked against the RX queue count by the ethtool core).
    fn set_rss(
        dev: &NetDev,
        data: &Self::Priv,
        key: Option<&[u8]>,
        indir: Option<&[u32]>,
        extack: &Extack,
    ) -> Result;

    /// ntuple rules in use, sorted by location.
    fn rules(dev: &NetDev, data: &Self::Priv, out: &mut dyn FnMut(&TcpFlowRule));

    /// `ethtool -N ... [loc L]`: adds or replaces a rule; `loc` is `None` for
    /// "any free slot". Returns the location used.
    fn insert_rule(
        dev: &NetDev,
        data: &Self::Priv,
        rule: TcpFlowRule,
        loc: Option<u32>,
    ) -> Result<u32>;

    /// `ethtool -N ... delete L`.
    fn delete_rule(dev: &NetDev, data: &Self::Priv, loc: u32) -> Result;

    /// Most rules the device holds.
    const MAX_RULES: u32;
}

/// Turns an ethtool flow spec into a rule, if devmemnic can match it.
fn rule_from_spec(fs: &bindings::ethtool_rx_flow_spec) -> Result<TcpFlowRule> {
    // Extensions (VLAN, MAC, user data) and RSS contexts are not supported.
    if fs.flow_type & (bindings::FLOW_EXT | bindings::FLOW_MAC_EXT | bindings::FLOW_RSS) != 0 {
        return Err(eopnotsupp());
    }
    if fs.ring_cookie == bindings::RX_CLS_FLOW_DISC as u64 || fs.ring_cookie >> 32 != 0 {
        // Dropping and virtual functions are not supported.
        return Err(eopnotsupp());
    }
    let mut r = TcpFlowRule {
        queue: fs.ring_cookie as u32,
        ..TcpFlowRule::default()
    };
    match fs.flow_type {
        bindings::TCP_V4_FLOW => {
            // SAFETY: `flow_type` says the unions hold TCP/IPv4 specs.
            let (h, m) = unsafe { (fs.h_u.tcp_ip4_spec, fs.m_u.tcp_ip4_spec) };
            if m.tos != 0 {
                return Err(eopnotsupp());
            }
            r.src[..4].copy_from_slice(&h.ip4src.to_ne_bytes());
            r.src_mask[..4].copy_from_slice(&m.ip4src.to_ne_bytes());
            r.dst[..4].copy_from_slice(&h.ip4dst.to_ne_bytes());
            r.dst_mask[..4].copy_from_slice(&m.ip4dst.to_ne_bytes());
            (r.sport, r.sport_mask) = (u16::from_be(h.psrc), u16::from_be(m.psrc));
            (r.dport, r.dport_mask) = (u16::from_be(h.pdst), u16::from_be(m.pdst));
        }
        bindings::TCP_V6_FLOW => {
            // SAFETY: `flow_type` says the unions hold TCP/IPv6 specs.
            let (h, m) = unsafe { (fs.h_u.tcp_ip6_spec, fs.m_u.tcp_ip6_spec) };
            if m.tclass != 0 {
                return Err(eopnotsupp());
            }
            r.ipv6 = true;
            for i in 0..4 {
                r.src[4 * i..4 * i + 4].copy_from_slice(&h.ip6src[i].to_ne_bytes());
                r.src_mask[4 * i..4 * i + 4].copy_from_slice(&m.ip6src[i].to_ne_bytes());
                r.dst[4 * i..4 * i + 4].copy_from_slice(&h.ip6dst[i].to_ne_bytes());
                r.dst_mask[4 * i..4 * i + 4].copy_from_slice(&m.ip6dst[i].to_ne_bytes());
            }
            (r.sport, r.sport_mask) = (u16::from_be(h.psrc), u16::from_be(m.psrc));
            (r.dport, r.dport_mask) = (u16::from_be(h.pdst), u16::from_be(m.pdst));
        }
        _ => return Err(eopnotsupp()),
    }
    Ok(r)
}

/// Writes a rule back as an ethtool flow spec.
fn spec_from_rule(r: &TcpFlowRule, fs: &mut bindings::ethtool_rx_flow_spec) {
    // SAFETY: all-zeroes is a valid flow spec.
    *fs = unsafe { core::mem::zeroed() };
    fs.location = r.loc;
    fs.ring_cookie = u64::from(r.queue);
    let be32 = |b: &[u8]| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    if r.ipv6 {
        fs.flow_type = bindings::TCP_V6_FLOW;
        // SAFETY: writing plain integers into the union's TCP/IPv6 member.
        unsafe {
            for i in 0..4 {
                fs.h_u.tcp_ip6_spec.ip6src[i] = be32(&r.src[4 * i..]);
                fs.m_u.tcp_ip6_spec.ip6src[i] = be32(&r.src_mask[4 * i..]);
                fs.h_u.tcp_ip6_spec.ip6dst[i] = be32(&r.dst[4 * i..]);
                fs.m_u.tcp_ip6_spec.ip6dst[i] = be32(&r.dst_mask[4 * i..]);
            }
            fs.h_u.tcp_ip6_spec.psrc = r.sport.to_be();
            fs.m_u.tcp_ip6_spec.psrc = r.sport_mask.to_be();
            fs.h_u.tcp_ip6_spec.pdst = r.dport.to_be();
            fs.m_u.tcp_ip6_spec.pdst = r.dport_mask.to_be();
        }
    } else {
        fs.flow_type = bindings::TCP_V4_FLOW;
        fs.h_u.tcp_ip4_spec.ip4src = be32(&r.src);
        fs.m_u.tcp_ip4_spec.ip4src = be32(&r.src_mask);
        fs.h_u.tcp_ip4_spec.ip4dst = be32(&r.dst);
        fs.m_u.tcp_ip4_spec.ip4dst = be32(&r.dst_mask);
        fs.h_u.tcp_ip4_spec.psrc = r.sport.to_be();
        fs.m_u.tcp_ip4_spec.psrc = r.sport_mask.to_be();
        fs.h_u.tcp_ip4_spec.pdst = r.dport.to_be();
        fs.m_u.tcp_ip4_spec.pdst = r.dport_mask.to_be();
    }
}

struct EthtoolTable<T>(PhantomData<T>);

/// Copies `s` into an ethtool string slot (`ETH_GSTRING_LEN` bytes, NUL padded).
fn put_gstring(slot: &mut [u8], s: &str) {
    let n = s.len().min(slot.len() - 1);
    slot[..n].copy_from_slice(&s.as_bytes()[..n]);
    slot[n..].fill(0);
}

impl<T: EthtoolOps> EthtoolTable<T> {
    /// # Safety
    ///
    /// Called by the ethtool core with a device of ours and valid arguments.
    unsafe extern "C" fn get_drvinfo(
        dev: *mut bindings::net_device,
        info: *mut bindings::ethtool_drvinfo,
    ) {
        // SAFETY: `info` is valid for writes during the call.
        let info = unsafe { &mut *info };
        put_gstring(&mut info.driver, T::DRIVER.to_str().unwrap_or(""));
        let _ = dev;
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_ringparam(
        dev: *mut bindings::net_device,
        ring: *mut bindings::ethtool_ringparam,
        kring: *mut bindings::kernel_ethtool_ringparam,
        _extack: *mut bindings::netlink_ext_ack,
    ) {
        // SAFETY: the core passes a live device of ours and writable outputs.
        let (nd, data, ring, kring) = unsafe {
            (
                NetDev::from_raw(dev),
                priv_of::<T>(dev),
                &mut *ring,
                &mut *kring,
            )
        };
        let p = T::get_ringparam(nd, data);
        ring.rx_pending = p.rx;
        ring.rx_max_pending = p.rx_max;
        ring.tx_pending = p.tx;
        ring.tx_max_pending = p.tx_max;
        kring.tcp_data_split = match p.tcp_data_split {
            Some(true) => bindings::DMN_TCP_DATA_SPLIT_ENABLED as u8,
            Some(false) => bindings::DMN_TCP_DATA_SPLIT_DISABLED as u8,
            None => bindings::DMN_TCP_DATA_SPLIT_UNKNOWN as u8,
        };
        #[cfg(dmn_hds_thresh)]
        {
            kring.hds_thresh = p.hds_thresh.unwrap_or(0);
            kring.hds_thresh_max = p.hds_thresh_max;
        }
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `extack` may be null.
    unsafe extern "C" fn set_ringparam(
        dev: *mut bindings::net_device,
        ring: *mut bindings::ethtool_ringparam,
        kring: *mut bindings::kernel_ethtool_ringparam,
        extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and readable requests.
            let (nd, data, ring, kring) =
                unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &*ring, &*kring) };
            let req = RingParams {
                rx: ring.rx_pending,
                rx_max: ring.rx_max_pending,
                tx: ring.tx_pending,
                tx_max: ring.tx_max_pending,
                tcp_data_split: match u32::from(kring.tcp_data_split) {
                    bindings::DMN_TCP_DATA_SPLIT_ENABLED => Some(true),
                    bindings::DMN_TCP_DATA_SPLIT_DISABLED => Some(false),
                    _ => None,
                },
                #[cfg(dmn_hds_thresh)]
                hds_thresh: Some(kring.hds_thresh),
                #[cfg(not(dmn_hds_thresh))]
                hds_thresh: None,
                // (A limit the driver reports, not one userspace sets.)
                hds_thresh_max: 0,
            };
            T::set_ringparam(nd, data, &req, &Extack::from_raw(extack))?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_channels(
        dev: *mut bindings::net_device,
        ch: *mut bindings::ethtool_channels,
    ) {
        // SAFETY: the core passes a live device of ours and a writable output.
        let (nd, data, ch) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *ch) };
        let c = T::get_channels(nd, data);
        ch.max_rx = c.max_rx;
        ch.max_tx = c.max_tx;
        ch.rx_count = c.rx;
        ch.tx_count = c.tx;
        ch.max_combined = c.max_combined;
        ch.combined_count = c.combined;
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn set_channels(
        dev: *mut bindings::net_device,
        ch: *mut bindings::ethtool_channels,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a readable request.
            let (nd, data, ch) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &*ch) };
            if ch.other_count != 0 {
                return Err(EINVAL);
            }
            let req = Channels {
                max_rx: ch.max_rx,
                max_tx: ch.max_tx,
                max_combined: ch.max_combined,
                rx: ch.rx_count,
                tx: ch.tx_count,
                combined: ch.combined_count,
            };
            T::set_channels(nd, data, &req)?;
            Ok(0)
        })
    }

    /// Number of `ethtool -S` counters: fixed by the device's allocated queue
    /// counts and the trait's constant name tables, so it cannot change between
    /// the core sizing a buffer and us filling it.
    fn stat_count(dev: &NetDev) -> usize {
        dev.num_rx_queues() as usize * T::RX_QUEUE_STATS.len()
            + dev.num_tx_queues() as usize * T::TX_QUEUE_STATS.len()
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_sset_count(dev: *mut bindings::net_device, sset: i32) -> i32 {
        if sset != bindings::ethtool_stringset_ETH_SS_STATS as i32 {
            return -(bindings::EOPNOTSUPP as i32);
        }
        // SAFETY: the core passes a live device of ours.
        let nd = unsafe { NetDev::from_raw(dev) };
        i32::try_from(Self::stat_count(nd)).unwrap_or(0)
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `buf` holds `get_sset_count` strings.
    unsafe extern "C" fn get_strings(dev: *mut bindings::net_device, sset: u32, buf: *mut u8) {
        if sset != bindings::ethtool_stringset_ETH_SS_STATS {
            return;
        }
        // SAFETY: the core passes a live device of ours.
        let nd = unsafe { NetDev::from_raw(dev) };
        let len = bindings::ETH_GSTRING_LEN as usize;
        // SAFETY: the core sized `buf` for `get_sset_count` strings, which is
        // `stat_count` (a function of fixed facts).
        let out = unsafe { core::slice::from_raw_parts_mut(buf, Self::stat_count(nd) * len) };
        let mut slots = out.chunks_exact_mut(len);
        let mut name = [0u8; 32];
        for (dir, queues, names) in [
            ("rx", nd.num_rx_queues(), T::RX_QUEUE_STATS),
            ("tx", nd.num_tx_queues(), T::TX_QUEUE_STATS),
        ] {
            for q in 0..queues {
                for n in names {
                    if let Some(slot) = slots.next() {
                        put_gstring(slot, fmt_queue_stat(&mut name, dir, q, n));
                    }
                }
            }
        }
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `values` holds `get_sset_count` entries.
    unsafe extern "C" fn get_ethtool_stats(
        dev: *mut bindings::net_device,
        _stats: *mut bindings::ethtool_stats,
        values: *mut u64,
    ) {
        // SAFETY: the core passes a live device of ours.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        // SAFETY: the core sized `values` for `get_sset_count` entries (`stat_count`).
        let out = unsafe { core::slice::from_raw_parts_mut(values, Self::stat_count(nd)) };
        let (rx, tx) = out.split_at_mut(nd.num_rx_queues() as usize * T::RX_QUEUE_STATS.len());
        if !T::RX_QUEUE_STATS.is_empty() {
            for (q, chunk) in rx.chunks_exact_mut(T::RX_QUEUE_STATS.len()).enumerate() {
                T::rx_queue_stats(nd, data, q as u32, chunk);
            }
        }
        if !T::TX_QUEUE_STATS.is_empty() {
            for (q, chunk) in tx.chunks_exact_mut(T::TX_QUEUE_STATS.len()).enumerate() {
                T::tx_queue_stats(nd, data, q as u32, chunk);
            }
        }
    }

    /// # Safety
    ///
    /// Called by the ethtool core with a live device of ours.
    #[cfg(dmn_ethtool_rx_ring_count)]
    unsafe extern "C" fn get_rx_ring_count(dev: *mut bindings::net_device) -> u32 {
        // SAFETY: the core passes a live device of ours.
        unsafe { NetDev::from_raw(dev) }.real_num_rx_queues()
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `locs` has room for `info.rule_cnt` entries for
    /// `ETHTOOL_GRXCLSRLALL`.
    unsafe extern "C" fn get_rxnfc(
        dev: *mut bindings::net_device,
        info: *mut bindings::ethtool_rxnfc,
        locs: *mut u32,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a valid request.
            let (nd, data, info) =
                unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *info) };
            match info.cmd {
                bindings::ETHTOOL_GRXRINGS => info.data = u64::from(nd.real_num_rx_queues()),
                bindings::ETHTOOL_GRXCLSRLCNT => {
                    let mut n = 0;
                    T::rules(nd, data, &mut |_| n += 1);
                    info.__bindgen_anon_1.rule_cnt = n;
                    // Userspace may ask us to pick the location.
                    info.data = u64::from(T::MAX_RULES) | u64::from(bindings::RX_CLS_LOC_SPECIAL);
                }
                bindings::ETHTOOL_GRXCLSRULE => {
                    let loc = info.fs.location;
                    let mut found = false;
                    T::rules(nd, data, &mut |r| {
                        if r.loc == loc {
                            spec_from_rule(r, &mut info.fs);
                            found = true;
                        }
                    });
                    if !found {
                        return Err(ENOENT);
                    }
                }
                bindings::ETHTOOL_GRXCLSRLALL => {
                    // SAFETY: for this command `rule_cnt` is the request's array size.
                    let room = unsafe { info.__bindgen_anon_1.rule_cnt } as usize;
                    let mut n = 0usize;
                    let mut overflow = false;
                    T::rules(nd, data, &mut |r| {
                        if n < room {
                            // SAFETY: `locs` has room for `room` entries.
                            unsafe { *locs.add(n) = r.loc };
                        } else {
                            overflow = true;
                        }
                        n += 1;
                    });
                    if overflow {
                        return Err(emsgsize());
                    }
                    info.__bindgen_anon_1.rule_cnt = n as u32;
                    info.data = u64::from(T::MAX_RULES);
                }
                _ => return Err(eopnotsupp()),
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn set_rxnfc(
        dev: *mut bindings::net_device,
        info: *mut bindings::ethtool_rxnfc,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a valid request.
            let (nd, data, info) =
                unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *info) };
            match info.cmd {
                bindings::ETHTOOL_SRXCLSRLINS => {
                    let rule = rule_from_spec(&info.fs)?;
                    let loc = match info.fs.location {
                        bindings::RX_CLS_LOC_ANY => None,
                        l if l < T::MAX_RULES => Some(l),
                        _ => return Err(EINVAL),
                    };
                    info.fs.location = T::insert_rule(nd, data, rule, loc)?;
                }
                bindings::ETHTOOL_SRXCLSRLDEL => T::delete_rule(nd, data, info.fs.location)?,
                _ => return Err(eopnotsupp()),
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the ethtool core; reads nothing.
    unsafe extern "C" fn get_rxfh_key_size(_dev: *mut bindings::net_device) -> u32 {
        T::RSS_KEY_LEN as u32
    }

    /// # Safety
    ///
    /// Called by the ethtool core; reads nothing.
    unsafe extern "C" fn get_rxfh_indir_size(_dev: *mut bindings::net_device) -> u32 {
        T::RSS_INDIR_SIZE as u32
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `indir`/`key` in `p` are null or sized as we said.
    unsafe extern "C" fn get_rxfh(
        dev: *mut bindings::net_device,
        p: *mut bindings::ethtool_rxfh_param,
    ) -> i32 {
        // SAFETY: the core passes a live device of ours and a valid request.
        let (nd, data, p) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *p) };
        // SAFETY: constant.
        p.hfunc = unsafe { bindings::dmn_rss_hash_top() };
        // SAFETY: the core sized `indir` and `key` (when not null) with
        // `get_rxfh_indir_size` and `get_rxfh_key_size`, and nothing else uses
        // them during the call.
        let (key, indir) = unsafe {
            (
                slice_or_empty(p.key, T::RSS_KEY_LEN),
                slice_or_empty(p.indir, T::RSS_INDIR_SIZE),
            )
        };
        // The driver fills whole tables; give it scratch for the parts not asked for.
        let mut key_scratch = KVec::new();
        let mut indir_scratch = KVec::new();
        let key = if key.is_empty() {
            if key_scratch
                .extend_with(T::RSS_KEY_LEN, 0, GFP_KERNEL)
                .is_err()
            {
                return ENOMEM.to_errno();
            }
            &mut key_scratch[..]
        } else {
            key
        };
        let indir = if indir.is_empty() {
            if indir_scratch
                .extend_with(T::RSS_INDIR_SIZE, 0, GFP_KERNEL)
                .is_err()
            {
                return ENOMEM.to_errno();
            }
            &mut indir_scratch[..]
        } else {
            indir
        };
        T::get_rss(nd, data, key, indir);
        0
    }

    /// # Safety
    ///
    /// As for `get_rxfh`; `extack` may be null.
    unsafe extern "C" fn set_rxfh(
        dev: *mut bindings::net_device,
        p: *mut bindings::ethtool_rxfh_param,
        extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a valid request.
            let (nd, data, p) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &*p) };
            let extack = Extack::from_raw(extack);
            // SAFETY: constant.
            let top = unsafe { bindings::dmn_rss_hash_top() };
            if p.hfunc != 0 && p.hfunc != top {
                extack.msg(kernel::c_str!("only the Toeplitz hash is supported"));
                return Err(eopnotsupp());
            }
            if p.rss_context != 0 || p.rss_delete != 0 {
                extack.msg(kernel::c_str!("additional RSS contexts are not supported"));
                return Err(eopnotsupp());
            }
            // SAFETY: the core sized `key` and `indir` (when not null) with
            // `get_rxfh_key_size` and `get_rxfh_indir_size`.
            let (key, indir) = unsafe {
                (
                    slice_or_empty(p.key, T::RSS_KEY_LEN),
                    slice_or_empty(p.indir, T::RSS_INDIR_SIZE),
                )
            };
            T::set_rss(
                nd,
                data,
                (!key.is_empty()).then_some(&*key),
                (!indir.is_empty()).then_some(&*indir),
                &extack,
            )?;
            Ok(0)
        })
    }

    const VTABLE: bindings::ethtool_ops = {
        // SAFETY: all-zeroes is a valid `ethtool_ops` (nothing supported).
        let mut ops: bindings::ethtool_ops = unsafe { core::mem::zeroed() };
        // `set_channels` changes the real queue counts, which needs rtnl.
        #[cfg(dmn_ethtool_op_needs_rtnl)]
        {
            ops.op_needs_rtnl = bindings::DMN_ETHTOOL_OP_NEEDS_RTNL_SCHANNELS;
        }
        #[cfg(dmn_ethtool_rx_ring_count)]
        {
            ops.get_rx_ring_count = Some(Self::get_rx_ring_count);
        }
        ops.supported_ring_params =
            bindings::ethtool_supported_ring_param_ETHTOOL_RING_USE_TCP_DATA_SPLIT;
        #[cfg(dmn_hds_thresh)]
        {
            ops.supported_ring_params |=
                bindings::ethtool_supported_ring_param_ETHTOOL_RING_USE_HDS_THRS;
        }
        ops.get_drvinfo = Some(Self::get_drvinfo);
        ops.get_ringparam = Some(Self::get_ringparam);
        ops.set_ringparam = Some(Self::set_ringparam);
        ops.get_channels = Some(Self::get_channels);
        ops.set_channels = Some(Self::set_channels);
        ops.get_sset_count = Some(Self::get_sset_count);
        ops.get_strings = Some(Self::get_strings);
        ops.get_ethtool_stats = Some(Self::get_ethtool_stats);
        ops.get_rxnfc = Some(Self::get_rxnfc);
        ops.set_rxnfc = Some(Self::set_rxnfc);
        ops.get_rxfh_key_size = Some(Self::get_rxfh_key_size);
        ops.get_rxfh_indir_size = Some(Self::get_rxfh_indir_size);
        ops.get_rxfh = Some(Self::get_rxfh);
        ops.set_rxfh = Some(Self::set_rxfh);
        ops
    };
}

/// The `ethtool_ops` of `T` (see `Vtables::ethtool`).
pub(super) const fn build<T: EthtoolOps>() -> &'static bindings::ethtool_ops {
    &EthtoolTable::<T>::VTABLE
}

/// A mutable slice over `len` entries at `ptr`, or an empty one for null.
///
/// # Safety
///
/// A non-null `ptr` is valid for reads and writes of `len` entries and not
/// used otherwise while the slice lives.
unsafe fn slice_or_empty<'a, E>(ptr: *mut E, len: usize) -> &'a mut [E] {
    if ptr.is_null() {
        &mut []
    } else {
        // SAFETY: the caller's guarantee.
        unsafe { core::slice::from_raw_parts_mut(ptr, len) }
    }
}

/// Formats `"{dir}{q}_{name}"` into `buf` (ethtool names are at most 31 bytes).
fn fmt_queue_stat<'a>(buf: &'a mut [u8; 32], dir: &str, q: u32, name: &str) -> &'a str {
    let mut w = ByteWriter {
        buf: &mut buf[..31],
        len: 0,
    };
    let _ = core::fmt::Write::write_fmt(&mut w, format_args!("{}{}_{}", dir, q, name));
    let n = w.len;
    core::str::from_utf8(&buf[..n]).unwrap_or("")
}

/// `fmt::Write` into a fixed byte buffer, truncating.
struct ByteWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl core::fmt::Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}
