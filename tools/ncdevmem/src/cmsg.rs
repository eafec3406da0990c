//! Control messages of a devmem `recvmsg`, and of the error queue that
//! reports devmem TX (`MSG_ZEROCOPY`) completions.

/// `SCM_DEVMEM_LINEAR`: data copied into the iovec (headers or fallback).
pub const SCM_DEVMEM_LINEAR: i32 = 78;
/// `SCM_DEVMEM_DMABUF`: a frag left in the dma-buf.
pub const SCM_DEVMEM_DMABUF: i32 = 79;
/// `MSG_SOCK_DEVMEM`.
pub const MSG_SOCK_DEVMEM: i32 = 0x0200_0000;
/// `SO_DEVMEM_DONTNEED`.
pub const SO_DEVMEM_DONTNEED: i32 = 80;

/// What one devmem control message says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevmemMsg {
    /// `frag_size` bytes at `offset` of dma-buf `dmabuf_id`, returned with `token`.
    Dmabuf {
        offset: u64,
        size: u32,
        token: u32,
        dmabuf_id: u32,
    },
    /// `size` bytes were copied into the iovec, in stream order.
    Linear { size: u32 },
    /// Zerocopy sends `lo..=hi` (counted per socket from 0) completed: their
    /// buffers are the sender's again. `copied`: the kernel copied instead.
    ZerocopyDone { lo: u32, hi: u32, copied: bool },
    /// An error-queue report of another origin, or with an errno.
    SockErr { origin: u8, errno: u32 },
    /// Some other control message.
    Other { level: i32, kind: i32 },
}

/// `IP_RECVERR` and `IPV6_RECVERR`: a `struct sock_extended_err`.
const IP_RECVERR: i32 = 11;
const IPV6_RECVERR: i32 = 25;
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

const HDR: usize = std::mem::size_of::<libc::cmsghdr>();
const ALIGN: usize = std::mem::size_of::<usize>();

fn align(n: usize) -> usize {
    (n + ALIGN - 1) & !(ALIGN - 1)
}

/// Parses the control buffer `buf` (its `msg_controllen` bytes) in order.
///
/// Malformed trailing bytes (a length that runs past the buffer) end the parse.
pub fn parse(buf: &[u8]) -> Vec<DevmemMsg> {
    let mut out = Vec::new();
    let mut off = 0;
    while off + HDR <= buf.len() {
        let len = usize::from_ne_bytes(buf[off..off + 8].try_into().unwrap());
        let level = i32::from_ne_bytes(buf[off + 8..off + 12].try_into().unwrap());
        let kind = i32::from_ne_bytes(buf[off + 12..off + 16].try_into().unwrap());
        if len < HDR || off + len > buf.len() {
            break;
        }
        let data = &buf[off + HDR..off + len];
        let msg = match (level, kind) {
            (libc::SOL_SOCKET, SCM_DEVMEM_DMABUF | SCM_DEVMEM_LINEAR) if data.len() >= 24 => {
                let offset = u64::from_ne_bytes(data[0..8].try_into().unwrap());
                let size = u32::from_ne_bytes(data[8..12].try_into().unwrap());
                let token = u32::from_ne_bytes(data[12..16].try_into().unwrap());
                let dmabuf_id = u32::from_ne_bytes(data[16..20].try_into().unwrap());
                if kind == SCM_DEVMEM_DMABUF {
                    DevmemMsg::Dmabuf {
                        offset,
                        size,
                        token,
                        dmabuf_id,
                    }
                } else {
                    DevmemMsg::Linear { size }
                }
            }
            (libc::SOL_IP, IP_RECVERR) | (libc::SOL_IPV6, IPV6_RECVERR) if data.len() >= 16 => {
                // struct sock_extended_err: errno, origin, type, code, pad, info, data.
                let errno = u32::from_ne_bytes(data[0..4].try_into().unwrap());
                let origin = data[4];
                let code = data[6];
                let lo = u32::from_ne_bytes(data[8..12].try_into().unwrap());
                let hi = u32::from_ne_bytes(data[12..16].try_into().unwrap());
                if origin == SO_EE_ORIGIN_ZEROCOPY && errno == 0 {
                    DevmemMsg::ZerocopyDone {
                        lo,
                        hi,
                        copied: code & SO_EE_CODE_ZEROCOPY_COPIED != 0,
                    }
                } else {
                    DevmemMsg::SockErr { origin, errno }
                }
            }
            _ => DevmemMsg::Other { level, kind },
        };
        out.push(msg);
        off += align(len);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmsg(level: i32, kind: i32, data: &[u8]) -> Vec<u8> {
        let len = HDR + data.len();
        let mut v = Vec::new();
        v.extend_from_slice(&len.to_ne_bytes());
        v.extend_from_slice(&level.to_ne_bytes());
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(data);
        v.resize(align(len), 0);
        v
    }

    fn dmabuf_cmsg(offset: u64, size: u32, token: u32, id: u32) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&offset.to_ne_bytes());
        d.extend_from_slice(&size.to_ne_bytes());
        d.extend_from_slice(&token.to_ne_bytes());
        d.extend_from_slice(&id.to_ne_bytes());
        d.extend_from_slice(&0u32.to_ne_bytes());
        d
    }

    #[test]
    fn parses_dmabuf_and_linear_in_order() {
        let mut buf = cmsg(
            libc::SOL_SOCKET,
            SCM_DEVMEM_LINEAR,
            &dmabuf_cmsg(0, 66, 0, 0),
        );
        buf.extend(cmsg(
            libc::SOL_SOCKET,
            SCM_DEVMEM_DMABUF,
            &dmabuf_cmsg(8192, 4096, 17, 3),
        ));
        buf.extend(cmsg(libc::SOL_IP, 2, &[1, 2, 3, 4]));
        assert_eq!(
            parse(&buf),
            vec![
                DevmemMsg::Linear { size: 66 },
                DevmemMsg::Dmabuf {
                    offset: 8192,
                    size: 4096,
                    token: 17,
                    dmabuf_id: 3
                },
                DevmemMsg::Other {
                    level: libc::SOL_IP,
                    kind: 2
                },
            ]
        );
    }

    fn ee(errno: u32, origin: u8, code: u8, lo: u32, hi: u32) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&errno.to_ne_bytes());
        d.extend_from_slice(&[origin, 0, code, 0]);
        d.extend_from_slice(&lo.to_ne_bytes());
        d.extend_from_slice(&hi.to_ne_bytes());
        d
    }

    #[test]
    fn parses_zerocopy_completions() {
        let mut buf = cmsg(libc::SOL_IP, IP_RECVERR, &ee(0, 5, 0, 3, 9));
        buf.extend(cmsg(libc::SOL_IPV6, IPV6_RECVERR, &ee(0, 5, 1, 10, 10)));
        buf.extend(cmsg(libc::SOL_IP, IP_RECVERR, &ee(0, 2, 0, 0, 0)));
        buf.extend(cmsg(libc::SOL_IP, IP_RECVERR, &ee(105, 5, 0, 0, 0)));
        assert_eq!(
            parse(&buf),
            vec![
                DevmemMsg::ZerocopyDone {
                    lo: 3,
                    hi: 9,
                    copied: false
                },
                DevmemMsg::ZerocopyDone {
                    lo: 10,
                    hi: 10,
                    copied: true
                },
                DevmemMsg::SockErr {
                    origin: 2,
                    errno: 0
                },
                DevmemMsg::SockErr {
                    origin: 5,
                    errno: 105
                },
            ]
        );
    }

    #[test]
    fn truncated_buffers_stop_cleanly() {
        let buf = cmsg(
            libc::SOL_SOCKET,
            SCM_DEVMEM_DMABUF,
            &dmabuf_cmsg(1, 2, 3, 4),
        );
        for cut in 0..buf.len() {
            let msgs = parse(&buf[..cut]);
            assert!(msgs.is_empty(), "cut {cut}: {msgs:?}");
        }
        // A lying length.
        let mut bad = buf.clone();
        bad[0..8].copy_from_slice(&1000usize.to_ne_bytes());
        assert!(parse(&bad).is_empty());
    }
}
