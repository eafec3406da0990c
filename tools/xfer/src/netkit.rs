//! netkit pairs and queue leases for the guest tests (Linux 7.2): Debian 12's
//! iproute2 (6.1) predates netkit, and nothing in the guest speaks the netdev
//! family's `queue-create`.

use ncdevmem_rs::netlink::{put_attr, put_nested, put_strz, put_u32, GenlSocket, NlError};
use std::io;

const RTM_NEWLINK: u16 = 16;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const IFLA_IFNAME: u16 = 3;
const IFLA_LINKINFO: u16 = 18;
const IFLA_NUM_RX_QUEUES: u16 = 32;
const IFLA_INFO_KIND: u16 = 1;
const IFLA_INFO_DATA: u16 = 2;
const IFLA_NETKIT_PEER_INFO: u16 = 1;
const IFLA_NETKIT_POLICY: u16 = 3;
const IFLA_NETKIT_PEER_POLICY: u16 = 4;
const IFLA_NETKIT_MODE: u16 = 5;
const NETKIT_PASS: u32 = 0;
const NETKIT_L2: u32 = 0;

/// An all-zero `struct ifinfomsg` (family AF_UNSPEC, no index, no flags).
const IFINFOMSG: [u8; 16] = [0; 16];

/// Creates an L2 netkit pair, `primary` and `peer`, both forwarding (no BPF
/// program needed) and each with room for `rx_queues` RX queues (one real: the
/// rest is what `queue-create` may lease into the peer).
pub fn add_pair(primary: &str, peer: &str, rx_queues: u32) -> io::Result<Result<(), NlError>> {
    let mut peer_info = IFINFOMSG.to_vec();
    put_strz(&mut peer_info, IFLA_IFNAME, peer);
    put_u32(&mut peer_info, IFLA_NUM_RX_QUEUES, rx_queues);
    let mut data = Vec::new();
    put_attr(&mut data, IFLA_NETKIT_PEER_INFO, &peer_info);
    put_u32(&mut data, IFLA_NETKIT_POLICY, NETKIT_PASS);
    put_u32(&mut data, IFLA_NETKIT_PEER_POLICY, NETKIT_PASS);
    put_u32(&mut data, IFLA_NETKIT_MODE, NETKIT_L2);
    let mut info = Vec::new();
    put_strz(&mut info, IFLA_INFO_KIND, "netkit");
    put_nested(&mut info, IFLA_INFO_DATA, &data);
    let mut body = IFINFOMSG.to_vec();
    put_strz(&mut body, IFLA_IFNAME, primary);
    put_u32(&mut body, IFLA_NUM_RX_QUEUES, rx_queues);
    put_nested(&mut body, IFLA_LINKINFO, &info);
    let mut sock = GenlSocket::open_route()?;
    Ok(sock
        .route_request(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &body)?
        .map(drop))
}
