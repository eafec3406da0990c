// SPDX-License-Identifier: GPL-2.0

//! `ethtool_ops` from a trait: rings (with TCP data split), channels, driver
//! info and per-queue statistics.

use crate::{
    bindings,
    netdev::{priv_of, NetDev, NetDevOps},
};
use core::marker::PhantomData;
use kernel::{error::from_result, prelude::*, str::CStr};

/// Ring sizes and TCP data split, as `ethtool -g/-G` show and set them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RingParams {
    /// RX ring entries.
    pub(crate) rx: u32,
    /// Largest RX ring.
    pub(crate) rx_max: u32,
    /// TX ring entries.
    pub(crate) tx: u32,
    /// Largest TX ring.
    pub(crate) tx_max: u32,
    /// Header split: `None` = unknown/auto in a request, else on or off.
    pub(crate) tcp_data_split: Option<bool>,
}

/// Channel counts, as `ethtool -l/-L` show and set them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Channels {
    /// Most RX channels.
    pub(crate) max_rx: u32,
    /// Most TX channels.
    pub(crate) max_tx: u32,
    /// Active RX channels.
    pub(crate) rx: u32,
    /// Active TX channels.
    pub(crate) tx: u32,
}

/// Where an ethtool request's error message goes (netlink extack).
pub(crate) struct Extack(*mut bindings::netlink_ext_ack);

impl Extack {
    /// Sets the message userspace sees with the error.
    pub(crate) fn msg(&self, msg: &'static CStr) {
        if !self.0.is_null() {
            // SAFETY: a non-null extack is valid for the callback's duration; the
            // message is static, as `NL_SET_ERR_MSG` requires.
            unsafe { bindings::dmn_extack_msg(self.0, msg.as_char_ptr().cast()) };
        }
    }
}

/// Names of the driver-specific statistics, at most 31 bytes each.
pub(crate) type StatNames = &'static [&'static str];

/// Ethtool callbacks for a [`NetDevOps`] driver.
#[vtable]
pub(crate) trait EthtoolOps: NetDevOps {
    /// Driver name for `ethtool -i`.
    const DRIVER: &'static CStr;

    /// `ethtool -g`.
    fn get_ringparam(dev: &NetDev, data: &Self::Priv) -> RingParams;

    /// `ethtool -G`: `req` holds the full requested state.
    fn set_ringparam(dev: &NetDev, data: &Self::Priv, req: &RingParams, extack: &Extack) -> Result;

    /// `ethtool -l`.
    fn get_channels(dev: &NetDev, data: &Self::Priv) -> Channels;

    /// `ethtool -L`: `req.rx`/`req.tx` are the requested counts.
    fn set_channels(dev: &NetDev, data: &Self::Priv, req: &Channels) -> Result;

    /// Names of the `ethtool -S` counters; the count must not change while up.
    fn stat_names(dev: &NetDev, data: &Self::Priv, out: &mut dyn FnMut(&str));

    /// Values of the `ethtool -S` counters, in `stat_names` order.
    fn stat_values(dev: &NetDev, data: &Self::Priv, out: &mut [u64]);
}

struct EthtoolTable<T>(PhantomData<T>);

/// Copies `s` into an ethtool string slot (`ETH_GSTRING_LEN` bytes, NUL padded).
fn put_gstring(slot: &mut [u8], s: &str) {
    let n = s.len().min(slot.len() - 1);
    slot[..n].copy_from_slice(&s.as_bytes()[..n]);
    slot[n..].fill(0);
}

impl<T: EthtoolOps> EthtoolTable<T> {
    /// # Safety
    ///
    /// Called by the ethtool core with a device of ours and valid arguments.
    unsafe extern "C" fn get_drvinfo(
        dev: *mut bindings::net_device,
        info: *mut bindings::ethtool_drvinfo,
    ) {
        // SAFETY: `info` is valid for writes during the call.
        let info = unsafe { &mut *info };
        put_gstring(&mut info.driver, T::DRIVER.to_str().unwrap_or("devmemnic"));
        let _ = dev;
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_ringparam(
        dev: *mut bindings::net_device,
        ring: *mut bindings::ethtool_ringparam,
        kring: *mut bindings::kernel_ethtool_ringparam,
        _extack: *mut bindings::netlink_ext_ack,
    ) {
        // SAFETY: the core passes a live device of ours and writable outputs.
        let (nd, data, ring, kring) = unsafe {
            (
                NetDev::from_raw(dev),
                priv_of::<T>(dev),
                &mut *ring,
                &mut *kring,
            )
        };
        let p = T::get_ringparam(nd, data);
        ring.rx_pending = p.rx;
        ring.rx_max_pending = p.rx_max;
        ring.tx_pending = p.tx;
        ring.tx_max_pending = p.tx_max;
        kring.tcp_data_split = match p.tcp_data_split {
            Some(true) => bindings::ETHTOOL_TCP_DATA_SPLIT_ENABLED as u8,
            Some(false) => bindings::ETHTOOL_TCP_DATA_SPLIT_DISABLED as u8,
            None => bindings::ETHTOOL_TCP_DATA_SPLIT_UNKNOWN as u8,
        };
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `extack` may be null.
    unsafe extern "C" fn set_ringparam(
        dev: *mut bindings::net_device,
        ring: *mut bindings::ethtool_ringparam,
        kring: *mut bindings::kernel_ethtool_ringparam,
        extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and readable requests.
            let (nd, data, ring, kring) =
                unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &*ring, &*kring) };
            let req = RingParams {
                rx: ring.rx_pending,
                rx_max: ring.rx_max_pending,
                tx: ring.tx_pending,
                tx_max: ring.tx_max_pending,
                tcp_data_split: match u32::from(kring.tcp_data_split) {
                    bindings::ETHTOOL_TCP_DATA_SPLIT_ENABLED => Some(true),
                    bindings::ETHTOOL_TCP_DATA_SPLIT_DISABLED => Some(false),
                    _ => None,
                },
            };
            T::set_ringparam(nd, data, &req, &Extack(extack))?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_channels(
        dev: *mut bindings::net_device,
        ch: *mut bindings::ethtool_channels,
    ) {
        // SAFETY: the core passes a live device of ours and a writable output.
        let (nd, data, ch) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *ch) };
        let c = T::get_channels(nd, data);
        ch.max_rx = c.max_rx;
        ch.max_tx = c.max_tx;
        ch.rx_count = c.rx;
        ch.tx_count = c.tx;
        ch.max_combined = 0;
        ch.combined_count = 0;
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn set_channels(
        dev: *mut bindings::net_device,
        ch: *mut bindings::ethtool_channels,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a readable request.
            let (nd, data, ch) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &*ch) };
            if ch.combined_count != 0 || ch.other_count != 0 {
                return Err(EINVAL);
            }
            let req = Channels {
                max_rx: ch.max_rx,
                max_tx: ch.max_tx,
                rx: ch.rx_count,
                tx: ch.tx_count,
            };
            T::set_channels(nd, data, &req)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_sset_count(dev: *mut bindings::net_device, sset: i32) -> i32 {
        if sset != bindings::ethtool_stringset_ETH_SS_STATS as i32 {
            return -(bindings::EOPNOTSUPP as i32);
        }
        // SAFETY: the core passes a live device of ours.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        let mut n = 0;
        T::stat_names(nd, data, &mut |_| n += 1);
        n
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `buf` holds `get_sset_count` strings.
    unsafe extern "C" fn get_strings(dev: *mut bindings::net_device, sset: u32, buf: *mut u8) {
        if sset != bindings::ethtool_stringset_ETH_SS_STATS {
            return;
        }
        // SAFETY: the core passes a live device of ours.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        let mut i = 0usize;
        let len = bindings::ETH_GSTRING_LEN as usize;
        T::stat_names(nd, data, &mut |name| {
            // SAFETY: the core sized `buf` for the count `get_sset_count` returned,
            // and `stat_names` yields the same names again (trait contract).
            let slot = unsafe { core::slice::from_raw_parts_mut(buf.add(i * len), len) };
            put_gstring(slot, name);
            i += 1;
        });
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `values` holds `get_sset_count` entries.
    unsafe extern "C" fn get_ethtool_stats(
        dev: *mut bindings::net_device,
        _stats: *mut bindings::ethtool_stats,
        values: *mut u64,
    ) {
        // SAFETY: the core passes a live device of ours.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        let mut n = 0usize;
        T::stat_names(nd, data, &mut |_| n += 1);
        // SAFETY: the core sized `values` for `get_sset_count` entries (= `n`).
        let out = unsafe { core::slice::from_raw_parts_mut(values, n) };
        T::stat_values(nd, data, out);
    }

    const OPS: bindings::ethtool_ops = {
        // SAFETY: all-zeroes is a valid `ethtool_ops` (nothing supported).
        let mut ops: bindings::ethtool_ops = unsafe { core::mem::zeroed() };
        ops.supported_ring_params =
            bindings::ethtool_supported_ring_param_ETHTOOL_RING_USE_TCP_DATA_SPLIT;
        ops.get_drvinfo = Some(Self::get_drvinfo);
        ops.get_ringparam = Some(Self::get_ringparam);
        ops.set_ringparam = Some(Self::set_ringparam);
        ops.get_channels = Some(Self::get_channels);
        ops.set_channels = Some(Self::set_channels);
        ops.get_sset_count = Some(Self::get_sset_count);
        ops.get_strings = Some(Self::get_strings);
        ops.get_ethtool_stats = Some(Self::get_ethtool_stats);
        ops
    };
}

/// The `ethtool_ops` for `T` (used by `netdev_ops_tables!`).
pub(crate) const fn ethtool_ops_of<T: EthtoolOps>() -> bindings::ethtool_ops {
    EthtoolTable::<T>::OPS
}
