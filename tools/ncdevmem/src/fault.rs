//! Fault injection for tests: the kernel's per-thread `fail-nth`
//! (Documentation/fault-injection/fault-injection.rst), which makes the Nth
//! fault-injection point this thread passes fail (an allocation, mostly).
//!
//! The file is opened before arming, so opening it costs no fault site, and
//! read back without allocating: "0" means the fault was injected, N > 0 that
//! N more sites were needed.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// This thread's `fail-nth`, disarmed on drop.
pub struct FailNth {
    file: File,
    armed: u32,
}

/// What an armed `fail-nth` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Injection {
    /// The Nth site failed.
    Injected,
    /// Fewer than N sites were passed: `passed` of them.
    NotReached { passed: u32 },
}

impl FailNth {
    /// Makes the `n`th fault site this thread passes from now on fail (n >= 1).
    pub fn arm(n: u32) -> io::Result<Self> {
        if n == 0 {
            return Err(io::Error::other("--fail-nth must be at least 1"));
        }
        let file = File::options()
            .read(true)
            .write(true)
            .open("/proc/thread-self/fail-nth")
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("/proc/thread-self/fail-nth: {e} (CONFIG_FAULT_INJECTION?)"),
                )
            })?;
        file.write_at(n.to_string().as_bytes(), 0)?;
        Ok(Self { file, armed: n })
    }

    /// Disarms and says whether the fault was injected.
    pub fn disarm(&self) -> io::Result<Injection> {
        let mut buf = [0u8; 16];
        let n = self.file.read_at(&mut buf, 0)?;
        let left: u32 = std::str::from_utf8(&buf[..n])
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| io::Error::other("unreadable fail-nth"))?;
        self.file.write_at(b"0", 0)?;
        Ok(classify(self.armed, left))
    }
}

impl Drop for FailNth {
    fn drop(&mut self) {
        let _ = self.file.write_at(b"0", 0);
    }
}

/// What a counter armed with `armed` and reading `left` afterwards means.
pub fn classify(armed: u32, left: u32) -> Injection {
    if left == 0 {
        Injection::Injected
    } else {
        Injection::NotReached {
            passed: armed.saturating_sub(left),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_left_is_an_injection() {
        assert_eq!(classify(5, 0), Injection::Injected);
    }

    #[test]
    fn left_over_counts_the_sites_passed() {
        assert_eq!(classify(1000, 880), Injection::NotReached { passed: 120 });
        assert_eq!(classify(3, 3), Injection::NotReached { passed: 0 });
    }
}
