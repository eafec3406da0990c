//! What the connection went through, from `getsockopt(TCP_INFO)` on the
//! data socket: the retransmit, loss, reordering, out-of-order and DSACK
//! counters of `struct tcp_info` that the summaries report.
//!
//! The kernel copies as much of its `struct tcp_info` as fits the buffer
//! and says how much it copied; an older kernel's struct is shorter (no
//! `tcpi_rcv_ooopack` before Linux 5.4), and a field past the returned
//! length is absent: `n/a` in the summary line, `null` in its JSON.

use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::RawFd;

/// The counters the summaries report, each `None` when the kernel's struct
/// was too short to hold it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// `tcpi_total_retrans`: segments retransmitted over the connection's life.
    pub total_retrans: Option<u32>,
    /// `tcpi_retrans`: segments retransmitted and not yet acknowledged.
    pub retrans: Option<u32>,
    /// `tcpi_lost`: segments the sender counts as lost now.
    pub lost: Option<u32>,
    /// `tcpi_reordering`: the sender's reordering degree (3 unless it saw more).
    pub reordering: Option<u32>,
    /// `tcpi_rcv_ooopack`: out-of-order packets received (Linux 5.4+).
    pub rcv_ooopack: Option<u32>,
    /// `tcpi_dsack_dups`: duplicate segments the peer reported by DSACK.
    pub dsack_dups: Option<u32>,
}

// Where each counter lies in `struct tcp_info` (libc's copy of the uapi's,
// checked against the C header in the tests).
const TOTAL_RETRANS: usize = offset_of!(libc::tcp_info, tcpi_total_retrans);
const RETRANS: usize = offset_of!(libc::tcp_info, tcpi_retrans);
const LOST: usize = offset_of!(libc::tcp_info, tcpi_lost);
const REORDERING: usize = offset_of!(libc::tcp_info, tcpi_reordering);
const RCV_OOOPACK: usize = offset_of!(libc::tcp_info, tcpi_rcv_ooopack);
const DSACK_DUPS: usize = offset_of!(libc::tcp_info, tcpi_dsack_dups);

/// The `__u32` at `off` in `info`, if `info` holds all four of its bytes.
fn u32_at(info: &[u8], off: usize) -> Option<u32> {
    let b = info.get(off..off + 4)?;
    Some(u32::from_ne_bytes(b.try_into().ok()?))
}

impl TcpInfo {
    /// The counters in `info`, the bytes of a `struct tcp_info` as long as
    /// the kernel returned it.
    pub fn parse(info: &[u8]) -> Self {
        TcpInfo {
            total_retrans: u32_at(info, TOTAL_RETRANS),
            retrans: u32_at(info, RETRANS),
            lost: u32_at(info, LOST),
            reordering: u32_at(info, REORDERING),
            rcv_ooopack: u32_at(info, RCV_OOOPACK),
            dsack_dups: u32_at(info, DSACK_DUPS),
        }
    }

    /// The counters of the TCP socket `fd`, from `getsockopt(TCP_INFO)`.
    pub fn of(fd: RawFd) -> io::Result<Self> {
        // Room for a longer struct than libc knows: the kernel copies the
        // lesser of this and its own size, and says which.
        let mut buf = [0u8; 2 * size_of::<libc::tcp_info>()];
        let mut len = buf.len() as libc::socklen_t;
        // SAFETY: `buf` is writable for `len` bytes, and `len` is a valid
        // socklen_t the kernel overwrites with the bytes it copied.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                buf.as_mut_ptr().cast(),
                &mut len,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("getsockopt(TCP_INFO): {e}"),
            ));
        }
        Ok(Self::parse(&buf[..(len as usize).min(buf.len())]))
    }

    /// The counters of `fd`, or (said on stderr) all absent if the kernel
    /// would not give them: a summary is printed either way.
    pub fn of_or_absent(fd: RawFd) -> Self {
        Self::of(fd).unwrap_or_else(|e| {
            eprintln!("ncdevmem-rs: {e}");
            Self::default()
        })
    }

    /// The summary's keys and values, in order.
    pub fn pairs(&self) -> [(&'static str, Option<u32>); 6] {
        [
            ("tcp_total_retrans", self.total_retrans),
            ("tcp_retrans", self.retrans),
            ("tcp_lost", self.lost),
            ("tcp_reordering", self.reordering),
            ("tcp_rcv_ooopack", self.rcv_ooopack),
            ("tcp_dsack_dups", self.dsack_dups),
        ]
    }

    /// The summary's fields: `key=value` words joined by spaces, or JSON
    /// members joined by commas; an absent counter is `n/a` (JSON `null`).
    pub fn fields(&self, json: bool) -> String {
        self.pairs()
            .iter()
            .map(|&(k, v)| match (v, json) {
                (Some(v), true) => format!("\"{k}\":{v}"),
                (None, true) => format!("\"{k}\":null"),
                (Some(v), false) => format!("{k}={v}"),
                (None, false) => format!("{k}=n/a"),
            })
            .collect::<Vec<_>>()
            .join(if json { "," } else { " " })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream, UdpSocket};
    use std::os::fd::AsRawFd;

    /// A `struct tcp_info` of `len` bytes whose counters are 1..=6 in
    /// `pairs` order.
    fn info_bytes(len: usize) -> Vec<u8> {
        let mut b = vec![0xffu8; size_of::<libc::tcp_info>()];
        for (i, off) in [
            TOTAL_RETRANS,
            RETRANS,
            LOST,
            REORDERING,
            RCV_OOOPACK,
            DSACK_DUPS,
        ]
        .into_iter()
        .enumerate()
        {
            b[off..off + 4].copy_from_slice(&(i as u32 + 1).to_ne_bytes());
        }
        b.truncate(len);
        b
    }

    #[test]
    fn a_whole_struct_has_every_counter() {
        let t = TcpInfo::parse(&info_bytes(size_of::<libc::tcp_info>()));
        assert_eq!(
            t,
            TcpInfo {
                total_retrans: Some(1),
                retrans: Some(2),
                lost: Some(3),
                reordering: Some(4),
                rcv_ooopack: Some(5),
                dsack_dups: Some(6),
            }
        );
    }

    #[test]
    fn a_short_struct_leaves_the_later_counters_absent() {
        // Linux 4.19 to 5.3: the struct ends after tcpi_reord_seen.
        let pre_5_4 = offset_of!(libc::tcp_info, tcpi_reord_seen) + 4;
        let t = TcpInfo::parse(&info_bytes(pre_5_4));
        assert_eq!((t.total_retrans, t.dsack_dups), (Some(1), Some(6)));
        assert_eq!(t.rcv_ooopack, None);
        // Linux 4.18: it ends before tcpi_bytes_sent, so no DSACK count either.
        let t = TcpInfo::parse(&info_bytes(offset_of!(libc::tcp_info, tcpi_bytes_sent)));
        assert_eq!((t.lost, t.rcv_ooopack, t.dsack_dups), (Some(3), None, None));
        // A field cut in the middle is absent, not half read.
        let t = TcpInfo::parse(&info_bytes(RCV_OOOPACK + 3));
        assert_eq!(t.rcv_ooopack, None);
        // Nothing at all: everything absent.
        assert_eq!(TcpInfo::parse(&[]), TcpInfo::default());
        assert_eq!(
            TcpInfo::parse(&info_bytes(TOTAL_RETRANS)).reordering,
            Some(4)
        );
        assert_eq!(
            TcpInfo::parse(&info_bytes(TOTAL_RETRANS)).total_retrans,
            None
        );
    }

    #[test]
    fn text_and_json_carry_the_same_numbers() {
        let t = TcpInfo::parse(&info_bytes(size_of::<libc::tcp_info>()));
        assert_eq!(
            t.fields(false),
            "tcp_total_retrans=1 tcp_retrans=2 tcp_lost=3 tcp_reordering=4 tcp_rcv_ooopack=5 tcp_dsack_dups=6"
        );
        assert_eq!(
            t.fields(true),
            "\"tcp_total_retrans\":1,\"tcp_retrans\":2,\"tcp_lost\":3,\"tcp_reordering\":4,\"tcp_rcv_ooopack\":5,\"tcp_dsack_dups\":6"
        );
    }

    #[test]
    fn absent_counters_are_na_in_text_and_null_in_json() {
        let t = TcpInfo {
            total_retrans: Some(7),
            lost: Some(0),
            ..Default::default()
        };
        assert_eq!(
            t.fields(false),
            "tcp_total_retrans=7 tcp_retrans=n/a tcp_lost=0 tcp_reordering=n/a tcp_rcv_ooopack=n/a tcp_dsack_dups=n/a"
        );
        assert_eq!(
            t.fields(true),
            "\"tcp_total_retrans\":7,\"tcp_retrans\":null,\"tcp_lost\":0,\"tcp_reordering\":null,\"tcp_rcv_ooopack\":null,\"tcp_dsack_dups\":null"
        );
    }

    #[test]
    fn the_offsets_are_the_uapi_headers() {
        crate::c_headers::check(
            &["linux/tcp.h"],
            &[
                (
                    "offsetof(struct tcp_info, tcpi_total_retrans)",
                    TOTAL_RETRANS as u64,
                ),
                ("offsetof(struct tcp_info, tcpi_retrans)", RETRANS as u64),
                ("offsetof(struct tcp_info, tcpi_lost)", LOST as u64),
                (
                    "offsetof(struct tcp_info, tcpi_reordering)",
                    REORDERING as u64,
                ),
                (
                    "offsetof(struct tcp_info, tcpi_rcv_ooopack)",
                    RCV_OOOPACK as u64,
                ),
                (
                    "offsetof(struct tcp_info, tcpi_dsack_dups)",
                    DSACK_DUPS as u64,
                ),
                ("TCP_INFO", libc::TCP_INFO as u64),
            ],
        );
    }

    #[test]
    fn a_loopback_connection_has_every_counter_and_no_loss() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        c.write_all(&[7u8; 100_000]).unwrap();
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), 100_000);
        for fd in [s.as_raw_fd(), c.as_raw_fd()] {
            let t = TcpInfo::of(fd).unwrap();
            // (This machine's kernel is newer than 5.4: nothing is absent.)
            assert!(t.pairs().iter().all(|(_, v)| v.is_some()), "{t:?}");
            assert_eq!((t.lost, t.retrans), (Some(0), Some(0)), "{t:?}");
        }
    }

    #[test]
    fn a_socket_without_tcp_info_is_an_error_and_all_absent() {
        let u = UdpSocket::bind("127.0.0.1:0").unwrap();
        let e = TcpInfo::of(u.as_raw_fd()).unwrap_err();
        assert!(e.to_string().starts_with("getsockopt(TCP_INFO): "), "{e}");
        assert_eq!(TcpInfo::of_or_absent(u.as_raw_fd()), TcpInfo::default());
    }
}
