//! Malformed and edge-case Ethernet frames for the receive path's parser.
//!
//! Each frame is built from a valid TCP/IPv4 or TCP/IPv6 frame between the test
//! addresses (10.9.0.1 -> 10.9.0.2, fd00::1 -> fd00::2), then broken one way.

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
];

/// A small deterministic generator.
pub struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
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
    eth(out, 0x0800);
    let total = (40 + payload) as u16;
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&[0, 1, 0x40, 0, 64, 6, 0, 0, 10, 9, 0, 1, 10, 9, 0, 2]);
    tcp_header(out, r, 5);
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
        _ => {
            ipv4_tcp(out, r, payload);
            let at = 14 + r.below(40);
            out[at] = r.next() as u8;
        }
    }
    out.truncate(max_len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_builds_a_bounded_frame() {
        let mut r = Rng(1);
        let mut out = Vec::new();
        for i in 0..KINDS.len() * 200 {
            frame(i, &mut r, 1514, &mut out);
            assert!(
                out.len() >= 14 && out.len() <= 1514,
                "{} len {}",
                KINDS[i % KINDS.len()],
                out.len()
            );
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
