//! The devmem TX client (`-s SERVER_IP -p PORT -f IFACE`, no `-l`): connects
//! through IFACE with a dma-buf bound for TX (devmem_tx.rs) and sends from
//! it: `--bytes N` bytes of the -v pattern (zeros without -v), or else
//! stdin's lines, each copied into the dma-buf and sent once the last send
//! completed (upstream ncdevmem's TX mode); the summary, and a failure if
//! the kernel copied any send instead of sending it from the dma-buf.

use crate::cli::Opts;
use crate::devmem_tx::DevmemSender;
use crate::dmabuf::{Dmabuf, Provider};
use crate::hello;
use crate::nic;
use crate::outcome::Outcome;
use crate::pattern::{repeating_buffer, Pattern};
use crate::progress::Progress;
use crate::send_summary::{cpu_secs, SendSummary};
use crate::signals;
use crate::tcp_info::TcpInfo;
use socket2::{Domain, Socket, Type};
use std::io::{self, BufRead, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Most bytes one send of `--bytes N` asks for.
const MAX_SEND: usize = 1 << 20;

/// Where the sends of `--bytes N` start in the dma-buf: they cycle through
/// its first `usable` bytes (whole pattern periods), each ending at most at
/// their end.
#[derive(Debug)]
struct Cursor {
    usable: usize,
    pos: usize,
}

impl Cursor {
    fn new(usable: usize) -> Self {
        Cursor { usable, pos: 0 }
    }

    /// The next send's length with `left` bytes still to send.
    fn want(&self, left: u64) -> usize {
        left.min((self.usable - self.pos) as u64)
            .min(MAX_SEND as u64) as usize
    }

    /// `n` bytes were sent from `pos`.
    fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n) % self.usable;
    }
}

/// The run's outcome: a send the kernel copied did not come from the
/// dma-buf, and devmem TX failed to do what it is for.
fn outcome(copied: u64) -> Outcome {
    if copied == 0 {
        Outcome::Ok
    } else {
        Outcome::ValidationFailed
    }
}

/// Runs devmem TX; `Interrupted` if a signal ended `--bytes N`'s loop.
pub fn run(o: &Opts) -> io::Result<Outcome> {
    let iface = o.iface.as_deref().unwrap_or_default();
    let ifindex = nic::ifindex(iface)?;
    let addr = SocketAddr::new(o.server.unwrap(), o.port);
    let mem = Dmabuf::new(o.provider.unwrap_or(Provider::Udmabuf), o.size)?;
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    sock.set_reuse_address(true)?;
    let mut tx = DevmemSender::new(sock, iface, ifindex, mem.fd())?;
    if let Some(c) = o.client {
        // The receiver's rule may name this port as the source.
        let local = SocketAddr::new(c, o.port);
        tx.socket()
            .bind(&local.into())
            .map_err(|e| io::Error::new(e.kind(), format!("bind {local}: {e}")))?;
    }
    tx.socket()
        .connect(&addr.into())
        .map_err(|e| io::Error::new(e.kind(), format!("connect {addr}: {e}")))?;
    if o.hello > 0 {
        tx.socket().write_all(&hello::bytes(o.hello.into()))?;
    }
    eprintln!(
        "devmem TX to {addr} via {iface}: dma-buf id {}, {} bytes",
        tx.dmabuf_id(),
        mem.size()
    );
    let mut sent = 0u64;
    let mut cpu0 = cpu_secs();
    let mut start = Instant::now();
    if o.bytes > 0 {
        // Whole pattern periods fill the dma-buf, so the stream continues
        // where the buffer starts again: sends cycle through it, and the
        // content never changes under a send in flight.
        let fill = repeating_buffer(mem.size(), Pattern::new(o.validate, o.pattern_end.byte()));
        let mut cursor = Cursor::new(fill.len());
        mem.write_at(0, &fill)?;
        drop(fill);
        // The dma-buf's fill is setup, not sending.
        cpu0 = cpu_secs();
        start = Instant::now();
        let mut progress = Progress::new(start);
        while sent < o.bytes {
            if signals::stop_requested() {
                return Ok(Outcome::Interrupted);
            }
            let n = tx.send(cursor.pos, cursor.want(o.bytes - sent), o.max_chunk)?;
            sent += n as u64;
            cursor.advance(n);
            tx.reap(None)?;
            progress.tick(|_| {
                format!(
                    "{} of {} MiB sent from the dma-buf, {} sends, {} completed",
                    sent >> 20,
                    o.bytes >> 20,
                    tx.completions.sends,
                    tx.completions.completed
                )
            });
        }
        drop(progress);
    } else {
        for line in io::stdin().lock().split(b'\n') {
            let mut line = line?;
            line.push(b'\n');
            mem.write_at(0, &line)?;
            let mut off = 0;
            while off < line.len() {
                off += tx.send(off, line.len() - off, o.max_chunk)?;
            }
            sent += line.len() as u64;
            // The next line overwrites the buffer: wait for this one's completion.
            tx.drain(Duration::from_secs(30))?;
        }
    }
    tx.drain(Duration::from_secs(60))?;
    tx.socket().shutdown(std::net::Shutdown::Write)?;
    let mut one = [0u8; 1];
    let _ = std::net::TcpStream::from(tx.socket().try_clone()?).read(&mut one);
    let secs = start.elapsed().as_secs_f64();
    let cpu1 = cpu_secs();
    let copied = tx.completions.copied;
    let summary = SendSummary {
        role: "devmem-tx",
        bytes: sent,
        secs,
        cpu: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
        zc: Some(std::mem::take(&mut tx.completions)),
        tcp: TcpInfo::of_or_absent(tx.socket().as_raw_fd()),
    };
    println!("{}", summary.line(o.json));
    let outcome = outcome(copied);
    if outcome != Outcome::Ok {
        eprintln!("ncdevmem-rs: {copied} sends were copied, not sent from the dma-buf");
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_cycle_through_the_usable_bytes_and_never_cross_their_end() {
        // A 3000-byte buffer, 7000 bytes to send, sends taking what they ask.
        let mut c = Cursor::new(3000);
        let (mut left, mut sends) = (7000u64, Vec::new());
        while left > 0 {
            let n = c.want(left);
            assert!(c.pos + n <= 3000, "{c:?} wants {n}");
            sends.push((c.pos, n));
            c.advance(n);
            left -= n as u64;
        }
        assert_eq!(sends, [(0, 3000), (0, 3000), (0, 1000)]);
        assert_eq!(c.pos, 1000);
    }

    #[test]
    fn a_short_send_continues_where_it_stopped() {
        let mut c = Cursor::new(3000);
        c.advance(2500);
        assert_eq!(c.want(10_000), 500);
        c.advance(200);
        assert_eq!((c.pos, c.want(10_000)), (2700, 300));
        c.advance(300);
        assert_eq!(c.pos, 0);
    }

    #[test]
    fn one_send_asks_for_at_most_a_mebibyte() {
        let c = Cursor::new(64 << 20);
        assert_eq!(c.want(10 << 20), 1 << 20);
        assert_eq!(c.want(5), 5);
    }

    #[test]
    fn a_copied_send_fails_the_run() {
        assert_eq!(outcome(0), Outcome::Ok);
        assert_eq!(outcome(1), Outcome::ValidationFailed);
    }
}
