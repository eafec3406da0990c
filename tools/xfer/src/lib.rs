//! The test pattern and checksum dmn-xfer sends and verifies.
//!
//! Byte `i` of a stream with seed `s` is byte `i % 8` (little endian) of
//! `splitmix64(s ^ (i / 8))`, so a receiver checks any offset without state
//! from the sender. The checksum is FNV-1a 64 over the bytes.

pub mod demangle;
pub mod gro_flows;
pub mod inject;
pub mod netkit;

/// SplitMix64 finaliser.
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Fills `buf` with the pattern starting at stream offset `off`.
pub fn fill(seed: u64, off: u64, buf: &mut [u8]) {
    let mut i = 0;
    while i < buf.len() {
        let pos = off + i as u64;
        let word = splitmix64(seed ^ (pos / 8)).to_le_bytes();
        let start = (pos % 8) as usize;
        let n = (8 - start).min(buf.len() - i);
        buf[i..i + n].copy_from_slice(&word[start..start + n]);
        i += n;
    }
}

/// Counts bytes of `buf` that differ from the pattern at offset `off`.
pub fn mismatches(seed: u64, off: u64, buf: &[u8], scratch: &mut [u8]) -> u64 {
    let mut bad = 0;
    let step = scratch.len();
    for (k, chunk) in buf.chunks(step).enumerate() {
        let want = &mut scratch[..chunk.len()];
        fill(seed, off + (k * step) as u64, want);
        bad += chunk
            .iter()
            .zip(want.iter())
            .filter(|(a, b)| a != b)
            .count() as u64;
    }
    bad
}

/// FNV-1a 64 running checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Feeds bytes.
    pub fn update(&mut self, buf: &[u8]) {
        for &b in buf {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_offset_independent() {
        let mut whole = vec![0u8; 1000];
        fill(7, 0, &mut whole);
        for split in [1usize, 3, 8, 13, 999] {
            let mut a = vec![0u8; split];
            let mut b = vec![0u8; 1000 - split];
            fill(7, 0, &mut a);
            fill(7, split as u64, &mut b);
            assert_eq!([a, b].concat(), whole, "split {split}");
        }
    }

    #[test]
    fn mismatches_counts_corruption() {
        let mut buf = vec![0u8; 4096];
        fill(42, 100, &mut buf);
        let mut scratch = vec![0u8; 1000];
        assert_eq!(mismatches(42, 100, &buf, &mut scratch), 0);
        buf[5] ^= 1;
        buf[4000] ^= 0x80;
        assert_eq!(mismatches(42, 100, &buf, &mut scratch), 2);
        // Same bytes at the wrong offset mostly mismatch.
        assert!(mismatches(42, 101, &buf, &mut scratch) > 3000);
        // A different seed mismatches.
        assert!(mismatches(43, 100, &buf, &mut scratch) > 3000);
    }

    #[test]
    fn fnv_known_values() {
        let mut f = Fnv::default();
        f.update(b"");
        assert_eq!(f.0, 0xcbf29ce484222325);
        f.update(b"a");
        assert_eq!(f.0, 0xaf63dc4c8601ec8c);
    }
}
