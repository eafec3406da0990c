//! Coalescable TCP/IPv4 segments, as upstream's `gro` tool's capacity test
//! sends them: the first segment of each of many flows, then each flow's
//! second, so that a receiver with hardware GRO holds every flow at once.
//!
//! Frames go from 10.9.0.1 to 10.9.0.2 (the guest tests' pair), source port
//! `FIRST_PORT + flow`, destination port [`DPORT`], to the broadcast MAC (so
//! that the receiving stack sends nothing back). Each carries the ACK flag
//! alone, DF and an IPv4 ID that increments per segment, and correct IPv4
//! and TCP checksums: what a NIC that coalesces verifies before it merges.

/// Destination port of every flow (upstream's `gro` uses 8000 too).
pub const DPORT: u16 = 8000;
/// Source port of flow 0.
pub const FIRST_PORT: u16 = 20000;
/// Most flows: source ports stay below 65,536.
pub const MAX_FLOWS: u16 = 65535 - FIRST_PORT;
const HEADERS: usize = 14 + 20 + 20;

/// Ones' complement sum of `bytes` (an odd last byte padded with zero) added
/// to `sum`, not folded.
fn csum_add(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut pairs = bytes.chunks_exact(2);
    for p in &mut pairs {
        sum += u32::from(u16::from_be_bytes([p[0], p[1]]));
    }
    if let [last] = pairs.remainder() {
        sum += u32::from(*last) << 8;
    }
    sum
}

/// Folds a sum to 16 bits.
fn csum_fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Writes segment `second` (0 or 1) of flow `flow` with `payload` bytes into
/// `out` (cleared first). `flow` must be below [`MAX_FLOWS`].
pub fn segment(flow: u16, second: bool, payload: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&[0xff; 6]);
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x98]);
    out.extend_from_slice(&0x0800u16.to_be_bytes());
    let total = (20 + 20 + payload) as u16;
    let id = flow.wrapping_mul(2).wrapping_add(u16::from(second));
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x40, 0, 64, 6, 0, 0, 10, 9, 0, 1, 10, 9, 0, 2]);
    let ip_sum = !csum_fold(csum_add(0, &out[14..34]));
    out[24..26].copy_from_slice(&ip_sum.to_be_bytes());
    let seq = 1000 + if second { payload as u32 } else { 0 };
    out.extend_from_slice(&(FIRST_PORT + flow).to_be_bytes());
    out.extend_from_slice(&DPORT.to_be_bytes());
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&1u32.to_be_bytes());
    // Data offset 5, ACK, window 65535, checksum, urgent pointer.
    out.extend_from_slice(&[0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0]);
    out.extend((0..payload).map(|i| (i as u8) ^ (flow as u8)));
    // Pseudo-header: addresses, protocol, TCP length.
    let mut sum = csum_add(0, &out[26..34]);
    sum += 6 + (20 + payload) as u32;
    let tcp_sum = !csum_fold(csum_add(sum, &out[34..]));
    out[50..52].copy_from_slice(&tcp_sum.to_be_bytes());
}

/// Frame length of a segment with `payload` bytes.
pub fn frame_len(payload: usize) -> usize {
    HEADERS + payload
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp_sum_of(f: &[u8]) -> u16 {
        let tcp_len = f.len() - 34;
        let mut sum = csum_add(0, &f[26..34]);
        sum += 6 + tcp_len as u32;
        csum_fold(csum_add(sum, &f[34..]))
    }

    #[test]
    fn checksums_hold() {
        let mut f = Vec::new();
        for (flow, second, payload) in [
            (0, false, 200),
            (511, true, 200),
            (3, true, 1),
            (7, false, 0),
        ] {
            segment(flow, second, payload, &mut f);
            assert_eq!(f.len(), frame_len(payload));
            assert_eq!(
                csum_fold(csum_add(0, &f[14..34])),
                0xffff,
                "IPv4 header sum"
            );
            assert_eq!(tcp_sum_of(&f), 0xffff, "TCP sum");
        }
    }

    #[test]
    fn second_segment_follows_the_first() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        segment(42, false, 200, &mut a);
        segment(42, true, 200, &mut b);
        let seq = |f: &[u8]| u32::from_be_bytes([f[38], f[39], f[40], f[41]]);
        let id = |f: &[u8]| u16::from_be_bytes([f[18], f[19]]);
        assert_eq!(seq(&b), seq(&a) + 200);
        assert_eq!(id(&b), id(&a) + 1);
        // Same flow: addresses and ports; ACK alone (no PSH to end it).
        assert_eq!(a[26..38], b[26..38]);
        assert_eq!(a[47], 0x10);
        assert_eq!(u16::from_be_bytes([a[34], a[35]]), FIRST_PORT + 42);
        assert_eq!(u16::from_be_bytes([a[36], a[37]]), DPORT);
    }

    #[test]
    fn flows_differ_in_source_port_only() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        segment(0, false, 64, &mut a);
        segment(1, false, 64, &mut b);
        assert_ne!(a[34..36], b[34..36]);
        assert_eq!(a[26..34], b[26..34]);
    }
}
