//! The io_uring zero-copy receive server (`-l --zcrx`): the dma-bufs (or
//! `--zcrx-host-memory` pages) become the zcrx areas of queue -t START
//! (zcrx.rs); every chunk is validated in its area and given back through
//! the refill queue (or held, `--hold-chunks`, `--hold-until-alloc-fail`);
//! the summary, with the kernel's copy counters and the events that fired.

use crate::cli::{Opts, MAX_HELD_CHUNKS};
use crate::dmabuf::{page_size, Dmabuf, Provider};
use crate::hello;
use crate::host_mem::HostMem;
use crate::nic;
use crate::outcome::Outcome;
use crate::pattern::Pattern;
use crate::personality::NicIdentity;
use crate::progress::Progress;
use crate::server_nic::configure;
use crate::signals;
use crate::tcp_info::TcpInfo;
use crate::zcrx::{Area, Chunk, Event, EventLog, Zcrx};
use socket2::{Domain, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// A chunk of payload: its area, its offset there and its length.
type Piece = (usize, u64, u32);

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
    fn check(&self, run: &[Piece], p: &mut Pattern) -> io::Result<u64> {
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

/// Checks a wait's chunks against `p` in the stream's order, one read
/// session per run of chunks in one area (a session syncs the whole
/// dma-buf); returns the bytes that differ.
fn check_chunks(mems: &[AreaMem], got: &[Piece], p: &mut Pattern) -> io::Result<u64> {
    let mut bad = 0;
    for run in got.chunk_by(|a, b| a.0 == b.0) {
        bad += mems[run[0].0].check(run, p)?;
    }
    Ok(bad)
}

/// `--zcrx-areas N`: each area's size, whole pages of `page` bytes out of
/// `size` split N ways; an error if that leaves less than a page.
fn area_size(size: usize, n: usize, page: usize) -> io::Result<usize> {
    let each = (size / n) / page * page;
    if each == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("--size {size} leaves less than a page for each of {n} zcrx areas"),
        ));
    }
    Ok(each)
}

/// The chunks kept back from the refill queue: `--hold-chunks N`, the
/// first N chunks until the Nth has arrived; `--hold-until-alloc-fail`,
/// every chunk until the queue's first allocation failure (at most the
/// refill queue's share, so that giving them back never waits). Once given
/// back, none is held again.
#[derive(Debug)]
struct Hold {
    held: Vec<Piece>,
    limit: usize,
    done: bool,
}

impl Hold {
    fn new(o: &Opts) -> Self {
        let limit = if o.hold_until_alloc_fail {
            MAX_HELD_CHUNKS
        } else {
            o.hold_chunks
        } as usize;
        Hold {
            held: Vec::with_capacity(limit),
            limit,
            done: limit == 0,
        }
    }

    /// Keeps `c` if the hold still takes chunks; false: give it back now.
    fn keep(&mut self, c: Piece) -> bool {
        if self.held.len() < self.limit && !self.done {
            self.held.push(c);
            true
        } else {
            false
        }
    }

    /// The held chunks, to give back now, once: the hold is full, the
    /// stream ended, or (`alloc_failed`) the queue ran out of buffers.
    fn release(&mut self, ended: bool, alloc_failed: bool) -> Option<Vec<Piece>> {
        if self.done || !(self.held.len() >= self.limit || ended || alloc_failed) {
            return None;
        }
        self.done = true;
        Some(std::mem::take(&mut self.held))
    }
}

/// What the zcrx server counts of what it received.
#[derive(Debug)]
struct Tally {
    bytes: u64,
    chunks: u64,
    largest: u32,
    /// Chunks each area took, in registration order.
    per_area: Vec<u64>,
    errors: u64,
    /// The connection's TCP_INFO counters, taken before it closed.
    tcp: TcpInfo,
}

impl Tally {
    fn new(areas: usize) -> Self {
        Tally {
            bytes: 0,
            chunks: 0,
            largest: 0,
            per_area: vec![0; areas],
            errors: 0,
            tcp: TcpInfo::default(),
        }
    }

    fn count(&mut self, (area, _, len): Piece) {
        self.bytes += u64::from(len);
        self.chunks += 1;
        self.largest = self.largest.max(len);
        self.per_area[area] += 1;
    }

    /// The summary line (`ev`: the event fields, zcrx.rs's
    /// `EventLog::fields`, `len`: the NIC's buffer size); the TCP_INFO
    /// fields before `nic`, which stays last.
    fn line(&self, json: bool, len: u32, ev: &str, secs: f64, nic: &str) -> String {
        let Tally {
            bytes,
            chunks,
            largest,
            errors,
            tcp,
            ..
        } = self;
        let rate = *bytes as f64 / (1 << 20) as f64 / secs.max(1e-9);
        let areas = self
            .per_area
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let tcp = tcp.fields(json);
        if json {
            format!(
                "{{\"role\":\"zcrx\",\"bytes\":{bytes},\"chunks\":{chunks},\"largest_chunk\":{largest},\"rx_buf_len\":{len},\"area_chunks\":[{areas}],\"validation_errors\":{errors},{ev},\"secs\":{secs:.3},\"mibps\":{rate:.1},{tcp},\"nic\":\"{nic}\"}}"
            )
        } else {
            format!(
                "ncdevmem-rs zcrx: bytes={bytes} chunks={chunks} largest_chunk={largest} rx_buf_len={len} area_chunks={areas} validation_errors={errors} {ev} secs={secs:.2} mibps={rate:.1} {tcp} nic={nic}"
            )
        }
    }

    fn outcome(&self) -> Outcome {
        if self.errors > 0 {
            Outcome::ValidationFailed
        } else {
            Outcome::Ok
        }
    }
}

/// Runs the zcrx server: areas registered with queue -t START, one
/// connection received into them, the summary.
pub fn run(o: &Opts) -> io::Result<Outcome> {
    let iface = o.iface.as_deref().unwrap_or_default();
    let ifindex = nic::ifindex(iface)?;
    signals::install()?;
    // --zcrx-areas N: N dma-bufs sharing --size, whole pages each.
    let n = o.zcrx_areas as usize;
    let each = area_size(o.size, n, page_size())?;
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
    let mut t = Tally::new(n);
    let start = Instant::now();
    let mut progress = Progress::new(start);
    let mut done = false;
    let mut hold = Hold::new(o);
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
            t.errors += check_chunks(&mems, &got, p)?;
        }
        for &c in &got {
            t.count(c);
            if !hold.keep(c) {
                zc.refill(c.0, c.1, c.2);
            }
        }
        // (Before the events are answered: the flush after an allocation
        // failure then hands these to the pool too.)
        let alloc_failed = o.hold_until_alloc_fail && events.fired.contains(&Event::AllocFail);
        if let Some(held) = hold.release(done, alloc_failed) {
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
            for (area, off, len) in held {
                zc.refill(area, off, len);
            }
        }
        if rearm && !done {
            zc.arm(fd)?;
        }
        events.handle(&zc, o.start)?;
        progress.tick(|secs| {
            format!(
                "{} MiB, {:.1} MiB/s, {} chunks",
                t.bytes >> 20,
                t.bytes as f64 / (1 << 20) as f64 / secs,
                t.chunks
            )
        });
        if o.max_bytes > 0 && t.bytes >= o.max_bytes {
            break;
        }
    }
    drop(progress);
    let secs = start.elapsed().as_secs_f64();
    t.tcp = TcpInfo::of_or_absent(fd);
    let ev = events.fields(zc.copy_stats(), zc.has_events(), o.json);
    println!("{}", t.line(o.json, zc.rx_buf_len, &ev, secs, &nic));
    Ok(t.outcome())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_args;

    fn opts(line: &str) -> Opts {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse_args(&args).unwrap()
    }

    /// Two host-memory areas of a page, holding the -v 7 stream's first
    /// `chunks.len()` chunks of 1000 bytes where `chunks` places them.
    fn areas_with(chunks: &[Piece]) -> Vec<AreaMem> {
        let page = page_size();
        let mems: Vec<AreaMem> = (0..2)
            .map(|_| AreaMem::Host(HostMem::new(page).unwrap()))
            .collect();
        let mut p = Pattern::new(7, 0).unwrap();
        for &(area, off, len) in chunks {
            let AreaMem::Host(m) = &mems[area] else {
                unreachable!()
            };
            assert!(off as usize + len as usize <= m.size());
            // SAFETY: inside the mapping (checked above), which nothing
            // else reads or writes while the test fills it.
            let at = unsafe {
                std::slice::from_raw_parts_mut((m.addr() + off) as *mut u8, len as usize)
            };
            p.fill(at);
        }
        mems
    }

    fn corrupt(mems: &[AreaMem], area: usize, off: u64) {
        let AreaMem::Host(m) = &mems[area] else {
            unreachable!()
        };
        assert!((off as usize) < m.size());
        // SAFETY: one byte inside the mapping (checked above).
        unsafe { *((m.addr() + off) as *mut u8) ^= 1 };
    }

    #[test]
    fn chunks_are_checked_in_the_streams_order_across_areas() {
        let got = [
            (1, 1000, 1000),
            (1, 0, 1000),
            (0, 2000, 1000),
            (1, 3000, 500),
        ];
        let mems = areas_with(&got);
        let mut p = Pattern::new(7, 0).unwrap();
        assert_eq!(check_chunks(&mems, &got, &mut p).unwrap(), 0);
        // The pattern ran on through all of them: the next chunk continues it.
        assert_eq!(p, {
            let mut q = Pattern::new(7, 0).unwrap();
            q.fill(&mut [0u8; 3500]);
            q
        });
        corrupt(&mems, 0, 2999);
        corrupt(&mems, 1, 3000);
        let mut p = Pattern::new(7, 0).unwrap();
        assert_eq!(check_chunks(&mems, &got, &mut p).unwrap(), 2);
    }

    #[test]
    fn a_chunk_outside_its_area_fails_the_check() {
        let mems = areas_with(&[]);
        let outside = [(0, page_size() as u64 - 10, 100)];
        let mut p = Pattern::new(7, 0).unwrap();
        let e = check_chunks(&mems, &outside, &mut p).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn areas_share_the_size_in_whole_pages() {
        assert_eq!(area_size(16000 * 4096, 1, 4096).unwrap(), 16000 * 4096);
        assert_eq!(area_size(10 * 4096 + 100, 3, 4096).unwrap(), 3 * 4096);
        let e = area_size(3 * 4096, 4, 4096).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            e.to_string(),
            "--size 12288 leaves less than a page for each of 4 zcrx areas"
        );
    }

    #[test]
    fn without_a_hold_every_chunk_goes_back_at_once() {
        let mut h = Hold::new(&opts("-l -s 10.9.0.2 -f eth1 -q 1 --zcrx"));
        assert!(!h.keep((0, 0, 4096)));
        assert_eq!(h.release(true, true), None);
    }

    #[test]
    fn hold_chunks_keeps_the_first_n_until_the_nth_arrives() {
        let mut h = Hold::new(&opts("-l -s 10.9.0.2 -f eth1 -q 1 --zcrx --hold-chunks 3"));
        assert!(h.keep((0, 0, 4096)) && h.keep((0, 4096, 4096)));
        assert_eq!(h.release(false, false), None);
        assert!(h.keep((1, 0, 100)));
        // The fourth of the same wait is not held: the hold is full.
        assert!(!h.keep((1, 100, 100)));
        assert_eq!(
            h.release(false, false),
            Some(vec![(0, 0, 4096), (0, 4096, 4096), (1, 0, 100)])
        );
        // Given back once; nothing is held after.
        assert!(!h.keep((0, 0, 4096)));
        assert_eq!(h.release(true, false), None);
    }

    #[test]
    fn held_chunks_go_back_when_the_stream_ends_short_of_the_hold() {
        let mut h = Hold::new(&opts("-l -s 10.9.0.2 -f eth1 -q 1 --zcrx --hold-chunks 5"));
        assert!(h.keep((0, 0, 10)));
        assert_eq!(h.release(true, false), Some(vec![(0, 0, 10)]));
    }

    #[test]
    fn hold_until_alloc_fail_keeps_up_to_the_refill_share_until_the_event() {
        let mut h = Hold::new(&opts(
            "-l -s 10.9.0.2 -f eth1 -q 1 --zcrx --hold-until-alloc-fail",
        ));
        assert_eq!(h.limit, MAX_HELD_CHUNKS as usize);
        for i in 0..10 {
            assert!(h.keep((0, i * 4096, 4096)));
        }
        assert_eq!(h.release(false, false), None);
        assert_eq!(h.release(false, true).map(|v| v.len()), Some(10));
    }

    #[test]
    fn the_tally_counts_chunks_per_area_and_the_largest() {
        let mut t = Tally::new(3);
        for c in [(0, 0, 4096), (2, 0, 100), (2, 100, 8192), (0, 4096, 4096)] {
            t.count(c);
        }
        assert_eq!((t.bytes, t.chunks, t.largest), (16484, 4, 8192));
        assert_eq!(t.per_area, [2, 0, 2]);
        assert_eq!(t.outcome(), Outcome::Ok);
        t.errors = 1;
        assert_eq!(t.outcome(), Outcome::ValidationFailed);
    }

    #[test]
    fn text_and_json_carry_the_same_fields() {
        let mut t = Tally::new(2);
        t.count((0, 0, 1 << 20));
        t.count((1, 0, 1 << 20));
        t.count((1, 1 << 20, 1 << 20));
        // (A kernel before 5.4: its struct tcp_info ends before these two.)
        t.tcp = TcpInfo {
            total_retrans: Some(0),
            retrans: Some(0),
            lost: Some(0),
            reordering: Some(3),
            ..Default::default()
        };
        let ev = EventLog::default();
        let text = t.line(
            false,
            4096,
            &ev.fields(None, false, false),
            2.0,
            "mlx5_core",
        );
        assert_eq!(
            text,
            "ncdevmem-rs zcrx: bytes=3145728 chunks=3 largest_chunk=1048576 rx_buf_len=4096 area_chunks=1,2 validation_errors=0 copy_fallback_chunks=n/a copy_fallback_bytes=n/a copy_events=n/a alloc_fail_events=n/a refill_flushes=n/a secs=2.00 mibps=1.5 tcp_total_retrans=0 tcp_retrans=0 tcp_lost=0 tcp_reordering=3 tcp_rcv_ooopack=n/a tcp_dsack_dups=n/a nic=mlx5_core"
        );
        let json = t.line(true, 4096, &ev.fields(None, false, true), 2.0, "mlx5_core");
        assert_eq!(
            json,
            "{\"role\":\"zcrx\",\"bytes\":3145728,\"chunks\":3,\"largest_chunk\":1048576,\"rx_buf_len\":4096,\"area_chunks\":[1,2],\"validation_errors\":0,\"copy_fallback_chunks\":null,\"copy_fallback_bytes\":null,\"copy_events\":null,\"alloc_fail_events\":null,\"refill_flushes\":null,\"secs\":2.000,\"mibps\":1.5,\"tcp_total_retrans\":0,\"tcp_retrans\":0,\"tcp_lost\":0,\"tcp_reordering\":3,\"tcp_rcv_ooopack\":null,\"tcp_dsack_dups\":null,\"nic\":\"mlx5_core\"}"
        );
    }
}
