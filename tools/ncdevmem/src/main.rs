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

use ncdevmem_rs::cli::{parse_args, Opts, MAX_HELD_CHUNKS};
use ncdevmem_rs::dmabuf::{page_size, Dmabuf, Provider};
use ncdevmem_rs::hello;
use ncdevmem_rs::host_mem::HostMem;
use ncdevmem_rs::netdev::page_pools;
use ncdevmem_rs::nic;
use ncdevmem_rs::outcome::Outcome;
use ncdevmem_rs::pattern::Pattern;
use ncdevmem_rs::personality::NicIdentity;
use ncdevmem_rs::progress::Progress;
use ncdevmem_rs::server_nic::configure;
use ncdevmem_rs::zcrx::{Area, Chunk, Event, EventLog, Zcrx};
use ncdevmem_rs::{client, devmem_client, rx_server};
use ncdevmem_rs::{selftest, signals};
use socket2::{Domain, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::Instant;

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
        rx_server::run(&o)
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
