//! Host tests of the module's Toeplitz hash.

use crate::toeplitz::*;
use std::net::Ipv6Addr;

/// A reference Toeplitz: the definition, one input bit at a time, on a bit vector.
fn reference(key: &[u8], input: &[u8]) -> u32 {
    let key_bit = |i: usize| -> u32 {
        key.get(i / 8)
            .map(|b| u32::from((b >> (7 - i % 8)) & 1))
            .unwrap_or(0)
    };
    let mut hash = 0u32;
    for i in 0..input.len() * 8 {
        if input[i / 8] & (0x80 >> (i % 8)) != 0 {
            let window = (0..32).fold(0u32, |w, j| (w << 1) | key_bit(i + j));
            hash ^= window;
        }
    }
    hash
}

fn v6(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}

#[test]
fn published_ipv4_vectors() {
    let k = &DEFAULT_RSS_KEY;
    assert_eq!(
        hash_v4(k, [66, 9, 149, 187], [161, 142, 100, 80], 2794, 1766),
        0x51ccc178
    );
    assert_eq!(
        hash_v4(k, [199, 92, 111, 2], [65, 69, 140, 83], 14230, 4739),
        0xc626b0ea
    );
    assert_eq!(
        hash_v4(k, [24, 19, 198, 95], [12, 22, 207, 184], 12898, 38024),
        0x5c2b394a
    );
    assert_eq!(
        hash_v4(k, [38, 27, 205, 30], [209, 142, 163, 6], 48228, 2217),
        0xafc7327f
    );
    assert_eq!(
        hash_v4(k, [153, 39, 163, 191], [202, 188, 127, 2], 44251, 1303),
        0x10e828a2
    );
}

#[test]
fn published_ipv6_vectors() {
    let k = &DEFAULT_RSS_KEY;
    assert_eq!(
        hash_v6(
            k,
            v6("3ffe:2501:200:1fff::7"),
            v6("3ffe:2501:200:3::1"),
            2794,
            1766
        ),
        0x40207d3d
    );
    assert_eq!(
        hash_v6(
            k,
            v6("3ffe:501:8::260:97ff:fe40:efab"),
            v6("ff02::1"),
            14230,
            4739
        ),
        0xdde51bbf
    );
    assert_eq!(
        hash_v6(
            k,
            v6("3ffe:1900:4545:3:200:f8ff:fe21:67cf"),
            v6("fe80::200:f8ff:fe21:67cf"),
            44251,
            38024
        ),
        0x02d1feef
    );
}

#[test]
fn matches_reference_on_pseudorandom_inputs() {
    // xorshift: deterministic inputs, no dependency.
    let mut s = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for _ in 0..2000 {
        let mut key = [0u8; RSS_KEY_LEN];
        key.iter_mut().for_each(|b| *b = next() as u8);
        let len = (next() % 37) as usize;
        let input: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        assert_eq!(
            toeplitz_hash(&key, &input),
            reference(&key, &input),
            "key {key:x?} input {input:x?}"
        );
    }
}

#[test]
fn indirection_wraps_and_handles_empty_table() {
    assert_eq!(indirect(&[0, 1, 2, 3], 6), 2);
    assert_eq!(indirect(&[7], u32::MAX), 7);
    assert_eq!(indirect(&[], 5), 0);
}
