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
//! checks it. Frames held when the queue stops are dropped with its ring.

use super::Rx;
use crate::abstractions::{delayed_call::DelayedCall, napi::NapiCtx, skb::SkBuff};
use crate::driver::nic::{HeldFrame, RxQueue, RxState, Side};
use crate::logic::wire_faults::{Decision, FaultState};

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
