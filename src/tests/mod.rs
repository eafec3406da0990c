// SPDX-License-Identifier: GPL-2.0

//! KUnit suites, run by KUnit when the module loads.

mod parse;
mod platform;
mod queue;
mod steering;
mod toeplitz;
