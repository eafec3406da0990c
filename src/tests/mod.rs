// SPDX-License-Identifier: GPL-2.0

//! KUnit suites, run by KUnit when the module loads.

mod logic;
mod platform;
mod queue;
mod ring;
mod tx;
mod xdp;
