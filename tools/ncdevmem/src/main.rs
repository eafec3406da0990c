//! ncdevmem-rs: receive TCP into a dma-buf with devmem TCP, or send to such a
//! receiver. Accepts upstream ncdevmem's flags.
//!
//! Server: `ncdevmem-rs -l -s SERVER_IP -p PORT -f IFACE [-c CLIENT_IP] [-v N] [-t START] [-q NUM]`
//! Client: `ncdevmem-rs -s SERVER_IP -p PORT [-v N] --bytes N`
//! Devmem TX: `ncdevmem-rs -s SERVER_IP -p PORT -f IFACE [-c CLIENT_IP] [-z CHUNK] [-v N --bytes N]`
//! Checks: `ncdevmem-rs --selftest -f IFACE [-t START] [-q NUM]`
//!
//! The server configures the NIC as upstream does (header split on, RSS over
//! queues 0..START-1, an ntuple rule steering the flow to queue START) and
//! restores it on exit, Ctrl-C or SIGTERM; `--no-config` leaves it alone.

use ncdevmem_rs::cli::{parse_args, FaultPhase, Opts, MAX_HELD_CHUNKS};
use ncdevmem_rs::cmsg::{self, DevmemMsg, MSG_SOCK_DEVMEM, SO_DEVMEM_DONTNEED};
use ncdevmem_rs::dmabuf::{page_size, Dmabuf, Provider};
use ncdevmem_rs::ethtool_ioctl::{unmap, FlowRule};
use ncdevmem_rs::ethtool_nl::DataSplit;
use ncdevmem_rs::fault::{FailNth, Injection};
use ncdevmem_rs::hello;
use ncdevmem_rs::host_mem::HostMem;
use ncdevmem_rs::netdev::{page_pools, BindRx, Binding};
use ncdevmem_rs::nic::{self, Nic, NicConfig};
use ncdevmem_rs::outcome::Outcome;
use ncdevmem_rs::pattern::Pattern;
use ncdevmem_rs::personality::NicIdentity;
use ncdevmem_rs::progress::Progress;
use ncdevmem_rs::tokens::{calls, TokenBatch, TokenRange};
use ncdevmem_rs::zcrx::{Area, Chunk, Event, EventLog, Zcrx};
use ncdevmem_rs::{client, devmem_client};
use ncdevmem_rs::{selftest, signals, token_abuse};
use socket2::{Domain, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Summary {
    bytes: u64,
    dmabuf_bytes: u64,
    linear_bytes: u64,
    frags: u64,
    page_aligned: u64,
    unaligned: u64,
    largest_frag: u32,
    tokens_returned: u64,
    errors: u64,
    wrong_dmabuf: u64,
    secs: f64,
    /// The NIC received on: its driver (and devmemnic's personality).
    nic: String,
}

impl Summary {
    fn print(&self, json: bool, role: &str) {
        let rate = self.bytes as f64 / (1 << 20) as f64 / self.secs.max(1e-9);
        if json {
            println!(
                "{{\"role\":\"{role}\",\"bytes\":{},\"dmabuf_bytes\":{},\"linear_bytes\":{},\"frags\":{},\"page_aligned_frags\":{},\"non_page_aligned_frags\":{},\"largest_frag\":{},\"tokens_returned\":{},\"validation_errors\":{},\"wrong_dmabuf\":{},\"secs\":{:.3},\"mibps\":{:.1},\"nic\":\"{}\"}}",
                self.bytes, self.dmabuf_bytes, self.linear_bytes, self.frags, self.page_aligned, self.unaligned,
                self.largest_frag, self.tokens_returned, self.errors, self.wrong_dmabuf, self.secs, rate, self.nic
            );
        } else {
            println!(
                "ncdevmem-rs {role}: bytes={} dmabuf_bytes={} linear_bytes={} frags={} page_aligned={} non_page_aligned={} largest_frag={} tokens_returned={} validation_errors={} wrong_dmabuf={} secs={:.2} mibps={:.1} nic={}",
                self.bytes, self.dmabuf_bytes, self.linear_bytes, self.frags, self.page_aligned, self.unaligned,
                self.largest_frag, self.tokens_returned, self.errors, self.wrong_dmabuf, self.secs, rate, self.nic
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

/// Configures the NIC as upstream's server does (its `ethtool` commands):
/// flow steering reset, header split on, RSS over queues 0..START-1, and a
/// rule steering the flow (from -c CLIENT_IP:PORT if given) to queue START.
fn configure(o: &Opts, iface: &str) -> io::Result<NicConfig<Nic>> {
    let server = unmap(o.server.unwrap());
    let rule = FlowRule::tcp(
        o.client,
        Some(server),
        o.client.map(|_| o.port),
        Some(o.port),
        o.start,
    )
    .map_err(io::Error::other)?;
    let mut cfg = NicConfig::new(Nic::open(iface)?);
    // Upstream: `ethtool -K IF ntuple off; ethtool -K IF ntuple on`. Here the
    // rules are deleted one by one and put back on exit.
    cfg.reset_rules()?;
    match cfg.ensure_ntuple() {
        // Some drivers take rules without the feature flag (or fix it on).
        Err(e) if e.unsupported() => eprintln!("ncdevmem-rs: warning: {e}"),
        Err(e) => return Err(e.into()),
        Ok(_) => {}
    }
    cfg.set_data_split(DataSplit::Enabled)?;
    cfg.set_rss_equal(o.start)?;
    cfg.add_rule(&rule)?;
    Ok(cfg)
}

/// Binds the dma-buf to RX queues START..START+NUM-1 (with `-b`'s buffer
/// size); the binding lasts as long as the returned [`Binding`].
fn bind(o: &Opts, iface: &str, ifindex: u32, mem: &Dmabuf) -> io::Result<Binding> {
    let queues: Vec<u32> = (o.start..o.start + o.queues).collect();
    let bound = BindRx {
        rx_page_size: o.rx_page_size,
        ..BindRx::new(ifindex, mem.fd() as u32, &queues)
    }
    .send()?;
    let binding = bound.map_err(|e| {
        io::Error::other(format!(
            "binding {iface} queues {queues:?}{} failed: {e}",
            o.rx_page_size
                .map(|s| format!(" with {s}-byte buffers"))
                .unwrap_or_default()
        ))
    })?;
    eprintln!(
        "bound dma-buf ({} bytes) to {iface} RX queues {}..{}{}, binding id {}",
        mem.size(),
        o.start,
        o.start + o.queues - 1,
        o.rx_page_size
            .map(|s| format!(" ({s}-byte buffers)"))
            .unwrap_or_default(),
        binding.id
    );
    Ok(binding)
}

/// Configures the NIC (unless --no-config; the config lands in `cfg`, to be
/// restored when dropped) and binds the dma-buf to the queues. `None`: a
/// signal came first.
///
/// With --fail-nth, a kernel fault is injected somewhere in configuring and
/// binding (or, --fail-from bind, in binding); whatever fails must fail
/// cleanly, and the NIC is restored as on any other error (after disarming).
fn setup(
    o: &Opts,
    iface: &str,
    ifindex: u32,
    mem: &Dmabuf,
    cfg: &mut Option<NicConfig<Nic>>,
) -> io::Result<Option<Binding>> {
    let mut fail = None;
    let bound = (|| {
        if o.fail_from == FaultPhase::Setup {
            fail = o.fail_nth.map(FailNth::arm).transpose()?;
        }
        if !o.no_config {
            *cfg = Some(configure(o, iface)?);
        }
        if signals::stop_requested() {
            return Ok(None);
        }
        if o.fail_from == FaultPhase::Bind {
            fail = o.fail_nth.map(FailNth::arm).transpose()?;
        }
        bind(o, iface, ifindex, mem).map(Some)
    })();
    if let Some(f) = fail {
        match f.disarm()? {
            Injection::Injected => eprintln!("fail-nth {}: injected", o.fail_nth.unwrap_or(0)),
            Injection::NotReached { passed } => eprintln!(
                "fail-nth {}: not reached ({passed} fault sites passed)",
                o.fail_nth.unwrap_or(0)
            ),
        }
    }
    bound
}

/// Listens on SERVER_IP:PORT and accepts one connection; `None`: a signal
/// came first.
fn accept_connection(o: &Opts) -> io::Result<Option<Socket>> {
    let addr = SocketAddr::new(o.server.unwrap(), o.port);
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    sock.set_reuse_address(true)?;
    sock.set_reuse_port(true)?;
    sock.bind(&addr.into())?;
    sock.listen(1)?;
    eprintln!("waiting for a connection on {addr}");
    let (conn, peer) = loop {
        match sock.accept() {
            Ok(c) => break c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                if signals::stop_requested() {
                    eprintln!("ncdevmem-rs: interrupted while waiting for a connection");
                    return Ok(None);
                }
            }
            Err(e) => return Err(io::Error::new(e.kind(), format!("accept: {e}"))),
        }
    };
    eprintln!("connection from {:?}", peer.as_socket());
    if o.hold > 0 {
        // Held tokens can starve the NIC of buffers, so no data may arrive: wake up
        // to return them when the hold ends.
        conn.set_read_timeout(Some(Duration::from_millis(200)))?;
    }
    Ok(Some(conn))
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
struct Receiver<'a> {
    o: &'a Opts,
    conn: Socket,
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
    s: Summary,
}

impl<'a> Receiver<'a> {
    fn new(o: &'a Opts, conn: Socket, mem: &'a Dmabuf, binding_id: u32) -> Self {
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
    fn run(&mut self) -> io::Result<bool> {
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
        let devmem = self.count_and_return(&msgs, returned_by_abuse)?;
        if !devmem {
            // Not devmem data (the flow missed the bound queues): plain bytes.
            if let Some(p) = self.pattern.as_mut() {
                self.s.errors += p.check(&self.iobuf[..n]);
            }
            self.s.linear_bytes += n as u64;
        }
        self.s.bytes += n as u64;
        Ok(())
    }

    /// Checks this read's frags against the pattern under one sync of the
    /// dma-buf.
    fn validate(&mut self, msgs: &[DevmemMsg], n: usize) -> io::Result<()> {
        let Some(p) = self.pattern.as_mut() else {
            return Ok(());
        };
        let iobuf = &self.iobuf;
        let mut lin = 0usize;
        self.s.errors += self.mem.read_session(|r| -> io::Result<u64> {
            let mut bad = 0;
            for m in msgs {
                match *m {
                    DevmemMsg::Linear { size } => {
                        let end = (lin + size as usize).min(n);
                        bad += p.check(&iobuf[lin.min(end)..end]);
                        lin += size as usize;
                    }
                    DevmemMsg::Dmabuf { offset, size, .. } => {
                        bad += p.check(r.bytes(offset, size as usize)?)
                    }
                    _ => {}
                }
            }
            Ok(bad)
        })??;
        Ok(())
    }

    /// --abuse-tokens: once, with two of this read's tokens (after validation:
    /// a returned buffer may be refilled at once). Returns the token the
    /// checks gave back (counted here, skipped when returning the rest).
    fn abuse_tokens(&mut self, msgs: &[DevmemMsg]) -> io::Result<Option<u32>> {
        if !self.o.abuse_tokens || self.abused {
            return Ok(None);
        }
        let mut toks = msgs.iter().filter_map(|m| match m {
            DevmemMsg::Dmabuf { token, .. } => Some(*token),
            _ => None,
        });
        let (Some(t0), Some(t1)) = (toks.next(), toks.next()) else {
            return Ok(None);
        };
        let checks = token_abuse::run(self.fd(), t0, t1)
            .map_err(|e| io::Error::other(format!("SO_DEVMEM_DONTNEED misuse: {e}")))?;
        eprintln!("token abuse: {checks} checks passed");
        self.abused = true;
        self.s.tokens_returned += 1;
        Ok(Some(t0))
    }

    /// Counts this read's frags and gives their tokens back (or holds them);
    /// returns whether any came through devmem.
    fn count_and_return(
        &mut self,
        msgs: &[DevmemMsg],
        returned_by_abuse: Option<u32>,
    ) -> io::Result<bool> {
        let holding = !self.hold_done;
        let mut devmem = false;
        for m in msgs {
            match *m {
                DevmemMsg::Linear { size } => {
                    devmem = true;
                    self.s.linear_bytes += u64::from(size);
                }
                DevmemMsg::Dmabuf {
                    size,
                    token,
                    dmabuf_id,
                    ..
                } => {
                    devmem = true;
                    let s = &mut self.s;
                    s.frags += 1;
                    s.dmabuf_bytes += u64::from(size);
                    s.largest_frag = s.largest_frag.max(size);
                    if (size as usize).is_multiple_of(4096) {
                        s.page_aligned += 1;
                    } else {
                        s.unaligned += 1;
                    }
                    if dmabuf_id != self.binding_id {
                        s.wrong_dmabuf += 1;
                    }
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
                _ => {}
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
        Ok(devmem)
    }
}

/// Prints the summary, closes the connection, then unbinds (the NIC is
/// restored after, by the caller's config guard); the run's outcome.
fn finish(o: &Opts, rx: Receiver, binding: Binding, interrupted: bool) -> Outcome {
    if interrupted {
        eprintln!("ncdevmem-rs: interrupted; restoring");
    }
    let s = rx.s;
    s.print(o.json, "server");
    drop(rx.conn);
    drop(binding);
    if o.fail_on_linear && s.linear_bytes > 0 {
        eprintln!(
            "ncdevmem-rs: -L: {} bytes arrived outside the dma-buf",
            s.linear_bytes
        );
    }
    if interrupted {
        Outcome::Interrupted
    } else if s.errors == 0 && s.wrong_dmabuf == 0 && !(o.fail_on_linear && s.linear_bytes > 0) {
        Outcome::Ok
    } else {
        Outcome::ValidationFailed
    }
}

/// The devmem server: the NIC configured, the dma-buf bound, one connection
/// received into it, the summary.
fn server(o: &Opts) -> io::Result<Outcome> {
    let iface = o.iface.as_deref().unwrap_or_default();
    let ifindex = nic::ifindex(iface)?;
    signals::install()?;
    // Buffers larger than a page must each be physically contiguous: huge
    // pages under the udmabuf, as upstream's -b does.
    let huge = o.rx_page_size.is_some_and(|s| s as usize > page_size());
    let mem = Dmabuf::with_backing(o.provider.unwrap_or(Provider::Udmabuf), o.size, huge)?;
    // Dropped after the binding (declared later, dropped earlier): the NIC is
    // restored once the queues are unbound, on every way out of here.
    let mut cfg = None;
    let Some(binding) = setup(o, iface, ifindex, &mem, &mut cfg)? else {
        return Ok(Outcome::Interrupted);
    };
    let nic = NicIdentity::of(iface);
    if let Some(id) = &nic {
        eprintln!(
            "nic: {iface} is {}: small TCP segments: {}",
            id.name(),
            id.small_segments()
        );
    }
    let Some(conn) = accept_connection(o)? else {
        return Ok(Outcome::Interrupted);
    };
    if o.hello > 0 {
        hello::receive(conn.as_raw_fd(), o.hello.into())?;
    }
    let mut rx = Receiver::new(o, conn, &mem, binding.id);
    rx.s.nic = nic.map_or_else(|| "unknown".into(), |id| id.name());
    let interrupted = rx.run()?;
    Ok(finish(o, rx, binding, interrupted))
}

/// The memory of one zcrx area: a dma-buf, or (--zcrx-host-memory) host
/// pages.
enum AreaMem {
    Dmabuf(Dmabuf),
    Host(HostMem),
}

impl AreaMem {
    fn new(o: &Opts, size: usize) -> io::Result<Self> {
        if o.zcrx_host_memory {
            return Ok(Self::Host(HostMem::new(size)?));
        }
        Ok(Self::Dmabuf(Dmabuf::new(
            o.provider.unwrap_or(Provider::Udmabuf),
            size,
        )?))
    }

    /// What to register.
    fn area(&self) -> Area {
        match self {
            Self::Dmabuf(m) => Area::Dmabuf {
                fd: m.fd(),
                len: m.size() as u64,
            },
            Self::Host(m) => Area::Host {
                addr: m.addr(),
                len: m.size() as u64,
            },
        }
    }

    /// Checks the chunks `run` (area, offset, length; the stream's order)
    /// against `p`; returns the bytes that differ (a dma-buf in one read
    /// session: a session syncs the whole buffer).
    fn check(&self, run: &[(usize, u64, u32)], p: &mut Pattern) -> io::Result<u64> {
        match self {
            Self::Dmabuf(m) => m.read_session(|r| -> io::Result<u64> {
                let mut bad = 0;
                for &(_, off, len) in run {
                    bad += p.check(r.bytes(off, len as usize)?);
                }
                Ok(bad)
            })?,
            Self::Host(m) => {
                let mut bad = 0;
                for &(_, off, len) in run {
                    bad += p.check(m.bytes(off, len as usize)?);
                }
                Ok(bad)
            }
        }
    }
}

/// The server with io_uring zero-copy receive: the dma-buf becomes the zcrx
/// area of queue -t START; every chunk is validated in the dma-buf and given
/// back through the refill queue.
fn zcrx_server(o: &Opts) -> io::Result<Outcome> {
    let iface = o.iface.as_deref().unwrap_or_default();
    let ifindex = nic::ifindex(iface)?;
    signals::install()?;
    // --zcrx-areas N: N dma-bufs sharing --size, whole pages each.
    let n = o.zcrx_areas as usize;
    let each = (o.size / n) / page_size() * page_size();
    if each == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "--size {} leaves less than a page for each of {n} zcrx areas",
                o.size
            ),
        ));
    }
    let mems = (0..n)
        .map(|_| AreaMem::new(o, each))
        .collect::<io::Result<Vec<_>>>()?;
    let _cfg = if o.no_config {
        None
    } else {
        Some(configure(o, iface)?)
    };
    let nic = NicIdentity::of(iface).map_or_else(|| "unknown".into(), |id| id.name());
    let mut zc = Zcrx::register(ifindex, o.start, mems[0].area(), o.rx_buf_len)?;
    for m in &mems[1..] {
        zc.add_area(m.area())?;
    }
    eprintln!(
        "io_uring zcrx: {n} {} area(s) of {each} bytes on {iface} RX queue {}, {}-byte buffers, {}",
        if o.zcrx_host_memory {
            "host-memory"
        } else {
            "dma-buf"
        },
        o.start,
        zc.rx_buf_len,
        if zc.has_events() {
            "copy and allocation-failure events on"
        } else {
            "no events (the kernel has none before 7.2)"
        }
    );
    if o.hold_until_alloc_fail && !zc.has_events() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "--hold-until-alloc-fail needs zcrx's allocation-failure event (Linux 7.2+)",
        ));
    }
    let mut events = EventLog::default();
    let addr = SocketAddr::new(o.server.unwrap(), o.port);
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    sock.set_reuse_address(true)?;
    sock.bind(&addr.into())?;
    sock.listen(1)?;
    eprintln!("waiting for a connection on {addr}");
    let (conn, _) = match sock.accept() {
        Ok(c) => c,
        Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(Outcome::Interrupted),
        Err(e) => return Err(io::Error::new(e.kind(), format!("accept: {e}"))),
    };
    let fd = conn.as_raw_fd();
    if o.hello > 0 {
        hello::receive(fd, o.hello.into())?;
    }
    zc.arm(fd)?;
    let mut pattern = Pattern::new(o.validate, o.pattern_end.byte());
    let (mut bytes, mut chunks, mut errors, mut largest) = (0u64, 0u64, 0u64, 0u32);
    let mut per_area = vec![0u64; n];
    let start = Instant::now();
    let mut progress = Progress::new(start);
    let mut done = false;
    // --hold-chunks N: the first N chunks, kept until that many are out;
    // --hold-until-alloc-fail: every chunk until the first ALLOC_FAIL (at
    // most the refill queue's share, so that giving them back never waits).
    let hold_limit = if o.hold_until_alloc_fail {
        MAX_HELD_CHUNKS
    } else {
        o.hold_chunks
    } as usize;
    let mut held = Vec::with_capacity(hold_limit);
    let mut hold_done = hold_limit == 0;
    while !done {
        if signals::stop_requested() {
            return Ok(Outcome::Interrupted);
        }
        let mut got = Vec::new();
        let mut rearm = false;
        match zc.wait(|c| match c {
            Chunk::Data { area, offset, len } => got.push((area, offset, len)),
            Chunk::End => done = true,
            Chunk::Rearm => rearm = true,
            Chunk::Event(e) => events.fired.push(e),
        }) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => r?,
        }
        if let Some(p) = pattern.as_mut() {
            // The stream's order, one read session per run of chunks in one
            // area (a session syncs the whole dma-buf).
            for run in got.chunk_by(|a, b| a.0 == b.0) {
                errors += mems[run[0].0].check(run, p)?;
            }
        }
        for &(area, off, len) in &got {
            bytes += u64::from(len);
            chunks += 1;
            largest = largest.max(len);
            per_area[area] += 1;
            if held.len() < hold_limit && !hold_done {
                held.push((area, off, len));
            } else {
                zc.refill(area, off, len);
            }
        }
        // (Before the events are answered: the flush after an allocation
        // failure then hands these to the pool too.)
        let alloc_failed = o.hold_until_alloc_fail && events.fired.contains(&Event::AllocFail);
        if !hold_done && (held.len() >= hold_limit || done || alloc_failed) {
            if !held.is_empty() {
                eprintln!(
                    "io_uring zcrx: giving back {} held chunks{}",
                    held.len(),
                    if alloc_failed {
                        " at the queue's first allocation failure"
                    } else {
                        ""
                    }
                );
            }
            for (area, off, len) in held.drain(..) {
                zc.refill(area, off, len);
            }
            hold_done = true;
        }
        if rearm && !done {
            zc.arm(fd)?;
        }
        events.handle(&zc, o.start)?;
        progress.tick(|secs| {
            format!(
                "{} MiB, {:.1} MiB/s, {chunks} chunks",
                bytes >> 20,
                bytes as f64 / (1 << 20) as f64 / secs
            )
        });
        if o.max_bytes > 0 && bytes >= o.max_bytes {
            break;
        }
    }
    drop(progress);
    let secs = start.elapsed().as_secs_f64();
    let rate = bytes as f64 / (1 << 20) as f64 / secs.max(1e-9);
    let len = zc.rx_buf_len;
    // Chunks each area took, in registration order.
    let areas = per_area
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let ev = events.fields(zc.copy_stats(), zc.has_events(), o.json);
    if o.json {
        println!(
            "{{\"role\":\"zcrx\",\"bytes\":{bytes},\"chunks\":{chunks},\"largest_chunk\":{largest},\"rx_buf_len\":{len},\"area_chunks\":[{areas}],\"validation_errors\":{errors},{ev},\"secs\":{secs:.3},\"mibps\":{rate:.1},\"nic\":\"{nic}\"}}"
        );
    } else {
        println!(
            "ncdevmem-rs zcrx: bytes={bytes} chunks={chunks} largest_chunk={largest} rx_buf_len={len} area_chunks={areas} validation_errors={errors} {ev} secs={secs:.2} mibps={rate:.1} nic={nic}"
        );
    }
    Ok(if errors > 0 {
        Outcome::ValidationFailed
    } else {
        Outcome::Ok
    })
}

/// `--page-pools`: one line per pool, then totals.
fn list_page_pools() -> io::Result<()> {
    let pools = page_pools()?.map_err(|e| io::Error::other(format!("page-pool-get: {e}")))?;
    let opt = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
    for p in &pools {
        println!(
            "page-pool id={} ifindex={} inflight={} inflight_mem={} detached={} dmabuf={}",
            p.id,
            opt(p.ifindex),
            p.inflight,
            p.inflight_mem,
            if p.detached { "yes" } else { "no" },
            opt(p.dmabuf)
        );
    }
    let detached: Vec<_> = pools.iter().filter(|p| p.detached).collect();
    println!(
        "page-pools pools={} inflight={} detached={} detached_inflight={}",
        pools.len(),
        pools.iter().map(|p| p.inflight).sum::<u64>(),
        detached.len(),
        detached.iter().map(|p| p.inflight).sum::<u64>()
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse_args(&args) {
        Ok(o) => o,
        // Help to stdout and exit 0; errors to stderr with the usage, exit 2.
        Err(e) => e.exit(),
    };
    if o.selftest {
        let r = selftest::run(
            o.iface.as_deref().unwrap_or_default(),
            o.start,
            o.queues,
            o.provider.unwrap_or(Provider::Udmabuf),
            o.size,
        );
        return match r {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(e) => {
                eprintln!("ncdevmem-rs: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if o.page_pools {
        return match list_page_pools() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ncdevmem-rs: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if !o.listen && o.iface.is_some() {
        // (Ctrl-C ends the send loop; the binding goes with the process.)
        if let Err(e) = signals::install() {
            eprintln!("ncdevmem-rs: {e}");
            return ExitCode::FAILURE;
        }
    }
    let r = if o.listen && o.zcrx {
        zcrx_server(&o)
    } else if o.listen {
        server(&o)
    } else if o.iface.is_some() {
        devmem_client::run(&o)
    } else {
        client::run(&o)
    };
    match r {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::ValidationFailed) => {
            eprintln!("ncdevmem-rs: validation failed");
            ExitCode::FAILURE
        }
        Ok(Outcome::Interrupted) => {
            ExitCode::from(128 + signals::signal().unwrap_or(libc::SIGINT) as u8)
        }
        Err(e) => {
            eprintln!("ncdevmem-rs: {e}");
            ExitCode::FAILURE
        }
    }
}
