//! `--hello N`: what devmem applications such as kperf do before devmem
//! receive: the client sends a small control message on the data connection,
//! and the server reads it with plain `recv(MSG_PEEK | MSG_WAITALL)` then
//! `recv`, after binding its queue. Whether that works depends on the NIC:
//! one that splits even a small segment's payload into the dma-buf makes
//! the read fail with `EFAULT` (Documentation/personalities.rst).

use std::io;
use std::os::fd::RawFd;

/// Most hello bytes (a control message, not data).
pub const HELLO_MAX: usize = 1024;

/// The hello's bytes: a recognisable text, cut to `n`.
pub fn bytes(n: usize) -> Vec<u8> {
    b"ncdevmem-rs hello\n"
        .iter()
        .copied()
        .cycle()
        .take(n)
        .collect()
}

/// One `recv` of `buf.len()` bytes with `flags`, retried on `EINTR`.
fn recv(fd: RawFd, buf: &mut [u8], flags: i32) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is valid for writes of its length for the call.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Reads an `n`-byte hello from `fd` as such applications do: a peek that
/// waits for all of it, then the read; checks its bytes.
pub fn receive(fd: RawFd, n: usize) -> io::Result<()> {
    let mut buf = vec![0u8; n];
    let explain = |step: &str, e: io::Error| {
        let why = if e.raw_os_error() == Some(libc::EFAULT) {
            ": the NIC put the hello's payload in the dma-buf (it splits small segments)"
        } else {
            ""
        };
        io::Error::new(
            e.kind(),
            format!("hello: plain {step} of {n} bytes: {e}{why}"),
        )
    };
    let peeked = recv(fd, &mut buf, libc::MSG_PEEK | libc::MSG_WAITALL)
        .map_err(|e| explain("recv(MSG_PEEK|MSG_WAITALL)", e))?;
    if peeked != n {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("hello: peeked {peeked} of {n} bytes"),
        ));
    }
    let got = recv(fd, &mut buf, libc::MSG_WAITALL).map_err(|e| explain("recv", e))?;
    if got != n || buf != bytes(n) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("hello: read {got} of {n} bytes, or not the hello"),
        ));
    }
    eprintln!("hello: {n} bytes read with plain recv");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_is_cut_to_length_and_repeats() {
        assert_eq!(bytes(0), b"");
        assert_eq!(bytes(5), b"ncdev");
        let b = bytes(40);
        assert_eq!(b.len(), 40);
        assert_eq!(&b[18..23], b"ncdev");
    }

    #[test]
    fn hello_round_trips_over_a_socket_pair() {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        assert_eq!(
            unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) },
            0
        );
        let h = bytes(24);
        // SAFETY: `h` is valid for reads of its length.
        let n = unsafe { libc::send(fds[0], h.as_ptr().cast(), h.len(), 0) };
        assert_eq!(n, 24);
        receive(fds[1], 24).unwrap();
        // A different message is refused.
        // SAFETY: as above.
        let n = unsafe { libc::send(fds[0], b"xxxx".as_ptr().cast(), 4, 0) };
        assert_eq!(n, 4);
        assert_eq!(
            receive(fds[1], 4).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        // SAFETY: closing the pair this test opened.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
