// SPDX-License-Identifier: GPL-2.0

//! Error codes userspace expects that 6.12's `kernel::error::code` lacks.
//!
//! (`ENOTSUPP` there is kernel-internal and must not reach userspace.)

use super::bindings;
use kernel::error::Error;

/// `EOPNOTSUPP`: the operation is not supported by this device.
pub(crate) fn eopnotsupp() -> Error {
    Error::from_errno(-(bindings::EOPNOTSUPP as i32))
}

/// `EMSGSIZE`: the caller's buffer is too small.
pub(crate) fn emsgsize() -> Error {
    Error::from_errno(-(bindings::EMSGSIZE as i32))
}

/// `ENETDOWN`: the device is down.
pub(crate) fn enetdown() -> Error {
    Error::from_errno(-(bindings::ENETDOWN as i32))
}

/// `EADDRNOTAVAIL`: the address asked for cannot be used.
pub(crate) fn eaddrnotavail() -> Error {
    Error::from_errno(-(bindings::EADDRNOTAVAIL as i32))
}
