//! Returning devmem buffers: tokens batched for `SO_DEVMEM_DONTNEED`.
//!
//! The kernel takes at most 128 token ranges per call (6.12:
//! `MAX_DONTNEED_TOKENS`) and frees at most 1024 tokens per call
//! (`MAX_DONTNEED_FRAGS`), silently ignoring the rest; contiguous tokens are
//! merged into one range, and calls are cut to respect both limits.

/// Most ranges the kernel accepts in one `SO_DEVMEM_DONTNEED`.
pub const MAX_RANGES: usize = 128;
/// Most tokens the kernel frees in one `SO_DEVMEM_DONTNEED`.
pub const MAX_TOKENS: u32 = 1024;

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

    /// Adds a token; returns true when the batch should be flushed (as many
    /// ranges as the limit, or as many tokens as one call frees).
    pub fn push(&mut self, token: u32) -> bool {
        self.pending += 1;
        match self.ranges.last_mut() {
            Some(last) if last.start.checked_add(last.count) == Some(token) => last.count += 1,
            _ => self.ranges.push(TokenRange {
                start: token,
                count: 1,
            }),
        }
        self.ranges.len() >= self.limit || self.pending >= u64::from(MAX_TOKENS)
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

/// Cuts `ranges` into `SO_DEVMEM_DONTNEED` calls of at most `MAX_RANGES`
/// ranges and `MAX_TOKENS` tokens each, splitting ranges where needed.
pub fn calls(ranges: &[TokenRange]) -> Vec<Vec<TokenRange>> {
    let mut out: Vec<Vec<TokenRange>> = Vec::new();
    let mut cur: Vec<TokenRange> = Vec::new();
    let mut tokens = 0u32;
    for r in ranges {
        let mut r = *r;
        while r.count > 0 {
            if cur.len() == MAX_RANGES || tokens == MAX_TOKENS {
                out.push(std::mem::take(&mut cur));
                tokens = 0;
            }
            let n = r.count.min(MAX_TOKENS - tokens);
            cur.push(TokenRange {
                start: r.start,
                count: n,
            });
            tokens += n;
            r.start += n;
            r.count -= n;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
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
    fn batches_stop_at_the_kernels_token_limit() {
        // Contiguous tokens make one range: the token count must end the batch.
        let mut b = TokenBatch::new(128);
        let mut flushed_at = None;
        for t in 0..5000u32 {
            if b.push(t) {
                flushed_at = Some(t);
                break;
            }
        }
        assert_eq!(flushed_at, Some(MAX_TOKENS - 1));
        assert_eq!(
            b.ranges(),
            &[TokenRange {
                start: 0,
                count: MAX_TOKENS
            }]
        );
    }

    #[test]
    fn calls_respect_both_limits_and_cover_every_token() {
        let ranges = vec![
            TokenRange {
                start: 0,
                count: 3000,
            },
            TokenRange {
                start: 5000,
                count: 1,
            },
            TokenRange {
                start: 7000,
                count: 10,
            },
        ];
        let mut many: Vec<TokenRange> = (0..300)
            .map(|i| TokenRange {
                start: 10_000 + 2 * i,
                count: 1,
            })
            .collect();
        many.extend(ranges);
        let cs = calls(&many);
        let mut seen = Vec::new();
        for c in &cs {
            assert!(c.len() <= MAX_RANGES);
            assert!(c.iter().map(|r| r.count).sum::<u32>() <= MAX_TOKENS);
            for r in c {
                seen.extend(r.start..r.start + r.count);
            }
        }
        let mut want: Vec<u32> = many
            .iter()
            .flat_map(|r| r.start..r.start + r.count)
            .collect();
        seen.sort_unstable();
        want.sort_unstable();
        assert_eq!(seen, want);
        assert!(calls(&[]).is_empty());
    }

    #[test]
    fn token_range_layout_matches_uapi() {
        assert_eq!(std::mem::size_of::<TokenRange>(), 8);
    }
}
