// SPDX-License-Identifier: GPL-2.0

//! The virtual NIC, in safe Rust on the abstraction layer, one concern a file.
//!
//! The files stand on floors, and each imports only from the floors below
//! its own (and from `abstractions` and `logic`, below the driver);
//! `scripts/check-layering` holds the table and fails on an import to the
//! same or a higher floor:
//!
//! 0. `nic`: the header, every type the files share (the device type, its
//!    private data, a pair's and a stacked device's state, the queues'
//!    structs and counters, the device shape and MTU limits), with `steer`
//!    and `enqueue`, the two steps of every sender.
//! 1. The leaves: `tx_completion` (TX descriptors, their completions, stop
//!    and wake), `personality` (which NIC a device behaves like), `stats`
//!    (qstats and link counters), `xdp` (attaching a program, the frames
//!    programs send).
//! 2. The wires: `rx` (a folder: `mod.rs`, the NAPI poll, frame building,
//!    checksums; `gro.rs`, coalescing; `xdp.rs`, the receive path with a
//!    program; its files import its `mod.rs`, which imports none of them),
//!    `tx` (a pair's transmit), `stacked` (a device on a lower device:
//!    creating it, its lower device's events, receive from and send
//!    through it).
//! 3. `queues`: queue memory over a queue's life and the queue-management
//!    API.
//! 4. The ops: `device` (net device ops, the ops tables), `ethtool`.
//! 5. `pair`: creating a pair, teardown.
//! 6. `link_kind`: what `ip link add` makes, a pair or a stacked device.

pub(crate) mod device;
pub(crate) mod ethtool;
pub(crate) mod link_kind;
pub(crate) mod nic;
pub(crate) mod pair;
pub(crate) mod personality;
pub(crate) mod queues;
pub(crate) mod rx;
pub(crate) mod stacked;
pub(crate) mod stats;
pub(crate) mod tx;
pub(crate) mod tx_completion;
pub(crate) mod xdp;
