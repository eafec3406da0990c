// SPDX-License-Identifier: GPL-2.0

//! A hostile wire: which frames a queue's wire drops, duplicates, holds back
//! (reorders), corrupts or truncates, decided before the NIC's parser sees
//! them, from a seeded generator so that a seed replays the same faults on
//! the same frames.
//!
//! Rates are in parts per million of frames. Loss follows a Gilbert model:
//! in the good state a frame is lost at `drop_ppm`, and a frame starts a
//! burst (it and every frame after it lost) at `burst_enter_ppm`; each later
//! frame ends the burst at `burst_exit_ppm` (0: always), so bursts last
//! `PPM / burst_exit_ppm` frames on average. A held frame goes on
//! after `reorder_gap` later frames (at least one), at most [`HOLD_MAX`] at
//! a time. Corruption flips the bits of one byte at a frame offset drawn from
//! `corrupt_from..=corrupt_to` (clamped to the frame); truncation keeps a
//! prefix of 1 to `len - 1` bytes. Both act on single frames only: a TSO
//! super-frame the virtual wire carries whole stands for many wire frames,
//! so it is only dropped, duplicated or held as a whole.
//!
//! Delay is the wire's length: every frame arrives `delay_us` after it was
//! sent, give or take up to `jitter_us`, in the order it was sent (a wire
//! does not pass one frame with another; reordering is its own fault). At
//! most [`DELAY_MAX`] frames are on the wire at once; a full wire takes the
//! next frame only when the first arrives, as a link's bandwidth-delay
//! product bounds what it carries. The jitter has its own generator, so a
//! seed replays the same loss, corruption and reordering however the frames
//! happen to be timed.

/// The unit of every rate: parts per million.
pub(crate) const PPM: u32 = 1_000_000;

/// Most frames a queue's wire holds back at once.
pub(crate) const HOLD_MAX: usize = 8;

/// Most frames on a queue's delaying wire at once.
pub(crate) const DELAY_MAX: usize = 128;

/// The largest jitter, in microseconds (a second).
pub(crate) const JITTER_MAX_US: u32 = 1_000_000;

/// What a device's wire does to the frames it carries (all zero: nothing).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct FaultConfig {
    /// Seeds each queue's generator (with the queue's index).
    pub(crate) seed: u32,
    /// Loss in the good state.
    pub(crate) drop_ppm: u32,
    /// Entering a burst of loss, per frame.
    pub(crate) burst_enter_ppm: u32,
    /// Leaving it, per later frame (0: bursts of one frame).
    pub(crate) burst_exit_ppm: u32,
    /// Frames delivered twice.
    pub(crate) duplicate_ppm: u32,
    /// Frames held back.
    pub(crate) reorder_ppm: u32,
    /// How many later frames pass a held one (0 counts as 1).
    pub(crate) reorder_gap: u32,
    /// Frames with one byte corrupted.
    pub(crate) corrupt_ppm: u32,
    /// First and last frame offset a corruption may hit.
    pub(crate) corrupt_from: u32,
    pub(crate) corrupt_to: u32,
    /// Frames cut short.
    pub(crate) truncate_ppm: u32,
    /// How long every frame takes, and by how much more or less at most.
    pub(crate) delay_us: u32,
    pub(crate) jitter_us: u32,
    /// RX queues the faults apply to: bit `n` for queue `n`, bit 31 for
    /// queue 31 and every queue above.
    pub(crate) queues: u32,
}

impl FaultConfig {
    /// Whether any fault is on.
    pub(crate) fn any(&self) -> bool {
        (self.drop_ppm
            | self.burst_enter_ppm
            | self.duplicate_ppm
            | self.reorder_ppm
            | self.corrupt_ppm
            | self.truncate_ppm
            | self.delay_us
            | self.jitter_us)
            != 0
    }

    /// Whether frames take time on the wire.
    pub(crate) fn delays(&self) -> bool {
        (self.delay_us | self.jitter_us) != 0
    }

    /// Whether the faults apply to RX queue `queue`.
    pub(crate) fn covers(&self, queue: u32) -> bool {
        self.queues & (1 << queue.min(31)) != 0
    }
}

/// What the wire does to one frame.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Decision {
    /// Lost (nothing else applies).
    pub(crate) drop: bool,
    /// Lost in a burst (`drop` is set too).
    pub(crate) burst: bool,
    /// Delivered twice.
    pub(crate) duplicate: bool,
    /// Held back behind later frames.
    pub(crate) reorder: bool,
    /// The byte at this frame offset is XORed with this (non-zero) mask.
    pub(crate) corrupt: Option<(usize, u8)>,
    /// Only the first this many bytes arrive.
    pub(crate) truncate: Option<usize>,
}

/// A seeded generator (splitmix64).
struct Rng(u64);

impl Rng {
    /// The next 32 random bits.
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 32) as u32
    }

    /// A number in `lo..=hi` (`lo <= hi`, `hi - lo` below `u32::MAX`, so
    /// that the product below fits 64 bits).
    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        let span = (hi - lo).min(u64::from(u32::MAX - 1)) + 1;
        lo + ((u64::from(self.next()) * span) >> 32)
    }
}

/// A queue's wire: its generators and loss state.
pub(crate) struct FaultState {
    rng: Rng,
    jitter: Rng,
    in_burst: bool,
}

impl FaultState {
    /// The wire of queue `queue` under `cfg`, at the start of its sequence.
    pub(crate) fn new(cfg: &FaultConfig, queue: u32) -> Self {
        let seed = (u64::from(cfg.seed) << 32) | u64::from(queue);
        Self {
            rng: Rng(seed),
            // Another stream of the same seed, for the frames' timing.
            jitter: Rng(!seed),
            in_burst: false,
        }
    }

    /// Whether an event of `ppm` parts per million happens (no draw at 0).
    fn happens(&mut self, ppm: u32) -> bool {
        ppm != 0 && (u64::from(self.rng.next()) * u64::from(PPM)) >> 32 < u64::from(ppm)
    }

    /// A number in `lo..=hi` (`lo <= hi`).
    fn between(&mut self, lo: usize, hi: usize) -> usize {
        self.rng.between(lo as u64, hi as u64) as usize
    }

    /// How long the next frame takes on the wire, in nanoseconds: `delay_us`
    /// plus or minus up to `jitter_us` (at most [`JITTER_MAX_US`]), never
    /// below zero.
    pub(crate) fn delay_ns(&mut self, cfg: &FaultConfig) -> u64 {
        let delay = u64::from(cfg.delay_us) * 1000;
        let jitter = u64::from(cfg.jitter_us.min(JITTER_MAX_US)) * 1000;
        if jitter == 0 {
            return delay;
        }
        (delay + self.jitter.between(0, 2 * jitter)).saturating_sub(jitter)
    }

    /// What the wire does to the next frame, `len` bytes long, one wire frame
    /// (`single`) or a super-frame.
    pub(crate) fn decide(&mut self, cfg: &FaultConfig, len: usize, single: bool) -> Decision {
        let mut d = Decision::default();
        if self.in_burst {
            let exit = if cfg.burst_exit_ppm == 0 {
                PPM
            } else {
                cfg.burst_exit_ppm
            };
            if self.happens(exit) {
                self.in_burst = false;
            } else {
                d.drop = true;
                d.burst = true;
                return d;
            }
        }
        if self.happens(cfg.burst_enter_ppm) {
            self.in_burst = true;
            d.drop = true;
            d.burst = true;
            return d;
        }
        if self.happens(cfg.drop_ppm) {
            d.drop = true;
            return d;
        }
        if single && self.happens(cfg.corrupt_ppm) {
            let from = cfg.corrupt_from as usize;
            let to = (cfg.corrupt_to as usize).min(len.saturating_sub(1));
            if from <= to && len > 0 {
                let at = self.between(from, to);
                let mask = self.between(1, 255) as u8;
                d.corrupt = Some((at, mask));
            }
        }
        if single && len > 1 && self.happens(cfg.truncate_ppm) {
            d.truncate = Some(self.between(1, len - 1));
        }
        d.duplicate = self.happens(cfg.duplicate_ppm);
        d.reorder = self.happens(cfg.reorder_ppm);
        d
    }
}

/// Frames held back, each until enough later frames have passed it.
pub(crate) struct HoldQueue<T> {
    /// (order held, later frames still to pass, the frame).
    slots: [Option<(u64, u32, T)>; HOLD_MAX],
    held: u64,
}

impl<T> HoldQueue<T> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        Self {
            slots: core::array::from_fn(|_| None),
            held: 0,
        }
    }

    /// How many frames are held.
    pub(crate) fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether none is.
    pub(crate) fn is_empty(&self) -> bool {
        self.slots.iter().all(|s| s.is_none())
    }

    /// Holds `item` until `gap` later frames (at least one) have passed;
    /// hands it back when [`HOLD_MAX`] are held.
    pub(crate) fn hold(&mut self, item: T, gap: u32) -> Result<(), T> {
        let Some(slot) = self.slots.iter_mut().find(|s| s.is_none()) else {
            return Err(item);
        };
        *slot = Some((self.held, gap.max(1), item));
        self.held += 1;
        Ok(())
    }

    /// A later frame passed every held one.
    pub(crate) fn pass(&mut self) {
        for (_, left, _) in self.slots.iter_mut().flatten() {
            *left = left.saturating_sub(1);
        }
    }

    /// The earliest-held frame that may go on (all, when `all`).
    pub(crate) fn pop_due(&mut self, all: bool) -> Option<T> {
        let i = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|(order, left, _)| (i, *order, *left)))
            .filter(|&(_, _, left)| all || left == 0)
            .min_by_key(|&(_, order, _)| order)?
            .0;
        self.slots[i].take().map(|(_, _, item)| item)
    }
}

/// The frames on a delaying wire, in the order they were sent, each with the
/// time it arrives.
pub(crate) struct DelayLine<T> {
    /// A ring of `len` frames from `head`: (arrival in ns, the frame).
    slots: [Option<(u64, T)>; DELAY_MAX],
    head: usize,
    len: usize,
    /// The latest arrival given so far (no frame arrives before one sent
    /// earlier).
    last: u64,
}

impl<T> DelayLine<T> {
    /// An empty wire.
    pub(crate) fn new() -> Self {
        Self {
            slots: core::array::from_fn(|_| None),
            head: 0,
            len: 0,
            last: 0,
        }
    }

    /// How many frames are on the wire.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether none is.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the wire carries all it can.
    pub(crate) fn is_full(&self) -> bool {
        self.len == DELAY_MAX
    }

    /// Puts `item` on the wire to arrive at `at` ns, or after the frame sent
    /// before it if that arrives later; hands it back when the wire is full.
    pub(crate) fn send(&mut self, item: T, at: u64) -> Result<(), T> {
        if self.is_full() {
            return Err(item);
        }
        let at = at.max(self.last);
        self.last = at;
        self.slots[(self.head + self.len) % DELAY_MAX] = Some((at, item));
        self.len += 1;
        Ok(())
    }

    /// When the first frame arrives.
    pub(crate) fn next_arrival(&self) -> Option<u64> {
        self.slots[self.head].as_ref().map(|(at, _)| *at)
    }

    /// The first frame, if it has arrived by `now` ns (whenever it arrives,
    /// when `all`).
    pub(crate) fn arrive(&mut self, now: u64, all: bool) -> Option<T> {
        match self.next_arrival() {
            Some(at) if all || at <= now => {}
            _ => return None,
        }
        let (_, item) = self.slots[self.head].take()?;
        self.head = (self.head + 1) % DELAY_MAX;
        self.len -= 1;
        Some(item)
    }
}
