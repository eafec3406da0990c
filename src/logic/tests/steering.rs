// SPDX-License-Identifier: GPL-2.0

//! Steering: ntuple matching, the rule table and the RX queue choice.

use super::parse::FlowKey;
use super::steering::{
    hash_class, InsertError, NtupleRule, HASH_ADDRS, HASH_IP_SRC, HASH_L4_DST, INDIR_SIZE,
    MAX_RSS_CONTEXTS, MAX_RULES,
};
use super::toeplitz::{hash_v4, indirect, toeplitz_hash, DEFAULT_RSS_KEY};
use super::{boxed_steering, Ctx};

fn v4_key(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> FlowKey {
    let mut k = FlowKey {
        ipv6: false,
        proto: 6,
        sport,
        dport,
        ..FlowKey::default()
    };
    k.src[..4].copy_from_slice(&src);
    k.dst[..4].copy_from_slice(&dst);
    k
}

fn dport_rule(loc: u32, dport: u16, queue: u32) -> NtupleRule {
    NtupleRule {
        loc,
        dport,
        dport_mask: 0xffff,
        queue,
        ..NtupleRule::default()
    }
}

fn rule_matches_under_masks(t: &mut Ctx) {
    let k = v4_key([10, 0, 0, 1], [10, 0, 0, 2], 40000, 5201);
    check!(t, dport_rule(0, 5201, 3).matches(&k));
    check!(t, !dport_rule(0, 5202, 3).matches(&k));
    // A /24 destination prefix.
    let mut r = NtupleRule {
        queue: 1,
        ..NtupleRule::default()
    };
    r.dst[..4].copy_from_slice(&[10, 0, 0, 99]);
    r.dst_mask[..4].copy_from_slice(&[255, 255, 255, 0]);
    check!(t, r.matches(&k));
    r.dst[2] = 1;
    check!(t, !r.matches(&k));
    // tcp4 rules do not match IPv6 or UDP flows.
    let mut k6 = k;
    k6.ipv6 = true;
    check!(t, !dport_rule(0, 5201, 3).matches(&k6));
    let mut udp = k;
    udp.proto = 17;
    check!(t, !dport_rule(0, 5201, 3).matches(&udp));
    // udp4 rules match UDP flows only.
    let udp_rule = NtupleRule {
        udp: true,
        ..dport_rule(0, 5201, 3)
    };
    check!(t, udp_rule.matches(&udp));
    check!(t, !udp_rule.matches(&k));
    let mut udp6 = udp;
    udp6.ipv6 = true;
    check!(t, !udp_rule.matches(&udp6));
    check!(
        t,
        NtupleRule {
            ipv6: true,
            ..udp_rule
        }
        .matches(&udp6)
    );
}

fn rule_beats_rss_when_ntuple_on(t: &mut Ctx) {
    let Some(mut s) = boxed_steering(t, 8) else {
        return;
    };
    check_eq!(t, s.insert(dport_rule(0, 5201, 6)), Ok(()));
    let k = v4_key([66, 9, 149, 187], [161, 142, 100, 80], 2794, 5201);
    let d = s.decide(Some(&k), true, 8);
    check_eq!(t, (d.queue, d.by_rule, d.l4), (6, true, true));
    // ntuple off: RSS decides, from the published hash of the 4-tuple.
    let d = s.decide(Some(&k), false, 8);
    let h = hash_v4(
        &DEFAULT_RSS_KEY,
        k.src[..4].try_into().unwrap_or([0; 4]),
        [161, 142, 100, 80],
        2794,
        5201,
    );
    check_eq!(t, d.hash, h);
    check_eq!(t, (d.queue, d.by_rule), (h % 128 % 8, false));
    // A rule whose queue is not active (channels shrunk) falls back to RSS.
    let d = s.decide(Some(&k), true, 4);
    check!(t, !d.by_rule && d.queue < 4);
}

fn rss_follows_table_and_active_count(t: &mut Ctx) {
    let Some(mut s) = boxed_steering(t, 8) else {
        return;
    };
    s.spread(2);
    for p in 0..200u16 {
        let k = v4_key([10, 0, 0, 1], [10, 0, 0, 2], 30000 + p, 5201);
        check!(t, s.decide(Some(&k), true, 8).queue < 2);
    }
    s.indir = [5; INDIR_SIZE];
    let k = v4_key([1, 2, 3, 4], [5, 6, 7, 8], 1, 2);
    check_eq!(t, s.decide(Some(&k), true, 8).queue, 5);
    // Entries past the active queues wrap instead of naming a dead queue.
    check_eq!(t, s.decide(Some(&k), true, 4).queue, 1);
    // No IP header: queue 0, no hash.
    let d = s.decide(None, true, 8);
    check_eq!(t, (d.queue, d.hash), (0, 0));
}

fn rule_table_insert_replace_remove(t: &mut Ctx) {
    let Some(mut s) = boxed_steering(t, 8) else {
        return;
    };
    check_eq!(t, s.insert(dport_rule(5, 1, 1)), Ok(()));
    check_eq!(t, s.insert(dport_rule(2, 2, 2)), Ok(()));
    check_eq!(t, s.insert(dport_rule(5, 3, 3)), Ok(()));
    check_eq!(t, s.rules().len(), 2);
    // Sorted by location; location 5 replaced.
    check_eq!(
        t,
        (s.rules()[0].loc, s.rules()[1].loc, s.rules()[1].dport),
        (2, 5, 3)
    );
    check_eq!(t, s.free_loc(), Some(0));
    check!(t, s.remove(2));
    check!(t, !s.remove(2));
    check_eq!(t, s.rules().len(), 1);
    for l in 0..MAX_RULES as u32 {
        let _ = s.insert(dport_rule(l, 9, 0));
    }
    check_eq!(t, s.rules().len(), MAX_RULES);
    check_eq!(t, s.free_loc(), None);
    check_eq!(
        t,
        s.insert(dport_rule(MAX_RULES as u32, 9, 0)),
        Err(InsertError::Full)
    );
}

fn any_location_replaces_a_rule_with_the_same_match_only_if_asked(t: &mut Ctx) {
    let Some(mut s) = boxed_steering(t, 8) else {
        return;
    };
    check_eq!(t, s.insert(dport_rule(3, 80, 1)), Ok(()));
    // Same flows, another action: its slot, so the new action applies (sfc).
    let again = NtupleRule {
        rss: Some(0),
        ..dport_rule(0, 80, 2)
    };
    check_eq!(t, s.loc_for(&again, true), Some(3));
    // Otherwise a slot of its own, so each insert has an ID to delete.
    check_eq!(t, s.loc_for(&again, false), Some(0));
    // Another port, or the same port under another mask: a free slot.
    check_eq!(t, s.loc_for(&dport_rule(0, 81, 1), true), Some(0));
    let masked = NtupleRule {
        dport_mask: 0xff00,
        ..dport_rule(0, 80, 1)
    };
    check_eq!(t, s.loc_for(&masked, true), Some(0));
    // Bits outside the mask do not tell rules apart.
    let mut a = dport_rule(0, 0, 1);
    a.dst[..4].copy_from_slice(&[10, 0, 0, 1]);
    a.dst_mask[..4].copy_from_slice(&[255, 255, 255, 0]);
    let mut b = a;
    b.dst[3] = 77;
    check!(t, a.same_match(&b));
    b.udp = true;
    check!(t, !a.same_match(&b));
}

fn first_matching_rule_wins(t: &mut Ctx) {
    let Some(mut s) = boxed_steering(t, 8) else {
        return;
    };
    let any = NtupleRule {
        loc: 9,
        queue: 7,
        ..NtupleRule::default()
    };
    check_eq!(t, s.insert(any), Ok(()));
    check_eq!(t, s.insert(dport_rule(1, 80, 2)), Ok(()));
    let k = v4_key([1, 1, 1, 1], [2, 2, 2, 2], 5, 80);
    check_eq!(t, s.decide(Some(&k), true, 8).queue, 2);
    let k = v4_key([1, 1, 1, 1], [2, 2, 2, 2], 5, 81);
    check_eq!(t, s.decide(Some(&k), true, 8).queue, 7);
}

fn context_rule_spreads_over_its_table(t: &mut Ctx) {
    let Some(mut s) = boxed_steering(t, 8) else {
        return;
    };
    // Context 3 spreads over queues 4 and 5 only.
    let mut table = [0u32; INDIR_SIZE];
    for (i, e) in table.iter_mut().enumerate() {
        *e = 4 + (i as u32 % 2);
    }
    check!(t, s.set_context(3, &table));
    check!(t, s.has_context(3) && !s.has_context(2));
    let rule = NtupleRule {
        rss: Some(3),
        ..dport_rule(0, 80, 0)
    };
    check_eq!(t, s.insert(rule), Ok(()));
    let mut seen = [false; 8];
    for sport in 1000..1064 {
        let k = v4_key([10, 0, 0, 1], [10, 0, 0, 2], sport, 80);
        let d = s.decide(Some(&k), true, 8);
        check!(t, d.by_rule);
        check_eq!(t, d.queue, 4 + indirect(&table, d.hash) % 2);
        seen[d.queue as usize] = true;
    }
    check_eq!(
        t,
        seen,
        [false, false, false, false, true, true, false, false]
    );
    // An offset (ring_cookie) adds to the table's entry.
    let shifted = NtupleRule { queue: 2, ..rule };
    check_eq!(t, s.insert(shifted), Ok(()));
    let k = v4_key([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80);
    let d = s.decide(Some(&k), true, 8);
    check_eq!(t, d.queue, 6 + indirect(&table, d.hash) % 2);
    // Past the active queues, or with its context gone, the device's own table decides.
    let d = s.decide(Some(&k), true, 6);
    check!(t, !d.by_rule);
    check!(t, s.remove_context(3));
    check!(t, !s.remove_context(3));
    let d = s.decide(Some(&k), true, 8);
    check!(t, !d.by_rule);
    check_eq!(t, d.queue, indirect(&s.indir, d.hash) % 8);
    // Context IDs are 1..=MAX_RSS_CONTEXTS; entries fit a byte.
    check!(t, !s.set_context(0, &table));
    check!(t, !s.set_context(MAX_RSS_CONTEXTS as u32 + 1, &table));
    check!(t, s.set_context(MAX_RSS_CONTEXTS as u32, &table));
    // A table of another size is refused.
    check!(t, !s.set_context(1, &table[..INDIR_SIZE - 1]));
    table[7] = 256;
    check!(t, !s.set_context(1, &table));
}

fn rules_and_contexts_keep_their_queues(t: &mut Ctx) {
    let Some(mut s) = boxed_steering(t, 8) else {
        return;
    };
    check_eq!(t, s.queues_needed(), 0);
    // A plain rule to queue 3 needs 4 queues.
    check_eq!(t, s.insert(dport_rule(0, 80, 3)), Ok(()));
    check_eq!(t, s.queues_needed(), 4);
    // Context 2 over queues 0-1: the context alone needs 2; a rule with
    // offset 4 over it reaches queue 5.
    let mut table = [0u32; INDIR_SIZE];
    for (i, e) in table.iter_mut().enumerate() {
        *e = i as u32 % 2;
    }
    check!(t, s.set_context(2, &table));
    let shifted = NtupleRule {
        rss: Some(2),
        ..dport_rule(1, 81, 4)
    };
    check_eq!(t, s.highest_queue(&shifted), Some(5));
    check!(t, !s.context_in_use(2));
    check_eq!(t, s.insert(shifted), Ok(()));
    check_eq!(t, s.queues_needed(), 6);
    check!(t, s.context_in_use(2) && !s.context_in_use(0));
    // A missing context names no queue; an offset that overflows neither.
    check_eq!(
        t,
        s.highest_queue(&NtupleRule {
            rss: Some(9),
            ..shifted
        }),
        None
    );
    check_eq!(
        t,
        s.highest_queue(&NtupleRule {
            queue: u32::MAX,
            ..shifted
        }),
        None
    );
    // Over the device's own table (which follows the channel count) a rule
    // keeps its offset only.
    check_eq!(
        t,
        s.highest_queue(&NtupleRule {
            rss: Some(0),
            ..shifted
        }),
        Some(11)
    );
    check!(t, s.remove(1));
    check_eq!(
        t,
        s.insert(NtupleRule {
            rss: Some(0),
            ..shifted
        }),
        Ok(())
    );
    check_eq!(t, s.queues_needed(), 5);
    check!(t, s.remove(1) && s.remove(0));
    check_eq!(t, s.queues_needed(), 2);
    check!(t, s.remove_context(2));
    check_eq!(t, s.queues_needed(), 0);
}

fn hash_fields_choose_the_toeplitz_input(t: &mut Ctx) {
    let Some(mut s) = boxed_steering(t, 8) else {
        return;
    };
    let k = v4_key([66, 9, 149, 187], [161, 142, 100, 80], 2794, 1766);
    let four_tuple = s.decide(Some(&k), false, 8);
    check!(t, four_tuple.l4);
    // tcp4 on addresses only: the hash is the 2-tuple's; udp4 keeps the 4-tuple.
    s.hash_fields[hash_class(false, false)] = HASH_ADDRS;
    let d = s.decide(Some(&k), false, 8);
    check_eq!(
        t,
        d.hash,
        toeplitz_hash(&DEFAULT_RSS_KEY, &[66, 9, 149, 187, 161, 142, 100, 80])
    );
    check!(t, !d.l4);
    let mut udp = k;
    udp.proto = 17;
    check_eq!(t, s.decide(Some(&udp), false, 8).hash, four_tuple.hash);
    // Source address only, and destination port only.
    s.hash_fields[hash_class(false, false)] = HASH_IP_SRC;
    check_eq!(
        t,
        s.decide(Some(&k), false, 8).hash,
        toeplitz_hash(&DEFAULT_RSS_KEY, &[66, 9, 149, 187])
    );
    s.hash_fields[hash_class(false, false)] = HASH_L4_DST;
    check_eq!(
        t,
        s.decide(Some(&k), false, 8).hash,
        toeplitz_hash(&DEFAULT_RSS_KEY, &1766u16.to_be_bytes())
    );
    // Other IP protocols hash on the addresses whatever TCP's fields are.
    let mut other = k;
    other.proto = 47;
    other.sport = 0;
    other.dport = 0;
    check_eq!(
        t,
        s.decide(Some(&other), false, 8).hash,
        toeplitz_hash(&DEFAULT_RSS_KEY, &[66, 9, 149, 187, 161, 142, 100, 80])
    );
}

logic_suite!(
    steering_suite,
    "devmemnic_steering",
    [
        rule_matches_under_masks,
        rule_beats_rss_when_ntuple_on,
        rss_follows_table_and_active_count,
        rule_table_insert_replace_remove,
        any_location_replaces_a_rule_with_the_same_match_only_if_asked,
        first_matching_rule_wins,
        context_rule_spreads_over_its_table,
        rules_and_contexts_keep_their_queues,
        hash_fields_choose_the_toeplitz_input,
    ]
);
