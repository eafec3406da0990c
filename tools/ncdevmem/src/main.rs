//! ncdevmem-rs: receive TCP into a dma-buf with devmem TCP, or send to such a
//! receiver. Accepts upstream ncdevmem's flags.
//!
//! Server: `ncdevmem-rs -l -s SERVER_IP -p PORT -f IFACE [-c CLIENT_IP] [-v N] [-t START] [-q NUM]`
//! Client: `ncdevmem-rs -s SERVER_IP -p PORT [-v N] --bytes N`
//!
//! This version never changes NIC settings (as upstream's `--no-config` would
//! not): set tcp-data-split, RSS and the ntuple rule with ethtool first.

use ncdevmem_rs::cmsg::{self, DevmemMsg, MSG_SOCK_DEVMEM, SO_DEVMEM_DONTNEED};
use ncdevmem_rs::dmabuf::{Dmabuf, Provider};
use ncdevmem_rs::netlink::bind_rx;
use ncdevmem_rs::pattern::Pattern;
use ncdevmem_rs::tokens::{calls, TokenBatch, TokenRange, MAX_RANGES};
use socket2::{Domain, Socket, Type};
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "usage:
  ncdevmem-rs -l -s SERVER_IP -p PORT -f IFACE [-c CLIENT_IP] [-v N] [-t START] [-q NUM] [options]
  ncdevmem-rs -s SERVER_IP -p PORT [-v N] --bytes N          (client: send the pattern)
options:
  -v N                  validate the pattern 1,2,..,N-1,0 (0: no validation; default 0)
  -t START -q NUM       bind RX queues START..START+NUM-1 (default 8 and 8)
  --provider P          udmabuf (default) or dma-heap
  --size BYTES          dma-buf size (default 65536000, as upstream)
  --batch N             token ranges per SO_DEVMEM_DONTNEED, 1..128 (default 128)
  --hold-tokens-secs S  keep all tokens for S seconds before returning any
  --max-bytes N         stop after N bytes
  --bytes N             client: bytes to send
  --json                print the summary as JSON
  -h, --help            this text";

#[derive(Default)]
struct Opts {
    listen: bool,
    server: Option<IpAddr>,
    client: Option<IpAddr>,
    port: u16,
    iface: Option<String>,
    validate: u8,
    start: u32,
    queues: u32,
    provider: Option<Provider>,
    size: usize,
    batch: usize,
    hold: u64,
    max_bytes: u64,
    bytes: u64,
    json: bool,
}

fn parse_args(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        port: 5201,
        start: 8,
        queues: 8,
        size: 16000 * 4096,
        batch: MAX_RANGES,
        ..Opts::default()
    };
    let mut i = 0;
    let val = |i: &mut usize, name: &str| -> Result<String, String> {
        *i += 1;
        args.get(*i).cloned().ok_or(format!("{name} needs a value"))
    };
    fn num<T: std::str::FromStr>(s: &str, name: &str) -> Result<T, String> {
        s.parse().map_err(|_| format!("bad value for {name}: {s}"))
    }
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-l" => o.listen = true,
            "-s" => o.server = Some(num(&val(&mut i, a)?, a)?),
            "-c" => o.client = Some(num(&val(&mut i, a)?, a)?),
            "-p" => o.port = num(&val(&mut i, a)?, a)?,
            "-f" => o.iface = Some(val(&mut i, a)?),
            "-v" => o.validate = num(&val(&mut i, a)?, a)?,
            "-t" => o.start = num(&val(&mut i, a)?, a)?,
            "-q" => o.queues = num(&val(&mut i, a)?, a)?,
            "--provider" => o.provider = Some(val(&mut i, a)?.parse()?),
            "--size" => o.size = num(&val(&mut i, a)?, a)?,
            "--batch" => o.batch = num(&val(&mut i, a)?, a)?,
            "--hold-tokens-secs" => o.hold = num(&val(&mut i, a)?, a)?,
            "--max-bytes" => o.max_bytes = num(&val(&mut i, a)?, a)?,
            "--bytes" => o.bytes = num(&val(&mut i, a)?, a)?,
            "--json" => o.json = true,
            "-h" | "--help" => return Err(String::new()),
            _ => return Err(format!("unknown argument '{a}'")),
        }
        i += 1;
    }
    if o.server.is_none() {
        return Err("-s SERVER_IP is required".into());
    }
    if o.validate == 1 {
        return Err("-v 1 makes no pattern; use 0 (off) or 2..255".into());
    }
    if !(1..=MAX_RANGES).contains(&o.batch) {
        return Err(format!("--batch must be 1..{MAX_RANGES}"));
    }
    if o.listen && o.iface.is_none() {
        return Err("server mode needs -f IFACE".into());
    }
    if o.queues == 0 {
        return Err("-q must be at least 1".into());
    }
    Ok(o)
}

#[derive(Default)]
struct Summary {
    bytes: u64,
    dmabuf_bytes: u64,
    linear_bytes: u64,
    frags: u64,
    page_aligned: u64,
    unaligned: u64,
    tokens_returned: u64,
    errors: u64,
    wrong_dmabuf: u64,
    secs: f64,
}

impl Summary {
    fn print(&self, json: bool, role: &str) {
        let rate = self.bytes as f64 / (1 << 20) as f64 / self.secs.max(1e-9);
        if json {
            println!(
                "{{\"role\":\"{role}\",\"bytes\":{},\"dmabuf_bytes\":{},\"linear_bytes\":{},\"frags\":{},\"page_aligned_frags\":{},\"non_page_aligned_frags\":{},\"tokens_returned\":{},\"validation_errors\":{},\"wrong_dmabuf\":{},\"secs\":{:.3},\"mibps\":{:.1}}}",
                self.bytes, self.dmabuf_bytes, self.linear_bytes, self.frags, self.page_aligned, self.unaligned,
                self.tokens_returned, self.errors, self.wrong_dmabuf, self.secs, rate
            );
        } else {
            println!(
                "ncdevmem-rs {role}: bytes={} dmabuf_bytes={} linear_bytes={} frags={} page_aligned={} non_page_aligned={} tokens_returned={} validation_errors={} wrong_dmabuf={} secs={:.2} mibps={:.1}",
                self.bytes, self.dmabuf_bytes, self.linear_bytes, self.frags, self.page_aligned, self.unaligned,
                self.tokens_returned, self.errors, self.wrong_dmabuf, self.secs, rate
            );
        }
    }
}

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

fn server(o: &Opts) -> io::Result<bool> {
    let iface = o.iface.as_deref().unwrap_or_default();
    let name = std::ffi::CString::new(iface).map_err(io::Error::other)?;
    // SAFETY: a NUL-terminated name.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(io::Error::other(format!("no such interface: {iface}")));
    }
    let mem = Dmabuf::new(o.provider.unwrap_or(Provider::Udmabuf), o.size)?;
    let queues: Vec<u32> = (o.start..o.start + o.queues).collect();
    let binding = match bind_rx(ifindex, mem.fd() as u32, &queues)? {
        Ok(b) => b,
        Err(e) => {
            return Err(io::Error::other(format!(
                "binding {iface} queues {queues:?} failed: {e}"
            )))
        }
    };
    eprintln!(
        "bound dma-buf ({} bytes) to {iface} RX queues {}..{}, binding id {}",
        o.size,
        o.start,
        o.start + o.queues - 1,
        binding.id
    );
    let addr = SocketAddr::new(o.server.unwrap(), o.port);
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    sock.set_reuse_address(true)?;
    sock.set_reuse_port(true)?;
    sock.bind(&addr.into())?;
    sock.listen(1)?;
    eprintln!("waiting for a connection on {addr}");
    let (conn, peer) = sock.accept()?;
    eprintln!("connection from {:?}", peer.as_socket());
    let fd = conn.as_raw_fd();
    if o.hold > 0 {
        // Held tokens can starve the NIC of buffers, so no data may arrive: wake up
        // to return them when the hold ends.
        conn.set_read_timeout(Some(Duration::from_millis(200)))?;
    }
    let mut pattern = if o.validate >= 2 {
        Pattern::new(o.validate)
    } else {
        None
    };
    let mut batch = TokenBatch::new(o.batch);
    let mut held: Vec<TokenRange> = Vec::new();
    let mut s = Summary::default();
    let mut iobuf = vec![0u8; 819200];
    let mut ctrl = vec![0u8; 80000];
    let start = Instant::now();
    let hold_until = start + Duration::from_secs(o.hold);
    let mut last_report = start;
    loop {
        let mut iov = libc::iovec {
            iov_base: iobuf.as_mut_ptr().cast(),
            iov_len: iobuf.len(),
        };
        // SAFETY: msghdr is plain data; all-zeroes is valid before filling it in.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctrl.as_mut_ptr().cast();
        msg.msg_controllen = ctrl.len();
        // SAFETY: `msg` points to valid buffers for the call.
        let n = unsafe { libc::recvmsg(fd, &mut msg, MSG_SOCK_DEVMEM) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted || e.kind() == io::ErrorKind::WouldBlock {
                if !held.is_empty() && Instant::now() >= hold_until {
                    eprintln!("returning {} held tokens", held.len());
                    s.tokens_returned += return_tokens(fd, &held)?;
                    held.clear();
                }
                continue;
            }
            return Err(io::Error::new(e.kind(), format!("recvmsg: {e}")));
        }
        if n == 0 {
            break;
        }
        let msgs = cmsg::parse(&ctrl[..msg.msg_controllen]);
        let mut cursor = 0usize;
        let mut devmem = false;
        // Validate this batch's frags under one sync of the dma-buf.
        if let Some(p) = pattern.as_mut() {
            let mut lin = 0usize;
            s.errors += mem.read_session(|r| -> io::Result<u64> {
                let mut bad = 0;
                for m in &msgs {
                    match *m {
                        DevmemMsg::Linear { size } => {
                            let end = (lin + size as usize).min(n as usize);
                            bad += p.check(&iobuf[lin.min(end)..end]);
                            lin += size as usize;
                        }
                        DevmemMsg::Dmabuf { offset, size, .. } => {
                            bad += p.check(r.bytes(offset, size as usize)?)
                        }
                        DevmemMsg::Other { .. } => {}
                    }
                }
                Ok(bad)
            })??;
        }
        for m in msgs {
            match m {
                DevmemMsg::Linear { size } => {
                    devmem = true;
                    cursor += size as usize;
                    s.linear_bytes += u64::from(size);
                }
                DevmemMsg::Dmabuf {
                    offset,
                    size,
                    token,
                    dmabuf_id,
                } => {
                    devmem = true;
                    s.frags += 1;
                    s.dmabuf_bytes += u64::from(size);
                    if size as usize % 4096 == 0 {
                        s.page_aligned += 1;
                    } else {
                        s.unaligned += 1;
                    }
                    if dmabuf_id != binding.id {
                        s.wrong_dmabuf += 1;
                    }
                    let _ = offset;
                    if Instant::now() < hold_until {
                        held.push(TokenRange {
                            start: token,
                            count: 1,
                        });
                    } else if batch.push(token) {
                        s.tokens_returned += return_tokens(fd, batch.ranges())?;
                        batch.clear();
                    }
                }
                DevmemMsg::Other { .. } => {}
            }
        }
        let _ = cursor;
        if !devmem {
            // Not devmem data (the flow missed the bound queues): plain bytes.
            if let Some(p) = pattern.as_mut() {
                s.errors += p.check(&iobuf[..n as usize]);
            }
            s.linear_bytes += n as u64;
        }
        s.bytes += n as u64;
        if !held.is_empty() && Instant::now() >= hold_until {
            eprintln!("returning {} held tokens", held.len());
            s.tokens_returned += return_tokens(fd, &held)?;
            held.clear();
        }
        if last_report.elapsed() >= Duration::from_secs(2) {
            last_report = Instant::now();
            eprint!(
                "\r{} MiB, {:.1} MiB/s   ",
                s.bytes >> 20,
                s.bytes as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64()
            );
        }
        if o.max_bytes > 0 && s.bytes >= o.max_bytes {
            break;
        }
    }
    if !held.is_empty() {
        s.tokens_returned += return_tokens(fd, &held)?;
    }
    if batch.pending() > 0 {
        s.tokens_returned += return_tokens(fd, batch.ranges())?;
        batch.clear();
    }
    s.secs = start.elapsed().as_secs_f64();
    eprintln!();
    s.print(o.json, "server");
    drop(conn);
    drop(binding);
    Ok(s.errors == 0 && s.wrong_dmabuf == 0)
}

fn client(o: &Opts) -> io::Result<bool> {
    let addr = SocketAddr::new(o.server.unwrap(), o.port);
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    sock.set_reuse_address(true)?;
    // The server's ntuple rule names the client's port: send from the same port.
    let local: SocketAddr = match addr {
        SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, o.port).into(),
        SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, o.port).into(),
    };
    sock.bind(&local.into())?;
    sock.connect(&addr.into())?;
    let mut stream: std::net::TcpStream = sock.into();
    let mut pattern = Pattern::new(o.validate.max(2)).unwrap_or(Pattern::new(7).unwrap());
    let mut buf = vec![0u8; 256 * 1024];
    let start = Instant::now();
    let mut sent = 0u64;
    while sent < o.bytes {
        let n = (o.bytes - sent).min(buf.len() as u64) as usize;
        pattern.fill(&mut buf[..n]);
        stream.write_all(&buf[..n])?;
        sent += n as u64;
    }
    stream.shutdown(std::net::Shutdown::Write)?;
    let _ = stream.read(&mut buf[..1]);
    let s = Summary {
        bytes: sent,
        secs: start.elapsed().as_secs_f64(),
        ..Summary::default()
    };
    s.print(o.json, "client");
    Ok(true)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse_args(&args) {
        Ok(o) => o,
        Err(e) => {
            if e.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("ncdevmem-rs: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let r = if o.listen { server(&o) } else { client(&o) };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("ncdevmem-rs: validation failed");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("ncdevmem-rs: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn upstream_flags_and_defaults() {
        let o = parse_args(&args("-l -s 10.9.0.2 -c 10.9.0.1 -p 5201 -v 7 -f dmnic1")).unwrap();
        assert!(o.listen);
        assert_eq!(
            (o.start, o.queues, o.port, o.validate, o.batch),
            (8, 8, 5201, 7, 128)
        );
        assert_eq!(o.iface.as_deref(), Some("dmnic1"));
        assert_eq!(o.size, 65_536_000);
        let o = parse_args(&args("-s fd00::2 -p 80 --bytes 1000 --provider dma-heap")).unwrap();
        assert!(!o.listen && o.bytes == 1000 && o.provider == Some(Provider::DmaHeap));
    }

    #[test]
    fn bad_arguments_are_refused() {
        for bad in [
            "-l -s 10.0.0.1",
            "-s nothost",
            "-s 1.2.3.4 -v 1",
            "-s 1.2.3.4 --batch 0",
            "-s 1.2.3.4 --batch 129",
            "-s 1.2.3.4 -x",
            "-p 1",
            "-s 1.2.3.4 --provider foo",
            "-s 1.2.3.4 -q 0",
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad}");
        }
        assert_eq!(parse_args(&args("--help")).err(), Some(String::new()));
    }
}
