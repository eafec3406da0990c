//! ncdevmem-rs: the pieces of a devmem TCP receiver and sender, testable on
//! their own.

#[cfg(test)]
mod c_headers;
pub mod cli;
pub mod client;
pub mod cmsg;
pub mod devmem_client;
pub mod devmem_rx;
pub mod devmem_tx;
pub mod dmabuf;
pub mod ethtool_ioctl;
pub mod ethtool_nl;
pub mod fault;
pub mod hello;
pub mod host_mem;
pub mod netdev;
pub mod netlink;
pub mod nic;
pub mod outcome;
pub mod page_pool_list;
pub mod pattern;
pub mod personality;
pub mod progress;
pub mod rx_server;
pub mod rx_summary;
pub mod selftest;
pub mod send_summary;
pub mod server_nic;
pub mod signals;
pub mod tcp_info;
pub mod token_abuse;
pub mod tokens;
pub mod wire_faults;
pub mod zcrx;
pub mod zcrx_server;
pub mod zerocopy;
