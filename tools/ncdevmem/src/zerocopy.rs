//! `MSG_ZEROCOPY` completions: a zerocopy send's buffers belong to the kernel
//! until its completion arrives on the socket's error queue.
//!
//! Both devmem TX (buffers in a dma-buf) and zerocopy sends from host memory
//! count their sends here and read the completions back, with whether the
//! kernel copied instead (`SO_EE_CODE_ZEROCOPY_COPIED`).

use crate::cmsg::{self, DevmemMsg};
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Turns `SO_ZEROCOPY` on for socket `fd` (what `MSG_ZEROCOPY` needs).
pub fn enable(fd: RawFd) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: an int option on a socket the caller owns.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ZEROCOPY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("SO_ZEROCOPY: {e}")));
    }
    Ok(())
}

/// The zerocopy sends of one socket and their completions so far.
#[derive(Debug, Default)]
pub struct Completions {
    /// Zerocopy sends issued (the kernel numbers them from 0 per socket).
    pub sends: u64,
    /// Of those, completed (reported on the error queue).
    pub completed: u64,
    /// Completions that said the kernel copied the bytes instead.
    pub copied: u64,
}

impl Completions {
    /// Reads the completions waiting on `fd`'s error queue; with `wait`,
    /// first waits up to that long for at least one.
    pub fn reap(&mut self, fd: RawFd, wait: Option<Duration>) -> io::Result<()> {
        if let Some(w) = wait {
            let mut p = libc::pollfd {
                fd,
                events: 0,
                revents: 0,
            };
            // (POLLERR is always reported: events 0 waits for the error queue.)
            // SAFETY: one valid pollfd.
            let r = unsafe { libc::poll(&mut p, 1, w.as_millis().min(i32::MAX as u128) as i32) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
        loop {
            let mut ctrl = [0u64; 16];
            // SAFETY: an all-zero msghdr is valid; no data, only control.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_control = ctrl.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&ctrl);
            // SAFETY: `msg` points to a valid control buffer.
            let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.raw_os_error() {
                    Some(libc::EAGAIN) => Ok(()),
                    Some(libc::EINTR) => continue,
                    _ => Err(io::Error::new(
                        e.kind(),
                        format!("recvmsg(MSG_ERRQUEUE): {e}"),
                    )),
                };
            }
            if msg.msg_flags & libc::MSG_CTRUNC != 0 {
                return Err(io::Error::other("error queue: control data truncated"));
            }
            // SAFETY: the kernel filled `msg_controllen` bytes of `ctrl`.
            let bytes = unsafe {
                std::slice::from_raw_parts(ctrl.as_ptr().cast::<u8>(), msg.msg_controllen)
            };
            for m in cmsg::parse(bytes) {
                match m {
                    DevmemMsg::ZerocopyDone { lo, hi, copied } => self.done(lo, hi, copied),
                    DevmemMsg::SockErr { origin, errno } => {
                        return Err(io::Error::other(format!(
                            "error queue: origin {origin}, errno {errno}"
                        )))
                    }
                    _ => {}
                }
            }
        }
    }

    /// Counts the completion of sends `lo..=hi` (the kernel's numbers, which
    /// wrap at 2^32).
    fn done(&mut self, lo: u32, hi: u32, copied: bool) {
        let n = u64::from(hi.wrapping_sub(lo)) + 1;
        self.completed += n;
        if copied {
            self.copied += n;
        }
    }

    /// Waits until every send issued so far on `fd` has completed, up to `limit`.
    pub fn drain(&mut self, fd: RawFd, limit: Duration) -> io::Result<()> {
        let start = Instant::now();
        while self.completed < self.sends {
            let left = limit.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "{} of {} zerocopy sends not completed after {} s",
                        self.sends - self.completed,
                        self.sends,
                        limit.as_secs()
                    ),
                ));
            }
            self.reap(fd, Some(left.min(Duration::from_millis(200))))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_ranges_count_inclusively_and_across_the_wrap() {
        let mut c = Completions {
            sends: 10,
            ..Completions::default()
        };
        c.done(0, 0, false);
        c.done(1, 4, true);
        assert_eq!((c.completed, c.copied), (5, 4));
        c.done(u32::MAX - 1, 1, false);
        assert_eq!((c.completed, c.copied), (9, 4));
    }
}
