//! The command line: upstream ncdevmem's getopt flags (7.2's
//! `Lls:c:p:v:q:t:f:z:n`),
//! their long spellings, and ncdevmem-rs's own options.

use crate::dmabuf::Provider;
use crate::pattern::PatternEnd;
use crate::tokens::MAX_RANGES;
use std::net::IpAddr;

pub const USAGE: &str = "usage:
  ncdevmem-rs -l -s SERVER_IP -p PORT -f IFACE [-c CLIENT_IP] [-v N] [-t START] [-q NUM] [options]
  ncdevmem-rs -s SERVER_IP -p PORT [-v N] --bytes N          (client: send the pattern)
  ncdevmem-rs -s SERVER_IP -p PORT -f IFACE [-c CLIENT_IP] [-z CHUNK] [-v N --bytes N]
                                                             (devmem TX from a dma-buf; Linux 7.2+)
  ncdevmem-rs --selftest -f IFACE [-t START] [-q NUM]        (bind-rx checks; root)
  ncdevmem-rs --page-pools                                   (list this namespace's page pools)
upstream flags:
  -l, --listen            server mode
  -s, --server IP         server address (IPv4 or IPv6); required except with --selftest
  -c, --client IP         client address: the ntuple rule also matches src-ip and src-port;
                          devmem TX binds the socket to it
  -p, --port PORT         TCP port (default 5201); the client sends from this port too
  -f, --iface IFACE       interface whose queues to bind (server, selftest); without -l,
                          send from a dma-buf bound to it for TX (stdin's lines, one send
                          each, as upstream; with --bytes N, N bytes of the -v pattern)
  -z, --max-chunk N       devmem TX: cut each send into iovecs of at most N bytes
  -n, --no-config         do not touch the NIC (no header split, RSS or ntuple changes)
  -L, --fail-on-linear    server: fail if any payload arrives outside the dma-buf
  -v, --validate N        validate (client: send) the pattern 1,2,..,N-1,END (0: off, client sends zeros; default 0)
  -t, --queue-start START first bound RX queue (default 8)
  -q, --queue-num NUM     number of bound RX queues (default 8)
options:
  --selftest              run the bind-rx checks on -f IFACE and exit (TAP-like output)
  --page-pools            list the page pools of this namespace's devices (inflight
                          buffers; detached: destroyed, waiting for buffers) and exit
  --provider P            udmabuf (default) or dma-heap
  --size BYTES            dma-buf size (default 65536000, as upstream)
  --batch N               most token ranges per SO_DEVMEM_DONTNEED, 1..128 (default 128);
                          a read's tokens are returned before the next read
  --hold-tokens-secs S    keep every token until no data has come for S seconds
  --max-bytes N           stop after N bytes
  --bytes N               client: bytes to send
  --json                  print the summary as JSON
  --pattern-end E         the -v pattern's closing byte: zero (6.12's upstream ncdevmem),
                          newline (7.2's), or auto (the running kernel's; default)
  --zcrx                  server: receive with io_uring zero-copy receive (Linux 6.15+) into
                          the dma-buf as the area of queue -t START (-q 1), not devmem TCP
  --rx-buf-len N          --zcrx: NIC buffer size, a power of two (0: a page; Linux 7.2+)
testing:
  --fail-nth N            make the Nth kernel fault site (allocation) this thread passes
                          while configuring the NIC and binding fail (CONFIG_FAULT_INJECTION)
  --abuse-tokens          on the first read with two dma-buf frags, check SO_DEVMEM_DONTNEED
                          misuse (bad lengths, unknown, stale, duplicate tokens, the 1024 limit)
  -h, --help              this text
Long options take their value as --opt VALUE or --opt=VALUE; short ones as -p 5201 or -p5201.";

#[derive(Debug, Default, PartialEq)]
pub struct Opts {
    pub listen: bool,
    pub server: Option<IpAddr>,
    pub client: Option<IpAddr>,
    pub port: u16,
    pub iface: Option<String>,
    pub validate: u8,
    pub start: u32,
    pub queues: u32,
    pub provider: Option<Provider>,
    pub size: usize,
    pub batch: usize,
    pub hold: u64,
    pub max_bytes: u64,
    pub bytes: u64,
    pub json: bool,
    pub no_config: bool,
    pub selftest: bool,
    pub fail_nth: Option<u32>,
    pub abuse_tokens: bool,
    pub page_pools: bool,
    pub pattern_end: PatternEnd,
    pub max_chunk: usize,
    pub fail_on_linear: bool,
    pub zcrx: bool,
    pub rx_buf_len: u32,
}

/// (short, long, takes a value)
const FLAGS: &[(Option<char>, &str, bool)] = &[
    (Some('l'), "listen", false),
    (Some('s'), "server", true),
    (Some('c'), "client", true),
    (Some('p'), "port", true),
    (Some('f'), "iface", true),
    (Some('v'), "validate", true),
    (Some('t'), "queue-start", true),
    (Some('q'), "queue-num", true),
    (Some('h'), "help", false),
    (Some('z'), "max-chunk", true),
    (Some('n'), "no-config", false),
    (Some('L'), "fail-on-linear", false),
    (None, "provider", true),
    (None, "size", true),
    (None, "batch", true),
    (None, "hold-tokens-secs", true),
    (None, "max-bytes", true),
    (None, "bytes", true),
    (None, "json", false),
    (None, "selftest", false),
    (None, "fail-nth", true),
    (None, "abuse-tokens", false),
    (None, "page-pools", false),
    (None, "pattern-end", true),
    (None, "zcrx", false),
    (None, "rx-buf-len", true),
];

fn num<T: std::str::FromStr>(s: &str, name: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("bad value for {name}: {s}"))
}

fn apply(o: &mut Opts, long: &str, v: Option<&str>) -> Result<(), String> {
    let v = v.unwrap_or_default();
    let n = &format!("--{long}");
    match long {
        "listen" => o.listen = true,
        "server" => o.server = Some(num(v, n)?),
        "client" => o.client = Some(num(v, n)?),
        "port" => o.port = num(v, n)?,
        "iface" => o.iface = Some(v.to_string()),
        "validate" => o.validate = num(v, n)?,
        "queue-start" => o.start = num(v, n)?,
        "queue-num" => o.queues = num(v, n)?,
        "help" => return Err(String::new()),
        "provider" => o.provider = Some(v.parse()?),
        "size" => o.size = num(v, n)?,
        "batch" => o.batch = num(v, n)?,
        "hold-tokens-secs" => o.hold = num(v, n)?,
        "max-bytes" => o.max_bytes = num(v, n)?,
        "bytes" => o.bytes = num(v, n)?,
        "json" => o.json = true,
        "no-config" => o.no_config = true,
        "selftest" => o.selftest = true,
        "fail-nth" => o.fail_nth = Some(num(v, n)?),
        "abuse-tokens" => o.abuse_tokens = true,
        "page-pools" => o.page_pools = true,
        "pattern-end" => o.pattern_end = v.parse()?,
        "max-chunk" => o.max_chunk = num(v, n)?,
        "fail-on-linear" => o.fail_on_linear = true,
        "zcrx" => o.zcrx = true,
        "rx-buf-len" => o.rx_buf_len = num(v, n)?,
        _ => unreachable!("{long}"),
    }
    Ok(())
}

/// Parses the arguments (without the program name). `Err("")` means help.
pub fn parse_args(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        port: 5201,
        start: 8,
        queues: 8,
        size: 16000 * 4096,
        batch: MAX_RANGES,
        ..Opts::default()
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if let Some(long) = a.strip_prefix("--") {
            if long.is_empty() {
                if let Some(extra) = args.get(i + 1) {
                    return Err(format!("unexpected argument '{extra}'"));
                }
                break;
            }
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let Some(&(_, name, takes)) = FLAGS.iter().find(|f| f.1 == name) else {
                return Err(format!("unknown option '--{name}'"));
            };
            let value = match (takes, inline) {
                (false, Some(_)) => return Err(format!("--{name} takes no value")),
                (false, None) => None,
                (true, Some(v)) => Some(v.to_string()),
                (true, None) => {
                    i += 1;
                    Some(
                        args.get(i)
                            .cloned()
                            .ok_or(format!("--{name} needs a value"))?,
                    )
                }
            };
            apply(&mut o, name, value.as_deref())?;
        } else if a.len() > 1 && a.starts_with('-') {
            // A getopt cluster: -l, -p5201, -lp 5201.
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                let Some(&(_, name, takes)) = FLAGS.iter().find(|f| f.0 == Some(c)) else {
                    return Err(format!("unknown option '-{c}'"));
                };
                if takes {
                    let rest: String = chars[j + 1..].iter().collect();
                    let v = if rest.is_empty() {
                        i += 1;
                        args.get(i).cloned().ok_or(format!("-{c} needs a value"))?
                    } else {
                        rest
                    };
                    apply(&mut o, name, Some(&v))
                        .map_err(|e| e.replace(&format!("--{name}"), &format!("-{c}")))?;
                    break;
                }
                apply(&mut o, name, None)?;
                j += 1;
            }
        } else {
            return Err(format!("unexpected argument '{a}'"));
        }
        i += 1;
    }
    check(&o)?;
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
    if o.fail_on_linear && !o.listen {
        return Err("-L is a server option (-l)".into());
    }
    if o.max_chunk > 0 && (o.listen || o.iface.is_none()) {
        return Err("-z is a devmem TX option (-f IFACE without -l)".into());
    }
    if o.zcrx && (!o.listen || o.queues != 1 || o.fail_nth.is_some() || o.abuse_tokens) {
        return Err("--zcrx is a server option (-l) for one queue (-q 1)".into());
    }
    if o.rx_buf_len != 0 && !o.zcrx {
        return Err("--rx-buf-len goes with --zcrx".into());
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

    #[test]
    fn zcrx_is_a_one_queue_server_option() {
        let o = parse_args(&args(
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --rx-buf-len 65536",
        ))
        .unwrap();
        assert!(o.zcrx);
        assert_eq!((o.start, o.queues, o.rx_buf_len), (15, 1, 65536));
        for bad in [
            "-l -s 10.9.0.2 -f eth1 -t 15 --zcrx",
            "-s 10.9.0.2 -f eth1 -q 1 --zcrx",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --rx-buf-len 65536",
            "-l -s 10.9.0.2 -f eth1 -t 15 -q 1 --zcrx --abuse-tokens",
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad}");
        }
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
        assert!(o.abuse_tokens);
        assert!(parse_args(&args("--page-pools")).unwrap().page_pools);
        // 7.2's TX and RX flags.
        let o = parse_args(&args("-f eth1 -s 10.0.0.2 -p 5000 -z 3 -n")).unwrap();
        assert!(!o.listen && o.max_chunk == 3 && o.no_config);
        let o = parse_args(&args("-l -f eth1 -s 10.0.0.2 -L -t 3 -q 1 -n")).unwrap();
        assert!(o.fail_on_linear && o.no_config);
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
            "-s 1.2.3.4 --abuse-tokens",
            "--page-pools -l -s 1.2.3.4 -f eth1",
            "-s 1.2.3.4 -L",
            "-s 1.2.3.4 -z 3",
            "-l -s 1.2.3.4 -f eth1 -z 3",
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad}");
        }
        assert_eq!(parse_args(&args("--help")).err(), Some(String::new()));
        assert_eq!(parse_args(&args("-h")).err(), Some(String::new()));
        assert_eq!(
            parse_args(&args("-s 1.2.3.4 -p x")).err().unwrap(),
            "bad value for -p: x"
        );
    }
}
