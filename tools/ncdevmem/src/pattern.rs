//! The validation pattern of upstream ncdevmem: byte values 1, 2, ..., N-1, 0,
//! 1, 2, ... for `-v N`; what `yes $(echo -e \\x01\\x02\\x03\\x04\\x05\\x06) |
//! tr \\n \\0` makes for N = 7.

/// A running position in the pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    modulus: u8,
    next: u8,
}

impl Pattern {
    /// The pattern for `-v modulus` (2..=255), at its start.
    pub fn new(modulus: u8) -> Option<Self> {
        (modulus >= 2).then_some(Self { modulus, next: 1 })
    }

    /// The pattern's period in bytes: a fill of a whole number of periods
    /// leaves the pattern where it started.
    pub fn period(&self) -> usize {
        usize::from(self.modulus)
    }

    /// Fills `buf` with the next bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next;
            self.advance();
        }
    }

    /// Checks `buf` against the next bytes; returns how many differ.
    pub fn check(&mut self, buf: &[u8]) -> u64 {
        let mut bad = 0;
        for &b in buf {
            if b != self.next {
                bad += 1;
            }
            self.advance();
        }
        bad
    }

    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.modulus {
            self.next = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_upstream_sequence() {
        let mut p = Pattern::new(7).unwrap();
        let mut b = [0u8; 16];
        p.fill(&mut b);
        assert_eq!(b, [1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2]);
    }

    #[test]
    fn check_spans_calls_and_counts_errors() {
        let mut src = Pattern::new(7).unwrap();
        let mut data = vec![0u8; 1000];
        src.fill(&mut data);
        let mut chk = Pattern::new(7).unwrap();
        assert_eq!(chk.check(&data[..333]), 0);
        data[500] ^= 0xff;
        data[900] = 42;
        assert_eq!(chk.check(&data[333..]), 2);
        assert!(Pattern::new(1).is_none());
    }

    #[test]
    fn whole_periods_return_to_the_start() {
        let mut p = Pattern::new(7).unwrap();
        let mut b = vec![0u8; 7 * 100];
        p.fill(&mut b);
        assert_eq!(p, Pattern::new(7).unwrap());
        p.fill(&mut b[..6]);
        assert_ne!(p, Pattern::new(7).unwrap());
    }
}
