// SPDX-License-Identifier: GPL-2.0

//! Counters read by ethtool and netlink while the datapath updates them.

use core::sync::atomic::{AtomicU64, Ordering};

/// A 64-bit counter.
///
/// `add` is for the one context that owns the counter (a NAPI poll, a TX
/// queue under its lock): a plain load and store, no locked instruction.
/// `add_shared` is for counters several CPUs bump (rare events).
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`; only from the counter's single writer.
    pub(crate) fn add(&self, n: u64) {
        self.0.store(
            self.0.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }

    /// Adds `n` from any context.
    pub(crate) fn add_shared(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// The current value.
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// `fmt::Write` into a fixed byte buffer, truncating.
pub(crate) struct ByteWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> ByteWriter<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// Bytes written.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl core::fmt::Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}
