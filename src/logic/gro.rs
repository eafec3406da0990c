// SPDX-License-Identifier: GPL-2.0

//! Receive coalescing (`rx-gro-hw`): which TCP segments of a flow a queue
//! merges into one super-packet, and the headers that packet carries.
//!
//! The rules are the kernel's own GRO rules (`net/ipv4/af_inet.c`,
//! `net/ipv6/ip6_offload.c`, `net/ipv4/tcp_offload.c`, `include/net/gro.h`),
//! which upstream's `gro.c` conformance test checks on a device in hardware
//! GRO mode: plain IPv4 and IPv6, IPv4-in-IPv4 and IPv6-in-IPv6, IPv6
//! extension headers. A frame this parser does not accept (fragments, IPv4
//! options, a bad IPv4 header checksum, lengths that lie, VLANs) passes on its
//! own and leaves the aggregates alone, as in the kernel.

use super::parse::ETH_HLEN;

/// IP headers a segment may have: the packet's, and one tunnelled inside.
pub(crate) const MAX_IP_LAYERS: usize = 2;
/// Largest IP datagram an aggregate grows to (the 16-bit total length).
pub(crate) const MAX_DATAGRAM: u32 = 65535;

const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;
const IPPROTO_IPIP: u8 = 4;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_IPV6: u8 = 41;
const IPV6_HBH: u8 = 0;
const IPV6_ROUTING: u8 = 43;
const IPV6_DSTOPTS: u8 = 60;
const IPV4_DF: u16 = 0x4000;

/// TCP flags.
pub(crate) const TCP_FIN: u8 = 0x01;
pub(crate) const TCP_SYN: u8 = 0x02;
pub(crate) const TCP_RST: u8 = 0x04;
pub(crate) const TCP_PSH: u8 = 0x08;
pub(crate) const TCP_URG: u8 = 0x20;
pub(crate) const TCP_CWR: u8 = 0x80;

/// One IP header of a segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IpLayer {
    /// Offset from the frame's start.
    pub(crate) off: u16,
    /// Header length, IPv6 extension headers included.
    pub(crate) len: u16,
    /// IPv6 (else IPv4).
    pub(crate) v6: bool,
}

/// What the parser found in a TCP segment's headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Segment {
    /// The IP headers, outermost first.
    pub(crate) ip: [IpLayer; MAX_IP_LAYERS],
    /// How many of `ip` are in use (1 or 2).
    pub(crate) layers: u8,
    /// Offset of the TCP header.
    pub(crate) tcp_off: u16,
    /// TCP header length, options included.
    pub(crate) tcp_len: u16,
    /// TCP payload bytes.
    pub(crate) payload_len: u32,
    /// Sequence number.
    pub(crate) seq: u32,
    /// TCP flags (byte 13 of the header).
    pub(crate) flags: u8,
    /// A hash of the flow (addresses and ports), to find its aggregate.
    pub(crate) hash: u32,
}

impl Segment {
    /// Bytes of headers before the payload.
    pub(crate) fn header_len(&self) -> usize {
        usize::from(self.tcp_off) + usize::from(self.tcp_len)
    }

    /// The IP layers in use.
    pub(crate) fn layers(&self) -> &[IpLayer] {
        &self.ip[..usize::from(self.layers)]
    }

    /// The innermost IP header (the one carrying TCP).
    pub(crate) fn inner(&self) -> IpLayer {
        self.ip[usize::from(self.layers) - 1]
    }

    /// Whether a segment with these flags closes its aggregate: a flow's data
    /// after it must not wait behind it.
    pub(crate) fn ends_run(&self) -> bool {
        self.flags & (TCP_URG | TCP_PSH | TCP_RST | TCP_SYN | TCP_FIN) != 0
    }

    /// Whether the segment may open an aggregate: it has data and no flag
    /// that ends one.
    pub(crate) fn may_start_run(&self) -> bool {
        self.payload_len > 0 && !self.ends_run()
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
        *b.get(at + 2)?,
        *b.get(at + 3)?,
    ]))
}

/// Adds `bytes` to a ones'-complement sum as big-endian 16-bit words (a
/// trailing odd byte is the high half of a word). Chunks of a longer run must
/// have even lengths but the last.
pub(crate) fn csum_add(mut sum: u64, bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        sum += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        sum += u64::from(*last) << 8;
    }
    sum
}

/// Folds a ones'-complement sum to 16 bits.
pub(crate) fn csum_fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The IPv4 header checksum of `hdr` (its checksum field taken as zero).
pub(crate) fn ipv4_header_csum(hdr: &[u8]) -> u16 {
    let sum = csum_add(csum_add(0, &hdr[..10]), &hdr[12..]);
    !csum_fold(sum)
}

/// The TCP pseudo-header sum of `seg` (innermost addresses, protocol, length).
pub(crate) fn tcp_pseudo_sum(hdr: &[u8], seg: &Segment) -> u64 {
    let ip = seg.inner();
    let off = usize::from(ip.off);
    let tcp_bytes = u64::from(seg.tcp_len) + u64::from(seg.payload_len);
    let addrs = if ip.v6 {
        &hdr[off + 8..off + 40]
    } else {
        &hdr[off + 12..off + 20]
    };
    csum_add(0, addrs) + u64::from(IPPROTO_TCP) + tcp_bytes
}

/// The TCP checksum field's offset in the TCP header.
pub(crate) const TCP_CHECK_OFF: usize = 16;

/// `CHECKSUM_COMPLETE` for a segment whose sender left its TCP checksum to
/// the device, as the wire would carry it once the device wrote it: the
/// checksum to write and the folded sum of the frame's bytes after the
/// Ethernet header (big-endian words) with it written. `hdr`: the frame's
/// headers, through the TCP header; `l4_sum`: the unfolded sum of the TCP
/// header and payload as they are (the field holding what the sender left);
/// `tail`: the folded sum of any bytes after the IP datagram.
///
/// The segment with its checksum sums to the pseudo-header's complement,
/// so only the IP headers and the tail add to that.
pub(crate) fn tcp_complete_sum(
    hdr: &[u8],
    seg: &Segment,
    l4_sum: u64,
    tail: Option<u16>,
) -> Option<(u16, u16)> {
    let tcp_off = usize::from(seg.tcp_off);
    let field = hdr.get(tcp_off + TCP_CHECK_OFF..tcp_off + TCP_CHECK_OFF + 2)?;
    let left = u16::from_be_bytes([field[0], field[1]]);
    let pseudo = tcp_pseudo_sum(hdr, seg);
    // (Adding the complement of the field takes it out of the sum.)
    let check = !csum_fold(pseudo + l4_sum + u64::from(!left));
    let mut sum = csum_add(0, hdr.get(ETH_HLEN..tcp_off)?) + u64::from(!csum_fold(pseudo));
    if let Some(t) = tail {
        // (Bytes from an odd offset are the low halves of their words.)
        let end = seg.header_len() + seg.payload_len as usize;
        sum += u64::from(if (end - ETH_HLEN) % 2 == 1 {
            t.swap_bytes()
        } else {
            t
        });
    }
    Some((check, csum_fold(sum)))
}

/// Parses the headers of a frame of `frame_len` bytes whose first bytes are
/// `hdr` (at least the headers). `None` unless it is a TCP segment the
/// coalescer may merge.
pub(crate) fn parse_segment(hdr: &[u8], frame_len: usize) -> Option<Segment> {
    let mut seg = Segment::default();
    let mut off = ETH_HLEN;
    let mut v6 = match be16(hdr, 12)? {
        ETH_P_IP => false,
        ETH_P_IPV6 => true,
        _ => return None,
    };
    loop {
        if usize::from(seg.layers) == MAX_IP_LAYERS {
            return None;
        }
        let rest = frame_len.checked_sub(off)?;
        let (len, next) = if v6 {
            if hdr.get(off)? >> 4 != 6 || usize::from(be16(hdr, off + 4)?) + 40 != rest {
                return None;
            }
            // Extension headers the kernel steps over; a fragment header or
            // any other ends coalescing.
            let mut next = *hdr.get(off + 6)?;
            let mut len = 40usize;
            while matches!(next, IPV6_HBH | IPV6_ROUTING | IPV6_DSTOPTS) {
                let ext = off + len;
                next = *hdr.get(ext)?;
                len += (usize::from(*hdr.get(ext + 1)?) + 1) * 8;
            }
            (len, next)
        } else {
            // No options, not a fragment (DF alone), a true length and checksum.
            let h = hdr.get(off..off + 20)?;
            if h[0] != 0x45
                || be16(h, 6)? & !IPV4_DF != 0
                || usize::from(be16(h, 2)?) != rest
                || ipv4_header_csum(h) != be16(h, 10)?
            {
                return None;
            }
            (20, h[9])
        };
        seg.ip[usize::from(seg.layers)] = IpLayer {
            off: u16::try_from(off).ok()?,
            len: u16::try_from(len).ok()?,
            v6,
        };
        seg.layers += 1;
        off += len;
        match next {
            IPPROTO_TCP => break,
            IPPROTO_IPIP => v6 = false,
            IPPROTO_IPV6 => v6 = true,
            _ => return None,
        }
    }
    let doff = usize::from(*hdr.get(off + 12)? >> 4) * 4;
    if doff < 20 || off + doff > frame_len || off + doff > hdr.len() {
        return None;
    }
    seg.tcp_off = u16::try_from(off).ok()?;
    seg.tcp_len = doff as u16;
    seg.payload_len = u32::try_from(frame_len - off - doff).ok()?;
    seg.seq = be32(hdr, off + 4)?;
    seg.flags = hdr[off + 13];
    seg.hash = flow_hash(hdr, &seg);
    Some(seg)
}

/// FNV-1a over the innermost addresses and the ports.
fn flow_hash(hdr: &[u8], seg: &Segment) -> u32 {
    let ip = seg.inner();
    let off = usize::from(ip.off);
    let addrs = if ip.v6 {
        &hdr[off + 8..off + 40]
    } else {
        &hdr[off + 12..off + 20]
    };
    let tcp = usize::from(seg.tcp_off);
    let mut h: u32 = 0x811c_9dc5;
    for b in addrs.iter().chain(&hdr[tcp..tcp + 4]) {
        h = (h ^ u32::from(*b)).wrapping_mul(0x0100_0193);
    }
    h
}

/// Whether two parsed segments belong to the same flow: the same Ethernet
/// header, IP header layout, addresses, protocols and IPv6 extension headers,
/// and the same ports. `a` and `b` are the segments' header bytes.
pub(crate) fn same_flow(a: &[u8], sa: &Segment, b: &[u8], sb: &Segment) -> bool {
    if sa.layers != sb.layers || sa.ip != sb.ip || sa.tcp_off != sb.tcp_off {
        return false;
    }
    if a[..ETH_HLEN] != b[..ETH_HLEN] {
        return false;
    }
    for ip in sa.layers() {
        let o = usize::from(ip.off);
        let same = if ip.v6 {
            // Next header, addresses, extension headers.
            a[o + 6] == b[o + 6]
                && a[o + 8..o + usize::from(ip.len)] == b[o + 8..o + usize::from(ip.len)]
        } else {
            a[o + 9] == b[o + 9] && a[o + 12..o + 20] == b[o + 12..o + 20]
        };
        if !same {
            return false;
        }
    }
    let t = usize::from(sa.tcp_off);
    a[t..t + 4] == b[t..t + 4]
}

/// An aggregate in the making: its first segment and what merging tracks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run {
    /// The first segment (its headers are the aggregate's).
    pub(crate) first: Segment,
    /// Segments merged so far.
    pub(crate) count: u16,
    /// Payload of the first segment: no later one may be larger.
    pub(crate) mss: u32,
    /// The sequence number the next segment must have.
    pub(crate) next_seq: u32,
    /// Frame bytes so far (from the Ethernet header).
    pub(crate) frame_len: u32,
    /// Per IP layer (bit 0 outer, bit 1 inner): the IPv4 ID stays fixed
    /// instead of incrementing (decided by the second segment).
    pub(crate) fixed_id: u8,
    /// FIN and PSH of merged segments, for the aggregate's header.
    pub(crate) or_flags: u8,
}

impl Run {
    /// Starts an aggregate with `first`, whose frame is `frame_len` bytes.
    pub(crate) fn start(first: &Segment, frame_len: u32) -> Self {
        Self {
            first: *first,
            count: 1,
            mss: first.payload_len,
            next_seq: first.seq.wrapping_add(first.payload_len),
            frame_len,
            fixed_id: 0,
            or_flags: 0,
        }
    }

    /// The outermost IP datagram's length so far.
    fn datagram_len(&self) -> u32 {
        self.frame_len - u32::from(self.first.ip[0].off)
    }

    /// Whether `seg` (of the same flow, headers `b`) may join this aggregate,
    /// whose first segment's headers are `a`; with the IPv4 ID mode the
    /// second segment decides. Nothing changes unless it may: see [`Run::merge`].
    pub(crate) fn accepts(&self, a: &[u8], b: &[u8], seg: &Segment) -> Option<u8> {
        let f = &self.first;
        let t = usize::from(f.tcp_off);
        // Flags (but FIN and PSH), data offset and window; acknowledgment; options.
        let flag_mask = !(TCP_FIN | TCP_PSH);
        if a[t + 12] != b[t + 12]
            || (a[t + 13] ^ b[t + 13]) & flag_mask != 0
            || a[t + 14..t + 16] != b[t + 14..t + 16]
            || a[t + 8..t + 12] != b[t + 8..t + 12]
            || a[t + 20..t + usize::from(f.tcp_len)] != b[t + 20..t + usize::from(f.tcp_len)]
        {
            return None;
        }
        let mut fixed_id = self.fixed_id;
        for (i, ip) in f.layers().iter().enumerate() {
            let o = usize::from(ip.off);
            if ip.v6 {
                // Traffic class, hop limit.
                let tc = |h: &[u8]| (u16::from_be_bytes([h[o], h[o + 1]]) >> 4) & 0xff;
                if tc(a) != tc(b) || a[o + 7] != b[o + 7] {
                    return None;
                }
            } else {
                // TTL, TOS, DF; the ID increments per segment or stays fixed.
                if a[o + 8] != b[o + 8] || a[o + 1] != b[o + 1] || (a[o + 6] ^ b[o + 6]) & 0x40 != 0
                {
                    return None;
                }
                let id = |h: &[u8]| u16::from_be_bytes([h[o + 4], h[o + 5]]);
                let step = id(b).wrapping_sub(id(a));
                let bit = 1u8 << i;
                if self.count == 1 && step == 0 {
                    fixed_id |= bit;
                }
                let want = if fixed_id & bit != 0 { 0 } else { self.count };
                if step != want {
                    return None;
                }
            }
        }
        let fits = seg.payload_len >= 1
            && seg.payload_len <= self.mss
            && seg.seq == self.next_seq
            && self.datagram_len() + seg.payload_len <= MAX_DATAGRAM
            && self.count < u16::MAX;
        fits.then_some(fixed_id)
    }

    /// Merges `seg`, which [`Run::accepts`] allowed with `fixed_id`. Returns
    /// whether the aggregate is complete now (a short segment, or a flag that
    /// ends it).
    pub(crate) fn merge(&mut self, seg: &Segment, fixed_id: u8) -> bool {
        self.count += 1;
        self.fixed_id = fixed_id;
        self.next_seq = self.next_seq.wrapping_add(seg.payload_len);
        self.frame_len += seg.payload_len;
        self.or_flags |= seg.flags & (TCP_FIN | TCP_PSH);
        seg.payload_len < self.mss || seg.ends_run()
    }

    /// Rewrites the first segment's headers `h` for the whole aggregate: IP
    /// lengths (and IPv4 header checksums), FIN and PSH of merged segments,
    /// and the TCP checksum as GRO leaves a coalesced packet (what
    /// `tcp_gro_complete()` writes, with `CHECKSUM_PARTIAL`): the
    /// pseudo-header sum of the whole TCP length, not inverted, since every
    /// segment's own sum was verified and the stack may segment it again.
    pub(crate) fn finish_headers(&self, h: &mut [u8]) {
        for ip in self.first.layers() {
            let o = usize::from(ip.off);
            let datagram = self.frame_len - u32::from(ip.off);
            if ip.v6 {
                let payload = (datagram - 40) as u16;
                h[o + 4..o + 6].copy_from_slice(&payload.to_be_bytes());
            } else {
                h[o + 2..o + 4].copy_from_slice(&(datagram as u16).to_be_bytes());
                let c = ipv4_header_csum(&h[o..o + 20]);
                h[o + 10..o + 12].copy_from_slice(&c.to_be_bytes());
            }
        }
        let tcp = usize::from(self.first.tcp_off);
        h[tcp + 13] |= self.or_flags;
        let inner = self.first.inner();
        let o = usize::from(inner.off);
        let addrs = if inner.v6 {
            &h[o + 8..o + 40]
        } else {
            &h[o + 12..o + 20]
        };
        let tcp_len = self.frame_len - u32::from(self.first.tcp_off);
        let sum = csum_add(0, addrs) + u64::from(IPPROTO_TCP) + u64::from(tcp_len);
        h[tcp + 16..tcp + 18].copy_from_slice(&csum_fold(sum).to_be_bytes());
    }
}

/// The end of an [`AgeOrder`]: no slot.
const NO_SLOT: u16 = u16::MAX;

/// A slot's neighbours in an [`AgeOrder`] (one per slot of the table).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AgeLink {
    older: u16,
    newer: u16,
}

/// Slot `i`'s link; none for the end of the order.
fn link_mut(links: &mut [AgeLink], i: u16) -> Option<&mut AgeLink> {
    if i == NO_SLOT {
        return None;
    }
    links.get_mut(usize::from(i))
}

impl AgeLink {
    /// A slot in no order.
    pub(crate) const UNLINKED: Self = Self {
        older: NO_SLOT,
        newer: NO_SLOT,
    };
}

/// The order in which a queue's held aggregates started, oldest first: a
/// list threaded through their slots' [`AgeLink`]s (no allocation, every
/// step O(1)). A flush lets aggregates go up in this order, as a NIC whose
/// aggregation contexts each time out on their own does, not in slot order,
/// which is the flows' hash order (upstream's `gro_hw.py` checks that
/// aggregates keep the order of their flows).
// INVARIANT: `oldest` and `newest` are both `NO_SLOT` (empty) or both slots
// of the list; following `newer` from `oldest` reaches `newest` through each
// listed slot once, and `older` links the same chain backwards.
#[derive(Debug)]
pub(crate) struct AgeOrder {
    oldest: u16,
    newest: u16,
}

impl AgeOrder {
    /// No slot listed.
    pub(crate) const EMPTY: Self = Self {
        oldest: NO_SLOT,
        newest: NO_SLOT,
    };

    /// Whether slot `idx` is listed.
    pub(crate) fn contains(&self, links: &[AgeLink], idx: usize) -> bool {
        match links.get(idx) {
            Some(l) => {
                l.older != NO_SLOT || (self.oldest != NO_SLOT && usize::from(self.oldest) == idx)
            }
            None => false,
        }
    }

    /// Lists slot `idx` as the newest (moving it there if it was listed).
    /// Returns false, listing nothing, for an index `links` has no link for
    /// (or too large to be one).
    pub(crate) fn push_newest(&mut self, links: &mut [AgeLink], idx: usize) -> bool {
        let Ok(i) = u16::try_from(idx) else {
            return false;
        };
        if i == NO_SLOT || idx >= links.len() {
            return false;
        }
        self.remove(links, idx);
        links[idx] = AgeLink {
            older: self.newest,
            newer: NO_SLOT,
        };
        match link_mut(links, self.newest) {
            Some(prev) => prev.newer = i,
            None => self.oldest = i,
        }
        self.newest = i;
        true
    }

    /// Takes slot `idx` out of the order (nothing if it is not listed).
    pub(crate) fn remove(&mut self, links: &mut [AgeLink], idx: usize) {
        if !self.contains(links, idx) {
            return;
        }
        let AgeLink { older, newer } = links[idx];
        match link_mut(links, older) {
            Some(l) => l.newer = newer,
            None => self.oldest = newer,
        }
        match link_mut(links, newer) {
            Some(l) => l.older = older,
            None => self.newest = older,
        }
        links[idx] = AgeLink::UNLINKED;
    }

    /// The oldest listed slot.
    pub(crate) fn oldest(&self) -> Option<usize> {
        (self.oldest != NO_SLOT).then_some(usize::from(self.oldest))
    }
}
