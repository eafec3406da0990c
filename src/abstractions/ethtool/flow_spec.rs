// SPDX-License-Identifier: GPL-2.0

//! ntuple rules to and from ethtool's flow specs (`ethtool -N|-n`).
//!
//! C header: [`include/uapi/linux/ethtool.h`](srctree/include/uapi/linux/ethtool.h)
//!
//! A `struct ethtool_rx_flow_spec` holds its match in unions chosen by the
//! flow type; devmemnic matches TCP and UDP over IPv4 and IPv6, with masks,
//! and sends a match to a queue or, with `FLOW_RSS`, to an RSS context.

use super::FlowRule;
use crate::abstractions::{bindings, errno::eopnotsupp};
use kernel::prelude::*;

/// Turns an ethtool flow spec into a rule, if devmemnic can match it;
/// `rss_context` is the request's context, for `FLOW_RSS`.
pub(super) fn rule_from_spec(
    fs: &bindings::ethtool_rx_flow_spec,
    rss_context: u32,
) -> Result<FlowRule> {
    // Extensions (VLAN, MAC, user data) are not supported.
    if fs.flow_type & (bindings::FLOW_EXT | bindings::FLOW_MAC_EXT) != 0 {
        return Err(eopnotsupp());
    }
    if fs.ring_cookie == bindings::RX_CLS_FLOW_DISC as u64 || fs.ring_cookie >> 32 != 0 {
        // Dropping and virtual functions are not supported.
        return Err(eopnotsupp());
    }
    let mut r = FlowRule {
        queue: fs.ring_cookie as u32,
        rss: (fs.flow_type & bindings::FLOW_RSS != 0).then_some(rss_context),
        ..FlowRule::default()
    };
    let flow_type = fs.flow_type & !bindings::FLOW_RSS;
    r.udp = matches!(flow_type, bindings::UDP_V4_FLOW | bindings::UDP_V6_FLOW);
    // (`tcp_ip4_spec` and `udp_ip4_spec` are the same type, as are the IPv6 ones.)
    match flow_type {
        bindings::TCP_V4_FLOW | bindings::UDP_V4_FLOW => {
            // SAFETY: `flow_type` says the unions hold TCP or UDP/IPv4 specs.
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
        bindings::TCP_V6_FLOW | bindings::UDP_V6_FLOW => {
            // SAFETY: `flow_type` says the unions hold TCP or UDP/IPv6 specs.
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
pub(super) fn spec_from_rule(r: &FlowRule, fs: &mut bindings::ethtool_rx_flow_spec) {
    // SAFETY: all-zeroes is a valid flow spec.
    *fs = unsafe { core::mem::zeroed() };
    fs.location = r.loc;
    fs.ring_cookie = u64::from(r.queue);
    let be32 = |b: &[u8]| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    fs.flow_type = match (r.ipv6, r.udp) {
        (false, false) => bindings::TCP_V4_FLOW,
        (false, true) => bindings::UDP_V4_FLOW,
        (true, false) => bindings::TCP_V6_FLOW,
        (true, true) => bindings::UDP_V6_FLOW,
    } | if r.rss.is_some() {
        bindings::FLOW_RSS
    } else {
        0
    };
    // (The TCP members below are the UDP ones' type, at the same place.)
    if r.ipv6 {
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
