// SPDX-License-Identifier: GPL-2.0

//! The virtual NIC, in safe Rust on the abstraction layer, one concern a file:
//! `nic` (the shared types: the device type, its private data, a pair's
//! state), `pair` (creating a pair, teardown), `device` (net device
//! ops), `tx` (transmit and steering), `rx` (RX queues and their NAPI poll:
//! header split, the "DMA"), `rx_gro` (the aggregates of receive
//! coalescing), `xdp` and `rx_xdp` (native XDP: attaching, and the receive
//! path a program runs in), `queues` (queue memory and the queue-management
//! API), `ethtool` (handlers), `personality` (which NIC a device behaves
//! like), `stats` (qstats and link counters).

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
