// SPDX-License-Identifier: GPL-2.0

//! `net_device_ops` from a trait.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! A driver implements [`NetDevOps`] (and, if it has them, [`EthtoolOps`],
//! [`QueueMgmt`], [`QueueStats`]) and describes its device with a
//! [`Vtables<T>`] built in a constant: `Vtables::new().ethtool().queue_mgmt()`.
//! Each callback gets a [`NetDev`] and the driver's `&T::Priv`.
//!
//! [`EthtoolOps`]: super::ethtool::EthtoolOps
//! [`QueueMgmt`]: super::queue_mgmt::QueueMgmt
//! [`QueueStats`]: super::qstats::QueueStats

use super::{
    bindings,
    extack::Extack,
    netdev::{priv_of, NetDev},
    skb::SkBuff,
    xdp::{XdpProg, XdpXmitBatch},
};
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{build_error, error::from_result, prelude::*};

// `Vtables` lives in `super::vtables`; `netdev_ops::Vtables` is the path
// drivers know it by.
pub(crate) use super::vtables::Vtables;

/// Per-device 64-bit counters reported through `ndo_get_stats64`.
#[derive(Default, Clone, Copy)]
pub(crate) struct LinkStats {
    /// Frames received.
    pub(crate) rx_packets: u64,
    /// Bytes received.
    pub(crate) rx_bytes: u64,
    /// Frames dropped on receive.
    pub(crate) rx_dropped: u64,
    /// Frames sent.
    pub(crate) tx_packets: u64,
    /// Bytes sent.
    pub(crate) tx_bytes: u64,
    /// Frames dropped on transmit.
    pub(crate) tx_dropped: u64,
}

/// What `start_xmit` did with a frame.
pub(crate) enum TxOutcome {
    /// The frame was taken (queued or dropped and counted).
    Done,
    /// The queue is full: the core keeps the frame and retries later.
    Busy(SkBuff),
}

/// Net device callbacks; optional ones follow `#[vtable]`'s `HAS_*` rules.
///
/// `open`, `stop` and `change_mtu` run with the device's ops locks held
/// (rtnl, and the instance lock on kernels with ops-locked devices).
#[vtable]
pub(crate) trait NetDevOps: Sized + 'static {
    /// The driver's per-device data, kept in the private area as an `Arc`.
    type Priv: Send + Sync;

    /// `ndo_open`: the device goes up.
    fn open(dev: &NetDev, data: &Self::Priv) -> Result;

    /// `ndo_stop`: the device goes down.
    fn stop(dev: &NetDev, data: &Self::Priv) -> Result;

    /// `ndo_start_xmit`: one frame to send on TX queue `skb.queue_mapping()`.
    fn start_xmit(dev: &NetDev, data: &Self::Priv, skb: SkBuff) -> TxOutcome;

    /// `ndo_get_stats64`.
    fn get_stats64(_dev: &NetDev, _data: &Self::Priv) -> LinkStats {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_change_mtu`: validate and store (with [`NetDev::set_mtu_field`]).
    fn change_mtu(_dev: &NetDev, _data: &Self::Priv, _mtu: u32) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_get_iflink`: the interface index of the device this one sends
    /// through (`ip link` shows `dev@lower`).
    fn get_iflink(_dev: &NetDev, _data: &Self::Priv) -> i32 {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_bpf`'s `XDP_SETUP_PROG`: attach `prog` in native mode (or detach
    /// with `None`). A driver that refuses hands the program back with the
    /// error (the core keeps that reference).
    fn xdp_setup(
        _dev: &NetDev,
        _data: &Self::Priv,
        _prog: Option<XdpProg>,
        _extack: &Extack,
    ) -> core::result::Result<(), (Error, Option<XdpProg>)> {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_xdp_xmit`: sends frames other devices' XDP programs redirected
    /// here; those the driver takes from `frames` are its (sent, or dropped
    /// and counted), the rest go back to the caller.
    fn xdp_xmit(_dev: &NetDev, _data: &Self::Priv, _frames: &mut XdpXmitBatch<'_>) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
}

struct OpsTable<T>(PhantomData<T>);

impl<T: NetDevOps> OpsTable<T> {
    /// # Safety
    ///
    /// Called by the net core with a device allocated by `NetDevAlloc<T>`.
    unsafe extern "C" fn open(dev: *mut bindings::net_device) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            T::open(nd, data)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `open`.
    unsafe extern "C" fn stop(dev: *mut bindings::net_device) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            T::stop(nd, data)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the core with a live device of ours and an skb it hands over.
    unsafe extern "C" fn start_xmit(
        skb: *mut bindings::sk_buff,
        dev: *mut bindings::net_device,
    ) -> bindings::netdev_tx_t {
        // SAFETY: the core passes a live device of ours and ownership of `skb`.
        let (nd, data, skb) = unsafe {
            (
                NetDev::from_raw(dev),
                priv_of::<T>(dev),
                SkBuff::from_raw(skb),
            )
        };
        match T::start_xmit(nd, data, skb) {
            TxOutcome::Done => bindings::netdev_tx_NETDEV_TX_OK,
            TxOutcome::Busy(skb) => {
                // The core keeps ownership of a frame it gets back as busy.
                skb.into_raw();
                bindings::netdev_tx_NETDEV_TX_BUSY
            }
        }
    }

    /// # Safety
    ///
    /// Called by the core with a live device of ours and a writable `stats`.
    unsafe extern "C" fn get_stats64(
        dev: *mut bindings::net_device,
        stats: *mut bindings::rtnl_link_stats64,
    ) {
        // SAFETY: the core passes a live device of ours.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        let s = T::get_stats64(nd, data);
        // SAFETY: `stats` is valid for writes for the duration of the call.
        let out = unsafe { &mut *stats };
        out.rx_packets = s.rx_packets;
        out.rx_bytes = s.rx_bytes;
        out.rx_dropped = s.rx_dropped;
        out.tx_packets = s.tx_packets;
        out.tx_bytes = s.tx_bytes;
        out.tx_dropped = s.tx_dropped;
    }

    /// # Safety
    ///
    /// Called by the core with the ops locks held and a live device of ours.
    unsafe extern "C" fn change_mtu(dev: *mut bindings::net_device, mtu: i32) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            T::change_mtu(nd, data, u32::try_from(mtu).map_err(|_| EINVAL)?)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the core with the ops locks held, a live device of ours and
    /// a valid `bpf` request.
    unsafe extern "C" fn bpf(
        dev: *mut bindings::net_device,
        bpf: *mut bindings::netdev_bpf,
    ) -> i32 {
        // SAFETY: the core passes a valid request.
        if unsafe { (*bpf).command } != bindings::bpf_netdev_command_XDP_SETUP_PROG {
            // Offload, AF_XDP zero-copy pools: not offered.
            return super::errno::eopnotsupp().to_errno();
        }
        // SAFETY: the core passes a live device of ours and a valid
        // `XDP_SETUP_PROG` request (whose member of the union is the one
        // read), whose program (if any) carries a reference moved to the
        // driver, and whose extack is null or valid during this call
        // (dropped before it returns).
        let (nd, data, prog, extack) = unsafe {
            let req = &(*bpf).__bindgen_anon_1.__bindgen_anon_1;
            (
                NetDev::from_raw(dev),
                priv_of::<T>(dev),
                NonNull::new(req.prog).map(|p| XdpProg::from_raw(p)),
                Extack::from_raw(req.extack),
            )
        };
        match T::xdp_setup(nd, data, prog, &extack) {
            Ok(()) => 0,
            Err((e, prog)) => {
                // The core puts the reference of a refused program.
                prog.map(XdpProg::into_raw);
                e.to_errno()
            }
        }
    }

    /// # Safety
    ///
    /// Called by the core with a live device of ours and `n` valid frames.
    unsafe extern "C" fn xdp_xmit(
        dev: *mut bindings::net_device,
        n: i32,
        frames: *mut *mut bindings::xdp_frame,
        _flags: u32,
    ) -> i32 {
        let Ok(n) = usize::try_from(n) else {
            return EINVAL.to_errno();
        };
        if n == 0 || frames.is_null() {
            return 0;
        }
        // SAFETY: the core passes a live device of ours and `n` frames.
        let (nd, data, frames) = unsafe {
            (
                NetDev::from_raw(dev),
                priv_of::<T>(dev),
                core::slice::from_raw_parts(frames, n),
            )
        };
        // SAFETY: the frames the core handed us; `taken` is reported back.
        let mut batch = unsafe { XdpXmitBatch::new(nd, frames) };
        T::xdp_xmit(nd, data, &mut batch);
        // (At most `n`, which fit an i32.)
        batch.taken() as i32
    }

    /// # Safety
    ///
    /// Called by the core with a live device of ours.
    unsafe extern "C" fn get_iflink(dev: *const bindings::net_device) -> i32 {
        let dev = dev.cast_mut();
        // SAFETY: the core passes a live device of ours (read only here).
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        T::get_iflink(nd, data)
    }

    const VTABLE: bindings::net_device_ops = {
        // SAFETY: all-zeroes is a valid `net_device_ops` (every callback absent).
        let mut ops: bindings::net_device_ops = unsafe { core::mem::zeroed() };
        ops.ndo_open = Some(Self::open);
        ops.ndo_stop = Some(Self::stop);
        ops.ndo_start_xmit = Some(Self::start_xmit);
        if T::HAS_GET_STATS64 {
            ops.ndo_get_stats64 = Some(Self::get_stats64);
        }
        if T::HAS_CHANGE_MTU {
            ops.ndo_change_mtu = Some(Self::change_mtu);
        }
        if T::HAS_GET_IFLINK {
            ops.ndo_get_iflink = Some(Self::get_iflink);
        }
        if T::HAS_XDP_SETUP {
            ops.ndo_bpf = Some(Self::bpf);
        }
        if T::HAS_XDP_XMIT {
            ops.ndo_xdp_xmit = Some(Self::xdp_xmit);
        }
        ops
    };
}

/// The `net_device_ops` of `T` (see `Vtables::new`).
pub(super) const fn build<T: NetDevOps>() -> &'static bindings::net_device_ops {
    &OpsTable::<T>::VTABLE
}
