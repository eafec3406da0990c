//! `SO_DEVMEM_DONTNEED` misuse, checked against what the kernel promises
//! (6.12 `sock_devmem_dontneed`): bad lengths (empty, not whole entries, over
//! 128 entries) and pointers are refused,
//! unknown, out-of-range and already returned tokens free nothing, a token
//! named twice is freed once, and one call frees at most 1024 tokens.

use crate::cmsg::SO_DEVMEM_DONTNEED;
use crate::tokens::{TokenRange, MAX_RANGES, MAX_TOKENS};
use std::io;

/// Token ids the kernel never hands out: it allocates them from 0 up, below 2^31.
const NEVER_ISSUED: u32 = 0x7fff_0000;

/// One raw `SO_DEVMEM_DONTNEED`: `len` bytes at `ptr`.
fn dontneed_raw(fd: i32, ptr: *const u8, len: usize) -> io::Result<i32> {
    // SAFETY: the kernel reads at most `len` bytes at `ptr` and checks the
    // pointer itself (a bad one is EFAULT, which is one of the checks).
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_DEVMEM_DONTNEED,
            ptr.cast(),
            len as u32,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn dontneed(fd: i32, ranges: &[TokenRange]) -> io::Result<i32> {
    dontneed_raw(fd, ranges.as_ptr().cast(), std::mem::size_of_val(ranges))
}

fn range(start: u32, count: u32) -> TokenRange {
    TokenRange { start, count }
}

fn expect_freed(what: &str, got: io::Result<i32>, want: i32) -> Result<(), String> {
    match got {
        Ok(n) if n == want => Ok(()),
        Ok(n) => Err(format!("{what}: freed {n}, want {want}")),
        Err(e) => Err(format!("{what}: {e}, want {want} freed")),
    }
}

fn expect_errno(what: &str, got: io::Result<i32>, errno: i32) -> Result<(), String> {
    match got {
        Err(e) if e.raw_os_error() == Some(errno) => Ok(()),
        Err(e) => Err(format!("{what}: {e}, want errno {errno}")),
        Ok(n) => Err(format!("{what}: accepted (freed {n}), want errno {errno}")),
    }
}

/// Runs the checks on `fd` with two tokens the caller holds, `t0` and `t1`.
/// Afterwards `t0` has been returned (exactly once) and `t1` is still held.
/// Returns the number of checks passed, or the first that failed.
pub fn run(fd: i32, t0: u32, t1: u32) -> Result<u32, String> {
    let mut passed = 0;
    let mut check = |r: Result<(), String>| r.map(|()| passed += 1);
    // Lengths: not a whole number of entries, more entries than allowed.
    let one = [range(NEVER_ISSUED, 1), range(NEVER_ISSUED, 1)];
    check(expect_errno(
        "12-byte list",
        dontneed_raw(fd, one.as_ptr().cast(), 12),
        libc::EINVAL,
    ))?;
    let oversized = vec![range(t1, 1); MAX_RANGES + 1];
    check(expect_errno(
        "129-entry list",
        dontneed(fd, &oversized),
        libc::EINVAL,
    ))?;
    check(expect_errno(
        "NULL list",
        dontneed_raw(fd, std::ptr::null(), 8),
        libc::EFAULT,
    ))?;
    check(expect_errno(
        "empty list",
        dontneed_raw(fd, one.as_ptr().cast(), 0),
        libc::EINVAL,
    ))?;
    // Tokens that were never issued, inside and beyond the kernel's id space.
    check(expect_freed(
        "never-issued tokens",
        dontneed(fd, &[range(NEVER_ISSUED, 64)]),
        0,
    ))?;
    check(expect_freed(
        "out-of-range tokens",
        dontneed(fd, &[range(0xffff_ff00, 255)]),
        0,
    ))?;
    // A list naming 1024 unknown tokens before t1: the per-call limit is
    // reached first, so t1 must survive.
    check(expect_freed(
        "frag limit before a real token",
        dontneed(fd, &[range(NEVER_ISSUED, MAX_TOKENS), range(t1, 1)]),
        0,
    ))?;
    // t0 twice in one list: freed once. Then stale.
    check(expect_freed(
        "duplicate token",
        dontneed(fd, &[range(t0, 1), range(t0, 1)]),
        1,
    ))?;
    check(expect_freed(
        "token already returned",
        dontneed(fd, &[range(t0, 1)]),
        0,
    ))?;
    // t1 was not touched by any of the above: still ours (taken back by the caller).
    Ok(passed)
}
