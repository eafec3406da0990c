//! dma-bufs for devmem: from udmabuf (memfd pages) or a dma-heap.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const UDMABUF_CREATE: libc::c_ulong = 0x4018_7542;
const UDMABUF_FLAGS_CLOEXEC: u32 = 1;
const DMA_HEAP_IOCTL_ALLOC: libc::c_ulong = 0xc018_4800;
const DMA_BUF_IOCTL_SYNC: libc::c_ulong = 0x4008_6200;
const DMA_BUF_SYNC_READ: u64 = 1;
const DMA_BUF_SYNC_WRITE: u64 = 2;
const DMA_BUF_SYNC_START: u64 = 0;
const DMA_BUF_SYNC_END: u64 = 4;

/// Where the dma-buf's memory comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// `/dev/udmabuf` over a memfd (what upstream ncdevmem uses).
    Udmabuf,
    /// `/dev/dma_heap/system`.
    DmaHeap,
}

impl std::str::FromStr for Provider {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "udmabuf" => Ok(Provider::Udmabuf),
            "dma-heap" | "dmaheap" => Ok(Provider::DmaHeap),
            _ => Err(format!(
                "unknown dma-buf provider '{s}' (udmabuf, dma-heap)"
            )),
        }
    }
}

#[repr(C)]
struct UdmabufCreate {
    memfd: u32,
    flags: u32,
    offset: u64,
    size: u64,
}

#[repr(C)]
struct HeapAlloc {
    len: u64,
    fd: u32,
    fd_flags: u32,
    heap_flags: u64,
}

/// A dma-buf mapped for reading and writing.
pub struct Dmabuf {
    fd: OwnedFd,
    _memfd: Option<OwnedFd>,
    map: *mut u8,
    size: usize,
}

fn open_dev(path: &str, what: &str) -> io::Result<std::fs::File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot open {path} ({what}): {e}")))
}

/// The size of a page here.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).unwrap_or(4096)
}

/// 2 MiB huge pages, what upstream's 7.3 ncdevmem backs its udmabuf with
/// when it binds with buffers larger than a page.
pub const HUGE_PAGE: usize = 2 << 20;

impl Dmabuf {
    /// Allocates `size` bytes (a multiple of the page size) and maps them.
    pub fn new(provider: Provider, size: usize) -> io::Result<Self> {
        Self::with_backing(provider, size, false)
    }

    /// As [`Dmabuf::new`]; with `huge`, the udmabuf's memfd is backed by
    /// 2 MiB huge pages (hugetlbfs; `size` rounded up to whole ones), so that
    /// every buffer of a power-of-two size up to 2 MiB is physically
    /// contiguous: what binding with a larger rx-page-size (Linux 7.3) or a
    /// zcrx area with large buffers needs of the dma-buf's pages.
    pub fn with_backing(provider: Provider, size: usize, huge: bool) -> io::Result<Self> {
        let size = if huge {
            size.next_multiple_of(HUGE_PAGE)
        } else {
            size
        };
        let (fd, memfd) = match provider {
            Provider::Udmabuf => {
                let name = c"ncdevmem-rs";
                let flags = if huge {
                    libc::MFD_ALLOW_SEALING | libc::MFD_HUGETLB | libc::MFD_HUGE_2MB
                } else {
                    libc::MFD_ALLOW_SEALING
                };
                // SAFETY: a NUL-terminated name.
                let m = unsafe { libc::memfd_create(name.as_ptr(), flags) };
                if m < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: a fresh fd we own.
                let memfd = unsafe { OwnedFd::from_raw_fd(m) };
                // SAFETY: valid fd.
                if unsafe { libc::ftruncate(m, size as i64) } < 0 {
                    return Err(io::Error::last_os_error());
                }
                if huge {
                    // hugetlbfs takes its pages at fault time and SIGBUSes
                    // when none is left: reserve them all now, with an error
                    // that says what is missing.
                    // SAFETY: valid fd; a range inside the file's size.
                    let r = unsafe { libc::fallocate(m, 0, 0, size as i64) };
                    if r < 0 {
                        let e = io::Error::last_os_error();
                        return Err(io::Error::new(
                            e.kind(),
                            format!(
                                "{} huge pages of 2 MiB for the dma-buf: {e} (reserve them: sysctl vm.nr_hugepages)",
                                size / HUGE_PAGE
                            ),
                        ));
                    }
                }
                // SAFETY: valid fd; udmabuf needs the size sealed against shrinking.
                if unsafe { libc::fcntl(m, libc::F_ADD_SEALS, libc::F_SEAL_SHRINK) } < 0 {
                    return Err(io::Error::last_os_error());
                }
                let dev = open_dev("/dev/udmabuf", "CONFIG_UDMABUF")?;
                let req = UdmabufCreate {
                    memfd: m as u32,
                    flags: UDMABUF_FLAGS_CLOEXEC,
                    offset: 0,
                    size: size as u64,
                };
                // SAFETY: valid fd and request struct for this ioctl.
                let fd = unsafe { libc::ioctl(dev.as_raw_fd(), UDMABUF_CREATE, &req) };
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: the ioctl returned a new fd we own.
                (unsafe { OwnedFd::from_raw_fd(fd) }, Some(memfd))
            }
            Provider::DmaHeap if huge => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "buffers larger than a page need a hugetlb-backed udmabuf (--provider udmabuf)",
                ))
            }
            Provider::DmaHeap => {
                let heap = open_dev("/dev/dma_heap/system", "CONFIG_DMABUF_HEAPS_SYSTEM")?;
                let mut req = HeapAlloc {
                    len: size as u64,
                    fd: 0,
                    fd_flags: (libc::O_RDWR | libc::O_CLOEXEC) as u32,
                    heap_flags: 0,
                };
                // SAFETY: valid fd and request struct for this ioctl.
                if unsafe { libc::ioctl(heap.as_raw_fd(), DMA_HEAP_IOCTL_ALLOC, &mut req) } < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: the ioctl returned a new fd we own.
                (unsafe { OwnedFd::from_raw_fd(req.fd as i32) }, None)
            }
        };
        // SAFETY: mapping the dma-buf shared; unmapped on drop.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            fd,
            _memfd: memfd,
            map: map.cast(),
            size,
        })
    }

    /// The dma-buf fd, to bind.
    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    fn sync(&self, flags: u64) -> io::Result<()> {
        // SAFETY: valid fd; the argument is a `struct dma_buf_sync` (one u64).
        if unsafe { libc::ioctl(self.fd.as_raw_fd(), DMA_BUF_IOCTL_SYNC, &flags) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Runs `f` with read access to the mapping, bracketed by one pair of
    /// `DMA_BUF_IOCTL_SYNC` calls (a sync walks the whole buffer: one pair per
    /// batch of frags, not per frag).
    pub fn read_session<R>(&self, f: impl FnOnce(&Reader<'_>) -> R) -> io::Result<R> {
        self.sync(DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ)?;
        let r = f(&Reader { buf: self });
        self.sync(DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ)?;
        Ok(r)
    }
}

impl Dmabuf {
    /// Copies `data` into the buffer at `offset` (what a GPU kernel would have
    /// produced before a devmem TX send), bracketed by a write sync.
    pub fn write_at(&self, offset: usize, data: &[u8]) -> io::Result<()> {
        if offset
            .checked_add(data.len())
            .is_none_or(|end| end > self.size)
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} bytes at {offset} do not fit the {}-byte dma-buf",
                    data.len(),
                    self.size
                ),
            ));
        }
        self.sync(DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE)?;
        // SAFETY: in bounds of the live, writable mapping (checked above).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.map.add(offset), data.len()) };
        self.sync(DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE)
    }
}

/// Read access to a dma-buf inside [`Dmabuf::read_session`].
pub struct Reader<'a> {
    buf: &'a Dmabuf,
}

impl Reader<'_> {
    /// The `len` bytes at `offset`, or an error if they are outside the buffer.
    pub fn bytes(&self, offset: u64, len: usize) -> io::Result<&[u8]> {
        let off =
            usize::try_from(offset).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        if off.checked_add(len).is_none_or(|end| end > self.buf.size) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("frag {off}+{len} outside the dma-buf"),
            ));
        }
        // SAFETY: in bounds of the live mapping (checked above), which outlives `self`.
        Ok(unsafe { std::slice::from_raw_parts(self.buf.map.add(off), len) })
    }
}

impl Drop for Dmabuf {
    fn drop(&mut self) {
        // SAFETY: our mapping of `size` bytes.
        unsafe { libc::munmap(self.map.cast(), self.size) };
    }
}
