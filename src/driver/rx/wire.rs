// SPDX-License-Identifier: GPL-2.0

//! A hostile wire: the faults a device's wire applies to the frames a queue
//! receives, after the wire and before the NIC's parser and header split,
//! as no real NIC does on demand (`logic/wire_faults.rs` decides them).
//!
//! The knobs are the device's `devmemnic/<parent>/wire_faults/` in debugfs;
//! each poll reads them once. A queue's sequence starts from the seed when
//! the queue starts (the device comes up, the queue restarts) and at the
//! first frame after the configuration changed, so the same seed replays the
//! same faults on the same frames. A lost frame is freed (its sender's descriptor completes: the
//! wire took it); a duplicated one is received twice; a held one waits for
//! `reorder_gap` later frames, or for the wire to go idle (a poll that finds
//! the ring empty, at most a few milliseconds later: the queue's timer); a
//! corrupted or truncated one is read as altered by every step after, so
//! the checksum engine judges the bytes that arrived: a bad sum never lands
//! in device memory (`rx-csum-bad`, dropped), and in host memory the stack
//! checks it. A delaying wire (`delay_us`, `jitter_us`) takes frames off the
//! ring as its sender sent them and delivers each when it arrives, in the
//! order sent: the queue's timer polls for the next one (so a frame arrives
//! at its time or up to a jiffy or so later, never earlier); a full wire
//! leaves frames on the ring, which fills and stops the sender. The other
//! faults act as frames arrive. Frames held or on the wire when the queue
//! stops are dropped with its ring.

use super::{CompletionRun, Rx};
use crate::abstractions::{
    delay::monotonic_ns, delayed_call::DelayedCall, napi::NapiCtx, netdev::NetDev, skb::SkBuff,
};
use crate::driver::nic::{HeldFrame, RxQueue, RxState, Side};
use crate::logic::wire_faults::{Decision, FaultState};
use core::sync::atomic::Ordering;

/// How long a held frame waits for later frames once the wire is idle.
const HOLD_IDLE_MS: u32 = 1;

impl RxQueue {
    /// Whether the wire's faults apply to this queue in this poll; a changed
    /// configuration starts the queue's sequence again.
    pub(super) fn wire_faults_on(&self, st: &mut RxState, me: &Side) -> bool {
        let config = me.wire_faults.config();
        let w = &mut st.wire;
        if config != w.config {
            w.config = config;
            w.faults = (config.any() && config.covers(self.index))
                .then(|| FaultState::new(&config, self.index));
        }
        w.faults.is_some()
    }

    /// A poll's frames while the wire's faults are on: off the ring, onto
    /// the wire when it delays them, through the faults as they arrive.
    /// Returns the frames received (at most `budget`) and whether any came
    /// off the ring.
    pub(super) fn poll_wire(
        &self,
        ctx: &NapiCtx<'_>,
        st: &mut RxState,
        rx: &Rx<'_, '_>,
        budget: i32,
        run: &mut CompletionRun,
        peer: Option<&NetDev>,
    ) -> (i32, bool) {
        let delaying = st.wire.config.delays();
        let now = monotonic_ns();
        let (mut done, mut took) = (0, false);
        while done < budget {
            if let Some(frame) = st.wire.delayed.arrive(now, !delaying) {
                done += 1;
                self.through_faults(ctx, st, rx, frame);
                continue;
            }
            if st.wire.delayed.is_full() {
                break;
            }
            let Some(frame) = self.ring.consume() else {
                break;
            };
            took = true;
            run.add(peer, frame.queue_mapping());
            if delaying {
                let w = &mut st.wire;
                let delay = w.faults.as_mut().map_or(0, |f| f.delay_ns(&w.config));
                // Never full here (checked above).
                match w.delayed.send(frame, now.saturating_add(delay)) {
                    Ok(()) => {
                        self.stats.wire_delayed.add(1);
                        continue;
                    }
                    Err(frame) => {
                        done += 1;
                        self.through_faults(ctx, st, rx, frame);
                    }
                }
            } else {
                done += 1;
                self.through_faults(ctx, st, rx, frame);
            }
        }
        // The queue's timer polls again when the first frame still on the
        // wire arrives; until then a full wire has the frames on the ring
        // wait (else each poll's end would poll again at once, for nothing).
        self.wire_full
            .store(st.wire.delayed.is_full(), Ordering::Relaxed);
        if let Some(at) = st.wire.delayed.next_arrival() {
            let wait = at.saturating_sub(monotonic_ns());
            let ms = wait.div_ceil(1_000_000).clamp(1, u64::from(u32::MAX)) as u32;
            DelayedCall::schedule(self, ms);
        }
        (done, took)
    }

    /// Delivers, in order, the frames a delaying wire still carries once its
    /// faults are off.
    pub(super) fn deliver_carried(&self, ctx: &NapiCtx<'_>, st: &mut RxState, rx: &Rx<'_, '_>) {
        while let Some(frame) = st.wire.delayed.arrive(0, true) {
            self.take(ctx, st, rx, frame, &Decision::default());
        }
    }

    /// Takes a frame off the ring through the wire's faults.
    pub(super) fn through_faults(
        &self,
        ctx: &NapiCtx<'_>,
        st: &mut RxState,
        rx: &Rx<'_, '_>,
        frame: SkBuff,
    ) {
        let w = &mut st.wire;
        let Some(faults) = w.faults.as_mut() else {
            self.take(ctx, st, rx, frame, &Decision::default());
            return;
        };
        let fault = faults.decide(&w.config, frame.len(), frame.segments() <= 1);
        if fault.drop {
            self.stats.wire_lost.add(1);
            if fault.burst {
                self.stats.wire_burst_lost.add(1);
            }
            drop(frame);
            return;
        }
        let frame = if fault.reorder {
            match w
                .held
                .hold(HeldFrame { frame, fault }, w.config.reorder_gap)
            {
                Ok(()) => {
                    self.stats.wire_reordered.add(1);
                    return;
                }
                // As many held as the wire holds: this one goes in order.
                Err(h) => h.frame,
            }
        } else {
            frame
        };
        self.take_faulted(ctx, st, rx, frame, &fault);
        st.wire.held.pass();
        while let Some(h) = st.wire.held.pop_due(false) {
            self.take_faulted(ctx, st, rx, h.frame, &h.fault);
        }
    }

    /// Receives a frame the wire may have altered, counting what it did.
    fn take_faulted(
        &self,
        ctx: &NapiCtx<'_>,
        st: &mut RxState,
        rx: &Rx<'_, '_>,
        frame: SkBuff,
        fault: &Decision,
    ) {
        if fault.duplicate {
            self.stats.wire_duplicated.add(1);
        }
        if fault.corrupt.is_some() {
            self.stats.wire_corrupted.add(1);
        }
        if fault.truncate.is_some() {
            self.stats.wire_truncated.add(1);
        }
        self.take(ctx, st, rx, frame, fault);
    }

    /// At a poll's end: frames held back go on when the wire went idle (the
    /// poll took none) or the faults went off; else the queue's timer polls
    /// again soon, so that they do when no later frame comes.
    pub(super) fn release_held(
        &self,
        ctx: &NapiCtx<'_>,
        st: &mut RxState,
        rx: &Rx<'_, '_>,
        faulty: bool,
        took: bool,
    ) {
        if st.wire.held.is_empty() {
            return;
        }
        if faulty && took {
            DelayedCall::schedule(self, HOLD_IDLE_MS);
            return;
        }
        while let Some(h) = st.wire.held.pop_due(true) {
            self.take_faulted(ctx, st, rx, h.frame, &h.fault);
        }
    }
}
