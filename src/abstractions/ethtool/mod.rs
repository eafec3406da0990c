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
//!
//! This file holds the trait and the values it trades; `flow_spec.rs`
//! converts ntuple rules to and from ethtool's flow specs, and `table.rs`
//! builds the C table whose trampolines call the trait.

use super::{bindings, netdev::NetDev, netdev_ops::NetDevOps};
use kernel::{build_error, prelude::*, str::CStr};

mod flow_spec;
mod table;

pub(super) use table::{build, set_caps};

// `Extack` lives in `super::extack`, shared by every netlink-driven
// abstraction; `ethtool::Extack` is the path drivers know it by.
pub(crate) use super::extack::Extack;

/// A flow steering rule as ethtool describes it (`ethtool -N ... flow-type
/// tcp4|udp4|tcp6|udp6`): the driver's own rule type, plain data from
/// `src/logic/` (which depends on `core` only), so no conversion sits
/// between what ethtool asks and what the steering tables hold.
pub(crate) use crate::logic::steering::NtupleRule as FlowRule;

/// A flow type of `ethtool -n|-N DEV rx-flow-hash FLOW`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HashedFlow {
    /// `tcp4`, `udp4`, `tcp6`, `udp6`.
    Transport { ipv6: bool, udp: bool },
    /// Other IP traffic (`sctp4`, `ah4`, `esp4`, `ip4` and their IPv6 kin).
    OtherIp { ipv6: bool },
}

impl HashedFlow {
    /// The flow type of an ethtool `flow_type` (without `FLOW_RSS`).
    fn from_flow_type(flow_type: u32) -> Option<Self> {
        use bindings::*;
        Some(match flow_type {
            TCP_V4_FLOW => Self::Transport {
                ipv6: false,
                udp: false,
            },
            UDP_V4_FLOW => Self::Transport {
                ipv6: false,
                udp: true,
            },
            TCP_V6_FLOW => Self::Transport {
                ipv6: true,
                udp: false,
            },
            UDP_V6_FLOW => Self::Transport {
                ipv6: true,
                udp: true,
            },
            SCTP_V4_FLOW | AH_ESP_V4_FLOW | AH_V4_FLOW | ESP_V4_FLOW | IPV4_FLOW => {
                Self::OtherIp { ipv6: false }
            }
            SCTP_V6_FLOW | AH_ESP_V6_FLOW | AH_V6_FLOW | ESP_V6_FLOW | IPV6_FLOW => {
                Self::OtherIp { ipv6: true }
            }
            _ => return None,
        })
    }
}

/// Header fields an RSS hash takes (`rx-flow-hash` letters `s`, `d`, `f`, `n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct HashFields {
    /// IP source address (`s`).
    pub(crate) ip_src: bool,
    /// IP destination address (`d`).
    pub(crate) ip_dst: bool,
    /// L4 bytes 0-1: the source port (`f`).
    pub(crate) l4_src: bool,
    /// L4 bytes 2-3: the destination port (`n`).
    pub(crate) l4_dst: bool,
}

impl HashFields {
    /// From ethtool's `RXH_*` bits; `None` if others are set.
    fn from_rxh(data: u32) -> Option<Self> {
        use bindings::{DMN_RXH_IP_DST, DMN_RXH_IP_SRC, DMN_RXH_L4_B_0_1, DMN_RXH_L4_B_2_3};
        let known = DMN_RXH_IP_SRC | DMN_RXH_IP_DST | DMN_RXH_L4_B_0_1 | DMN_RXH_L4_B_2_3;
        (data & !known == 0).then_some(Self {
            ip_src: data & DMN_RXH_IP_SRC != 0,
            ip_dst: data & DMN_RXH_IP_DST != 0,
            l4_src: data & DMN_RXH_L4_B_0_1 != 0,
            l4_dst: data & DMN_RXH_L4_B_2_3 != 0,
        })
    }

    /// As ethtool's `RXH_*` bits.
    fn to_rxh(self) -> u32 {
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        bit(self.ip_src, bindings::DMN_RXH_IP_SRC)
            | bit(self.ip_dst, bindings::DMN_RXH_IP_DST)
            | bit(self.l4_src, bindings::DMN_RXH_L4_B_0_1)
            | bit(self.l4_dst, bindings::DMN_RXH_L4_B_2_3)
    }
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

    /// Most additional RSS contexts (`ethtool -X context new`), IDs
    /// 1..=`RSS_CONTEXTS`; used only with `set_rss_context`.
    const RSS_CONTEXTS: u32 = 0;

    /// `ethtool -X context new|C ...`: RSS context `id` (1..=`RSS_CONTEXTS`)
    /// now spreads over `indir` (complete, `RSS_INDIR_SIZE` entries, already
    /// checked against the RX queue count by the ethtool core), creating it
    /// if it is new. Contexts share the device's key and hash function.
    fn set_rss_context(
        _dev: &NetDev,
        _data: &Self::Priv,
        _id: u32,
        _indir: &[u32],
        _extack: &Extack,
    ) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ethtool -X context C delete` (no rule uses it: the core checked).
    fn remove_rss_context(_dev: &NetDev, _data: &Self::Priv, _id: u32) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ethtool -c`: how often, in microseconds, the device updates the
    /// counters it reports (0: they are always current). Tools wait this
    /// long for counters to settle before reading them.
    fn stats_block_usecs(_dev: &NetDev, _data: &Self::Priv) -> u32 {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ethtool -n DEV rx-flow-hash FLOW`: the fields `flow`'s RSS hash takes
    /// (shared by every RSS context).
    fn rss_hash_fields(_dev: &NetDev, _data: &Self::Priv, _flow: HashedFlow) -> HashFields {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ethtool -N DEV rx-flow-hash FLOW FIELDS`.
    fn set_rss_hash_fields(
        _dev: &NetDev,
        _data: &Self::Priv,
        _flow: HashedFlow,
        _fields: HashFields,
        _extack: &Extack,
    ) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// ntuple rules in use, sorted by location.
    fn rules(dev: &NetDev, data: &Self::Priv, out: &mut dyn FnMut(&FlowRule));

    /// `ethtool -N ... [loc L]`: adds or replaces a rule; `loc` is `None` for
    /// "any free slot". Returns the location used.
    fn insert_rule(
        dev: &NetDev,
        data: &Self::Priv,
        rule: FlowRule,
        loc: Option<u32>,
    ) -> Result<u32>;

    /// `ethtool -N ... delete L`.
    fn delete_rule(dev: &NetDev, data: &Self::Priv, loc: u32) -> Result;

    /// Most rules the device's table holds (locations are below it).
    const MAX_RULES: u32;

    /// What `ethtool -n` reports of the rule table: how many rules the
    /// device takes now (at most `MAX_RULES`), and whether it picks a
    /// rule's location itself (`RX_CLS_LOC_SPECIAL`: userspace may ask for
    /// "any"; else ethtool picks a free location).
    fn rule_space(dev: &NetDev, data: &Self::Priv) -> RuleSpace;

    /// Names of the device's private flags (`ethtool --show-priv-flags`),
    /// bit `i` named by entry `i`; at most 32.
    const PRIV_FLAGS: &'static [&'static str] = &[];

    /// The private flags set, a bit per entry of `PRIV_FLAGS`.
    fn priv_flags(_dev: &NetDev, _data: &Self::Priv) -> u32 {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ethtool --set-priv-flags`: `flags` is the whole requested set
    /// (only bits of `PRIV_FLAGS`: the core refuses others).
    fn set_priv_flags(_dev: &NetDev, _data: &Self::Priv, _flags: u32) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
}

/// What a device's rule table offers now (see [`EthtoolOps::rule_space`]).
pub(crate) struct RuleSpace {
    pub(crate) max: u32,
    pub(crate) driver_picks_location: bool,
}
