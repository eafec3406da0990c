//! Devmem TX (Linux 7.2+): sending TCP payload straight from a dma-buf.
//!
//! The dma-buf is bound to the interface with `bind-tx`; the socket is bound
//! to the interface (`SO_BINDTODEVICE`) and uses `SO_ZEROCOPY`; each
//! `sendmsg(MSG_ZEROCOPY)` names the binding in an `SCM_DEVMEM_DMABUF` control
//! message and its iovecs carry offsets into the dma-buf instead of addresses.
//! The NIC reads the payload by DMA; a send's buffers are the sender's again
//! once its completion arrives on the socket's error queue.

use crate::cmsg::SCM_DEVMEM_DMABUF;
use crate::netdev::{bind_tx, Binding};
use crate::zerocopy::{self, Completions};
use socket2::Socket;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Most iovecs one `sendmsg` carries (upstream ncdevmem's `MAX_IOV`).
pub const MAX_IOV: usize = 1024;

/// The iovecs of one send of `len` bytes at dma-buf offset `offset`, cut into
/// `chunk`-byte pieces (0: one piece), at most [`MAX_IOV`] of them: returns
/// the (offset, length) pieces, which may cover less than `len`.
pub fn pieces(offset: usize, len: usize, chunk: usize) -> Vec<(usize, usize)> {
    let chunk = if chunk == 0 { len.max(1) } else { chunk };
    let mut out = Vec::new();
    let mut done = 0;
    while done < len && out.len() < MAX_IOV {
        let n = chunk.min(len - done);
        out.push((offset + done, n));
        done += n;
    }
    out
}

/// A connected socket sending from a dma-buf bound for TX, and the state of
/// its zerocopy completions.
pub struct DevmemSender {
    sock: Socket,
    binding: Binding,
    /// Sends issued and completed.
    pub completions: Completions,
}

impl DevmemSender {
    /// Binds `dmabuf_fd` for TX on `ifindex` (`iface`), then sets up `sock`
    /// (bound to the interface, zerocopy on) for [`DevmemSender::send`]; the
    /// caller connects it.
    pub fn new(sock: Socket, iface: &str, ifindex: u32, dmabuf_fd: i32) -> io::Result<Self> {
        sock.bind_device(Some(iface.as_bytes()))
            .map_err(|e| io::Error::new(e.kind(), format!("SO_BINDTODEVICE {iface}: {e}")))?;
        let binding = bind_tx(ifindex, dmabuf_fd as u32)?
            .map_err(|e| io::Error::other(format!("bind-tx on {iface}: {e}")))?;
        zerocopy::enable(sock.as_raw_fd())?;
        Ok(Self {
            sock,
            binding,
            completions: Completions::default(),
        })
    }

    /// The socket (to connect, shut down, read the peer's close).
    pub fn socket(&self) -> &Socket {
        &self.sock
    }

    /// The binding id sends name in `SCM_DEVMEM_DMABUF`.
    pub fn dmabuf_id(&self) -> u32 {
        self.binding.id
    }

    /// Sends `len` bytes at offset `offset` of the dma-buf, in `chunk`-byte
    /// iovecs (0: one); returns the bytes the kernel took (at least 1). Waits
    /// for completions when the kernel has no room for another zerocopy send.
    pub fn send(&mut self, offset: usize, len: usize, chunk: usize) -> io::Result<usize> {
        let parts = pieces(offset, len, chunk);
        let mut iov: Vec<libc::iovec> = parts
            .iter()
            .map(|&(off, n)| libc::iovec {
                // The kernel reads the iovec base as an offset into the dma-buf.
                iov_base: off as *mut libc::c_void,
                iov_len: n,
            })
            .collect();
        let mut ctrl = [0u64; 4];
        let ctrl_len = cmsg_space(4);
        loop {
            // SAFETY: an all-zero msghdr is valid; filled in below.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_iov = iov.as_mut_ptr();
            msg.msg_iovlen = iov.len();
            msg.msg_control = ctrl.as_mut_ptr().cast();
            msg.msg_controllen = ctrl_len;
            // SAFETY: `msg` has room for one cmsg header and a u32 (checked by
            // `cmsg_space`); CMSG_FIRSTHDR points into `ctrl`.
            unsafe {
                let c = libc::CMSG_FIRSTHDR(&msg);
                (*c).cmsg_level = libc::SOL_SOCKET;
                (*c).cmsg_type = SCM_DEVMEM_DMABUF;
                (*c).cmsg_len = libc::CMSG_LEN(4) as _;
                libc::CMSG_DATA(c)
                    .cast::<u32>()
                    .write_unaligned(self.binding.id);
            }
            // SAFETY: `msg` points to valid iovecs (offsets, not dereferenced by
            // us) and control data for the call.
            let n = unsafe { libc::sendmsg(self.sock.as_raw_fd(), &msg, libc::MSG_ZEROCOPY) };
            if n > 0 {
                self.completions.sends += 1;
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                // Every zerocopy send holds socket option memory until it
                // completes: reap, then try again.
                Some(libc::ENOBUFS) => self.reap(Some(Duration::from_secs(10)))?,
                Some(libc::EINTR) => {}
                _ => return Err(io::Error::new(e.kind(), format!("sendmsg: {e}"))),
            }
        }
    }

    /// Reads the completions waiting on the error queue; with `wait`, first
    /// waits up to that long for at least one.
    pub fn reap(&mut self, wait: Option<Duration>) -> io::Result<()> {
        self.completions.reap(self.sock.as_raw_fd(), wait)
    }

    /// Waits until every send issued so far has completed, up to `limit`.
    pub fn drain(&mut self, limit: Duration) -> io::Result<()> {
        self.completions.drain(self.sock.as_raw_fd(), limit)
    }
}

/// `CMSG_SPACE(len)`.
fn cmsg_space(len: u32) -> usize {
    // SAFETY: pure arithmetic.
    unsafe { libc::CMSG_SPACE(len) as usize }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cut_at_chunk_and_iov_limit() {
        assert_eq!(pieces(100, 12, 0), vec![(100, 12)]);
        assert_eq!(pieces(0, 12, 5), vec![(0, 5), (5, 5), (10, 2)]);
        assert_eq!(pieces(7, 3, 3), vec![(7, 3)]);
        let many = pieces(0, 10 * MAX_IOV, 3);
        assert_eq!(many.len(), MAX_IOV);
        assert_eq!(many.last(), Some(&(3 * (MAX_IOV - 1), 3)));
        assert!(pieces(0, 0, 4).is_empty());
    }
}
