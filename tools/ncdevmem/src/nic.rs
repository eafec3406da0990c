//! NIC configuration without shelling out to ethtool: header split,
//! channels and (where the kernel can set it) the RSS indirection table
//! through the ethtool generic netlink family; ntuple rules, the RX ring
//! count and 6.12's indirection table through `SIOCETHTOOL`; and
//! [`NicConfig`], a guard that undoes every change it made, last change
//! first, when dropped.
//!
//! (Its length over ~600 lines is the mock NIC its tests drive and the
//! tests, from `mod tests` on.)

use crate::ethtool_ioctl::{self as ioc, EthtoolIoctl, FlowRule, Rxnfc};
use crate::ethtool_nl::{Channels, ChannelsSet, DataSplit, EthtoolNl};
use crate::netlink::{errno_hint, NlError};
use std::io;

/// A failed NIC operation: what was tried, the errno, the kernel's extack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicError {
    pub what: String,
    pub errno: i32,
    pub extack: Option<String>,
}

impl NicError {
    pub fn new(what: impl Into<String>, errno: i32) -> Self {
        NicError {
            what: what.into(),
            errno,
            extack: None,
        }
    }

    fn from_io(what: &str, e: io::Error) -> Self {
        NicError {
            what: what.into(),
            errno: e.raw_os_error().unwrap_or(libc::EIO),
            extack: match e.raw_os_error() {
                Some(_) => None,
                None => Some(e.to_string()),
            },
        }
    }

    fn from_nl(what: &str, e: NlError) -> Self {
        NicError {
            what: what.into(),
            errno: e.errno,
            extack: e.msg,
        }
    }

    /// `ENOTSUP`: the driver lacks the operation.
    pub fn unsupported(&self) -> bool {
        self.errno == libc::EOPNOTSUPP
    }

    /// `ENOBUFS` on a netlink request: the kernel could not allocate its
    /// answer, so the request may have been carried out all the same.
    pub fn outcome_unknown(&self) -> bool {
        self.errno == libc::ENOBUFS
    }
}

impl std::fmt::Display for NicError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.errno == libc::ENODEV && self.what.starts_with("no such interface") {
            return write!(f, "{}", self.what);
        }
        write!(
            f,
            "{}: {}",
            self.what,
            io::Error::from_raw_os_error(self.errno)
        )?;
        if let Some(h) = errno_hint(self.errno) {
            write!(f, "; {h}")?;
        }
        if let Some(m) = &self.extack {
            write!(f, " (kernel: {m})")?;
        }
        Ok(())
    }
}

impl std::error::Error for NicError {}

impl From<NicError> for io::Error {
    fn from(e: NicError) -> Self {
        io::Error::other(e.to_string())
    }
}

pub type NicResult<T> = Result<T, NicError>;

/// The operations [`NicConfig`] needs from a device (a trait so the undo
/// logic can be tested without one).
pub trait NicOps {
    /// The interface name, for messages.
    fn name(&self) -> &str;
    /// tcp-data-split; `None` when the driver does not report it.
    fn data_split(&mut self) -> NicResult<Option<DataSplit>>;
    fn set_data_split(&mut self, v: DataSplit) -> NicResult<()>;
    fn channels(&mut self) -> NicResult<Channels>;
    fn set_channels(&mut self, c: &ChannelsSet) -> NicResult<()>;
    /// RX rings RSS may use (`ETHTOOL_GRXRINGS`).
    fn rx_rings(&mut self) -> NicResult<u32>;
    /// The indirection table (empty if the device has none).
    fn indir(&mut self) -> NicResult<Vec<u32>>;
    /// Sets the indirection table; empty resets it to the default.
    fn set_indir(&mut self, t: &[u32]) -> NicResult<()>;
    fn rule_locs(&mut self) -> NicResult<Vec<u32>>;
    /// A rule as the kernel describes it.
    fn rule_get(&mut self, loc: u32) -> NicResult<Rxnfc>;
    /// Inserts a rule; returns the location used.
    fn rule_insert(&mut self, rule: &Rxnfc) -> NicResult<u32>;
    /// The rule table's size, and whether the driver picks locations.
    fn rule_space(&mut self) -> NicResult<(u32, bool)>;
    fn rule_delete(&mut self, loc: u32) -> NicResult<()>;
    fn flags(&mut self) -> NicResult<u32>;
    fn set_flags(&mut self, f: u32) -> NicResult<()>;
}

/// A real interface.
pub struct Nic {
    name: String,
    pub ifindex: u32,
    nl: EthtoolNl,
    ioctl: EthtoolIoctl,
    /// The indirection table goes through netlink (the kernel has
    /// `ETHTOOL_MSG_RSS_SET`), else through the ioctl.
    rss_over_netlink: bool,
}

/// The index of interface `name`, or a "no such interface" error.
pub fn ifindex(name: &str) -> NicResult<u32> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| NicError::new(format!("bad interface name '{name}'"), libc::EINVAL))?;
    // SAFETY: a NUL-terminated name.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(NicError {
            what: format!("no such interface: {name}"),
            errno: libc::ENODEV,
            extack: None,
        });
    }
    Ok(i)
}

impl Nic {
    pub fn open(name: &str) -> NicResult<Self> {
        let ifindex = ifindex(name)?;
        let nl = EthtoolNl::open()
            .map_err(|e| NicError::from_io("ethtool netlink socket", e))?
            .map_err(|e| NicError::from_nl("ethtool netlink family", e))?;
        let ioctl =
            EthtoolIoctl::open(name).map_err(|e| NicError::from_io("ethtool ioctl socket", e))?;
        Ok(Nic {
            name: name.into(),
            ifindex,
            rss_over_netlink: nl.can_set_rss(),
            nl,
            ioctl,
        })
    }

    fn what(&self, op: &str) -> String {
        format!("{op} on {}", self.name)
    }

    fn nl<T>(&self, op: &str, r: io::Result<Result<T, NlError>>) -> NicResult<T> {
        r.map_err(|e| NicError::from_io(&self.what(op), e))?
            .map_err(|e| NicError::from_nl(&self.what(op), e))
    }

    fn io<T>(&self, op: &str, r: io::Result<T>) -> NicResult<T> {
        r.map_err(|e| NicError::from_io(&self.what(op), e))
    }
}

impl NicOps for Nic {
    fn name(&self) -> &str {
        &self.name
    }

    fn data_split(&mut self) -> NicResult<Option<DataSplit>> {
        let r = self.nl.rings(self.ifindex);
        let r = self.nl("get ring parameters (ETHTOOL_MSG_RINGS_GET)", r)?;
        Ok(r.tcp_data_split.map(DataSplit::from_u8))
    }

    fn set_data_split(&mut self, v: DataSplit) -> NicResult<()> {
        let r = self.nl.set_data_split(self.ifindex, v);
        self.nl(&format!("set tcp-data-split {}", v.name()), r)
    }

    fn channels(&mut self) -> NicResult<Channels> {
        let r = self.nl.channels(self.ifindex);
        self.nl("get channels (ETHTOOL_MSG_CHANNELS_GET)", r)
    }

    fn set_channels(&mut self, c: &ChannelsSet) -> NicResult<()> {
        let r = self.nl.set_channels(self.ifindex, c);
        self.nl(&format!("set channels {}", describe_channels(c)), r)
    }

    fn rx_rings(&mut self) -> NicResult<u32> {
        let r = self.ioctl.rx_rings();
        self.io("get RX rings (ETHTOOL_GRXRINGS)", r)
    }

    fn indir(&mut self) -> NicResult<Vec<u32>> {
        if self.rss_over_netlink {
            let r = self.nl.rss_indir(self.ifindex);
            return self.nl("get RSS indirection table (ETHTOOL_MSG_RSS_GET)", r);
        }
        let r = self.ioctl.indir();
        self.io("get RSS indirection table (ETHTOOL_GRXFHINDIR)", r)
    }

    fn set_indir(&mut self, t: &[u32]) -> NicResult<()> {
        if self.rss_over_netlink {
            let r = self.nl.set_rss_indir(self.ifindex, t);
            return self.nl("set RSS indirection table (ETHTOOL_MSG_RSS_SET)", r);
        }
        let r = self.ioctl.set_indir(t);
        self.io("set RSS indirection table (ETHTOOL_SRXFHINDIR)", r)
    }

    fn rule_locs(&mut self) -> NicResult<Vec<u32>> {
        let r = self.ioctl.rule_locs();
        self.io("list ntuple rules (ETHTOOL_GRXCLSRLALL)", r)
    }

    fn rule_get(&mut self, loc: u32) -> NicResult<Rxnfc> {
        let r = self.ioctl.rule_get(loc);
        self.io(&format!("get ntuple rule {loc} (ETHTOOL_GRXCLSRULE)"), r)
    }

    fn rule_insert(&mut self, rule: &Rxnfc) -> NicResult<u32> {
        let r = self.ioctl.rule_insert(rule);
        let what = match ioc::decode_rule(rule) {
            Some(rule) => format!("insert ntuple rule '{rule}' (ETHTOOL_SRXCLSRLINS)"),
            None => "insert ntuple rule (ETHTOOL_SRXCLSRLINS)".into(),
        };
        self.io(&what, r)
    }

    fn rule_space(&mut self) -> NicResult<(u32, bool)> {
        let r = self.ioctl.rule_space();
        self.io("count ntuple rules (ETHTOOL_GRXCLSRLCNT)", r)
    }

    fn rule_delete(&mut self, loc: u32) -> NicResult<()> {
        let r = self.ioctl.rule_delete(loc);
        self.io(
            &format!("delete ntuple rule {loc} (ETHTOOL_SRXCLSRLDEL)"),
            r,
        )
    }

    fn flags(&mut self) -> NicResult<u32> {
        let r = self.ioctl.flags();
        self.io("get features (ETHTOOL_GFLAGS)", r)
    }

    fn set_flags(&mut self, f: u32) -> NicResult<()> {
        let r = self.ioctl.set_flags(f);
        self.io("set features (ETHTOOL_SFLAGS)", r)
    }
}

/// `rx 4 combined 0`, as `ethtool -L` takes it.
pub fn describe_channels(c: &ChannelsSet) -> String {
    let mut s = Vec::new();
    for (n, v) in [
        ("rx", c.rx),
        ("tx", c.tx),
        ("other", c.other),
        ("combined", c.combined),
    ] {
        if let Some(v) = v {
            s.push(format!("{n} {v}"));
        }
    }
    s.join(" ")
}

/// One change to take back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undo {
    /// Set tcp-data-split back.
    DataSplit(DataSplit),
    /// Set these channel counts back.
    Channels(ChannelsSet),
    /// Set the indirection table back (empty: reset to the default).
    Indir(Vec<u32>),
    /// Delete the rule we added at this location.
    DeleteRule(u32),
    /// Put back a rule we deleted, as the kernel described it.
    ReinsertRule { loc: u32, rule: Rxnfc },
    /// Set the feature flags back.
    Flags(u32),
}

impl std::fmt::Display for Undo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Undo::DataSplit(d) => write!(f, "tcp-data-split {}", d.name()),
            Undo::Channels(c) => write!(f, "channels {}", describe_channels(c)),
            Undo::Indir(t) if t.is_empty() => write!(f, "default RSS indirection table"),
            Undo::Indir(t) => write!(f, "RSS indirection table ({} entries)", t.len()),
            Undo::DeleteRule(l) => write!(f, "delete ntuple rule {l}"),
            Undo::ReinsertRule { loc, rule } => match ioc::decode_rule(rule) {
                Some(r) => write!(f, "ntuple rule {loc} ({r})"),
                None => write!(f, "ntuple rule {loc}"),
            },
            Undo::Flags(v) => write!(f, "features {v:#x}"),
        }
    }
}

/// Applies one undo step.
pub fn apply_undo<B: NicOps>(nic: &mut B, u: &Undo) -> NicResult<()> {
    match u {
        Undo::DataSplit(d) => nic.set_data_split(*d),
        Undo::Channels(c) => nic.set_channels(c),
        Undo::Indir(t) => nic.set_indir(t),
        Undo::DeleteRule(l) => nic.rule_delete(*l),
        Undo::ReinsertRule { rule, .. } => nic.rule_insert(rule).map(|_| ()),
        Undo::Flags(v) => nic.set_flags(*v),
    }
}

/// Changes made to a NIC, taken back in reverse order on [`NicConfig::restore`]
/// or drop. Each change records the value it replaced, so undoing the steps
/// last-first leaves every setting as it was before the first change.
pub struct NicConfig<B: NicOps> {
    nic: B,
    undo: Vec<Undo>,
    /// Print each step to stderr.
    pub verbose: bool,
}

impl<B: NicOps> NicConfig<B> {
    pub fn new(nic: B) -> Self {
        NicConfig {
            nic,
            undo: Vec::new(),
            verbose: true,
        }
    }

    /// The device, for reads (and for changes not to be undone).
    pub fn nic(&mut self) -> &mut B {
        &mut self.nic
    }

    /// The undo steps pending, oldest first.
    pub fn pending(&self) -> &[Undo] {
        &self.undo
    }

    fn say(&self, s: &str) {
        if self.verbose {
            eprintln!("{}: {s}", self.nic.name());
        }
    }

    /// Sets tcp-data-split; returns whether the device's state changed.
    /// `on` is sent even when the device reports it: 7.2 keeps a setting of
    /// its own, which binding checks and which stays `auto` on a device that
    /// splits by default. Only a change of the reported state is undone.
    pub fn set_data_split(&mut self, v: DataSplit) -> NicResult<bool> {
        let old = self.nic.data_split()?.ok_or_else(|| {
            NicError::new(
                format!(
                    "tcp-data-split on {}: the driver does not report it",
                    self.nic.name()
                ),
                libc::EOPNOTSUPP,
            )
        })?;
        if old == v {
            self.say(&format!("tcp-data-split already {}", v.name()));
            if v == DataSplit::Enabled {
                self.nic.set_data_split(v)?;
            }
            return Ok(false);
        }
        if let Err(e) = self.nic.set_data_split(v) {
            // Done or not, putting the old value back is right.
            if e.outcome_unknown() {
                self.undo.push(Undo::DataSplit(old));
            }
            return Err(e);
        }
        self.say(&format!("tcp-data-split {} (was {})", v.name(), old.name()));
        self.undo.push(Undo::DataSplit(old));
        Ok(true)
    }

    /// Changes channel counts; the counts not given stay as they are.
    pub fn set_channels(&mut self, c: &ChannelsSet) -> NicResult<bool> {
        let old = self.nic.channels()?;
        let back = ChannelsSet {
            rx: c.rx.map(|_| old.rx),
            tx: c.tx.map(|_| old.tx),
            other: c.other.map(|_| old.other),
            combined: c.combined.map(|_| old.combined),
        };
        if back == *c {
            return Ok(false);
        }
        if let Err(e) = self.nic.set_channels(c) {
            if e.outcome_unknown() {
                self.undo.push(Undo::Channels(back));
            }
            return Err(e);
        }
        self.say(&format!(
            "channels {} (was {})",
            describe_channels(c),
            describe_channels(&back)
        ));
        self.undo.push(Undo::Channels(back));
        Ok(true)
    }

    /// Spreads RSS over queues `0..n` (`ethtool -X IF equal n`).
    pub fn set_rss_equal(&mut self, n: u32) -> NicResult<bool> {
        let rings = self.nic.rx_rings()?;
        if n == 0 || n > rings {
            return Err(NicError::new(
                format!(
                    "RSS equal {n} on {}: must be 1..{rings} (the device has {rings} RX rings)",
                    self.nic.name()
                ),
                libc::EINVAL,
            ));
        }
        let old = self.nic.indir()?;
        if old.is_empty() {
            return Err(NicError::new(
                format!("RSS on {}: no indirection table", self.nic.name()),
                libc::EOPNOTSUPP,
            ));
        }
        let new = ioc::equal_table(old.len(), n);
        if new == old {
            self.say(&format!("RSS already spread over queues 0..{}", n - 1));
            return Ok(false);
        }
        self.nic.set_indir(&new)?;
        self.say(&format!("RSS spread over queues 0..{} (equal {n})", n - 1));
        self.undo.push(Undo::Indir(restore_table(&old, rings)));
        Ok(true)
    }

    /// Deletes every ntuple rule (upstream toggles ntuple off and on for
    /// this), keeping them to put back. Returns how many there were; a device
    /// without rules support has none.
    pub fn reset_rules(&mut self) -> NicResult<usize> {
        let locs = match self.nic.rule_locs() {
            Ok(l) => l,
            Err(e) if e.unsupported() => return Ok(0),
            Err(e) => return Err(e),
        };
        for &loc in &locs {
            let rule = self.nic.rule_get(loc)?;
            self.nic.rule_delete(loc)?;
            self.undo.push(Undo::ReinsertRule { loc, rule });
        }
        if !locs.is_empty() {
            self.say(&format!(
                "deleted {} ntuple rule(s), to be put back on exit",
                locs.len()
            ));
        }
        Ok(locs.len())
    }

    /// Turns the ntuple feature on if it is off.
    pub fn ensure_ntuple(&mut self) -> NicResult<bool> {
        let f = self.nic.flags()?;
        if f & ioc::ETH_FLAG_NTUPLE != 0 {
            return Ok(false);
        }
        self.nic.set_flags(f | ioc::ETH_FLAG_NTUPLE)?;
        self.say("ntuple filters on");
        self.undo.push(Undo::Flags(f));
        Ok(true)
    }

    /// Adds a rule where the driver chooses, or, on a driver that does not
    /// (mlx5, gve), at the last free location, as ethtool picks one;
    /// returns its location.
    pub fn add_rule(&mut self, rule: &FlowRule) -> NicResult<u32> {
        let (size, driver_picks) = self.nic.rule_space()?;
        let want = if driver_picks {
            ioc::RX_CLS_LOC_ANY
        } else {
            let used = self.nic.rule_locs()?;
            (0..size).rev().find(|l| !used.contains(l)).ok_or_else(|| {
                NicError::new(
                    format!(
                        "ntuple rule on {}: all {size} locations in use",
                        self.nic.name()
                    ),
                    libc::ENOSPC,
                )
            })?
        };
        let loc = self.nic.rule_insert(&ioc::encode_insert(rule, want))?;
        self.say(&format!("ntuple rule {loc}: {rule}"));
        self.undo.push(Undo::DeleteRule(loc));
        Ok(loc)
    }

    /// A point to [`NicConfig::restore_to`] later.
    pub fn mark(&self) -> usize {
        self.undo.len()
    }

    /// Undoes the changes made since `mark`, last first; a failing step does
    /// not stop the others. Returns the failures.
    pub fn restore_to(&mut self, mark: usize) -> Vec<NicError> {
        let mut errs = Vec::new();
        while self.undo.len() > mark {
            let u = self.undo.pop().unwrap();
            match apply_undo(&mut self.nic, &u) {
                Ok(()) => self.say(&format!("restored {u}")),
                Err(e) => {
                    if self.verbose {
                        eprintln!("ncdevmem-rs: could not restore {u}: {e}");
                    }
                    errs.push(e);
                }
            }
        }
        errs
    }

    /// Undoes every change, last first.
    pub fn restore(&mut self) -> Vec<NicError> {
        self.restore_to(0)
    }
}

impl<B: NicOps> Drop for NicConfig<B> {
    fn drop(&mut self) {
        let errs = self.restore();
        if !errs.is_empty() && !self.verbose {
            for e in errs {
                eprintln!("ncdevmem-rs: restore failed: {e}");
            }
        }
    }
}

/// What to set the table back to: the reset request (empty) if `old` is the
/// driver's default for `rings` RX rings, so the device keeps following its
/// channel count; otherwise `old` itself.
pub fn restore_table(old: &[u32], rings: u32) -> Vec<u32> {
    if old == ioc::default_table(old.len(), rings).as_slice() {
        Vec::new()
    } else {
        old.to_vec()
    }
}

#[cfg(test)]
pub mod mock {
    //! A device in memory that logs the calls made to it.
    use super::*;

    #[derive(Default)]
    pub struct MockNic {
        pub split: Option<DataSplit>,
        pub ch: Channels,
        pub rings: u32,
        pub table: Vec<u32>,
        pub rules: Vec<(u32, Rxnfc)>,
        /// `Some(n)`: an n-slot table whose driver does not pick locations.
        pub rule_slots: Option<u32>,
        pub flags: u32,
        pub log: Vec<String>,
        /// Calls whose log name starts with this fail with EINVAL.
        pub fail: Vec<&'static str>,
        /// Calls carried out whose answer is lost (ENOBUFS), as netlink
        /// reports an answer it could not allocate.
        pub lost_answer: Vec<&'static str>,
        /// A copy of the log that outlives the device.
        pub sink: Option<std::rc::Rc<std::cell::RefCell<Vec<String>>>>,
    }

    impl MockNic {
        /// A NIC with 16 channels of 16, 16 RX rings, the default
        /// 128-entry indirection table and header split off: the tests'
        /// starting point.
        pub fn sixteen_queues() -> Self {
            MockNic {
                split: Some(DataSplit::Disabled),
                ch: Channels {
                    rx: 16,
                    tx: 16,
                    rx_max: 16,
                    tx_max: 16,
                    ..Default::default()
                },
                rings: 16,
                table: ioc::default_table(128, 16),
                ..Default::default()
            }
        }

        fn op(&mut self, s: String) -> NicResult<()> {
            let fails = self.fail.iter().any(|f| s.starts_with(f));
            self.log.push(s.clone());
            if let Some(sink) = &self.sink {
                sink.borrow_mut().push(s.clone());
            }
            if fails {
                Err(NicError::new(s, libc::EINVAL))
            } else {
                Ok(())
            }
        }

        fn answer(&self, s: String) -> NicResult<()> {
            if self.lost_answer.iter().any(|f| s.starts_with(f)) {
                Err(NicError::new(s, libc::ENOBUFS))
            } else {
                Ok(())
            }
        }
    }

    impl NicOps for MockNic {
        fn name(&self) -> &str {
            "mock0"
        }
        fn data_split(&mut self) -> NicResult<Option<DataSplit>> {
            Ok(self.split)
        }
        fn set_data_split(&mut self, v: DataSplit) -> NicResult<()> {
            let what = format!("split {}", v.name());
            self.op(what.clone())?;
            self.split = Some(v);
            self.answer(what)
        }
        fn channels(&mut self) -> NicResult<Channels> {
            Ok(self.ch)
        }
        fn set_channels(&mut self, c: &ChannelsSet) -> NicResult<()> {
            let what = format!("channels {}", describe_channels(c));
            self.op(what.clone())?;
            self.ch.rx = c.rx.unwrap_or(self.ch.rx);
            self.ch.tx = c.tx.unwrap_or(self.ch.tx);
            self.ch.combined = c.combined.unwrap_or(self.ch.combined);
            self.answer(what)
        }
        fn rx_rings(&mut self) -> NicResult<u32> {
            Ok(self.rings)
        }
        fn indir(&mut self) -> NicResult<Vec<u32>> {
            Ok(self.table.clone())
        }
        fn set_indir(&mut self, t: &[u32]) -> NicResult<()> {
            self.op(format!("indir {t:?}"))?;
            self.table = if t.is_empty() {
                ioc::default_table(self.table.len(), self.rings)
            } else {
                t.to_vec()
            };
            Ok(())
        }
        fn rule_locs(&mut self) -> NicResult<Vec<u32>> {
            Ok(self.rules.iter().map(|r| r.0).collect())
        }
        fn rule_get(&mut self, loc: u32) -> NicResult<Rxnfc> {
            Ok(self.rules.iter().find(|r| r.0 == loc).unwrap().1)
        }
        fn rule_insert(&mut self, rule: &Rxnfc) -> NicResult<u32> {
            let want = rule.fs.location;
            let loc = if want == ioc::RX_CLS_LOC_ANY {
                (0..)
                    .find(|l| self.rules.iter().all(|r| r.0 != *l))
                    .unwrap()
            } else {
                want
            };
            self.op(format!("insert {loc}"))?;
            self.rules.push((loc, *rule));
            self.rules.sort_by_key(|r| r.0);
            Ok(loc)
        }
        fn rule_space(&mut self) -> NicResult<(u32, bool)> {
            Ok((self.rule_slots.unwrap_or(64), self.rule_slots.is_none()))
        }
        fn rule_delete(&mut self, loc: u32) -> NicResult<()> {
            self.op(format!("delete {loc}"))?;
            self.rules.retain(|r| r.0 != loc);
            Ok(())
        }
        fn flags(&mut self) -> NicResult<u32> {
            Ok(self.flags)
        }
        fn set_flags(&mut self, f: u32) -> NicResult<()> {
            self.op(format!("flags {f:#x}"))?;
            self.flags = f;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::mock::MockNic;
    use super::*;

    fn dev() -> MockNic {
        MockNic::sixteen_queues()
    }

    fn rule(q: u32) -> FlowRule {
        FlowRule::tcp(None, Some("10.0.0.2".parse().unwrap()), None, Some(5201), q).unwrap()
    }

    #[test]
    fn undo_runs_last_first_and_restores_everything() {
        let mut old_rule = ioc::encode_insert(&rule(3), 7);
        old_rule.cmd = ioc::ETHTOOL_GRXCLSRULE;
        let mut d = dev();
        d.rules.push((7, old_rule));
        let before = (d.split, d.ch, d.table.clone(), d.flags);
        let mut c = NicConfig::new(d);
        c.verbose = false;
        assert_eq!(c.reset_rules().unwrap(), 1);
        assert!(c.ensure_ntuple().unwrap());
        assert!(c.set_data_split(DataSplit::Enabled).unwrap());
        assert!(c.set_rss_equal(8).unwrap());
        assert_eq!(c.add_rule(&rule(8)).unwrap(), 0);
        assert!(c
            .set_channels(&ChannelsSet {
                rx: Some(8),
                ..Default::default()
            })
            .unwrap());
        assert_eq!(c.nic().table, ioc::equal_table(128, 8));
        assert_eq!(c.nic().rules.len(), 1);
        assert!(c.restore().is_empty());
        let d = c.nic();
        assert_eq!(
            d.log,
            vec![
                "delete 7",
                "flags 0x8000000",
                "split on",
                &format!("indir {:?}", ioc::equal_table(128, 8)),
                "insert 0",
                "channels rx 8",
                // Undo, in reverse order.
                "channels rx 16",
                "delete 0",
                // The old table was the default one: reset rather than pin it.
                "indir []",
                "split off",
                "flags 0x0",
                "insert 7",
            ]
        );
        assert_eq!((d.split, d.ch, d.table.clone(), d.flags), before);
        // The deleted rule is back where it was, as it was.
        assert_eq!(d.rules.len(), 1);
        assert_eq!(d.rules[0].0, 7);
        assert_eq!(ioc::decode_rule(&d.rules[0].1), Some(rule(3)));
        assert_eq!(d.rules[0].1.fs.location, 7);
    }

    #[test]
    fn rules_go_to_the_last_free_location_where_the_driver_picks_none() {
        let mut d = dev();
        d.rule_slots = Some(4);
        d.rules.push((3, ioc::encode_insert(&rule(1), 3)));
        let mut c = NicConfig::new(d);
        c.verbose = false;
        // As ethtool picks for mlx5 and gve: from the end, past used ones.
        assert_eq!(c.add_rule(&rule(8)).unwrap(), 2);
        assert_eq!(c.add_rule(&rule(9)).unwrap(), 1);
        assert_eq!(c.add_rule(&rule(10)).unwrap(), 0);
        let e = c.add_rule(&rule(11)).unwrap_err();
        assert_eq!(e.errno, libc::ENOSPC);
        assert_eq!(c.nic().log, vec!["insert 2", "insert 1", "insert 0"]);
    }

    #[test]
    fn no_op_changes_record_nothing() {
        let mut d = dev();
        d.split = Some(DataSplit::Enabled);
        d.table = ioc::equal_table(128, 8);
        d.flags = ioc::ETH_FLAG_NTUPLE;
        let mut c = NicConfig::new(d);
        c.verbose = false;
        assert!(!c.set_data_split(DataSplit::Enabled).unwrap());
        // (Sent all the same, for the kernel's own setting; nothing to undo.)
        assert_eq!(c.nic().log, vec!["split on"]);
        assert!(!c.set_rss_equal(8).unwrap());
        assert!(!c.ensure_ntuple().unwrap());
        assert!(!c
            .set_channels(&ChannelsSet {
                tx: Some(16),
                ..Default::default()
            })
            .unwrap());
        assert_eq!(c.reset_rules().unwrap(), 0);
        assert!(c.pending().is_empty());
        drop(c);
    }

    #[test]
    fn a_failed_change_is_not_undone_and_failed_undos_do_not_stop_the_rest() {
        let mut d = dev();
        d.fail = vec!["insert"];
        let mut c = NicConfig::new(d);
        c.verbose = false;
        c.set_data_split(DataSplit::Enabled).unwrap();
        // A non-default table is put back as it was.
        c.nic().table = ioc::equal_table(128, 4);
        c.set_rss_equal(8).unwrap();
        assert!(c.add_rule(&rule(8)).is_err());
        assert_eq!(
            c.pending(),
            &[
                Undo::DataSplit(DataSplit::Disabled),
                Undo::Indir(ioc::equal_table(128, 4))
            ]
        );
        c.nic().fail = vec!["indir"];
        let errs = c.restore();
        assert_eq!(errs.len(), 1);
        assert_eq!(c.nic().split, Some(DataSplit::Disabled));
        assert!(c.pending().is_empty());
    }

    #[test]
    fn a_change_whose_answer_was_lost_is_undone() {
        let mut d = dev();
        d.lost_answer = vec!["split on", "channels"];
        let mut c = NicConfig::new(d);
        c.verbose = false;
        assert!(c
            .set_data_split(DataSplit::Enabled)
            .unwrap_err()
            .outcome_unknown());
        let ch = ChannelsSet {
            rx: Some(8),
            ..Default::default()
        };
        assert!(c.set_channels(&ch).unwrap_err().outcome_unknown());
        assert_eq!(c.nic().split, Some(DataSplit::Enabled));
        assert_eq!(c.nic().ch.rx, 8);
        c.nic().lost_answer.clear();
        assert!(c.restore().is_empty());
        assert_eq!(c.nic().split, Some(DataSplit::Disabled));
        assert_eq!(c.nic().ch.rx, 16);
    }

    #[test]
    fn rss_equal_is_checked_against_the_rings() {
        let mut c = NicConfig::new(dev());
        c.verbose = false;
        assert_eq!(c.set_rss_equal(0).unwrap_err().errno, libc::EINVAL);
        assert_eq!(c.set_rss_equal(17).unwrap_err().errno, libc::EINVAL);
        c.nic().split = None;
        assert!(c
            .set_data_split(DataSplit::Enabled)
            .unwrap_err()
            .unsupported());
        assert!(c.nic().log.is_empty());
    }

    #[test]
    fn drop_restores() {
        let sink = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut d = dev();
        d.sink = Some(sink.clone());
        let mut c = NicConfig::new(d);
        c.verbose = false;
        c.set_data_split(DataSplit::Enabled).unwrap();
        c.add_rule(&rule(8)).unwrap();
        // Moving the guard does not restore anything.
        let moved = c;
        assert_eq!(sink.borrow().len(), 2);
        drop(moved);
        assert_eq!(
            *sink.borrow(),
            vec!["split on", "insert 0", "delete 0", "split off"]
        );
    }

    #[test]
    fn restore_to_a_mark_keeps_earlier_changes() {
        let mut c = NicConfig::new(dev());
        c.verbose = false;
        c.set_rss_equal(8).unwrap();
        let m = c.mark();
        c.set_data_split(DataSplit::Enabled).unwrap();
        c.set_data_split(DataSplit::Disabled).unwrap();
        c.set_data_split(DataSplit::Enabled).unwrap();
        assert!(c.restore_to(m).is_empty());
        assert_eq!(c.nic().split, Some(DataSplit::Disabled));
        assert_eq!(c.nic().table, ioc::equal_table(128, 8));
        assert_eq!(c.pending().len(), 1);
        c.restore();
        assert_eq!(c.nic().table, ioc::default_table(128, 16));
    }

    #[test]
    fn restore_table_resets_only_default_tables() {
        assert_eq!(
            restore_table(&ioc::default_table(8, 4), 4),
            Vec::<u32>::new()
        );
        assert_eq!(restore_table(&[0, 0, 1, 1], 4), vec![0, 0, 1, 1]);
    }

    #[test]
    fn errors_are_explained() {
        let e = NicError {
            what: "set tcp-data-split on on eth1".into(),
            errno: libc::EPERM,
            extack: None,
        };
        assert!(e.to_string().contains("CAP_NET_ADMIN"));
        let e = NicError {
            what: "x".into(),
            errno: libc::EOPNOTSUPP,
            extack: Some("setting tcp-data-split is not supported".into()),
        };
        assert!(e.unsupported());
        assert_eq!(
            e.to_string(),
            format!(
                "x: {}; the driver does not support this operation (kernel: setting tcp-data-split is not supported)",
                io::Error::from_raw_os_error(libc::EOPNOTSUPP)
            )
        );
        assert_eq!(ifindex("nosuchif0").unwrap_err().errno, libc::ENODEV);
        assert!(ifindex("nosuchif0")
            .unwrap_err()
            .to_string()
            .contains("no such interface: nosuchif0"));
    }
}
