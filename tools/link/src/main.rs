//! dmnic-link: makes a devmemnic pair with a named peer, as `ip link add
//! NAME type veth peer name PEER` does for veth (stock iproute2 cannot send
//! a peer for the devmemnic kind). Everything else about the devices is
//! `ip link`'s: `ip -d link show`, `ip link set`, `ip link del NAME` (which
//! deletes the pair).

use clap::{Parser, Subcommand};
use dmnic_link::{add, check_ifname, Mac, Pair};
use std::ffi::CString;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "dmnic-link",
    version,
    about = "Makes devmemnic pairs with a named peer"
)]
struct Opts {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Make a pair: NAME and its peer, in this network namespace (root).
    Add {
        /// The device's name.
        #[arg(value_parser = ifname)]
        name: String,
        /// The peer's name (default: the kernel's `dmnic%d`).
        #[arg(long, value_name = "NAME", value_parser = ifname)]
        peer: Option<String>,
        /// The device's Ethernet address (default: random).
        #[arg(long, value_name = "MAC")]
        address: Option<Mac>,
        /// The peer's Ethernet address (default: random).
        #[arg(long, value_name = "MAC")]
        peer_address: Option<Mac>,
    },
}

fn ifname(s: &str) -> Result<String, String> {
    check_ifname(s).map(|()| s.to_string())
}

fn exists(name: &str) -> bool {
    let Ok(c) = CString::new(name) else {
        return false;
    };
    // SAFETY: a NUL-terminated string, read for the call.
    unsafe { libc::if_nametoindex(c.as_ptr()) != 0 }
}

fn run(cmd: Cmd) -> Result<(), String> {
    match cmd {
        Cmd::Add {
            name,
            peer,
            address,
            peer_address,
        } => {
            if peer.as_ref() == Some(&name) {
                return Err(format!("the peer cannot be named {name} too"));
            }
            let pair = Pair {
                name: name.clone(),
                peer: peer.clone(),
                address,
                peer_address,
            };
            match add(&pair) {
                Ok(Ok(())) => {}
                Ok(Err(refused)) => return Err(format!("cannot add {name}: {refused}")),
                Err(e) => return Err(format!("cannot add {name}: netlink: {e}")),
            }
            // A module older than named peers ignores the attribute (its
            // kind had none) and names the peer dmnic%d: say so.
            if let Some(p) = peer.filter(|p| !exists(p)) {
                return Err(format!(
                    "{name} was made but its peer is not named {p}: the loaded devmemnic \
                     ignores peer names (older module); `ip link del {name}` removes the pair"
                ));
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let opts = Opts::parse();
    match run(opts.cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dmnic-link: {e}");
            ExitCode::FAILURE
        }
    }
}
