// SPDX-License-Identifier: GPL-2.0

//! The Toeplitz hash that RSS NICs compute over a flow's addresses and ports.
//!
//! Pure logic: no kernel API, so KUnit runs it in the module and the same file
//! can be compiled on the host.

/// Length of the RSS hash key, as in most NICs and `ethtool -x`.
pub(crate) const RSS_KEY_LEN: usize = 40;

/// The key from Microsoft's RSS verification suite, also many drivers' default.
pub(crate) const DEFAULT_RSS_KEY: [u8; RSS_KEY_LEN] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// Toeplitz hash of `input` under `key`.
///
/// For each set bit of the input (most significant first), XORs in the 32-bit
/// window of the key that starts at that bit. The key must be at least 4 bytes
/// longer than the input; bits beyond the key hash as zero.
pub(crate) fn toeplitz_hash(key: &[u8], input: &[u8]) -> u32 {
    let mut hash = 0u32;
    // The current 32-bit key window; input byte `i` shifts in key byte `i + 4`.
    let mut window = key
        .iter()
        .take(4)
        .fold(0u32, |acc, &b| (acc << 8) | u32::from(b));
    for (i, &byte) in input.iter().enumerate() {
        let incoming = key.get(i + 4).copied().unwrap_or(0);
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                hash ^= window;
            }
            window = (window << 1) | u32::from((incoming >> (7 - bit)) & 1);
        }
    }
    hash
}

/// Hash of an IPv4 TCP/UDP 4-tuple (addresses and ports in network order).
pub(crate) fn hash_v4(key: &[u8], src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> u32 {
    let mut input = [0u8; 12];
    input[0..4].copy_from_slice(&src);
    input[4..8].copy_from_slice(&dst);
    input[8..10].copy_from_slice(&sport.to_be_bytes());
    input[10..12].copy_from_slice(&dport.to_be_bytes());
    toeplitz_hash(key, &input)
}

/// Hash of an IPv6 TCP/UDP 4-tuple (addresses and ports in network order).
pub(crate) fn hash_v6(key: &[u8], src: [u8; 16], dst: [u8; 16], sport: u16, dport: u16) -> u32 {
    let mut input = [0u8; 36];
    input[0..16].copy_from_slice(&src);
    input[16..32].copy_from_slice(&dst);
    input[32..34].copy_from_slice(&sport.to_be_bytes());
    input[34..36].copy_from_slice(&dport.to_be_bytes());
    toeplitz_hash(key, &input)
}

/// The RX queue an indirection table sends a hash to.
///
/// Like hardware, the low bits of the hash index the table. An empty table
/// sends everything to queue 0.
pub(crate) fn indirect(table: &[u32], hash: u32) -> u32 {
    if table.is_empty() {
        return 0;
    }
    table[hash as usize % table.len()]
}
