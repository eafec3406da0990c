//! Host-only property tests of the module's receive parser: every truncation,
//! random mutations and prefixes (hundreds of thousands of frames, built with
//! `Vec`). The fixture cases are shared with KUnit (`src/logic/tests/parse.rs`).

use crate::parse::*;

fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// An IPv4/TCP frame with `payload` bytes, TCP options of `opt` words.
fn ipv4_tcp(payload: usize, opt: usize) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00];
    let total = (20 + 20 + opt * 4 + payload) as u16;
    f.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0x40,
        0,
        64,
        6,
        0,
        0,
    ]);
    f.extend_from_slice(&[192, 168, 1, 1, 192, 168, 1, 2]);
    f.extend_from_slice(&[0x9c, 0x40, 0x14, 0x51, 0, 0, 0, 1, 0, 0, 0, 0]);
    f.extend_from_slice(&[((5 + opt) as u8) << 4, 0x10, 0xff, 0xff, 0, 0, 0, 0]);
    f.extend(std::iter::repeat_n(1, opt * 4));
    f.extend((0..payload).map(|i| i as u8));
    f
}

/// An IPv6/TCP frame behind `ext` 8-byte destination-options headers.
fn ipv6_tcp(payload: usize, ext: usize) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x86, 0xdd];
    let plen = (ext * 8 + 20 + payload) as u16;
    let first = if ext > 0 { 60 } else { 6 };
    f.extend_from_slice(&[0x60, 0, 0, 0, (plen >> 8) as u8, plen as u8, first, 64]);
    f.extend((0..32).map(|i| i as u8));
    for i in 0..ext {
        f.extend_from_slice(&[if i + 1 == ext { 6 } else { 60 }, 0, 1, 4, 0, 0, 0, 0]);
    }
    f.extend_from_slice(&[
        0x9c, 0x40, 0x14, 0x51, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0,
    ]);
    f.extend((0..payload).map(|i| i as u8));
    f
}

#[test]
fn every_truncation_is_rejected_or_consistent() {
    for f in [ipv4_tcp(100, 2), ipv6_tcp(100, 2)] {
        for len in 0..f.len() {
            // A cut frame has an IP length that lies: it must never be split.
            assert!(parse_frame(&f[..len]).tcp.is_err(), "len {len}");
        }
        assert!(parse_frame(&f).tcp.is_ok());
    }
}

#[test]
fn random_mutations_never_panic_and_stay_in_bounds() {
    let mut next = rng(0x1234_5678_9abc_def1);
    let seeds = [
        ipv4_tcp(64, 1),
        ipv6_tcp(64, 3),
        ipv4_tcp(0, 0),
        ipv6_tcp(0, 0),
    ];
    let mut split = 0;
    for i in 0..200_000 {
        let mut f = seeds[i % seeds.len()].clone();
        for _ in 0..(next() % 4 + 1) {
            let at = (next() as usize) % f.len();
            f[at] = next() as u8;
        }
        let cut = (next() as usize) % (f.len() + 1);
        let f = &f[..cut.max(f.len() / 2)];
        if let Ok(l) = parse_frame(f).tcp {
            split += 1;
            assert!(l.header_len >= 14 + 20 + 20, "{l:?}");
            assert!(
                l.header_len + l.payload_len <= f.len(),
                "{l:?} len {}",
                f.len()
            );
        }
    }
    // The mutations leave many frames valid: the check above was exercised.
    assert!(split > 1_000, "only {split} frames split");
}

#[test]
fn prefix_parse_matches_whole_frame_parse() {
    for f in [ipv4_tcp(1448, 3), ipv6_tcp(8940, 4), ipv4_tcp(0, 0)] {
        let whole = parse_frame(&f);
        for n in [f.len(), 256, 128] {
            let n = n.min(f.len());
            let p = parse_prefix(&f[..n], f.len());
            assert_eq!(p, whole, "prefix {n}");
        }
        // Headers cut by the prefix: not split, but not called malformed either.
        assert_eq!(
            parse_prefix(&f[..40], f.len()).tcp,
            Err(Reject::HeadersTooLong)
        );
    }
}

#[test]
fn random_prefixes_agree_or_refuse() {
    let mut next = rng(0xfeed_beef_1234_5678);
    let seeds = [ipv4_tcp(300, 2), ipv6_tcp(300, 5)];
    for i in 0..100_000 {
        let mut f = seeds[i % 2].clone();
        let at = (next() as usize) % 120;
        f[at] = next() as u8;
        let whole = parse_frame(&f);
        let n = (next() as usize) % f.len();
        let p = parse_prefix(&f[..n], f.len());
        // A prefix either finds exactly what the whole frame gives, or says it
        // saw too little; it never finds a different split.
        if let Ok(l) = p.tcp {
            assert_eq!(whole.tcp, Ok(l));
        }
    }
}

/// The coalescer's parser and rules on mutated frames: no panic, no
/// out-of-bounds read, whatever the bytes say.
#[test]
fn coalescer_survives_random_mutations() {
    use crate::gro::{parse_segment, same_flow, Run};
    let mut r = rng(0x6b0);
    let mut base = ipv4_tcp(100, 3);
    let c = crate::gro::ipv4_header_csum(&base[14..34]);
    base[24..26].copy_from_slice(&c.to_be_bytes());
    assert!(parse_segment(&base, base.len()).is_some());
    let mut merged = 0;
    for _ in 0..200_000 {
        let mut a = base.clone();
        let mut b = base.clone();
        for f in [&mut a, &mut b] {
            for _ in 0..(r() % 4) {
                let at = (r() as usize) % f.len();
                f[at] = r() as u8;
            }
            let cut = (r() as usize) % (f.len() + 1);
            if r().is_multiple_of(4) {
                f.truncate(cut);
            }
        }
        let (Some(sa), Some(sb)) = (parse_segment(&a, a.len()), parse_segment(&b, b.len())) else {
            continue;
        };
        assert!(sa.header_len() <= a.len() && sb.header_len() <= b.len());
        if same_flow(&a, &sa, &b, &sb) {
            let mut run = Run::start(&sa, a.len() as u32);
            if let Some(fixed) = run.accepts(&a, &b, &sb) {
                run.merge(&sb, fixed);
                merged += 1;
                let mut h = a[..sa.header_len()].to_vec();
                run.finish_headers(&mut h);
            }
        }
    }
    // Mutations that keep both frames valid and in one flow still merge.
    assert!(merged > 0);
}
