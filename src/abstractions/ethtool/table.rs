// SPDX-License-Identifier: GPL-2.0

//! The `ethtool_ops` table of an [`EthtoolOps`] driver: a trampoline per
//! callback.
//!
//! C header: [`include/linux/ethtool.h`](srctree/include/linux/ethtool.h)
//!
//! Each trampoline turns the core's pointers into the trait's safe
//! arguments and its result into an errno. The table is a constant per
//! driver ([`build`]); the capability bits the core reads from C bitfields
//! go into each device's copy of it ([`set_caps`]).
//!
//! (Longer than 600 lines for a reason: it is one C struct's filling, 23
//! short trampolines and the constant that lists them; split, one `impl`
//! would be spread over files with no concern of their own.)

use super::{
    flow_spec::{rule_from_spec, spec_from_rule},
    Channels, EthtoolOps, Extack, HashFields, HashedFlow, RingParams,
};
use crate::abstractions::{
    bindings,
    errno::{emsgsize, eopnotsupp},
    netdev::{priv_of, NetDev, NetDevConfig},
};
use core::marker::PhantomData;
use kernel::{error::from_result, prelude::*};

/// The Toeplitz hash function's flag (`ETH_RSS_HASH_TOP`, `ethtool -x`'s "toeplitz").
const RSS_HASH_TOP: u8 = 1 << bindings::ETH_RSS_HASH_TOP_BIT;

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
        put_gstring(&mut info.driver, T::DRIVER.to_str().unwrap_or(""));
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
            Some(true) => bindings::DMN_TCP_DATA_SPLIT_ENABLED as u8,
            Some(false) => bindings::DMN_TCP_DATA_SPLIT_DISABLED as u8,
            None => bindings::DMN_TCP_DATA_SPLIT_UNKNOWN as u8,
        };
        #[cfg(dmn_hds_thresh)]
        {
            kring.hds_thresh = p.hds_thresh.unwrap_or(0);
            kring.hds_thresh_max = p.hds_thresh_max;
        }
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
                    bindings::DMN_TCP_DATA_SPLIT_ENABLED => Some(true),
                    bindings::DMN_TCP_DATA_SPLIT_DISABLED => Some(false),
                    _ => None,
                },
                #[cfg(dmn_hds_thresh)]
                hds_thresh: Some(kring.hds_thresh),
                #[cfg(not(dmn_hds_thresh))]
                hds_thresh: None,
                // (A limit the driver reports, not one userspace sets.)
                hds_thresh_max: 0,
            };
            // SAFETY: the core's extack of this call, null or valid during it.
            let extack = unsafe { Extack::from_raw(extack) };
            T::set_ringparam(nd, data, &req, &extack)?;
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
        ch.max_combined = c.max_combined;
        ch.combined_count = c.combined;
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
            if ch.other_count != 0 {
                return Err(EINVAL);
            }
            let req = Channels {
                max_rx: ch.max_rx,
                max_tx: ch.max_tx,
                max_combined: ch.max_combined,
                rx: ch.rx_count,
                tx: ch.tx_count,
                combined: ch.combined_count,
            };
            T::set_channels(nd, data, &req)?;
            Ok(0)
        })
    }

    /// Number of `ethtool -S` counters: fixed by the device's allocated queue
    /// counts and the trait's constant name tables, so it cannot change between
    /// the core sizing a buffer and us filling it.
    fn stat_count(dev: &NetDev) -> usize {
        dev.num_rx_queues() as usize * T::RX_QUEUE_STATS.len()
            + dev.num_tx_queues() as usize * T::TX_QUEUE_STATS.len()
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_sset_count(dev: *mut bindings::net_device, sset: i32) -> i32 {
        if sset == bindings::ethtool_stringset_ETH_SS_PRIV_FLAGS as i32 && T::HAS_PRIV_FLAGS {
            return T::PRIV_FLAGS.len().min(32) as i32;
        }
        if sset != bindings::ethtool_stringset_ETH_SS_STATS as i32 {
            return -(bindings::EOPNOTSUPP as i32);
        }
        // SAFETY: the core passes a live device of ours.
        let nd = unsafe { NetDev::from_raw(dev) };
        i32::try_from(Self::stat_count(nd)).unwrap_or(0)
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `buf` holds `get_sset_count` strings.
    unsafe extern "C" fn get_strings(dev: *mut bindings::net_device, sset: u32, buf: *mut u8) {
        let len = bindings::ETH_GSTRING_LEN as usize;
        if sset == bindings::ethtool_stringset_ETH_SS_PRIV_FLAGS && T::HAS_PRIV_FLAGS {
            let names = &T::PRIV_FLAGS[..T::PRIV_FLAGS.len().min(32)];
            // SAFETY: the core sized `buf` for `get_sset_count` strings: one
            // per name.
            let out = unsafe { core::slice::from_raw_parts_mut(buf, names.len() * len) };
            let mut slots = out.chunks_exact_mut(len);
            for n in names {
                if let Some(slot) = slots.next() {
                    put_gstring(slot, n);
                }
            }
            return;
        }
        if sset != bindings::ethtool_stringset_ETH_SS_STATS {
            return;
        }
        // SAFETY: the core passes a live device of ours.
        let nd = unsafe { NetDev::from_raw(dev) };
        // SAFETY: the core sized `buf` for `get_sset_count` strings, which is
        // `stat_count` (a function of fixed facts).
        let out = unsafe { core::slice::from_raw_parts_mut(buf, Self::stat_count(nd) * len) };
        let mut slots = out.chunks_exact_mut(len);
        let mut name = [0u8; 32];
        for (dir, queues, names) in [
            ("rx", nd.num_rx_queues(), T::RX_QUEUE_STATS),
            ("tx", nd.num_tx_queues(), T::TX_QUEUE_STATS),
        ] {
            for q in 0..queues {
                for n in names {
                    if let Some(slot) = slots.next() {
                        put_gstring(slot, fmt_queue_stat(&mut name, dir, q, n));
                    }
                }
            }
        }
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
        // SAFETY: the core sized `values` for `get_sset_count` entries (`stat_count`).
        let out = unsafe { core::slice::from_raw_parts_mut(values, Self::stat_count(nd)) };
        let (rx, tx) = out.split_at_mut(nd.num_rx_queues() as usize * T::RX_QUEUE_STATS.len());
        if !T::RX_QUEUE_STATS.is_empty() {
            for (q, chunk) in rx.chunks_exact_mut(T::RX_QUEUE_STATS.len()).enumerate() {
                T::rx_queue_stats(nd, data, q as u32, chunk);
            }
        }
        if !T::TX_QUEUE_STATS.is_empty() {
            for (q, chunk) in tx.chunks_exact_mut(T::TX_QUEUE_STATS.len()).enumerate() {
                T::tx_queue_stats(nd, data, q as u32, chunk);
            }
        }
    }

    /// # Safety
    ///
    /// Called by the ethtool core with a live device of ours.
    #[cfg(dmn_ethtool_rx_ring_count)]
    unsafe extern "C" fn get_rx_ring_count(dev: *mut bindings::net_device) -> u32 {
        // SAFETY: the core passes a live device of ours.
        unsafe { NetDev::from_raw(dev) }.real_num_rx_queues()
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `locs` has room for `info.rule_cnt` entries for
    /// `ETHTOOL_GRXCLSRLALL`.
    unsafe extern "C" fn get_rxnfc(
        dev: *mut bindings::net_device,
        info: *mut bindings::ethtool_rxnfc,
        locs: *mut u32,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a valid request.
            let (nd, data, info) =
                unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *info) };
            match info.cmd {
                bindings::ETHTOOL_GRXRINGS => info.data = u64::from(nd.real_num_rx_queues()),
                bindings::ETHTOOL_GRXCLSRLCNT => {
                    let mut n = 0;
                    T::rules(nd, data, &mut |_| n += 1);
                    info.__bindgen_anon_1.rule_cnt = n;
                    let space = T::rule_space(nd, data);
                    info.data = u64::from(space.max.min(T::MAX_RULES));
                    if space.driver_picks_location {
                        info.data |= u64::from(bindings::RX_CLS_LOC_SPECIAL);
                    }
                }
                bindings::ETHTOOL_GRXCLSRULE => {
                    let loc = info.fs.location;
                    let mut found = false;
                    let mut rss = None;
                    T::rules(nd, data, &mut |r| {
                        if r.loc == loc {
                            spec_from_rule(r, &mut info.fs);
                            rss = r.rss;
                            found = true;
                        }
                    });
                    if !found {
                        return Err(ENOENT);
                    }
                    // The core finds a context's rules by the request's own
                    // flow type and context (busy checks, channel limits).
                    info.flow_type = info.fs.flow_type;
                    if let Some(ctx) = rss {
                        info.__bindgen_anon_1.rss_context = ctx;
                    }
                }
                bindings::ETHTOOL_GRXCLSRLALL => {
                    // SAFETY: for this command `rule_cnt` is the request's array size.
                    let room = unsafe { info.__bindgen_anon_1.rule_cnt } as usize;
                    let mut n = 0usize;
                    let mut overflow = false;
                    T::rules(nd, data, &mut |r| {
                        if n < room {
                            // SAFETY: `locs` has room for `room` entries.
                            unsafe { *locs.add(n) = r.loc };
                        } else {
                            overflow = true;
                        }
                        n += 1;
                    });
                    if overflow {
                        return Err(emsgsize());
                    }
                    info.__bindgen_anon_1.rule_cnt = n as u32;
                    info.data = u64::from(T::rule_space(nd, data).max.min(T::MAX_RULES));
                }
                _ => return Err(eopnotsupp()),
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn set_rxnfc(
        dev: *mut bindings::net_device,
        info: *mut bindings::ethtool_rxnfc,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a valid request.
            let (nd, data, info) =
                unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *info) };
            match info.cmd {
                bindings::ETHTOOL_SRXCLSRLINS => {
                    // SAFETY: for this command the union holds the rule's RSS context.
                    let rss_context = unsafe { info.__bindgen_anon_1.rss_context };
                    let rule = rule_from_spec(&info.fs, rss_context)?;
                    let loc = match info.fs.location {
                        bindings::RX_CLS_LOC_ANY => None,
                        l if l < T::MAX_RULES => Some(l),
                        _ => return Err(EINVAL),
                    };
                    info.fs.location = T::insert_rule(nd, data, rule, loc)?;
                }
                bindings::ETHTOOL_SRXCLSRLDEL => T::delete_rule(nd, data, info.fs.location)?,
                _ => return Err(eopnotsupp()),
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the ethtool core; reads nothing.
    unsafe extern "C" fn get_rxfh_key_size(_dev: *mut bindings::net_device) -> u32 {
        T::RSS_KEY_LEN as u32
    }

    /// # Safety
    ///
    /// Called by the ethtool core; reads nothing.
    unsafe extern "C" fn get_rxfh_indir_size(_dev: *mut bindings::net_device) -> u32 {
        T::RSS_INDIR_SIZE as u32
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `indir`/`key` in `p` are null or sized as we said.
    unsafe extern "C" fn get_rxfh(
        dev: *mut bindings::net_device,
        p: *mut bindings::ethtool_rxfh_param,
    ) -> i32 {
        // SAFETY: the core passes a live device of ours and a valid request.
        let (nd, data, p) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *p) };
        p.hfunc = RSS_HASH_TOP;
        // SAFETY: the core sized `indir` and `key` (when not null) with
        // `get_rxfh_indir_size` and `get_rxfh_key_size`, and nothing else uses
        // them during the call.
        let (key, indir) = unsafe {
            (
                slice_or_empty(p.key, T::RSS_KEY_LEN),
                slice_or_empty(p.indir, T::RSS_INDIR_SIZE),
            )
        };
        // The driver fills whole tables; give it scratch for the parts not asked for.
        let mut key_scratch = KVec::new();
        let mut indir_scratch = KVec::new();
        let key = if key.is_empty() {
            if key_scratch
                .extend_with(T::RSS_KEY_LEN, 0, GFP_KERNEL)
                .is_err()
            {
                return ENOMEM.to_errno();
            }
            &mut key_scratch[..]
        } else {
            key
        };
        let indir = if indir.is_empty() {
            if indir_scratch
                .extend_with(T::RSS_INDIR_SIZE, 0, GFP_KERNEL)
                .is_err()
            {
                return ENOMEM.to_errno();
            }
            &mut indir_scratch[..]
        } else {
            indir
        };
        T::get_rss(nd, data, key, indir);
        0
    }

    /// # Safety
    ///
    /// As for `get_rxfh`; `extack` may be null.
    unsafe extern "C" fn set_rxfh(
        dev: *mut bindings::net_device,
        p: *mut bindings::ethtool_rxfh_param,
        extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a valid request.
            let (nd, data, p) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &*p) };
            // SAFETY: the core's extack of this call, null or valid during it.
            let extack = unsafe { Extack::from_raw(extack) };
            check_hfunc(p.hfunc, &extack)?;
            // (The core sends additional contexts to the `*_rxfh_context` ops.)
            if p.rss_context != 0 || p.rss_delete != 0 {
                extack.msg(kernel::c_str!("additional RSS contexts are not supported"));
                return Err(eopnotsupp());
            }
            // SAFETY: the core sized `key` and `indir` (when not null) with
            // `get_rxfh_key_size` and `get_rxfh_indir_size`.
            let (key, indir) = unsafe {
                (
                    slice_or_empty(p.key, T::RSS_KEY_LEN),
                    slice_or_empty(p.indir, T::RSS_INDIR_SIZE),
                )
            };
            T::set_rss(
                nd,
                data,
                (!key.is_empty()).then_some(&*key),
                (!indir.is_empty()).then_some(&*indir),
                &extack,
            )?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_coalesce(
        dev: *mut bindings::net_device,
        c: *mut bindings::ethtool_coalesce,
        _kc: *mut bindings::kernel_ethtool_coalesce,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        // SAFETY: the core passes a live device of ours and a valid `c`, zeroed.
        let (nd, data, c) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *c) };
        c.stats_block_coalesce_usecs = T::stats_block_usecs(nd, data);
        0
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_rxfh_fields(
        dev: *mut bindings::net_device,
        f: *mut bindings::ethtool_rxfh_fields,
    ) -> i32 {
        // SAFETY: the core passes a live device of ours and a valid request.
        let (nd, data, f) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &mut *f) };
        let Some(flow) = HashedFlow::from_flow_type(f.flow_type) else {
            return EINVAL.to_errno();
        };
        f.data = T::rss_hash_fields(nd, data, flow).to_rxh();
        0
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `extack` may be null.
    unsafe extern "C" fn set_rxfh_fields(
        dev: *mut bindings::net_device,
        f: *const bindings::ethtool_rxfh_fields,
        extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a valid request.
            let (nd, data, f) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &*f) };
            // SAFETY: the core's extack of this call, null or valid during it.
            let extack = unsafe { Extack::from_raw(extack) };
            let flow = HashedFlow::from_flow_type(f.flow_type).ok_or(EINVAL)?;
            let Some(fields) = HashFields::from_rxh(f.data) else {
                extack.msg(kernel::c_str!(
                    "the hash takes only addresses and ports (s, d, f, n)"
                ));
                return Err(eopnotsupp());
            };
            T::set_rss_hash_fields(nd, data, flow, fields, &extack)?;
            Ok(0)
        })
    }

    /// Checks what a request for an additional RSS context may ask: the
    /// device's hash function, and no key of its own (contexts share the
    /// device's).
    fn check_context_request(p: &bindings::ethtool_rxfh_param, extack: &Extack) -> Result {
        check_hfunc(p.hfunc, extack)?;
        if !p.key.is_null() {
            extack.msg(kernel::c_str!("RSS contexts share the device's key"));
            return Err(eopnotsupp());
        }
        Ok(())
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`; `ctx` is the core's new context, its tables
    /// sized with `get_rxfh_indir_size` and `get_rxfh_key_size`; `p.indir` is
    /// null or so sized; `extack` may be null.
    unsafe extern "C" fn create_rxfh_context(
        dev: *mut bindings::net_device,
        ctx: *mut bindings::ethtool_rxfh_context,
        p: *const bindings::ethtool_rxfh_param,
        extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a valid request.
            let (nd, data, p) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &*p) };
            // SAFETY: the core's extack of this call, null or valid during it.
            let extack = unsafe { Extack::from_raw(extack) };
            Self::check_context_request(p, &extack)?;
            // SAFETY: `ctx` is valid, and ours to fill, during the call.
            let ctx = unsafe { &mut *ctx };
            if ctx.indir_size as usize != T::RSS_INDIR_SIZE
                || ctx.key_size as usize != T::RSS_KEY_LEN
            {
                return Err(EINVAL);
            }
            // SAFETY: the context's tables are `indir_size` entries and
            // `key_size` bytes (checked above), apart from each other, and
            // nothing else uses them during the call; `p.indir` is null or
            // sized as ours.
            let (table, key, given) = unsafe {
                (
                    core::slice::from_raw_parts_mut(
                        bindings::dmn_rxfh_ctx_indir(ctx),
                        T::RSS_INDIR_SIZE,
                    ),
                    core::slice::from_raw_parts_mut(
                        bindings::dmn_rxfh_ctx_key(ctx),
                        T::RSS_KEY_LEN,
                    ),
                    slice_or_empty(p.indir, T::RSS_INDIR_SIZE),
                )
            };
            // What the core keeps (and `ethtool -x context C` shows) is the
            // whole context: the table asked for or the default even spread,
            // the device's key and hash.
            if given.is_empty() {
                let queues = nd.real_num_rx_queues().max(1);
                for (i, e) in table.iter_mut().enumerate() {
                    *e = i as u32 % queues;
                }
            } else {
                // (Both sized `RSS_INDIR_SIZE`; a zip copy has no panic path.)
                table.iter_mut().zip(given).for_each(|(d, v)| *d = *v);
            }
            let mut device_indir = KVec::new();
            device_indir.extend_with(T::RSS_INDIR_SIZE, 0, GFP_KERNEL)?;
            T::get_rss(nd, data, key, &mut device_indir);
            ctx.hfunc = RSS_HASH_TOP;
            T::set_rss_context(nd, data, p.rss_context, table, &extack)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `create_rxfh_context`, for an existing context.
    unsafe extern "C" fn modify_rxfh_context(
        dev: *mut bindings::net_device,
        _ctx: *mut bindings::ethtool_rxfh_context,
        p: *const bindings::ethtool_rxfh_param,
        extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours and a valid request.
            let (nd, data, p) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev), &*p) };
            // SAFETY: the core's extack of this call, null or valid during it.
            let extack = unsafe { Extack::from_raw(extack) };
            Self::check_context_request(p, &extack)?;
            // SAFETY: `p.indir` is null or sized with `get_rxfh_indir_size`.
            let given = unsafe { slice_or_empty(p.indir, T::RSS_INDIR_SIZE) };
            if !given.is_empty() {
                T::set_rss_context(nd, data, p.rss_context, given, &extack)?;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn remove_rxfh_context(
        dev: *mut bindings::net_device,
        _ctx: *mut bindings::ethtool_rxfh_context,
        rss_context: u32,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            T::remove_rss_context(nd, data, rss_context)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn get_priv_flags(dev: *mut bindings::net_device) -> u32 {
        // SAFETY: the core passes a live device of ours.
        let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
        T::priv_flags(nd, data)
    }

    /// # Safety
    ///
    /// As for `get_drvinfo`.
    unsafe extern "C" fn set_priv_flags(dev: *mut bindings::net_device, flags: u32) -> i32 {
        from_result(|| {
            // SAFETY: the core passes a live device of ours.
            let (nd, data) = unsafe { (NetDev::from_raw(dev), priv_of::<T>(dev)) };
            T::set_priv_flags(nd, data, flags)?;
            Ok(0)
        })
    }

    const VTABLE: bindings::ethtool_ops = {
        // SAFETY: all-zeroes is a valid `ethtool_ops` (nothing supported).
        let mut ops: bindings::ethtool_ops = unsafe { core::mem::zeroed() };
        // `set_channels` changes the real queue counts, which needs rtnl.
        #[cfg(dmn_ethtool_op_needs_rtnl)]
        {
            ops.op_needs_rtnl = bindings::DMN_ETHTOOL_OP_NEEDS_RTNL_SCHANNELS;
        }
        #[cfg(dmn_ethtool_rx_ring_count)]
        {
            ops.get_rx_ring_count = Some(Self::get_rx_ring_count);
        }
        ops.supported_ring_params =
            bindings::ethtool_supported_ring_param_ETHTOOL_RING_USE_TCP_DATA_SPLIT;
        #[cfg(dmn_hds_thresh)]
        {
            ops.supported_ring_params |=
                bindings::ethtool_supported_ring_param_ETHTOOL_RING_USE_HDS_THRS;
        }
        ops.get_drvinfo = Some(Self::get_drvinfo);
        ops.get_ringparam = Some(Self::get_ringparam);
        ops.set_ringparam = Some(Self::set_ringparam);
        ops.get_channels = Some(Self::get_channels);
        ops.set_channels = Some(Self::set_channels);
        ops.get_sset_count = Some(Self::get_sset_count);
        ops.get_strings = Some(Self::get_strings);
        ops.get_ethtool_stats = Some(Self::get_ethtool_stats);
        ops.get_rxnfc = Some(Self::get_rxnfc);
        ops.set_rxnfc = Some(Self::set_rxnfc);
        ops.get_rxfh_key_size = Some(Self::get_rxfh_key_size);
        ops.get_rxfh_indir_size = Some(Self::get_rxfh_indir_size);
        ops.get_rxfh = Some(Self::get_rxfh);
        ops.set_rxfh = Some(Self::set_rxfh);
        if T::HAS_PRIV_FLAGS {
            ops.get_priv_flags = Some(Self::get_priv_flags);
        }
        if T::HAS_SET_PRIV_FLAGS {
            ops.set_priv_flags = Some(Self::set_priv_flags);
        }
        if T::HAS_STATS_BLOCK_USECS {
            ops.supported_coalesce_params = bindings::DMN_ETHTOOL_COALESCE_STATS_BLOCK_USECS;
            ops.get_coalesce = Some(Self::get_coalesce);
        }
        if T::HAS_RSS_HASH_FIELDS {
            ops.get_rxfh_fields = Some(Self::get_rxfh_fields);
        }
        if T::HAS_SET_RSS_HASH_FIELDS {
            ops.set_rxfh_fields = Some(Self::set_rxfh_fields);
        }
        if T::HAS_SET_RSS_CONTEXT {
            // (Exclusive: context IDs are 1..=RSS_CONTEXTS.)
            ops.rxfh_max_num_contexts = T::RSS_CONTEXTS + 1;
            ops.create_rxfh_context = Some(Self::create_rxfh_context);
            ops.modify_rxfh_context = Some(Self::modify_rxfh_context);
            ops.remove_rxfh_context = Some(Self::remove_rxfh_context);
        }
        ops
    };
}

/// The `ethtool_ops` of `T` (see `Vtables::ethtool`).
pub(in crate::abstractions) const fn build<T: EthtoolOps>() -> &'static bindings::ethtool_ops {
    &EthtoolTable::<T>::VTABLE
}

/// Sets the capability bits of `T`'s table in a device's copy of it.
///
/// The core reads them from C bitfields, which a constant table cannot set
/// (bindgen's bitfield setters are not `const fn`); each device carries its
/// own copy (see `Vtables::install`).
pub(in crate::abstractions) fn set_caps<T: EthtoolOps>(
    ops: &mut bindings::ethtool_ops,
    cfg: &NetDevConfig<'_>,
) {
    if T::HAS_SET_RSS_CONTEXT && cfg.rss_rxnfc_adds {
        // Rules may add a queue offset to their context's table entry
        // (`context C action N`).
        ops.set_cap_rss_rxnfc_adds(1);
    }
}

/// Refuses a hash function other than Toeplitz (0: no change).
fn check_hfunc(hfunc: u8, extack: &Extack) -> Result {
    if hfunc != 0 && hfunc != RSS_HASH_TOP {
        extack.msg(kernel::c_str!("only the Toeplitz hash is supported"));
        return Err(eopnotsupp());
    }
    Ok(())
}

/// A mutable slice over `len` entries at `ptr`, or an empty one for null.
///
/// # Safety
///
/// A non-null `ptr` is valid for reads and writes of `len` entries and not
/// used otherwise while the slice lives.
unsafe fn slice_or_empty<'a, E>(ptr: *mut E, len: usize) -> &'a mut [E] {
    if ptr.is_null() {
        &mut []
    } else {
        // SAFETY: the caller's guarantee.
        unsafe { core::slice::from_raw_parts_mut(ptr, len) }
    }
}

/// Formats `"{dir}{q}_{name}"` into `buf` (ethtool names are at most 31 bytes).
fn fmt_queue_stat<'a>(buf: &'a mut [u8; 32], dir: &str, q: u32, name: &str) -> &'a str {
    let mut w = ByteWriter {
        buf: &mut buf[..31],
        len: 0,
    };
    let _ = core::fmt::Write::write_fmt(&mut w, format_args!("{}{}_{}", dir, q, name));
    let n = w.len;
    core::str::from_utf8(&buf[..n]).unwrap_or("")
}

/// `fmt::Write` into a fixed byte buffer, truncating.
struct ByteWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl core::fmt::Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}
