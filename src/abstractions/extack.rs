// SPDX-License-Identifier: GPL-2.0

//! Error messages for netlink requests: the extack a callback gets.
//!
//! C header: [`include/linux/netlink.h`](srctree/include/linux/netlink.h)
//!
//! ethtool, rtnetlink (`ip link add`), XDP setup and queue management hand
//! their callbacks a `struct netlink_ext_ack`; [`Extack`] wraps it for the
//! callback's duration, and its message reaches userspace with the error.

use super::bindings;
use kernel::{ffi, prelude::*};

/// Where a netlink request's error message goes (its extack).
///
/// # Invariants
///
/// The pointer is null or a valid extack for the callback's duration.
pub(crate) struct Extack(*mut bindings::netlink_ext_ack);

impl Extack {
    /// Wraps the extack a callback got.
    ///
    /// # Safety
    ///
    /// `extack` is null or valid until the returned value is dropped: the
    /// core's extack argument of the running callback, dropped before the
    /// trampoline returns (callbacks get it only by reference).
    pub(super) unsafe fn from_raw(extack: *mut bindings::netlink_ext_ack) -> Self {
        // INVARIANT: as the caller guarantees.
        Self(extack)
    }

    /// No extack: messages go nowhere (a change no request asked for).
    pub(crate) fn none() -> Self {
        // INVARIANT: null.
        Self(core::ptr::null_mut())
    }

    /// The raw extack (null or valid for the callback), for other abstractions.
    pub(super) fn as_raw(&self) -> *mut bindings::netlink_ext_ack {
        self.0
    }

    /// Sets the message userspace sees with the error (`NL_SET_ERR_MSG`).
    pub(crate) fn msg(&self, msg: &'static CStr) {
        // SAFETY: no attribute.
        unsafe { self.set(msg.as_char_ptr().cast(), None) }
    }

    /// As [`Extack::msg`], from a `core` C string (what plain-data tables hold).
    pub(crate) fn msg_c(&self, msg: &'static core::ffi::CStr) {
        // SAFETY: no attribute.
        unsafe { self.set(msg.to_bytes_with_nul().as_ptr().cast(), None) }
    }

    /// As [`Extack::msg`], naming the attribute at fault
    /// (`NL_SET_ERR_MSG_ATTR`).
    ///
    /// # Safety
    ///
    /// `attr` is an attribute of the request this extack answers.
    pub(super) unsafe fn msg_attr(&self, attr: *const bindings::nlattr, msg: &'static CStr) {
        // SAFETY: as the caller guarantees.
        unsafe { self.set(msg.as_char_ptr().cast(), Some(attr)) }
    }

    /// What the `NL_SET_ERR_MSG*` macros do: the netlink_extack tracepoint,
    /// then the message (and the attribute, with no policy) in the extack.
    ///
    /// # Safety
    ///
    /// `msg` is a static NUL-terminated string; `attr`, if given, is an
    /// attribute of the request this extack answers.
    unsafe fn set(&self, msg: *const ffi::c_char, attr: Option<*const bindings::nlattr>) {
        // SAFETY: a NUL-terminated message, traced as it is.
        unsafe { bindings::do_trace_netlink_extack(msg) };
        if self.0.is_null() {
            return;
        }
        // SAFETY: a non-null extack is valid for the callback's duration
        // (type invariant); the message is static and the attribute the
        // request's, as the core reads them when it answers it.
        unsafe {
            (*self.0)._msg = msg;
            if let Some(attr) = attr {
                (*self.0).bad_attr = attr;
                (*self.0).policy = core::ptr::null();
            }
        }
    }
}
