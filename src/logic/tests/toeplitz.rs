// SPDX-License-Identifier: GPL-2.0

//! The Toeplitz hash against Microsoft's published RSS verification vectors.

use super::toeplitz::{hash_v4, hash_v6, indirect, toeplitz_hash, DEFAULT_RSS_KEY};
use super::Ctx;

/// A published vector: (source, destination, source port, destination port,
/// 4-tuple hash, addresses-only hash).
type Vector<const N: usize> = ([u8; N], [u8; N], u16, u16, u32, u32);

const V4_VECTORS: [Vector<4>; 5] = [
    (
        [66, 9, 149, 187],
        [161, 142, 100, 80],
        2794,
        1766,
        0x51ccc178,
        0x323e8fc2,
    ),
    (
        [199, 92, 111, 2],
        [65, 69, 140, 83],
        14230,
        4739,
        0xc626b0ea,
        0xd718262a,
    ),
    (
        [24, 19, 198, 95],
        [12, 22, 207, 184],
        12898,
        38024,
        0x5c2b394a,
        0xd2d0a5de,
    ),
    (
        [38, 27, 205, 30],
        [209, 142, 163, 6],
        48228,
        2217,
        0xafc7327f,
        0x82989176,
    ),
    (
        [153, 39, 163, 191],
        [202, 188, 127, 2],
        44251,
        1303,
        0x10e828a2,
        0x5d1809c5,
    ),
];

const fn v6(words: [u16; 8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    let mut i = 0;
    while i < 8 {
        out[2 * i] = (words[i] >> 8) as u8;
        out[2 * i + 1] = words[i] as u8;
        i += 1;
    }
    out
}

const V6_VECTORS: [Vector<16>; 3] = [
    (
        v6([0x3ffe, 0x2501, 0x200, 0x1fff, 0, 0, 0, 7]),
        v6([0x3ffe, 0x2501, 0x200, 3, 0, 0, 0, 1]),
        2794,
        1766,
        0x40207d3d,
        0x2cc18cd5,
    ),
    (
        v6([0x3ffe, 0x501, 8, 0, 0x260, 0x97ff, 0xfe40, 0xefab]),
        v6([0xff02, 0, 0, 0, 0, 0, 0, 1]),
        14230,
        4739,
        0xdde51bbf,
        0x0f0c461c,
    ),
    (
        v6([0x3ffe, 0x1900, 0x4545, 3, 0x200, 0xf8ff, 0xfe21, 0x67cf]),
        v6([0xfe80, 0, 0, 0, 0x200, 0xf8ff, 0xfe21, 0x67cf]),
        44251,
        38024,
        0x02d1feef,
        0x4b61e985,
    ),
];

fn ipv4_four_tuple(t: &mut Ctx) {
    for (src, dst, sport, dport, want, _) in V4_VECTORS {
        check_eq!(t, hash_v4(&DEFAULT_RSS_KEY, src, dst, sport, dport), want);
    }
}

fn ipv4_addresses_only(t: &mut Ctx) {
    for (src, dst, _, _, _, want) in V4_VECTORS {
        let mut input = [0u8; 8];
        input[..4].copy_from_slice(&src);
        input[4..].copy_from_slice(&dst);
        check_eq!(t, toeplitz_hash(&DEFAULT_RSS_KEY, &input), want);
    }
}

fn ipv6_four_tuple(t: &mut Ctx) {
    for (src, dst, sport, dport, want, _) in V6_VECTORS {
        check_eq!(t, hash_v6(&DEFAULT_RSS_KEY, src, dst, sport, dport), want);
    }
}

fn ipv6_addresses_only(t: &mut Ctx) {
    for (src, dst, _, _, _, want) in V6_VECTORS {
        let mut input = [0u8; 32];
        input[..16].copy_from_slice(&src);
        input[16..].copy_from_slice(&dst);
        check_eq!(t, toeplitz_hash(&DEFAULT_RSS_KEY, &input), want);
    }
}

fn hash_depends_on_every_tuple_field(t: &mut Ctx) {
    let (src, dst, sport, dport, base, _) = V4_VECTORS[0];
    let mut src2 = src;
    src2[3] ^= 1;
    let mut dst2 = dst;
    dst2[0] ^= 0x80;
    check!(
        t,
        hash_v4(&DEFAULT_RSS_KEY, src2, dst, sport, dport) != base
    );
    check!(
        t,
        hash_v4(&DEFAULT_RSS_KEY, src, dst2, sport, dport) != base
    );
    check!(
        t,
        hash_v4(&DEFAULT_RSS_KEY, src, dst, sport ^ 1, dport) != base
    );
    check!(
        t,
        hash_v4(&DEFAULT_RSS_KEY, src, dst, sport, dport ^ 0x8000) != base
    );
}

fn zero_key_and_empty_input_hash_to_zero(t: &mut Ctx) {
    check_eq!(t, toeplitz_hash(&[0u8; 40], &[0xff; 36]), 0);
    check_eq!(t, toeplitz_hash(&DEFAULT_RSS_KEY, &[]), 0);
    // A single set leading bit selects exactly the first key word.
    check_eq!(t, toeplitz_hash(&DEFAULT_RSS_KEY, &[0x80]), 0x6d5a56da);
}

fn indirection_table_selects_queue(t: &mut Ctx) {
    let table = [0u32, 1, 2, 3, 4, 5, 6, 7];
    check_eq!(t, indirect(&table, 0x51ccc178), 0);
    check_eq!(t, indirect(&table, 0x10e828a2), 2);
    check_eq!(t, indirect(&table, 13), 5);
    check_eq!(t, indirect(&[3, 3], 1), 3);
    check_eq!(t, indirect(&[], 12345), 0);
}

logic_suite!(
    toeplitz_suite,
    "devmemnic_toeplitz",
    [
        ipv4_four_tuple,
        ipv4_addresses_only,
        ipv6_four_tuple,
        ipv6_addresses_only,
        hash_depends_on_every_tuple_field,
        zero_key_and_empty_input_hash_to_zero,
        indirection_table_selects_queue,
    ]
);
