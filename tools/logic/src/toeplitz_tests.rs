//! Host-only property test of the module's Toeplitz hash against a bit-by-bit
//! reference on pseudorandom keys and inputs. The published vectors are shared
//! with KUnit (`src/logic/tests/toeplitz.rs`).

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
