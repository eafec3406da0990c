//! The plain client (`-s SERVER_IP -p PORT --bytes N`, no `-f`): `--bytes N`
//! from host memory, with `write` (`--write-size`: small ones, each its own
//! segment) or (`--zerocopy`) `MSG_ZEROCOPY` sends, to
//! a devmem (or any TCP) server; the summary, with its CPU time and the
//! socket's TCP_INFO counters.

use crate::cli::Opts;
use crate::hello;
use crate::outcome::Outcome;
use crate::pattern::{repeating_buffer, Pattern};
use crate::progress::Progress;
use crate::send_summary::{cpu_secs, SendSummary};
use crate::tcp_info::TcpInfo;
use crate::zerocopy::{self, Completions};
use socket2::{Domain, Socket, Type};
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The send buffer's size.
const BUF_LEN: usize = 256 * 1024;

/// Where the client sends from: the server's port, on any address of the
/// server's family (the server's ntuple rule may name the port).
pub fn local_addr(server: IpAddr, port: u16) -> SocketAddr {
    match server {
        IpAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, port).into(),
        IpAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, port).into(),
    }
}

/// Connects to the server from the server's port (its ntuple rule may name it).
fn connect(o: &Opts) -> io::Result<Socket> {
    let addr = SocketAddr::new(o.server.unwrap(), o.port);
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    sock.set_reuse_address(true)?;
    let local = local_addr(addr.ip(), o.port);
    sock.bind(&local.into())
        .map_err(|e| io::Error::new(e.kind(), format!("bind {local}: {e}")))?;
    sock.connect(&addr.into())
        .map_err(|e| io::Error::new(e.kind(), format!("connect {addr}: {e}")))?;
    Ok(sock)
}

/// Sends `buf[..len]` with `MSG_ZEROCOPY`; returns the bytes the kernel took.
/// The buffer must not change until the send completes: the client's never does.
fn send_zerocopy(sock: &Socket, zc: &mut Completions, buf: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is valid for reads of its length for the call; the
        // kernel pins its pages until the completion.
        let n = unsafe {
            libc::send(
                sock.as_raw_fd(),
                buf.as_ptr().cast(),
                buf.len(),
                libc::MSG_ZEROCOPY,
            )
        };
        if n >= 0 {
            zc.sends += 1;
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // Each zerocopy send holds option memory until it completes.
            Some(libc::ENOBUFS) => zc.reap(sock.as_raw_fd(), Some(Duration::from_secs(10)))?,
            Some(libc::EINTR) => {}
            _ => return Err(io::Error::new(e.kind(), format!("send(MSG_ZEROCOPY): {e}"))),
        }
    }
}

/// How long a small write may take to leave the socket.
const SEND_WAIT: Duration = Duration::from_secs(30);

/// Waits until `sock` has nothing unsent (`SIOCOUTQNSD`: all it holds went
/// out at least once), so that the next write cannot join what is queued
/// and leaves as a segment of its own.
fn wait_sent(sock: &Socket) -> io::Result<()> {
    let start = Instant::now();
    loop {
        let mut unsent: libc::c_int = 0;
        // SAFETY: SIOCOUTQNSD writes one int to the pointer, which is valid.
        if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCOUTQNSD, &mut unsent) } < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("ioctl(SIOCOUTQNSD): {e}")));
        }
        if unsent == 0 {
            return Ok(());
        }
        if start.elapsed() > SEND_WAIT {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{unsent} bytes still unsent after {} s",
                    SEND_WAIT.as_secs()
                ),
            ));
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// Runs the client: connects, sends `--bytes N`, waits for the server to
/// close, prints the summary.
pub fn run(o: &Opts) -> io::Result<Outcome> {
    let mut sock = connect(o)?;
    if o.hello > 0 {
        sock.write_all(&hello::bytes(o.hello.into()))?;
    }
    let mut zc = if o.zerocopy {
        zerocopy::enable(sock.as_raw_fd())?;
        Some(Completions::default())
    } else {
        None
    };
    // With -v N the pattern, else zeros (what upstream's server, without
    // validation, reads as "nothing to print"). Filled once, the buffer is
    // the stream's next bytes at every write (a shorter last write sends a
    // prefix), so sending costs no per-byte work, and zerocopy sends may
    // reuse it while in flight.
    let mut buf = repeating_buffer(BUF_LEN, Pattern::new(o.validate, o.pattern_end.byte()));
    let mut stream: std::net::TcpStream = sock.try_clone()?.into();
    // (Without it, Nagle would gather small writes into full segments.)
    stream.set_nodelay(o.write_size > 0)?;
    let cpu0 = cpu_secs();
    let start = Instant::now();
    let mut sent = 0u64;
    let mut progress = Progress::new(start);
    while sent < o.bytes {
        let n = (o.bytes - sent).min(buf.len() as u64) as usize;
        match zc.as_mut() {
            Some(zc) => {
                let mut off = 0;
                while off < n {
                    off += send_zerocopy(&sock, zc, &buf[off..n])?;
                }
                zc.reap(sock.as_raw_fd(), None)?;
            }
            None if o.write_size > 0 => {
                for w in buf[..n].chunks(o.write_size) {
                    stream.write_all(w)?;
                    wait_sent(&sock)?;
                }
            }
            None => stream.write_all(&buf[..n])?,
        }
        sent += n as u64;
        progress.tick(|secs| {
            format!(
                "{} of {} MiB sent, {:.1} MiB/s",
                sent >> 20,
                o.bytes >> 20,
                sent as f64 / (1 << 20) as f64 / secs
            )
        });
    }
    drop(progress);
    if let Some(zc) = zc.as_mut() {
        zc.drain(sock.as_raw_fd(), Duration::from_secs(60))?;
    }
    stream.shutdown(std::net::Shutdown::Write)?;
    let _ = stream.read(&mut buf[..1]);
    let secs = start.elapsed().as_secs_f64();
    let cpu1 = cpu_secs();
    let summary = SendSummary {
        role: "client",
        bytes: sent,
        secs,
        cpu: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
        zc,
        tcp: TcpInfo::of_or_absent(sock.as_raw_fd()),
    };
    println!("{}", summary.line(o.json));
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_sends_from_the_servers_port_in_its_family() {
        let v4 = local_addr("10.9.0.2".parse().unwrap(), 5201);
        assert_eq!(v4, "0.0.0.0:5201".parse().unwrap());
        let v6 = local_addr("fd00::2".parse().unwrap(), 4000);
        assert_eq!(v6, "[::]:4000".parse().unwrap());
    }
}
