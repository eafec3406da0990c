//! The validation pattern of upstream ncdevmem for `-v N`: byte values 1, 2,
//! ..., N-1, then a byte that closes the period, then 1, 2, ... again. The
//! closing byte changed upstream: 6.12's ncdevmem expects 0 (what `yes
//! $(echo -e \\x01\\x02\\x03\\x04\\x05\\x06) | tr \\n \\0` makes for N = 7),
//! 7.2's expects `'\\n'` (what the same `yes` makes without `tr`).

use std::str::FromStr;

/// The byte that closes each period of the pattern.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PatternEnd {
    /// 0, as 6.12's upstream ncdevmem expects.
    Zero,
    /// `'\\n'`, as 7.2's upstream ncdevmem expects.
    Newline,
    /// Whatever the running kernel's own upstream ncdevmem expects.
    #[default]
    Auto,
}

impl PatternEnd {
    /// The closing byte, `Auto` resolved for a kernel release string such as
    /// "7.2.13": 6.12 and older close with 0, later kernels with `'\\n'`. Checked
    /// against the ncdevmem of 6.12.117 and 7.2.13; for a kernel between those,
    /// pass `--pattern-end` if its ncdevmem disagrees.
    pub fn byte_for(self, release: &str) -> u8 {
        match self {
            PatternEnd::Zero => 0,
            PatternEnd::Newline => b'\n',
            PatternEnd::Auto => {
                let mut parts = release.split(|c: char| !c.is_ascii_digit());
                let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
                let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
                if (major, minor) <= (6, 12) {
                    0
                } else {
                    b'\n'
                }
            }
        }
    }

    /// The closing byte for the running kernel.
    pub fn byte(self) -> u8 {
        self.byte_for(&kernel_release())
    }
}

impl FromStr for PatternEnd {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "zero" => Ok(PatternEnd::Zero),
            "newline" => Ok(PatternEnd::Newline),
            "auto" => Ok(PatternEnd::Auto),
            _ => Err(format!("--pattern-end: zero, newline or auto, not {s}")),
        }
    }
}

/// `uname -r`, or empty if it cannot be read.
fn kernel_release() -> String {
    // SAFETY: `utsname` is plain data; `uname` fills it or fails.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable `utsname`.
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    // SAFETY: `uname` NUL-terminates `release` within the array.
    unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// A running position in the pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    modulus: u8,
    end: u8,
    /// Position in the period, 0..modulus: byte `pos + 1`, the last one `end`.
    pos: u8,
}

impl Pattern {
    /// The pattern for `-v modulus` (2..=255) whose periods close with `end`,
    /// at its start.
    pub fn new(modulus: u8, end: u8) -> Option<Self> {
        (modulus >= 2).then_some(Self {
            modulus,
            end,
            pos: 0,
        })
    }

    /// The pattern's period in bytes: a fill of a whole number of periods
    /// leaves the pattern where it started.
    pub fn period(&self) -> usize {
        usize::from(self.modulus)
    }

    /// Fills `buf` with the next bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.current();
            self.advance();
        }
    }

    /// Checks `buf` against the next bytes; returns how many differ.
    pub fn check(&mut self, buf: &[u8]) -> u64 {
        let mut bad = 0;
        for &b in buf {
            if b != self.current() {
                bad += 1;
            }
            self.advance();
        }
        bad
    }

    /// The byte at the current position.
    fn current(&self) -> u8 {
        if self.pos + 1 == self.modulus {
            self.end
        } else {
            self.pos + 1
        }
    }

    fn advance(&mut self) {
        self.pos = if self.pos + 1 == self.modulus {
            0
        } else {
            self.pos + 1
        };
    }
}

/// A buffer of at most `len` bytes that a sender sends over and over: with
/// a pattern, its whole periods (the buffer ends where it starts, so every
/// send of it, or of a prefix after a whole one, continues the stream), and
/// without one, `len` zeros.
pub fn repeating_buffer(len: usize, pattern: Option<Pattern>) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    if let Some(mut p) = pattern {
        buf.truncate(len / p.period() * p.period());
        p.fill(&mut buf);
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_upstream_sequences() {
        let mut b = [0u8; 16];
        Pattern::new(7, 0).unwrap().fill(&mut b);
        assert_eq!(b, [1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2]);
        Pattern::new(7, b'\n').unwrap().fill(&mut b);
        assert_eq!(b, [1, 2, 3, 4, 5, 6, 10, 1, 2, 3, 4, 5, 6, 10, 1, 2]);
        // A closing byte that also occurs inside the period (7.2's -v 20).
        let mut b = [0u8; 22];
        Pattern::new(20, b'\n').unwrap().fill(&mut b);
        let want: Vec<u8> = (1..20).chain([10, 1, 2]).collect();
        assert_eq!(&b[..], &want[..]);
    }

    #[test]
    fn end_follows_the_kernel_release() {
        assert_eq!(PatternEnd::Auto.byte_for("6.12.117"), 0);
        assert_eq!(PatternEnd::Auto.byte_for("6.1.0-28-amd64"), 0);
        assert_eq!(PatternEnd::Auto.byte_for("7.2.13"), b'\n');
        assert_eq!(PatternEnd::Auto.byte_for("6.13-rc1"), b'\n');
        assert_eq!(PatternEnd::Zero.byte_for("7.2.13"), 0);
        assert_eq!(PatternEnd::Newline.byte_for("6.12.117"), b'\n');
        assert_eq!("newline".parse(), Ok(PatternEnd::Newline));
        assert!("nl".parse::<PatternEnd>().is_err());
    }

    #[test]
    fn check_spans_calls_and_counts_errors() {
        let mut src = Pattern::new(7, 0).unwrap();
        let mut data = vec![0u8; 1000];
        src.fill(&mut data);
        let mut chk = Pattern::new(7, 0).unwrap();
        assert_eq!(chk.check(&data[..333]), 0);
        data[500] ^= 0xff;
        data[900] = 42;
        assert_eq!(chk.check(&data[333..]), 2);
        assert!(Pattern::new(1, 0).is_none());
    }

    #[test]
    fn whole_periods_return_to_the_start() {
        let mut p = Pattern::new(7, 0).unwrap();
        let mut b = vec![0u8; 7 * 100];
        p.fill(&mut b);
        assert_eq!(p, Pattern::new(7, 0).unwrap());
        p.fill(&mut b[..6]);
        assert_ne!(p, Pattern::new(7, 0).unwrap());
    }

    #[test]
    fn a_repeating_buffer_is_whole_periods_or_zeros() {
        let buf = repeating_buffer(100, Pattern::new(7, 0));
        assert_eq!(buf.len(), 98);
        // Sent three times over, it is the stream's first 294 bytes.
        let stream: Vec<u8> = buf.iter().chain(&buf).chain(&buf).copied().collect();
        assert_eq!(Pattern::new(7, 0).unwrap().check(&stream), 0);
        assert_eq!(repeating_buffer(100, None), vec![0u8; 100]);
        // Shorter than a period: nothing of the pattern fits.
        assert!(repeating_buffer(6, Pattern::new(7, 0)).is_empty());
    }
}
