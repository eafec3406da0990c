//! Anonymous host memory for a zcrx area (`--zcrx-host-memory`), as
//! upstream's iou-zcrx registers it: io_uring pins the pages, the NIC's
//! payload lands in them, and, unlike a dma-buf area, the kernel may write
//! them itself, so it can copy payload that arrived elsewhere (zcrx's copy
//! fallback; io_uring/zcrx.c, `io_alloc_fallback_niov()`).

use std::io;

/// Page-aligned anonymous memory, mapped for reading and writing.
pub struct HostMem {
    map: *mut u8,
    size: usize,
}

impl HostMem {
    /// Maps `size` bytes (a multiple of the page size), populated.
    pub fn new(size: usize) -> io::Result<Self> {
        if size == 0 || !size.is_multiple_of(crate::dmabuf::page_size()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("host memory of {size} bytes: not whole pages"),
            ));
        }
        // SAFETY: a fresh anonymous mapping; checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            map: map.cast(),
            size,
        })
    }

    /// Where the memory starts, to register.
    pub fn addr(&self) -> u64 {
        self.map as u64
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The `len` bytes at `offset`, or an error if they are outside.
    pub fn bytes(&self, offset: u64, len: usize) -> io::Result<&[u8]> {
        let off =
            usize::try_from(offset).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        if off.checked_add(len).is_none_or(|end| end > self.size) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("chunk {off}+{len} outside the {}-byte area", self.size),
            ));
        }
        // SAFETY: in bounds of the live mapping (checked above), which
        // outlives the borrow; the kernel wrote these bytes before posting
        // the completion that named them, and writes them again only after
        // we give them back.
        Ok(unsafe { std::slice::from_raw_parts(self.map.add(off), len) })
    }
}

impl Drop for HostMem {
    fn drop(&mut self) {
        // SAFETY: our mapping of `size` bytes.
        unsafe { libc::munmap(self.map.cast(), self.size) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_pages_only_and_reads_stay_inside() {
        let page = crate::dmabuf::page_size();
        assert!(HostMem::new(0).is_err());
        assert!(HostMem::new(page + 1).is_err());
        let m = HostMem::new(2 * page).unwrap();
        assert_eq!(m.addr() % page as u64, 0);
        assert_eq!(m.bytes(0, 2 * page).unwrap().len(), 2 * page);
        assert!(m.bytes(page as u64, page + 1).is_err());
        assert!(m.bytes(u64::MAX, 1).is_err());
    }
}
