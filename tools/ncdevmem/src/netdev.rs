//! The netdev generic netlink family, as far as ncdevmem-rs and dmn-xfer
//! need it: `bind-rx` and `bind-tx` a dma-buf (the binding lives as long as
//! the socket that made it), `queue-create` leases, the RX queues' NAPI ids
//! (`queue-get`), the page pools (`page-pool-get`) and the queue
//! statistics (`qstats-get`).

use crate::netlink::{Genl, NlError, NlResult};
use netlink_bindings::netdev::{self, QueueType};

/// The family's name (`NETDEV_FAMILY_NAME`).
const FAMILY: &str = "netdev";

/// A dma-buf bound to queues; unbound when dropped (its socket closes).
pub struct Binding {
    _sock: Genl,
    /// The binding id the kernel reports in `SCM_DEVMEM_DMABUF`.
    pub id: u32,
}

/// One entry of `bind-rx`'s `queues`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueEntry {
    /// An RX queue by index.
    Rx(u32),
    /// A nest without attributes (the selftest's malformed request, what
    /// upstream's zeroed queue array sends).
    Empty,
}

/// A `bind-rx` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindRx {
    pub ifindex: u32,
    pub dmabuf_fd: u32,
    pub queues: Vec<QueueEntry>,
    /// The size of the buffers the bound queues hand the NIC (Linux 7.3's
    /// `rx-page-size`; older kernels refuse the attribute, so it is sent
    /// only when asked for).
    pub rx_page_size: Option<u32>,
}

impl BindRx {
    /// Binds `dmabuf_fd` to RX queues `queues` of interface `ifindex`.
    pub fn new(ifindex: u32, dmabuf_fd: u32, queues: &[u32]) -> Self {
        BindRx {
            ifindex,
            dmabuf_fd,
            queues: queues.iter().map(|&q| QueueEntry::Rx(q)).collect(),
            rx_page_size: None,
        }
    }

    /// The request as netlink-bindings encodes it.
    pub fn request(&self) -> netdev::OpBindRxDo<'static> {
        let mut request = netdev::Request::new().op_bind_rx_do();
        let mut attrs = request
            .encode()
            .push_ifindex(self.ifindex)
            .push_fd(self.dmabuf_fd);
        for q in &self.queues {
            attrs = match *q {
                QueueEntry::Rx(id) => attrs
                    .nested_queues()
                    .push_id(id)
                    .push_type(QueueType::Rx as u32)
                    .end_nested(),
                QueueEntry::Empty => attrs.nested_queues().end_nested(),
            };
        }
        if let Some(size) = self.rx_page_size {
            attrs = attrs.push_rx_page_size(size);
        }
        // (The encoder borrows the request until it is gone.)
        drop(attrs);
        request
    }

    /// Sends the request on a socket of its own, which keeps the binding.
    pub fn send(&self) -> NlResult<Binding> {
        let mut sock = match Genl::open(FAMILY)? {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        let ids = sock.request(&self.request(), |r| r.get_id().ok())?;
        Ok(ids.and_then(|ids| binding(sock, ids, "bind-rx")))
    }
}

/// The binding a bind request's replies name.
fn binding(sock: Genl, ids: Vec<Option<u32>>, what: &str) -> Result<Binding, NlError> {
    match ids.into_iter().flatten().next() {
        Some(id) => Ok(Binding { _sock: sock, id }),
        None => Err(NlError {
            errno: libc::EPROTO,
            msg: Some(format!("{what} reply without a binding id")),
        }),
    }
}

/// Binds `dmabuf_fd` to RX queues `queues` of interface `ifindex`.
pub fn bind_rx(ifindex: u32, dmabuf_fd: u32, queues: &[u32]) -> NlResult<Binding> {
    BindRx::new(ifindex, dmabuf_fd, queues).send()
}

/// Binds `dmabuf_fd` for sending through interface `ifindex` (`bind-tx`,
/// Linux 7.2+): sends on a socket bound to that interface may then name the
/// binding in `SCM_DEVMEM_DMABUF`.
pub fn bind_tx(ifindex: u32, dmabuf_fd: u32) -> NlResult<Binding> {
    let mut sock = match Genl::open(FAMILY)? {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let mut request = netdev::Request::new().op_bind_tx_do();
    request.encode().push_ifindex(ifindex).push_fd(dmabuf_fd);
    let ids = sock.request(&request, |r| r.get_id().ok())?;
    Ok(ids.and_then(|ids| binding(sock, ids, "bind-tx")))
}

/// Creates an RX queue on virtual device `ifindex` (netkit) leasing RX queue
/// `queue` of physical device `phys_ifindex` (in the namespace this socket's
/// namespace knows by `netns_id`, if given); the new queue's id.
pub fn queue_create_lease(
    ifindex: u32,
    phys_ifindex: u32,
    queue: u32,
    netns_id: Option<i32>,
) -> NlResult<u32> {
    let mut sock = match Genl::open(FAMILY)? {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let mut request = netdev::Request::new().op_queue_create_do();
    let mut lease = request
        .encode()
        .push_ifindex(ifindex)
        .push_type(QueueType::Rx as u32)
        .nested_lease()
        .push_ifindex(phys_ifindex)
        .nested_queue()
        .push_id(queue)
        .push_type(QueueType::Rx as u32)
        .end_nested();
    if let Some(id) = netns_id {
        lease = lease.push_netns_id(id);
    }
    lease.end_nested();
    let ids = sock.request(&request, |r| r.get_id().ok())?;
    Ok(ids.and_then(|ids| {
        ids.into_iter().flatten().next().ok_or(NlError {
            errno: libc::EPROTO,
            msg: Some("queue-create reply without a queue id".into()),
        })
    }))
}

/// An RX queue's id and its NAPI's id, if it has one.
pub type QueueNapi = (u32, Option<u32>);

/// The RX queues of device `ifindex` and their NAPI ids (`queue-get` dump),
/// in the kernel's order.
pub fn rx_queue_napis(ifindex: u32) -> NlResult<Vec<QueueNapi>> {
    let mut sock = match Genl::open(FAMILY)? {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let mut request = netdev::Request::new().op_queue_get_dump();
    request.encode().push_ifindex(ifindex);
    let queues = sock.request(&request, |q| {
        let rx = q.get_type().ok() == Some(QueueType::Rx as u32);
        let id = q.get_id().ok().filter(|_| rx)?;
        Some((id, q.get_napi_id().ok()))
    })?;
    Ok(queues.map(|q| q.into_iter().flatten().collect()))
}

/// One object of `qstats-get`: the device's totals, or one queue's
/// (`("rx" | "tx", id)`), with the fields the driver reports, by their
/// spec names ("rx-packets", ...), in the spec's order. (Counters as
/// netlink-bindings 0.3.5 reads them: their low 32 bits.)
#[derive(Debug, PartialEq, Eq, Default)]
pub struct Qstats {
    pub queue: Option<(&'static str, u32)>,
    pub fields: Vec<(&'static str, u32)>,
}

/// The qstats of `ifindex`: its totals, or (`per_queue`) each queue's.
pub fn qstats(ifindex: u32, per_queue: bool) -> NlResult<Vec<Qstats>> {
    let mut sock = match Genl::open(FAMILY)? {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let mut request = netdev::Request::new().op_qstats_get_dump();
    {
        let enc = request.encode().push_ifindex(ifindex);
        if per_queue {
            // NETDEV_QSTATS_SCOPE_QUEUE
            enc.push_scope(1);
        }
    }
    sock.request(&request, |q| {
        let queue = q.get_queue_id().ok().map(|id| {
            let kind = if q.get_queue_type().ok() == Some(QueueType::Tx as u32) {
                "tx"
            } else {
                "rx"
            };
            (kind, id)
        });
        let all = [
            ("rx-packets", q.get_rx_packets()),
            ("rx-bytes", q.get_rx_bytes()),
            ("tx-packets", q.get_tx_packets()),
            ("tx-bytes", q.get_tx_bytes()),
            ("rx-alloc-fail", q.get_rx_alloc_fail()),
            ("rx-hw-drops", q.get_rx_hw_drops()),
            ("rx-hw-drop-overruns", q.get_rx_hw_drop_overruns()),
            ("rx-csum-complete", q.get_rx_csum_complete()),
            ("rx-csum-unnecessary", q.get_rx_csum_unnecessary()),
            ("rx-csum-none", q.get_rx_csum_none()),
            ("rx-csum-bad", q.get_rx_csum_bad()),
            ("rx-hw-gro-packets", q.get_rx_hw_gro_packets()),
            ("rx-hw-gro-bytes", q.get_rx_hw_gro_bytes()),
            ("rx-hw-gro-wire-packets", q.get_rx_hw_gro_wire_packets()),
            ("rx-hw-gro-wire-bytes", q.get_rx_hw_gro_wire_bytes()),
            ("rx-hw-drop-ratelimits", q.get_rx_hw_drop_ratelimits()),
            ("tx-hw-drops", q.get_tx_hw_drops()),
            ("tx-hw-drop-errors", q.get_tx_hw_drop_errors()),
            ("tx-csum-none", q.get_tx_csum_none()),
            ("tx-needs-csum", q.get_tx_needs_csum()),
            ("tx-hw-gso-packets", q.get_tx_hw_gso_packets()),
            ("tx-hw-gso-bytes", q.get_tx_hw_gso_bytes()),
            ("tx-hw-gso-wire-packets", q.get_tx_hw_gso_wire_packets()),
            ("tx-hw-gso-wire-bytes", q.get_tx_hw_gso_wire_bytes()),
            ("tx-hw-drop-ratelimits", q.get_tx_hw_drop_ratelimits()),
            ("tx-stop", q.get_tx_stop()),
            ("tx-wake", q.get_tx_wake()),
        ];
        Qstats {
            queue,
            fields: all
                .into_iter()
                .filter_map(|(name, v)| v.ok().map(|v| (name, v)))
                .collect(),
        }
    })
}

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

impl PagePoolInfo {
    /// Reads one `page-pool-get` object. (netlink-bindings 0.3.5 reads the
    /// spec's variable-width `uint` counters as `u32`: their low half on
    /// this little-endian machine, exact below 4 Gi.)
    pub fn from_reply(p: &netdev::IterablePagePool<'_>) -> Self {
        PagePoolInfo {
            id: p.get_id().map_or(0, u64::from),
            ifindex: p.get_ifindex().ok(),
            inflight: p.get_inflight().map_or(0, u64::from),
            inflight_mem: p.get_inflight_mem().map_or(0, u64::from),
            detached: p.get_detach_time().is_ok(),
            dmabuf: p.get_dmabuf().ok(),
        }
    }
}

/// The page pools of this network namespace's devices.
pub fn page_pools() -> NlResult<Vec<PagePoolInfo>> {
    let mut sock = match Genl::open(FAMILY)? {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let request = netdev::Request::new().op_page_pool_get_dump();
    sock.request(&request, |p| PagePoolInfo::from_reply(&p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_bindings::traits::NetlinkRequest;

    use crate::netlink::test_wire::{nla, nla_u32};

    /// The request on the wire, checked against include/uapi/linux/netdev.h
    /// (7.3): NETDEV_CMD_BIND_RX 13, NETDEV_A_DMABUF_IFINDEX 1, _QUEUES 2
    /// (nested: NETDEV_A_QUEUE_ID 1, NETDEV_A_QUEUE_TYPE 3, RX 0), _FD 3,
    /// _RX_PAGE_SIZE 5. netlink-bindings lists netdev as "testing needed".
    #[test]
    fn bind_rx_request_bytes() {
        let mut bind = BindRx::new(7, 5, &[8]);
        bind.rx_page_size = Some(16384);
        let request = bind.request();
        let mut want = vec![13, 1, 0, 0];
        want.extend(nla_u32(1, 7));
        want.extend(nla_u32(3, 5));
        want.extend(nla(20, 2 | 0x8000));
        want.extend(nla_u32(1, 8));
        want.extend(nla_u32(3, 0));
        want.extend(nla_u32(5, 16384));
        assert_eq!(request.payload(), &want[..]);
    }

    #[test]
    fn bind_rx_queue_entries() {
        let request = BindRx::new(7, 5, &[8, 9]).request();
        let a = netdev::OpBindRxDo::decode_request(request.payload());
        assert_eq!(a.get_ifindex().unwrap(), 7);
        assert_eq!(a.get_fd().unwrap(), 5);
        assert!(a.get_rx_page_size().is_err());
        // (netlink-bindings 0.3.5's `get_queues()` stops at the first other
        // attribute: walk the attributes instead.)
        let queues: Vec<(u32, u32)> = a
            .filter_map(|attr| match attr {
                Ok(netdev::Dmabuf::Queues(q)) => Some((q.get_id().unwrap(), q.get_type().unwrap())),
                _ => None,
            })
            .collect();
        assert_eq!(queues, vec![(8, 0), (9, 0)]);
        // Empty entries are nests of 4 bytes; no queues, no nest.
        let mut empty = BindRx::new(7, 5, &[]);
        assert_eq!(empty.request().payload().len(), 4 + 8 + 8);
        empty.queues = vec![QueueEntry::Empty; 2];
        let payload = empty.request().payload().to_vec();
        assert_eq!(payload.len(), 4 + 8 + 8 + 2 * 4);
        assert_eq!(&payload[20..24], &nla(4, 2 | 0x8000)[..]);
    }

    #[test]
    fn queue_lease_request_nests() {
        let mut request = netdev::Request::new().op_queue_create_do();
        request
            .encode()
            .push_ifindex(4)
            .nested_lease()
            .push_ifindex(2)
            .nested_queue()
            .push_id(15)
            .end_nested()
            .push_netns_id(-1)
            .end_nested();
        let a = netdev::OpQueueCreateDo::decode_request(request.payload());
        let lease = a.get_lease().unwrap();
        assert_eq!(lease.get_ifindex().unwrap(), 2);
        assert_eq!(lease.get_queue().unwrap().get_id().unwrap(), 15);
        assert_eq!(lease.get_netns_id().unwrap(), -1);
    }

    #[test]
    fn page_pool_object() {
        let mut buf = Vec::new();
        netdev::PushPagePool::new(&mut buf)
            .push_id(7)
            .push_ifindex(3)
            .push_inflight(12)
            .push_inflight_mem(49152)
            .push_dmabuf(2);
        let p = PagePoolInfo::from_reply(&netdev::PagePool::new(&buf));
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
        let mut buf = Vec::new();
        netdev::PushPagePool::new(&mut buf)
            .push_id(9)
            .push_detach_time(100);
        let q = PagePoolInfo::from_reply(&netdev::PagePool::new(&buf));
        assert!(q.detached && q.ifindex.is_none() && q.id == 9);
    }
}
