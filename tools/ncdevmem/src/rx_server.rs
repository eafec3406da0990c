//! The devmem TCP server (`-l -s SERVER_IP -p PORT -f IFACE`): the NIC
//! configured (server_nic.rs, unless `--no-config`), the dma-buf bound to
//! RX queues START..START+NUM-1 (with `--fail-nth`'s fault injection), one
//! connection accepted and received into it (devmem_rx.rs), the summary
//! (rx_summary.rs); then unbound and the NIC restored, on every way out,
//! Ctrl-C and SIGTERM included.

use crate::cli::{FaultPhase, Opts};
use crate::devmem_rx::Receiver;
use crate::dmabuf::{page_size, Dmabuf, Provider};
use crate::fault::{FailNth, Injection};
use crate::hello;
use crate::netdev::{BindRx, Binding};
use crate::nic::{self, Nic, NicConfig};
use crate::outcome::Outcome;
use crate::personality::NicIdentity;
use crate::server_nic::configure;
use crate::signals;
use crate::tcp_info::TcpInfo;
use socket2::{Domain, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// The RX queues the dma-buf is bound to: START..START+NUM-1.
fn rx_queues(o: &Opts) -> Vec<u32> {
    (o.start..o.start + o.queues).collect()
}

/// Binds the dma-buf to the RX queues (with `-b`'s buffer size); the
/// binding lasts as long as the returned [`Binding`].
fn bind(o: &Opts, iface: &str, ifindex: u32, mem: &Dmabuf) -> io::Result<Binding> {
    let queues = rx_queues(o);
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

/// Prints the summary (with the connection's TCP_INFO counters, read
/// before it closes), closes the connection, then unbinds (the NIC is
/// restored after, by the caller's config guard); the run's outcome.
fn finish(o: &Opts, rx: Receiver, binding: Binding, interrupted: bool) -> Outcome {
    if interrupted {
        eprintln!("ncdevmem-rs: interrupted; restoring");
    }
    let mut s = rx.s;
    s.tcp = TcpInfo::of_or_absent(rx.conn.as_raw_fd());
    println!("{}", s.line(o.json, "server"));
    drop(rx.conn);
    drop(binding);
    if o.fail_on_linear && s.linear_bytes > 0 {
        eprintln!(
            "ncdevmem-rs: -L: {} bytes arrived outside the dma-buf",
            s.linear_bytes
        );
    }
    s.outcome(interrupted, o.fail_on_linear)
}

/// Runs the devmem server: the NIC configured, the dma-buf bound, one
/// connection received into it, the summary.
pub fn run(o: &Opts) -> io::Result<Outcome> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_args;

    #[test]
    fn the_bound_queues_start_at_t_and_number_q() {
        let args: Vec<String> = "-l -s 10.9.0.2 -f eth1 -t 3 -q 2"
            .split(' ')
            .map(String::from)
            .collect();
        assert_eq!(rx_queues(&parse_args(&args).unwrap()), [3, 4]);
        let args: Vec<String> = "-l -s 10.9.0.2 -f eth1"
            .split(' ')
            .map(String::from)
            .collect();
        assert_eq!(
            rx_queues(&parse_args(&args).unwrap()),
            (8..16).collect::<Vec<_>>()
        );
    }
}
