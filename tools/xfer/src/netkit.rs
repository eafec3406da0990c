//! netkit pairs for the guest tests (Linux 7.2): Debian 12's iproute2 (6.1)
//! predates netkit. rtnetlink's `newlink`, from netlink-bindings' rt-link
//! (the kernel's YNL spec).

use ncdevmem_rs::netlink::{request_ack, NlResult};
use netlink_bindings::rt_link::{self, Ifinfomsg, NetkitMode, NetkitPolicy};

/// The `peer-info` of a netkit pair: the peer's `ifinfomsg` (all zero) and
/// link attributes, as one binary attribute.
fn peer_info(peer: &str, rx_queues: u32) -> Vec<u8> {
    let mut info = Ifinfomsg::new().as_slice().to_vec();
    rt_link::PushLinkAttrs::new(&mut info)
        .push_ifname_bytes(peer.as_bytes())
        .push_num_rx_queues(rx_queues);
    info
}

/// The `newlink` request creating the pair.
fn newlink(primary: &str, peer: &str, rx_queues: u32) -> rt_link::OpNewlinkDo<'static> {
    let mut request = rt_link::Request::new()
        .set_create()
        .set_excl()
        .op_newlink_do(&Ifinfomsg::new());
    request
        .encode()
        .push_ifname_bytes(primary.as_bytes())
        .push_num_rx_queues(rx_queues)
        .nested_linkinfo()
        .nested_data_netkit()
        .push_peer_info(&peer_info(peer, rx_queues))
        .push_policy(NetkitPolicy::Forward as u32)
        .push_peer_policy(NetkitPolicy::Forward as u32)
        .push_mode(NetkitMode::L2 as u32);
    request
}

/// Creates an L2 netkit pair, `primary` and `peer`, both forwarding (no BPF
/// program needed) and each with room for `rx_queues` RX queues (one real: the
/// rest is what `queue-create` may lease into the peer).
pub fn add_pair(primary: &str, peer: &str, rx_queues: u32) -> NlResult<()> {
    let request = newlink(primary, peer, rx_queues);
    request_ack(&request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ncdevmem_rs::netlink::test_wire::nla;
    use netlink_bindings::traits::NetlinkRequest;

    /// The request on the wire, checked against include/uapi/linux/if_link.h
    /// (7.2): IFLA_IFNAME 3, IFLA_NUM_RX_QUEUES 32, IFLA_LINKINFO 18 {
    /// IFLA_INFO_KIND 1 "netkit", IFLA_INFO_DATA 2 { IFLA_NETKIT_PEER_INFO 1,
    /// _POLICY 3, _PEER_POLICY 4 (NETKIT_PASS 0), _MODE 5 (NETKIT_L2 0) } },
    /// RTM_NEWLINK 16 with NLM_F_CREATE | NLM_F_EXCL.
    #[test]
    fn newlink_request_bytes() {
        let request = newlink("nk0", "nk1", 4);
        assert_eq!(
            request.protocol(),
            netlink_bindings::traits::Protocol::Raw {
                protonum: libc::NETLINK_ROUTE as u16,
                request_type: 16
            }
        );
        assert_eq!(request.flags(), 0x400 | 0x200);
        let mut peer = vec![0u8; 16];
        peer.extend(nla(8, 3));
        peer.extend(b"nk1\0");
        peer.extend(nla(8, 32));
        peer.extend(4u32.to_ne_bytes());
        let mut data = nla(4 + peer.len() as u16, 1);
        data.extend(&peer);
        for kind in [3, 4, 5] {
            data.extend(nla(8, kind));
            data.extend(0u32.to_ne_bytes());
        }
        let mut info = nla(4 + 7, 1);
        info.extend(b"netkit\0\0");
        info.extend(nla(4 + data.len() as u16, 2 | 0x8000));
        info.extend(&data);
        let mut want = vec![0u8; 16];
        want.extend(nla(8, 3));
        want.extend(b"nk0\0");
        want.extend(nla(8, 32));
        want.extend(4u32.to_ne_bytes());
        want.extend(nla(4 + info.len() as u16, 18 | 0x8000));
        want.extend(&info);
        assert_eq!(request.payload(), &want[..]);
    }
}
