//! The devmem TCP receive loop (`MSG_SOCK_DEVMEM`), the receiving half
//! as devmem_tx.rs is the sending one: reads until the peer closes,
//! `--max-bytes` or a signal; validates every read against the -v pattern
//! in the stream's order (linear parts in the iovec, frags in the
//! dma-buf), counts it (rx_summary.rs), and gives its tokens back with
//! `SO_DEVMEM_DONTNEED` before the next read, or holds them
//! (`--hold-tokens-secs`), or misuses two of them once (`--abuse-tokens`).

use crate::cli::Opts;
use crate::cmsg::{self, DevmemMsg, MSG_SOCK_DEVMEM, SO_DEVMEM_DONTNEED};
use crate::dmabuf::Dmabuf;
use crate::pattern::Pattern;
use crate::progress::Progress;
use crate::rx_summary::Summary;
use crate::tokens::{calls, TokenBatch, TokenRange};
use crate::{signals, token_abuse};
use socket2::Socket;
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Returns tokens; the kernel frees every token of a call that respects its
/// limits (see `tokens::calls`), and says how many it freed.
fn return_tokens(fd: i32, ranges: &[TokenRange]) -> io::Result<u64> {
    let mut freed = 0;
    for chunk in calls(ranges) {
        let chunk = &chunk[..];
        // SAFETY: `chunk` is an array of `struct dmabuf_token` of the size given.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                SO_DEVMEM_DONTNEED,
                chunk.as_ptr().cast(),
                std::mem::size_of_val(chunk) as u32,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        freed += r as u64;
    }
    Ok(freed)
}

/// The tokens of a read's dma-buf frags, in order.
fn tokens(msgs: &[DevmemMsg]) -> impl Iterator<Item = u32> + '_ {
    msgs.iter().filter_map(|m| match m {
        DevmemMsg::Dmabuf { token, .. } => Some(*token),
        _ => None,
    })
}

/// The two tokens `--abuse-tokens` misuses: a read's first two.
fn abuse_pair(msgs: &[DevmemMsg]) -> Option<(u32, u32)> {
    let mut toks = tokens(msgs);
    Some((toks.next()?, toks.next()?))
}

/// Checks one read against the pattern `p`, in the stream's order: its
/// linear parts, one after another in `iobuf` (the bytes the read put
/// there), and its frags, whose bytes `frag(offset, len)` reads in the
/// dma-buf. Returns how many bytes differ.
fn check_read<'m>(
    p: &mut Pattern,
    msgs: &[DevmemMsg],
    iobuf: &[u8],
    frag: impl Fn(u64, usize) -> io::Result<&'m [u8]>,
) -> io::Result<u64> {
    let n = iobuf.len();
    let mut lin = 0usize;
    let mut bad = 0;
    for m in msgs {
        match *m {
            DevmemMsg::Linear { size } => {
                let end = (lin + size as usize).min(n);
                bad += p.check(&iobuf[lin.min(end)..end]);
                lin += size as usize;
            }
            DevmemMsg::Dmabuf { offset, size, .. } => bad += p.check(frag(offset, size as usize)?),
            _ => {}
        }
    }
    Ok(bad)
}

/// What one `recvmsg` brought.
enum Received {
    /// `n` bytes, with `ctrl` bytes of control messages.
    Data { n: usize, ctrl: usize },
    /// Nothing: a signal or the read timeout woke us.
    Woken,
    /// The peer closed.
    End,
}

/// The devmem receive loop's state: the connection, the dma-buf its frags
/// land in, the tokens to give back, and the counts for the summary.
pub struct Receiver<'a> {
    o: &'a Opts,
    /// The connection (closed by dropping it, before the unbinding).
    pub conn: Socket,
    mem: &'a Dmabuf,
    binding_id: u32,
    pattern: Option<Pattern>,
    batch: TokenBatch,
    /// Tokens kept for --hold-tokens-secs.
    held: Vec<TokenRange>,
    /// Held tokens were returned (or none are held): hold no more.
    hold_done: bool,
    last_data: Instant,
    /// --abuse-tokens ran.
    abused: bool,
    iobuf: Vec<u8>,
    ctrl: Vec<u8>,
    /// The counts so far, and the summary once `run` returned.
    pub s: Summary,
}

impl<'a> Receiver<'a> {
    /// A receiver of `conn` into `mem`, bound as binding `binding_id`.
    pub fn new(o: &'a Opts, conn: Socket, mem: &'a Dmabuf, binding_id: u32) -> Self {
        Receiver {
            o,
            conn,
            mem,
            binding_id,
            pattern: if o.validate >= 2 {
                Pattern::new(o.validate, o.pattern_end.byte())
            } else {
                None
            },
            batch: TokenBatch::new(o.batch),
            held: Vec::new(),
            hold_done: o.hold == 0,
            last_data: Instant::now(),
            abused: false,
            iobuf: vec![0u8; 819200],
            ctrl: vec![0u8; 80000],
            s: Summary::default(),
        }
    }

    fn fd(&self) -> i32 {
        self.conn.as_raw_fd()
    }

    /// Receives until the peer closes, --max-bytes or a signal (then
    /// returns true); every token is back with the kernel when it returns.
    pub fn run(&mut self) -> io::Result<bool> {
        let start = Instant::now();
        self.last_data = start;
        let mut progress = Progress::new(start);
        let interrupted = loop {
            if signals::stop_requested() {
                break true;
            }
            let (n, ctrl) = match self.recv()? {
                Received::End => break false,
                Received::Woken if signals::stop_requested() => break true,
                Received::Woken => {
                    self.end_hold_if_dry()?;
                    continue;
                }
                Received::Data { n, ctrl } => (n, ctrl),
            };
            self.take(n, ctrl)?;
            let s = &self.s;
            progress.tick(|secs| {
                format!(
                    "{} MiB, {:.1} MiB/s",
                    s.bytes >> 20,
                    s.bytes as f64 / (1 << 20) as f64 / secs
                )
            });
            if self.o.max_bytes > 0 && self.s.bytes >= self.o.max_bytes {
                break false;
            }
        };
        if !self.held.is_empty() {
            self.s.tokens_returned += return_tokens(self.fd(), &self.held)?;
        }
        self.s.secs = start.elapsed().as_secs_f64();
        drop(progress);
        Ok(interrupted)
    }

    /// One `recvmsg` with `MSG_SOCK_DEVMEM`.
    fn recv(&mut self) -> io::Result<Received> {
        let mut iov = libc::iovec {
            iov_base: self.iobuf.as_mut_ptr().cast(),
            iov_len: self.iobuf.len(),
        };
        // SAFETY: msghdr is plain data; all-zeroes is valid before filling it in.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = self.ctrl.as_mut_ptr().cast();
        msg.msg_controllen = self.ctrl.len();
        // SAFETY: `msg` points to valid buffers for the call.
        let n = unsafe { libc::recvmsg(self.fd(), &mut msg, MSG_SOCK_DEVMEM) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted || e.kind() == io::ErrorKind::WouldBlock {
                return Ok(Received::Woken);
            }
            return Err(io::Error::new(e.kind(), format!("recvmsg: {e}")));
        }
        Ok(match n {
            0 => Received::End,
            n => Received::Data {
                n: n as usize,
                ctrl: msg.msg_controllen,
            },
        })
    }

    /// --hold-tokens-secs: tokens are held until no data has arrived for that
    /// long (the dma-buf ran dry, so it does not depend on the link's speed),
    /// then all returned at once, and never held again.
    fn end_hold_if_dry(&mut self) -> io::Result<()> {
        let hold_for = Duration::from_secs(self.o.hold);
        if !self.hold_done && !self.held.is_empty() && self.last_data.elapsed() >= hold_for {
            eprintln!(
                "no data for {} s: returning {} held tokens",
                self.o.hold,
                self.held.len()
            );
            self.s.tokens_returned += return_tokens(self.fd(), &self.held)?;
            self.held.clear();
            self.hold_done = true;
        }
        Ok(())
    }

    /// Validates, counts and gives back what one read of `n` bytes brought.
    fn take(&mut self, n: usize, ctrl: usize) -> io::Result<()> {
        let msgs = cmsg::parse(&self.ctrl[..ctrl]);
        self.last_data = Instant::now();
        self.validate(&msgs, n)?;
        let returned_by_abuse = self.abuse_tokens(&msgs)?;
        let devmem = self.s.count(&msgs, n, self.binding_id);
        self.give_back(&msgs, returned_by_abuse)?;
        if !devmem {
            // Not devmem data (the flow missed the bound queues): plain bytes.
            if let Some(p) = self.pattern.as_mut() {
                self.s.errors += p.check(&self.iobuf[..n]);
            }
        }
        Ok(())
    }

    /// Checks this read's frags against the pattern under one sync of the
    /// dma-buf.
    fn validate(&mut self, msgs: &[DevmemMsg], n: usize) -> io::Result<()> {
        let Some(p) = self.pattern.as_mut() else {
            return Ok(());
        };
        let iobuf = &self.iobuf[..n];
        self.s.errors += self
            .mem
            .read_session(|r| check_read(p, msgs, iobuf, |off, len| r.bytes(off, len)))??;
        Ok(())
    }

    /// --abuse-tokens: once, with two of this read's tokens (after validation:
    /// a returned buffer may be refilled at once). Returns the token the
    /// checks gave back (counted here, skipped when returning the rest).
    fn abuse_tokens(&mut self, msgs: &[DevmemMsg]) -> io::Result<Option<u32>> {
        if !self.o.abuse_tokens || self.abused {
            return Ok(None);
        }
        let Some((t0, t1)) = abuse_pair(msgs) else {
            return Ok(None);
        };
        let checks = token_abuse::run(self.fd(), t0, t1)
            .map_err(|e| io::Error::other(format!("SO_DEVMEM_DONTNEED misuse: {e}")))?;
        eprintln!("token abuse: {checks} checks passed");
        self.abused = true;
        self.s.tokens_returned += 1;
        Ok(Some(t0))
    }

    /// Gives this read's tokens back (or holds them), but the one
    /// --abuse-tokens already returned.
    fn give_back(&mut self, msgs: &[DevmemMsg], returned_by_abuse: Option<u32>) -> io::Result<()> {
        let holding = !self.hold_done;
        for token in tokens(msgs) {
            if returned_by_abuse == Some(token) {
                // Already back in the pool.
            } else if holding {
                self.held.push(TokenRange {
                    start: token,
                    count: 1,
                });
            } else if self.batch.push(token) {
                self.s.tokens_returned += return_tokens(self.fd(), self.batch.ranges())?;
                self.batch.clear();
            }
        }
        // Return this read's tokens before reading again: a token kept across
        // reads holds a buffer the NIC may need for the next data, and with a
        // small dma-buf every buffer can end up waiting in the batch while the
        // read waits for data (a deadlock).
        if self.batch.pending() > 0 {
            self.s.tokens_returned += return_tokens(self.fd(), self.batch.ranges())?;
            self.batch.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(token: u32) -> DevmemMsg {
        DevmemMsg::Dmabuf {
            offset: u64::from(token) * 4096,
            size: 4096,
            token,
            dmabuf_id: 1,
        }
    }

    #[test]
    fn the_tokens_to_give_back_are_the_frags_in_order() {
        let msgs = [
            DevmemMsg::Linear { size: 66 },
            frag(7),
            DevmemMsg::Other { level: 1, kind: 2 },
            frag(3),
            frag(9),
        ];
        assert_eq!(tokens(&msgs).collect::<Vec<_>>(), [7, 3, 9]);
        assert_eq!(abuse_pair(&msgs), Some((7, 3)));
    }

    #[test]
    fn a_read_with_fewer_than_two_frags_is_not_abused() {
        assert_eq!(abuse_pair(&[frag(4), DevmemMsg::Linear { size: 10 }]), None);
        assert_eq!(abuse_pair(&[]), None);
    }

    /// A read of the -v 7 stream's first `n` bytes: `linear` bytes in the
    /// iovec, the rest as 1000-byte frags placed in the dma-buf backwards
    /// (the stream's order is the messages', not the dma-buf's).
    fn read_of(n: usize, linear: usize) -> (Vec<DevmemMsg>, Vec<u8>, Vec<u8>) {
        let mut stream = vec![0u8; n];
        Pattern::new(7, 0).unwrap().fill(&mut stream);
        let mut msgs = vec![DevmemMsg::Linear {
            size: linear as u32,
        }];
        let frags: Vec<&[u8]> = stream[linear..].chunks(1000).collect();
        let mut dmabuf = vec![0u8; frags.len() * 1000];
        for (i, f) in frags.iter().enumerate() {
            let at = (frags.len() - 1 - i) * 1000;
            dmabuf[at..at + f.len()].copy_from_slice(f);
            msgs.push(DevmemMsg::Dmabuf {
                offset: at as u64,
                size: f.len() as u32,
                token: i as u32,
                dmabuf_id: 1,
            });
        }
        (msgs, stream[..linear].to_vec(), dmabuf)
    }

    fn check(msgs: &[DevmemMsg], iobuf: &[u8], dmabuf: &[u8]) -> u64 {
        let mut p = Pattern::new(7, 0).unwrap();
        check_read(&mut p, msgs, iobuf, |off, len| {
            Ok(&dmabuf[off as usize..off as usize + len])
        })
        .unwrap()
    }

    #[test]
    fn a_read_is_checked_in_the_streams_order_linear_and_frags() {
        let (msgs, iobuf, mut dmabuf) = read_of(3500, 100);
        assert_eq!(check(&msgs, &iobuf, &dmabuf), 0);
        dmabuf[2999] ^= 1;
        dmabuf[10] ^= 1;
        assert_eq!(check(&msgs, &iobuf, &dmabuf), 2);
        let mut bad_linear = iobuf.clone();
        bad_linear[50] = 0xff;
        dmabuf[2999] ^= 1;
        dmabuf[10] ^= 1;
        assert_eq!(check(&msgs, &bad_linear, &dmabuf), 1);
    }

    #[test]
    fn linear_parts_are_checked_only_as_far_as_the_read_went() {
        // Messages that claim more linear bytes than the read brought: the
        // 60 there are checked, the rest is not read past the iovec.
        let (_, iobuf, _) = read_of(100, 100);
        let msgs = [
            DevmemMsg::Linear { size: 40 },
            DevmemMsg::Linear { size: 40 },
            DevmemMsg::Linear { size: 40 },
        ];
        assert_eq!(check(&msgs, &iobuf[..60], &[]), 0);
        let mut short = iobuf[..60].to_vec();
        short[59] ^= 1;
        short[0] ^= 1;
        assert_eq!(check(&msgs, &short, &[]), 2);
    }

    #[test]
    fn a_frag_that_cannot_be_read_fails_the_check() {
        let (msgs, iobuf, _) = read_of(2100, 100);
        let mut p = Pattern::new(7, 0).unwrap();
        let r = check_read(&mut p, &msgs, &iobuf, |_, _| {
            Err(io::Error::new(io::ErrorKind::InvalidInput, "past the end"))
        });
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }
}
