// SPDX-License-Identifier: GPL-2.0

//! NIC personalities: what a devmem NIC driver lets an application observe,
//! one profile per driver (Documentation/personalities.rst gives each value's
//! source in that driver).
//!
//! A profile is plain data plus the decisions made from it: where a received
//! frame's bytes land ([`Profile::placement`]), which payload buffer sizes a
//! memory provider may ask for, whether a rule location is accepted. The
//! driver applies them; nothing here knows a kernel API.

/// A NIC whose observable behaviour devmemnic imitates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Personality {
    /// devmemnic's own model: every knob, every size (the default).
    Strict,
    /// Google gVNIC (`gve`), DQO-RDA queue format.
    Gve,
    /// Broadcom NetXtreme-E (`bnxt_en`), P5+ chips.
    Bnxt,
    /// NVIDIA ConnectX (`mlx5_core`), striding RQ with SHAMPO (HW-GRO).
    Mlx5,
    /// Meta's fbnic (`fbnic`), as from its February 2026 header-split fixes
    /// (7.x, 6.18.14 on).
    Fbnic,
    /// fbnic before those fixes (6.18 LTS up to 6.18.13): header split never
    /// enabled, every frame cut at a byte offset.
    Fbnic618,
}

/// How the header-split threshold (`ethtool -G hds-thresh`) is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ThreshRule {
    /// TCP frames whose payload per wire segment is at most the threshold
    /// are received whole (devmemnic's own rule).
    SegmentPayload,
    /// Frames of at most the threshold bytes are received whole in the
    /// header buffer; longer ones split after the headers (bnxt's
    /// `hds_threshold`, a frame length).
    FrameLength,
    /// Below [`FBNIC_HDR_MIN`] the hardware splits every frame after its
    /// TCP header; from it on, frames up to the threshold land whole in the
    /// header buffer and longer ones are cut at the threshold's byte offset.
    HeaderBytes,
    /// No split after the TCP header at any threshold: frames up to
    /// `max(threshold, FBNIC_HDR_MIN_6_18)` bytes land whole in the header
    /// buffer, longer ones are cut at that byte offset (fbnic before
    /// `bbeb3bfbffe0`, which wrote its split enable to the wrong register).
    ByteOffset,
}

/// fbnic's smallest header buffer (`FBNIC_HDR_BYTES_MIN`).
pub(crate) const FBNIC_HDR_MIN: u32 = 256;

/// fbnic's smallest header buffer before `bd254115f38d` (6.18 up to 6.18.13).
pub(crate) const FBNIC_HDR_MIN_6_18: u32 = 128;

/// The header-split threshold a personality supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HdsThresh {
    /// Its value on a new device.
    pub(crate) default: u32,
    /// The largest accepted (`hds-thresh-max`).
    pub(crate) max: u32,
    pub(crate) rule: ThreshRule,
}

/// Which rule locations (`ethtool -N ... loc L`) a personality accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RuleLocations {
    /// An explicit location or "any" (`RX_CLS_LOC_ANY`, the driver picks).
    Both,
    /// Only "any": an explicit location is refused with `EINVAL`.
    AnyOnly,
    /// Only explicit ones: the driver does not advertise special
    /// locations, so ethtool picks a free slot itself; a raw "any" request
    /// gets `ENOSPC`.
    ExplicitOnly,
}

/// What a personality does with a frame it cannot split (not TCP, or TCP it
/// cannot parse) on a queue whose payload buffers are device memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unsplit {
    /// Whole into host memory (the header/linear buffers).
    Linear,
    /// Dropped: the NIC put it in a payload buffer the driver cannot map
    /// (counted).
    Drop,
}

/// How a personality reports a received frame's checksum to the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RxCsum {
    /// The device verifies TCP sums: a good one is `CHECKSUM_UNNECESSARY`;
    /// a bad one is counted and delivered unverified, or dropped when its
    /// payload would go to device memory (devmemnic's own model).
    Verify,
    /// `CHECKSUM_COMPLETE`, the sum of every byte from the IP header on, for
    /// an IP frame (not SCTP) longer than [`SHORT_FRAME`] that arrives as
    /// one segment and is not coalesced; the others as [`RxCsum::Verify`]
    /// (mlx5's `mlx5e_handle_csum`, whose aggregates are checked per segment).
    /// A bad sum is the stack's to find.
    Complete,
}

/// Frames of at most this many bytes get no `CHECKSUM_COMPLETE` from mlx5
/// (`short_frame()`, `ETH_ZLEN + ETH_FCS_LEN`): its sum would not cover
/// Ethernet padding, so it reports every short frame as verified instead.
pub(crate) const SHORT_FRAME: usize = 64;

/// An errno, as a positive number (the driver turns it into its error).
pub(crate) type Errno = i32;
pub(crate) const EOPNOTSUPP: Errno = 95;
pub(crate) const ENODATA: Errno = 61;
pub(crate) const ERANGE: Errno = 34;
pub(crate) const EINVAL: Errno = 22;

/// SCTP's IP protocol number (mlx5 leaves its sum to the stack's CRC).
const IPPROTO_SCTP: u8 = 132;

/// One personality's observable behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Profile {
    /// TCP data split on a new device.
    pub(crate) split_default: bool,
    /// `tcp-data-split off` is refused (`EINVAL`, with this message).
    pub(crate) split_off_refused: Option<&'static core::ffi::CStr>,
    /// `tcp-data-split on` needs `rx-gro-hw` on (mlx5: split is SHAMPO's).
    pub(crate) split_needs_gro_hw: bool,
    /// The header-split threshold; `None`: setting one is `EOPNOTSUPP`.
    pub(crate) hds_thresh: Option<HdsThresh>,
    /// Ring entries `ethtool -G` accepts (both directions), and the size of
    /// a new device's rings.
    pub(crate) ring_min: u32,
    pub(crate) ring_max: u32,
    pub(crate) ring_default: u32,
    /// Ring sizes must be powers of two.
    pub(crate) ring_pow2: bool,
    /// Payload buffer sizes a memory provider may ask for (`rx_page_size`),
    /// inclusive, powers of two; `None`: only the default (a page), other
    /// sizes refused with `EOPNOTSUPP`, as the core does for a driver
    /// without `QCFG_RX_PAGE_SIZE`.
    pub(crate) rx_page_sizes: Option<(u32, u32)>,
    /// Errno for a size outside `rx_page_sizes`.
    pub(crate) rx_page_size_errno: Errno,
    /// Additional RSS contexts (`ethtool -X context new`); rules may target
    /// them where there are any.
    pub(crate) rss_contexts: u32,
    pub(crate) rule_locations: RuleLocations,
    /// Most ntuple rules.
    pub(crate) max_rules: u32,
    pub(crate) unsplit_on_devmem: Unsplit,
    /// Binding a memory provider to RX queue 0 is refused with `ERANGE`
    /// (gve keeps queue 0 for its own use).
    pub(crate) queue0_unbindable: bool,
    /// The first kernel whose driver binds devmem RX (major, minor), and
    /// the errno its older drivers refuse with.
    pub(crate) devmem_rx_since: (u32, u32),
    pub(crate) devmem_rx_before_errno: Errno,
    pub(crate) rx_csum: RxCsum,
    /// Where payloads go in the queue's payload buffers.
    pub(crate) payload_packing: Packing,
}

/// Where a payload goes in a queue's payload buffers (personalities.rst,
/// read per driver).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// From the start of a buffer of its own, whose rest stays unused.
    Own,
    /// In the current buffer, at the next multiple of this many bytes (1:
    /// back to back); what does not fit continues in a new buffer. A payload
    /// continuing the previous frag of its skb in the same buffer extends it.
    Packed(usize),
    /// From the start of a new buffer, which later payloads then fill back
    /// to back (an aggregate's segments after it).
    Fresh,
}

/// A personality's payload placement: for a frame alone, a frame that starts
/// an aggregate (`rx-gro-hw`), and a segment that joins one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Packing {
    pub(crate) alone: Place,
    pub(crate) starts_run: Place,
    pub(crate) merged: Place,
}

impl Packing {
    /// Every payload in a buffer of its own.
    pub(crate) const OWN: Packing = Packing {
        alone: Place::Own,
        starts_run: Place::Own,
        merged: Place::Own,
    };

    /// Every payload at the next multiple of `align` bytes of the current buffer.
    pub(crate) const fn packed(align: usize) -> Packing {
        Packing {
            alone: Place::Packed(align),
            starts_run: Place::Packed(align),
            merged: Place::Packed(align),
        }
    }

    /// Where a frame's payload goes: one that starts an aggregate, or alone.
    pub(crate) fn first(&self, starts_run: bool) -> Place {
        if starts_run {
            self.starts_run
        } else {
            self.alone
        }
    }
}

impl Personality {
    /// Every personality, in `ethtool --show-priv-flags` order.
    pub(crate) const ALL: [Personality; 6] = [
        Personality::Strict,
        Personality::Gve,
        Personality::Bnxt,
        Personality::Mlx5,
        Personality::Fbnic,
        Personality::Fbnic618,
    ];

    /// The ethtool private flags, `personality-<name>`, in [`Self::ALL`]
    /// order (the module test checks them against [`Self::name`]).
    pub(crate) const FLAGS: [&'static str; 6] = [
        "personality-strict",
        "personality-gve",
        "personality-bnxt",
        "personality-mlx5",
        "personality-fbnic",
        "personality-fbnic-6.18",
    ];

    /// Its name (module parameter value; `personality-<name>` is its
    /// ethtool private flag).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Personality::Strict => "strict",
            Personality::Gve => "gve",
            Personality::Bnxt => "bnxt",
            Personality::Mlx5 => "mlx5",
            Personality::Fbnic => "fbnic",
            Personality::Fbnic618 => "fbnic-6.18",
        }
    }

    /// The personality named `name` (surrounding whitespace ignored, as a
    /// module parameter may end in a newline).
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        let name = name.trim();
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Its index in [`Self::ALL`] (its private flag's bit).
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The personality at `i` in [`Self::ALL`].
    pub(crate) fn from_index(i: usize) -> Option<Self> {
        Self::ALL.get(i).copied()
    }

    /// Its profile.
    pub(crate) fn profile(self) -> &'static Profile {
        match self {
            Personality::Strict => &STRICT,
            Personality::Gve => &GVE,
            Personality::Bnxt => &BNXT,
            Personality::Mlx5 => &MLX5,
            Personality::Fbnic => &FBNIC,
            Personality::Fbnic618 => &FBNIC_6_18,
        }
    }

    /// The personality a private-flags request selects, given the current
    /// one: exactly one flag may be set, or the current one plus one other
    /// (`ethtool --set-priv-flags DEV personality-X on` keeps the current
    /// flag set in its request). `None`: not a valid selection.
    pub(crate) fn from_flags(flags: u32, current: Personality) -> Option<Self> {
        let known = (1u32 << Self::ALL.len()) - 1;
        if flags & !known != 0 || flags == 0 {
            return None;
        }
        let others = flags & !(1 << current.index());
        match others.count_ones() {
            0 => Some(current),
            1 => Self::from_index(others.trailing_zeros() as usize),
            _ => None,
        }
    }
}

const STRICT: Profile = Profile {
    split_default: true,
    split_off_refused: None,
    split_needs_gro_hw: false,
    hds_thresh: Some(HdsThresh {
        default: 0,
        max: 4096,
        rule: ThreshRule::SegmentPayload,
    }),
    ring_min: 64,
    ring_max: 4096,
    ring_default: 1024,
    ring_pow2: false,
    rx_page_sizes: Some((4096, 65536)),
    rx_page_size_errno: EINVAL,
    rss_contexts: 32,
    rule_locations: RuleLocations::Both,
    max_rules: 64,
    unsplit_on_devmem: Unsplit::Linear,
    queue0_unbindable: false,
    devmem_rx_since: (6, 12),
    devmem_rx_before_errno: EOPNOTSUPP,
    rx_csum: RxCsum::Verify,
    payload_packing: Packing::packed(1),
};

const GVE: Profile = Profile {
    split_default: false,
    split_off_refused: None,
    split_needs_gro_hw: false,
    hds_thresh: None,
    ring_min: 512,
    ring_max: 4096,
    ring_default: 1024,
    ring_pow2: true,
    rx_page_sizes: None,
    rx_page_size_errno: EOPNOTSUPP,
    rss_contexts: 0,
    rule_locations: RuleLocations::ExplicitOnly,
    max_rules: 64,
    unsplit_on_devmem: Unsplit::Drop,
    queue0_unbindable: true,
    devmem_rx_since: (6, 15),
    devmem_rx_before_errno: ENODATA,
    rx_csum: RxCsum::Verify,
    payload_packing: Packing::OWN,
};

const BNXT: Profile = Profile {
    split_default: true,
    split_off_refused: Some(c"tcp-data-split can only be on or auto"),
    split_needs_gro_hw: false,
    hds_thresh: Some(HdsThresh {
        default: 640,
        max: 1023,
        rule: ThreshRule::FrameLength,
    }),
    ring_min: 64,
    ring_max: 2047,
    ring_default: 511,
    ring_pow2: false,
    rx_page_sizes: Some((4096, 32768)),
    rx_page_size_errno: ERANGE,
    rss_contexts: 32,
    rule_locations: RuleLocations::AnyOnly,
    max_rules: 64,
    unsplit_on_devmem: Unsplit::Linear,
    queue0_unbindable: false,
    devmem_rx_since: (6, 16),
    devmem_rx_before_errno: ENODATA,
    rx_csum: RxCsum::Verify,
    // __bnxt_rx_agg_netmems(): a packet's payload starts a fresh
    // aggregation buffer; within a TPA aggregation (EOP off) the hardware
    // fills buffers back to back, a frag per buffer.
    payload_packing: Packing {
        alone: Place::Own,
        starts_run: Place::Fresh,
        merged: Place::Packed(1),
    },
};

const MLX5: Profile = Profile {
    split_default: false,
    split_off_refused: None,
    split_needs_gro_hw: true,
    hds_thresh: Some(HdsThresh {
        default: 0,
        max: 0,
        rule: ThreshRule::SegmentPayload,
    }),
    ring_min: 64,
    ring_max: 8192,
    ring_default: 1024,
    ring_pow2: false,
    rx_page_sizes: Some((4096, 65536)),
    rx_page_size_errno: ERANGE,
    rss_contexts: 15,
    rule_locations: RuleLocations::ExplicitOnly,
    max_rules: 64,
    unsplit_on_devmem: Unsplit::Drop,
    queue0_unbindable: false,
    devmem_rx_since: (6, 16),
    devmem_rx_before_errno: EOPNOTSUPP,
    rx_csum: RxCsum::Complete,
    // SHAMPO: a packet that starts a session lands at the next 256-byte
    // stride of the striding buffer (MLX5_MPWRQ_DEF_LOG_STRIDE_SZ), the
    // session's later segments right after it, merged into the last frag
    // (mlx5e_add_skb_frag()).
    payload_packing: Packing {
        alone: Place::Packed(256),
        starts_run: Place::Packed(256),
        merged: Place::Packed(1),
    },
};

const FBNIC: Profile = Profile {
    split_default: true,
    split_off_refused: Some(c"Cannot disable TCP data split"),
    split_needs_gro_hw: false,
    hds_thresh: Some(HdsThresh {
        default: 1536,
        max: 3584,
        rule: ThreshRule::HeaderBytes,
    }),
    ring_min: 64,
    ring_max: 65536,
    ring_default: 1024,
    ring_pow2: false,
    rx_page_sizes: None,
    rx_page_size_errno: EOPNOTSUPP,
    rss_contexts: 1,
    rule_locations: RuleLocations::AnyOnly,
    max_rules: 48,
    unsplit_on_devmem: Unsplit::Linear,
    queue0_unbindable: false,
    devmem_rx_since: (6, 18),
    devmem_rx_before_errno: EOPNOTSUPP,
    rx_csum: RxCsum::Verify,
    // fbnic_add_rx_frag(): payloads share its 4 KiB payload fragments,
    // each charged ALIGN(len, 128).
    payload_packing: Packing::packed(128),
};

/// fbnic of 6.18 up to 6.18.13: as [`FBNIC`] but for where frames are cut.
const FBNIC_6_18: Profile = Profile {
    hds_thresh: Some(HdsThresh {
        default: 1536,
        max: 3584,
        rule: ThreshRule::ByteOffset,
    }),
    ..FBNIC
};

/// Where a received frame's bytes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// The first `head` bytes into a host header buffer, the rest into
    /// payload buffers.
    Split { head: usize },
    /// The whole frame into host memory; `below_thresh`: TCP that the
    /// threshold kept whole.
    Linear { below_thresh: bool },
    /// Dropped (counted).
    Drop,
}

/// What the NIC sees of a frame when placing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameShape {
    /// Its length on the wire (a super-frame: all of it).
    pub(crate) len: usize,
    /// Wire segments it stands for (a TSO super-frame: more than one).
    pub(crate) segments: usize,
    /// TCP with its headers parsed: (header bytes, payload bytes).
    pub(crate) tcp: Option<(usize, usize)>,
}

impl Profile {
    /// Where a frame goes on a queue with header split `split`, threshold
    /// `thresh`, and payload buffers of `payload_room` bytes in all (a
    /// frame's payload must fit them) that are device memory if `devmem`.
    pub(crate) fn placement(
        &self,
        f: &FrameShape,
        split: bool,
        thresh: u32,
        payload_room: usize,
        devmem: bool,
    ) -> Placement {
        let unsplit = || match (devmem, self.unsplit_on_devmem) {
            (true, Unsplit::Drop) => Placement::Drop,
            _ => Placement::Linear {
                below_thresh: false,
            },
        };
        let Some((header, payload)) = f.tcp.filter(|_| split) else {
            return if split {
                unsplit()
            } else {
                Placement::Linear {
                    below_thresh: false,
                }
            };
        };
        if payload == 0 {
            // Headers only (an ACK): nothing for a payload buffer.
            return Placement::Linear {
                below_thresh: false,
            };
        }
        let thresh = thresh as usize;
        let rule = self
            .hds_thresh
            .map_or(ThreshRule::SegmentPayload, |h| h.rule);
        let below = Placement::Linear { below_thresh: true };
        let head = match rule {
            ThreshRule::SegmentPayload => {
                if payload.div_ceil(f.segments.max(1)) <= thresh {
                    return below;
                }
                header
            }
            ThreshRule::FrameLength => {
                if f.segments <= 1 && f.len <= thresh {
                    return below;
                }
                header
            }
            ThreshRule::HeaderBytes => {
                if thresh < FBNIC_HDR_MIN as usize {
                    header
                } else if f.segments <= 1 && f.len <= thresh {
                    return below;
                } else {
                    // Cut at the threshold (never inside the headers).
                    thresh.max(header)
                }
            }
            ThreshRule::ByteOffset => {
                let max_hdr = thresh.max(FBNIC_HDR_MIN_6_18 as usize);
                if f.segments <= 1 && f.len <= max_hdr {
                    return below;
                }
                // The hardware cuts at the offset even inside long headers;
                // a driver's skb would then carry headers in a frag, which
                // the stack cannot pull from device memory: not modelled.
                max_hdr.max(header)
            }
        };
        // The payload ends with the IP datagram (Ethernet padding excluded).
        let end = header + payload;
        let head = head.min(end);
        if end - head > payload_room {
            return unsplit();
        }
        Placement::Split { head }
    }

    /// Whether a memory provider may ask for payload buffers of `size`
    /// bytes (`page`: the system's page size, always accepted).
    pub(crate) fn rx_page_size_ok(&self, size: u32, page: u32) -> Result<(), Errno> {
        if size == page {
            return Ok(());
        }
        match self.rx_page_sizes {
            Some((lo, hi)) if size.is_power_of_two() && (lo.max(page)..=hi).contains(&size) => {
                Ok(())
            }
            _ => Err(self.rx_page_size_errno),
        }
    }

    /// Whether a ring of `n` entries is accepted.
    pub(crate) fn ring_ok(&self, n: u32) -> bool {
        (self.ring_min..=self.ring_max).contains(&n) && (!self.ring_pow2 || n.is_power_of_two())
    }

    /// Whether devmem RX binds on a kernel of version `kernel` (major,
    /// minor); else the errno the driver of that kernel refuses with.
    pub(crate) fn devmem_rx(&self, kernel: (u32, u32)) -> Result<(), Errno> {
        if kernel >= self.devmem_rx_since {
            Ok(())
        } else {
            Err(self.devmem_rx_before_errno)
        }
    }

    /// Whether a frame of `len` bytes that arrived as `segments` segments
    /// gets `CHECKSUM_COMPLETE`; `l4` gives the protocol number its IP
    /// header (after any VLAN tags) carries, `None` if it is not IP (asked
    /// only of a personality that reports complete sums: no parsing on the
    /// others' receive path).
    pub(crate) fn reports_complete(
        &self,
        len: usize,
        segments: u32,
        l4: impl FnOnce() -> Option<u8>,
    ) -> bool {
        self.rx_csum == RxCsum::Complete
            && segments <= 1
            && len > SHORT_FRAME
            && l4().is_some_and(|p| p != IPPROTO_SCTP)
    }

    /// The header-split threshold of a new device.
    pub(crate) fn hds_thresh_default(&self) -> u32 {
        self.hds_thresh.map_or(0, |h| h.default)
    }
}
