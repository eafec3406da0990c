//! Generic netlink through netlink-socket2, the messages built and read by
//! netlink-bindings (generated from the kernel's YNL specs): a family
//! resolved once with the operations the running kernel offers, requests
//! and their replies, and the kernel's refusals as [`NlError`].

use netlink_bindings::nlctrl;
use netlink_bindings::traits::{NetlinkRequest, Protocol};
use netlink_socket2::{NetlinkSocket, ReplyError};
use std::io;

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

impl NlError {
    /// The errno of a failed reply and the kernel's extack message (or, when
    /// it has none, the attribute it missed); `None` for netlink-socket2's
    /// own errors, which carry no errno.
    pub fn from_reply(e: &ReplyError) -> Option<Self> {
        let errno = e.as_io_error().raw_os_error()?;
        let ext_ack = e.ext_ack();
        let text = ext_ack
            .as_ref()
            .and_then(|a| a.get_msg().ok())
            .map(|m| m.to_string_lossy().into_owned());
        let missing = ext_ack
            .as_ref()
            .and_then(|a| a.get_missing_type().ok())
            .map(|t| format!("missing attribute {t}"));
        Some(NlError {
            errno,
            msg: text.or(missing),
        })
    }
}

/// What a request comes to: `Err` when the socket failed, `Ok(Err)` when
/// the kernel refused.
pub type NlResult<T> = io::Result<Result<T, NlError>>;

/// Sends `request` on a socket of its own, for its ack only (a change such
/// as `newlink`, whose replies carry nothing wanted).
pub fn request_ack<R: NetlinkRequest>(request: &R) -> NlResult<()> {
    Ok(exchange(&mut NetlinkSocket::new(), request, |_| ())?.map(drop))
}

/// Sends `request` on `sock` and maps each reply (a dump's objects, a do's
/// answer; none for a bare ack) through `each`.
pub fn exchange<R: NetlinkRequest, T>(
    sock: &mut NetlinkSocket,
    request: &R,
    mut each: impl FnMut(R::ReplyType<'_>) -> T,
) -> NlResult<Vec<T>> {
    let mut replies = sock.request(request).map_err(real_errno)?;
    let mut out = Vec::new();
    while let Some(reply) = replies.recv() {
        match reply {
            Ok(r) => out.push(each(r)),
            Err(e) => {
                return match NlError::from_reply(&e) {
                    Some(refused) => Ok(Err(refused)),
                    None => Err(e.into()),
                }
            }
        }
    }
    Ok(Ok(out))
}

/// netlink-socket2 0.3.5 reports a failed socket(2) as EPERM (it turns the
/// -1 it got into an errno); the real one is still in `errno`. Sending on a
/// netlink socket never fails with EPERM for a request to the kernel.
fn real_errno(e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(libc::EPERM) {
        io::Error::last_os_error()
    } else {
        e
    }
}

/// `request` sent to a family whose id was resolved beforehand (otherwise
/// netlink-socket2 resolves the name on the first request, without the
/// family's operations).
struct ToFamily<'a, R> {
    request: &'a R,
    id: u16,
}

impl<R: NetlinkRequest> NetlinkRequest for ToFamily<'_, R> {
    fn protocol(&self) -> Protocol {
        Protocol::Raw {
            protonum: libc::NETLINK_GENERIC as u16,
            request_type: self.id,
        }
    }

    fn flags(&self) -> u16 {
        self.request.flags()
    }

    fn payload(&self) -> &[u8] {
        self.request.payload()
    }

    type ReplyType<'buf> = R::ReplyType<'buf>;

    fn decode_reply(buf: &[u8]) -> Self::ReplyType<'_> {
        R::decode_reply(buf)
    }

    fn lookup(
        buf: &[u8],
        offset: usize,
        missing_type: Option<u16>,
    ) -> (Vec<(&'static str, usize)>, Option<&'static str>) {
        R::lookup(buf, offset, missing_type)
    }
}

/// A socket talking to one generic netlink family, resolved when opened.
pub struct Genl {
    sock: NetlinkSocket,
    id: u16,
    /// The commands this kernel's family has.
    ops: Vec<u32>,
}

impl Genl {
    /// Opens a socket and resolves family `name` with its operations.
    pub fn open(name: &str) -> NlResult<Self> {
        let mut sock = NetlinkSocket::new();
        let mut request = nlctrl::Request::new().op_getfamily_do();
        request.encode().push_family_name_bytes(name.as_bytes());
        let found = exchange(&mut sock, &request, |reply| {
            let ops = reply
                .get_ops()
                .map(|ops| ops.filter_map(|op| op.get_id().ok()).collect())
                .unwrap_or_default();
            (reply.get_family_id().ok(), ops)
        })?;
        let not_found = || NlError {
            errno: libc::ENOENT,
            msg: Some(format!(
                "generic netlink family '{name}' not found (kernel too old or not built in?)"
            )),
        };
        Ok(match found {
            Ok(replies) => match replies.into_iter().next() {
                Some((Some(id), ops)) => Ok(Genl { sock, id, ops }),
                _ => Err(not_found()),
            },
            Err(e) if e.errno == libc::ENOENT => Err(not_found()),
            Err(e) => Err(e),
        })
    }

    /// Whether the running kernel's family has command `cmd`.
    pub fn has_op(&self, cmd: u8) -> bool {
        self.ops.contains(&u32::from(cmd))
    }

    /// Sends `request` and maps each reply through `each`.
    pub fn request<R: NetlinkRequest, T>(
        &mut self,
        request: &R,
        each: impl FnMut(R::ReplyType<'_>) -> T,
    ) -> NlResult<Vec<T>> {
        let to_family = ToFamily {
            request,
            id: self.id,
        };
        exchange(&mut self.sock, &to_family, each)
    }

    /// Sends `request`, which the kernel answers with an ack only.
    pub fn ack<R: NetlinkRequest>(&mut self, request: &R) -> NlResult<()> {
        Ok(self.request(request, |_| ())?.map(drop))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn errors_without_an_errno_are_not_refusals() {
        let e = ReplyError::from(io::Error::other("Received packet is too short"));
        assert_eq!(NlError::from_reply(&e), None);
        let e = ReplyError::from(io::Error::from_raw_os_error(libc::ENOBUFS));
        assert_eq!(
            NlError::from_reply(&e),
            Some(NlError {
                errno: libc::ENOBUFS,
                msg: None
            })
        );
    }
}

/// Bytes of netlink attributes, spelled out by hand: for the tests (here and
/// in the other tools) that hold a request's wire form against the uapi
/// headers, independently of the crates that build the requests.
pub mod test_wire {
    /// An `nlattr` header: length, then type.
    pub fn nla(len: u16, kind: u16) -> Vec<u8> {
        [len.to_ne_bytes(), kind.to_ne_bytes()].concat()
    }

    /// A u32 attribute of type `kind`: header and value.
    pub fn nla_u32(kind: u16, value: u32) -> Vec<u8> {
        [nla(8, kind), value.to_ne_bytes().to_vec()].concat()
    }
}
