// SPDX-License-Identifier: GPL-2.0

//! The receive parser: where a frame's headers end and its TCP payload starts.
//!
//! Pure logic over a byte slice, no kernel API: KUnit runs it in the module and
//! `cargo test` on the host. Anything it rejects takes the linear fallback, so
//! it is strict: every length is checked against the bytes present.

/// Ethernet header length (no VLAN tag).
pub(crate) const ETH_HLEN: usize = 14;
const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;
/// Most IPv6 extension headers the parser walks before giving up.
pub(crate) const MAX_IPV6_EXT_HEADERS: usize = 8;

/// Why a frame does not get header split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reject {
    /// Shorter than an Ethernet header.
    TruncatedEthernet,
    /// Not IPv4 or IPv6 (ARP, VLAN, ...).
    NotIp,
    /// IP header truncated or its version field wrong.
    TruncatedIp,
    /// IPv4 IHL below 5 or past the frame.
    BadIhl,
    /// The IP length field disagrees with the frame.
    BadIpLength,
    /// An IP fragment: no TCP header to split at.
    Fragment,
    /// IPv6 extension headers too many, truncated, or not walkable (ESP, jumbo).
    BadExtHeaders,
    /// Valid as far as read, but the headers are longer than the bytes examined.
    HeadersTooLong,
    /// Not TCP (UDP, ICMP, ...).
    NotTcp,
    /// TCP header truncated or its data offset out of range.
    BadTcpHeader,
}

/// Addresses of a flow; IPv4 addresses use the first 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct FlowKey {
    /// IPv6 (else IPv4).
    pub(crate) ipv6: bool,
    /// IP protocol of the transport (6 TCP, 17 UDP, else ports are 0).
    pub(crate) proto: u8,
    /// Source address.
    pub(crate) src: [u8; 16],
    /// Destination address.
    pub(crate) dst: [u8; 16],
    /// Source port (TCP/UDP), host order.
    pub(crate) sport: u16,
    /// Destination port (TCP/UDP), host order.
    pub(crate) dport: u16,
}

/// A TCP segment's layout in a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TcpLayout {
    /// Bytes of Ethernet + IP (+ extensions) + TCP headers.
    pub(crate) header_len: usize,
    /// Payload bytes after the headers (IP length minus headers; padding excluded).
    pub(crate) payload_len: usize,
}

/// What the parser found in a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// The flow, as far as it could be read (for steering even when not split).
    pub(crate) key: Option<FlowKey>,
    /// Where to split, or why not.
    pub(crate) tcp: Result<TcpLayout, Reject>,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// 802.1Q and 802.1ad tags.
const ETH_P_8021Q: u16 = 0x8100;
const ETH_P_8021AD: u16 = 0x88a8;
/// Most VLAN tags walked to the IP header.
const MAX_VLAN_TAGS: usize = 2;

/// The protocol an IP frame carries (IPv4's protocol, IPv6's first next
/// header), after up to two VLAN tags, as mlx5 finds it for its receive
/// checksum; `None` if `prefix` holds no IP header there.
pub(crate) fn ip_protocol(prefix: &[u8]) -> Option<u8> {
    let mut off = ETH_HLEN;
    let mut ty = be16(prefix.get(..ETH_HLEN)?, 12);
    for _ in 0..MAX_VLAN_TAGS {
        if ty != ETH_P_8021Q && ty != ETH_P_8021AD {
            break;
        }
        ty = be16(prefix.get(..off + 4)?, off + 2);
        off += 4;
    }
    match ty {
        ETH_P_IP if prefix.get(off)? >> 4 == 4 => prefix.get(off + 9).copied(),
        ETH_P_IPV6 if prefix.get(off)? >> 4 == 6 => prefix.get(off + 6).copied(),
        _ => None,
    }
}

/// Parses a whole Ethernet frame.
/// What an RSS hash was taken over, as `bpf_xdp_metadata_rx_hash()`
/// reports it: the bits of the kernel's `enum xdp_rss_hash_type`
/// (`include/net/xdp.h`; the abstraction layer checks them against it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct RssHashType(pub(crate) u32);

impl RssHashType {
    /// No hash, or a frame that is not IP.
    pub(crate) const NONE: Self = Self(0);
    pub(crate) const L3_IPV4: u32 = 1 << 0;
    pub(crate) const L3_IPV6: u32 = 1 << 1;
    /// IPv4 options (the L3 header's length varies).
    pub(crate) const L3_DYNHDR: u32 = 1 << 2;
    /// The hash covered the ports too.
    pub(crate) const L4: u32 = 1 << 3;
    pub(crate) const L4_TCP: u32 = 1 << 4;
    pub(crate) const L4_UDP: u32 = 1 << 5;
}

/// The hash type of an RSS hash over the frame starting with `head` (its
/// bytes in the first buffer), taken over the ports too when `l4`: the IP
/// version (IPv4 options flagged) from the headers, TCP or UDP from the IP
/// header's protocol field (an IPv6 extension header is not walked: the
/// type then names no L4 protocol).
pub(crate) fn rss_hash_type(head: &[u8], l4: bool) -> RssHashType {
    const IPV4_MIN: usize = 20;
    const IPV6_LEN: usize = 40;
    if head.len() < ETH_HLEN {
        return RssHashType::NONE;
    }
    let ip = &head[ETH_HLEN..];
    let (mut bits, proto) = match be16(head, 12) {
        ETH_P_IP if ip.len() >= IPV4_MIN => {
            let dynhdr = if ip[0] & 0xf > 5 {
                RssHashType::L3_DYNHDR
            } else {
                0
            };
            (RssHashType::L3_IPV4 | dynhdr, ip[9])
        }
        ETH_P_IPV6 if ip.len() >= IPV6_LEN => (RssHashType::L3_IPV6, ip[6]),
        _ => return RssHashType::NONE,
    };
    if l4 {
        bits |= RssHashType::L4
            | match proto {
                IPPROTO_TCP => RssHashType::L4_TCP,
                IPPROTO_UDP => RssHashType::L4_UDP,
                _ => 0,
            };
    }
    RssHashType(bits)
}

pub(crate) fn parse_frame(frame: &[u8]) -> Parsed {
    parse_prefix(frame, frame.len())
}

/// Parses a frame of `frame_len` bytes from its first bytes, `prefix`.
///
/// Lengths are checked against `frame_len`; headers must lie inside `prefix`
/// (a frame whose headers do not is rejected as [`Reject::HeadersTooLong`]).
pub(crate) fn parse_prefix(prefix: &[u8], frame_len: usize) -> Parsed {
    let none = |r| Parsed {
        key: None,
        tcp: Err(r),
    };
    let frame_len = frame_len.max(prefix.len());
    if prefix.len() < ETH_HLEN {
        return none(if frame_len < ETH_HLEN {
            Reject::TruncatedEthernet
        } else {
            Reject::HeadersTooLong
        });
    }
    let ip = View {
        buf: &prefix[ETH_HLEN..],
        len: frame_len - ETH_HLEN,
    };
    match be16(prefix, 12) {
        ETH_P_IP => parse_ipv4(ip),
        ETH_P_IPV6 => parse_ipv6(ip),
        _ => none(Reject::NotIp),
    }
}

/// Readable first bytes of a region that is `len` bytes long.
#[derive(Clone, Copy)]
struct View<'a> {
    buf: &'a [u8],
    len: usize,
}

impl<'a> View<'a> {
    /// The sub-region `[from, to)`, or `None` if it is past the region.
    fn range(&self, from: usize, to: usize) -> Option<View<'a>> {
        if from > to || to > self.len {
            return None;
        }
        let b = self
            .buf
            .get(from.min(self.buf.len())..to.min(self.buf.len()))?;
        Some(View {
            buf: b,
            len: to - from,
        })
    }

    /// Whether the first `n` bytes are readable.
    fn has(&self, n: usize) -> bool {
        self.buf.len() >= n
    }
}

/// Reads ports if the transport is TCP/UDP and they are present.
fn ports(l4: View<'_>) -> (u16, u16) {
    if l4.len >= 4 && l4.has(4) {
        (be16(l4.buf, 0), be16(l4.buf, 2))
    } else {
        (0, 0)
    }
}

/// Checks the TCP header at `l4` (the IP payload, already trimmed to IP length).
fn tcp_layout(l3_headers: usize, l4: View<'_>) -> Result<TcpLayout, Reject> {
    if l4.len < 20 {
        return Err(Reject::BadTcpHeader);
    }
    if !l4.has(20) {
        return Err(Reject::HeadersTooLong);
    }
    let doff = usize::from(l4.buf[12] >> 4) * 4;
    if doff < 20 || doff > l4.len {
        return Err(Reject::BadTcpHeader);
    }
    if !l4.has(doff) {
        return Err(Reject::HeadersTooLong);
    }
    Ok(TcpLayout {
        header_len: ETH_HLEN + l3_headers + doff,
        payload_len: l4.len - doff,
    })
}

fn parse_ipv4(v: View<'_>) -> Parsed {
    let none = |r| Parsed {
        key: None,
        tcp: Err(r),
    };
    if v.len < 20 || !v.has(20) {
        return none(if v.len < 20 {
            Reject::TruncatedIp
        } else {
            Reject::HeadersTooLong
        });
    }
    let ip = v.buf;
    if ip[0] >> 4 != 4 {
        return none(Reject::TruncatedIp);
    }
    let ihl = usize::from(ip[0] & 0xf) * 4;
    if ihl < 20 || ihl > v.len {
        return none(Reject::BadIhl);
    }
    let total = usize::from(be16(ip, 2));
    if total < ihl || total > v.len {
        return none(Reject::BadIpLength);
    }
    let proto = ip[9];
    let mut key = FlowKey {
        ipv6: false,
        proto,
        ..FlowKey::default()
    };
    key.src[..4].copy_from_slice(&ip[12..16]);
    key.dst[..4].copy_from_slice(&ip[16..20]);
    // More-fragments set or a non-zero offset.
    if be16(ip, 6) & 0x3fff != 0 {
        return Parsed {
            key: Some(key),
            tcp: Err(Reject::Fragment),
        };
    }
    let Some(l4) = v.range(ihl, total) else {
        return Parsed {
            key: Some(key),
            tcp: Err(Reject::BadIpLength),
        };
    };
    if proto == IPPROTO_TCP || proto == IPPROTO_UDP {
        (key.sport, key.dport) = ports(l4);
    }
    let tcp = if proto != IPPROTO_TCP {
        Err(Reject::NotTcp)
    } else if !v.has(ihl) {
        Err(Reject::HeadersTooLong)
    } else {
        tcp_layout(ihl, l4)
    };
    Parsed {
        key: Some(key),
        tcp,
    }
}

fn parse_ipv6(v: View<'_>) -> Parsed {
    let none = |r| Parsed {
        key: None,
        tcp: Err(r),
    };
    if v.len < 40 || !v.has(40) {
        return none(if v.len < 40 {
            Reject::TruncatedIp
        } else {
            Reject::HeadersTooLong
        });
    }
    let ip = v.buf;
    if ip[0] >> 4 != 6 {
        return none(Reject::TruncatedIp);
    }
    let payload = usize::from(be16(ip, 4));
    let end = 40 + payload;
    let mut key = FlowKey {
        ipv6: true,
        ..FlowKey::default()
    };
    key.src.copy_from_slice(&ip[8..24]);
    key.dst.copy_from_slice(&ip[24..40]);
    // A zero payload length with a hop-by-hop header is a jumbogram: not walked.
    if end > v.len || (payload == 0 && ip[6] == 0) {
        return Parsed {
            key: Some(key),
            tcp: Err(Reject::BadIpLength),
        };
    }
    // `ip` is the readable part, `end` the IP packet's true end.
    let ip = &ip[..end.min(ip.len())];
    let mut next = ip[6];
    let mut off = 40;
    let mut walked = 0;
    loop {
        match next {
            // Hop-by-hop, routing, destination options: (len + 1) * 8 bytes;
            // authentication header: (len + 2) * 4 bytes.
            0 | 43 | 51 | 60 => {
                let reject = |r| Parsed {
                    key: Some(key),
                    tcp: Err(r),
                };
                if walked == MAX_IPV6_EXT_HEADERS || off + 8 > end {
                    return reject(Reject::BadExtHeaders);
                }
                if off + 8 > ip.len() {
                    return reject(Reject::HeadersTooLong);
                }
                let hdr_len = usize::from(ip[off + 1]);
                let len = if next == 51 {
                    (hdr_len + 2) * 4
                } else {
                    (hdr_len + 1) * 8
                };
                if off + len > end {
                    return reject(Reject::BadExtHeaders);
                }
                next = ip[off];
                off += len;
                walked += 1;
            }
            44 => {
                return Parsed {
                    key: Some(key),
                    tcp: Err(Reject::Fragment),
                }
            }
            _ => break,
        }
    }
    key.proto = next;
    let Some(l4) = v.range(off, end) else {
        return Parsed {
            key: Some(key),
            tcp: Err(Reject::BadExtHeaders),
        };
    };
    if next == IPPROTO_TCP || next == IPPROTO_UDP {
        (key.sport, key.dport) = ports(l4);
    }
    let tcp = match next {
        IPPROTO_TCP => tcp_layout(off, l4),
        // ESP (50) and no-next-header (59) cannot be walked further.
        50 | 59 => Err(Reject::BadExtHeaders),
        _ => Err(Reject::NotTcp),
    };
    Parsed {
        key: Some(key),
        tcp,
    }
}
