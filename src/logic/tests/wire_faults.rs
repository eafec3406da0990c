// SPDX-License-Identifier: GPL-2.0

//! Wire faults: seeded decisions, their rates, the loss bursts and the hold
//! queue that reorders.

use super::wire_faults::{
    DelayLine, FaultConfig, FaultState, HoldQueue, DELAY_MAX, HOLD_MAX, JITTER_MAX_US, PPM,
};
use super::Ctx;

fn all_queues() -> FaultConfig {
    FaultConfig {
        queues: u32::MAX,
        ..FaultConfig::default()
    }
}

/// Every fault at once at moderate rates (2% loss, 1% duplicates, 25%
/// reordering, 0.5% corruption anywhere, 0.5% truncation), seeded `seed`.
fn moderate(seed: u32) -> FaultConfig {
    FaultConfig {
        seed,
        drop_ppm: 20_000,
        duplicate_ppm: 10_000,
        reorder_ppm: 250_000,
        corrupt_ppm: 5_000,
        corrupt_to: u32::MAX,
        truncate_ppm: 5_000,
        ..all_queues()
    }
}

/// Counts of what `n` decisions on 1500-byte single frames did.
#[derive(Default)]
struct Tally {
    drop: u32,
    burst: u32,
    duplicate: u32,
    reorder: u32,
    corrupt: u32,
    truncate: u32,
}

fn tally(cfg: &FaultConfig, queue: u32, n: u32) -> Tally {
    let mut st = FaultState::new(cfg, queue);
    let mut t = Tally::default();
    for _ in 0..n {
        let d = st.decide(cfg, 1500, true);
        t.drop += u32::from(d.drop);
        t.burst += u32::from(d.burst);
        t.duplicate += u32::from(d.duplicate);
        t.reorder += u32::from(d.reorder);
        t.corrupt += u32::from(d.corrupt.is_some());
        t.truncate += u32::from(d.truncate.is_some());
    }
    t
}

fn off_does_nothing(t: &mut Ctx) {
    let cfg = all_queues();
    check!(t, !cfg.any());
    let mut st = FaultState::new(&cfg, 0);
    for _ in 0..1000 {
        check_eq!(t, st.decide(&cfg, 1500, true), Default::default());
    }
}

fn same_seed_same_faults(t: &mut Ctx) {
    let cfg = moderate(7);
    let mut a = FaultState::new(&cfg, 3);
    let mut b = FaultState::new(&cfg, 3);
    let mut c = FaultState::new(&cfg, 4);
    let mut other = FaultState::new(&FaultConfig { seed: 8, ..cfg }, 3);
    let (mut differ_queue, mut differ_seed) = (false, false);
    for _ in 0..10_000 {
        let d = a.decide(&cfg, 1500, true);
        check_eq!(t, d, b.decide(&cfg, 1500, true));
        differ_queue |= d != c.decide(&cfg, 1500, true);
        differ_seed |= d != other.decide(&cfg, 1500, true);
    }
    check!(t, differ_queue);
    check!(t, differ_seed);
}

fn rates_come_out_as_configured(t: &mut Ctx) {
    let cfg = moderate(1);
    let n = 200_000;
    let got = tally(&cfg, 0, n);
    // Within 10% of n * rate (the draws are far more than enough for that).
    let near = |count: u32, ppm: u32, of: u32| {
        let want = u64::from(of) * u64::from(ppm) / u64::from(PPM);
        let count = u64::from(count);
        count * 10 >= want * 9 && count * 10 <= want * 11
    };
    check!(t, near(got.drop, 20_000, n));
    let kept = n - got.drop;
    check!(t, near(got.duplicate, 10_000, kept));
    check!(t, near(got.reorder, 250_000, kept));
    check!(t, near(got.corrupt, 5_000, kept));
    check!(t, near(got.truncate, 5_000, kept));
    check_eq!(t, got.burst, 0);
}

fn bursts_lose_runs_of_frames(t: &mut Ctx) {
    // Enter at 1%, leave at 20%: bursts of 5 frames on average, so about
    // 1% * (1 + 4) of frames lost over all.
    let cfg = FaultConfig {
        seed: 9,
        burst_enter_ppm: 10_000,
        burst_exit_ppm: 200_000,
        ..all_queues()
    };
    let mut st = FaultState::new(&cfg, 0);
    let (mut lost, mut runs, mut longest, mut run) = (0u32, 0u32, 0u32, 0u32);
    for _ in 0..100_000 {
        let d = st.decide(&cfg, 1500, true);
        check_eq!(t, d.drop, d.burst);
        if d.drop {
            lost += 1;
            run += 1;
        } else if run > 0 {
            runs += 1;
            longest = longest.max(run);
            run = 0;
        }
    }
    check!(t, runs > 500 && runs < 1500);
    // 4 to 7 frames a burst on average (multiplied out: no division to
    // panic at zero runs).
    check!(t, lost >= 4 * runs && lost < 8 * runs);
    check!(t, longest > 10);
    // A zero exit rate ends each burst after one frame (two in a row only
    // when the next frame starts a burst of its own, 1% of them).
    let one = FaultConfig {
        burst_exit_ppm: 0,
        ..cfg
    };
    let mut st = FaultState::new(&one, 0);
    let (mut lost, mut runs, mut run) = (0u32, 0u32, 0u32);
    for _ in 0..100_000 {
        if st.decide(&one, 1500, true).burst {
            lost += 1;
            run += 1;
        } else if run > 0 {
            runs += 1;
            run = 0;
        }
    }
    check!(t, runs > 500);
    check!(t, u64::from(lost) * 100 <= u64::from(runs) * 105);
}

fn corruption_stays_in_its_range(t: &mut Ctx) {
    let cfg = FaultConfig {
        seed: 2,
        corrupt_ppm: PPM,
        corrupt_from: 54,
        corrupt_to: 99,
        ..all_queues()
    };
    let mut st = FaultState::new(&cfg, 0);
    let (mut lo, mut hi) = (usize::MAX, 0);
    for _ in 0..5000 {
        let d = st.decide(&cfg, 1500, true);
        let Some((at, mask)) = d.corrupt else {
            check!(t, false);
            return;
        };
        check!(t, mask != 0);
        lo = lo.min(at);
        hi = hi.max(at);
    }
    check_eq!(t, (lo, hi), (54, 99));
    // Clamped to a short frame; none for a frame ending before the range.
    let d = st.decide(&cfg, 60, true);
    check!(t, d.corrupt.is_some_and(|(at, _)| (54..60).contains(&at)));
    check_eq!(t, st.decide(&cfg, 54, true).corrupt, None);
    // Never on a super-frame.
    check_eq!(t, st.decide(&cfg, 60_000, false).corrupt, None);
}

fn truncation_keeps_a_proper_prefix(t: &mut Ctx) {
    let cfg = FaultConfig {
        seed: 3,
        truncate_ppm: PPM,
        ..all_queues()
    };
    let mut st = FaultState::new(&cfg, 0);
    for len in [2usize, 3, 60, 1514, 9014] {
        for _ in 0..200 {
            let d = st.decide(&cfg, len, true);
            check!(t, d.truncate.is_some_and(|n| n >= 1 && n < len));
        }
    }
    check_eq!(t, st.decide(&cfg, 1, true).truncate, None);
    check_eq!(t, st.decide(&cfg, 1514, false).truncate, None);
}

fn queue_mask_selects_queues(t: &mut Ctx) {
    let cfg = FaultConfig {
        queues: 0b101 | 1 << 31,
        ..FaultConfig::default()
    };
    check!(t, cfg.covers(0));
    check!(t, !cfg.covers(1));
    check!(t, cfg.covers(2));
    check!(t, !cfg.covers(30));
    check!(t, cfg.covers(31));
    check!(t, cfg.covers(63));
}

fn hold_queue_releases_after_the_gap_in_order(t: &mut Ctx) {
    let mut q = HoldQueue::new();
    check!(t, q.is_empty());
    check!(t, q.hold(1u32, 2).is_ok());
    check!(t, q.hold(2u32, 1).is_ok());
    check!(t, q.hold(3u32, 0).is_ok());
    check_eq!(t, q.len(), 3);
    check_eq!(t, q.pop_due(false), None);
    q.pass();
    // 2 and 3 (gap 0 counts as 1) are due: in the order held.
    check_eq!(t, q.pop_due(false), Some(2));
    check_eq!(t, q.pop_due(false), Some(3));
    check_eq!(t, q.pop_due(false), None);
    q.pass();
    check_eq!(t, q.pop_due(false), Some(1));
    check!(t, q.is_empty());
    // Full: the frame comes back.
    for i in 0..HOLD_MAX as u32 {
        check!(t, q.hold(i, 5).is_ok());
    }
    check_eq!(t, q.hold(99, 5), Err(99));
    // All, oldest first, when the wire goes idle.
    for i in 0..HOLD_MAX as u32 {
        check_eq!(t, q.pop_due(true), Some(i));
    }
    check_eq!(t, q.pop_due(true), None);
}

fn delay_without_jitter_is_exact(t: &mut Ctx) {
    let cfg = FaultConfig {
        delay_us: 2500,
        ..all_queues()
    };
    check!(t, cfg.any());
    check!(t, cfg.delays());
    check!(t, !all_queues().delays());
    let mut st = FaultState::new(&cfg, 0);
    for _ in 0..100 {
        check_eq!(t, st.delay_ns(&cfg), 2_500_000);
    }
}

fn jitter_spreads_within_its_bounds_and_spares_the_other_faults(t: &mut Ctx) {
    let cfg = FaultConfig {
        delay_us: 3000,
        jitter_us: 1000,
        ..moderate(7)
    };
    let mut st = FaultState::new(&cfg, 1);
    let (mut lo, mut hi, mut sum) = (u64::MAX, 0u64, 0u64);
    for _ in 0..2000 {
        let d = st.delay_ns(&cfg);
        lo = lo.min(d);
        hi = hi.max(d);
        sum += d;
    }
    check!(t, lo >= 2_000_000);
    check!(t, hi <= 4_000_000);
    // Spread over the range, centred on the delay.
    check!(t, lo < 2_100_000);
    check!(t, hi > 3_900_000);
    let mean = sum / 2000;
    check!(t, mean > 2_900_000 && mean < 3_100_000);
    // Jitter larger than the delay never goes below zero; the jitter is
    // capped.
    let near = FaultConfig {
        delay_us: 10,
        jitter_us: 1000,
        ..all_queues()
    };
    let huge = FaultConfig {
        jitter_us: u32::MAX,
        ..all_queues()
    };
    let mut st = FaultState::new(&near, 0);
    let mut zeros = 0;
    for _ in 0..1000 {
        let d = st.delay_ns(&near);
        check!(t, d <= 1_010_000);
        zeros += u32::from(d == 0);
        check!(t, st.delay_ns(&huge) <= u64::from(JITTER_MAX_US) * 1000);
    }
    check!(t, zeros > 300);
    // Drawing the timing changes none of the other faults: the same seed
    // gives the same decisions with and without it.
    let mut plain = FaultState::new(&cfg, 1);
    let mut timed = FaultState::new(&cfg, 1);
    for _ in 0..2000 {
        timed.delay_ns(&cfg);
        check_eq!(
            t,
            plain.decide(&cfg, 1500, true),
            timed.decide(&cfg, 1500, true)
        );
    }
}

fn delay_line_keeps_the_order_sent(t: &mut Ctx) {
    let mut w = DelayLine::new();
    check!(t, w.is_empty());
    check_eq!(t, w.next_arrival(), None);
    check_eq!(t, w.arrive(u64::MAX, false), None);
    check!(t, w.send(1u32, 100).is_ok());
    // Sent later, due earlier: it arrives after the first.
    check!(t, w.send(2u32, 50).is_ok());
    check!(t, w.send(3u32, 300).is_ok());
    check_eq!(t, w.len(), 3);
    check_eq!(t, w.next_arrival(), Some(100));
    check_eq!(t, w.arrive(99, false), None);
    check_eq!(t, w.arrive(100, false), Some(1));
    check_eq!(t, w.next_arrival(), Some(100));
    check_eq!(t, w.arrive(100, false), Some(2));
    check_eq!(t, w.arrive(299, false), None);
    check_eq!(t, w.arrive(299, true), Some(3));
    check!(t, w.is_empty());
    // Full: the frame comes back; around the ring, still in order.
    for round in 0..3u32 {
        for i in 0..DELAY_MAX as u32 {
            check!(t, w.send(round * 1000 + i, 400 + u64::from(i)).is_ok());
        }
        check!(t, w.is_full());
        check_eq!(t, w.send(99, 0), Err(99));
        for i in 0..DELAY_MAX as u32 / 2 {
            check_eq!(t, w.arrive(u64::MAX, false), Some(round * 1000 + i));
        }
        for i in DELAY_MAX as u32 / 2..DELAY_MAX as u32 {
            check_eq!(t, w.arrive(0, true), Some(round * 1000 + i));
        }
        check!(t, w.is_empty());
    }
}

logic_suite!(
    wire_faults_suite,
    "devmemnic_wire_faults",
    [
        off_does_nothing,
        same_seed_same_faults,
        rates_come_out_as_configured,
        bursts_lose_runs_of_frames,
        corruption_stays_in_its_range,
        truncation_keeps_a_proper_prefix,
        queue_mask_selects_queues,
        hold_queue_releases_after_the_gap_in_order,
        delay_without_jitter_is_exact,
        jitter_spreads_within_its_bounds_and_spares_the_other_faults,
        delay_line_keeps_the_order_sent,
    ]
);
