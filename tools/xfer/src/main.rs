//! dmn-xfer: send or receive a verifiable TCP byte stream.
//!
//!     dmn-xfer send ADDR PORT BYTES [SEED]
//!     dmn-xfer recv PORT BYTES [SEED] [BIND_ADDR]
//!     dmn-xfer inject IFACE COUNT [SEED] [MAX_LEN]
//!     dmn-xfer gro-flows IFACE FLOWS [PAYLOAD]
//!     dmn-xfer packet-charge IFACE READY DONE [SECS]
//!     dmn-xfer sink PORT copy|discard [BIND_ADDR]
//!     dmn-xfer timed OUTFILE CMD [ARG...]
//!     dmn-xfer fault N IFACE combined N | split on|off
//!     dmn-xfer hds-thresh IFACE N
//!     dmn-xfer udp-recv PORT SECS
//!
//! `udp-recv` prints each UDP datagram that reaches PORT (any address) as
//! text, for SECS seconds from its start: netconsole's receiver in the
//! guest tests (busybox nc has no UDP).
//!
//! `inject` sends COUNT malformed or edge-case frames (`inject::KINDS`, in
//! turn) out of IFACE through an AF_PACKET socket and prints
//! `inject sent=N rejected=M`, M being frames the kernel refused to send.
//!
//! `gro-flows` sends the first TCP segment of each of FLOWS flows, then
//! each flow's second (`gro_flows`), as upstream's `gro` capacity test does,
//! and prints `gro-flows sent=N rejected=M`. `packet-charge` holds a packet
//! socket on IFACE unread while they arrive and prints what the socket was
//! charged for them (`packet-charge packets=N bytes=B rmem=R`): the truesize
//! a NIC's coalesced packets cost a reader.
//!
//! `sink` is the benchmark's receiver: it reads until the sender closes,
//! either copying into a user buffer (`copy`) or letting TCP drop the bytes
//! without a copy (`discard`, `MSG_TRUNC`), and prints
//! `xfer sink bytes=N secs=S mibps=R` (secs from accept to EOF).
//!
//! `timed` runs CMD, writes `pid=N` to OUTFILE as soon as it started (so a
//! caller can sample /proc/N/stat), and when it ends appends
//! `cpu_user=S cpu_sys=S` (its rusage, children included) and exits with its
//! status: the benchmark's measure of a receiver's CPU time.
//!
//! `fault` makes the Nth kernel fault site (allocation) of one ethtool
//! request fail (fail-nth) and prints `fault n=N result=ok|error:...
//! injected=yes|no passed=M` (M: sites passed when not injected); it exits 0
//! if the request succeeded, 1 if it failed, 2 if it could not be made.
//!
//! `send` and `recv` print one line
//! `xfer <role> bytes=N fnv=HEX secs=S mibps=R errors=E`;
//! the receiver exits non-zero if it got other than BYTES bytes or any byte
//! differs from the pattern. The receiver closes its connection abortively
//! (RST, `SO_LINGER` 0), killed or done: neither it nor the sender is left
//! an orphan socket that holds the NIC's receive buffers for minutes (an
//! orphan retries on a backed-off RTO up to 8 times; one killed sender kept
//! its peer's FIN, a page-pool buffer, for 125 s) while a test waits for
//! them. Done, it loses nothing by it: it closes after reading to the end.
//! The sender closes gracefully: a killed one still delivers what it had
//! sent, so the receiver reports a clean, short stream.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use dmn_xfer::{fill, mismatches, Fnv};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::Instant;

const BUF: usize = 256 * 1024;

fn report(role: &str, bytes: u64, fnv: Fnv, start: Instant, errors: u64) {
    let secs = start.elapsed().as_secs_f64();
    println!(
        "xfer {role} bytes={bytes} fnv={:016x} secs={secs:.2} mibps={:.1} errors={errors}",
        fnv.0,
        bytes as f64 / (1024.0 * 1024.0) / secs.max(1e-9)
    );
}

/// Makes `close` of `s` reset the connection and free the socket at once
/// (`SO_LINGER` on, 0 s), whether the process ends normally or is killed.
fn reset_on_close(s: &TcpStream) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `linger` is a valid `struct linger` for the length passed, and
    // the fd is open for as long as `s` lives.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            core::ptr::from_ref(&linger).cast(),
            core::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn send(addr: &str, port: u16, total: u64, seed: u64) -> std::io::Result<()> {
    let mut s = connect(addr, port)?;
    let start = Instant::now();
    let mut buf = vec![0u8; BUF];
    let mut fnv = Fnv::default();
    let mut off = 0u64;
    while off < total {
        let n = (total - off).min(BUF as u64) as usize;
        fill(seed, off, &mut buf[..n]);
        fnv.update(&buf[..n]);
        s.write_all(&buf[..n])?;
        off += n as u64;
    }
    s.shutdown(std::net::Shutdown::Write)?;
    // Wait for the receiver to close: everything sent was read.
    let _ = s.read(&mut buf[..1]);
    report("send", off, fnv, start, 0);
    Ok(())
}

fn recv(port: u16, total: u64, seed: u64, bind: &str) -> std::io::Result<bool> {
    let l = TcpListener::bind((bind, port))?;
    let (mut s, _) = l.accept()?;
    reset_on_close(&s)?;
    let start = Instant::now();
    let mut buf = vec![0u8; BUF];
    let mut scratch = vec![0u8; BUF];
    let mut fnv = Fnv::default();
    let (mut off, mut errors) = (0u64, 0u64);
    loop {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        fnv.update(&buf[..n]);
        errors += mismatches(seed, off, &buf[..n], &mut scratch);
        off += n as u64;
    }
    report("recv", off, fnv, start, errors);
    Ok(off == total && errors == 0)
}

fn connect(addr: &str, port: u16) -> std::io::Result<TcpStream> {
    let target = (addr.trim_matches(|c| c == '[' || c == ']'), port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    TcpStream::connect(target)
}

/// Writes each datagram `sock` receives to `out` until `secs` have passed.
fn udp_recv(sock: &std::net::UdpSocket, secs: u64, out: &mut impl Write) -> std::io::Result<()> {
    let end = Instant::now() + std::time::Duration::from_secs(secs);
    let mut buf = vec![0u8; 65536];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        sock.set_read_timeout(Some(left))?;
        match sock.recv(&mut buf) {
            Ok(n) => {
                out.write_all(&buf[..n])?;
                out.flush()?;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
}

fn sink(port: u16, discard: bool, bind: &str) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let l = TcpListener::bind((bind, port))?;
    let (mut s, _) = l.accept()?;
    let start = Instant::now();
    let mut buf = vec![0u8; BUF];
    let mut total = 0u64;
    loop {
        let n = if discard {
            // SAFETY: with MSG_TRUNC, TCP discards up to `len` bytes without
            // writing `buf`; the pointer is valid for `len` bytes anyway.
            let n = unsafe {
                libc::recv(
                    s.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_TRUNC,
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            n as usize
        } else {
            s.read(&mut buf)?
        };
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "xfer sink bytes={total} secs={secs:.3} mibps={:.1}",
        total as f64 / (1024.0 * 1024.0) / secs.max(1e-9)
    );
    Ok(())
}

fn timed(out: &str, cmd: &[String]) -> std::io::Result<ExitCode> {
    let child = std::process::Command::new(&cmd[0])
        .args(&cmd[1..])
        .spawn()?;
    let pid = child.id() as libc::pid_t;
    std::fs::write(out, format!("pid={pid}\n"))?;
    let mut status = 0;
    // SAFETY: rusage is plain data; all-zeroes is a valid start.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our unwaited child; `status` and `ru` are valid for writes.
    while unsafe { libc::wait4(pid, &mut status, 0, &mut ru) } < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let mut f = std::fs::OpenOptions::new().append(true).open(out)?;
    writeln!(
        f,
        "cpu_user={:.3} cpu_sys={:.3}",
        secs(ru.ru_utime),
        secs(ru.ru_stime)
    )?;
    Ok(if libc::WIFEXITED(status) {
        ExitCode::from(libc::WEXITSTATUS(status) as u8)
    } else {
        ExitCode::from(128 + libc::WTERMSIG(status) as u8)
    })
}

/// An AF_PACKET raw socket bound to IFACE for ethertype `proto` (0: sending
/// only), closed on drop.
struct PacketSocket(std::os::fd::OwnedFd);

impl PacketSocket {
    fn open(iface: &str, proto: u16) -> std::io::Result<Self> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let name = std::ffi::CString::new(iface).map_err(std::io::Error::other)?;
        // SAFETY: a NUL-terminated name.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if ifindex == 0 {
            return Err(std::io::Error::other(format!("no interface {iface}")));
        }
        // SAFETY: plain syscall.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(proto.to_be())) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a descriptor we just opened and own alone.
        let sock = Self(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) });
        // SAFETY: sockaddr_ll is plain data; all-zeroes is a valid start.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto.to_be();
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: `sll` is a valid sockaddr_ll of the size given.
        let rc = unsafe {
            libc::bind(
                sock.0.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(sock)
    }

    /// Sends one frame; whether the kernel took all of it.
    fn send(&self, frame: &[u8]) -> bool {
        use std::os::fd::AsRawFd;
        // SAFETY: `frame` is valid for `frame.len()` bytes.
        let n = unsafe { libc::send(self.0.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        n == frame.len() as isize
    }

    /// Sets an integer socket option.
    fn set_int(&self, level: i32, name: i32, value: i32) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: `value` is a valid int of the size given.
        let rc = unsafe {
            libc::setsockopt(
                self.0.as_raw_fd(),
                level,
                name,
                (&value as *const i32).cast(),
                std::mem::size_of::<i32>() as u32,
            )
        };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

fn inject(iface: &str, count: u64, seed: u64, max_len: usize) -> std::io::Result<()> {
    use dmn_xfer::inject::{frame, Rng};
    let sock = PacketSocket::open(iface, 0)?;
    let mut r = Rng(seed.max(1));
    let mut buf = Vec::with_capacity(max_len);
    let (mut sent, mut rejected) = (0u64, 0u64);
    for i in 0..count {
        frame(i as usize, &mut r, max_len, &mut buf);
        if sock.send(&buf) {
            sent += 1;
        } else {
            rejected += 1;
        }
    }
    println!("inject sent={sent} rejected={rejected}");
    Ok(())
}

/// Sends the first segment of each of FLOWS flows, then each one's second
/// (`gro_flows`), out of IFACE; prints `gro-flows sent=N rejected=M`.
fn gro_flows(iface: &str, flows: u16, payload: usize) -> std::io::Result<()> {
    use dmn_xfer::gro_flows::{frame_len, segment, MAX_FLOWS};
    if flows > MAX_FLOWS || frame_len(payload) > 1514 {
        return Err(std::io::Error::other(format!(
            "at most {MAX_FLOWS} flows of a 1514-byte frame"
        )));
    }
    let sock = PacketSocket::open(iface, 0)?;
    let mut buf = Vec::with_capacity(frame_len(payload));
    let (mut sent, mut rejected) = (0u64, 0u64);
    for second in [false, true] {
        for flow in 0..flows {
            segment(flow, second, payload, &mut buf);
            if sock.send(&buf) {
                sent += 1;
            } else {
                rejected += 1;
            }
        }
    }
    println!("gro-flows sent={sent} rejected={rejected}");
    Ok(())
}

/// Holds an unread packet socket on IFACE (incoming IPv4, a 16 MiB buffer)
/// from when it creates READY until DONE exists (at most SECS seconds), then
/// prints what it was charged for what it held:
/// `packet-charge packets=N bytes=B rmem=R` (R: the truesize of the N
/// packets, as `SO_MEMINFO` reports it).
fn packet_charge(iface: &str, ready: &str, done: &str, secs: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // (Not in every libc crate: <linux/socket.h>, <linux/if_packet.h>.)
    const SO_MEMINFO: i32 = 55;
    const PACKET_IGNORE_OUTGOING: i32 = 23;
    let sock = PacketSocket::open(iface, 0x0800)?;
    sock.set_int(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 16 << 20)?;
    sock.set_int(libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
    std::fs::write(ready, b"")?;
    let deadline = Instant::now() + std::time::Duration::from_secs(secs);
    while !std::path::Path::new(done).exists() {
        if Instant::now() > deadline {
            return Err(std::io::Error::other(format!(
                "{done} did not appear in {secs} s"
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let fd = sock.0.as_raw_fd();
    let mut info = [0u32; 16];
    let mut len = std::mem::size_of_val(&info) as u32;
    // SAFETY: `info` is valid for `len` bytes, which the kernel may shorten.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // (SK_MEMINFO_RMEM_ALLOC is the first.)
    let rmem = info[0];
    let mut buf = vec![0u8; 2048];
    let (mut packets, mut bytes) = (0u64, 0u64);
    loop {
        // SAFETY: `buf` is valid for its length; MSG_TRUNC returns the
        // packet's whole length.
        let n = unsafe {
            libc::recv(
                fd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::WouldBlock {
                break;
            }
            return Err(e);
        }
        packets += 1;
        bytes += n as u64;
    }
    println!("packet-charge packets={packets} bytes={bytes} rmem={rmem}");
    Ok(())
}

/// `ethtool -G IFACE hds-thresh N` (Debian's ethtool 6.14 cannot set it yet),
/// through ncdevmem-rs's ethtool netlink client; prints what the NIC then
/// reports: `hds-thresh=N hds-thresh-max=M`.
fn hds_thresh(iface: &str, thresh: u32) -> std::io::Result<()> {
    use ncdevmem_rs::ethtool_nl::EthtoolNl;
    let ifindex = ncdevmem_rs::nic::ifindex(iface)?;
    let mut nl = EthtoolNl::open()?.map_err(std::io::Error::other)?;
    nl.set_hds_thresh(ifindex, thresh)?
        .map_err(std::io::Error::other)?;
    let r = nl.rings(ifindex)?.map_err(std::io::Error::other)?;
    let show = |v: Option<u32>| v.map_or("none".to_string(), |v| v.to_string());
    println!(
        "hds-thresh={} hds-thresh-max={}",
        show(r.hds_thresh),
        show(r.hds_thresh_max)
    );
    Ok(())
}

/// One ethtool request (through ncdevmem-rs's netlink client) with fail-nth
/// armed around it; Ok(whether the request succeeded).
fn fault(n: u32, iface: &str, op: &[String]) -> std::io::Result<bool> {
    use ncdevmem_rs::ethtool_nl::{ChannelsSet, DataSplit};
    use ncdevmem_rs::fault::{FailNth, Injection};
    use ncdevmem_rs::nic::{Nic, NicOps};
    let bad = || std::io::Error::other("fault: want combined N or split on|off");
    // Sockets are opened before arming: only the request itself counts.
    let mut nic = Nic::open(iface).map_err(std::io::Error::other)?;
    enum Request {
        Combined(u32),
        Split(DataSplit),
    }
    let request = match op {
        [c, n] if c == "combined" => Request::Combined(n.parse().map_err(|_| bad())?),
        [c, v] if c == "split" && v == "on" => Request::Split(DataSplit::Enabled),
        [c, v] if c == "split" && v == "off" => Request::Split(DataSplit::Disabled),
        _ => return Err(bad()),
    };
    let armed = FailNth::arm(n)?;
    let result = match request {
        Request::Combined(n) => nic.set_channels(&ChannelsSet {
            rx: None,
            tx: None,
            other: None,
            combined: Some(n),
        }),
        Request::Split(v) => nic.set_data_split(v),
    }
    .map_err(|e| e.to_string());
    let injection = armed.disarm()?;
    let (injected, passed) = match injection {
        Injection::Injected => ("yes", 0),
        Injection::NotReached { passed } => ("no", passed),
    };
    println!(
        "fault n={n} result={} injected={injected} passed={passed}",
        match &result {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("error:{}", e.replace(' ', "_")),
        }
    );
    Ok(result.is_ok())
}

/// Send or receive a verifiable TCP byte stream, and the guest tests' other
/// small tools.
#[derive(Debug, PartialEq, Parser)]
#[command(name = "dmn-xfer")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, PartialEq, Subcommand)]
enum Cmd {
    /// Send BYTES of the pattern of SEED to ADDR:PORT.
    Send {
        addr: String,
        port: u16,
        bytes: u64,
        #[arg(default_value_t = 1)]
        seed: u64,
    },
    /// Receive one stream on PORT and check it is BYTES of the pattern of SEED.
    Recv {
        port: u16,
        bytes: u64,
        #[arg(default_value_t = 1)]
        seed: u64,
        #[arg(default_value = "::")]
        bind_addr: String,
    },
    /// Send COUNT malformed or edge-case frames out of IFACE.
    Inject {
        iface: String,
        count: u64,
        #[arg(default_value_t = 1)]
        seed: u64,
        #[arg(default_value_t = 1514)]
        max_len: usize,
    },
    /// Send the first segment of each of FLOWS TCP flows of PAYLOAD bytes out
    /// of IFACE, then each one's second: coalescable, as upstream's gro sends.
    GroFlows {
        iface: String,
        flows: u16,
        #[arg(default_value_t = 200)]
        payload: usize,
    },
    /// Hold an unread packet socket on IFACE from creating READY until DONE
    /// exists (at most SECS), then print what it was charged.
    PacketCharge {
        iface: String,
        ready: String,
        done: String,
        #[arg(default_value_t = 60)]
        secs: u64,
    },
    /// Read one stream on PORT until the sender closes (the benchmark's receiver).
    Sink {
        port: u16,
        mode: SinkMode,
        #[arg(default_value = "::")]
        bind_addr: String,
    },
    /// Run CMD; write its pid to OUTFILE at once and its CPU time at the end.
    Timed {
        outfile: String,
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        cmd: Vec<String>,
    },
    /// One ethtool request on IFACE with the Nth fault site armed:
    /// `combined N` or `split on|off`.
    Fault {
        n: u32,
        iface: String,
        #[arg(num_args = 2, required = true)]
        request: Vec<String>,
    },
    /// Set IFACE's HDS threshold (ethtool netlink) and print what it reports.
    HdsThresh { iface: String, thresh: u32 },
    /// Create a netkit pair PRIMARY/PEER with RX_QUEUES receive queues.
    NetkitAdd {
        primary: String,
        peer: String,
        rx_queues: u32,
    },
    /// Lease queue QUEUE of device PHYS_IFINDEX into VIRT_IFACE (netdev
    /// queue-create); prints the leased queue's id on VIRT_IFACE.
    QueueLease {
        virt_iface: String,
        phys_ifindex: u32,
        queue: u32,
        netns_id: Option<i32>,
    },
    /// Copy stdin to stdout with Rust symbol names demangled (perf reports
    /// of the module), without their hashes.
    Demangle,
    /// Print "QUEUE NAPI_ID" for each RX queue of IFACE (0: none).
    NapiIds { iface: String },
    /// Print IFACE's qstats (netdev qstats-get): one line of the totals,
    /// "device name=value ...", or with --per-queue one per queue,
    /// "rx|tx ID name=value ...": the fields its driver reports.
    Qstats {
        iface: String,
        #[arg(long)]
        per_queue: bool,
    },
    /// Print the UDP datagrams reaching PORT for SECS seconds.
    UdpRecv { port: u16, secs: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
enum SinkMode {
    /// Copy into a user buffer.
    Copy,
    /// Let TCP drop the bytes without a copy (MSG_TRUNC).
    Discard,
}

/// An error of a call that reports socket errors and netlink errors apart.
fn flatten<T, E: std::fmt::Display>(r: std::io::Result<Result<T, E>>) -> Result<T, String> {
    r.map_err(|e| e.to_string())?.map_err(|e| e.to_string())
}

/// Runs one subcommand: Ok(whether it succeeded), Err(what went wrong).
fn run(cmd: Cmd) -> Result<bool, String> {
    let io = |e: std::io::Error| e.to_string();
    match cmd {
        Cmd::Send {
            addr,
            port,
            bytes,
            seed,
        } => send(&addr, port, bytes, seed).map(|()| true).map_err(io),
        Cmd::Recv {
            port,
            bytes,
            seed,
            bind_addr,
        } => recv(port, bytes, seed, &bind_addr).map_err(io),
        Cmd::Inject {
            iface,
            count,
            seed,
            max_len,
        } => inject(&iface, count, seed, max_len)
            .map(|()| true)
            .map_err(io),
        Cmd::GroFlows {
            iface,
            flows,
            payload,
        } => gro_flows(&iface, flows, payload).map(|()| true).map_err(io),
        Cmd::PacketCharge {
            iface,
            ready,
            done,
            secs,
        } => packet_charge(&iface, &ready, &done, secs)
            .map(|()| true)
            .map_err(io),
        Cmd::Sink {
            port,
            mode,
            bind_addr,
        } => sink(port, mode == SinkMode::Discard, &bind_addr)
            .map(|()| true)
            .map_err(io),
        Cmd::Timed { .. } => unreachable!("timed exits with its command's status"),
        Cmd::UdpRecv { port, secs } => {
            let sock = std::net::UdpSocket::bind(("::", port)).map_err(io)?;
            udp_recv(&sock, secs, &mut std::io::stdout().lock())
                .map(|()| true)
                .map_err(io)
        }
        Cmd::Fault { n, iface, request } => fault(n, &iface, &request).map_err(io),
        Cmd::HdsThresh { iface, thresh } => hds_thresh(&iface, thresh).map(|()| true).map_err(io),
        Cmd::NetkitAdd {
            primary,
            peer,
            rx_queues,
        } => flatten(dmn_xfer::netkit::add_pair(&primary, &peer, rx_queues)).map(|()| true),
        Cmd::QueueLease {
            virt_iface,
            phys_ifindex,
            queue,
            netns_id,
        } => {
            let virt = ncdevmem_rs::nic::ifindex(&virt_iface).map_err(|e| e.to_string())?;
            let id = flatten(ncdevmem_rs::netdev::queue_create_lease(
                virt,
                phys_ifindex,
                queue,
                netns_id,
            ))?;
            // The leased queue's id on the virtual device.
            println!("{id}");
            Ok(true)
        }
        Cmd::Demangle => demangle_lines().map(|()| true).map_err(io),
        Cmd::Qstats { iface, per_queue } => {
            let i = ncdevmem_rs::nic::ifindex(&iface).map_err(|e| e.to_string())?;
            for q in flatten(ncdevmem_rs::netdev::qstats(i, per_queue))? {
                let what = q
                    .queue
                    .map_or_else(|| "device".to_string(), |(t, id)| format!("{t} {id}"));
                let fields: Vec<String> =
                    q.fields.iter().map(|(n, v)| format!("{n}={v}")).collect();
                println!("{what} {}", fields.join(" "));
            }
            Ok(true)
        }
        Cmd::NapiIds { iface } => {
            let i = ncdevmem_rs::nic::ifindex(&iface).map_err(|e| e.to_string())?;
            // One line per RX queue: "QUEUE NAPI_ID" (0: none).
            for (q, napi) in flatten(ncdevmem_rs::netdev::rx_queue_napis(i))? {
                println!("{q} {}", napi.unwrap_or(0));
            }
            Ok(true)
        }
    }
}

/// `demangle`: every word of stdin that is a Rust symbol, demangled.
fn demangle_lines() -> std::io::Result<()> {
    use std::io::{BufRead, Write};
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        writeln!(out, "{}", dmn_xfer::demangle::words(&line?))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    // A refused command line: the usage and exit 2.
    let matches = Cli::command().get_matches();
    let name = matches.subcommand_name().unwrap_or_default().to_string();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Cmd::Timed { outfile, cmd } = &cli.cmd {
        return timed(outfile, cmd).unwrap_or_else(|e| {
            eprintln!("dmn-xfer timed: {}: {e}", cmd[0]);
            ExitCode::FAILURE
        });
    }
    let is_fault = matches!(cli.cmd, Cmd::Fault { .. });
    match run(cli.cmd) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("dmn-xfer {name}: {e}");
            // fault: 2 when the request could not be made at all.
            if is_fault {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Cmd, clap::error::ErrorKind> {
        Cli::try_parse_from(std::iter::once("dmn-xfer").chain(s.split_whitespace()))
            .map(|c| c.cmd)
            .map_err(|e| e.kind())
    }

    #[test]
    fn the_guest_tests_command_lines() {
        assert_eq!(
            parse("send 10.9.0.2 5201 1048576"),
            Ok(Cmd::Send {
                addr: "10.9.0.2".into(),
                port: 5201,
                bytes: 1 << 20,
                seed: 1
            })
        );
        assert_eq!(
            parse("recv 5201 1099511627776 2"),
            Ok(Cmd::Recv {
                port: 5201,
                bytes: 1 << 40,
                seed: 2,
                bind_addr: "::".into()
            })
        );
        assert_eq!(
            parse("sink 5300 discard 10.9.0.2"),
            Ok(Cmd::Sink {
                port: 5300,
                mode: SinkMode::Discard,
                bind_addr: "10.9.0.2".into()
            })
        );
        assert_eq!(
            parse("timed /tmp/t ncdevmem-rs -l -s 10.9.0.2 -v 7"),
            Ok(Cmd::Timed {
                outfile: "/tmp/t".into(),
                cmd: "ncdevmem-rs -l -s 10.9.0.2 -v 7"
                    .split(' ')
                    .map(String::from)
                    .collect()
            })
        );
        assert_eq!(
            parse("fault 3 dmnic1 split off"),
            Ok(Cmd::Fault {
                n: 3,
                iface: "dmnic1".into(),
                request: vec!["split".into(), "off".into()]
            })
        );
        assert_eq!(
            parse("queue-lease nkc 7 15"),
            Ok(Cmd::QueueLease {
                virt_iface: "nkc".into(),
                phys_ifindex: 7,
                queue: 15,
                netns_id: None
            })
        );
        assert_eq!(
            parse("hds-thresh dmnic1 1024"),
            Ok(Cmd::HdsThresh {
                iface: "dmnic1".into(),
                thresh: 1024
            })
        );
        assert!(matches!(parse("napi-ids dmnic0"), Ok(Cmd::NapiIds { .. })));
        assert!(matches!(
            parse("qstats dmnic0 --per-queue"),
            Ok(Cmd::Qstats {
                per_queue: true,
                ..
            })
        ));
        assert_eq!(
            parse("udp-recv 6666 30"),
            Ok(Cmd::UdpRecv {
                port: 6666,
                secs: 30
            })
        );
        assert!(matches!(
            parse("netkit-add nkh nkc 16"),
            Ok(Cmd::NetkitAdd { .. })
        ));
        assert!(matches!(
            parse("inject dmnic0 5000 3"),
            Ok(Cmd::Inject { .. })
        ));
        assert_eq!(
            parse("gro-flows dmnic0 256"),
            Ok(Cmd::GroFlows {
                iface: "dmnic0".into(),
                flows: 256,
                payload: 200
            })
        );
        assert_eq!(
            parse("packet-charge dmnic1 /tmp/r /tmp/d 30"),
            Ok(Cmd::PacketCharge {
                iface: "dmnic1".into(),
                ready: "/tmp/r".into(),
                done: "/tmp/d".into(),
                secs: 30
            })
        );
    }

    #[test]
    fn bad_command_lines_are_refused() {
        for bad in [
            "",
            "send 10.9.0.2 5201",
            "send 10.9.0.2 70000 1",
            "recv x 1",
            "sink 5300 zerocopy",
            "timed /tmp/t",
            "fault 3 dmnic1 split",
            "fault x dmnic1 combined 4",
            "queue-lease nkc 7",
            "hds-thresh dmnic1 -1",
            "gro-flows dmnic0 70000",
            "packet-charge dmnic1 /tmp/r",
            "nope",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn udp_recv_prints_every_datagram_until_its_time_is_up() {
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = sock.local_addr().unwrap();
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for line in ["one\n", "two\n", "three\n"] {
            sender.send_to(line.as_bytes(), addr).unwrap();
        }
        let start = Instant::now();
        let mut out = Vec::new();
        udp_recv(&sock, 1, &mut out).unwrap();
        assert_eq!(out, b"one\ntwo\nthree\n");
        assert!(start.elapsed() >= std::time::Duration::from_secs(1));
    }
}
