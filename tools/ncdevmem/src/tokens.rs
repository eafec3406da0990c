//! Returning devmem buffers: tokens batched for `SO_DEVMEM_DONTNEED`.
//!
//! The kernel takes at most 128 token ranges per call (6.12:
//! `MAX_DONTNEED_TOKENS`); contiguous tokens are merged into one range.

/// Most ranges the kernel accepts in one `SO_DEVMEM_DONTNEED`.
pub const MAX_RANGES: usize = 128;

/// `struct dmabuf_token`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TokenRange {
    /// First token.
    pub start: u32,
    /// Number of tokens.
    pub count: u32,
}

/// Tokens waiting to be returned.
#[derive(Default)]
pub struct TokenBatch {
    ranges: Vec<TokenRange>,
    pending: u64,
    limit: usize,
}

impl TokenBatch {
    /// A batch flushed when `limit` ranges (1..=128) are pending.
    pub fn new(limit: usize) -> Self {
        Self {
            ranges: Vec::with_capacity(MAX_RANGES),
            pending: 0,
            limit: limit.clamp(1, MAX_RANGES),
        }
    }

    /// Adds a token; returns true when the batch should be flushed.
    pub fn push(&mut self, token: u32) -> bool {
        self.pending += 1;
        if let Some(last) = self.ranges.last_mut() {
            if last.start.checked_add(last.count) == Some(token) {
                last.count += 1;
                return self.ranges.len() >= self.limit;
            }
        }
        self.ranges.push(TokenRange {
            start: token,
            count: 1,
        });
        self.ranges.len() >= self.limit
    }

    /// The pending ranges, at most `MAX_RANGES`.
    pub fn ranges(&self) -> &[TokenRange] {
        &self.ranges
    }

    /// Tokens pending.
    pub fn pending(&self) -> u64 {
        self.pending
    }

    /// Forgets the pending tokens (after returning them).
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.pending = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_tokens_merge() {
        let mut b = TokenBatch::new(128);
        for t in [5, 6, 7, 9, 10, 3] {
            assert!(!b.push(t));
        }
        assert_eq!(
            b.ranges(),
            &[
                TokenRange { start: 5, count: 3 },
                TokenRange { start: 9, count: 2 },
                TokenRange { start: 3, count: 1 }
            ]
        );
        assert_eq!(b.pending(), 6);
        b.clear();
        assert_eq!((b.ranges().len(), b.pending()), (0, 0));
    }

    #[test]
    fn flush_signalled_at_limit_and_never_above_128() {
        let mut b = TokenBatch::new(1000);
        let mut flushes = 0;
        for t in (0..1000u32).map(|i| i * 2) {
            if b.push(t) {
                assert_eq!(b.ranges().len(), MAX_RANGES);
                b.clear();
                flushes += 1;
            }
        }
        assert_eq!(flushes, 1000 / 128);
        let mut b = TokenBatch::new(4);
        assert!(!b.push(1) && !b.push(3) && !b.push(5));
        assert!(b.push(7));
    }

    #[test]
    fn token_range_layout_matches_uapi() {
        assert_eq!(std::mem::size_of::<TokenRange>(), 8);
    }
}
