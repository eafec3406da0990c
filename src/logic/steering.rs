// SPDX-License-Identifier: GPL-2.0

//! Receive steering: ntuple rules first, then RSS (Toeplitz through the
//! indirection table). Pure logic, tested by KUnit and on the host.

use super::parse::FlowKey;
use super::toeplitz::{indirect, toeplitz_hash, RSS_KEY_LEN};

/// Indirection table entries, as `ethtool -x` shows: 4 per queue at the most
/// queues (RSS imbalance stays within 16%; upstream's `rss_drv.py` asks it).
pub(crate) const INDIR_SIZE: usize = 512;
/// Most ntuple rules per device.
pub(crate) const MAX_RULES: usize = 64;
/// Most RSS contexts besides the default one (IDs 1..=MAX_RSS_CONTEXTS; bits
/// of `Steering::contexts_used`).
pub(crate) const MAX_RSS_CONTEXTS: usize = 32;
/// Queues an RSS context's table can name (its entries are bytes).
pub(crate) const RSS_CONTEXT_QUEUES: u32 = 256;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// RSS hash input fields (`ethtool -N rx-flow-hash`), a bit set: source and
/// destination address, source and destination port.
pub(crate) const HASH_IP_SRC: u8 = 1;
pub(crate) const HASH_IP_DST: u8 = 2;
pub(crate) const HASH_L4_SRC: u8 = 4;
pub(crate) const HASH_L4_DST: u8 = 8;
/// The default: the 4-tuple.
pub(crate) const HASH_ALL: u8 = 0xf;
/// What other IP traffic (neither TCP nor UDP) hashes on: the addresses.
pub(crate) const HASH_ADDRS: u8 = HASH_IP_SRC | HASH_IP_DST;

/// Index into `Steering::hash_fields` of a TCP or UDP flow over IPv4 or IPv6.
pub(crate) fn hash_class(ipv6: bool, udp: bool) -> usize {
    usize::from(ipv6) * 2 + usize::from(udp)
}

/// An ntuple rule: TCP or UDP flows whose fields match (under masks) go to
/// `queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct NtupleRule {
    /// Rule slot (`ethtool -N ... loc`).
    pub(crate) loc: u32,
    /// IPv6 (`tcp6`, `udp6`), else IPv4.
    pub(crate) ipv6: bool,
    /// UDP (`udp4`, `udp6`), else TCP.
    pub(crate) udp: bool,
    /// Source address and mask (IPv4 in the first 4 bytes).
    pub(crate) src: [u8; 16],
    pub(crate) src_mask: [u8; 16],
    /// Destination address and mask.
    pub(crate) dst: [u8; 16],
    pub(crate) dst_mask: [u8; 16],
    /// Source port and mask.
    pub(crate) sport: u16,
    pub(crate) sport_mask: u16,
    /// Destination port and mask.
    pub(crate) dport: u16,
    pub(crate) dport_mask: u16,
    /// Target RX queue, or with `rss` the offset added to the table's entry.
    pub(crate) queue: u32,
    /// Spread matching flows with an RSS table (`context C`: 0 is the
    /// device's own, else an additional context), rather than to `queue`.
    pub(crate) rss: Option<u32>,
}

fn masked_eq(a: &[u8; 16], b: &[u8; 16], m: &[u8; 16]) -> bool {
    a.iter().zip(b).zip(m).all(|((x, y), m)| x & m == y & m)
}

impl NtupleRule {
    /// An unused slot: matches everything to queue 0 (never consulted).
    pub(crate) const EMPTY: NtupleRule = NtupleRule {
        loc: 0,
        ipv6: false,
        udp: false,
        src: [0; 16],
        src_mask: [0; 16],
        dst: [0; 16],
        dst_mask: [0; 16],
        sport: 0,
        sport_mask: 0,
        dport: 0,
        dport_mask: 0,
        queue: 0,
        rss: None,
    };

    /// Whether a flow matches this rule.
    pub(crate) fn matches(&self, k: &FlowKey) -> bool {
        k.proto == (if self.udp { IPPROTO_UDP } else { IPPROTO_TCP })
            && k.ipv6 == self.ipv6
            && masked_eq(&k.src, &self.src, &self.src_mask)
            && masked_eq(&k.dst, &self.dst, &self.dst_mask)
            && (k.sport & self.sport_mask) == (self.sport & self.sport_mask)
            && (k.dport & self.dport_mask) == (self.dport & self.dport_mask)
    }

    /// Whether `other` matches exactly the flows this rule matches (same
    /// protocol, masks and masked values), whatever either does with them.
    pub(crate) fn same_match(&self, other: &NtupleRule) -> bool {
        self.ipv6 == other.ipv6
            && self.udp == other.udp
            && self.src_mask == other.src_mask
            && self.dst_mask == other.dst_mask
            && self.sport_mask == other.sport_mask
            && self.dport_mask == other.dport_mask
            && masked_eq(&self.src, &other.src, &self.src_mask)
            && masked_eq(&self.dst, &other.dst, &self.dst_mask)
            && (self.sport & self.sport_mask) == (other.sport & other.sport_mask)
            && (self.dport & self.dport_mask) == (other.dport & other.dport_mask)
    }
}

/// A receiving device's steering configuration.
///
/// About 24 KiB: the driver copies it between boxes rather than through the
/// stack (hence `Copy`).
#[derive(Clone, Copy)]
pub(crate) struct Steering {
    /// RSS hash key.
    pub(crate) key: [u8; RSS_KEY_LEN],
    /// RSS indirection table: hash -> queue.
    pub(crate) indir: [u32; INDIR_SIZE],
    /// ntuple rules, kept sorted by `loc`.
    pub(crate) rules: [NtupleRule; MAX_RULES],
    /// How many of `rules` are in use.
    pub(crate) nrules: usize,
    /// Additional RSS contexts' indirection tables: context `c` is entry
    /// `c - 1`, in use if bit `c - 1` of `contexts_used` is set. They share
    /// the device's key.
    pub(crate) contexts: [[u8; INDIR_SIZE]; MAX_RSS_CONTEXTS],
    pub(crate) contexts_used: u32,
    /// Hash input fields (`HASH_*` bits) of tcp4, udp4, tcp6 and udp6 flows
    /// (`hash_class`).
    pub(crate) hash_fields: [u8; 4],
}

/// Where a frame goes, and the hash the skb carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decision {
    /// RX queue.
    pub(crate) queue: u32,
    /// RSS hash (0 if the frame had no IP header).
    pub(crate) hash: u32,
    /// Whether the hash covers the ports.
    pub(crate) l4: bool,
    /// Whether an ntuple rule chose the queue.
    pub(crate) by_rule: bool,
}

impl Steering {
    /// No rules, no contexts, a zero key, every hash to queue 0: what a new
    /// table is copied from before `reset` (the type is too big to build on
    /// a kernel stack).
    pub(crate) const EMPTY: Steering = Steering {
        key: [0; RSS_KEY_LEN],
        indir: [0; INDIR_SIZE],
        rules: [NtupleRule::EMPTY; MAX_RULES],
        nrules: 0,
        contexts: [[0; INDIR_SIZE]; MAX_RSS_CONTEXTS],
        contexts_used: 0,
        hash_fields: [HASH_ALL; 4],
    };

    /// Back to the default in place: no rules or contexts, `key`, the 4-tuple
    /// hashed, an even spread over `queues` queues.
    pub(crate) fn reset(&mut self, key: [u8; RSS_KEY_LEN], queues: u32) {
        self.key = key;
        self.nrules = 0;
        self.contexts_used = 0;
        self.hash_fields = [HASH_ALL; 4];
        self.spread(queues);
    }

    /// Spreads the indirection table evenly over `queues` queues.
    pub(crate) fn spread(&mut self, queues: u32) {
        let q = queues.max(1);
        for (i, e) in self.indir.iter_mut().enumerate() {
            *e = i as u32 % q;
        }
    }

    /// The rules in use.
    pub(crate) fn rules(&self) -> &[NtupleRule] {
        &self.rules[..self.nrules]
    }

    /// Adds or replaces the rule at `rule.loc`.
    pub(crate) fn insert(&mut self, rule: NtupleRule) -> Result<(), InsertError> {
        if let Some(r) = self.rules[..self.nrules]
            .iter_mut()
            .find(|r| r.loc == rule.loc)
        {
            *r = rule;
            return Ok(());
        }
        if self.nrules == MAX_RULES {
            return Err(InsertError::Full);
        }
        let at = self.rules[..self.nrules]
            .iter()
            .position(|r| r.loc > rule.loc)
            .unwrap_or(self.nrules);
        self.rules.copy_within(at..self.nrules, at + 1);
        self.rules[at] = rule;
        self.nrules += 1;
        Ok(())
    }

    /// Removes the rule at `loc`; false if there is none.
    pub(crate) fn remove(&mut self, loc: u32) -> bool {
        match self.rules[..self.nrules].iter().position(|r| r.loc == loc) {
            Some(at) => {
                self.rules.copy_within(at + 1..self.nrules, at);
                self.nrules -= 1;
                true
            }
            None => false,
        }
    }

    /// Sets RSS context `id`'s table (creating the context); false if `id`
    /// is not 1..=`MAX_RSS_CONTEXTS`, `table` does not have `INDIR_SIZE`
    /// entries or one names a queue beyond `RSS_CONTEXT_QUEUES`.
    pub(crate) fn set_context(&mut self, id: u32, table: &[u32]) -> bool {
        let Some(slot) = (id as usize)
            .checked_sub(1)
            .filter(|&i| i < MAX_RSS_CONTEXTS)
        else {
            return false;
        };
        if table.len() != INDIR_SIZE || table.iter().any(|&q| q >= RSS_CONTEXT_QUEUES) {
            return false;
        }
        for (d, &q) in self.contexts[slot].iter_mut().zip(table) {
            *d = q as u8;
        }
        self.contexts_used |= 1 << slot;
        true
    }

    /// Removes RSS context `id`; false if it does not exist.
    pub(crate) fn remove_context(&mut self, id: u32) -> bool {
        if !self.has_context(id) {
            return false;
        }
        self.contexts_used &= !(1 << (id - 1));
        true
    }

    /// Whether a rule spreads its flows with RSS context `id`.
    pub(crate) fn context_in_use(&self, id: u32) -> bool {
        self.rules().iter().any(|r| r.rss == Some(id))
    }

    /// Whether RSS context `id` (0: the device's own table) exists.
    pub(crate) fn has_context(&self, id: u32) -> bool {
        id == 0 || (id as usize <= MAX_RSS_CONTEXTS && self.contexts_used & (1 << (id - 1)) != 0)
    }

    /// The queue RSS context `id` (0: the device's own) picks for `hash`.
    fn context_queue(&self, id: u32, hash: u32) -> Option<u32> {
        if id == 0 {
            return Some(indirect(&self.indir, hash));
        }
        if !self.has_context(id) {
            return None;
        }
        let table = &self.contexts[id as usize - 1];
        Some(u32::from(table[hash as usize % INDIR_SIZE]))
    }

    /// The highest queue `rule` can send to: its own, or its offset plus the
    /// largest entry of its context's table; `None` for a missing context or
    /// an overflow.
    pub(crate) fn highest_queue(&self, rule: &NtupleRule) -> Option<u32> {
        let base = match rule.rss {
            None => 0,
            Some(0) => self.indir.iter().max().copied()?,
            Some(c) => self.context_max(c)?,
        };
        base.checked_add(rule.queue)
    }

    /// The largest entry of additional RSS context `id`'s table, if it exists.
    fn context_max(&self, id: u32) -> Option<u32> {
        if id == 0 || !self.has_context(id) {
            return None;
        }
        self.contexts[id as usize - 1]
            .iter()
            .max()
            .map(|&q| u32::from(q))
    }

    /// How many queues the rules and the additional contexts need active:
    /// one more than the highest queue any of them names (0 for none). (A
    /// rule over the device's own table counts its offset only: that table
    /// follows the channel count.)
    pub(crate) fn queues_needed(&self) -> u32 {
        let by_rules = self.rules().iter().filter_map(|r| match r.rss {
            Some(0) => Some(r.queue),
            _ => self.highest_queue(r),
        });
        let by_contexts = (1..=MAX_RSS_CONTEXTS as u32).filter_map(|c| self.context_max(c));
        by_rules
            .chain(by_contexts)
            .map(|q| q.saturating_add(1))
            .max()
            .unwrap_or(0)
    }

    /// A free rule slot below `MAX_RULES`, for `loc` = any (`RX_CLS_LOC_ANY`).
    pub(crate) fn free_loc(&self) -> Option<u32> {
        (0..MAX_RULES as u32).find(|l| !self.rules().iter().any(|r| r.loc == *l))
    }

    /// Where a rule inserted at `loc` = any goes: with `replace_same_match`
    /// (sfc), the slot of a rule that matches the same flows, which it
    /// replaces; else (and otherwise) a free slot, as fbnic does, so each
    /// insert has an ID of its own to delete (two tests that draw the same
    /// port must not share one; bnxt refuses the second with `EEXIST`).
    pub(crate) fn loc_for(&self, rule: &NtupleRule, replace_same_match: bool) -> Option<u32> {
        self.rules()
            .iter()
            .find(|r| replace_same_match && r.same_match(rule))
            .map(|r| r.loc)
            .or_else(|| self.free_loc())
    }

    /// Chooses the RX queue for a flow among `active` queues.
    pub(crate) fn decide(&self, key: Option<&FlowKey>, ntuple_on: bool, active: u32) -> Decision {
        let Some(k) = key else {
            return Decision {
                queue: 0,
                hash: 0,
                l4: false,
                by_rule: false,
            };
        };
        let fields = match k.proto {
            IPPROTO_TCP | IPPROTO_UDP => {
                self.hash_fields[hash_class(k.ipv6, k.proto == IPPROTO_UDP)]
            }
            _ => HASH_ADDRS,
        };
        // The Toeplitz input: the chosen fields, in the standard order.
        let addr_len = if k.ipv6 { 16 } else { 4 };
        let mut input = [0u8; 36];
        let mut n = 0;
        for (bit, bytes) in [
            (HASH_IP_SRC, &k.src[..addr_len]),
            (HASH_IP_DST, &k.dst[..addr_len]),
            (HASH_L4_SRC, &k.sport.to_be_bytes()[..]),
            (HASH_L4_DST, &k.dport.to_be_bytes()[..]),
        ] {
            if fields & bit != 0 {
                input[n..n + bytes.len()].copy_from_slice(bytes);
                n += bytes.len();
            }
        }
        let ports = fields & (HASH_L4_SRC | HASH_L4_DST) == HASH_L4_SRC | HASH_L4_DST;
        let hash = toeplitz_hash(&self.key, &input[..n]);
        if ntuple_on {
            if let Some(r) = self.rules().iter().find(|r| r.matches(k)) {
                let queue = match r.rss {
                    None => Some(r.queue),
                    Some(ctx) => self
                        .context_queue(ctx, hash)
                        .and_then(|q| q.checked_add(r.queue)),
                };
                // (A queue beyond the active ones: the ethtool core keeps rules
                // and contexts from naming one; the device's own table decides.)
                if let Some(queue) = queue.filter(|&q| q < active) {
                    return Decision {
                        queue,
                        hash,
                        l4: ports,
                        by_rule: true,
                    };
                }
            }
        }
        // An indirection entry beyond the active queues (shrunk channels) wraps.
        let q = indirect(&self.indir, hash) % active.max(1);
        Decision {
            queue: q,
            hash,
            l4: ports,
            by_rule: false,
        }
    }
}

/// Why a rule could not be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InsertError {
    /// All `MAX_RULES` slots are used.
    Full,
}
