//! The ethtool generic netlink family, as far as ncdevmem-rs needs it: ring
//! parameters (tcp-data-split, i.e. header split) and channel counts.
//!
//! Numbers from include/uapi/linux/ethtool_netlink.h (Linux 6.12); the tests
//! check them against values printed by a C program built on that header.

use crate::netlink::{find_attr, get_u32, get_u8, put_nested, put_u32, put_u8, GenlSocket};
use crate::netlink::{NlError, Reply};
use std::io;

/// `ETHTOOL_GENL_NAME`, `ETHTOOL_GENL_VERSION`.
pub const FAMILY: &str = "ethtool";
pub const VERSION: u8 = 1;

pub const ETHTOOL_MSG_RINGS_GET: u8 = 15;
pub const ETHTOOL_MSG_RINGS_SET: u8 = 16;
pub const ETHTOOL_MSG_CHANNELS_GET: u8 = 17;
pub const ETHTOOL_MSG_CHANNELS_SET: u8 = 18;
/// Kernel-to-user message ids of the replies.
pub const ETHTOOL_MSG_RINGS_GET_REPLY: u8 = 16;
pub const ETHTOOL_MSG_CHANNELS_GET_REPLY: u8 = 18;

pub const ETHTOOL_A_HEADER_DEV_INDEX: u16 = 1;
pub const ETHTOOL_A_HEADER_DEV_NAME: u16 = 2;

pub const ETHTOOL_A_RINGS_HEADER: u16 = 1;
pub const ETHTOOL_A_RINGS_RX_MAX: u16 = 2;
pub const ETHTOOL_A_RINGS_TX_MAX: u16 = 5;
pub const ETHTOOL_A_RINGS_RX: u16 = 6;
pub const ETHTOOL_A_RINGS_TX: u16 = 9;
pub const ETHTOOL_A_RINGS_TCP_DATA_SPLIT: u16 = 11;
pub const ETHTOOL_A_RINGS_HDS_THRESH: u16 = 17;
pub const ETHTOOL_A_RINGS_HDS_THRESH_MAX: u16 = 18;

pub const ETHTOOL_TCP_DATA_SPLIT_UNKNOWN: u8 = 0;
pub const ETHTOOL_TCP_DATA_SPLIT_DISABLED: u8 = 1;
pub const ETHTOOL_TCP_DATA_SPLIT_ENABLED: u8 = 2;

pub const ETHTOOL_A_CHANNELS_HEADER: u16 = 1;
pub const ETHTOOL_A_CHANNELS_RX_MAX: u16 = 2;
pub const ETHTOOL_A_CHANNELS_TX_MAX: u16 = 3;
pub const ETHTOOL_A_CHANNELS_OTHER_MAX: u16 = 4;
pub const ETHTOOL_A_CHANNELS_COMBINED_MAX: u16 = 5;
pub const ETHTOOL_A_CHANNELS_RX_COUNT: u16 = 6;
pub const ETHTOOL_A_CHANNELS_TX_COUNT: u16 = 7;
pub const ETHTOOL_A_CHANNELS_OTHER_COUNT: u16 = 8;
pub const ETHTOOL_A_CHANNELS_COMBINED_COUNT: u16 = 9;

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
        match v {
            ETHTOOL_TCP_DATA_SPLIT_DISABLED => DataSplit::Disabled,
            ETHTOOL_TCP_DATA_SPLIT_ENABLED => DataSplit::Enabled,
            _ => DataSplit::Unknown,
        }
    }

    pub fn to_u8(self) -> u8 {
        match self {
            DataSplit::Unknown => ETHTOOL_TCP_DATA_SPLIT_UNKNOWN,
            DataSplit::Disabled => ETHTOOL_TCP_DATA_SPLIT_DISABLED,
            DataSplit::Enabled => ETHTOOL_TCP_DATA_SPLIT_ENABLED,
        }
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
}

/// The request header nest: the device by index.
pub fn header(kind: u16, ifindex: u32) -> Vec<u8> {
    let mut inner = Vec::new();
    put_u32(&mut inner, ETHTOOL_A_HEADER_DEV_INDEX, ifindex);
    let mut a = Vec::new();
    put_nested(&mut a, kind, &inner);
    a
}

/// Attributes of `ETHTOOL_MSG_RINGS_GET` and `ETHTOOL_MSG_CHANNELS_GET`.
pub fn get_attrs(ifindex: u32) -> Vec<u8> {
    // Both families' header attribute is 1.
    header(ETHTOOL_A_RINGS_HEADER, ifindex)
}

/// Attributes of `ETHTOOL_MSG_RINGS_SET` changing only tcp-data-split.
pub fn rings_set_split_attrs(ifindex: u32, split: DataSplit) -> Vec<u8> {
    let mut a = header(ETHTOOL_A_RINGS_HEADER, ifindex);
    put_u8(&mut a, ETHTOOL_A_RINGS_TCP_DATA_SPLIT, split.to_u8());
    a
}

/// Attributes of `ETHTOOL_MSG_RINGS_SET` changing only the header-split threshold.
pub fn rings_set_hds_thresh_attrs(ifindex: u32, thresh: u32) -> Vec<u8> {
    let mut a = header(ETHTOOL_A_RINGS_HEADER, ifindex);
    put_u32(&mut a, ETHTOOL_A_RINGS_HDS_THRESH, thresh);
    a
}

/// Attributes of `ETHTOOL_MSG_CHANNELS_SET`.
pub fn channels_set_attrs(ifindex: u32, c: &ChannelsSet) -> Vec<u8> {
    let mut a = header(ETHTOOL_A_CHANNELS_HEADER, ifindex);
    for (kind, v) in [
        (ETHTOOL_A_CHANNELS_RX_COUNT, c.rx),
        (ETHTOOL_A_CHANNELS_TX_COUNT, c.tx),
        (ETHTOOL_A_CHANNELS_OTHER_COUNT, c.other),
        (ETHTOOL_A_CHANNELS_COMBINED_COUNT, c.combined),
    ] {
        if let Some(v) = v {
            put_u32(&mut a, kind, v);
        }
    }
    a
}

/// Parses the attributes of a rings reply.
pub fn parse_rings(a: &[u8]) -> Rings {
    let u = |k| find_attr(a, k).and_then(get_u32);
    Rings {
        rx: u(ETHTOOL_A_RINGS_RX),
        rx_max: u(ETHTOOL_A_RINGS_RX_MAX),
        tx: u(ETHTOOL_A_RINGS_TX),
        tx_max: u(ETHTOOL_A_RINGS_TX_MAX),
        tcp_data_split: find_attr(a, ETHTOOL_A_RINGS_TCP_DATA_SPLIT).and_then(get_u8),
        hds_thresh: u(ETHTOOL_A_RINGS_HDS_THRESH),
        hds_thresh_max: u(ETHTOOL_A_RINGS_HDS_THRESH_MAX),
    }
}

/// Parses the attributes of a channels reply; absent counts are 0.
pub fn parse_channels(a: &[u8]) -> Channels {
    let u = |k| find_attr(a, k).and_then(get_u32).unwrap_or(0);
    Channels {
        rx_max: u(ETHTOOL_A_CHANNELS_RX_MAX),
        tx_max: u(ETHTOOL_A_CHANNELS_TX_MAX),
        other_max: u(ETHTOOL_A_CHANNELS_OTHER_MAX),
        combined_max: u(ETHTOOL_A_CHANNELS_COMBINED_MAX),
        rx: u(ETHTOOL_A_CHANNELS_RX_COUNT),
        tx: u(ETHTOOL_A_CHANNELS_TX_COUNT),
        other: u(ETHTOOL_A_CHANNELS_OTHER_COUNT),
        combined: u(ETHTOOL_A_CHANNELS_COMBINED_COUNT),
    }
}

/// A socket talking to the ethtool family.
pub struct EthtoolNl {
    sock: GenlSocket,
    family: u16,
}

type NlResult<T> = io::Result<Result<T, NlError>>;

impl EthtoolNl {
    /// Opens a socket and resolves the family.
    pub fn open() -> NlResult<Self> {
        let mut sock = GenlSocket::open()?;
        Ok(sock
            .resolve(FAMILY)?
            .map(|family| EthtoolNl { sock, family }))
    }

    fn get(&mut self, cmd: u8, ifindex: u32) -> NlResult<Vec<u8>> {
        Ok(self
            .sock
            .request(self.family, cmd, VERSION, &get_attrs(ifindex))?
            .and_then(|r| {
                r.into_iter()
                    .find_map(|r| match r {
                        Reply::Data(d) => Some(d),
                        Reply::Ack => None,
                    })
                    .ok_or(NlError {
                        errno: libc::EPROTO,
                        msg: Some("ethtool reply missing".into()),
                    })
            }))
    }

    fn set(&mut self, cmd: u8, attrs: &[u8]) -> NlResult<()> {
        Ok(self
            .sock
            .request(self.family, cmd, VERSION, attrs)?
            .map(|_| ()))
    }

    pub fn rings(&mut self, ifindex: u32) -> NlResult<Rings> {
        Ok(self
            .get(ETHTOOL_MSG_RINGS_GET, ifindex)?
            .map(|a| parse_rings(&a)))
    }

    /// Sets the header-split threshold (`ethtool -G hds-thresh`).
    pub fn set_hds_thresh(&mut self, ifindex: u32, thresh: u32) -> NlResult<()> {
        self.set(
            ETHTOOL_MSG_RINGS_SET,
            &rings_set_hds_thresh_attrs(ifindex, thresh),
        )
    }

    pub fn set_data_split(&mut self, ifindex: u32, split: DataSplit) -> NlResult<()> {
        self.set(
            ETHTOOL_MSG_RINGS_SET,
            &rings_set_split_attrs(ifindex, split),
        )
    }

    pub fn channels(&mut self, ifindex: u32) -> NlResult<Channels> {
        Ok(self
            .get(ETHTOOL_MSG_CHANNELS_GET, ifindex)?
            .map(|a| parse_channels(&a)))
    }

    pub fn set_channels(&mut self, ifindex: u32, c: &ChannelsSet) -> NlResult<()> {
        self.set(ETHTOOL_MSG_CHANNELS_SET, &channels_set_attrs(ifindex, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::{attrs, genl_msg, put_attr};

    /// Values printed by a C program built against the 6.12 uapi headers
    /// (include/uapi/linux/ethtool_netlink.h); identical for the host's
    /// /usr/include/linux/ethtool_netlink.h.
    #[test]
    fn constants_match_uapi() {
        assert_eq!(ETHTOOL_MSG_RINGS_GET, 15);
        assert_eq!(ETHTOOL_MSG_RINGS_SET, 16);
        assert_eq!(ETHTOOL_MSG_CHANNELS_GET, 17);
        assert_eq!(ETHTOOL_MSG_CHANNELS_SET, 18);
        assert_eq!(ETHTOOL_MSG_RINGS_GET_REPLY, 16);
        assert_eq!(ETHTOOL_MSG_CHANNELS_GET_REPLY, 18);
        assert_eq!(
            (ETHTOOL_A_HEADER_DEV_INDEX, ETHTOOL_A_HEADER_DEV_NAME),
            (1, 2)
        );
        assert_eq!(ETHTOOL_A_RINGS_HEADER, 1);
        assert_eq!(ETHTOOL_A_RINGS_RX_MAX, 2);
        assert_eq!(ETHTOOL_A_RINGS_RX, 6);
        assert_eq!(ETHTOOL_A_RINGS_TX, 9);
        assert_eq!(ETHTOOL_A_RINGS_TCP_DATA_SPLIT, 11);
        assert_eq!(
            (
                ETHTOOL_TCP_DATA_SPLIT_UNKNOWN,
                ETHTOOL_TCP_DATA_SPLIT_DISABLED,
                ETHTOOL_TCP_DATA_SPLIT_ENABLED
            ),
            (0, 1, 2)
        );
        assert_eq!(
            [
                ETHTOOL_A_CHANNELS_HEADER,
                ETHTOOL_A_CHANNELS_RX_MAX,
                ETHTOOL_A_CHANNELS_TX_MAX,
                ETHTOOL_A_CHANNELS_OTHER_MAX,
                ETHTOOL_A_CHANNELS_COMBINED_MAX,
                ETHTOOL_A_CHANNELS_RX_COUNT,
                ETHTOOL_A_CHANNELS_TX_COUNT,
                ETHTOOL_A_CHANNELS_OTHER_COUNT,
                ETHTOOL_A_CHANNELS_COMBINED_COUNT
            ],
            [1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
    }

    fn ne16(v: u16) -> [u8; 2] {
        v.to_ne_bytes()
    }

    #[test]
    fn rings_set_message_is_byte_exact() {
        let m = genl_msg(
            0x1a,
            ETHTOOL_MSG_RINGS_SET,
            1,
            7,
            &rings_set_split_attrs(3, DataSplit::Enabled),
        );
        let mut want = Vec::new();
        // struct nlmsghdr: len 40, type = family, flags REQUEST|ACK, seq 7, pid 0.
        want.extend_from_slice(&40u32.to_ne_bytes());
        want.extend_from_slice(&ne16(0x1a));
        want.extend_from_slice(&ne16(0x0005));
        want.extend_from_slice(&7u32.to_ne_bytes());
        want.extend_from_slice(&0u32.to_ne_bytes());
        // struct genlmsghdr: cmd 16, version 1, reserved.
        want.extend_from_slice(&[16, 1, 0, 0]);
        // ETHTOOL_A_RINGS_HEADER | NLA_F_NESTED, len 12 { DEV_INDEX len 8 = 3 }.
        want.extend_from_slice(&ne16(12));
        want.extend_from_slice(&ne16(0x8001));
        want.extend_from_slice(&ne16(8));
        want.extend_from_slice(&ne16(1));
        want.extend_from_slice(&3u32.to_ne_bytes());
        // ETHTOOL_A_RINGS_TCP_DATA_SPLIT (u8) len 5 = 2, padded.
        want.extend_from_slice(&ne16(5));
        want.extend_from_slice(&ne16(11));
        want.extend_from_slice(&[2, 0, 0, 0]);
        assert_eq!(m, want);
    }

    #[test]
    fn channels_set_sends_only_given_counts() {
        let a = channels_set_attrs(
            9,
            &ChannelsSet {
                rx: Some(4),
                combined: Some(0),
                ..Default::default()
            },
        );
        let top = attrs(&a);
        assert_eq!(top.len(), 3);
        assert_eq!(top[0].0, ETHTOOL_A_CHANNELS_HEADER);
        assert_eq!(attrs(top[0].1), vec![(1, &9u32.to_ne_bytes()[..])]);
        assert_eq!(
            top[1],
            (ETHTOOL_A_CHANNELS_RX_COUNT, &4u32.to_ne_bytes()[..])
        );
        assert_eq!(
            top[2],
            (ETHTOOL_A_CHANNELS_COMBINED_COUNT, &0u32.to_ne_bytes()[..])
        );
        // Header nest flag on the wire, and the exact length.
        assert_eq!(u16::from_ne_bytes([a[2], a[3]]), 0x8001);
        assert_eq!(a.len(), 12 + 8 + 8);
        let all = channels_set_attrs(
            9,
            &ChannelsSet::all_of(&Channels {
                rx: 1,
                tx: 2,
                other: 3,
                combined: 4,
                ..Default::default()
            }),
        );
        let kinds: Vec<u16> = attrs(&all).iter().map(|x| x.0).collect();
        assert_eq!(kinds, vec![1, 6, 7, 8, 9]);
    }

    #[test]
    fn parses_replies() {
        // A reply as the kernel builds it: header nest first, then values.
        let mut a = header(ETHTOOL_A_RINGS_HEADER, 5);
        put_u32(&mut a, ETHTOOL_A_RINGS_RX_MAX, 4096);
        put_u32(&mut a, ETHTOOL_A_RINGS_TX_MAX, 2048);
        put_u32(&mut a, ETHTOOL_A_RINGS_RX, 1024);
        put_u32(&mut a, ETHTOOL_A_RINGS_TX, 512);
        put_u8(
            &mut a,
            ETHTOOL_A_RINGS_TCP_DATA_SPLIT,
            ETHTOOL_TCP_DATA_SPLIT_DISABLED,
        );
        put_u32(&mut a, ETHTOOL_A_RINGS_HDS_THRESH, 256);
        put_u32(&mut a, ETHTOOL_A_RINGS_HDS_THRESH_MAX, 4096);
        let r = parse_rings(&a);
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
        assert_eq!(parse_rings(&header(1, 5)).tcp_data_split, None);

        let mut c = header(ETHTOOL_A_CHANNELS_HEADER, 5);
        for (k, v) in [(2u16, 16u32), (3, 16), (5, 0), (6, 16), (7, 8)] {
            put_attr(&mut c, k, &v.to_ne_bytes());
        }
        let ch = parse_channels(&c);
        assert_eq!(
            (ch.rx_max, ch.tx_max, ch.rx, ch.tx, ch.combined),
            (16, 16, 16, 8, 0)
        );
        assert_eq!(ch.rx_queues(), 16);
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
