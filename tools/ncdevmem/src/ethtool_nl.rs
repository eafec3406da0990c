//! The ethtool generic netlink family, as far as ncdevmem-rs needs it: ring
//! parameters (tcp-data-split, i.e. header split, and the HDS threshold),
//! channel counts, and the RSS indirection table on kernels that can set it
//! (`ETHTOOL_MSG_RSS_SET`, Linux 6.17+; older ones use `SIOCETHTOOL`).

use crate::netlink::{Genl, NlError, NlResult};
use netlink_bindings::ethtool::{self, TcpDataSplit};

/// `ETHTOOL_GENL_NAME`.
const FAMILY: &str = "ethtool";

/// The family's request ids (`ETHTOOL_MSG_*`), numbered by build.rs from
/// the YNL spec: netlink-bindings 0.3.5 numbers them wrong (from rings-get
/// on, it counts the notifications too), so each request built with it has
/// its command set from here.
pub mod requests {
    include!(concat!(env!("OUT_DIR"), "/ethtool_requests.rs"));
}

/// The state of header split (`tcp-data-split`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataSplit {
    /// Unknown, or "auto" when setting.
    Unknown,
    Disabled,
    Enabled,
}

impl DataSplit {
    pub fn from_u8(v: u8) -> Self {
        match TcpDataSplit::from_value(v.into()) {
            Some(TcpDataSplit::Disabled) => DataSplit::Disabled,
            Some(TcpDataSplit::Enabled) => DataSplit::Enabled,
            _ => DataSplit::Unknown,
        }
    }

    pub fn to_u8(self) -> u8 {
        (match self {
            DataSplit::Unknown => TcpDataSplit::Unknown,
            DataSplit::Disabled => TcpDataSplit::Disabled,
            DataSplit::Enabled => TcpDataSplit::Enabled,
        }) as u8
    }

    /// `on` / `off` / `auto`, as `ethtool -G` spells it.
    pub fn name(self) -> &'static str {
        match self {
            DataSplit::Unknown => "auto",
            DataSplit::Disabled => "off",
            DataSplit::Enabled => "on",
        }
    }
}

/// What `ETHTOOL_MSG_RINGS_GET` reports (the parts ncdevmem-rs looks at).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rings {
    pub rx: Option<u32>,
    pub rx_max: Option<u32>,
    pub tx: Option<u32>,
    pub tx_max: Option<u32>,
    /// Absent when the driver does not report it.
    pub tcp_data_split: Option<u8>,
    /// Header-split threshold and its maximum (Linux 6.13+).
    pub hds_thresh: Option<u32>,
    pub hds_thresh_max: Option<u32>,
}

impl Rings {
    /// Reads a rings reply.
    pub fn from_reply(r: &ethtool::IterableRings<'_>) -> Self {
        Rings {
            rx: r.get_rx().ok(),
            rx_max: r.get_rx_max().ok(),
            tx: r.get_tx().ok(),
            tx_max: r.get_tx_max().ok(),
            tcp_data_split: r.get_tcp_data_split().ok(),
            hds_thresh: r.get_hds_thresh().ok(),
            hds_thresh_max: r.get_hds_thresh_max().ok(),
        }
    }
}

/// Channel counts and maxima (`ethtool -l`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Channels {
    pub rx_max: u32,
    pub tx_max: u32,
    pub other_max: u32,
    pub combined_max: u32,
    pub rx: u32,
    pub tx: u32,
    pub other: u32,
    pub combined: u32,
}

impl Channels {
    /// How many RX queues the device has (`real_num_rx_queues` for drivers
    /// that map one queue per RX or combined channel).
    pub fn rx_queues(&self) -> u32 {
        self.rx + self.combined
    }

    /// Reads a channels reply; absent counts are 0.
    pub fn from_reply(c: &ethtool::IterableChannels<'_>) -> Self {
        Channels {
            rx_max: c.get_rx_max().unwrap_or(0),
            tx_max: c.get_tx_max().unwrap_or(0),
            other_max: c.get_other_max().unwrap_or(0),
            combined_max: c.get_combined_max().unwrap_or(0),
            rx: c.get_rx_count().unwrap_or(0),
            tx: c.get_tx_count().unwrap_or(0),
            other: c.get_other_count().unwrap_or(0),
            combined: c.get_combined_count().unwrap_or(0),
        }
    }
}

/// A channels change: only the counts given are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelsSet {
    pub rx: Option<u32>,
    pub tx: Option<u32>,
    pub other: Option<u32>,
    pub combined: Option<u32>,
}

impl ChannelsSet {
    /// The request that sets every count back to those of `c`.
    pub fn all_of(c: &Channels) -> Self {
        ChannelsSet {
            rx: Some(c.rx),
            tx: Some(c.tx),
            other: Some(c.other),
            combined: Some(c.combined),
        }
    }

    /// The `ETHTOOL_MSG_CHANNELS_SET` request for device `ifindex`.
    pub fn request(&self, ifindex: u32) -> ethtool::OpChannelsSetDo<'static> {
        let mut request = ethtool::Request::new().op_channels_set_do();
        request.header_mut().cmd = requests::CHANNELS_SET;
        let mut attrs = request
            .encode()
            .nested_header()
            .push_dev_index(ifindex)
            .end_nested();
        if let Some(v) = self.rx {
            attrs = attrs.push_rx_count(v);
        }
        if let Some(v) = self.tx {
            attrs = attrs.push_tx_count(v);
        }
        if let Some(v) = self.other {
            attrs = attrs.push_other_count(v);
        }
        if let Some(v) = self.combined {
            attrs = attrs.push_combined_count(v);
        }
        // (The encoder borrows the request until it is gone.)
        drop(attrs);
        request
    }
}

/// An `ETHTOOL_MSG_RINGS_SET` request for device `ifindex` changing what
/// `set` puts.
pub fn rings_set(
    ifindex: u32,
    set: impl FnOnce(ethtool::PushRings<&mut Vec<u8>>),
) -> ethtool::OpRingsSetDo<'static> {
    let mut request = ethtool::Request::new().op_rings_set_do();
    request.header_mut().cmd = requests::RINGS_SET;
    set(request
        .encode()
        .nested_header()
        .push_dev_index(ifindex)
        .end_nested());
    request
}

/// The one reply of a get request.
fn one<T>(replies: Vec<T>) -> Result<T, NlError> {
    replies.into_iter().next().ok_or(NlError {
        errno: libc::EPROTO,
        msg: Some("ethtool reply missing".into()),
    })
}

/// A socket talking to the ethtool family.
pub struct EthtoolNl {
    sock: Genl,
}

impl EthtoolNl {
    /// Opens a socket and resolves the family.
    pub fn open() -> NlResult<Self> {
        Ok(Genl::open(FAMILY)?.map(|sock| EthtoolNl { sock }))
    }

    pub fn rings(&mut self, ifindex: u32) -> NlResult<Rings> {
        let mut request = ethtool::Request::new().op_rings_get_do();
        request.header_mut().cmd = requests::RINGS_GET;
        request.encode().nested_header().push_dev_index(ifindex);
        Ok(self
            .sock
            .request(&request, |r| Rings::from_reply(&r))?
            .and_then(one))
    }

    /// Sets the header-split threshold (`ethtool -G hds-thresh`).
    pub fn set_hds_thresh(&mut self, ifindex: u32, thresh: u32) -> NlResult<()> {
        self.sock.ack(&rings_set(ifindex, |r| {
            r.push_hds_thresh(thresh);
        }))
    }

    pub fn set_data_split(&mut self, ifindex: u32, split: DataSplit) -> NlResult<()> {
        self.sock.ack(&rings_set(ifindex, |r| {
            r.push_tcp_data_split(split.to_u8());
        }))
    }

    pub fn channels(&mut self, ifindex: u32) -> NlResult<Channels> {
        let mut request = ethtool::Request::new().op_channels_get_do();
        request.header_mut().cmd = requests::CHANNELS_GET;
        request.encode().nested_header().push_dev_index(ifindex);
        Ok(self
            .sock
            .request(&request, |c| Channels::from_reply(&c))?
            .and_then(one))
    }

    pub fn set_channels(&mut self, ifindex: u32, c: &ChannelsSet) -> NlResult<()> {
        self.sock.ack(&c.request(ifindex))
    }

    /// Whether this kernel sets the RSS indirection table over netlink
    /// (`ETHTOOL_MSG_RSS_SET`, Linux 6.17+).
    pub fn can_set_rss(&self) -> bool {
        self.sock.has_op(requests::RSS_SET)
    }

    /// The RSS indirection table of the default context (empty if the
    /// device has none).
    pub fn rss_indir(&mut self, ifindex: u32) -> NlResult<Vec<u32>> {
        let mut request = ethtool::Request::new().op_rss_get_do();
        request.header_mut().cmd = requests::RSS_GET;
        request.encode().nested_header().push_dev_index(ifindex);
        Ok(self
            .sock
            .request(&request, |r| indir_table(r.get_indir().unwrap_or(&[])))?
            .and_then(one))
    }

    /// Sets the default context's RSS indirection table; an empty one resets
    /// it to the driver's default.
    pub fn set_rss_indir(&mut self, ifindex: u32, table: &[u32]) -> NlResult<()> {
        self.sock.ack(&rss_set_indir(ifindex, table))
    }
}

/// The `ETHTOOL_MSG_RSS_SET` request setting the indirection table.
pub fn rss_set_indir(ifindex: u32, table: &[u32]) -> ethtool::OpRssSetDo<'static> {
    let entries: Vec<u8> = table.iter().flat_map(|q| q.to_ne_bytes()).collect();
    let mut request = ethtool::Request::new().op_rss_set_do();
    request.header_mut().cmd = requests::RSS_SET;
    request
        .encode()
        .nested_header()
        .push_dev_index(ifindex)
        .end_nested()
        .push_indir(&entries);
    request
}

/// `ETHTOOL_A_RSS_INDIR`: the table as `u32`s in host order.
fn indir_table(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|q| u32::from_ne_bytes([q[0], q[1], q[2], q[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_bindings::traits::NetlinkRequest;

    use crate::netlink::test_wire::{nla, nla_u32};

    fn payload(request: &impl NetlinkRequest) -> &[u8] {
        request.payload()
    }

    /// The requests on the wire, checked against
    /// include/uapi/linux/ethtool_netlink.h (6.12 and 7.3 agree):
    /// ETHTOOL_MSG_RINGS_SET 16, ETHTOOL_A_RINGS_HEADER 1 (nested:
    /// ETHTOOL_A_HEADER_DEV_INDEX 1), ETHTOOL_A_RINGS_TCP_DATA_SPLIT 11 (u8,
    /// ETHTOOL_TCP_DATA_SPLIT_ENABLED 2), ETHTOOL_A_RINGS_HDS_THRESH 17.
    /// netlink-bindings lists ethtool as "testing needed".
    #[test]
    fn rings_set_request_bytes() {
        let request = rings_set(3, |r| {
            r.push_tcp_data_split(DataSplit::Enabled.to_u8());
        });
        let mut want = vec![16, 1, 0, 0];
        want.extend(nla(12, 1 | 0x8000));
        want.extend(nla_u32(1, 3));
        // A u8 attribute, its padding left to the message's end.
        want.extend(nla(5, 11));
        want.push(2);
        assert_eq!(payload(&request), &want[..]);
        let request = rings_set(3, |r| {
            r.push_hds_thresh(256);
        });
        assert_eq!(&payload(&request)[16..], &nla_u32(17, 256)[..]);
    }

    /// ETHTOOL_MSG_CHANNELS_SET 18; ETHTOOL_A_CHANNELS_RX_COUNT 6, TX 7,
    /// OTHER 8, COMBINED 9.
    #[test]
    fn channels_set_sends_only_given_counts() {
        let request = ChannelsSet {
            rx: Some(4),
            combined: Some(0),
            ..Default::default()
        }
        .request(9);
        let mut want = vec![18, 1, 0, 0];
        want.extend(nla(12, 1 | 0x8000));
        want.extend(nla_u32(1, 9));
        want.extend(nla_u32(6, 4));
        want.extend(nla_u32(9, 0));
        assert_eq!(payload(&request), &want[..]);
        let all = ChannelsSet::all_of(&Channels {
            rx: 1,
            tx: 2,
            other: 3,
            combined: 4,
            ..Default::default()
        })
        .request(9);
        let a = ethtool::OpChannelsSetDo::decode_request(payload(&all));
        assert_eq!(
            (
                a.get_rx_count().unwrap(),
                a.get_tx_count().unwrap(),
                a.get_other_count().unwrap(),
                a.get_combined_count().unwrap()
            ),
            (1, 2, 3, 4)
        );
    }

    /// ETHTOOL_MSG_RSS_SET 48 (7.3), ETHTOOL_A_RSS_HEADER 1,
    /// ETHTOOL_A_RSS_INDIR 4 (binary, u32 entries); a table of no entries
    /// resets it.
    #[test]
    fn rss_set_request_bytes() {
        let request = rss_set_indir(2, &[0, 1]);
        let mut want = vec![48, 1, 0, 0];
        want.extend(nla(12, 1 | 0x8000));
        want.extend(nla_u32(1, 2));
        want.extend(nla(12, 4));
        want.extend(0u32.to_ne_bytes());
        want.extend(1u32.to_ne_bytes());
        assert_eq!(payload(&request), &want[..]);
        let reset = rss_set_indir(2, &[]);
        assert_eq!(&payload(&reset)[16..], &nla(4, 4)[..]);
        assert_eq!(indir_table(&want[20..]), vec![0, 1]);
    }

    #[test]
    fn parses_replies() {
        // A reply as the kernel builds it: header nest first, then values.
        let mut buf = Vec::new();
        ethtool::PushRings::new(&mut buf)
            .nested_header()
            .push_dev_index(5)
            .end_nested()
            .push_rx_max(4096)
            .push_tx_max(2048)
            .push_rx(1024)
            .push_tx(512)
            .push_tcp_data_split(DataSplit::Disabled.to_u8())
            .push_hds_thresh(256)
            .push_hds_thresh_max(4096);
        let r = Rings::from_reply(&ethtool::Rings::new(&buf));
        assert_eq!(
            r,
            Rings {
                rx: Some(1024),
                rx_max: Some(4096),
                tx: Some(512),
                tx_max: Some(2048),
                tcp_data_split: Some(1),
                hds_thresh: Some(256),
                hds_thresh_max: Some(4096),
            }
        );
        assert_eq!(
            DataSplit::from_u8(r.tcp_data_split.unwrap()),
            DataSplit::Disabled
        );
        let mut bare = Vec::new();
        ethtool::PushRings::new(&mut bare)
            .nested_header()
            .push_dev_index(5);
        assert_eq!(
            Rings::from_reply(&ethtool::Rings::new(&bare)).tcp_data_split,
            None
        );

        let mut buf = Vec::new();
        ethtool::PushChannels::new(&mut buf)
            .push_rx_max(16)
            .push_tx_max(16)
            .push_combined_max(0)
            .push_rx_count(16)
            .push_tx_count(8);
        let ch = Channels::from_reply(&ethtool::Channels::new(&buf));
        assert_eq!(
            (ch.rx_max, ch.tx_max, ch.rx, ch.tx, ch.combined),
            (16, 16, 16, 8, 0)
        );
        assert_eq!(ch.rx_queues(), 16);
    }

    /// The ids build.rs numbered against the C header's, for the requests
    /// used here that the host's <linux/ethtool_netlink.h> (6.1) has.
    #[test]
    fn request_ids_match_the_c_header() {
        crate::c_headers::check(
            &["linux/ethtool_netlink.h"],
            &[
                ("ETHTOOL_MSG_RINGS_GET", requests::RINGS_GET.into()),
                ("ETHTOOL_MSG_RINGS_SET", requests::RINGS_SET.into()),
                ("ETHTOOL_MSG_CHANNELS_GET", requests::CHANNELS_GET.into()),
                ("ETHTOOL_MSG_CHANNELS_SET", requests::CHANNELS_SET.into()),
                ("ETHTOOL_MSG_PSE_GET", requests::PSE_GET.into()),
                ("ETHTOOL_MSG_USER_MAX", requests::PSE_SET.into()),
            ],
        );
    }

    #[test]
    fn data_split_round_trips() {
        for d in [DataSplit::Unknown, DataSplit::Disabled, DataSplit::Enabled] {
            assert_eq!(DataSplit::from_u8(d.to_u8()), d);
        }
        assert_eq!(DataSplit::from_u8(7), DataSplit::Unknown);
        assert_eq!(DataSplit::Enabled.name(), "on");
    }
}
