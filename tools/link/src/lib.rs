//! The rtnetlink request that makes a devmemnic pair with a named peer.
//!
//! Stock iproute2 knows `peer name` only for the kinds it was built with
//! (veth, vxcan, netkit): for any other kind it refuses the words after
//! `type KIND`. The devmemnic kind takes its peer as veth does, one
//! attribute in `IFLA_INFO_DATA` holding the peer's `ifinfomsg` and link
//! attributes; no YNL spec describes the kind, so this request is built
//! from netlink-bindings' rt-link link attributes plus that one attribute
//! by hand.

use ncdevmem_rs::netlink::{request_ack, NlResult};
use netlink_bindings::rt_link::{self, Ifinfomsg};
use netlink_bindings::traits::Pusher;
use netlink_bindings::utils::{align, finalize_nested_header, push_header, push_nested_header};

/// The kind's name (`IFLA_INFO_KIND`).
pub const KIND: &str = "devmemnic";

/// `IFLA_INFO_DATA` (include/uapi/linux/if_link.h).
const IFLA_INFO_DATA: u16 = 2;

/// `IFLA_DEVMEMNIC_PEER`: the peer's `ifinfomsg` (all zero) followed by its
/// `IFLA_IFNAME` and `IFLA_ADDRESS` (the module's
/// include/devmemnic_helpers.h; the module refuses any other attribute in it).
pub const IFLA_DEVMEMNIC_PEER: u16 = 1;

/// An Ethernet address, parsed from `aa:bb:cc:dd:ee:ff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mac(pub [u8; 6]);

impl std::str::FromStr for Mac {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not an Ethernet address (aa:bb:cc:dd:ee:ff)");
        let mut mac = [0u8; 6];
        let mut parts = s.split(':');
        for b in &mut mac {
            let p = parts.next().ok_or_else(bad)?;
            if p.is_empty() || p.len() > 2 {
                return Err(bad());
            }
            *b = u8::from_str_radix(p, 16).map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        // The kernel takes only unicast addresses for a device (and not zero).
        if mac[0] & 1 != 0 || mac == [0; 6] {
            return Err(format!(
                "{s} is a multicast or zero address, not a device's"
            ));
        }
        Ok(Mac(mac))
    }
}

/// What to make: a device and its peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The device's name.
    pub name: String,
    /// The peer's name (`None`: the kernel names it `dmnic%d`).
    pub peer: Option<String>,
    /// The device's address (`None`: random).
    pub address: Option<Mac>,
    /// The peer's address (`None`: random).
    pub peer_address: Option<Mac>,
}

/// Checks an interface name as the kernel will (`dev_valid_name`), so a
/// bad one is refused with a reason rather than a bare EINVAL.
pub fn check_ifname(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 15 {
        return Err(format!("{name:?}: an interface name has 1 to 15 bytes"));
    }
    if name == "."
        || name == ".."
        || name
            .bytes()
            .any(|b| b == b'/' || b == b':' || b.is_ascii_whitespace() || b == 0)
    {
        return Err(format!("{name:?}: not a valid interface name"));
    }
    Ok(())
}

/// The peer attribute's payload: a zero `ifinfomsg`, then its name and address.
fn peer_req(peer: Option<&str>, address: Option<Mac>) -> Vec<u8> {
    let mut req = Ifinfomsg::new().as_slice().to_vec();
    {
        let mut attrs = rt_link::PushLinkAttrs::new(&mut req);
        if let Some(name) = peer {
            attrs = attrs.push_ifname_bytes(name.as_bytes());
        }
        if let Some(Mac(mac)) = address {
            attrs = attrs.push_address(&mac);
        }
        drop(attrs);
    }
    // Padded whole, as the attributes inside are.
    align(&mut req);
    req
}

/// The `newlink` request making `pair`.
pub fn newlink(pair: &Pair) -> rt_link::OpNewlinkDo<'static> {
    let mut request = rt_link::Request::new()
        .set_create()
        .set_excl()
        .op_newlink_do(&Ifinfomsg::new());
    let mut attrs = request.encode().push_ifname_bytes(pair.name.as_bytes());
    if let Some(Mac(mac)) = pair.address {
        attrs = attrs.push_address(&mac);
    }
    let mut info = attrs.nested_linkinfo().push_kind_bytes(KIND.as_bytes());
    if pair.peer.is_some() || pair.peer_address.is_some() {
        let buf = info.as_vec_mut();
        let data = push_nested_header(buf, IFLA_INFO_DATA);
        let req = peer_req(pair.peer.as_deref(), pair.peer_address);
        push_header(buf, IFLA_DEVMEMNIC_PEER, req.len() as u16);
        buf.extend(&req);
        finalize_nested_header(buf, data);
    }
    info.end_nested();
    request
}

/// Makes `pair` (rtnl answers once both devices are registered, or with the
/// kernel's reason).
pub fn add(pair: &Pair) -> NlResult<()> {
    let request = newlink(pair);
    request_ack(&request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ncdevmem_rs::netlink::test_wire::nla;
    use netlink_bindings::traits::NetlinkRequest;

    /// The request on the wire, checked against include/uapi/linux/if_link.h
    /// and rtnetlink.h: RTM_NEWLINK 16 with NLM_F_CREATE | NLM_F_EXCL, a
    /// zero ifinfomsg, IFLA_IFNAME 3, IFLA_ADDRESS 1, IFLA_LINKINFO 18 {
    /// IFLA_INFO_KIND 1 "devmemnic", IFLA_INFO_DATA 2 { IFLA_DEVMEMNIC_PEER 1
    /// { ifinfomsg, IFLA_IFNAME, IFLA_ADDRESS } } }.
    #[test]
    fn newlink_request_bytes() {
        let pair = Pair {
            name: "dmnic0".into(),
            peer: Some("dmnic1".into()),
            address: Some(Mac([2, 0, 0, 0, 0, 1])),
            peer_address: Some(Mac([2, 0, 0, 0, 0, 2])),
        };
        let request = newlink(&pair);
        assert_eq!(
            request.protocol(),
            netlink_bindings::traits::Protocol::Raw {
                protonum: libc::NETLINK_ROUTE as u16,
                request_type: 16
            }
        );
        assert_eq!(request.flags(), 0x400 | 0x200);
        let mut peer = vec![0u8; 16];
        peer.extend(nla(11, 3));
        peer.extend(b"dmnic1\0\0");
        peer.extend(nla(10, 1));
        peer.extend([2, 0, 0, 0, 0, 2, 0, 0]);
        let mut data = nla(4 + peer.len() as u16, 1);
        data.extend(&peer);
        let mut info = nla(4 + 10, 1);
        info.extend(b"devmemnic\0\0\0");
        info.extend(nla(4 + data.len() as u16, 2 | 0x8000));
        info.extend(&data);
        let mut want = vec![0u8; 16];
        want.extend(nla(11, 3));
        want.extend(b"dmnic0\0\0");
        want.extend(nla(10, 1));
        want.extend([2, 0, 0, 0, 0, 1, 0, 0]);
        want.extend(nla(4 + info.len() as u16, 18 | 0x8000));
        want.extend(&info);
        assert_eq!(request.payload(), &want[..]);
    }

    /// Without a peer name or address the request is what `ip link add NAME
    /// type devmemnic` sends: no IFLA_INFO_DATA.
    #[test]
    fn no_peer_no_data() {
        let pair = Pair {
            name: "dmx0".into(),
            peer: None,
            address: None,
            peer_address: None,
        };
        let mut info = nla(4 + 10, 1);
        info.extend(b"devmemnic\0\0\0");
        let mut want = vec![0u8; 16];
        want.extend(nla(9, 3));
        want.extend(b"dmx0\0\0\0\0");
        want.extend(nla(4 + info.len() as u16, 18 | 0x8000));
        want.extend(&info);
        assert_eq!(newlink(&pair).payload(), &want[..]);
    }

    #[test]
    fn addresses_and_names() {
        assert_eq!(
            "52:54:00:78:00:0a".parse(),
            Ok(Mac([0x52, 0x54, 0, 0x78, 0, 0x0a]))
        );
        for bad in [
            "",
            "52:54:00:78:00",
            "52:54:00:78:00:0a:01",
            "52:54:00:78:00:zz",
            "52:54:00:78:00:100",
        ] {
            assert!(bad.parse::<Mac>().is_err(), "{bad}");
        }
        assert!("01:00:5e:00:00:01"
            .parse::<Mac>()
            .unwrap_err()
            .contains("multicast"));
        assert!("00:00:00:00:00:00".parse::<Mac>().is_err());
        assert!(check_ifname("dmnic1").is_ok());
        for bad in ["", "a-name-of-16-byt", "a/b", "a b", "a:b", ".", ".."] {
            assert!(check_ifname(bad).is_err(), "{bad:?}");
        }
    }
}
