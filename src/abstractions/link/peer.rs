// SPDX-License-Identifier: GPL-2.0

//! A paired link device's peer: what a request may ask of it
//! (`IFLA_DEVMEMNIC_PEER`, as veth's `VETH_INFO_PEER`) and its allocation.
//!
//! C header: [`include/net/rtnetlink.h`](srctree/include/net/rtnetlink.h)

use crate::abstractions::{bindings, errno, extack::Extack};
use core::ptr::null_mut;
use kernel::{c_str, error::to_result, prelude::*, str::CStr};

/// Entries of a table of `IFLA_*` attributes.
const IFLA_LEN: usize = bindings::__IFLA_MAX as usize;
/// Bytes of an interface name, with its NUL.
const IFNAMSIZ: usize = bindings::IFNAMSIZ as usize;

/// A peer for `dev`, allocated as the core allocates a device of `dev`'s
/// kind (its setup, queue counts) in `dev`'s netns: named and addressed as
/// `req` asks, else named by `pattern` when registered, with a random
/// address.
///
/// # Safety
///
/// `dev` is the core's new device of our kind (its `rtnl_link_ops` set),
/// not registered; rtnl held; `req` is null or the request's peer attribute,
/// validated against the kind's policy (a `struct ifinfomsg` at least) and
/// valid for the call.
pub(super) unsafe fn create_peer(
    dev: *mut bindings::net_device,
    pattern: &'static CStr,
    req: *const bindings::nlattr,
    extack: &Extack,
) -> Result<*mut bindings::net_device> {
    let pattern = pattern.to_str().map_err(|_| EINVAL)?.as_bytes();
    let n = pattern.len().min(IFNAMSIZ - 1);
    let mut name = [0u8; IFNAMSIZ];
    name[..n].copy_from_slice(&pattern[..n]);
    let mut assign = bindings::NET_NAME_ENUM as u8;
    let mut tb = [null_mut(); IFLA_LEN];
    if !req.is_null() {
        // SAFETY: as the caller guarantees.
        tb[bindings::IFLA_ADDRESS as usize] = unsafe { check_request(req, &mut name, extack)? };
        // A name the request gave (not the pattern) is the user's.
        if name[..n] != pattern[..n] || name[n] != 0 {
            assign = bindings::NET_NAME_USER as u8;
        }
    }
    // SAFETY: `dev` is allocated, of a registered kind (the caller's
    // guarantee); the name is NUL-terminated; `tb` has the entries the core
    // reads, each null or the request's attribute; rtnl held.
    let peer = unsafe {
        bindings::rtnl_create_link(
            bindings::dmn_dev_net(dev),
            name.as_ptr().cast(),
            assign,
            (*dev).rtnl_link_ops,
            tb.as_mut_ptr(),
            extack.as_raw(),
        )
    };
    let peer = kernel::error::from_err_ptr(peer)?;
    // SAFETY: the core's new device, not registered. Its own lock classes:
    // its transmit nests the lower device's.
    unsafe {
        bindings::dmn_netdev_lockdep_set_classes(peer);
        if tb[bindings::IFLA_ADDRESS as usize].is_null() {
            bindings::dmn_eth_hw_addr_random(peer);
        }
    }
    Ok(peer)
}

/// Checks what `req` asks of a peer: a zero `ifinfomsg`, and at most a name
/// (`IFLA_IFNAME`, into `name`) and a unicast address (`IFLA_ADDRESS`,
/// returned, or null). Anything else it sets is refused, as this kind would
/// not honour it; the reason goes to `extack`, naming the attribute.
///
/// # Safety
///
/// As for [`create_peer`]'s `req`.
unsafe fn check_request(
    req: *const bindings::nlattr,
    name: &mut [u8; IFNAMSIZ],
    extack: &Extack,
) -> Result<*mut bindings::nlattr> {
    let mut ptb = [null_mut(); IFLA_LEN];
    // SAFETY: `ptb` has the `IFLA_MAX + 1` entries the parse fills; `req`
    // holds an ifinfomsg and the attributes after it (the caller's guarantee).
    to_result(unsafe {
        bindings::rtnl_nla_parse_ifinfomsg(ptb.as_mut_ptr(), req, extack.as_raw())
    })?;
    // SAFETY: the policy made `req` at least an ifinfomsg, which netlink
    // aligns to four bytes, as the struct.
    let ifm = unsafe { &*bindings::dmn_nla_data(req).cast::<bindings::ifinfomsg>() };
    if ifm.ifi_index != 0 || ifm.ifi_flags != 0 || ifm.ifi_change != 0 {
        extack.msg(c_str!(
            "devmemnic: the peer's ifinfomsg must be zero (no index or flags)"
        ));
        return Err(EINVAL);
    }
    let (ifname, address) = (
        bindings::IFLA_IFNAME as usize,
        bindings::IFLA_ADDRESS as usize,
    );
    let other = (0..IFLA_LEN).find(|&i| !ptb[i].is_null() && i != ifname && i != address);
    if let Some(i) = other {
        // SAFETY: an attribute of the request.
        unsafe {
            extack.msg_attr(
                ptb[i],
                c_str!(
                    "devmemnic: a peer takes a name and an address only (set the rest on it after)"
                ),
            )
        };
        return Err(errno::eopnotsupp());
    }
    // SAFETY: a parsed attribute (of any length), valid for the call.
    if !ptb[address].is_null() && !unsafe { bindings::dmn_nla_is_ether_addr(ptb[address]) } {
        // SAFETY: an attribute of the request.
        unsafe {
            extack.msg_attr(
                ptb[address],
                c_str!("devmemnic: the peer's address must be a unicast Ethernet address"),
            )
        };
        return Err(errno::eaddrnotavail());
    }
    if !ptb[ifname].is_null() {
        // SAFETY: a parsed attribute; `name` has the `IFNAMSIZ` bytes the
        // copy may write (NUL-terminated, truncated if longer), then a
        // NUL-terminated string to check.
        let valid = unsafe {
            bindings::nla_strscpy(name.as_mut_ptr().cast(), ptb[ifname], IFNAMSIZ);
            bindings::dev_valid_name(name.as_ptr().cast())
        };
        if !valid {
            // SAFETY: an attribute of the request.
            unsafe {
                extack.msg_attr(
                    ptb[ifname],
                    c_str!("devmemnic: the peer's name is not a valid interface name"),
                )
            };
            return Err(EINVAL);
        }
    }
    Ok(ptb[address])
}
