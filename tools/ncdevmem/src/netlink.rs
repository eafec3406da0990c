//! Generic netlink, as far as ncdevmem-rs needs it: resolve a family by name,
//! `bind-rx` a dma-buf to RX queues (the binding lives as long as the socket),
//! and the attribute builders and parsers the `ethtool` family requests share
//! (see `ethtool_nl`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLM_F_DUMP: u16 = 0x300;
const NLM_F_ACK_TLVS: u16 = 0x200;
const NLA_F_NESTED: u16 = 0x8000;
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const NLMSGERR_ATTR_MSG: u16 = 1;
const NLMSGERR_ATTR_MISS_TYPE: u16 = 5;
const NETLINK_EXT_ACK: i32 = 11;

/// `NETDEV_CMD_BIND_RX` and its attributes (include/uapi/linux/netdev.h).
pub const NETDEV_CMD_BIND_RX: u8 = 13;
pub const NETDEV_CMD_BIND_TX: u8 = 15;
pub const NETDEV_A_DMABUF_IFINDEX: u16 = 1;
pub const NETDEV_A_DMABUF_QUEUES: u16 = 2;
pub const NETDEV_A_DMABUF_FD: u16 = 3;
pub const NETDEV_A_DMABUF_ID: u16 = 4;
/// Linux 7.3: the size of the buffers the bound queues hand the NIC.
pub const NETDEV_A_DMABUF_RX_PAGE_SIZE: u16 = 5;
pub const NETDEV_A_QUEUE_ID: u16 = 1;
pub const NETDEV_A_QUEUE_TYPE: u16 = 3;
pub const NETDEV_QUEUE_TYPE_RX: u32 = 0;

/// A netlink request failed: the errno and the kernel's extack message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NlError {
    /// Positive errno.
    pub errno: i32,
    /// Extended ack message, if the kernel gave one.
    pub msg: Option<String>,
}

/// What an errno usually means for a NIC configuration request.
pub fn errno_hint(errno: i32) -> Option<&'static str> {
    match errno {
        libc::EPERM | libc::EACCES => Some("CAP_NET_ADMIN is needed: run as root"),
        libc::EOPNOTSUPP => Some("the driver does not support this operation"),
        libc::ENODEV => Some("no such interface"),
        _ => None,
    }
}

impl std::fmt::Display for NlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = io::Error::from_raw_os_error(self.errno);
        write!(f, "{e}")?;
        if let Some(h) = errno_hint(self.errno) {
            write!(f, "; {h}")?;
        }
        match &self.msg {
            Some(m) => write!(f, " (kernel: {m})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for NlError {}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Appends one attribute.
pub fn put_attr(out: &mut Vec<u8>, kind: u16, data: &[u8]) {
    let len = 4 + data.len();
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(data);
    out.resize(out.len() + align4(len) - len, 0);
}

/// Appends a nested attribute.
pub fn put_nested(out: &mut Vec<u8>, kind: u16, inner: &[u8]) {
    put_attr(out, kind | NLA_F_NESTED, inner);
}

/// Appends a `u32` attribute.
pub fn put_u32(out: &mut Vec<u8>, kind: u16, v: u32) {
    put_attr(out, kind, &v.to_ne_bytes());
}

/// Appends a `u8` attribute (padded to 4 bytes on the wire).
pub fn put_u8(out: &mut Vec<u8>, kind: u16, v: u8) {
    put_attr(out, kind, &[v]);
}

/// Appends a NUL-terminated string attribute.
pub fn put_strz(out: &mut Vec<u8>, kind: u16, s: &str) {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    put_attr(out, kind, &v);
}

/// The payload of the first attribute `kind` of `buf`.
pub fn find_attr(buf: &[u8], kind: u16) -> Option<&[u8]> {
    attrs(buf)
        .into_iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, v)| v)
}

/// A `u32` payload.
pub fn get_u32(v: &[u8]) -> Option<u32> {
    Some(u32::from_ne_bytes(v.get(..4)?.try_into().ok()?))
}

/// A `u8` payload.
pub fn get_u8(v: &[u8]) -> Option<u8> {
    v.first().copied()
}

/// Builds a generic netlink request (acked).
pub fn genl_msg(family: u16, cmd: u8, version: u8, seq: u32, attrs: &[u8]) -> Vec<u8> {
    genl_msg_flags(family, cmd, version, seq, NLM_F_REQUEST | NLM_F_ACK, attrs)
}

/// Builds a generic netlink message with the given header flags.
fn genl_msg_flags(
    family: u16,
    cmd: u8,
    version: u8,
    seq: u32,
    flags: u16,
    attrs: &[u8],
) -> Vec<u8> {
    let len = 16 + 4 + attrs.len();
    let mut m = Vec::with_capacity(len);
    m.extend_from_slice(&(len as u32).to_ne_bytes());
    m.extend_from_slice(&family.to_ne_bytes());
    m.extend_from_slice(&flags.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(&[cmd, version, 0, 0]);
    m.extend_from_slice(attrs);
    m
}

/// The attributes of `buf`, as (type without flags, payload).
pub fn attrs(buf: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    let mut off = 0;
    while off + 4 <= buf.len() {
        let len = u16::from_ne_bytes([buf[off], buf[off + 1]]) as usize;
        let kind = u16::from_ne_bytes([buf[off + 2], buf[off + 3]]) & 0x3fff;
        if len < 4 || off + len > buf.len() {
            break;
        }
        out.push((kind, &buf[off + 4..off + len]));
        off += align4(len);
    }
    out
}

/// One reply to a request: its attributes (generic netlink payload), or an error.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// A data message's attributes (after the genl header).
    Data(Vec<u8>),
    /// The end of the answer: the final ack (error 0), or a dump's done.
    Ack,
}

/// Parses the messages of one `recv` for sequence `seq`.
pub fn parse_replies(buf: &[u8], seq: u32) -> Result<Vec<Reply>, NlError> {
    let mut out = Vec::new();
    let mut off = 0;
    while off + 16 <= buf.len() {
        let len = u32::from_ne_bytes(buf[off..off + 4].try_into().unwrap()) as usize;
        let kind = u16::from_ne_bytes([buf[off + 4], buf[off + 5]]);
        let flags = u16::from_ne_bytes([buf[off + 6], buf[off + 7]]);
        let mseq = u32::from_ne_bytes(buf[off + 8..off + 12].try_into().unwrap());
        if len < 16 || off + len > buf.len() {
            return Err(NlError {
                errno: libc::EPROTO,
                msg: Some("truncated netlink message".into()),
            });
        }
        let body = &buf[off + 16..off + len];
        if mseq == seq {
            match kind {
                NLMSG_ERROR => {
                    if body.len() < 4 {
                        return Err(NlError {
                            errno: libc::EPROTO,
                            msg: None,
                        });
                    }
                    let err = i32::from_ne_bytes(body[0..4].try_into().unwrap());
                    if err == 0 {
                        out.push(Reply::Ack);
                        break;
                    }
                    // With ACK_TLVS, the echoed request header (16 bytes) and then
                    // TLVs follow; the kernel does not echo the payload (CAP_ACK off:
                    // it does, so skip the whole echoed message by its length).
                    let mut msg = None;
                    if flags & NLM_F_ACK_TLVS != 0 && body.len() >= 20 {
                        let echoed = u32::from_ne_bytes(body[4..8].try_into().unwrap()) as usize;
                        let tlv_at = 4 + if flags & 0x100 != 0 {
                            16
                        } else {
                            align4(echoed)
                        };
                        if tlv_at <= body.len() {
                            for (k, v) in attrs(&body[tlv_at..]) {
                                if k == NLMSGERR_ATTR_MSG {
                                    let s = v.split(|&b| b == 0).next().unwrap_or(&[]);
                                    msg = Some(String::from_utf8_lossy(s).into_owned());
                                } else if k == NLMSGERR_ATTR_MISS_TYPE && msg.is_none() {
                                    if let Some(t) = get_u32(v) {
                                        msg = Some(format!("missing attribute {t}"));
                                    }
                                }
                            }
                        }
                    }
                    return Err(NlError { errno: -err, msg });
                }
                NLMSG_DONE => {
                    out.push(Reply::Ack);
                    break;
                }
                _ if body.len() >= 4 => out.push(Reply::Data(body[4..].to_vec())),
                _ => {}
            }
        }
        off += align4(len);
    }
    Ok(out)
}

/// A generic netlink socket.
pub struct GenlSocket {
    fd: OwnedFd,
    seq: u32,
}

impl GenlSocket {
    /// Opens a socket with extended acks on.
    pub fn open() -> io::Result<Self> {
        Self::open_protocol(libc::NETLINK_GENERIC)
    }

    /// Opens a route netlink socket (rtnetlink) with extended acks on, for
    /// [`GenlSocket::route_request`].
    pub fn open_route() -> io::Result<Self> {
        Self::open_protocol(libc::NETLINK_ROUTE)
    }

    fn open_protocol(protocol: i32) -> io::Result<Self> {
        // SAFETY: plain syscall.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                protocol,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh fd we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let one: i32 = 1;
        // SAFETY: valid fd, option value of the size given. Failing is fine (old kernels).
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_NETLINK,
                NETLINK_EXT_ACK,
                (&one as *const i32).cast(),
                4,
            )
        };
        Ok(Self { fd, seq: 1 })
    }

    /// Sends a request and collects its replies.
    pub fn request(
        &mut self,
        family: u16,
        cmd: u8,
        version: u8,
        attrs: &[u8],
    ) -> io::Result<Result<Vec<Reply>, NlError>> {
        self.exchange(family, cmd, version, NLM_F_REQUEST | NLM_F_ACK, attrs)
    }

    /// Sends a dump request and collects every object's attributes.
    pub fn dump(
        &mut self,
        family: u16,
        cmd: u8,
        version: u8,
        attrs: &[u8],
    ) -> io::Result<Result<Vec<Reply>, NlError>> {
        self.exchange(family, cmd, version, NLM_F_REQUEST | NLM_F_DUMP, attrs)
    }

    /// Sends an rtnetlink request of type `ty` (`RTM_*`) whose body (after the
    /// netlink header: e.g. `ifinfomsg` and attributes) is `body`, acked.
    pub fn route_request(
        &mut self,
        ty: u16,
        flags: u16,
        body: &[u8],
    ) -> io::Result<Result<Vec<Reply>, NlError>> {
        self.seq += 1;
        let len = 16 + body.len();
        let mut msg = Vec::with_capacity(len);
        msg.extend_from_slice(&(len as u32).to_ne_bytes());
        msg.extend_from_slice(&ty.to_ne_bytes());
        msg.extend_from_slice(&(flags | NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
        msg.extend_from_slice(&self.seq.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes());
        msg.extend_from_slice(body);
        self.send_and_collect(&msg)
    }

    fn exchange(
        &mut self,
        family: u16,
        cmd: u8,
        version: u8,
        flags: u16,
        attrs: &[u8],
    ) -> io::Result<Result<Vec<Reply>, NlError>> {
        self.seq += 1;
        let msg = genl_msg_flags(family, cmd, version, self.seq, flags, attrs);
        self.send_and_collect(&msg)
    }

    /// Sends `msg` (sequence number `self.seq`) and collects the replies.
    fn send_and_collect(&mut self, msg: &[u8]) -> io::Result<Result<Vec<Reply>, NlError>> {
        // SAFETY: valid buffer; netlink to the kernel (nl_pid 0) via a zeroed address.
        let n = unsafe {
            let mut sa: libc::sockaddr_nl = std::mem::zeroed();
            sa.nl_family = libc::AF_NETLINK as u16;
            libc::sendto(
                self.fd.as_raw_fd(),
                msg.as_ptr().cast(),
                msg.len(),
                0,
                (&sa as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut replies = Vec::new();
        let mut buf = vec![0u8; 65536];
        loop {
            // SAFETY: valid buffer.
            let n =
                unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            match parse_replies(&buf[..n as usize], self.seq) {
                Err(e) => return Ok(Err(e)),
                Ok(mut r) => {
                    let done = r.contains(&Reply::Ack);
                    r.retain(|x| *x != Reply::Ack);
                    replies.extend(r);
                    if done {
                        return Ok(Ok(replies));
                    }
                }
            }
        }
    }

    /// The id of generic netlink family `name`.
    pub fn resolve(&mut self, name: &str) -> io::Result<Result<u16, NlError>> {
        let mut a = Vec::new();
        put_strz(&mut a, CTRL_ATTR_FAMILY_NAME, name);
        Ok(self
            .request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, &a)?
            .and_then(|replies| {
                replies
                    .iter()
                    .find_map(|r| match r {
                        Reply::Data(d) => find_attr(d, CTRL_ATTR_FAMILY_ID)
                            .filter(|v| v.len() >= 2)
                            .map(|v| u16::from_ne_bytes([v[0], v[1]])),
                        Reply::Ack => None,
                    })
                    .ok_or(NlError {
                        errno: libc::ENOENT,
                        msg: Some(format!("no genl family {name}")),
                    })
            })
            .map_err(|mut e| {
                if e.errno == libc::ENOENT {
                    e.msg = Some(format!(
                        "generic netlink family '{name}' not found (kernel too old or not built in?)"
                    ));
                }
                e
            }))
    }
}

/// The attributes of a `bind-rx` request; `rx_page_size` (Linux 7.3) asks
/// for buffers of that size instead of pages (older kernels refuse the
/// attribute: leave it out unless asked for).
pub fn bind_rx_attrs(
    ifindex: u32,
    dmabuf_fd: u32,
    queues: &[u32],
    rx_page_size: Option<u32>,
) -> Vec<u8> {
    let mut a = Vec::new();
    put_u32(&mut a, NETDEV_A_DMABUF_IFINDEX, ifindex);
    put_u32(&mut a, NETDEV_A_DMABUF_FD, dmabuf_fd);
    for q in queues {
        let mut inner = Vec::new();
        put_u32(&mut inner, NETDEV_A_QUEUE_ID, *q);
        put_u32(&mut inner, NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_RX);
        put_nested(&mut a, NETDEV_A_DMABUF_QUEUES, &inner);
    }
    if let Some(size) = rx_page_size {
        put_u32(&mut a, NETDEV_A_DMABUF_RX_PAGE_SIZE, size);
    }
    a
}

/// A dma-buf bound to RX queues; unbound when dropped (the socket closes).
pub struct Binding {
    _sock: GenlSocket,
    /// The binding id the kernel reports in `SCM_DEVMEM_DMABUF`.
    pub id: u32,
}

/// Binds `dmabuf_fd` to RX queues `queues` of interface `ifindex`.
pub fn bind_rx(
    ifindex: u32,
    dmabuf_fd: u32,
    queues: &[u32],
) -> io::Result<Result<Binding, NlError>> {
    bind_rx_raw(&bind_rx_attrs(ifindex, dmabuf_fd, queues, None))
}

/// Binds `dmabuf_fd` to RX queues `queues` of interface `ifindex`, with
/// `rx_page_size`-byte buffers (Linux 7.3).
pub fn bind_rx_sized(
    ifindex: u32,
    dmabuf_fd: u32,
    queues: &[u32],
    rx_page_size: u32,
) -> io::Result<Result<Binding, NlError>> {
    bind_rx_raw(&bind_rx_attrs(
        ifindex,
        dmabuf_fd,
        queues,
        Some(rx_page_size),
    ))
}

/// Sends a `bind-rx` request made of `attrs` as they are (the selftest sends
/// malformed ones on purpose).
pub fn bind_rx_raw(attrs_: &[u8]) -> io::Result<Result<Binding, NlError>> {
    bind(NETDEV_CMD_BIND_RX, "bind-rx", attrs_)
}

/// Sends a bind request (`bind-rx` or `bind-tx`) and keeps its socket: the
/// binding lives as long as the returned [`Binding`].
fn bind(cmd: u8, what: &str, attrs_: &[u8]) -> io::Result<Result<Binding, NlError>> {
    let mut sock = GenlSocket::open()?;
    let family = match sock.resolve("netdev")? {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    let replies = match sock.request(family, cmd, 1, attrs_)? {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    let id = replies.iter().find_map(|r| match r {
        Reply::Data(d) => find_attr(d, NETDEV_A_DMABUF_ID).and_then(get_u32),
        Reply::Ack => None,
    });
    Ok(id.map(|id| Binding { _sock: sock, id }).ok_or(NlError {
        errno: libc::EPROTO,
        msg: Some(format!("{what} reply without a binding id")),
    }))
}

/// Binds `dmabuf_fd` for sending through interface `ifindex` (`bind-tx`,
/// Linux 7.2+): sends on a socket bound to that interface may then name the
/// binding in `SCM_DEVMEM_DMABUF`.
pub fn bind_tx(ifindex: u32, dmabuf_fd: u32) -> io::Result<Result<Binding, NlError>> {
    let mut a = Vec::new();
    put_u32(&mut a, NETDEV_A_DMABUF_IFINDEX, ifindex);
    put_u32(&mut a, NETDEV_A_DMABUF_FD, dmabuf_fd);
    bind(NETDEV_CMD_BIND_TX, "bind-tx", &a)
}

/// `NETDEV_CMD_QUEUE_CREATE` (Linux 7.2) and its attributes.
pub const NETDEV_CMD_QUEUE_CREATE: u8 = 16;
pub const NETDEV_A_QUEUE_IFINDEX: u16 = 2;
pub const NETDEV_A_QUEUE_LEASE: u16 = 8;
pub const NETDEV_A_LEASE_IFINDEX: u16 = 1;
pub const NETDEV_A_LEASE_QUEUE: u16 = 2;
pub const NETDEV_A_LEASE_NETNS_ID: u16 = 3;

/// Creates an RX queue on virtual device `ifindex` (netkit) leasing RX queue
/// `queue` of physical device `phys_ifindex` (in the namespace this socket's
/// namespace knows by `netns_id`, if given); the new queue's id.
pub fn queue_create_lease(
    ifindex: u32,
    phys_ifindex: u32,
    queue: u32,
    netns_id: Option<i32>,
) -> io::Result<Result<u32, NlError>> {
    let mut a = Vec::new();
    put_u32(&mut a, NETDEV_A_QUEUE_IFINDEX, ifindex);
    put_u32(&mut a, NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_RX);
    let mut q = Vec::new();
    put_u32(&mut q, NETDEV_A_QUEUE_ID, queue);
    put_u32(&mut q, NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_RX);
    let mut lease = Vec::new();
    put_u32(&mut lease, NETDEV_A_LEASE_IFINDEX, phys_ifindex);
    put_nested(&mut lease, NETDEV_A_LEASE_QUEUE, &q);
    if let Some(id) = netns_id {
        put_attr(&mut lease, NETDEV_A_LEASE_NETNS_ID, &id.to_ne_bytes());
    }
    put_nested(&mut a, NETDEV_A_QUEUE_LEASE, &lease);
    let mut sock = GenlSocket::open()?;
    let family = match sock.resolve("netdev")? {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    let replies = match sock.request(family, NETDEV_CMD_QUEUE_CREATE, 1, &a)? {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    let id = replies.iter().find_map(|r| match r {
        Reply::Data(d) => find_attr(d, NETDEV_A_QUEUE_ID).and_then(get_u32),
        Reply::Ack => None,
    });
    Ok(id.ok_or(NlError {
        errno: libc::EPROTO,
        msg: Some("queue-create reply without a queue id".into()),
    }))
}

/// `NETDEV_CMD_PAGE_POOL_GET` and its attributes.
pub const NETDEV_CMD_PAGE_POOL_GET: u8 = 5;
const NETDEV_A_PAGE_POOL_ID: u16 = 1;
const NETDEV_A_PAGE_POOL_IFINDEX: u16 = 2;
const NETDEV_A_PAGE_POOL_INFLIGHT: u16 = 4;
const NETDEV_A_PAGE_POOL_INFLIGHT_MEM: u16 = 5;
const NETDEV_A_PAGE_POOL_DETACH_TIME: u16 = 6;
const NETDEV_A_PAGE_POOL_DMABUF: u16 = 7;

/// A page pool as the kernel lists it (`page-pool-get`).
#[derive(Debug, PartialEq, Eq, Default)]
pub struct PagePoolInfo {
    pub id: u64,
    /// The device; none once it is gone (the pool waits for its buffers).
    pub ifindex: Option<u32>,
    /// Buffers handed out and not yet returned.
    pub inflight: u64,
    pub inflight_mem: u64,
    /// Destroyed by its driver, still waiting for buffers.
    pub detached: bool,
    /// The dma-buf binding it serves (devmem).
    pub dmabuf: Option<u32>,
}

fn get_uint(v: &[u8]) -> Option<u64> {
    match v.len() {
        4 => get_u32(v).map(u64::from),
        8 => Some(u64::from_ne_bytes(v.try_into().ok()?)),
        _ => None,
    }
}

/// Decodes one `page-pool-get` object.
pub fn parse_page_pool(a: &[u8]) -> PagePoolInfo {
    let mut p = PagePoolInfo::default();
    for (k, v) in attrs(a) {
        match k {
            NETDEV_A_PAGE_POOL_ID => p.id = get_uint(v).unwrap_or(0),
            NETDEV_A_PAGE_POOL_IFINDEX => p.ifindex = get_u32(v),
            NETDEV_A_PAGE_POOL_INFLIGHT => p.inflight = get_uint(v).unwrap_or(0),
            NETDEV_A_PAGE_POOL_INFLIGHT_MEM => p.inflight_mem = get_uint(v).unwrap_or(0),
            NETDEV_A_PAGE_POOL_DETACH_TIME => p.detached = true,
            NETDEV_A_PAGE_POOL_DMABUF => p.dmabuf = get_u32(v),
            _ => {}
        }
    }
    p
}

/// `NETDEV_CMD_QUEUE_GET` and the NAPI id attribute of a queue.
pub const NETDEV_CMD_QUEUE_GET: u8 = 10;
pub const NETDEV_A_QUEUE_NAPI_ID: u16 = 4;

/// An RX queue's id and its NAPI's id, if it has one.
pub type QueueNapi = (u32, Option<u32>);

/// The RX queues of device `ifindex` and their NAPI ids (`queue-get` dump),
/// in the kernel's order.
pub fn rx_queue_napis(ifindex: u32) -> io::Result<Result<Vec<QueueNapi>, NlError>> {
    let mut sock = GenlSocket::open()?;
    let family = match sock.resolve("netdev")? {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    let mut a = Vec::new();
    put_u32(&mut a, NETDEV_A_QUEUE_IFINDEX, ifindex);
    Ok(sock
        .dump(family, NETDEV_CMD_QUEUE_GET, 1, &a)?
        .map(|replies| {
            replies
                .iter()
                .filter_map(|r| match r {
                    Reply::Data(d)
                        if find_attr(d, NETDEV_A_QUEUE_TYPE).and_then(get_u32)
                            == Some(NETDEV_QUEUE_TYPE_RX) =>
                    {
                        let id = find_attr(d, NETDEV_A_QUEUE_ID).and_then(get_u32)?;
                        Some((id, find_attr(d, NETDEV_A_QUEUE_NAPI_ID).and_then(get_u32)))
                    }
                    _ => None,
                })
                .collect()
        }))
}

/// The page pools of this network namespace's devices.
pub fn page_pools() -> io::Result<Result<Vec<PagePoolInfo>, NlError>> {
    let mut sock = GenlSocket::open()?;
    let family = match sock.resolve("netdev")? {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    Ok(sock
        .dump(family, NETDEV_CMD_PAGE_POOL_GET, 1, &[])?
        .map(|replies| {
            replies
                .iter()
                .filter_map(|r| match r {
                    Reply::Data(d) => Some(parse_page_pool(d)),
                    Reply::Ack => None,
                })
                .collect()
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_pool_object() {
        let mut a = Vec::new();
        put_attr(&mut a, NETDEV_A_PAGE_POOL_ID, &7u64.to_ne_bytes());
        put_u32(&mut a, NETDEV_A_PAGE_POOL_IFINDEX, 3);
        put_attr(&mut a, NETDEV_A_PAGE_POOL_INFLIGHT, &12u64.to_ne_bytes());
        put_attr(
            &mut a,
            NETDEV_A_PAGE_POOL_INFLIGHT_MEM,
            &49152u64.to_ne_bytes(),
        );
        put_u32(&mut a, NETDEV_A_PAGE_POOL_DMABUF, 2);
        let p = parse_page_pool(&a);
        assert_eq!(
            p,
            PagePoolInfo {
                id: 7,
                ifindex: Some(3),
                inflight: 12,
                inflight_mem: 49152,
                detached: false,
                dmabuf: Some(2),
            }
        );
        let mut b = Vec::new();
        put_u32(&mut b, NETDEV_A_PAGE_POOL_ID, 9);
        put_attr(
            &mut b,
            NETDEV_A_PAGE_POOL_DETACH_TIME,
            &100u64.to_ne_bytes(),
        );
        let q = parse_page_pool(&b);
        assert!(q.detached && q.ifindex.is_none() && q.id == 9);
    }

    #[test]
    fn a_dump_ends_at_done() {
        let mut d = vec![NETDEV_CMD_PAGE_POOL_GET, 1, 0, 0];
        put_u32(&mut d, NETDEV_A_PAGE_POOL_ID, 1);
        let mut buf = nlmsg(0x20, 2, 5, &d);
        buf.extend(nlmsg(NLMSG_DONE, 2, 5, &0i32.to_ne_bytes()));
        let r = parse_replies(&buf, 5).unwrap();
        assert_eq!(r.len(), 2);
        assert!(matches!(r[0], Reply::Data(_)));
        assert_eq!(r[1], Reply::Ack);
    }

    #[test]
    fn bind_rx_request_layout() {
        let a = bind_rx_attrs(7, 5, &[8, 9], None);
        let top = attrs(&a);
        assert_eq!(top.len(), 4);
        assert_eq!(top[0], (NETDEV_A_DMABUF_IFINDEX, &7u32.to_ne_bytes()[..]));
        assert_eq!(top[1], (NETDEV_A_DMABUF_FD, &5u32.to_ne_bytes()[..]));
        for (i, q) in [8u32, 9].iter().enumerate() {
            assert_eq!(top[2 + i].0, NETDEV_A_DMABUF_QUEUES);
            let inner = attrs(top[2 + i].1);
            assert_eq!(
                inner,
                vec![
                    (NETDEV_A_QUEUE_ID, &q.to_ne_bytes()[..]),
                    (NETDEV_A_QUEUE_TYPE, &0u32.to_ne_bytes()[..])
                ]
            );
        }
        // The nested flag is set on the wire.
        let raw_type = u16::from_ne_bytes([a[18], a[19]]);
        assert_eq!(raw_type, NETDEV_A_DMABUF_QUEUES | NLA_F_NESTED);
        let m = genl_msg(0x20, NETDEV_CMD_BIND_RX, 1, 9, &a);
        assert_eq!(
            u32::from_ne_bytes(m[0..4].try_into().unwrap()) as usize,
            m.len()
        );
        assert_eq!(m[16], NETDEV_CMD_BIND_RX);
        // 7.3's buffer size goes last, and only when asked for.
        let sized = bind_rx_attrs(7, 5, &[8, 9], Some(16384));
        assert_eq!(&sized[..a.len()], &a[..]);
        assert_eq!(
            attrs(&sized)[4],
            (NETDEV_A_DMABUF_RX_PAGE_SIZE, &16384u32.to_ne_bytes()[..])
        );
    }

    fn nlmsg(kind: u16, flags: u16, seq: u32, body: &[u8]) -> Vec<u8> {
        let len = 16 + body.len();
        let mut m = Vec::new();
        m.extend_from_slice(&(len as u32).to_ne_bytes());
        m.extend_from_slice(&kind.to_ne_bytes());
        m.extend_from_slice(&flags.to_ne_bytes());
        m.extend_from_slice(&seq.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(body);
        m.resize(align4(m.len()), 0);
        m
    }

    #[test]
    fn error_with_extack_message() {
        let mut body = Vec::new();
        body.extend_from_slice(&(-libc::EINVAL).to_ne_bytes());
        // Echoed header only (capped ack, flag 0x100).
        body.extend_from_slice(&nlmsg(0x20, 5, 4, &[])[..16]);
        put_attr(&mut body, NLMSGERR_ATTR_MSG, b"no queue 99\0");
        let buf = nlmsg(NLMSG_ERROR, NLM_F_ACK_TLVS | 0x100, 4, &body);
        assert_eq!(
            parse_replies(&buf, 4),
            Err(NlError {
                errno: libc::EINVAL,
                msg: Some("no queue 99".into())
            })
        );
    }

    #[test]
    fn scalar_attributes_are_padded() {
        let mut a = Vec::new();
        put_u8(&mut a, 11, 2);
        put_u32(&mut a, 1, 0x0102_0304);
        put_strz(&mut a, 2, "eth1");
        let mut want = Vec::new();
        want.extend_from_slice(&5u16.to_ne_bytes());
        want.extend_from_slice(&11u16.to_ne_bytes());
        want.extend_from_slice(&[2, 0, 0, 0]);
        want.extend_from_slice(&8u16.to_ne_bytes());
        want.extend_from_slice(&1u16.to_ne_bytes());
        want.extend_from_slice(&0x0102_0304u32.to_ne_bytes());
        want.extend_from_slice(&9u16.to_ne_bytes());
        want.extend_from_slice(&2u16.to_ne_bytes());
        want.extend_from_slice(b"eth1\0\0\0\0");
        assert_eq!(a, want);
        assert_eq!(find_attr(&a, 11).and_then(get_u8), Some(2));
        assert_eq!(find_attr(&a, 1).and_then(get_u32), Some(0x0102_0304));
        assert_eq!(find_attr(&a, 2), Some(&b"eth1\0"[..]));
        assert_eq!(find_attr(&a, 3), None);
        assert_eq!(get_u32(&[1, 2]), None);
    }

    #[test]
    fn error_text_names_the_privilege() {
        let e = NlError {
            errno: libc::EPERM,
            msg: None,
        };
        assert!(e.to_string().contains("CAP_NET_ADMIN"), "{e}");
        let e = NlError {
            errno: libc::EOPNOTSUPP,
            msg: Some("no tcp-data-split".into()),
        };
        let t = e.to_string();
        assert!(
            t.contains("does not support") && t.contains("(kernel: no tcp-data-split)"),
            "{t}"
        );
    }

    #[test]
    fn error_naming_a_missing_attribute() {
        let mut body = Vec::new();
        body.extend_from_slice(&(-libc::EINVAL).to_ne_bytes());
        body.extend_from_slice(&nlmsg(0x20, 5, 4, &[])[..16]);
        put_u32(
            &mut body,
            NLMSGERR_ATTR_MISS_TYPE,
            u32::from(NETDEV_A_DMABUF_QUEUES),
        );
        let buf = nlmsg(NLMSG_ERROR, NLM_F_ACK_TLVS | 0x100, 4, &body);
        assert_eq!(
            parse_replies(&buf, 4),
            Err(NlError {
                errno: libc::EINVAL,
                msg: Some("missing attribute 2".into())
            })
        );
    }

    #[test]
    fn data_then_ack() {
        let mut d = vec![NETDEV_CMD_BIND_RX, 1, 0, 0];
        put_attr(&mut d, NETDEV_A_DMABUF_ID, &3u32.to_ne_bytes());
        let mut buf = nlmsg(0x20, 0, 4, &d);
        buf.extend(nlmsg(NLMSG_ERROR, 0, 4, &[0, 0, 0, 0]));
        let r = parse_replies(&buf, 4).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1], Reply::Ack);
        let Reply::Data(ref a) = r[0] else { panic!() };
        assert_eq!(
            attrs(a),
            vec![(NETDEV_A_DMABUF_ID, &3u32.to_ne_bytes()[..])]
        );
        // Other sequence numbers are ignored.
        assert_eq!(parse_replies(&buf, 5).unwrap(), vec![]);
    }
}
