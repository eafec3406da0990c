//! SIGINT/SIGTERM: set a flag instead of dying, so the server loop can break
//! out and the NIC settings are restored by the normal drops.
//!
//! The handler is installed without `SA_RESTART`, so a blocking `accept` or
//! `recvmsg` returns `EINTR` and the caller checks [`stop_requested`]. It is
//! also installed with `SA_RESETHAND`: a second Ctrl-C kills the process the
//! usual way (without restoring).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe work: two atomic stores.
    SIGNAL.store(sig, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM.
pub fn install() -> io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: all-zeroes is a valid `sigaction` to fill in.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // No SA_RESTART: blocking calls return EINTR.
        sa.sa_flags = libc::SA_RESETHAND;
        // SAFETY: `sa.sa_mask` is a valid set to empty.
        unsafe { libc::sigemptyset(&mut sa.sa_mask) };
        // SAFETY: a valid action; the handler only stores to atomics.
        if unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Whether SIGINT or SIGTERM arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The signal that arrived, if any.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigterm_sets_the_flag_and_interrupts_a_blocking_read() {
        install().unwrap();
        let mut fds = [0; 2];
        // SAFETY: a valid array for two fds.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: pthread_self is always safe to call.
        let me = unsafe { libc::pthread_self() };
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            // SAFETY: `me` is the test thread, blocked in read below.
            unsafe { libc::pthread_kill(me, libc::SIGTERM) };
        });
        let mut b = [0u8; 1];
        // SAFETY: a valid buffer of 1 byte.
        let n = unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) };
        let e = io::Error::last_os_error();
        t.join().unwrap();
        assert_eq!(n, -1);
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
        assert!(stop_requested());
        assert_eq!(signal(), Some(libc::SIGTERM));
        // SA_RESETHAND: the disposition is back to the default.
        // SAFETY: querying the current action into a zeroed struct.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        unsafe { libc::sigaction(libc::SIGTERM, std::ptr::null(), &mut old) };
        assert_eq!(old.sa_sigaction, libc::SIG_DFL);
        // SAFETY: closing our pipe.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
