// SPDX-License-Identifier: GPL-2.0

//! Personalities: where each NIC model puts a frame, and the knobs it takes.

use super::personality::{
    FrameShape, Packing, Personality, Place, Placement, RxCsum, EINVAL, ENODATA, EOPNOTSUPP,
    ERANGE, FBNIC_HDR_MIN, FBNIC_HDR_MIN_6_18, SHORT_FRAME,
};
use super::Ctx;

/// An IPv4 TCP frame (66 header bytes with timestamps) of `payload` bytes.
fn tcp(payload: usize) -> FrameShape {
    FrameShape {
        len: 66 + payload,
        segments: 1,
        tcp: Some((66, payload)),
    }
}

const ROOM: usize = 16 * 4096;

fn small_payload_goes_to_device_memory_on_every_personality_at_thresh_zero(t: &mut Ctx) {
    // What each driver does with hds-thresh 0 (which a devmem binding
    // needs): even a 1-byte payload is split (upstream's check_rx_hds),
    // but on fbnic before its header-split fixes (below).
    for p in Personality::ALL
        .into_iter()
        .filter(|&p| p != Personality::Fbnic618)
    {
        for n in [1, 24, 100, 1448] {
            check_eq!(
                t,
                p.profile().placement(&tcp(n), true, 0, ROOM, true),
                Placement::Split { head: 66 }
            );
        }
    }
}

fn headers_only_and_split_off_stay_linear(t: &mut Ctx) {
    for p in Personality::ALL {
        let prof = p.profile();
        check_eq!(
            t,
            prof.placement(&tcp(0), true, 0, ROOM, true),
            Placement::Linear {
                below_thresh: false
            }
        );
        check_eq!(
            t,
            prof.placement(&tcp(1000), false, 0, ROOM, false),
            Placement::Linear {
                below_thresh: false
            }
        );
    }
}

fn non_tcp_on_device_memory_is_dropped_where_the_driver_cannot_map_it(t: &mut Ctx) {
    let udp = FrameShape {
        len: 200,
        segments: 1,
        tcp: None,
    };
    let linear = Placement::Linear {
        below_thresh: false,
    };
    for (p, devmem_queue) in [
        (Personality::Strict, linear),
        (Personality::Gve, Placement::Drop),
        (Personality::Bnxt, linear),
        (Personality::Mlx5, Placement::Drop),
        (Personality::Fbnic, linear),
    ] {
        check_eq!(
            t,
            p.profile().placement(&udp, true, 0, ROOM, true),
            devmem_queue
        );
        // Host payload buffers: always delivered.
        check_eq!(t, p.profile().placement(&udp, true, 0, ROOM, false), linear);
    }
}

fn thresholds_follow_each_drivers_rule(t: &mut Ctx) {
    let below = Placement::Linear { below_thresh: true };
    let strict = Personality::Strict.profile();
    // Strict: payload per segment.
    check_eq!(
        t,
        strict.placement(&tcp(100), true, 100, ROOM, false),
        below
    );
    check_eq!(
        t,
        strict.placement(&tcp(101), true, 100, ROOM, false),
        Placement::Split { head: 66 }
    );
    let tso = FrameShape {
        len: 66 + 3000,
        segments: 3,
        tcp: Some((66, 3000)),
    };
    check_eq!(t, strict.placement(&tso, true, 1000, ROOM, false), below);
    // bnxt: the whole frame's length.
    let bnxt = Personality::Bnxt.profile();
    check_eq!(t, bnxt.placement(&tcp(100), true, 166, ROOM, false), below);
    check_eq!(
        t,
        bnxt.placement(&tcp(100), true, 165, ROOM, false),
        Placement::Split { head: 66 }
    );
    // fbnic: under 256 split after the headers whatever the size; from 256
    // on, whole up to the threshold, cut at it beyond.
    let fbnic = Personality::Fbnic.profile();
    check_eq!(
        t,
        fbnic.placement(&tcp(10), true, FBNIC_HDR_MIN - 1, ROOM, false),
        Placement::Split { head: 66 }
    );
    check_eq!(t, fbnic.placement(&tcp(190), true, 256, ROOM, false), below);
    check_eq!(
        t,
        fbnic.placement(&tcp(1448), true, 1536, ROOM, false),
        below
    );
    check_eq!(
        t,
        fbnic.placement(&tcp(2000), true, 1536, ROOM, false),
        Placement::Split { head: 1536 }
    );
    // fbnic of 6.18 (to 6.18.13): never split after the headers; whole up
    // to max(threshold, 128) bytes, cut at that offset beyond, so at
    // hds-thresh 0 a small segment stays whole and a full one leaves 62
    // payload bytes in the header buffer.
    let old = Personality::Fbnic618.profile();
    let min = FBNIC_HDR_MIN_6_18 as usize;
    for thresh in [0, 1, 127] {
        check_eq!(
            t,
            old.placement(&tcp(min - 66), true, thresh, ROOM, true),
            below
        );
        check_eq!(
            t,
            old.placement(&tcp(min - 65), true, thresh, ROOM, true),
            Placement::Split { head: min }
        );
        check_eq!(
            t,
            old.placement(&tcp(1448), true, thresh, ROOM, true),
            Placement::Split { head: min }
        );
    }
    check_eq!(t, old.placement(&tcp(190), true, 256, ROOM, false), below);
    check_eq!(
        t,
        old.placement(&tcp(191), true, 256, ROOM, false),
        Placement::Split { head: 256 }
    );
    check_eq!(t, old.placement(&tcp(1448), true, 1536, ROOM, false), below);
    // A cut never falls inside the headers (an IPv6 frame with options).
    let long_headers = FrameShape {
        len: 140 + 100,
        segments: 1,
        tcp: Some((140, 100)),
    };
    check_eq!(
        t,
        old.placement(&long_headers, true, 0, ROOM, true),
        Placement::Split { head: 140 }
    );
    // Payload packing: strict back to back, fbnic (both releases) at 128
    // bytes (fbnic_add_rx_frag's ALIGN(len, 128)), mlx5 at its 256-byte
    // strides with an aggregate's segments back to back, bnxt a buffer per
    // packet but an aggregate's segments back to back from a fresh one,
    // gve a buffer per packet.
    for p in Personality::ALL {
        let want = match p {
            Personality::Strict => Packing::packed(1),
            Personality::Fbnic | Personality::Fbnic618 => Packing::packed(128),
            Personality::Mlx5 => Packing {
                alone: Place::Packed(256),
                starts_run: Place::Packed(256),
                merged: Place::Packed(1),
            },
            Personality::Bnxt => Packing {
                alone: Place::Own,
                starts_run: Place::Fresh,
                merged: Place::Packed(1),
            },
            Personality::Gve => Packing::OWN,
        };
        check_eq!(t, p.profile().payload_packing, want);
    }
    check_eq!(t, Packing::OWN.first(true), Place::Own);
    let bnxt = Personality::Bnxt.profile().payload_packing;
    check_eq!(t, bnxt.first(true), Place::Fresh);
    check_eq!(t, bnxt.first(false), Place::Own);
    // Everything else as the fixed driver: its limits and refusals.
    let new = Personality::Fbnic.profile();
    check_eq!(
        t,
        old.hds_thresh.map(|h| (h.default, h.max)),
        new.hds_thresh.map(|h| (h.default, h.max))
    );
    check_eq!(t, old.split_off_refused, new.split_off_refused);
    check_eq!(t, old.ring_max, new.ring_max);
    check_eq!(t, old.devmem_rx_since, new.devmem_rx_since);
}

fn payload_beyond_the_buffers_is_not_split(t: &mut Ctx) {
    let p = Personality::Strict.profile();
    check_eq!(
        t,
        p.placement(&tcp(9000), true, 0, 4096, false),
        Placement::Linear {
            below_thresh: false
        }
    );
    check_eq!(
        t,
        p.placement(&tcp(4096), true, 0, 4096, false),
        Placement::Split { head: 66 }
    );
}

fn padding_does_not_count_as_payload(t: &mut Ctx) {
    // A 1-byte segment without TCP options: 55 bytes, padded to 60.
    let padded = FrameShape {
        len: 60,
        segments: 1,
        tcp: Some((54, 1)),
    };
    for p in Personality::ALL
        .into_iter()
        .filter(|&p| p != Personality::Fbnic618)
    {
        check_eq!(
            t,
            p.profile().placement(&padded, true, 0, 1, true),
            Placement::Split { head: 54 }
        );
    }
    // (fbnic of 6.18 keeps it whole: 60 bytes are under its 128.)
    check_eq!(
        t,
        Personality::Fbnic618
            .profile()
            .placement(&padded, true, 0, 1, true),
        Placement::Linear { below_thresh: true }
    );
}

fn names_and_flags_round_trip(t: &mut Ctx) {
    for (i, p) in Personality::ALL.into_iter().enumerate() {
        check_eq!(t, p.index(), i);
        check_eq!(t, Personality::from_index(i), Some(p));
        check_eq!(t, Personality::from_name(p.name()), Some(p));
        check_eq!(
            t,
            Personality::FLAGS[i].strip_prefix("personality-"),
            Some(p.name())
        );
        // The flag alone, or with the current one (ethtool keeps it set).
        check_eq!(
            t,
            Personality::from_flags(1 << i, Personality::Strict),
            Some(p)
        );
        check_eq!(
            t,
            Personality::from_flags((1 << i) | 1, Personality::Strict),
            Some(p)
        );
    }
    check_eq!(t, Personality::from_name("mlx5\n"), Some(Personality::Mlx5));
    check_eq!(t, Personality::from_name("e1000"), None);
    check_eq!(t, Personality::from_name(""), None);
    // None set, two new ones, or an unknown bit: refused.
    check_eq!(t, Personality::from_flags(0, Personality::Gve), None);
    check_eq!(
        t,
        Personality::from_flags(0b00110, Personality::Strict),
        None
    );
    let unknown = Personality::ALL.len();
    check_eq!(
        t,
        Personality::from_flags(1 << unknown, Personality::Strict),
        None
    );
    check_eq!(t, Personality::from_index(unknown), None);
    check_eq!(
        t,
        Personality::from_name("fbnic-6.18"),
        Some(Personality::Fbnic618)
    );
}

fn rx_page_sizes_and_rings(t: &mut Ctx) {
    let page = 4096;
    let ok = |p: Personality, s: u32| p.profile().rx_page_size_ok(s, page);
    for p in Personality::ALL {
        check_eq!(t, ok(p, page), Ok(()));
    }
    check_eq!(t, ok(Personality::Strict, 65536), Ok(()));
    check_eq!(t, ok(Personality::Strict, 131072), Err(EINVAL));
    check_eq!(t, ok(Personality::Strict, 12288), Err(EINVAL));
    check_eq!(t, ok(Personality::Bnxt, 32768), Ok(()));
    check_eq!(t, ok(Personality::Bnxt, 65536), Err(ERANGE));
    check_eq!(t, ok(Personality::Gve, 8192), Err(EOPNOTSUPP));
    check_eq!(t, ok(Personality::Fbnic, 16384), Err(EOPNOTSUPP));
    let gve = Personality::Gve.profile();
    check!(t, gve.ring_ok(1024));
    check!(t, !gve.ring_ok(1000));
    check!(t, !gve.ring_ok(256));
    let bnxt = Personality::Bnxt.profile();
    check!(t, bnxt.ring_ok(2047));
    check!(t, !bnxt.ring_ok(2048));
}

fn devmem_rx_follows_the_kernel_under_test(t: &mut Ctx) {
    for p in Personality::ALL {
        check_eq!(t, p.profile().devmem_rx((7, 2)), Ok(()));
    }
    check_eq!(t, Personality::Strict.profile().devmem_rx((6, 12)), Ok(()));
    check_eq!(
        t,
        Personality::Gve.profile().devmem_rx((6, 12)),
        Err(ENODATA)
    );
    check_eq!(
        t,
        Personality::Bnxt.profile().devmem_rx((6, 12)),
        Err(ENODATA)
    );
    check_eq!(
        t,
        Personality::Mlx5.profile().devmem_rx((6, 12)),
        Err(EOPNOTSUPP)
    );
    check_eq!(
        t,
        Personality::Fbnic.profile().devmem_rx((6, 17)),
        Err(EOPNOTSUPP)
    );
    check_eq!(t, Personality::Fbnic.profile().devmem_rx((6, 18)), Ok(()));
}

fn only_mlx5_reports_checksum_complete_beyond_short_frames(t: &mut Ctx) {
    let tcp = || Some(6);
    for p in Personality::ALL {
        let prof = p.profile();
        let mlx5 = p == Personality::Mlx5;
        check_eq!(t, prof.rx_csum == RxCsum::Complete, mlx5);
        check_eq!(t, prof.reports_complete(1514, 1, tcp), mlx5);
        check_eq!(
            t,
            prof.reports_complete(SHORT_FRAME + 1, 1, || Some(17)),
            mlx5
        );
        // A short frame (its padding uncovered), a super-frame, SCTP, not IP.
        check!(t, !prof.reports_complete(SHORT_FRAME, 1, tcp));
        check!(t, !prof.reports_complete(60, 1, tcp));
        check!(t, !prof.reports_complete(65000, 45, tcp));
        check!(t, !prof.reports_complete(1514, 1, || Some(132)));
        check!(t, !prof.reports_complete(1514, 1, || None));
    }
}

logic_suite!(
    personality_suite,
    "devmemnic_personality",
    [
        small_payload_goes_to_device_memory_on_every_personality_at_thresh_zero,
        headers_only_and_split_off_stay_linear,
        non_tcp_on_device_memory_is_dropped_where_the_driver_cannot_map_it,
        thresholds_follow_each_drivers_rule,
        payload_beyond_the_buffers_is_not_split,
        padding_does_not_count_as_payload,
        names_and_flags_round_trip,
        rx_page_sizes_and_rings,
        devmem_rx_follows_the_kernel_under_test,
        only_mlx5_reports_checksum_complete_beyond_short_frames,
    ]
);
