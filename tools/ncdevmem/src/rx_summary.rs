//! What the devmem TCP server counts of what it received, the summary line
//! it prints, and the outcome the counts make.

use crate::cmsg::DevmemMsg;
use crate::outcome::Outcome;
use crate::tcp_info::TcpInfo;

/// The devmem server's counts.
#[derive(Debug, Default)]
pub struct Summary {
    pub bytes: u64,
    pub dmabuf_bytes: u64,
    pub linear_bytes: u64,
    pub frags: u64,
    pub page_aligned: u64,
    pub unaligned: u64,
    /// Frags that start off a page boundary of the dma-buf (payloads the NIC
    /// packed into shared buffers).
    pub mid_page_starts: u64,
    pub largest_frag: u32,
    pub tokens_returned: u64,
    pub errors: u64,
    pub wrong_dmabuf: u64,
    pub secs: f64,
    /// The receiving socket's TCP_INFO counters, taken before it closed.
    pub tcp: TcpInfo,
    /// The NIC received on: its driver (and devmemnic's personality).
    pub nic: String,
}

impl Summary {
    /// Counts one read of `n` bytes whose control messages were `msgs`,
    /// the dma-buf bound as `binding_id`. Returns whether any of it came
    /// through devmem (a read without devmem messages missed the bound
    /// queues: its bytes were plain ones, all linear).
    pub fn count(&mut self, msgs: &[DevmemMsg], n: usize, binding_id: u32) -> bool {
        let mut devmem = false;
        for m in msgs {
            match *m {
                DevmemMsg::Linear { size } => {
                    devmem = true;
                    self.linear_bytes += u64::from(size);
                }
                DevmemMsg::Dmabuf {
                    offset,
                    size,
                    dmabuf_id,
                    ..
                } => {
                    devmem = true;
                    self.frags += 1;
                    if !offset.is_multiple_of(4096) {
                        self.mid_page_starts += 1;
                    }
                    self.dmabuf_bytes += u64::from(size);
                    self.largest_frag = self.largest_frag.max(size);
                    if (size as usize).is_multiple_of(4096) {
                        self.page_aligned += 1;
                    } else {
                        self.unaligned += 1;
                    }
                    if dmabuf_id != binding_id {
                        self.wrong_dmabuf += 1;
                    }
                }
                _ => {}
            }
        }
        if !devmem {
            self.linear_bytes += n as u64;
        }
        self.bytes += n as u64;
        devmem
    }

    /// The summary line: `ncdevmem-rs ROLE: k=v ...`, or one JSON object
    /// (the TCP_INFO fields before `nic`, which stays last: its value, free
    /// text, runs to the end of the line).
    pub fn line(&self, json: bool, role: &str) -> String {
        let rate = self.bytes as f64 / (1 << 20) as f64 / self.secs.max(1e-9);
        let tcp = self.tcp.fields(json);
        if json {
            format!(
                "{{\"role\":\"{role}\",\"bytes\":{},\"dmabuf_bytes\":{},\"linear_bytes\":{},\"frags\":{},\"page_aligned_frags\":{},\"non_page_aligned_frags\":{},\"mid_page_starts\":{},\"largest_frag\":{},\"tokens_returned\":{},\"validation_errors\":{},\"wrong_dmabuf\":{},\"secs\":{:.3},\"mibps\":{:.1},{tcp},\"nic\":\"{}\"}}",
                self.bytes, self.dmabuf_bytes, self.linear_bytes, self.frags, self.page_aligned, self.unaligned,
                self.mid_page_starts, self.largest_frag, self.tokens_returned, self.errors, self.wrong_dmabuf, self.secs, rate, self.nic
            )
        } else {
            format!(
                "ncdevmem-rs {role}: bytes={} dmabuf_bytes={} linear_bytes={} frags={} page_aligned={} non_page_aligned={} mid_page_starts={} largest_frag={} tokens_returned={} validation_errors={} wrong_dmabuf={} secs={:.2} mibps={:.1} {tcp} nic={}",
                self.bytes, self.dmabuf_bytes, self.linear_bytes, self.frags, self.page_aligned, self.unaligned,
                self.mid_page_starts, self.largest_frag, self.tokens_returned, self.errors, self.wrong_dmabuf, self.secs, rate, self.nic
            )
        }
    }

    /// The run's outcome: failed on a byte that broke the pattern, a frag
    /// in another dma-buf than ours, or (`-L`, `fail_on_linear`) any byte
    /// outside the dma-buf.
    pub fn outcome(&self, interrupted: bool, fail_on_linear: bool) -> Outcome {
        if interrupted {
            Outcome::Interrupted
        } else if self.errors == 0
            && self.wrong_dmabuf == 0
            && !(fail_on_linear && self.linear_bytes > 0)
        {
            Outcome::Ok
        } else {
            Outcome::ValidationFailed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(size: u32, token: u32, dmabuf_id: u32) -> DevmemMsg {
        DevmemMsg::Dmabuf {
            offset: u64::from(token) * 4096,
            size,
            token,
            dmabuf_id,
        }
    }

    #[test]
    fn a_devmem_read_counts_its_frags_and_its_linear_part() {
        let mut s = Summary::default();
        let msgs = [
            DevmemMsg::Linear { size: 100 },
            frag(4096, 0, 3),
            frag(1000, 1, 3),
            DevmemMsg::Other { level: 1, kind: 2 },
            frag(8192, 2, 3),
        ];
        assert!(s.count(&msgs, 100 + 4096 + 1000 + 8192, 3));
        assert_eq!(
            (s.bytes, s.dmabuf_bytes, s.linear_bytes),
            (13388, 13288, 100)
        );
        assert_eq!((s.frags, s.page_aligned, s.unaligned), (3, 2, 1));
        assert_eq!((s.largest_frag, s.wrong_dmabuf), (8192, 0));
    }

    #[test]
    fn a_read_without_devmem_messages_is_all_linear() {
        let mut s = Summary::default();
        assert!(!s.count(&[], 1500, 3));
        assert!(!s.count(&[DevmemMsg::Other { level: 1, kind: 2 }], 500, 3));
        assert_eq!(
            (s.bytes, s.linear_bytes, s.dmabuf_bytes, s.frags),
            (2000, 2000, 0, 0)
        );
        // A linear message's size, not the read's, counts when there is one.
        assert!(s.count(&[DevmemMsg::Linear { size: 10 }], 10, 3));
        assert_eq!((s.bytes, s.linear_bytes), (2010, 2010));
    }

    #[test]
    fn frags_starting_off_a_page_boundary_are_counted() {
        let mut s = Summary::default();
        let at = |offset: u64| DevmemMsg::Dmabuf {
            offset,
            size: 1448,
            token: 0,
            dmabuf_id: 3,
        };
        s.count(&[at(0), at(1536), at(8192), at(12288 + 128)], 4 * 1448, 3);
        assert_eq!((s.frags, s.mid_page_starts), (4, 2));
    }

    #[test]
    fn frags_in_another_dmabuf_are_counted_and_fail_the_run() {
        let mut s = Summary::default();
        s.count(
            &[frag(4096, 0, 3), frag(4096, 1, 4), frag(4096, 2, 5)],
            3 * 4096,
            3,
        );
        assert_eq!(s.wrong_dmabuf, 2);
        assert_eq!(s.outcome(false, false), Outcome::ValidationFailed);
    }

    #[test]
    fn the_outcome_follows_errors_linear_bytes_under_l_and_signals() {
        let mut s = Summary::default();
        s.count(&[DevmemMsg::Linear { size: 66 }, frag(4096, 0, 1)], 4162, 1);
        assert_eq!(s.outcome(false, false), Outcome::Ok);
        assert_eq!(s.outcome(false, true), Outcome::ValidationFailed);
        assert_eq!(s.outcome(true, true), Outcome::Interrupted);
        let clean = Summary {
            dmabuf_bytes: 4096,
            ..Default::default()
        };
        assert_eq!(clean.outcome(false, true), Outcome::Ok);
        let bad = Summary {
            errors: 1,
            ..Default::default()
        };
        assert_eq!(bad.outcome(false, false), Outcome::ValidationFailed);
        assert_eq!(bad.outcome(true, false), Outcome::Interrupted);
    }

    #[test]
    fn text_and_json_carry_the_same_counts() {
        let s = Summary {
            bytes: 3 << 20,
            dmabuf_bytes: (3 << 20) - 200,
            linear_bytes: 200,
            frags: 800,
            page_aligned: 700,
            unaligned: 100,
            mid_page_starts: 0,
            largest_frag: 4096,
            tokens_returned: 800,
            errors: 2,
            wrong_dmabuf: 1,
            secs: 2.0,
            tcp: TcpInfo {
                total_retrans: Some(5),
                retrans: Some(0),
                lost: Some(0),
                reordering: Some(3),
                rcv_ooopack: Some(12),
                dsack_dups: None,
            },
            nic: "devmemnic (split-all)".into(),
        };
        assert_eq!(
            s.line(false, "server"),
            "ncdevmem-rs server: bytes=3145728 dmabuf_bytes=3145528 linear_bytes=200 frags=800 page_aligned=700 non_page_aligned=100 mid_page_starts=0 largest_frag=4096 tokens_returned=800 validation_errors=2 wrong_dmabuf=1 secs=2.00 mibps=1.5 tcp_total_retrans=5 tcp_retrans=0 tcp_lost=0 tcp_reordering=3 tcp_rcv_ooopack=12 tcp_dsack_dups=n/a nic=devmemnic (split-all)"
        );
        assert_eq!(
            s.line(true, "server"),
            "{\"role\":\"server\",\"bytes\":3145728,\"dmabuf_bytes\":3145528,\"linear_bytes\":200,\"frags\":800,\"page_aligned_frags\":700,\"non_page_aligned_frags\":100,\"mid_page_starts\":0,\"largest_frag\":4096,\"tokens_returned\":800,\"validation_errors\":2,\"wrong_dmabuf\":1,\"secs\":2.000,\"mibps\":1.5,\"tcp_total_retrans\":5,\"tcp_retrans\":0,\"tcp_lost\":0,\"tcp_reordering\":3,\"tcp_rcv_ooopack\":12,\"tcp_dsack_dups\":null,\"nic\":\"devmemnic (split-all)\"}"
        );
    }
}
