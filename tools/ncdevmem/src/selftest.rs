//! `--selftest`: upstream ncdevmem's `run_devmem_tests()` checks, and more,
//! against a real interface. One line per check, `ok N - name` or
//! `not ok N - name: reason`; every check takes back what it changed, and
//! the settings are compared with the ones found at the start at the end.

use crate::dmabuf::{Dmabuf, Provider};
use crate::ethtool_nl::{Channels, ChannelsSet, DataSplit};
use crate::netdev::{bind_rx, BindRx, Binding, QueueEntry};
use crate::netlink::NlError;
use crate::nic::{Nic, NicConfig, NicOps};
use crate::signals;
use std::io::{self, Write};

/// The results so far.
#[derive(Default)]
pub struct Tap {
    pub n: u32,
    pub failed: u32,
}

/// How a check went.
pub enum Outcome {
    /// Passed, with a note (printed as a `#` line when not empty).
    Pass(String),
    /// Failed, with the reason.
    Fail(String),
    /// Not run, with the reason (counts as passed, as TAP's SKIP).
    Skip(String),
}

impl Tap {
    /// Records one check and returns its lines.
    pub fn record(&mut self, name: &str, o: &Outcome) -> String {
        self.n += 1;
        match o {
            Outcome::Pass(note) if note.is_empty() => format!("ok {} - {name}", self.n),
            Outcome::Pass(note) => format!("ok {} - {name}\n# {note}", self.n),
            Outcome::Skip(why) => format!("ok {} - {name} # SKIP {why}", self.n),
            Outcome::Fail(why) => {
                self.failed += 1;
                format!("not ok {} - {name}: {why}", self.n)
            }
        }
    }

    fn check(&mut self, name: &str, o: Outcome) {
        println!("{}", self.record(name, &o));
        let _ = io::stdout().flush();
    }
}

/// A request that must be refused.
pub fn expect_refused<T>(r: io::Result<Result<T, NlError>>) -> Outcome {
    match r {
        Ok(Err(e)) => Outcome::Pass(format!("refused: {e}")),
        Ok(Ok(_)) => Outcome::Fail("the kernel accepted it".into()),
        Err(e) => Outcome::Fail(format!("could not send the request: {e}")),
    }
}

/// A `bind-rx` request with `n` queue entries that have no attributes (what
/// upstream's "empty queues array" check sends).
pub fn empty_queue_entries(ifindex: u32, fd: u32, n: u32) -> BindRx {
    BindRx {
        queues: vec![QueueEntry::Empty; n as usize],
        ..BindRx::new(ifindex, fd, &[])
    }
}

/// The channels request that leaves exactly `start` RX queues, removing
/// queues `start..`: fewer RX channels if the device has them, else fewer
/// combined ones. `None` if it cannot be done (or changes nothing).
pub fn shrink_to(c: &Channels, start: u32) -> Option<ChannelsSet> {
    if start >= c.rx_queues() {
        return None;
    }
    let mut s = ChannelsSet::default();
    if c.rx > 0 && start >= c.combined {
        s.rx = Some(start - c.combined);
    } else if c.combined > 0 && c.rx == 0 {
        s.combined = Some(start);
    } else {
        // Fewer combined channels than `start` but RX ones too, or start
        // below the combined count with RX channels: drop the RX ones and
        // cut the combined ones.
        s.rx = Some(0);
        s.combined = Some(start);
    }
    if s.combined == Some(0) && s.rx == Some(0) {
        return None;
    }
    Some(s)
}

/// Capability data (`struct __user_cap_data_struct`), version 3 has two.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const CAP_NET_ADMIN: u32 = 12;

/// Drops CAP_NET_ADMIN from this thread's effective and permitted sets.
fn drop_cap_net_admin() -> io::Result<()> {
    let mut hdr = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: a v3 header and room for two data structs, as capget wants.
    if unsafe { libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    data[0].effective &= !(1 << CAP_NET_ADMIN);
    data[0].permitted &= !(1 << CAP_NET_ADMIN);
    // SAFETY: as above; capset reads them.
    if unsafe { libc::syscall(libc::SYS_capset, &mut hdr, data.as_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `request` from a child without CAP_NET_ADMIN. Returns the child's
/// errno (0: the bind succeeded).
pub fn bind_in_unprivileged_child(request: &BindRx) -> Result<i32, String> {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    // SAFETY: fork in a single-threaded process; the child only makes
    // syscalls and allocates, then leaves with _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        let code = match drop_cap_net_admin() {
            Err(_) => 254,
            Ok(()) => match request.send() {
                Ok(Ok(_)) => 0,
                Ok(Err(e)) => e.errno.clamp(1, 253),
                Err(_) => 255,
            },
        };
        // SAFETY: leaving the child without running the parent's destructors
        // (they would restore the NIC twice).
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    if unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        return Err(format!("waitpid: {}", io::Error::last_os_error()));
    }
    if !libc::WIFEXITED(status) {
        return Err(format!("the child died (status {status:#x})"));
    }
    match libc::WEXITSTATUS(status) {
        254 => Err("could not drop CAP_NET_ADMIN (capset)".into()),
        255 => Err("the child could not send the request".into()),
        c => Ok(c),
    }
}

/// What the check at the end compares.
#[derive(Debug, PartialEq)]
struct Snapshot {
    split: Option<DataSplit>,
    channels: Option<Channels>,
    indir: Option<Vec<u32>>,
    rules: Option<Vec<u32>>,
}

fn snapshot<B: NicOps>(n: &mut B) -> Snapshot {
    Snapshot {
        split: n.data_split().ok().flatten(),
        channels: n.channels().ok(),
        indir: n.indir().ok(),
        rules: n.rule_locs().ok(),
    }
}

fn errno_name(e: i32) -> String {
    io::Error::from_raw_os_error(e).to_string()
}

/// Runs the checks on `iface`; returns whether all passed.
pub fn run(iface: &str, start: u32, num: u32, provider: Provider, size: usize) -> io::Result<bool> {
    signals::install()?;
    let bail = |e: String| {
        println!("Bail out! {e}");
        io::Error::other(e)
    };
    let nic = Nic::open(iface).map_err(|e| bail(e.to_string()))?;
    let ifindex = nic.ifindex;
    let mem = Dmabuf::new(provider, size).map_err(|e| bail(e.to_string()))?;
    let fd = mem.fd() as u32;
    let queues: Vec<u32> = (start..start + num).collect();
    let range = format!("{start}..{}", start + num - 1);
    let mut base = NicConfig::new(nic);
    let before = snapshot(base.nic());
    let mut t = Tap::default();
    println!("# ncdevmem-rs selftest on {iface} (ifindex {ifindex}), queues {range}");

    let stopped = |t: &mut Tap| {
        if signals::stop_requested() {
            println!("Bail out! interrupted after {} checks", t.n);
            true
        } else {
            false
        }
    };

    // Upstream: configure_rss(), configure_headersplit(1).
    let o = match base.set_rss_equal(start) {
        Ok(changed) => Outcome::Pass(if changed { "" } else { "already so" }.into()),
        Err(e) => Outcome::Fail(e.to_string()),
    };
    t.check(
        &format!("RSS spreads over queues 0..{} (equal {start})", start - 1),
        o,
    );
    let o = match base.set_data_split(DataSplit::Enabled) {
        Ok(changed) => Outcome::Pass(if changed { "" } else { "already on" }.into()),
        Err(e) => Outcome::Fail(e.to_string()),
    };
    t.check("header split on (tcp-data-split on)", o);

    // Upstream: binding an "empty queues array" must fail. Upstream sends
    // queue entries without attributes; a request without any is checked too.
    t.check(
        "bind with no queues fails",
        expect_refused(bind_rx(ifindex, fd, &[])),
    );
    t.check(
        "bind with empty queue entries fails",
        expect_refused(empty_queue_entries(ifindex, fd, num).send()),
    );

    // Upstream: binding with header split off must fail.
    let mark = base.mark();
    let o = match base.set_data_split(DataSplit::Disabled) {
        Err(e) => Outcome::Fail(format!("could not turn header split off: {e}")),
        Ok(_) => expect_refused(bind_rx(ifindex, fd, &queues)),
    };
    let errs = base.restore_to(mark);
    let o = match (o, errs.first()) {
        (_, Some(e)) => Outcome::Fail(format!("could not turn header split back on: {e}")),
        (o, None) => o,
    };
    t.check("bind with header split off fails", o);
    if stopped(&mut t) {
        return Ok(false);
    }

    // Upstream: bind (must work), then `ethtool -L` removing a bound queue
    // must fail while bound.
    let first: Option<Binding> = match bind_rx(ifindex, fd, &queues) {
        Ok(Ok(b)) => {
            t.check(
                &format!("bind queues {range}"),
                Outcome::Pass(format!("binding id {}", b.id)),
            );
            Some(b)
        }
        Ok(Err(e)) => {
            t.check(
                &format!("bind queues {range}"),
                Outcome::Fail(e.to_string()),
            );
            None
        }
        Err(e) => {
            t.check(
                &format!("bind queues {range}"),
                Outcome::Fail(e.to_string()),
            );
            None
        }
    };
    let skip = || Outcome::Skip("the first bind failed".into());
    let o = match &first {
        None => skip(),
        Some(_) => expect_refused(bind_rx(ifindex, fd, &queues)),
    };
    t.check("binding the same queues again fails while bound", o);

    let channels = base.nic().channels();
    let o = match (&first, &channels) {
        (None, _) => skip(),
        (_, Err(e)) => Outcome::Fail(e.to_string()),
        (Some(_), Ok(c)) => match shrink_to(c, start) {
            None => Outcome::Fail(format!("cannot remove queue {start} with {c:?}")),
            Some(req) => {
                let mark = base.mark();
                match base.set_channels(&req) {
                    Err(e) => Outcome::Pass(format!("refused: {e}")),
                    Ok(_) => {
                        let errs = base.restore_to(mark);
                        Outcome::Fail(format!(
                            "the kernel accepted channels {}{}",
                            crate::nic::describe_channels(&req),
                            errs.first()
                                .map(|e| format!("; and restoring failed: {e}"))
                                .unwrap_or_default()
                        ))
                    }
                }
            }
        },
    };
    t.check("removing a bound queue (ethtool -L) fails", o);

    // Upstream: "closing the netlink socket does an implicit unbind".
    let o = match first {
        None => skip(),
        Some(b) => {
            drop(b);
            match bind_rx(ifindex, fd, &queues) {
                Ok(Ok(_)) => Outcome::Pass(String::new()),
                Ok(Err(e)) => Outcome::Fail(format!("rebinding failed: {e}")),
                Err(e) => Outcome::Fail(e.to_string()),
            }
        }
    };
    t.check(
        "closing the netlink socket unbinds (the queues bind again)",
        o,
    );
    if stopped(&mut t) {
        return Ok(false);
    }

    // Added checks.
    let past = match &channels {
        Ok(c) => Some(c.rx_queues()),
        Err(_) => base.nic().rx_rings().ok(),
    };
    match past {
        Some(q) => t.check(
            &format!("bind queue {q} (one past the last RX queue) fails"),
            expect_refused(bind_rx(ifindex, fd, &[q])),
        ),
        None => t.check(
            "bind a queue out of range fails",
            Outcome::Fail("cannot tell how many RX queues there are".into()),
        ),
    }
    t.check(
        "bind with an invalid fd (-1) fails",
        expect_refused(bind_rx(ifindex, u32::MAX, &queues)),
    );
    let o = match std::fs::File::open("/dev/null") {
        Ok(f) => {
            use std::os::fd::AsRawFd;
            expect_refused(bind_rx(ifindex, f.as_raw_fd() as u32, &queues))
        }
        Err(e) => Outcome::Fail(format!("/dev/null: {e}")),
    };
    t.check("bind with a fd that is not a dma-buf fails", o);
    let o = match bind_in_unprivileged_child(&BindRx::new(ifindex, fd, &queues)) {
        Ok(libc::EPERM) => Outcome::Pass(format!("refused: {}", errno_name(libc::EPERM))),
        Ok(0) => Outcome::Fail("the kernel accepted it".into()),
        Ok(e) => Outcome::Fail(format!("failed with {}, not EPERM", errno_name(e))),
        Err(e) => Outcome::Fail(e),
    };
    t.check("bind without CAP_NET_ADMIN fails with EPERM", o);

    // Everything back as it was.
    let errs = base.restore();
    let after = snapshot(base.nic());
    let o = if let Some(e) = errs.first() {
        Outcome::Fail(e.to_string())
    } else if after != before {
        Outcome::Fail(format!("before {before:?}, after {after:?}"))
    } else {
        Outcome::Pass(String::new())
    };
    t.check(
        "settings restored (header split, channels, RSS table, rules)",
        o,
    );
    drop(mem);
    println!("1..{}", t.n);
    if t.failed > 0 {
        println!("# {} of {} checks failed", t.failed, t.n);
    }
    Ok(t.failed == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tap_lines() {
        let mut t = Tap::default();
        assert_eq!(t.record("a", &Outcome::Pass(String::new())), "ok 1 - a");
        assert_eq!(
            t.record("b", &Outcome::Pass("refused: x".into())),
            "ok 2 - b\n# refused: x"
        );
        assert_eq!(
            t.record("c", &Outcome::Fail("the kernel accepted it".into())),
            "not ok 3 - c: the kernel accepted it"
        );
        assert_eq!(
            t.record("d", &Outcome::Skip("no".into())),
            "ok 4 - d # SKIP no"
        );
        assert_eq!((t.n, t.failed), (4, 1));
    }

    #[test]
    fn refusals() {
        let ok: io::Result<Result<(), NlError>> = Ok(Err(NlError {
            errno: libc::ERANGE,
            msg: Some("rx queue index out of range".into()),
        }));
        match expect_refused(ok) {
            Outcome::Pass(n) => assert!(n.contains("rx queue index out of range"), "{n}"),
            _ => panic!(),
        }
        assert!(matches!(expect_refused::<()>(Ok(Ok(()))), Outcome::Fail(_)));
        assert!(matches!(
            expect_refused::<()>(Err(io::Error::other("x"))),
            Outcome::Fail(_)
        ));
    }

    #[test]
    fn empty_entries_request() {
        let r = empty_queue_entries(3, 4, 2);
        assert_eq!((r.ifindex, r.dmabuf_fd), (3, 4));
        assert_eq!(r.queues, vec![QueueEntry::Empty; 2]);
        assert_eq!(r.rx_page_size, None);
    }

    fn ch(rx: u32, combined: u32) -> Channels {
        Channels {
            rx,
            tx: 4,
            combined,
            ..Default::default()
        }
    }

    #[test]
    fn shrinking_removes_queues_from_start() {
        // Separate RX channels (devmemnic): rx = start.
        assert_eq!(
            shrink_to(&ch(16, 0), 8),
            Some(ChannelsSet {
                rx: Some(8),
                ..Default::default()
            })
        );
        // Combined only: combined = start.
        assert_eq!(
            shrink_to(&ch(0, 16), 8),
            Some(ChannelsSet {
                combined: Some(8),
                ..Default::default()
            })
        );
        // Both: the combined ones come first.
        assert_eq!(
            shrink_to(&ch(4, 4), 6),
            Some(ChannelsSet {
                rx: Some(2),
                ..Default::default()
            })
        );
        assert_eq!(
            shrink_to(&ch(4, 8), 6),
            Some(ChannelsSet {
                rx: Some(0),
                combined: Some(6),
                ..Default::default()
            })
        );
        // Nothing to remove.
        assert_eq!(shrink_to(&ch(8, 0), 8), None);
        assert_eq!(
            shrink_to(&ch(16, 0), 0),
            Some(ChannelsSet {
                rx: Some(0),
                ..Default::default()
            })
        );
    }

    #[test]
    fn capability_structs_match_c() {
        // struct __user_cap_header_struct { __u32 version; int pid; } and
        // struct __user_cap_data_struct { __u32 effective, permitted, inheritable; }.
        assert_eq!(std::mem::size_of::<CapHeader>(), 8);
        assert_eq!(std::mem::size_of::<CapData>(), 12);
    }
}
