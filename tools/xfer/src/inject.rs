//! Malformed and edge-case Ethernet frames for the receive path's parser.
//!
//! Each frame is built from a valid TCP/IPv4 or TCP/IPv6 frame between the test
//! addresses (10.9.0.1 -> 10.9.0.2, fd00::1 -> fd00::2), then broken one way,
//! or is a legal but unusual frame (maximal IPv4 or TCP options, an 802.1Q tag,
//! hop-by-hop after dest-opts). Every frame is cut to `max_len` bytes at the end;
//! the IPv6 payload length of the `ipv6-ext-*`, `ipv6-hop-by-hop-not-first` and
//! `ipv6-fragment-chain` kinds matches the frame as cut, so there only the
//! extension headers are wrong. IP and TCP checksums are left zero.

/// The kinds of frame `frame` builds, one per index.
pub const KINDS: &[&str] = &[
    "ipv4-truncated-header",
    "ipv4-bad-ihl",
    "ipv4-length-lies",
    "ipv4-fragment",
    "tcp-bad-data-offset",
    "ipv6-long-ext-chain",
    "ipv6-truncated-ext-header",
    "ipv6-length-lies",
    "ipv6-fragment-header",
    "non-tcp",
    "non-ip",
    "tcp-zero-payload",
    "tcp-max-size",
    "garbage-after-ethernet",
    "tcp-header-byte-flipped",
    "ipv6-ext-chain-never-ends",
    "ipv6-ext-chain-self-loop",
    "ipv6-ext-len-lies",
    "ipv6-hop-by-hop-not-first",
    "ipv6-fragment-chain",
    "ipv4-max-options",
    "tcp-max-options",
    "vlan-tagged-tcp",
    "ipv6-zero-payload-len",
];

/// A small deterministic generator.
pub struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn eth(out: &mut Vec<u8>, ethertype: u16) {
    out.clear();
    out.extend_from_slice(&[0xff; 6]);
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x99]);
    out.extend_from_slice(&ethertype.to_be_bytes());
}

fn tcp_header(out: &mut Vec<u8>, r: &mut Rng, doff: u8) {
    let sport = 40000 + r.below(1000) as u16;
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&9u16.to_be_bytes());
    out.extend_from_slice(&(r.next() as u32).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, doff << 4, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    for _ in 5..doff.max(5) {
        out.extend_from_slice(&[1, 1, 1, 1]);
    }
}

fn ipv4_tcp(out: &mut Vec<u8>, r: &mut Rng, payload: usize) {
    ipv4_tcp_with(out, r, &[], 5, payload);
}

/// A TCP/IPv4 frame with IP options `ip_opts` (a multiple of 4 bytes, at most
/// 40) and TCP data offset `doff`, all lengths consistent.
fn ipv4_tcp_with(out: &mut Vec<u8>, r: &mut Rng, ip_opts: &[u8], doff: u8, payload: usize) {
    eth(out, 0x0800);
    let ihl = 5 + ip_opts.len() / 4;
    let total = (ihl * 4 + doff as usize * 4 + payload) as u16;
    out.extend_from_slice(&[0x40 | ihl as u8, 0]);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&[0, 1, 0x40, 0, 64, 6, 0, 0, 10, 9, 0, 1, 10, 9, 0, 2]);
    out.extend_from_slice(ip_opts);
    tcp_header(out, r, doff);
    out.extend((0..payload).map(|_| r.next() as u8));
}

fn ipv6_hdr(out: &mut Vec<u8>, next: u8, plen: u16) {
    eth(out, 0x86dd);
    out.extend_from_slice(&[0x60, 0, 0, 0]);
    out.extend_from_slice(&plen.to_be_bytes());
    out.extend_from_slice(&[next, 64]);
    out.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    out.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
}

/// Sets the IPv6 payload length to what follows the IPv6 header once the frame
/// is cut to `max_len` bytes.
fn set_ipv6_plen(out: &mut [u8], max_len: usize) {
    let plen = out.len().min(max_len).saturating_sub(54).min(0xffff) as u16;
    out[18..20].copy_from_slice(&plen.to_be_bytes());
}

/// Appends an IPv6 extension header of type `ty` (0 hop-by-hop, 60 dest-opts:
/// PadN/Pad1 options; 43 routing: type 0 with no segments left) naming `next`,
/// `(len + 1) * 8` bytes long.
fn ext_hdr(out: &mut Vec<u8>, ty: u8, next: u8, len: u8) {
    out.extend_from_slice(&[next, len]);
    let mut body = (len as usize + 1) * 8 - 2;
    if ty == 43 {
        out.resize(out.len() + body, 0);
        return;
    }
    while body > 0 {
        if body == 1 {
            out.push(0);
            break;
        }
        let n = (body - 2).min(255);
        out.extend_from_slice(&[1, n as u8]);
        out.resize(out.len() + n, 0);
        body -= n + 2;
    }
}

/// Builds frame kind `kind` (an index into [`KINDS`]) of at most `max_len` bytes.
pub fn frame(kind: usize, r: &mut Rng, max_len: usize, out: &mut Vec<u8>) {
    let payload = r.below(200);
    match kind % KINDS.len() {
        0 => {
            ipv4_tcp(out, r, 0);
            out.truncate(14 + r.below(20));
        }
        1 => {
            ipv4_tcp(out, r, payload);
            out[14] = 0x40 | [0u8, 1, 4, 15][r.below(4)];
        }
        2 => {
            ipv4_tcp(out, r, payload);
            let lie = [
                0u16,
                19,
                21,
                40 + payload as u16 + 1 + r.below(60000) as u16,
            ][r.below(4)];
            out[16..18].copy_from_slice(&lie.to_be_bytes());
        }
        3 => {
            ipv4_tcp(out, r, payload);
            out[20] = if r.below(2) == 0 { 0x20 } else { 0x00 };
            out[21] = if out[20] == 0 {
                1 + r.below(255) as u8
            } else {
                0
            };
        }
        4 => {
            ipv4_tcp(out, r, payload);
            out[14 + 20 + 12] = ([0u8, 1, 4, 15][r.below(4)]) << 4;
        }
        5 => {
            let n = 9 + r.below(20);
            ipv6_hdr(out, 60, (n * 8 + 20) as u16);
            for i in 0..n {
                out.extend_from_slice(&[if i + 1 == n { 6 } else { 60 }, 0, 1, 4, 0, 0, 0, 0]);
            }
            tcp_header(out, r, 5);
        }
        6 => {
            ipv6_hdr(out, 43, 8 + 20);
            out.extend_from_slice(&[6, 1 + r.below(250) as u8, 0, 0, 0, 0, 0, 0]);
            tcp_header(out, r, 5);
        }
        7 => {
            ipv6_hdr(out, 6, 0);
            tcp_header(out, r, 5);
            out.extend((0..payload).map(|_| r.next() as u8));
            let lie = [0u16, 19, 20 + payload as u16 + 1 + r.below(1000) as u16][r.below(3)];
            out[18..20].copy_from_slice(&lie.to_be_bytes());
        }
        8 => {
            ipv6_hdr(out, 44, 8 + 20);
            out.extend_from_slice(&[6, 0, 0, 1, 0, 0, 0, 1]);
            tcp_header(out, r, 5);
        }
        9 => {
            ipv4_tcp(out, r, payload);
            out[23] = [17u8, 1, 47, 132][r.below(4)];
        }
        10 => {
            eth(out, [0x0806u16, 0x8100, 0x88cc, 0x1234][r.below(4)]);
            out.extend((0..payload).map(|_| r.next() as u8));
        }
        11 => ipv4_tcp(out, r, 0),
        12 => {
            let room = max_len.saturating_sub(54);
            ipv4_tcp(out, r, room);
        }
        13 => {
            eth(out, if r.below(2) == 0 { 0x0800 } else { 0x86dd });
            out.extend((0..r.below(300)).map(|_| r.next() as u8));
        }
        14 => {
            ipv4_tcp(out, r, payload);
            let at = 14 + r.below(40);
            out[at] = r.next() as u8;
        }
        15 => {
            // 0 -> 60 -> 43 -> 0 ... up to and past the end of the frame; no
            // header ends exactly at the frame's end, so the last is cut.
            const CYCLE: [u8; 3] = [0, 60, 43];
            let mut at = r.below(3);
            ipv6_hdr(out, CYCLE[at], 0);
            while out.len() < max_len {
                let ty = CYCLE[at];
                at = (at + 1) % CYCLE.len();
                let mut len = r.below(4);
                if (len + 1) * 8 == max_len - out.len() {
                    len += 1;
                }
                ext_hdr(out, ty, CYCLE[at], len as u8);
            }
            set_ipv6_plen(out, max_len);
        }
        16 => {
            let ty = [0u8, 60, 43][r.below(3)];
            let n = 1 + r.below(40);
            let last = if r.below(2) == 0 { 59 } else { 6 };
            ipv6_hdr(out, ty, 0);
            for i in 0..n {
                ext_hdr(
                    out,
                    ty,
                    if i + 1 == n { last } else { ty },
                    r.below(2) as u8,
                );
            }
            if last == 6 {
                tcp_header(out, r, 5);
                let keep = out.len() - 20 + 1 + r.below(19);
                out.truncate(keep);
            }
            set_ipv6_plen(out, max_len);
        }
        17 => {
            // Claims (n + 1) * 8 >= 32 bytes; only 8 + 20 follow.
            let ty = [60u8, 0, 43][r.below(3)];
            ipv6_hdr(out, ty, 0);
            ext_hdr(out, ty, 6, 0);
            out[55] = 3 + r.below(253) as u8;
            tcp_header(out, r, 5);
            set_ipv6_plen(out, max_len);
        }
        18 => {
            ipv6_hdr(out, 60, 0);
            ext_hdr(out, 60, 0, 0);
            ext_hdr(out, 0, 6, 0);
            tcp_header(out, r, 5);
            out.extend((0..1 + r.below(64)).map(|_| r.next() as u8));
            set_ipv6_plen(out, max_len);
        }
        19 => {
            let dest_opts = r.below(2) == 0;
            ipv6_hdr(out, if dest_opts { 60 } else { 44 }, 0);
            if dest_opts {
                ext_hdr(out, 60, 44, 0);
            }
            let offset = if r.below(2) == 0 {
                0
            } else {
                1 + r.below(8191)
            };
            let more = r.below(2) as u16;
            out.extend_from_slice(&[6, 0]);
            out.extend_from_slice(&((offset as u16) << 3 | more).to_be_bytes());
            out.extend_from_slice(&(r.next() as u32).to_be_bytes());
            if offset == 0 {
                tcp_header(out, r, 5);
                out.extend((0..payload).map(|_| r.next() as u8));
            } else {
                out.extend((0..1 + payload).map(|_| r.next() as u8));
            }
            set_ipv6_plen(out, max_len);
        }
        20 => {
            // k NOPs, then end-of-list and zero padding.
            let mut opts = [0u8; 40];
            opts[..r.below(40)].fill(1);
            let payload = payload.min(max_len.saturating_sub(14 + 60 + 20));
            ipv4_tcp_with(out, r, &opts, 5, payload);
        }
        21 => {
            // IPv4 and IPv6 on alternate rounds through KINDS.
            let payload = 1 + payload;
            if (kind / KINDS.len()).is_multiple_of(2) {
                let payload = payload.min(max_len.saturating_sub(14 + 20 + 60));
                ipv4_tcp_with(out, r, &[], 15, payload);
            } else {
                let payload = payload.min(max_len.saturating_sub(14 + 40 + 60));
                ipv6_hdr(out, 6, 0);
                tcp_header(out, r, 15);
                out.extend((0..payload).map(|_| r.next() as u8));
                set_ipv6_plen(out, max_len);
            }
        }
        22 => {
            let payload = payload.min(max_len.saturating_sub(18 + 40));
            ipv4_tcp(out, r, payload);
            let tci = ((r.below(8) as u16) << 13) | (1 + r.below(4094)) as u16;
            let [hi, lo] = tci.to_be_bytes();
            out.splice(12..12, [0x81, 0x00, hi, lo]);
        }
        _ => {
            // 23: payload length 0 with a TCP segment after the header.
            ipv6_hdr(out, 6, 0);
            tcp_header(out, r, 5);
            out.extend((0..payload).map(|_| r.next() as u8));
        }
    }
    out.truncate(max_len);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(name: &str) -> usize {
        KINDS.iter().position(|k| *k == name).unwrap()
    }

    fn be16(out: &[u8], at: usize) -> usize {
        u16::from_be_bytes([out[at], out[at + 1]]) as usize
    }

    /// Frames of kind `name` built with `max_len`, from consecutive rounds
    /// through KINDS as `inject` numbers them.
    fn frames(name: &str, max_len: usize, n: usize) -> Vec<Vec<u8>> {
        let mut r = Rng(7);
        (0..n)
            .map(|round| {
                let mut out = Vec::new();
                frame(idx(name) + round * KINDS.len(), &mut r, max_len, &mut out);
                out
            })
            .collect()
    }

    #[test]
    fn kinds_are_unique_and_old_indices_kept() {
        assert_eq!(KINDS.len(), 24);
        assert_eq!(KINDS[14], "tcp-header-byte-flipped");
        assert_eq!(KINDS[23], "ipv6-zero-payload-len");
        for (i, k) in KINDS.iter().enumerate() {
            assert_eq!(idx(k), i, "{k} listed twice");
        }
    }

    #[test]
    fn every_kind_builds_a_bounded_frame() {
        for max_len in [60, 61, 62, 63, 64, 70, 94, 114, 128, 1514, 9014] {
            let mut r = Rng(1);
            let mut out = Vec::new();
            for i in 0..KINDS.len() * 200 {
                frame(i, &mut r, max_len, &mut out);
                assert!(
                    out.len() >= 14 && out.len() <= max_len,
                    "{} max_len {max_len} len {}",
                    KINDS[i % KINDS.len()],
                    out.len()
                );
            }
        }
    }

    #[test]
    fn ext_chain_never_ends_fills_the_frame_without_reaching_tcp() {
        for max_len in [60, 61, 62, 69, 70, 100, 1514, 9014] {
            for out in frames("ipv6-ext-chain-never-ends", max_len, 100) {
                assert_eq!(out.len(), max_len);
                assert_eq!(be16(&out, 12), 0x86dd);
                assert_eq!(be16(&out, 18), max_len - 54);
                let (mut next, mut off) = (out[20], 54);
                while off + 2 <= out.len() {
                    assert!(matches!(next, 0 | 60 | 43), "next header {next} at {off}");
                    next = out[off];
                    off += (out[off + 1] as usize + 1) * 8;
                }
                assert!(matches!(next, 0 | 60 | 43), "next header {next} at {off}");
                assert_ne!(off, out.len(), "last header not cut by the frame end");
            }
        }
    }

    #[test]
    fn ext_chain_self_loop_repeats_one_type_then_ends() {
        let mut saw = [false; 2];
        for out in frames("ipv6-ext-chain-self-loop", 1514, 200) {
            let ty = out[20];
            assert!(matches!(ty, 0 | 60 | 43));
            let (mut off, mut n) = (54, 0);
            let last = loop {
                let next = out[off];
                off += (out[off + 1] as usize + 1) * 8;
                n += 1;
                if next != ty {
                    break next;
                }
            };
            assert!((1..=40).contains(&n), "{n} headers");
            assert_eq!(be16(&out, 18), out.len() - 54);
            match last {
                59 => {
                    assert_eq!(off, out.len());
                    saw[0] = true;
                }
                6 => {
                    assert!(off < out.len() && out.len() < off + 20, "TCP not truncated");
                    saw[1] = true;
                }
                _ => panic!("last next header {last}"),
            }
        }
        assert_eq!(saw, [true, true]);
    }

    #[test]
    fn ext_len_lies_claims_more_than_the_frame_holds() {
        for out in frames("ipv6-ext-len-lies", 1514, 200) {
            assert!(matches!(out[20], 0 | 60 | 43));
            assert_eq!(out[54], 6);
            assert!((out[55] as usize + 1) * 8 > out.len() - 54);
            assert_eq!(be16(&out, 18), out.len() - 54);
            assert_eq!(out.len(), 54 + 8 + 20);
        }
    }

    #[test]
    fn hop_by_hop_follows_dest_opts() {
        for out in frames("ipv6-hop-by-hop-not-first", 1514, 50) {
            assert_eq!((out[20], out[54], out[62]), (60, 0, 6));
            assert_eq!(out[70 + 12] >> 4, 5);
            assert!(out.len() > 70 + 20);
            assert_eq!(be16(&out, 18), out.len() - 54);
        }
    }

    #[test]
    fn fragment_chain_first_fragments_carry_tcp() {
        let (mut first, mut later, mut dest_opts) = (0, 0, 0);
        for out in frames("ipv6-fragment-chain", 1514, 200) {
            let at = match out[20] {
                44 => 54,
                60 => {
                    assert_eq!(out[54], 44);
                    dest_opts += 1;
                    62
                }
                n => panic!("next header {n}"),
            };
            assert_eq!(out[at], 6);
            assert_eq!(be16(&out, 18), out.len() - 54);
            if be16(&out, at + 2) >> 3 == 0 {
                assert_eq!(out[at + 8 + 12] >> 4, 5);
                assert!(out.len() >= at + 8 + 20);
                first += 1;
            } else {
                assert!(out.len() > at + 8);
                later += 1;
            }
        }
        assert!(first > 0 && later > 0 && dest_opts > 0);
    }

    #[test]
    fn ipv4_max_options_frames_are_otherwise_well_formed() {
        for max_len in [94, 115, 1514, 9014] {
            for out in frames("ipv4-max-options", max_len, 100) {
                assert_eq!(be16(&out, 12), 0x0800);
                assert_eq!((out[14], out[23]), (0x4f, 6));
                assert_eq!(be16(&out, 16), out.len() - 14);
                let opts = &out[34..74];
                let eol = opts.iter().position(|&b| b == 0).expect("no end of list");
                assert!(opts[..eol].iter().all(|&b| b == 1));
                assert!(opts[eol..].iter().all(|&b| b == 0));
                assert_eq!(out[74 + 12] >> 4, 5);
            }
        }
    }

    #[test]
    fn tcp_max_options_frames_are_otherwise_well_formed() {
        for max_len in [115, 1514, 9014] {
            let (mut v4, mut v6) = (0, 0);
            for out in frames("tcp-max-options", max_len, 100) {
                let tcp = match be16(&out, 12) {
                    0x0800 => {
                        assert_eq!((out[14], out[23]), (0x45, 6));
                        assert_eq!(be16(&out, 16), out.len() - 14);
                        v4 += 1;
                        34
                    }
                    0x86dd => {
                        assert_eq!(out[20], 6);
                        assert_eq!(be16(&out, 18), out.len() - 54);
                        v6 += 1;
                        54
                    }
                    t => panic!("ethertype {t:#x}"),
                };
                assert_eq!(out[tcp + 12] >> 4, 15);
                assert!(out[tcp + 20..tcp + 60].iter().all(|&b| b == 1));
                assert!(out.len() > tcp + 60, "no payload");
            }
            assert_eq!((v4, v6), (50, 50));
        }
    }

    #[test]
    fn vlan_tagged_tcp_carries_valid_ipv4() {
        for max_len in [60, 1514, 9014] {
            for out in frames("vlan-tagged-tcp", max_len, 100) {
                assert_eq!(be16(&out, 12), 0x8100);
                assert!((1..4095).contains(&(be16(&out, 14) & 0xfff)));
                assert_eq!(be16(&out, 16), 0x0800);
                assert_eq!((out[18], out[27]), (0x45, 6));
                if max_len >= 18 + 40 {
                    assert_eq!(be16(&out, 20), out.len() - 18);
                }
            }
        }
    }

    #[test]
    fn zero_payload_len_has_bytes_after_the_header() {
        for out in frames("ipv6-zero-payload-len", 1514, 50) {
            assert_eq!((be16(&out, 12), out[20]), (0x86dd, 6));
            assert_eq!(be16(&out, 18), 0);
            assert!(out.len() >= 54 + 20);
        }
    }

    #[test]
    fn max_size_frame_is_full_length_and_valid_ipv4() {
        let mut r = Rng(2);
        let mut out = Vec::new();
        frame(12, &mut r, 9014, &mut out);
        assert_eq!(out.len(), 9014);
        assert_eq!(u16::from_be_bytes([out[16], out[17]]) as usize, 9014 - 14);
    }
}
