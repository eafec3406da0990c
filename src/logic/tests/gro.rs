// SPDX-License-Identifier: GPL-2.0

//! The coalescer's rules: what parses, what merges, the aggregate's headers.

use super::gro::{
    csum_add, csum_fold, parse_segment, same_flow, tcp_complete_sum, tcp_pseudo_sum, AgeLink,
    AgeOrder, Run, Segment, MAX_DATAGRAM, TCP_CHECK_OFF, TCP_CWR, TCP_FIN, TCP_PSH, TCP_SYN,
};
use super::Ctx;

const MAX: usize = 320;
const ACK: u8 = 0x10;

/// How a test frame is built.
#[derive(Clone, Copy)]
struct Spec {
    /// 4 (IPv4), 6 (IPv6), 44 (IPv4 in IPv4), 66 (IPv6 in IPv6).
    kind: u8,
    payload: usize,
    seq: u32,
    flags: u8,
    ttl: u8,
    id: u16,
    df: bool,
    /// IPv6 destination-options header with this filler byte.
    dstopts: Option<u8>,
    /// TCP timestamp option with this value.
    ts: Option<u8>,
}

impl Spec {
    fn new(kind: u8, payload: usize, seq: u32) -> Self {
        Spec {
            kind,
            payload,
            seq,
            flags: ACK,
            ttl: 64,
            id: 0,
            df: true,
            dstopts: None,
            ts: None,
        }
    }
}

/// A frame in a fixed buffer (no allocation in tests either).
struct Frame {
    buf: [u8; MAX],
    len: usize,
}

impl Frame {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

fn be16_at(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Builds the frame `s` describes, checksums right.
fn build(s: &Spec) -> Frame {
    let mut f = Frame {
        buf: [0; MAX],
        len: 0,
    };
    let b = &mut f.buf;
    b[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    b[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    let v6 = s.kind == 6 || s.kind == 66;
    put16(b, 12, if v6 { 0x86dd } else { 0x0800 });
    let layers = if s.kind >= 44 { 2 } else { 1 };
    let ip_len = if v6 { 40 } else { 20 };
    let ext = if s.dstopts.is_some() { 8 } else { 0 };
    let tcp_len = if s.ts.is_some() { 32 } else { 20 };
    let tcp_off = 14 + layers * ip_len + ext;
    let total = tcp_off + tcp_len + s.payload;
    for l in 0..layers {
        let o = 14 + l * ip_len;
        let inner = l + 1 == layers;
        if v6 {
            b[o] = 0x60;
            put16(b, o + 4, (total - o - 40) as u16);
            b[o + 6] = match (inner, s.dstopts.is_some()) {
                (false, _) => 41,
                (true, true) => 60,
                (true, false) => 6,
            };
            b[o + 7] = s.ttl;
            b[o + 8] = 0xfd;
            b[o + 23] = 2;
            b[o + 24] = 0xfd;
            b[o + 39] = 1;
        } else {
            b[o] = 0x45;
            put16(b, o + 2, (total - o) as u16);
            put16(b, o + 4, s.id);
            b[o + 6] = if s.df { 0x40 } else { 0 };
            b[o + 8] = s.ttl;
            b[o + 9] = if inner { 6 } else { 4 };
            b[o + 12..o + 20].copy_from_slice(&[192, 168, 1, 200, 192, 168, 1, 100]);
            let c = !csum_fold(csum_add(0, &b[o..o + 20]));
            put16(b, o + 10, c);
        }
    }
    if let Some(fill) = s.dstopts {
        let o = tcp_off - 8;
        b[o] = 6;
        b[o + 2..o + 8].fill(fill);
    }
    let t = tcp_off;
    put16(b, t, 1500);
    put16(b, t + 2, 8000);
    b[t + 4..t + 8].copy_from_slice(&s.seq.to_be_bytes());
    b[t + 8..t + 12].copy_from_slice(&100u32.to_be_bytes());
    b[t + 12] = ((tcp_len / 4) as u8) << 4;
    b[t + 13] = s.flags;
    put16(b, t + 14, 0xffff);
    if let Some(ts) = s.ts {
        b[t + 20..t + 24].copy_from_slice(&[1, 1, 8, 10]);
        b[t + 27] = ts;
    }
    b[t + tcp_len..total].fill(b'a');
    f.len = total;
    f
}

/// Parses a built frame, failing the case if it does not parse.
fn seg(t: &mut Ctx, f: &Frame) -> Segment {
    match parse_segment(f.bytes(), f.len) {
        Some(s) => s,
        None => {
            t.fail(format_args!("a valid segment did not parse"));
            Segment::default()
        }
    }
}

/// Whether `b` joins the aggregate started by `a` (merging it if so).
fn joins(run: &mut Run, a: &Frame, b: &Frame, sb: &Segment) -> bool {
    match run.accepts(a.bytes(), b.bytes(), sb) {
        Some(fixed) => {
            run.merge(sb, fixed);
            true
        }
        None => false,
    }
}

fn parses_each_layout(t: &mut Ctx) {
    for kind in [4, 6, 44, 66] {
        let f = build(&Spec::new(kind, 100, 1000));
        let s = seg(t, &f);
        check_eq!(t, s.payload_len, 100);
        check_eq!(t, s.seq, 1000);
        check_eq!(t, usize::from(s.layers), if kind >= 44 { 2 } else { 1 });
        check_eq!(t, s.header_len() + 100, f.len);
    }
    let mut spec = Spec::new(6, 100, 0);
    spec.dstopts = Some(0);
    let f = build(&spec);
    let s = seg(t, &f);
    check_eq!(t, s.ip[0].len, 48);
    check_eq!(t, s.tcp_off, 14 + 48);
}

fn refuses_what_must_pass_alone(t: &mut Ctx) {
    let good = build(&Spec::new(4, 100, 0));
    // IPv4 options.
    let mut f = build(&Spec::new(4, 100, 0));
    f.buf[14] = 0x46;
    check!(t, parse_segment(f.bytes(), f.len).is_none());
    // A fragment (MF).
    let mut f = build(&Spec::new(4, 100, 0));
    f.buf[20] |= 0x20;
    check!(t, parse_segment(f.bytes(), f.len).is_none());
    // A bad header checksum.
    let mut f = build(&Spec::new(4, 100, 0));
    f.buf[24] ^= 1;
    check!(t, parse_segment(f.bytes(), f.len).is_none());
    // A length that is not the frame's (padding, truncation).
    check!(t, parse_segment(good.bytes(), good.len + 6).is_none());
    check!(t, parse_segment(good.bytes(), good.len - 1).is_none());
    // Headers cut short.
    check!(t, parse_segment(&good.bytes()[..40], good.len).is_none());
    // An IPv6 fragment header.
    let mut spec = Spec::new(6, 100, 0);
    spec.dstopts = Some(0);
    let mut f = build(&spec);
    f.buf[14 + 6] = 44;
    check!(t, parse_segment(f.bytes(), f.len).is_none());
    // Not IP.
    let mut f = build(&Spec::new(4, 100, 0));
    f.buf[12] = 0x88;
    check!(t, parse_segment(f.bytes(), f.len).is_none());
}

fn merges_in_order_up_to_mss(t: &mut Ctx) {
    for kind in [4, 6, 44, 66] {
        let a = build(&Spec::new(kind, 100, 0));
        let sa = seg(t, &a);
        let mut run = Run::start(&sa, a.len as u32);
        let b = build(&Spec::new(kind, 100, 100));
        let sb = seg(t, &b);
        check!(t, same_flow(a.bytes(), &sa, b.bytes(), &sb));
        check!(t, joins(&mut run, &a, &b, &sb));
        // A gap in sequence numbers, then a segment above the MSS.
        let gap = build(&Spec::new(kind, 100, 300));
        let sg = seg(t, &gap);
        check!(t, !joins(&mut run, &a, &gap, &sg));
        let big = build(&Spec::new(kind, 101, 200));
        let sbig = seg(t, &big);
        check!(t, !joins(&mut run, &a, &big, &sbig));
        // A smaller one joins and completes the aggregate.
        let small = build(&Spec::new(kind, 50, 200));
        let ss = seg(t, &small);
        match run.accepts(a.bytes(), small.bytes(), &ss) {
            Some(fixed) => check!(t, run.merge(&ss, fixed)),
            None => t.fail(format_args!("a short last segment did not join")),
        }
        check_eq!(t, run.count, 3);
        check_eq!(t, run.frame_len as usize, a.len + 150);
    }
}

fn flags_and_headers_must_match(t: &mut Ctx) {
    let a = build(&Spec::new(4, 100, 0));
    let sa = seg(t, &a);
    let run = Run::start(&sa, a.len as u32);
    let refuse = |t: &mut Ctx, spec: Spec| {
        let b = build(&spec);
        let sb = seg(t, &b);
        check!(t, run.accepts(a.bytes(), b.bytes(), &sb).is_none());
    };
    let mut s = Spec::new(4, 100, 100);
    s.ttl = 63;
    refuse(t, s);
    let mut s = Spec::new(4, 100, 100);
    s.flags = ACK | TCP_CWR;
    refuse(t, s);
    let mut s = Spec::new(4, 100, 100);
    s.flags = ACK | TCP_SYN;
    refuse(t, s);
    let mut s = Spec::new(4, 100, 100);
    s.df = false;
    refuse(t, s);
    // A pure ACK never joins.
    refuse(t, Spec::new(4, 0, 100));
    // PSH and FIN may join (and end the aggregate).
    let mut s = Spec::new(4, 100, 100);
    s.flags = ACK | TCP_PSH | TCP_FIN;
    let b = build(&s);
    let sb = seg(t, &b);
    check!(t, sb.ends_run());
    check!(t, !sb.may_start_run());
    let mut run2 = run;
    match run2.accepts(a.bytes(), b.bytes(), &sb) {
        Some(fixed) => check!(t, run2.merge(&sb, fixed)),
        None => t.fail(format_args!("PSH did not join")),
    }
    check_eq!(t, run2.or_flags, TCP_PSH | TCP_FIN);
    // Timestamps: equal ones join, different ones do not.
    let mut s = Spec::new(4, 100, 0);
    s.ts = Some(1);
    let a = build(&s);
    let sa = seg(t, &a);
    let mut run = Run::start(&sa, a.len as u32);
    let mut s2 = Spec::new(4, 100, 100);
    s2.ts = Some(2);
    let b = build(&s2);
    let sb = seg(t, &b);
    check!(t, run.accepts(a.bytes(), b.bytes(), &sb).is_none());
    s2.ts = Some(1);
    let b = build(&s2);
    let sb = seg(t, &b);
    check!(t, joins(&mut run, &a, &b, &sb));
}

fn flows_differ_by_ports_and_extension_headers(t: &mut Ctx) {
    let a = build(&Spec::new(4, 100, 0));
    let sa = seg(t, &a);
    let mut b = build(&Spec::new(4, 100, 100));
    b.buf[14 + 20 + 1] ^= 1;
    let sb = seg(t, &b);
    check!(t, !same_flow(a.bytes(), &sa, b.bytes(), &sb));
    let mut s = Spec::new(6, 100, 0);
    s.dstopts = Some(0);
    let a = build(&s);
    let sa = seg(t, &a);
    s.seq = 100;
    let same = build(&s);
    let ss = seg(t, &same);
    check!(t, same_flow(a.bytes(), &sa, same.bytes(), &ss));
    s.dstopts = Some(0x11);
    let diff = build(&s);
    let sd = seg(t, &diff);
    check!(t, !same_flow(a.bytes(), &sa, diff.bytes(), &sd));
    // The same flow without the extension header is another flow.
    let plain = build(&Spec::new(6, 100, 100));
    let sp = seg(t, &plain);
    check!(t, !same_flow(a.bytes(), &sa, plain.bytes(), &sp));
}

fn ipv4_id_increments_or_stays_fixed(t: &mut Ctx) {
    // (DF, IDs of three segments, how many join the first).
    let cases: [(bool, [u16; 3], u16); 6] = [
        (true, [8, 9, 10], 3),
        (true, [8, 8, 8], 3),
        (false, [8, 9, 10], 3),
        (false, [8, 8, 8], 3),
        (true, [8, 9, 9], 2),
        (true, [8, 8, 9], 2),
    ];
    for (df, ids, want) in cases {
        let mut s = Spec::new(4, 100, 0);
        s.df = df;
        s.id = ids[0];
        let a = build(&s);
        let sa = seg(t, &a);
        let mut run = Run::start(&sa, a.len as u32);
        for (i, id) in ids.iter().enumerate().skip(1) {
            let mut s = Spec::new(4, 100, 100 * i as u32);
            s.df = df;
            s.id = *id;
            let b = build(&s);
            let sb = seg(t, &b);
            if !joins(&mut run, &a, &b, &sb) {
                break;
            }
        }
        check_eq!(t, run.count, want);
    }
}

fn aggregate_stops_at_the_datagram_limit(t: &mut Ctx) {
    let a = build(&Spec::new(4, 100, 0));
    let sa = seg(t, &a);
    let mut run = Run::start(&sa, a.len as u32);
    let b = build(&Spec::new(4, 100, 100));
    let sb = seg(t, &b);
    // As if the aggregate held 65,535 - 40 - 60 bytes of payload already.
    run.frame_len = 14 + MAX_DATAGRAM - 100;
    check!(t, joins(&mut run, &a, &b, &sb));
    let mut run = Run::start(&sa, a.len as u32);
    run.frame_len = 14 + MAX_DATAGRAM - 99;
    check!(t, !joins(&mut run, &a, &b, &sb));
}

fn finished_headers_describe_the_aggregate(t: &mut Ctx) {
    for kind in [4, 6, 44, 66] {
        let mut a = build(&Spec::new(kind, 100, 0));
        let sa = seg(t, &a);
        let mut run = Run::start(&sa, a.len as u32);
        for i in 1..4u32 {
            let mut s = Spec::new(kind, 100, 100 * i);
            if i == 3 {
                s.flags |= TCP_PSH;
            }
            let b = build(&s);
            let sb = seg(t, &b);
            check!(t, joins(&mut run, &a, &b, &sb));
        }
        let hl = sa.header_len();
        run.finish_headers(&mut a.buf[..hl]);
        // The rewritten headers parse as one 400-byte segment (IPv4 checksums
        // and every length right), with PSH.
        match parse_segment(&a.buf[..hl], a.len + 300) {
            Some(s) => {
                check_eq!(t, s.payload_len, 400);
                check!(t, s.flags & TCP_PSH != 0);
                // The TCP checksum field holds the aggregate's pseudo-header
                // sum (CHECKSUM_PARTIAL): the whole TCP length, 20 + 400.
                let tcp = usize::from(s.tcp_off);
                let want = csum_fold(tcp_pseudo_sum(&a.buf[..hl], &s));
                check_eq!(t, be16_at(&a.buf, tcp + 16), want);
            }
            None => t.fail(format_args!("finished headers do not parse")),
        }
    }
}

fn finished_ipv4_checksum_is_the_pseudo_header_sum(t: &mut Ctx) {
    // Two segments of 100 bytes: TCP length the header and 200.
    let a = build(&Spec::new(4, 100, 0));
    let sa = seg(t, &a);
    let mut run = Run::start(&sa, a.len as u32);
    let b = build(&Spec::new(4, 100, 100));
    let sb = seg(t, &b);
    check!(t, joins(&mut run, &a, &b, &sb));
    let mut h = a.buf;
    let hl = sa.header_len();
    run.finish_headers(&mut h[..hl]);
    let ip = usize::from(sa.inner().off);
    let words = [
        be16_at(&h, ip + 12),
        be16_at(&h, ip + 14),
        be16_at(&h, ip + 16),
        be16_at(&h, ip + 18),
    ];
    // By hand: the four address words, the protocol, the length, folded.
    let tcp_len = u32::from(sa.tcp_len) + 200;
    let mut sum = words.iter().map(|&w| u32::from(w)).sum::<u32>() + 6 + tcp_len;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    check_eq!(t, be16_at(&h, usize::from(sa.tcp_off) + 16), sum as u16);
}

fn tcp_checksum_verifies(t: &mut Ctx) {
    for kind in [4, 6, 44, 66] {
        let mut f = build(&Spec::new(kind, 101, 7));
        let s = seg(t, &f);
        let tcp = usize::from(s.tcp_off);
        let sum = |f: &Frame| csum_add(tcp_pseudo_sum(f.bytes(), &s), &f.bytes()[tcp..]);
        let c = !csum_fold(sum(&f));
        put16(&mut f.buf, tcp + 16, c);
        check_eq!(t, csum_fold(sum(&f)), 0xffff);
        f.buf[tcp + 16] ^= 1;
        check!(t, csum_fold(sum(&f)) != 0xffff);
    }
}

fn complete_sum_of_a_partial_segment_is_the_wires(t: &mut Ctx) {
    // Every layout, odd and even payloads, with bytes after the datagram
    // (odd and even counts) or none, whatever the sender left in the field.
    for kind in [4, 6, 44, 66] {
        for payload in [100, 101] {
            for tail in [&[][..], &[0xab], &[0xab, 0xcd, 0xef]] {
                for left in [0, 0x1234, 0xffff] {
                    let mut f = build(&Spec::new(kind, payload, 7));
                    let s = seg(t, &f);
                    let tcp = usize::from(s.tcp_off);
                    let end = f.len;
                    put16(&mut f.buf, tcp + TCP_CHECK_OFF, left);
                    f.buf[end..end + tail.len()].copy_from_slice(tail);
                    f.len += tail.len();
                    let l4 = csum_add(0, &f.bytes()[tcp..end]);
                    let tail_sum = (!tail.is_empty()).then(|| csum_fold(csum_add(0, tail)));
                    let Some((check, sum)) = tcp_complete_sum(f.bytes(), &s, l4, tail_sum) else {
                        check!(t, false);
                        return;
                    };
                    put16(&mut f.buf, tcp + TCP_CHECK_OFF, check);
                    // The checksum written holds, and the sum is the frame's.
                    let seg_sum = csum_add(tcp_pseudo_sum(f.bytes(), &s), &f.bytes()[tcp..end]);
                    check_eq!(t, csum_fold(seg_sum), 0xffff);
                    check_eq!(t, sum, csum_fold(csum_add(0, &f.bytes()[14..])));
                }
            }
        }
    }
}

/// Takes every slot out of `order`, oldest first, into `out`; how many.
fn drain_order(order: &mut AgeOrder, links: &mut [AgeLink], out: &mut [usize]) -> usize {
    let mut n = 0;
    while let Some(i) = order.oldest() {
        order.remove(links, i);
        if n < out.len() {
            out[n] = i;
        }
        n += 1;
        if n > links.len() {
            break;
        }
    }
    n
}

fn age_order_lists_slots_as_they_start(t: &mut Ctx) {
    let mut links = [AgeLink::UNLINKED; 8];
    let mut order = AgeOrder::EMPTY;
    check_eq!(t, order.oldest(), None);
    for i in [3, 1, 5, 0, 7] {
        check!(t, order.push_newest(&mut links, i));
    }
    check_eq!(t, order.oldest(), Some(3));
    check!(t, order.contains(&links, 0) && !order.contains(&links, 2));
    // From the middle, the oldest and the newest; one not listed is no change.
    order.remove(&mut links, 1);
    order.remove(&mut links, 3);
    order.remove(&mut links, 7);
    order.remove(&mut links, 2);
    check!(t, !order.contains(&links, 1) && !order.contains(&links, 3));
    // Listed again, a slot is the newest.
    check!(t, order.push_newest(&mut links, 5));
    check!(t, order.push_newest(&mut links, 3));
    // Nothing for a slot the table does not have.
    check!(t, !order.push_newest(&mut links, 8));
    check!(t, !order.push_newest(&mut links, usize::MAX));
    let mut out = [0usize; 8];
    let n = drain_order(&mut order, &mut links, &mut out);
    check_eq!(t, n, 3);
    check_eq!(t, out[..3], [0, 5, 3]);
    check_eq!(t, order.oldest(), None);
    // Drained, every link is free again: one slot alone is oldest and newest.
    check!(t, order.push_newest(&mut links, 6));
    order.remove(&mut links, 6);
    check_eq!(t, order.oldest(), None);
    check!(t, !order.contains(&links, 6));
}

/// Slots taken and freed in a scrambled pattern (as flows' aggregates start
/// and end) drain in the order they were last listed, against a plain
/// array kept in that order.
fn age_order_matches_a_list_kept_in_start_order(t: &mut Ctx) {
    const N: usize = 64;
    let mut links = [AgeLink::UNLINKED; N];
    let mut order = AgeOrder::EMPTY;
    let mut model = [0usize; N];
    let mut len = 0;
    let mut x: u32 = 0x2545_f491;
    for _ in 0..2000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let idx = (x % N as u32) as usize;
        let at = model[..len].iter().position(|&m| m == idx);
        if let Some(p) = at {
            model.copy_within(p + 1..len, p);
            len -= 1;
        }
        if x & 0x100 != 0 {
            check!(t, order.push_newest(&mut links, idx));
            model[len] = idx;
            len += 1;
        } else {
            order.remove(&mut links, idx);
        }
        check_eq!(t, order.oldest(), model[..len].first().copied());
    }
    let mut out = [0usize; N];
    let n = drain_order(&mut order, &mut links, &mut out);
    check_eq!(t, n, len);
    check_eq!(t, out[..n], model[..len]);
}

logic_suite!(
    gro_glue,
    "devmemnic_gro",
    [
        parses_each_layout,
        refuses_what_must_pass_alone,
        merges_in_order_up_to_mss,
        flags_and_headers_must_match,
        flows_differ_by_ports_and_extension_headers,
        ipv4_id_increments_or_stays_fixed,
        aggregate_stops_at_the_datagram_limit,
        finished_headers_describe_the_aggregate,
        finished_ipv4_checksum_is_the_pseudo_header_sum,
        tcp_checksum_verifies,
        complete_sum_of_a_partial_segment_is_the_wires,
        age_order_lists_slots_as_they_start,
        age_order_matches_a_list_kept_in_start_order,
    ]
);
