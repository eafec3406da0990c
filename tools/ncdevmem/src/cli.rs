//! The command line, parsed by clap: upstream ncdevmem's getopt flags
//! (7.3's `Lls:c:p:v:q:t:f:z:nb:`, clusters and attached values as getopt
//! takes them), their long spellings, and ncdevmem-rs's own options.
//! `check` holds the rules between options that no single flag knows.

use crate::dmabuf::Provider;
use crate::pattern::PatternEnd;
use crate::tokens::MAX_RANGES;
use crate::wire_faults::WireSpec;
use clap::{error::ErrorKind, CommandFactory, Parser, ValueEnum};
use std::net::IpAddr;

/// The most areas one zcrx queue takes (io_uring/zcrx.c's ZCRX_MAX_AREAS).
pub const MAX_ZCRX_AREAS: u32 = 1024;

/// The most chunks `--hold-chunks` keeps: half the refill queue, which must
/// take them back at once beside what is already queued there.
pub const MAX_HELD_CHUNKS: u32 = 2048;

/// Where `--fail-nth` is armed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FaultPhase {
    /// Before the NIC is configured: header split, RSS, ntuple, then bind-rx.
    Setup,
    /// Right before bind-rx.
    Bind,
}

/// The modes, above clap's list of options.
const MODES: &str = "ncdevmem-rs -l -s SERVER_IP -p PORT -f IFACE [-c CLIENT_IP] [-v N] [-t START] [-q NUM] [options]
       ncdevmem-rs -s SERVER_IP -p PORT [-v N] --bytes N          (client: send the pattern)
       ncdevmem-rs -s SERVER_IP -p PORT -f IFACE [-c CLIENT_IP] [-z CHUNK] [-v N --bytes N]
                                                                  (devmem TX from a dma-buf; Linux 7.2+)
       ncdevmem-rs --selftest -f IFACE [-t START] [-q NUM]        (bind-rx checks; root)
       ncdevmem-rs --page-pools                                   (list this namespace's page pools)";

/// A devmem TCP receiver and sender (and io_uring zcrx receiver) that
/// validates what it moves.
#[derive(Debug, PartialEq, Parser)]
#[command(name = "ncdevmem-rs", override_usage = MODES)]
pub struct Opts {
    /// Server mode.
    #[arg(short = 'l', long)]
    pub listen: bool,
    /// Server address (IPv4 or IPv6); required except with --selftest.
    #[arg(short = 's', long, value_name = "IP")]
    pub server: Option<IpAddr>,
    /// Client address: the ntuple rule also matches src-ip and src-port;
    /// devmem TX binds the socket to it.
    #[arg(short = 'c', long, value_name = "IP")]
    pub client: Option<IpAddr>,
    /// TCP port; the client sends from this port too.
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub port: u16,
    /// Interface whose queues to bind (server, selftest); without -l, send
    /// from a dma-buf bound to it for TX (stdin's lines, one send each, as
    /// upstream; with --bytes N, N bytes of the -v pattern).
    #[arg(short = 'f', long, value_name = "IFACE")]
    pub iface: Option<String>,
    /// Validate (client: send) the pattern 1,2,..,N-1,END (0: off, the
    /// client sends zeros).
    #[arg(short = 'v', long = "validate", value_name = "N", default_value_t = 0)]
    pub validate: u8,
    /// First bound RX queue.
    #[arg(
        short = 't',
        long = "queue-start",
        value_name = "START",
        default_value_t = 8
    )]
    pub start: u32,
    /// Number of bound RX queues.
    #[arg(
        short = 'q',
        long = "queue-num",
        value_name = "NUM",
        default_value_t = 8
    )]
    pub queues: u32,
    /// Where the dma-buf comes from: udmabuf (default) or dma-heap.
    #[arg(long, value_name = "P")]
    pub provider: Option<Provider>,
    /// Dma-buf size (as upstream).
    #[arg(long, value_name = "BYTES", default_value_t = 16000 * 4096)]
    pub size: usize,
    /// Most token ranges per SO_DEVMEM_DONTNEED, 1..128; a read's tokens
    /// are returned before the next read.
    #[arg(long, value_name = "N", default_value_t = MAX_RANGES)]
    pub batch: usize,
    /// Keep every token until no data has come for S seconds.
    #[arg(long = "hold-tokens-secs", value_name = "S", default_value_t = 0)]
    pub hold: u64,
    /// Stop after N bytes.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_bytes: u64,
    /// Client: bytes to send.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub bytes: u64,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Do not touch the NIC (no header split, RSS or ntuple changes).
    #[arg(short = 'n', long)]
    pub no_config: bool,
    /// Run the bind-rx checks on -f IFACE and exit (TAP-like output).
    #[arg(long)]
    pub selftest: bool,
    /// Make the Nth kernel fault site (allocation) this thread passes while
    /// configuring the NIC and binding fail (CONFIG_FAULT_INJECTION).
    #[arg(long, value_name = "N")]
    pub fail_nth: Option<u32>,
    /// Where --fail-nth starts counting: at configuring (setup, default) or
    /// at bind-rx (bind), whose failures must reach the caller.
    #[arg(long, value_enum, value_name = "PHASE", default_value_t = FaultPhase::Setup)]
    pub fail_from: FaultPhase,
    /// On the first read with two dma-buf frags, check SO_DEVMEM_DONTNEED
    /// misuse (bad lengths, unknown, stale, duplicate tokens, the 1024 limit).
    #[arg(long)]
    pub abuse_tokens: bool,
    /// List the page pools of this namespace's devices (inflight buffers;
    /// detached: destroyed, waiting for buffers) and exit.
    #[arg(long)]
    pub page_pools: bool,
    /// The -v pattern's closing byte: zero (6.12's upstream ncdevmem),
    /// newline (7.2's), or auto (the running kernel's).
    #[arg(long, value_name = "E", default_value = "auto")]
    pub pattern_end: PatternEnd,
    /// Devmem TX: cut each send into iovecs of at most N bytes.
    #[arg(short = 'z', long, value_name = "N", default_value_t = 0)]
    pub max_chunk: usize,
    /// Server: fail if any payload arrives outside the dma-buf.
    #[arg(short = 'L', long)]
    pub fail_on_linear: bool,
    /// Server: receive with io_uring zero-copy receive (Linux 6.15+) into the
    /// dma-buf as the area of queue -t START (-q 1), not devmem TCP.
    #[arg(long)]
    pub zcrx: bool,
    /// --zcrx: NIC buffer size, a power of two (0: a page; Linux 7.2+).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub rx_buf_len: u32,
    /// --zcrx: split the dma-buf size over N areas, each its own dma-buf:
    /// the first registered with the queue, the others added to it
    /// (ZCRX_CTRL_ADD_AREA, Linux 7.3+).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub zcrx_areas: u32,
    /// --zcrx: areas of anonymous host memory (as upstream's iou-zcrx)
    /// instead of dma-bufs; the kernel can then copy payload that arrived
    /// off the queue (copy fallback), which a dma-buf area cannot take.
    #[arg(long)]
    pub zcrx_host_memory: bool,
    /// --zcrx: keep the first N chunks until the Nth has arrived, then give
    /// them back together (N buffers out at once, as an application that
    /// holds buffers for its consumer; at most 2048).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub hold_chunks: u32,
    /// --zcrx: keep every chunk until the queue's first allocation failure
    /// (ZCRX_EVENT_ALLOC_FAIL, Linux 7.2+), then give them all back and
    /// return chunks as usual: the area runs out for certain (at most 2048
    /// kept, then given back without one).
    #[arg(long)]
    pub hold_until_alloc_fail: bool,
    /// Server: bind with N-byte RX buffers (bind-rx's rx-page-size, a power
    /// of two; Linux 7.3+), the dma-buf backed by 2 MiB huge pages when N is
    /// larger than a page (as upstream's -b).
    #[arg(short = 'b', long, value_name = "N")]
    pub rx_page_size: Option<u32>,
    /// Client (no -f): send from host memory with MSG_ZEROCOPY.
    #[arg(long)]
    pub zerocopy: bool,
    /// Client (no -f, no --zerocopy): send at most N bytes a write, with
    /// TCP_NODELAY, each sent before the next (SIOCOUTQNSD 0), so that small
    /// writes leave as segments of their own (a few bytes: frames under
    /// Ethernet's minimum, padded on the wire).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub write_size: usize,
    /// Both ends: an N-byte control message on the data connection before
    /// the data, which the server reads with plain recv(MSG_PEEK|MSG_WAITALL)
    /// after binding, as devmem applications such as kperf do (fails with
    /// EFAULT on a NIC that splits small segments into the dma-buf).
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u16).range(0..=crate::hello::HELLO_MAX as i64))]
    pub hello: u16,
    /// With -f IFACE on devmemnic: the wire faults of IFACE's receive side
    /// for this run, NAME=VALUE[,NAME=VALUE...] (the knobs of debugfs
    /// devmemnic/<parent>/wire_faults/, e.g. seed=7,drop_ppm=20000); what
    /// they held goes back when the run ends.
    #[arg(long, value_name = "SPEC")]
    pub wire_faults: Option<WireSpec>,
}

/// Parses the arguments (without the program name) and checks the rules
/// between them. A request for help is an error of kind `DisplayHelp`
/// (`clap::Error::exit` prints it and exits 0).
pub fn parse_args(args: &[String]) -> Result<Opts, clap::Error> {
    let o = Opts::try_parse_from(
        std::iter::once("ncdevmem-rs").chain(args.iter().map(String::as_str)),
    )?;
    check(&o).map_err(|e| Opts::command().error(ErrorKind::ArgumentConflict, e))?;
    Ok(o)
}

fn check(o: &Opts) -> Result<(), String> {
    if o.selftest {
        if o.iface.is_none() {
            return Err("--selftest needs -f IFACE".into());
        }
        if o.listen {
            return Err("--selftest and -l do not go together".into());
        }
    } else if o.page_pools {
        if o.listen {
            return Err("--page-pools and -l do not go together".into());
        }
    } else if o.server.is_none() {
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
    if o.fail_nth == Some(0) {
        return Err("--fail-nth must be at least 1".into());
    }
    if o.fail_from != FaultPhase::Setup && o.fail_nth.is_none() {
        return Err("--fail-from goes with --fail-nth".into());
    }
    if o.fail_on_linear && !o.listen {
        return Err("-L is a server option (-l)".into());
    }
    if o.wire_faults.is_some() && (o.iface.is_none() || o.selftest || o.page_pools) {
        return Err("--wire-faults goes with a run on -f IFACE (server or devmem TX)".into());
    }
    if o.max_chunk > 0 && (o.listen || o.iface.is_none()) {
        return Err("-z is a devmem TX option (-f IFACE without -l)".into());
    }
    if o.zcrx && (!o.listen || o.queues != 1 || o.fail_nth.is_some() || o.abuse_tokens) {
        return Err("--zcrx is a server option (-l) for one queue (-q 1)".into());
    }
    if o.zerocopy && (o.listen || o.iface.is_some()) {
        return Err(
            "--zerocopy is a client option (no -l, no -f: devmem TX is always zerocopy)".into(),
        );
    }
    if o.write_size > 0 && (o.listen || o.iface.is_some() || o.zerocopy) {
        return Err("--write-size is a host memory client option (no -l, -f or --zerocopy)".into());
    }
    if o.rx_buf_len != 0 && !o.zcrx {
        return Err("--rx-buf-len goes with --zcrx".into());
    }
    if o.zcrx_areas != 1 && !o.zcrx {
        return Err("--zcrx-areas goes with --zcrx".into());
    }
    if o.zcrx_host_memory && (!o.zcrx || o.provider.is_some()) {
        return Err("--zcrx-host-memory goes with --zcrx, without --provider".into());
    }
    if o.hold_chunks != 0 && !o.zcrx {
        return Err("--hold-chunks goes with --zcrx (devmem TCP has --hold-tokens-secs)".into());
    }
    if o.hold_chunks > MAX_HELD_CHUNKS {
        return Err(format!("--hold-chunks must be 0..{MAX_HELD_CHUNKS}"));
    }
    if o.hold_until_alloc_fail && (!o.zcrx || o.hold_chunks != 0) {
        return Err("--hold-until-alloc-fail goes with --zcrx, without --hold-chunks".into());
    }
    if o.zcrx_areas == 0 || o.zcrx_areas > MAX_ZCRX_AREAS {
        return Err(format!("--zcrx-areas must be 1..{MAX_ZCRX_AREAS}"));
    }
    if o.zcrx && o.size / o.zcrx_areas as usize == 0 {
        return Err("--size leaves no bytes for each zcrx area".into());
    }
    // (The buffer size itself is the kernel's to judge: its answer, extack
    // included, is what a user of -b needs to see.)
    if o.rx_page_size.is_some() && (!o.listen || o.zcrx) {
        return Err(
            "-b is a devmem server option (-l without --zcrx; --zcrx has --rx-buf-len)".into(),
        );
    }
    if (o.fail_nth.is_some() || o.abuse_tokens) && !o.listen {
        return Err("--fail-nth and --abuse-tokens are server options (-l)".into());
    }
    if o.queues == 0 {
        return Err("-q must be at least 1".into());
    }
    if o.start.checked_add(o.queues).is_none() {
        return Err("-t + -q overflows".into());
    }
    if o.start == 0 && (o.selftest || (o.listen && !o.no_config)) {
        return Err(
            "-t 0 leaves no queue for the other traffic (RSS equal 0); use -t 1 or more, or --no-config"
                .into(),
        );
    }
    if let (Some(s), Some(c)) = (o.server, o.client) {
        let (s, c) = (
            crate::ethtool_ioctl::unmap(s),
            crate::ethtool_ioctl::unmap(c),
        );
        if s.is_ipv6() != c.is_ipv6() {
            return Err(format!(
                "-s {s} and -c {c} are not of the same address family"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// Asserts that each command line is refused.
    fn refused(lines: &[&str]) {
        for bad in lines {
            assert!(parse_args(&args(bad)).is_err(), "accepted: {bad}");
        }
    }

    #[test]
    fn zcrx_is_a_one_queue_server_option() {
        let o = parse_args(&args(
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --rx-buf-len 65536",
        ))
        .unwrap();
        assert!(o.zcrx);
        assert_eq!((o.start, o.queues, o.rx_buf_len), (15, 1, 65536));
        refused(&[
            "-l -s 10.9.0.2 -f eth1 -t 15 --zcrx",
            "-s 10.9.0.2 -f eth1 -q 1 --zcrx",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --rx-buf-len 65536",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --abuse-tokens",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --hold-chunks 8",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --hold-chunks 2049",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --hold-until-alloc-fail",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --hold-chunks 8 --hold-until-alloc-fail",
        ]);
        let o = parse_args(&args(
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --hold-chunks 2048",
        ))
        .unwrap();
        assert_eq!(o.hold_chunks, 2048);
        let o = parse_args(&args(
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --hold-until-alloc-fail",
        ))
        .unwrap();
        assert!(o.hold_until_alloc_fail);
    }

    #[test]
    fn rx_page_size_is_a_devmem_server_option() {
        // Upstream's spelling, attached or separate, and the long one.
        for line in [
            "-l -s 10.9.0.2 -f eth1 -b 16384",
            "-l -s 10.9.0.2 -f eth1 -b16384",
            "-ls 10.9.0.2 -f eth1 --rx-page-size 16384",
        ] {
            assert_eq!(
                parse_args(&args(line)).unwrap().rx_page_size,
                Some(16384),
                "{line}"
            );
        }
        assert_eq!(
            parse_args(&args("-l -s 10.9.0.2 -f eth1"))
                .unwrap()
                .rx_page_size,
            None
        );
        refused(&[
            "-s 10.9.0.2 -f eth1 -b 16384",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx -b 16384",
            "-l -s 10.9.0.2 -f eth1 -b -1",
            "-l -s 10.9.0.2 -f eth1 -b 4294967296",
        ]);
    }

    #[test]
    fn zcrx_host_memory_goes_with_zcrx_alone() {
        let o = parse_args(&args(
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --zcrx-host-memory",
        ))
        .unwrap();
        assert!(o.zcrx_host_memory);
        for bad in [
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx-host-memory",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --zcrx-host-memory --provider dma-heap",
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn zcrx_areas_go_with_zcrx() {
        let o = parse_args(&args(
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --zcrx-areas 4 --size 8388608",
        ))
        .unwrap();
        assert_eq!(o.zcrx_areas, 4);
        refused(&[
            "-l -s 10.9.0.2 -f eth1 --zcrx-areas 2",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --zcrx-areas 0",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --zcrx-areas 1025",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --zcrx-areas 8 --size 4",
        ]);
    }

    #[test]
    fn zerocopy_is_a_host_memory_client_option() {
        assert!(
            parse_args(&args("-s 10.9.0.2 --bytes 4096 --zerocopy"))
                .unwrap()
                .zerocopy
        );
        refused(&[
            "-l -s 10.9.0.2 -f eth1 --zerocopy",
            "-s 10.9.0.2 -f eth1 --bytes 4096 --zerocopy",
        ]);
    }

    #[test]
    fn write_size_is_a_plain_client_option() {
        let o = parse_args(&args("-s 10.9.0.2 --bytes 4096 --write-size 3")).unwrap();
        assert_eq!(o.write_size, 3);
        refused(&[
            "-l -s 10.9.0.2 -f eth1 --write-size 3",
            "-s 10.9.0.2 -f eth1 --bytes 4096 --write-size 3",
            "-s 10.9.0.2 --bytes 4096 --zerocopy --write-size 3",
        ]);
    }

    #[test]
    fn upstream_flags_and_defaults() {
        let o = parse_args(&args("-l -s 10.9.0.2 -c 10.9.0.1 -p 5201 -v 7 -f dmnic1")).unwrap();
        assert!(o.listen && !o.no_config && !o.selftest);
        assert_eq!(
            (o.start, o.queues, o.port, o.validate, o.batch),
            (8, 8, 5201, 7, 128)
        );
        assert_eq!(o.iface.as_deref(), Some("dmnic1"));
        assert_eq!(o.client, Some("10.9.0.1".parse().unwrap()));
        assert_eq!(o.size, 65_536_000);
        let o = parse_args(&args("-s fd00::2 -p 80 --bytes 1000 --provider dma-heap")).unwrap();
        assert!(!o.listen && o.bytes == 1000 && o.provider == Some(Provider::DmaHeap));
        assert_eq!(o.server, Some("fd00::2".parse().unwrap()));
    }

    #[test]
    fn wire_faults_go_with_a_run_on_an_interface() {
        let o = parse_args(&args(
            "-l -s 10.9.0.2 -f dmnic1 --wire-faults seed=7,drop_ppm=20000",
        ))
        .unwrap();
        let spec = o.wire_faults.unwrap();
        assert_eq!(
            crate::wire_faults::format_spec(&spec.0),
            "seed=7,drop_ppm=20000"
        );
        // Devmem TX impairs what its own device receives (the ACKs).
        assert!(parse_args(&args("-s 10.9.0.2 -f dmnic0 --wire-faults seed=1")).is_ok());
        refused(&[
            "-s 10.9.0.2 --bytes 10 --wire-faults seed=1",
            "--selftest -f dmnic1 --wire-faults seed=1",
            "-l -s 10.9.0.2 -f dmnic1 --wire-faults seed",
            "-l -s 10.9.0.2 -f dmnic1 --wire-faults seed=1,seed=2",
        ]);
    }

    #[test]
    fn long_and_short_spellings_agree() {
        let short = parse_args(&args(
            "-l -s 10.9.0.2 -c 10.9.0.1 -p 6000 -f eth1 -v 7 -t 4 -q 2",
        ))
        .unwrap();
        let long = parse_args(&args(
            "--listen --server 10.9.0.2 --client=10.9.0.1 --port 6000 --iface=eth1 --validate 7 --queue-start 4 --queue-num=2",
        ))
        .unwrap();
        assert_eq!(short, long);
        assert_eq!((short.start, short.queues, short.port), (4, 2, 6000));
        // getopt forms: attached values and clusters.
        let glued = parse_args(&args("-ls10.9.0.2 -c10.9.0.1 -p6000 -feth1 -v7 -t4 -q2")).unwrap();
        assert_eq!(glued, short);
    }

    #[test]
    fn new_modes() {
        let o = parse_args(&args("-l -s 10.0.0.2 -f eth1 --no-config -t 0")).unwrap();
        assert!(o.no_config && o.start == 0);
        let o = parse_args(&args("--selftest -f eth1 -t 2 -q 1")).unwrap();
        assert!(o.selftest && o.server.is_none() && (o.start, o.queues) == (2, 1));
        let o = parse_args(&args("-l -s 10.0.0.2 -f eth1 --fail-nth 17 --abuse-tokens")).unwrap();
        assert_eq!(o.fail_nth, Some(17));
        assert_eq!(o.fail_from, FaultPhase::Setup);
        assert!(o.abuse_tokens);
        let o = parse_args(&args(
            "-l -s 10.0.0.2 -f eth1 --fail-nth 2 --fail-from bind",
        ))
        .unwrap();
        assert_eq!(o.fail_from, FaultPhase::Bind);
        assert!(parse_args(&args("--page-pools")).unwrap().page_pools);
        // 7.2's TX and RX flags.
        let o = parse_args(&args("-f eth1 -s 10.0.0.2 -p 5000 -z 3 -n")).unwrap();
        assert!(!o.listen && o.max_chunk == 3 && o.no_config);
        let o = parse_args(&args("-l -f eth1 -s 10.0.0.2 -L -t 3 -q 1 -n")).unwrap();
        assert!(o.fail_on_linear && o.no_config);
    }

    #[test]
    fn bad_arguments_are_refused() {
        refused(&[
            "-l -s 10.0.0.1",
            "-s nothost",
            "-s 1.2.3.4 -v 1",
            "-s 1.2.3.4 --batch 0",
            "-s 1.2.3.4 --batch 129",
            "-s 1.2.3.4 -x",
            "-p 1",
            "-s 1.2.3.4 --provider foo",
            "-s 1.2.3.4 -q 0",
            "-s 1.2.3.4 --port",
            "-s 1.2.3.4 --json=1",
            "-s 1.2.3.4 --nope",
            "-s 1.2.3.4 extra",
            "-s 1.2.3.4 -p 70000",
            "-l -s 10.0.0.2 -f eth1 -t 0",
            "-l -s 10.0.0.2 -c fd00::1 -f eth1",
            "--selftest",
            "--selftest -f eth1 -t 0",
            "--selftest -l -s 1.2.3.4 -f eth1",
            "-s 1.2.3.4 -t 4294967295 -q 2",
            "-l -s 10.0.0.2 -f eth1 --fail-nth 0",
            "-s 1.2.3.4 --fail-nth 3",
            "-l -s 10.0.0.2 -f eth1 --fail-from bind",
            "-l -s 10.0.0.2 -f eth1 --fail-nth 3 --fail-from listen",
            "-s 1.2.3.4 --abuse-tokens",
            "--page-pools -l -s 1.2.3.4 -f eth1",
            "-s 1.2.3.4 -L",
            "-s 1.2.3.4 -z 3",
            "-l -s 1.2.3.4 -f eth1 -z 3",
        ]);
        let kind = |s: &str| parse_args(&args(s)).err().map(|e| e.kind());
        assert_eq!(kind("--help"), Some(ErrorKind::DisplayHelp));
        assert_eq!(kind("-h"), Some(ErrorKind::DisplayHelp));
        assert_eq!(kind("-s 1.2.3.4 -p x"), Some(ErrorKind::ValueValidation));
        assert_eq!(kind("-s 1.2.3.4 --nope"), Some(ErrorKind::UnknownArgument));
        assert_eq!(kind("-s 1.2.3.4 -q 0"), Some(ErrorKind::ArgumentConflict));
        // A rule's error says which rule.
        let e = parse_args(&args("-s 1.2.3.4 -q 0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("-q must be at least 1"), "{e}");
    }
}
