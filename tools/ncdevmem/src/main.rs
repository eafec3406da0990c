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
//!
//! This file parses the command line and runs the mode it names; the modes
//! are the library's: `rx_server` (devmem TCP server), `zcrx_server`
//! (io_uring zcrx server), `client` (plain client), `devmem_client` (devmem
//! TX), `selftest` and `page_pool_list`.

use ncdevmem_rs::cli::parse_args;
use ncdevmem_rs::dmabuf::Provider;
use ncdevmem_rs::outcome::Outcome;
use ncdevmem_rs::wire_faults::{self, WireFaults};
use ncdevmem_rs::{
    client, devmem_client, page_pool_list, rx_server, selftest, signals, zcrx_server,
};
use std::path::Path;
use std::process::ExitCode;

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
        return match page_pool_list::run() {
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
    // The wire's faults for the run, put back when `_faults` drops (after
    // the run, whatever its outcome).
    let _faults = match (&o.wire_faults, o.iface.as_deref()) {
        (Some(spec), Some(iface)) => {
            let set = wire_faults::debugfs()
                .and_then(|debugfs| {
                    wire_faults::dir_of(Path::new("/sys/class/net"), &debugfs, iface)
                })
                .and_then(|dir| WireFaults::set(&dir, &spec.0));
            match set {
                Ok(set) => {
                    eprintln!(
                        "ncdevmem-rs: wire faults on {iface}: {} (put back at exit)",
                        wire_faults::format_spec(&spec.0)
                    );
                    Some(set)
                }
                Err(e) => {
                    eprintln!("ncdevmem-rs: --wire-faults: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        _ => None,
    };
    let r = if o.listen && o.zcrx {
        zcrx_server::run(&o)
    } else if o.listen {
        rx_server::run(&o)
    } else if o.iface.is_some() {
        devmem_client::run(&o)
    } else {
        client::run(&o)
    };
    match r {
        Ok(outcome) => {
            if outcome == Outcome::ValidationFailed {
                eprintln!("ncdevmem-rs: validation failed");
            }
            ExitCode::from(outcome.exit_status(signals::signal()))
        }
        Err(e) => {
            eprintln!("ncdevmem-rs: {e}");
            ExitCode::FAILURE
        }
    }
}
