//! ncdevmem-rs: the pieces of a devmem TCP receiver, testable on their own.

pub mod cmsg;
pub mod dmabuf;
pub mod netlink;
pub mod pattern;
pub mod tokens;
