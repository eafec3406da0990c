// SPDX-License-Identifier: GPL-2.0

//! Receive steering: ntuple rules first, then RSS (Toeplitz through the
//! indirection table). Pure logic, tested by KUnit and on the host.

use super::parse::FlowKey;
use super::toeplitz::{indirect, toeplitz_hash, RSS_KEY_LEN};

/// Indirection table entries, as `ethtool -x` shows.
pub(crate) const INDIR_SIZE: usize = 128;
/// Most ntuple rules per device.
pub(crate) const MAX_RULES: usize = 64;
const IPPROTO_TCP: u8 = 6;

/// An ntuple rule: TCP flows whose fields match (under masks) go to `queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct NtupleRule {
    /// Rule slot (`ethtool -N ... loc`).
    pub(crate) loc: u32,
    /// `tcp6` (else `tcp4`).
    pub(crate) ipv6: bool,
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
    /// Target RX queue.
    pub(crate) queue: u32,
}

fn masked_eq(a: &[u8; 16], b: &[u8; 16], m: &[u8; 16]) -> bool {
    a.iter().zip(b).zip(m).all(|((x, y), m)| x & m == y & m)
}

impl NtupleRule {
    /// Whether a flow matches this rule.
    pub(crate) fn matches(&self, k: &FlowKey) -> bool {
        k.proto == IPPROTO_TCP
            && k.ipv6 == self.ipv6
            && masked_eq(&k.src, &self.src, &self.src_mask)
            && masked_eq(&k.dst, &self.dst, &self.dst_mask)
            && (k.sport & self.sport_mask) == (self.sport & self.sport_mask)
            && (k.dport & self.dport_mask) == (self.dport & self.dport_mask)
    }
}

/// A receiving device's steering configuration.
#[derive(Clone)]
pub(crate) struct Steering {
    /// RSS hash key.
    pub(crate) key: [u8; RSS_KEY_LEN],
    /// RSS indirection table: hash -> queue.
    pub(crate) indir: [u32; INDIR_SIZE],
    /// ntuple rules, kept sorted by `loc`.
    pub(crate) rules: [NtupleRule; MAX_RULES],
    /// How many of `rules` are in use.
    pub(crate) nrules: usize,
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
    /// Default: the standard key and an even spread over `queues` queues.
    pub(crate) fn new(key: [u8; RSS_KEY_LEN], queues: u32) -> Self {
        let mut s = Steering {
            key,
            indir: [0; INDIR_SIZE],
            rules: [NtupleRule::default(); MAX_RULES],
            nrules: 0,
        };
        s.spread(queues);
        s
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

    /// A free rule slot below `MAX_RULES`, for `loc` = any (`RX_CLS_LOC_ANY`).
    pub(crate) fn free_loc(&self) -> Option<u32> {
        (0..MAX_RULES as u32).find(|l| !self.rules().iter().any(|r| r.loc == *l))
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
        let (addr_len, ports) = (if k.ipv6 { 16 } else { 4 }, k.proto == 6 || k.proto == 17);
        let mut input = [0u8; 36];
        input[..addr_len].copy_from_slice(&k.src[..addr_len]);
        input[addr_len..2 * addr_len].copy_from_slice(&k.dst[..addr_len]);
        let mut n = 2 * addr_len;
        if ports {
            input[n..n + 2].copy_from_slice(&k.sport.to_be_bytes());
            input[n + 2..n + 4].copy_from_slice(&k.dport.to_be_bytes());
            n += 4;
        }
        let hash = toeplitz_hash(&self.key, &input[..n]);
        if ntuple_on {
            if let Some(r) = self.rules().iter().find(|r| r.matches(k)) {
                if r.queue < active {
                    return Decision {
                        queue: r.queue,
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
