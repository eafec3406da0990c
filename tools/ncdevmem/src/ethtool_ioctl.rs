//! The `SIOCETHTOOL` ioctl, for what ethtool netlink does not offer here:
//! ntuple rules (no netlink request on any kernel), the ntuple feature flag,
//! the RX ring count RSS may use, and the RSS indirection table on kernels
//! without `ETHTOOL_MSG_RSS_SET` (6.12).
//!
//! The requests are the structs of include/uapi/linux/ethtool.h as
//! `#[repr(C)]` types. C's padding is spelled out as fields, so every byte
//! the kernel reads is initialized; a test compiles a C program against the
//! C headers and compares every size, offset and constant used here.
//!
//! (Over ~600 lines: the request types, the flow-rule codec and the ioctls
//! go together, as each request is one of those structs filled by the
//! codec; half of its length is its tests, the C layout check among them.)

use std::io;
use std::marker::PhantomData;
use std::mem::{align_of, offset_of, size_of};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

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

pub const ETHTOOL_GDRVINFO: u32 = 0x03;
pub const ETHTOOL_GSTRINGS: u32 = 0x1b;
pub const ETHTOOL_GPFLAGS: u32 = 0x27;
pub const ETH_SS_PRIV_FLAGS: u32 = 2;
pub const ETH_GSTRING_LEN: usize = 32;

pub const ETH_FLAG_NTUPLE: u32 = 1 << 27;
pub const TCP_V4_FLOW: u32 = 0x01;
pub const TCP_V6_FLOW: u32 = 0x05;
pub const RX_CLS_LOC_ANY: u32 = 0xffff_ffff;
/// In `ETHTOOL_GRXCLSRLCNT`'s `data`: the driver picks locations itself.
pub const RX_CLS_LOC_SPECIAL: u32 = 0x8000_0000;

/// `struct ethtool_value`: a command and one value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EthtoolValue {
    pub cmd: u32,
    pub data: u32,
}

/// `struct ethtool_tcpip4_spec`: addresses and ports in network byte order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpIp4Spec {
    pub ip4src: u32,
    pub ip4dst: u32,
    pub psrc: u16,
    pub pdst: u16,
    pub tos: u8,
    /// C's padding to the struct's alignment.
    pub pad: [u8; 3],
}

/// `struct ethtool_tcpip6_spec`: addresses and ports in network byte order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpIp6Spec {
    pub ip6src: [u32; 4],
    pub ip6dst: [u32; 4],
    pub psrc: u16,
    pub pdst: u16,
    pub tclass: u8,
    /// C's padding to the struct's alignment.
    pub pad: [u8; 3],
}

/// `union ethtool_flow_union`: a flow's fields, laid out by its flow type.
///
/// Invariant: all 52 bytes are initialized. The constructors start from
/// zeros and write whole variants, none of which has padding.
#[repr(C)]
#[derive(Clone, Copy)]
pub union FlowUnion {
    tcp_ip4_spec: TcpIp4Spec,
    tcp_ip6_spec: TcpIp6Spec,
    hdata: [u8; 52],
}

impl FlowUnion {
    /// A TCP/IPv4 flow's fields, the rest zero.
    pub fn tcp4(spec: TcpIp4Spec) -> Self {
        let mut u = FlowUnion::default();
        u.tcp_ip4_spec = spec;
        u
    }

    /// A TCP/IPv6 flow's fields, the rest zero.
    pub fn tcp6(spec: TcpIp6Spec) -> Self {
        let mut u = FlowUnion::default();
        u.tcp_ip6_spec = spec;
        u
    }

    /// The fields read as a TCP/IPv4 flow's.
    pub fn as_tcp4(&self) -> TcpIp4Spec {
        // SAFETY: every byte is initialized (the type's invariant) and any
        // bytes are a valid `TcpIp4Spec`, made of integers only.
        unsafe { self.tcp_ip4_spec }
    }

    /// The fields read as a TCP/IPv6 flow's.
    pub fn as_tcp6(&self) -> TcpIp6Spec {
        // SAFETY: as in `as_tcp4`.
        unsafe { self.tcp_ip6_spec }
    }

    /// The union's bytes.
    pub fn bytes(&self) -> [u8; 52] {
        // SAFETY: every byte is initialized (the type's invariant).
        unsafe { self.hdata }
    }
}

impl Default for FlowUnion {
    fn default() -> Self {
        FlowUnion { hdata: [0; 52] }
    }
}

impl PartialEq for FlowUnion {
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for FlowUnion {}

impl std::fmt::Debug for FlowUnion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FlowUnion({:02x?})", self.bytes())
    }
}

/// `struct ethtool_flow_ext`: VLAN, user data and destination MAC fields.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowExt {
    pub padding: [u8; 2],
    pub h_dest: [u8; 6],
    pub vlan_etype: u16,
    pub vlan_tci: u16,
    pub data: [u32; 2],
}

/// `struct ethtool_rx_flow_spec`: one classification rule.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxFlowSpec {
    pub flow_type: u32,
    /// Values to match.
    pub h_u: FlowUnion,
    pub h_ext: FlowExt,
    /// Masks: a set bit matches the value's bit, a clear one is a wildcard.
    pub m_u: FlowUnion,
    pub m_ext: FlowExt,
    /// C's padding before the 8-byte `ring_cookie`.
    pub pad: u32,
    /// The RX queue (or a special action).
    pub ring_cookie: u64,
    pub location: u32,
    /// C's padding to the struct's alignment.
    pub tail_pad: u32,
}

/// `struct ethtool_rxnfc`: RX flow classification requests.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rxnfc {
    pub cmd: u32,
    pub flow_type: u32,
    pub data: u64,
    pub fs: RxFlowSpec,
    /// Also `rss_context`, in C's anonymous union.
    pub rule_cnt: u32,
    /// The flexible array of `ETHTOOL_GRXCLSRLALL`, starting in the padding.
    pub rule_locs: [u32; 0],
    /// C's padding to the struct's alignment (`rule_locs[0]` when present).
    pub tail_pad: u32,
}

impl Rxnfc {
    /// A request for `cmd`, everything else zero.
    pub fn new(cmd: u32) -> Self {
        Rxnfc {
            cmd,
            ..Default::default()
        }
    }
}

/// `struct ethtool_drvinfo`: the driver's name and how many strings of
/// each set it has.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Drvinfo {
    pub cmd: u32,
    pub driver: [u8; 32],
    pub version: [u8; 32],
    pub fw_version: [u8; 32],
    pub bus_info: [u8; 32],
    pub erom_version: [u8; 32],
    pub reserved2: [u8; 12],
    pub n_priv_flags: u32,
    pub n_stats: u32,
    pub testinfo_len: u32,
    pub eedump_len: u32,
    pub regdump_len: u32,
}

/// `struct ethtool_gstrings`: a string set's names (`ETH_GSTRING_LEN`
/// bytes each) follow `len`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Gstrings {
    pub cmd: u32,
    pub string_set: u32,
    pub len: u32,
    /// The flexible array.
    pub data: [u8; 0],
}

/// A NUL-padded name from the kernel.
fn c_name(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// `struct ethtool_rxfh_indir`: the RSS indirection table's size, then its
/// entries (`ring_index[]`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxfhIndir {
    pub cmd: u32,
    pub size: u32,
    pub ring_index: [u32; 0],
}

/// A request struct `T` with room for `len` entries of its flexible `u32`
/// array, which starts at byte `at`: one 8-aligned buffer the kernel reads
/// and writes. `T` must have no implicit padding (the layout test checks
/// these structs' sizes), so every byte of the buffer stays initialized.
struct WithArray<T> {
    words: Vec<u64>,
    at: usize,
    len: usize,
    head: PhantomData<T>,
}

impl<T: Copy> WithArray<T> {
    fn new(head: T, at: usize, len: usize) -> Self {
        const { assert!(align_of::<T>() <= align_of::<u64>()) };
        assert!(at.is_multiple_of(align_of::<u32>()) && at <= size_of::<T>());
        let bytes = size_of::<T>().max(at + size_of::<u32>() * len);
        let mut words = vec![0u64; bytes.div_ceil(size_of::<u64>())];
        // SAFETY: `words` is aligned for `T` (asserted above) and holds at
        // least `size_of::<T>()` bytes.
        unsafe { words.as_mut_ptr().cast::<T>().write(head) };
        WithArray {
            words,
            at,
            len,
            head: PhantomData,
        }
    }

    /// The struct as the kernel left it.
    fn head(&self) -> T {
        // SAFETY: as in `new`; the bytes are initialized (written as a `T`,
        // zeroed, or written by the kernel) and `T` is made of integers.
        unsafe { self.words.as_ptr().cast::<T>().read() }
    }

    fn array(&self) -> &[u32] {
        // SAFETY: `at` is 4-aligned in an 8-aligned buffer of at least
        // `at + 4 * len` initialized bytes (see `new`), borrowed with `self`.
        unsafe {
            std::slice::from_raw_parts(
                self.words.as_ptr().cast::<u8>().add(self.at).cast::<u32>(),
                self.len,
            )
        }
    }

    fn array_mut(&mut self) -> &mut [u32] {
        // SAFETY: as in `array`, borrowed mutably with `self`.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.words
                    .as_mut_ptr()
                    .cast::<u8>()
                    .add(self.at)
                    .cast::<u32>(),
                self.len,
            )
        }
    }

    fn as_mut_ptr(&mut self) -> *mut libc::c_void {
        self.words.as_mut_ptr().cast()
    }
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

/// An IPv4 address as a `__be32` (its octets in memory order).
fn be32(a: IpAddr) -> u32 {
    let v4 = match a {
        IpAddr::V4(a) => a,
        IpAddr::V6(a) => a.to_ipv4_mapped().unwrap_or(Ipv4Addr::UNSPECIFIED),
    };
    u32::from_ne_bytes(v4.octets())
}

/// An IPv6 address as `__be32[4]`.
fn be32x4(a: IpAddr) -> [u32; 4] {
    let v6 = match a {
        IpAddr::V4(a) => a.to_ipv6_mapped(),
        IpAddr::V6(a) => a,
    };
    let o = v6.octets();
    std::array::from_fn(|i| {
        u32::from_ne_bytes([o[4 * i], o[4 * i + 1], o[4 * i + 2], o[4 * i + 3]])
    })
}

/// The octets of a `__be32[4]` IPv6 address.
fn octets_of(words: [u32; 4]) -> [u8; 16] {
    std::array::from_fn(|i| words[i / 4].to_ne_bytes()[i % 4])
}

/// The `ETHTOOL_SRXCLSRLINS` request for `rule` at `loc` (`RX_CLS_LOC_ANY`: the
/// driver picks). Fields given are matched exactly (mask all ones), the others
/// are wildcards (value and mask zero).
pub fn encode_insert(rule: &FlowRule, loc: u32) -> Rxnfc {
    let flow_type = if rule.ipv6 { TCP_V6_FLOW } else { TCP_V4_FLOW };
    let port = |p: Option<u16>| (p.map_or(0, u16::to_be), p.map_or(0, |_| u16::MAX));
    let (sport, sport_mask) = port(rule.sport);
    let (dport, dport_mask) = port(rule.dport);
    let (h_u, m_u) = if rule.ipv6 {
        let addr = |a: Option<IpAddr>| {
            (
                a.map_or([0; 4], be32x4),
                a.map_or([0; 4], |_| [u32::MAX; 4]),
            )
        };
        let ((src, src_mask), (dst, dst_mask)) = (addr(rule.src), addr(rule.dst));
        let spec = |ip6src, ip6dst, psrc, pdst| TcpIp6Spec {
            ip6src,
            ip6dst,
            psrc,
            pdst,
            ..Default::default()
        };
        (
            FlowUnion::tcp6(spec(src, dst, sport, dport)),
            FlowUnion::tcp6(spec(src_mask, dst_mask, sport_mask, dport_mask)),
        )
    } else {
        let addr = |a: Option<IpAddr>| (a.map_or(0, be32), a.map_or(0, |_| u32::MAX));
        let ((src, src_mask), (dst, dst_mask)) = (addr(rule.src), addr(rule.dst));
        let spec = |ip4src, ip4dst, psrc, pdst| TcpIp4Spec {
            ip4src,
            ip4dst,
            psrc,
            pdst,
            ..Default::default()
        };
        (
            FlowUnion::tcp4(spec(src, dst, sport, dport)),
            FlowUnion::tcp4(spec(src_mask, dst_mask, sport_mask, dport_mask)),
        )
    };
    Rxnfc {
        cmd: ETHTOOL_SRXCLSRLINS,
        flow_type,
        fs: RxFlowSpec {
            flow_type,
            h_u,
            m_u,
            ring_cookie: u64::from(rule.queue),
            location: loc,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The rule an `ethtool_rxnfc` describes, if it is a plain tcp4/tcp6 rule
/// to a queue. A field counts when its mask is all ones; any other mask
/// (none here sets partial ones) is taken for a wildcard.
pub fn decode_rule(r: &Rxnfc) -> Option<FlowRule> {
    let fs = &r.fs;
    let queue = u32::try_from(fs.ring_cookie).ok()?;
    let port = |v: u16, m: u16| (m == u16::MAX).then(|| u16::from_be(v));
    Some(match fs.flow_type {
        TCP_V4_FLOW => {
            let (h, m) = (fs.h_u.as_tcp4(), fs.m_u.as_tcp4());
            let addr = |v: u32, m: u32| {
                (m == u32::MAX).then(|| IpAddr::from(Ipv4Addr::from(v.to_ne_bytes())))
            };
            FlowRule {
                ipv6: false,
                src: addr(h.ip4src, m.ip4src),
                dst: addr(h.ip4dst, m.ip4dst),
                sport: port(h.psrc, m.psrc),
                dport: port(h.pdst, m.pdst),
                queue,
            }
        }
        TCP_V6_FLOW => {
            let (h, m) = (fs.h_u.as_tcp6(), fs.m_u.as_tcp6());
            let addr = |v: [u32; 4], m: [u32; 4]| {
                (m == [u32::MAX; 4]).then(|| IpAddr::from(Ipv6Addr::from(octets_of(v))))
            };
            FlowRule {
                ipv6: true,
                src: addr(h.ip6src, m.ip6src),
                dst: addr(h.ip6dst, m.ip6dst),
                sport: port(h.psrc, m.psrc),
                dport: port(h.pdst, m.pdst),
                queue,
            }
        }
        _ => return None,
    })
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

/// An ioctl socket bound to one interface name.
pub struct EthtoolIoctl {
    fd: OwnedFd,
    name: [libc::c_char; libc::IFNAMSIZ],
}

impl EthtoolIoctl {
    pub fn open(ifname: &str) -> io::Result<Self> {
        if ifname.is_empty() || ifname.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad interface name '{ifname}'"),
            ));
        }
        let mut name = [0; libc::IFNAMSIZ];
        for (c, b) in name.iter_mut().zip(ifname.bytes()) {
            *c = b as libc::c_char;
        }
        // SAFETY: plain syscall.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh fd we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd, name })
    }

    /// Runs one SIOCETHTOOL command on the request at `req`.
    ///
    /// # Safety
    ///
    /// `req` must point to a request as large as the kernel reads and writes
    /// for its command (and the counts in it), valid for the call.
    unsafe fn call(&self, req: *mut libc::c_void) -> io::Result<()> {
        // SAFETY: all zeroes is a valid `ifreq` (a name and a union of plain
        // data and a pointer).
        let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
        ifr.ifr_name = self.name;
        ifr.ifr_ifru.ifru_data = req.cast();
        // SAFETY: `ifr` names the device and points at the request, which
        // the caller vouches for.
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SIOCETHTOOL, &mut ifr) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Runs a command whose request is one `ethtool_rxnfc`.
    fn rxnfc(&self, mut req: Rxnfc) -> io::Result<Rxnfc> {
        // SAFETY: every command sent here reads and writes one `ethtool_rxnfc`
        // (GRXRINGS, GRXCLSRLCNT, GRXCLSRULE, SRXCLSRLINS, SRXCLSRLDEL).
        unsafe { self.call((&raw mut req).cast())? };
        Ok(req)
    }

    /// Runs a command whose request is one `ethtool_value`.
    fn value(&self, cmd: u32, data: u32) -> io::Result<u32> {
        let mut req = EthtoolValue { cmd, data };
        // SAFETY: GFLAGS and SFLAGS read and write one `ethtool_value`.
        unsafe { self.call((&raw mut req).cast())? };
        Ok(req.data)
    }

    /// `ETHTOOL_GFLAGS`.
    pub fn flags(&self) -> io::Result<u32> {
        self.value(ETHTOOL_GFLAGS, 0)
    }

    /// `ETHTOOL_SFLAGS`.
    pub fn set_flags(&self, flags: u32) -> io::Result<()> {
        self.value(ETHTOOL_SFLAGS, flags).map(drop)
    }

    /// `ETHTOOL_GDRVINFO`, `ETHTOOL_GSTRINGS` (`ETH_SS_PRIV_FLAGS`) and
    /// `ETHTOOL_GPFLAGS`: the driver's name and its private flags, each
    /// with whether it is set.
    pub fn driver_and_priv_flags(&self) -> io::Result<(String, Vec<(String, bool)>)> {
        // SAFETY: all zeroes is a valid `Drvinfo` (integers and bytes).
        let mut info: Drvinfo = unsafe { std::mem::zeroed() };
        info.cmd = ETHTOOL_GDRVINFO;
        // SAFETY: GDRVINFO reads and writes one `ethtool_drvinfo`.
        unsafe { self.call((&raw mut info).cast())? };
        let driver = c_name(&info.driver);
        let n = (info.n_priv_flags as usize).min(32);
        if n == 0 {
            return Ok((driver, Vec::new()));
        }
        let head = Gstrings {
            cmd: ETHTOOL_GSTRINGS,
            string_set: ETH_SS_PRIV_FLAGS,
            len: n as u32,
            ..Default::default()
        };
        let words = n * ETH_GSTRING_LEN / size_of::<u32>();
        let mut req = WithArray::new(head, offset_of!(Gstrings, data), words);
        // SAFETY: the kernel writes `len` strings of ETH_GSTRING_LEN bytes
        // after the struct, and `req` has room for `n` of them; it refuses
        // a `len` other than the set's count.
        unsafe { self.call(req.as_mut_ptr())? };
        let bytes: Vec<u8> = req.array().iter().flat_map(|w| w.to_ne_bytes()).collect();
        let set = self.value(ETHTOOL_GPFLAGS, 0)?;
        let flags = bytes
            .chunks_exact(ETH_GSTRING_LEN)
            .take((req.head().len as usize).min(n))
            .enumerate()
            .map(|(i, name)| (c_name(name), set & (1 << i) != 0))
            .collect();
        Ok((driver, flags))
    }

    /// `ETHTOOL_GRXRINGS`: how many RX rings RSS and rules may use.
    pub fn rx_rings(&self) -> io::Result<u32> {
        Ok(self.rxnfc(Rxnfc::new(ETHTOOL_GRXRINGS))?.data as u32)
    }

    /// Runs an indirection table command with room for `len` entries.
    fn rxfh_indir(&self, cmd: u32, len: usize, table: &[u32]) -> io::Result<WithArray<RxfhIndir>> {
        let head = RxfhIndir {
            cmd,
            size: len as u32,
            ring_index: [],
        };
        let mut req = WithArray::new(head, offset_of!(RxfhIndir, ring_index), len);
        req.array_mut()[..table.len()].copy_from_slice(table);
        // SAFETY: the kernel reads and writes `size` entries after the
        // header, and `req` has room for them.
        unsafe { self.call(req.as_mut_ptr())? };
        Ok(req)
    }

    /// `ETHTOOL_GRXFHINDIR`: the RSS indirection table.
    pub fn indir(&self) -> io::Result<Vec<u32>> {
        let size = self.rxfh_indir(ETHTOOL_GRXFHINDIR, 0, &[])?.head().size;
        if size == 0 {
            return Ok(Vec::new());
        }
        let req = self.rxfh_indir(ETHTOOL_GRXFHINDIR, size as usize, &[])?;
        Ok(req.array().to_vec())
    }

    /// `ETHTOOL_SRXFHINDIR`; an empty table resets to the driver's default.
    pub fn set_indir(&self, table: &[u32]) -> io::Result<()> {
        self.rxfh_indir(ETHTOOL_SRXFHINDIR, table.len(), table)
            .map(drop)
    }

    /// `ETHTOOL_GRXCLSRLCNT` then `ETHTOOL_GRXCLSRLALL`: the rule locations in use.
    pub fn rule_locs(&self) -> io::Result<Vec<u32>> {
        let n = self.rxnfc(Rxnfc::new(ETHTOOL_GRXCLSRLCNT))?.rule_cnt as usize;
        if n == 0 {
            return Ok(Vec::new());
        }
        let head = Rxnfc {
            rule_cnt: n as u32,
            ..Rxnfc::new(ETHTOOL_GRXCLSRLALL)
        };
        let mut req = WithArray::new(head, offset_of!(Rxnfc, rule_locs), n);
        // SAFETY: the kernel writes at most `rule_cnt` locations after the
        // struct's `rule_locs`, and `req` has room for that many.
        unsafe { self.call(req.as_mut_ptr())? };
        let found = (req.head().rule_cnt as usize).min(n);
        Ok(req.array()[..found].to_vec())
    }

    /// `ETHTOOL_GRXCLSRLCNT`: the rule table's size, and whether the driver
    /// picks a rule's location itself (`RX_CLS_LOC_SPECIAL`).
    pub fn rule_space(&self) -> io::Result<(u32, bool)> {
        let data = self.rxnfc(Rxnfc::new(ETHTOOL_GRXCLSRLCNT))?.data;
        let special = u64::from(RX_CLS_LOC_SPECIAL);
        Ok(((data & !special) as u32, data & special != 0))
    }

    /// `ETHTOOL_GRXCLSRULE`: the rule at `loc`.
    pub fn rule_get(&self, loc: u32) -> io::Result<Rxnfc> {
        let mut req = Rxnfc::new(ETHTOOL_GRXCLSRULE);
        req.fs.location = loc;
        self.rxnfc(req)
    }

    /// `ETHTOOL_SRXCLSRLINS` of a rule (its `cmd` is set here); returns the
    /// location the driver used.
    pub fn rule_insert(&self, rule: &Rxnfc) -> io::Result<u32> {
        let req = Rxnfc {
            cmd: ETHTOOL_SRXCLSRLINS,
            ..*rule
        };
        Ok(self.rxnfc(req)?.fs.location)
    }

    /// `ETHTOOL_SRXCLSRLDEL`.
    pub fn rule_delete(&self, loc: u32) -> io::Result<()> {
        let mut req = Rxnfc::new(ETHTOOL_SRXCLSRLDEL);
        req.fs.location = loc;
        self.rxnfc(req).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each size, offset and constant above, as the C compiler finds it in
    /// <linux/ethtool.h>, <linux/sockios.h> and <net/if.h>. The uapi layout
    /// of these structs has not changed since long before 6.12, so the
    /// host's headers stand for the guest kernels'. Fails without `cc`.
    #[test]
    fn layout_matches_the_c_headers() {
        let rust: Vec<(&str, usize)> = vec![
            ("sizeof(struct ethtool_value)", size_of::<EthtoolValue>()),
            (
                "offsetof(struct ethtool_value, data)",
                offset_of!(EthtoolValue, data),
            ),
            (
                "sizeof(struct ethtool_tcpip4_spec)",
                size_of::<TcpIp4Spec>(),
            ),
            (
                "_Alignof(struct ethtool_tcpip4_spec)",
                align_of::<TcpIp4Spec>(),
            ),
            (
                "offsetof(struct ethtool_tcpip4_spec, ip4src)",
                offset_of!(TcpIp4Spec, ip4src),
            ),
            (
                "offsetof(struct ethtool_tcpip4_spec, ip4dst)",
                offset_of!(TcpIp4Spec, ip4dst),
            ),
            (
                "offsetof(struct ethtool_tcpip4_spec, psrc)",
                offset_of!(TcpIp4Spec, psrc),
            ),
            (
                "offsetof(struct ethtool_tcpip4_spec, pdst)",
                offset_of!(TcpIp4Spec, pdst),
            ),
            (
                "offsetof(struct ethtool_tcpip4_spec, tos)",
                offset_of!(TcpIp4Spec, tos),
            ),
            (
                "sizeof(struct ethtool_tcpip6_spec)",
                size_of::<TcpIp6Spec>(),
            ),
            (
                "_Alignof(struct ethtool_tcpip6_spec)",
                align_of::<TcpIp6Spec>(),
            ),
            (
                "offsetof(struct ethtool_tcpip6_spec, ip6src)",
                offset_of!(TcpIp6Spec, ip6src),
            ),
            (
                "offsetof(struct ethtool_tcpip6_spec, ip6dst)",
                offset_of!(TcpIp6Spec, ip6dst),
            ),
            (
                "offsetof(struct ethtool_tcpip6_spec, psrc)",
                offset_of!(TcpIp6Spec, psrc),
            ),
            (
                "offsetof(struct ethtool_tcpip6_spec, pdst)",
                offset_of!(TcpIp6Spec, pdst),
            ),
            (
                "offsetof(struct ethtool_tcpip6_spec, tclass)",
                offset_of!(TcpIp6Spec, tclass),
            ),
            ("sizeof(union ethtool_flow_union)", size_of::<FlowUnion>()),
            (
                "_Alignof(union ethtool_flow_union)",
                align_of::<FlowUnion>(),
            ),
            ("sizeof(struct ethtool_flow_ext)", size_of::<FlowExt>()),
            ("_Alignof(struct ethtool_flow_ext)", align_of::<FlowExt>()),
            (
                "offsetof(struct ethtool_flow_ext, h_dest)",
                offset_of!(FlowExt, h_dest),
            ),
            (
                "offsetof(struct ethtool_flow_ext, vlan_etype)",
                offset_of!(FlowExt, vlan_etype),
            ),
            (
                "offsetof(struct ethtool_flow_ext, vlan_tci)",
                offset_of!(FlowExt, vlan_tci),
            ),
            (
                "offsetof(struct ethtool_flow_ext, data)",
                offset_of!(FlowExt, data),
            ),
            (
                "sizeof(struct ethtool_rx_flow_spec)",
                size_of::<RxFlowSpec>(),
            ),
            (
                "_Alignof(struct ethtool_rx_flow_spec)",
                align_of::<RxFlowSpec>(),
            ),
            (
                "offsetof(struct ethtool_rx_flow_spec, h_u)",
                offset_of!(RxFlowSpec, h_u),
            ),
            (
                "offsetof(struct ethtool_rx_flow_spec, h_ext)",
                offset_of!(RxFlowSpec, h_ext),
            ),
            (
                "offsetof(struct ethtool_rx_flow_spec, m_u)",
                offset_of!(RxFlowSpec, m_u),
            ),
            (
                "offsetof(struct ethtool_rx_flow_spec, m_ext)",
                offset_of!(RxFlowSpec, m_ext),
            ),
            (
                "offsetof(struct ethtool_rx_flow_spec, ring_cookie)",
                offset_of!(RxFlowSpec, ring_cookie),
            ),
            (
                "offsetof(struct ethtool_rx_flow_spec, location)",
                offset_of!(RxFlowSpec, location),
            ),
            ("sizeof(struct ethtool_rxnfc)", size_of::<Rxnfc>()),
            ("_Alignof(struct ethtool_rxnfc)", align_of::<Rxnfc>()),
            (
                "offsetof(struct ethtool_rxnfc, flow_type)",
                offset_of!(Rxnfc, flow_type),
            ),
            (
                "offsetof(struct ethtool_rxnfc, data)",
                offset_of!(Rxnfc, data),
            ),
            ("offsetof(struct ethtool_rxnfc, fs)", offset_of!(Rxnfc, fs)),
            (
                "offsetof(struct ethtool_rxnfc, rule_cnt)",
                offset_of!(Rxnfc, rule_cnt),
            ),
            (
                "offsetof(struct ethtool_rxnfc, rss_context)",
                offset_of!(Rxnfc, rule_cnt),
            ),
            (
                "offsetof(struct ethtool_rxnfc, rule_locs)",
                offset_of!(Rxnfc, rule_locs),
            ),
            ("sizeof(struct ethtool_drvinfo)", size_of::<Drvinfo>()),
            (
                "offsetof(struct ethtool_drvinfo, driver)",
                offset_of!(Drvinfo, driver),
            ),
            (
                "offsetof(struct ethtool_drvinfo, n_priv_flags)",
                offset_of!(Drvinfo, n_priv_flags),
            ),
            ("sizeof(struct ethtool_gstrings)", size_of::<Gstrings>()),
            (
                "offsetof(struct ethtool_gstrings, len)",
                offset_of!(Gstrings, len),
            ),
            (
                "offsetof(struct ethtool_gstrings, data)",
                offset_of!(Gstrings, data),
            ),
            ("ETHTOOL_GDRVINFO", ETHTOOL_GDRVINFO as usize),
            ("ETHTOOL_GSTRINGS", ETHTOOL_GSTRINGS as usize),
            ("ETHTOOL_GPFLAGS", ETHTOOL_GPFLAGS as usize),
            ("ETH_SS_PRIV_FLAGS", ETH_SS_PRIV_FLAGS as usize),
            ("ETH_GSTRING_LEN", ETH_GSTRING_LEN),
            ("sizeof(struct ethtool_rxfh_indir)", size_of::<RxfhIndir>()),
            (
                "offsetof(struct ethtool_rxfh_indir, size)",
                offset_of!(RxfhIndir, size),
            ),
            (
                "offsetof(struct ethtool_rxfh_indir, ring_index)",
                offset_of!(RxfhIndir, ring_index),
            ),
            ("sizeof(struct ifreq)", size_of::<libc::ifreq>()),
            (
                "offsetof(struct ifreq, ifr_data)",
                offset_of!(libc::ifreq, ifr_ifru),
            ),
            ("SIOCETHTOOL", libc::SIOCETHTOOL as usize),
            ("ETHTOOL_GFLAGS", ETHTOOL_GFLAGS as usize),
            ("ETHTOOL_SFLAGS", ETHTOOL_SFLAGS as usize),
            ("ETHTOOL_GRXRINGS", ETHTOOL_GRXRINGS as usize),
            ("ETHTOOL_GRXCLSRLCNT", ETHTOOL_GRXCLSRLCNT as usize),
            ("ETHTOOL_GRXCLSRULE", ETHTOOL_GRXCLSRULE as usize),
            ("ETHTOOL_GRXCLSRLALL", ETHTOOL_GRXCLSRLALL as usize),
            ("ETHTOOL_SRXCLSRLDEL", ETHTOOL_SRXCLSRLDEL as usize),
            ("ETHTOOL_SRXCLSRLINS", ETHTOOL_SRXCLSRLINS as usize),
            ("ETHTOOL_GRXFHINDIR", ETHTOOL_GRXFHINDIR as usize),
            ("ETHTOOL_SRXFHINDIR", ETHTOOL_SRXFHINDIR as usize),
            ("ETH_FLAG_NTUPLE", ETH_FLAG_NTUPLE as usize),
            ("TCP_V4_FLOW", TCP_V4_FLOW as usize),
            ("TCP_V6_FLOW", TCP_V6_FLOW as usize),
            ("RX_CLS_LOC_ANY", RX_CLS_LOC_ANY as usize),
        ];
        let pairs: Vec<(&str, u64)> = rust.into_iter().map(|(e, v)| (e, v as u64)).collect();
        crate::c_headers::check(&["net/if.h", "linux/ethtool.h", "linux/sockios.h"], &pairs);
    }

    #[test]
    fn tcp4_rule_fields() {
        let r = FlowRule::tcp(
            Some("10.9.0.1".parse().unwrap()),
            Some("10.9.0.2".parse().unwrap()),
            Some(5201),
            Some(5201),
            8,
        )
        .unwrap();
        let req = encode_insert(&r, RX_CLS_LOC_ANY);
        assert_eq!(
            (req.cmd, req.flow_type, req.fs.flow_type),
            (ETHTOOL_SRXCLSRLINS, TCP_V4_FLOW, TCP_V4_FLOW)
        );
        let (h, m) = (req.fs.h_u.as_tcp4(), req.fs.m_u.as_tcp4());
        // Network byte order in memory, as the kernel reads `__be32`/`__be16`.
        assert_eq!(h.ip4src.to_ne_bytes(), [10, 9, 0, 1]);
        assert_eq!(h.ip4dst.to_ne_bytes(), [10, 9, 0, 2]);
        assert_eq!(h.psrc.to_ne_bytes(), [0x14, 0x51]);
        assert_eq!(h.pdst.to_ne_bytes(), [0x14, 0x51]);
        assert_eq!(
            (m.ip4src, m.ip4dst, m.psrc, m.pdst, m.tos),
            (u32::MAX, u32::MAX, u16::MAX, u16::MAX, 0)
        );
        assert_eq!(h.tos, 0);
        // Past the tcp4 fields, the union is zero.
        assert!(req.fs.h_u.bytes()[16..].iter().all(|&b| b == 0));
        assert!(req.fs.m_u.bytes()[16..].iter().all(|&b| b == 0));
        assert_eq!((req.fs.ring_cookie, req.fs.location), (8, RX_CLS_LOC_ANY));
        // No extensions, no RSS context.
        assert_eq!(
            (req.fs.h_ext, req.fs.m_ext, req.rule_cnt),
            (FlowExt::default(), FlowExt::default(), 0)
        );
        assert_eq!(decode_rule(&req), Some(r.clone()));
        assert_eq!(
            r.to_string(),
            "flow-type tcp4 src-ip 10.9.0.1 dst-ip 10.9.0.2 src-port 5201 dst-port 5201 queue 8"
        );
    }

    #[test]
    fn tcp6_rule_fields_and_wildcards() {
        let dst: Ipv6Addr = "fd00::2".parse().unwrap();
        let r = FlowRule::tcp(None, Some(dst.into()), None, Some(80), 3).unwrap();
        assert!(r.ipv6);
        let req = encode_insert(&r, 5);
        assert_eq!(req.flow_type, TCP_V6_FLOW);
        let (h, m) = (req.fs.h_u.as_tcp6(), req.fs.m_u.as_tcp6());
        assert_eq!(octets_of(h.ip6dst), dst.octets());
        assert_eq!(m.ip6dst, [u32::MAX; 4]);
        // No source address or port: value and mask zero.
        assert_eq!((h.ip6src, m.ip6src, h.psrc, m.psrc), ([0; 4], [0; 4], 0, 0));
        assert_eq!((h.pdst, m.pdst), (80u16.to_be(), u16::MAX));
        assert_eq!(req.fs.location, 5);
        assert_eq!(decode_rule(&req), Some(r.clone()));
        assert_eq!(
            r.to_string(),
            "flow-type tcp6 dst-ip fd00::2 dst-port 80 queue 3"
        );
        // Another flow type, or a special action instead of a queue: not ours.
        let mut other = req;
        other.fs.flow_type = 0x02;
        assert_eq!(decode_rule(&other), None);
        let mut discard = req;
        discard.fs.ring_cookie = u64::MAX;
        assert_eq!(decode_rule(&discard), None);
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
    fn requests_with_a_flexible_array() {
        assert_eq!(equal_table(8, 3), vec![0, 1, 2, 0, 1, 2, 0, 1]);
        assert_eq!(default_table(4, 16), vec![0, 1, 2, 3]);
        let head = RxfhIndir {
            cmd: ETHTOOL_SRXFHINDIR,
            size: 3,
            ring_index: [],
        };
        let mut req = WithArray::new(head, offset_of!(RxfhIndir, ring_index), 3);
        req.array_mut().copy_from_slice(&[0, 1, 0]);
        // The header, then the entries right after it.
        let words: Vec<u32> = req
            .words
            .iter()
            .flat_map(|w| {
                let b = w.to_ne_bytes();
                [
                    u32::from_ne_bytes([b[0], b[1], b[2], b[3]]),
                    u32::from_ne_bytes([b[4], b[5], b[6], b[7]]),
                ]
            })
            .collect();
        assert_eq!(&words[..5], &[ETHTOOL_SRXFHINDIR, 3, 0, 1, 0]);
        assert_eq!(req.head(), head);
        // An rxnfc's locations start in its tail padding.
        let head = Rxnfc {
            rule_cnt: 3,
            ..Rxnfc::new(ETHTOOL_GRXCLSRLALL)
        };
        let mut req = WithArray::new(head, offset_of!(Rxnfc, rule_locs), 3);
        assert_eq!(req.words.len() * 8, size_of::<Rxnfc>() + 8);
        req.array_mut().copy_from_slice(&[4, 9, 1023]);
        assert_eq!(req.head().tail_pad, 4);
        assert_eq!(req.array(), &[4, 9, 1023]);
        assert_eq!(req.head().rule_cnt, 3);
    }
}
