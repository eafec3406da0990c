// SPDX-License-Identifier: GPL-2.0

//! The receive parser on valid, truncated and lying frames.

use super::parse::{
    ip_protocol, parse_frame, rss_hash_type, Reject, RssHashType, TcpLayout, ETH_HLEN,
};
use super::Ctx;

const MAX: usize = 256;

/// A frame under construction in a fixed buffer (no allocation in tests either).
struct Frame {
    buf: [u8; MAX],
    len: usize,
}

impl Frame {
    fn new(ethertype: u16) -> Self {
        let mut f = Frame {
            buf: [0; MAX],
            len: ETH_HLEN,
        };
        f.buf[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f.buf[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f.buf[12..14].copy_from_slice(&ethertype.to_be_bytes());
        f
    }
    fn push(&mut self, bytes: &[u8]) -> &mut Self {
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
        self
    }
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// IPv4 header with `opt_words` 4-byte option words, then `l4_len` bytes follow.
fn ipv4(opt_words: usize, proto: u8, l4_len: usize) -> Frame {
    let mut f = Frame::new(0x0800);
    let ihl = 5 + opt_words;
    let total = (ihl * 4 + l4_len) as u16;
    let t = total.to_be_bytes();
    f.push(&[
        0x40 | ihl as u8,
        0,
        t[0],
        t[1],
        0,
        1,
        0x40,
        0,
        64,
        proto,
        0,
        0,
    ]);
    f.push(&[10, 0, 0, 1, 10, 0, 0, 2]);
    for _ in 0..opt_words {
        f.push(&[1, 1, 1, 1]); // NOPs
    }
    f
}

/// A TCP header with `doff` words, ports 1234 -> 5201.
fn tcp(f: &mut Frame, doff: u8) {
    f.push(&[
        0x04,
        0xd2,
        0x14,
        0x51,
        0,
        0,
        0,
        1,
        0,
        0,
        0,
        0,
        doff << 4,
        0x18,
        0xff,
        0xff,
        0,
        0,
        0,
        0,
    ]);
    for _ in 5..doff {
        f.push(&[1, 1, 1, 1]);
    }
}

fn ipv6(next: u8, payload: u16) -> Frame {
    let mut f = Frame::new(0x86dd);
    let p = payload.to_be_bytes();
    f.push(&[0x60, 0, 0, 0, p[0], p[1], next, 64]);
    f.push(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    f.push(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    f
}

fn ipv4_tcp_with_options_splits(t: &mut Ctx) {
    let mut f = ipv4(2, 6, 32 + 100);
    tcp(&mut f, 8);
    f.push(&[0xab; 100]);
    let p = parse_frame(f.bytes());
    check_eq!(
        t,
        p.tcp,
        Ok(TcpLayout {
            header_len: 14 + 28 + 32,
            payload_len: 100
        })
    );
    let key = p.key.unwrap_or_default();
    check_eq!(t, (key.sport, key.dport, key.proto), (1234, 5201, 6));
    check_eq!(t, key.src[..4], [10, 0, 0, 1]);
}

fn ipv4_padding_is_not_payload(t: &mut Ctx) {
    // A bare ACK padded to Ethernet's 60-byte minimum.
    let mut f = ipv4(0, 6, 20);
    tcp(&mut f, 5);
    f.push(&[0; 6]);
    check_eq!(
        t,
        parse_frame(f.bytes()).tcp,
        Ok(TcpLayout {
            header_len: 54,
            payload_len: 0
        })
    );
}

fn ip_protocol_after_vlan_tags(t: &mut Ctx) {
    let f = ipv4(0, 6, 20);
    check_eq!(t, ip_protocol(f.bytes()), Some(6));
    // One 802.1Q tag, then two (802.1ad outside): the protocol behind them.
    for tags in [&[0x8100u16][..], &[0x88a8, 0x8100]] {
        let mut v = Frame::new(tags[0]);
        for (i, _) in tags.iter().enumerate() {
            let next = tags.get(i + 1).copied().unwrap_or(0x0800);
            v.push(&[0, 5]).push(&next.to_be_bytes());
        }
        v.push(&f.bytes()[ETH_HLEN..]);
        check_eq!(t, ip_protocol(v.bytes()), Some(6));
    }
    // IPv6's first next header.
    let mut v6 = Frame::new(0x86dd);
    v6.push(&[0x60, 0, 0, 0, 0, 8, 17, 64]);
    check_eq!(t, ip_protocol(v6.bytes()), Some(17));
    // Not IP, a version that lies, a header cut short.
    check_eq!(t, ip_protocol(Frame::new(0x0806).bytes()), None);
    let mut lie = ipv4(0, 6, 20);
    lie.buf[ETH_HLEN] = 0x65;
    check_eq!(t, ip_protocol(lie.bytes()), None);
    check_eq!(t, ip_protocol(&f.bytes()[..ETH_HLEN + 9]), None);
    check_eq!(t, ip_protocol(&f.bytes()[..10]), None);
}

fn ipv4_truncated_and_lying_headers(t: &mut Ctx) {
    check_eq!(
        t,
        parse_frame(&[0u8; 13]).tcp,
        Err(Reject::TruncatedEthernet)
    );
    check_eq!(
        t,
        parse_frame(Frame::new(0x0806).bytes()).tcp,
        Err(Reject::NotIp)
    );
    let mut f = ipv4(0, 6, 20);
    tcp(&mut f, 5);
    // Cut inside the IP header.
    check_eq!(
        t,
        parse_frame(&f.bytes()[..ETH_HLEN + 19]).tcp,
        Err(Reject::TruncatedIp)
    );
    // IHL 4 (below minimum) and IHL 15 (past the frame).
    let mut bad = Frame {
        buf: f.buf,
        len: f.len,
    };
    bad.buf[ETH_HLEN] = 0x44;
    check_eq!(t, parse_frame(bad.bytes()).tcp, Err(Reject::BadIhl));
    bad.buf[ETH_HLEN] = 0x4f;
    check_eq!(t, parse_frame(bad.bytes()).tcp, Err(Reject::BadIhl));
    // Total length longer than the frame, and shorter than the header.
    let mut bad = Frame {
        buf: f.buf,
        len: f.len,
    };
    bad.buf[ETH_HLEN + 2..ETH_HLEN + 4].copy_from_slice(&1000u16.to_be_bytes());
    check_eq!(t, parse_frame(bad.bytes()).tcp, Err(Reject::BadIpLength));
    bad.buf[ETH_HLEN + 2..ETH_HLEN + 4].copy_from_slice(&10u16.to_be_bytes());
    check_eq!(t, parse_frame(bad.bytes()).tcp, Err(Reject::BadIpLength));
    // Version 6 in an IPv4 ethertype.
    let mut bad = Frame {
        buf: f.buf,
        len: f.len,
    };
    bad.buf[ETH_HLEN] = 0x65;
    check_eq!(t, parse_frame(bad.bytes()).tcp, Err(Reject::TruncatedIp));
}

fn tcp_data_offsets(t: &mut Ctx) {
    for doff in [0u8, 4, 15] {
        let mut f = ipv4(0, 6, 40);
        tcp(&mut f, 5);
        f.push(&[0; 20]);
        f.buf[ETH_HLEN + 20 + 12] = doff << 4;
        // Below the minimum of 5 words, or past the 40 bytes of IP payload.
        check_eq!(t, parse_frame(f.bytes()).tcp, Err(Reject::BadTcpHeader));
    }
    // Largest valid offset: 60-byte header, no payload.
    let mut f = ipv4(0, 6, 60);
    tcp(&mut f, 15);
    check_eq!(
        t,
        parse_frame(f.bytes()).tcp,
        Ok(TcpLayout {
            header_len: 94,
            payload_len: 0
        })
    );
    // TCP header cut short by the IP length.
    let mut f = ipv4(0, 6, 12);
    f.push(&[0; 12]);
    check_eq!(t, parse_frame(f.bytes()).tcp, Err(Reject::BadTcpHeader));
}

fn ipv4_fragments_and_other_protocols(t: &mut Ctx) {
    let mut f = ipv4(0, 6, 20);
    tcp(&mut f, 5);
    f.buf[ETH_HLEN + 6] = 0x20; // more fragments
    check_eq!(t, parse_frame(f.bytes()).tcp, Err(Reject::Fragment));
    let mut u = ipv4(0, 17, 8);
    u.push(&[0x12, 0x34, 0x00, 0x35, 0, 8, 0, 0]);
    let p = parse_frame(u.bytes());
    check_eq!(t, p.tcp, Err(Reject::NotTcp));
    check_eq!(t, p.key.map(|k| (k.sport, k.dport)), Some((0x1234, 53)));
}

fn ipv6_extension_chain(t: &mut Ctx) {
    // Hop-by-hop (8) -> destination options (16) -> TCP.
    let mut f = ipv6(0, 8 + 16 + 20 + 10);
    f.push(&[60, 0, 1, 4, 0, 0, 0, 0]);
    f.push(&[6, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    tcp(&mut f, 5);
    f.push(&[7; 10]);
    let p = parse_frame(f.bytes());
    check_eq!(
        t,
        p.tcp,
        Ok(TcpLayout {
            header_len: 14 + 40 + 24 + 20,
            payload_len: 10
        })
    );
    check_eq!(t, p.key.map(|k| (k.ipv6, k.dport)), Some((true, 5201)));
}

fn ipv6_bad_extension_chains(t: &mut Ctx) {
    // Nine destination-options headers: longer than the parser walks.
    let mut f = ipv6(60, 9 * 8 + 20);
    for i in 0..9 {
        f.push(&[if i == 8 { 6 } else { 60 }, 0, 1, 4, 0, 0, 0, 0]);
    }
    tcp(&mut f, 5);
    check_eq!(t, parse_frame(f.bytes()).tcp, Err(Reject::BadExtHeaders));
    // An extension header claiming more bytes than remain.
    let mut f = ipv6(43, 8 + 20);
    f.push(&[6, 200, 0, 0, 0, 0, 0, 0]);
    tcp(&mut f, 5);
    check_eq!(t, parse_frame(f.bytes()).tcp, Err(Reject::BadExtHeaders));
    // Fragment header, ESP, payload length past the frame, jumbogram.
    let mut f = ipv6(44, 8 + 20);
    f.push(&[6, 0, 0, 1, 0, 0, 0, 1]);
    tcp(&mut f, 5);
    check_eq!(t, parse_frame(f.bytes()).tcp, Err(Reject::Fragment));
    let mut f = ipv6(50, 8);
    f.push(&[0; 8]);
    check_eq!(t, parse_frame(f.bytes()).tcp, Err(Reject::BadExtHeaders));
    let f = ipv6(6, 20);
    check_eq!(t, parse_frame(f.bytes()).tcp, Err(Reject::BadIpLength));
    let mut f = ipv6(0, 0);
    f.push(&[6, 0, 0xc2, 4, 0, 0, 0x10, 0]);
    check_eq!(t, parse_frame(f.bytes()).tcp, Err(Reject::BadIpLength));
}

fn rss_hash_types(t: &mut Ctx) {
    use RssHashType as R;
    let mut f = ipv4(0, 6, 20);
    tcp(&mut f, 5);
    check_eq!(
        t,
        rss_hash_type(f.bytes(), true),
        R(R::L3_IPV4 | R::L4 | R::L4_TCP)
    );
    check_eq!(t, rss_hash_type(f.bytes(), false), R(R::L3_IPV4));
    // IPv4 options; UDP; another protocol (ICMP): L4 without a protocol.
    let f = ipv4(1, 17, 8);
    check_eq!(
        t,
        rss_hash_type(f.bytes(), true),
        R(R::L3_IPV4 | R::L3_DYNHDR | R::L4 | R::L4_UDP)
    );
    let f = ipv4(0, 1, 8);
    check_eq!(t, rss_hash_type(f.bytes(), true), R(R::L3_IPV4 | R::L4));
    let f = ipv6(17, 8);
    check_eq!(
        t,
        rss_hash_type(f.bytes(), true),
        R(R::L3_IPV6 | R::L4 | R::L4_UDP)
    );
    // An extension header first: not walked.
    let f = ipv6(0, 8);
    check_eq!(t, rss_hash_type(f.bytes(), true), R(R::L3_IPV6 | R::L4));
    // Not IP, too short for Ethernet or for its IP header.
    check_eq!(t, rss_hash_type(Frame::new(0x0806).bytes(), true), R::NONE);
    check_eq!(t, rss_hash_type(&f.bytes()[..ETH_HLEN - 1], true), R::NONE);
    check_eq!(t, rss_hash_type(&f.bytes()[..ETH_HLEN + 39], true), R::NONE);
    let f = ipv4(0, 6, 0);
    check_eq!(t, rss_hash_type(&f.bytes()[..ETH_HLEN + 19], true), R::NONE);
}

logic_suite!(
    parse_suite,
    "devmemnic_parse",
    [
        ipv4_tcp_with_options_splits,
        ipv4_padding_is_not_payload,
        ip_protocol_after_vlan_tags,
        ipv4_truncated_and_lying_headers,
        tcp_data_offsets,
        ipv4_fragments_and_other_protocols,
        ipv6_extension_chain,
        ipv6_bad_extension_chains,
        rss_hash_types,
    ]
);
