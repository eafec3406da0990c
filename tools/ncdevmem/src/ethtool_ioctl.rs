//! The `SIOCETHTOOL` ioctl, as far as ncdevmem-rs needs it: the RSS
//! indirection table, ntuple (flow steering) rules and the feature flags.
//!
//! Requests are byte buffers laid out as the C structs of
//! include/uapi/linux/ethtool.h; the offsets below were printed by a C
//! program (`sizeof`/`offsetof`) on x86_64 and are checked by the tests.

use std::io;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub const SIOCETHTOOL: libc::c_ulong = 0x8946;

pub const ETHTOOL_GFLAGS: u32 = 0x25;
pub const ETHTOOL_SFLAGS: u32 = 0x26;
pub const ETHTOOL_GRXRINGS: u32 = 0x2d;
pub const ETHTOOL_GRXCLSRLCNT: u32 = 0x2e;
pub const ETHTOOL_GRXCLSRULE: u32 = 0x2f;
pub const ETHTOOL_GRXCLSRLALL: u32 = 0x30;
pub const ETHTOOL_SRXCLSRLDEL: u32 = 0x31;
pub const ETHTOOL_SRXCLSRLINS: u32 = 0x32;
pub const ETHTOOL_GRXFHINDIR: u32 = 0x38;
pub const ETHTOOL_SRXFHINDIR: u32 = 0x39;

pub const ETH_FLAG_NTUPLE: u32 = 1 << 27;
pub const TCP_V4_FLOW: u32 = 0x01;
pub const TCP_V6_FLOW: u32 = 0x05;
pub const FLOW_EXT: u32 = 0x8000_0000;
pub const FLOW_MAC_EXT: u32 = 0x4000_0000;
pub const FLOW_RSS: u32 = 0x2000_0000;
pub const RX_CLS_LOC_ANY: u32 = 0xffff_ffff;
pub const RX_CLS_LOC_SPECIAL: u32 = 0x8000_0000;

/// `sizeof(struct ethtool_rxnfc)` and its field offsets.
pub const RXNFC_SIZE: usize = 192;
pub const RXNFC_FLOW_TYPE: usize = 4;
pub const RXNFC_DATA: usize = 8;
pub const RXNFC_FS: usize = 16;
pub const RXNFC_RULE_CNT: usize = 184;
pub const RXNFC_RULE_LOCS: usize = 188;
/// `struct ethtool_rx_flow_spec` offsets (from the start of the spec) and size.
pub const FS_SIZE: usize = 168;
pub const FS_FLOW_TYPE: usize = 0;
pub const FS_H_U: usize = 4;
pub const FS_H_EXT: usize = 56;
pub const FS_M_U: usize = 76;
pub const FS_M_EXT: usize = 128;
pub const FS_RING_COOKIE: usize = 152;
pub const FS_LOCATION: usize = 160;
/// `struct ethtool_tcpip4_spec` and `struct ethtool_tcpip6_spec` offsets.
pub const TCP4_SRC: usize = 0;
pub const TCP4_DST: usize = 4;
pub const TCP4_PSRC: usize = 8;
pub const TCP4_PDST: usize = 10;
pub const TCP6_SRC: usize = 0;
pub const TCP6_DST: usize = 16;
pub const TCP6_PSRC: usize = 32;
pub const TCP6_PDST: usize = 34;
/// `struct ethtool_rxfh_indir`: cmd, size, then `ring_index[]` at 8.
pub const INDIR_RING_INDEX: usize = 8;

/// `struct ifreq` as SIOCETHTOOL uses it: the name, then `ifr_data`.
#[repr(C)]
pub struct IfReq {
    pub name: [u8; 16],
    pub data: *mut libc::c_void,
    pub _pad: [u8; 16],
}

/// A TCP flow steering rule: match the given fields, deliver to `queue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowRule {
    pub ipv6: bool,
    pub src: Option<IpAddr>,
    pub dst: Option<IpAddr>,
    pub sport: Option<u16>,
    pub dport: Option<u16>,
    pub queue: u32,
}

/// An IPv4-mapped IPv6 address is the IPv4 one (as upstream ncdevmem treats it).
pub fn unmap(a: IpAddr) -> IpAddr {
    match a {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

impl FlowRule {
    /// A `tcp4` or `tcp6` rule; the family follows the addresses (both must agree).
    pub fn tcp(
        src: Option<IpAddr>,
        dst: Option<IpAddr>,
        sport: Option<u16>,
        dport: Option<u16>,
        queue: u32,
    ) -> Result<Self, String> {
        let (src, dst) = (src.map(unmap), dst.map(unmap));
        let v6 = |a: Option<IpAddr>| a.map(|a| a.is_ipv6());
        let ipv6 = match (v6(src), v6(dst)) {
            (Some(a), Some(b)) if a != b => {
                return Err(format!(
                    "client {} and server {} are not of the same address family",
                    src.unwrap(),
                    dst.unwrap()
                ))
            }
            (Some(a), _) | (None, Some(a)) => a,
            (None, None) => false,
        };
        Ok(FlowRule {
            ipv6,
            src,
            dst,
            sport,
            dport,
            queue,
        })
    }
}

impl std::fmt::Display for FlowRule {
    /// As `ethtool -N` would take it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "flow-type {}", if self.ipv6 { "tcp6" } else { "tcp4" })?;
        if let Some(a) = self.src {
            write!(f, " src-ip {a}")?;
        }
        if let Some(a) = self.dst {
            write!(f, " dst-ip {a}")?;
        }
        if let Some(p) = self.sport {
            write!(f, " src-port {p}")?;
        }
        if let Some(p) = self.dport {
            write!(f, " dst-port {p}")?;
        }
        write!(f, " queue {}", self.queue)
    }
}

fn put32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn get32(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes(b[off..off + 4].try_into().unwrap())
}

fn ip_bytes(a: IpAddr) -> Vec<u8> {
    match a {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

/// An `ethtool_rxnfc` with only `cmd` set.
pub fn rxnfc(cmd: u32) -> Vec<u8> {
    let mut b = vec![0u8; RXNFC_SIZE];
    put32(&mut b, 0, cmd);
    b
}

/// The `ETHTOOL_SRXCLSRLINS` request for `rule` at `loc` (`RX_CLS_LOC_ANY`: the
/// driver picks). Fields given are matched exactly (mask all ones), the others
/// are wildcards (value and mask zero).
pub fn encode_insert(rule: &FlowRule, loc: u32) -> Vec<u8> {
    let mut b = rxnfc(ETHTOOL_SRXCLSRLINS);
    let fs = RXNFC_FS;
    let flow_type = if rule.ipv6 { TCP_V6_FLOW } else { TCP_V4_FLOW };
    put32(&mut b, RXNFC_FLOW_TYPE, flow_type);
    put32(&mut b, fs + FS_FLOW_TYPE, flow_type);
    let (src, dst, psrc, pdst) = if rule.ipv6 {
        (TCP6_SRC, TCP6_DST, TCP6_PSRC, TCP6_PDST)
    } else {
        (TCP4_SRC, TCP4_DST, TCP4_PSRC, TCP4_PDST)
    };
    let mut field = |off: usize, val: &[u8]| {
        let h = fs + FS_H_U + off;
        let m = fs + FS_M_U + off;
        b[h..h + val.len()].copy_from_slice(val);
        b[m..m + val.len()].fill(0xff);
    };
    if let Some(a) = rule.src {
        field(src, &ip_bytes(a));
    }
    if let Some(a) = rule.dst {
        field(dst, &ip_bytes(a));
    }
    if let Some(p) = rule.sport {
        field(psrc, &p.to_be_bytes());
    }
    if let Some(p) = rule.dport {
        field(pdst, &p.to_be_bytes());
    }
    let rc = fs + FS_RING_COOKIE;
    b[rc..rc + 8].copy_from_slice(&u64::from(rule.queue).to_ne_bytes());
    put32(&mut b, fs + FS_LOCATION, loc);
    b
}

/// The rule an `ethtool_rxnfc` describes, if it is a plain tcp4/tcp6 rule
/// to a queue whose masks are all-or-nothing.
pub fn decode_rule(b: &[u8]) -> Option<FlowRule> {
    let fs = RXNFC_FS;
    let flow_type = get32(b, fs + FS_FLOW_TYPE);
    let ipv6 = match flow_type {
        TCP_V4_FLOW => false,
        TCP_V6_FLOW => true,
        _ => return None,
    };
    let (src, dst, psrc, pdst, alen) = if ipv6 {
        (TCP6_SRC, TCP6_DST, TCP6_PSRC, TCP6_PDST, 16)
    } else {
        (TCP4_SRC, TCP4_DST, TCP4_PSRC, TCP4_PDST, 4)
    };
    let field = |off: usize, len: usize| -> Option<&[u8]> {
        let m = &b[fs + FS_M_U + off..fs + FS_M_U + off + len];
        m.iter()
            .all(|&x| x == 0xff)
            .then(|| &b[fs + FS_H_U + off..fs + FS_H_U + off + len])
    };
    let addr = |off| {
        field(off, alen).map(|v| {
            if ipv6 {
                IpAddr::from(<[u8; 16]>::try_from(v).unwrap())
            } else {
                IpAddr::from(<[u8; 4]>::try_from(v).unwrap())
            }
        })
    };
    let port = |off| field(off, 2).map(|v| u16::from_be_bytes([v[0], v[1]]));
    let rc = fs + FS_RING_COOKIE;
    let cookie = u64::from_ne_bytes(b[rc..rc + 8].try_into().unwrap());
    Some(FlowRule {
        ipv6,
        src: addr(src),
        dst: addr(dst),
        sport: port(psrc),
        dport: port(pdst),
        queue: u32::try_from(cookie).ok()?,
    })
}

/// The location field of an `ethtool_rxnfc`.
pub fn rule_location(b: &[u8]) -> u32 {
    get32(b, RXNFC_FS + FS_LOCATION)
}

/// An indirection table spreading over queues `0..n` as `ethtool -X equal n`
/// does: entry i goes to queue i % n.
pub fn equal_table(size: usize, n: u32) -> Vec<u32> {
    (0..size as u32).map(|i| i % n.max(1)).collect()
}

/// The kernel's default table for `rings` RX rings (`ethtool_rxfh_indir_default`).
pub fn default_table(size: usize, rings: u32) -> Vec<u32> {
    equal_table(size, rings)
}

/// An `ethtool_rxfh_indir` request for `table` (empty: size 0).
pub fn encode_indir(cmd: u32, size: u32, table: &[u32]) -> Vec<u8> {
    let mut b = vec![0u8; INDIR_RING_INDEX + 4 * (size as usize).max(table.len())];
    put32(&mut b, 0, cmd);
    put32(&mut b, 4, size);
    for (i, q) in table.iter().enumerate() {
        put32(&mut b, INDIR_RING_INDEX + 4 * i, *q);
    }
    b
}

/// An `ETHTOOL_GRXCLSRLALL` request with room for `n` locations.
pub fn encode_rule_all(n: u32) -> Vec<u8> {
    let mut b = vec![0u8; (RXNFC_RULE_LOCS + 4 * n as usize).max(RXNFC_SIZE)];
    put32(&mut b, 0, ETHTOOL_GRXCLSRLALL);
    put32(&mut b, RXNFC_RULE_CNT, n);
    b
}

/// The locations an `ETHTOOL_GRXCLSRLALL` reply lists.
pub fn decode_rule_all(b: &[u8]) -> Vec<u32> {
    let n = get32(b, RXNFC_RULE_CNT) as usize;
    (0..n)
        .map_while(|i| {
            let off = RXNFC_RULE_LOCS + 4 * i;
            (off + 4 <= b.len()).then(|| get32(b, off))
        })
        .collect()
}

/// An ioctl socket bound to one interface name.
pub struct EthtoolIoctl {
    fd: OwnedFd,
    name: [u8; 16],
}

impl EthtoolIoctl {
    pub fn open(ifname: &str) -> io::Result<Self> {
        if ifname.is_empty() || ifname.len() > 15 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad interface name '{ifname}'"),
            ));
        }
        let mut name = [0u8; 16];
        name[..ifname.len()].copy_from_slice(ifname.as_bytes());
        // SAFETY: plain syscall.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh fd we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd, name })
    }

    /// Runs one SIOCETHTOOL command on `buf` (a request the kernel may write back into).
    pub fn call(&self, buf: &mut [u8]) -> io::Result<()> {
        let mut ifr = IfReq {
            name: self.name,
            data: buf.as_mut_ptr().cast(),
            _pad: [0; 16],
        };
        // SAFETY: `ifr` names the device and points at `buf`, which is as large
        // as the command's struct (the callers size it; see the encoders).
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), SIOCETHTOOL, &mut ifr) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn value(&self, cmd: u32) -> io::Result<u32> {
        let mut b = [0u8; 8];
        put32(&mut b, 0, cmd);
        self.call(&mut b)?;
        Ok(get32(&b, 4))
    }

    /// `ETHTOOL_GFLAGS`.
    pub fn flags(&self) -> io::Result<u32> {
        self.value(ETHTOOL_GFLAGS)
    }

    /// `ETHTOOL_SFLAGS`.
    pub fn set_flags(&self, flags: u32) -> io::Result<()> {
        let mut b = [0u8; 8];
        put32(&mut b, 0, ETHTOOL_SFLAGS);
        put32(&mut b, 4, flags);
        self.call(&mut b)
    }

    /// `ETHTOOL_GRXRINGS`: how many RX rings RSS and rules may use.
    pub fn rx_rings(&self) -> io::Result<u32> {
        let mut b = rxnfc(ETHTOOL_GRXRINGS);
        self.call(&mut b)?;
        Ok(u64::from_ne_bytes(b[RXNFC_DATA..RXNFC_DATA + 8].try_into().unwrap()) as u32)
    }

    /// `ETHTOOL_GRXFHINDIR`: the RSS indirection table.
    pub fn indir(&self) -> io::Result<Vec<u32>> {
        let mut b = encode_indir(ETHTOOL_GRXFHINDIR, 0, &[]);
        self.call(&mut b)?;
        let size = get32(&b, 4);
        if size == 0 {
            return Ok(Vec::new());
        }
        let mut b = encode_indir(ETHTOOL_GRXFHINDIR, size, &[]);
        self.call(&mut b)?;
        Ok((0..size as usize)
            .map(|i| get32(&b, INDIR_RING_INDEX + 4 * i))
            .collect())
    }

    /// `ETHTOOL_SRXFHINDIR`; an empty table resets to the driver's default.
    pub fn set_indir(&self, table: &[u32]) -> io::Result<()> {
        let mut b = encode_indir(ETHTOOL_SRXFHINDIR, table.len() as u32, table);
        self.call(&mut b)
    }

    /// `ETHTOOL_GRXCLSRLCNT` then `ETHTOOL_GRXCLSRLALL`: the rule locations in use.
    pub fn rule_locs(&self) -> io::Result<Vec<u32>> {
        let mut b = rxnfc(ETHTOOL_GRXCLSRLCNT);
        self.call(&mut b)?;
        let n = get32(&b, RXNFC_RULE_CNT);
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut b = encode_rule_all(n);
        self.call(&mut b)?;
        Ok(decode_rule_all(&b))
    }

    /// `ETHTOOL_GRXCLSRULE`: the rule at `loc`, as the kernel's `ethtool_rxnfc`.
    pub fn rule_get(&self, loc: u32) -> io::Result<Vec<u8>> {
        let mut b = rxnfc(ETHTOOL_GRXCLSRULE);
        put32(&mut b, RXNFC_FS + FS_LOCATION, loc);
        self.call(&mut b)?;
        Ok(b)
    }

    /// `ETHTOOL_SRXCLSRLINS` of a whole `ethtool_rxnfc` (its `cmd` is set here);
    /// returns the location the driver used.
    pub fn rule_insert(&self, req: &[u8]) -> io::Result<u32> {
        let mut b = req.to_vec();
        b.resize(RXNFC_SIZE.max(b.len()), 0);
        put32(&mut b, 0, ETHTOOL_SRXCLSRLINS);
        self.call(&mut b)?;
        Ok(rule_location(&b))
    }

    /// `ETHTOOL_SRXCLSRLDEL`.
    pub fn rule_delete(&self, loc: u32) -> io::Result<()> {
        let mut b = rxnfc(ETHTOOL_SRXCLSRLDEL);
        put32(&mut b, RXNFC_FS + FS_LOCATION, loc);
        self.call(&mut b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// Printed by a C program including <linux/ethtool.h> and
    /// <linux/sockios.h> (the 6.12 uapi and the host's headers agree):
    /// sizeof(struct ethtool_rxnfc) = 192, offsetof(flow_type) = 4,
    /// offsetof(data) = 8, offsetof(fs) = 16, offsetof(rule_cnt) = 184,
    /// offsetof(rule_locs) = 188; sizeof(struct ethtool_rx_flow_spec) = 168,
    /// h_u 4, h_ext 56, m_u 76, m_ext 128, ring_cookie 152, location 160;
    /// sizeof(union ethtool_flow_union) = 52, sizeof(struct ethtool_flow_ext) = 20;
    /// tcpip4_spec: ip4src 0, ip4dst 4, psrc 8, pdst 10, tos 12;
    /// tcpip6_spec: ip6src 0, ip6dst 16, psrc 32, pdst 34, tclass 36;
    /// sizeof(struct ethtool_rxfh_indir) = 8, ring_index at 8;
    /// sizeof(struct ifreq) = 40, ifr_data at 16.
    #[test]
    fn layout_matches_c() {
        assert_eq!(RXNFC_SIZE, 192);
        assert_eq!(
            (
                RXNFC_FLOW_TYPE,
                RXNFC_DATA,
                RXNFC_FS,
                RXNFC_RULE_CNT,
                RXNFC_RULE_LOCS
            ),
            (4, 8, 16, 184, 188)
        );
        assert_eq!(FS_SIZE, 168);
        assert_eq!(
            (
                FS_FLOW_TYPE,
                FS_H_U,
                FS_H_EXT,
                FS_M_U,
                FS_M_EXT,
                FS_RING_COOKIE,
                FS_LOCATION
            ),
            (0, 4, 56, 76, 128, 152, 160)
        );
        // The flow union is 52 bytes, the extension 20.
        assert_eq!(FS_H_EXT - FS_H_U, 52);
        assert_eq!(FS_M_U - FS_H_EXT, 20);
        assert_eq!(FS_M_EXT - FS_M_U, 52);
        assert_eq!(RXNFC_FS + FS_SIZE, RXNFC_RULE_CNT);
        assert_eq!((TCP4_SRC, TCP4_DST, TCP4_PSRC, TCP4_PDST), (0, 4, 8, 10));
        assert_eq!((TCP6_SRC, TCP6_DST, TCP6_PSRC, TCP6_PDST), (0, 16, 32, 34));
        assert_eq!(INDIR_RING_INDEX, 8);
        assert_eq!(std::mem::size_of::<IfReq>(), 40);
        assert_eq!(std::mem::offset_of!(IfReq, data), 16);
        assert_eq!(SIOCETHTOOL, 35142);
        assert_eq!(
            [
                ETHTOOL_GFLAGS,
                ETHTOOL_SFLAGS,
                ETHTOOL_GRXRINGS,
                ETHTOOL_GRXCLSRLCNT,
                ETHTOOL_GRXCLSRULE,
                ETHTOOL_GRXCLSRLALL,
                ETHTOOL_SRXCLSRLDEL,
                ETHTOOL_SRXCLSRLINS,
                ETHTOOL_GRXFHINDIR,
                ETHTOOL_SRXFHINDIR
            ],
            [37, 38, 45, 46, 47, 48, 49, 50, 56, 57]
        );
        assert_eq!(ETH_FLAG_NTUPLE, 134_217_728);
        assert_eq!((TCP_V4_FLOW, TCP_V6_FLOW), (1, 5));
        assert_eq!(
            (RX_CLS_LOC_ANY, RX_CLS_LOC_SPECIAL),
            (4_294_967_295, 2_147_483_648)
        );
    }

    #[test]
    fn tcp4_rule_bytes() {
        let r = FlowRule::tcp(
            Some("10.9.0.1".parse().unwrap()),
            Some("10.9.0.2".parse().unwrap()),
            Some(5201),
            Some(5201),
            8,
        )
        .unwrap();
        let b = encode_insert(&r, RX_CLS_LOC_ANY);
        assert_eq!(b.len(), 192);
        assert_eq!(&b[0..4], &50u32.to_ne_bytes());
        assert_eq!(&b[4..8], &1u32.to_ne_bytes());
        assert_eq!(&b[16..20], &1u32.to_ne_bytes());
        // h_u.tcp_ip4_spec at 16 + 4 = 20.
        assert_eq!(&b[20..24], &[10, 9, 0, 1]);
        assert_eq!(&b[24..28], &[10, 9, 0, 2]);
        assert_eq!(&b[28..30], &[0x14, 0x51]); // 5201 big endian
        assert_eq!(&b[30..32], &[0x14, 0x51]);
        assert_eq!(b[32], 0); // tos
                              // m_u at 16 + 76 = 92: all ones for the four fields, tos 0.
        assert!(b[92..104].iter().all(|&x| x == 0xff));
        assert_eq!(b[104], 0);
        // ring_cookie at 16 + 152 = 168, location at 176.
        assert_eq!(&b[168..176], &8u64.to_ne_bytes());
        assert_eq!(&b[176..180], &RX_CLS_LOC_ANY.to_ne_bytes());
        // Everything else is zero (no extensions, no RSS context).
        let set: Vec<usize> = (0..192)
            .filter(|&i| b[i] != 0)
            .filter(|i| !(0..8).contains(i) && !(16..20).contains(i))
            .filter(|i| !(20..32).contains(i) && !(92..104).contains(i))
            .filter(|i| !(168..176).contains(i) && !(176..180).contains(i))
            .collect();
        assert!(set.is_empty(), "{set:?}");
        assert_eq!(decode_rule(&b), Some(r.clone()));
        assert_eq!(
            r.to_string(),
            "flow-type tcp4 src-ip 10.9.0.1 dst-ip 10.9.0.2 src-port 5201 dst-port 5201 queue 8"
        );
    }

    #[test]
    fn tcp6_rule_bytes_and_wildcards() {
        let dst: Ipv6Addr = "fd00::2".parse().unwrap();
        let r = FlowRule::tcp(None, Some(dst.into()), None, Some(80), 3).unwrap();
        assert!(r.ipv6);
        let b = encode_insert(&r, 5);
        assert_eq!(&b[4..8], &5u32.to_ne_bytes());
        // ip6dst at 20 + 16 = 36, mask at 92 + 16 = 108.
        assert_eq!(&b[36..52], &dst.octets());
        assert!(b[108..124].iter().all(|&x| x == 0xff));
        // No source address or port: value and mask zero.
        assert!(b[20..36].iter().all(|&x| x == 0));
        assert!(b[92..108].iter().all(|&x| x == 0));
        assert_eq!(&b[52..54], &[0, 0]);
        assert_eq!(&b[124..126], &[0, 0]);
        // pdst at 20 + 34 = 54, mask at 126.
        assert_eq!(&b[54..56], &80u16.to_be_bytes());
        assert_eq!(&b[126..128], &[0xff, 0xff]);
        assert_eq!(rule_location(&b), 5);
        assert_eq!(decode_rule(&b), Some(r.clone()));
        assert_eq!(
            r.to_string(),
            "flow-type tcp6 dst-ip fd00::2 dst-port 80 queue 3"
        );
    }

    #[test]
    fn rule_family_follows_addresses() {
        let mapped: IpAddr = "::ffff:10.0.0.2".parse().unwrap();
        let r = FlowRule::tcp(None, Some(mapped), None, Some(1), 0).unwrap();
        assert!(!r.ipv6);
        assert_eq!(r.dst, Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2))));
        assert!(FlowRule::tcp(
            Some("10.0.0.1".parse().unwrap()),
            Some("fd00::1".parse().unwrap()),
            None,
            None,
            0
        )
        .is_err());
    }

    #[test]
    fn indirection_and_rule_lists() {
        assert_eq!(equal_table(8, 3), vec![0, 1, 2, 0, 1, 2, 0, 1]);
        assert_eq!(default_table(4, 16), vec![0, 1, 2, 3]);
        let b = encode_indir(ETHTOOL_SRXFHINDIR, 3, &[0, 1, 0]);
        let mut want = Vec::new();
        for v in [57u32, 3, 0, 1, 0] {
            want.extend_from_slice(&v.to_ne_bytes());
        }
        assert_eq!(b, want);
        // A size-only GET has room for `size` entries.
        assert_eq!(encode_indir(ETHTOOL_GRXFHINDIR, 128, &[]).len(), 8 + 512);
        assert_eq!(encode_indir(ETHTOOL_SRXFHINDIR, 0, &[]).len(), 8);

        let mut b = encode_rule_all(3);
        assert_eq!(b.len(), 200);
        assert_eq!(&b[184..188], &3u32.to_ne_bytes());
        assert_eq!(encode_rule_all(1).len(), 192);
        for (i, loc) in [4u32, 9, 1023].iter().enumerate() {
            put32(&mut b, 188 + 4 * i, *loc);
        }
        assert_eq!(decode_rule_all(&b), vec![4, 9, 1023]);
    }
}
