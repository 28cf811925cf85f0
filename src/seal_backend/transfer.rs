//! The backend's page-locked host memory as SEAL's `seal::gpu::HostMemory` sees it
//! (seal-patch 0007; `RustHostMemory` in ffi/residency.cc). SEAL allocates the words of
//! marked objects through it, so their uploads run without blocking and their downloads
//! land without a staging copy (see `crate::cl::PinnedHost`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::cl::PinnedHost;

/// A handle to the pool, held by SEAL's `HostPool` (and so by every allocation in it): the
/// memory outlives the backend when SEAL objects do.
pub struct PinnedHostRef(Arc<PinnedHost>);

impl PinnedHostRef {
    pub fn new(pinned: Arc<PinnedHost>) -> PinnedHostRef {
        PinnedHostRef(pinned)
    }

    /// The address of `bytes` page-locked bytes, or 0 when there are none to give (SEAL
    /// then allocates pageable memory). Never panics across the bridge: a panic is 0 too.
    pub fn allocate(&self, bytes: usize) -> usize {
        catch_unwind(AssertUnwindSafe(|| self.0.allocate(bytes)))
            .ok()
            .flatten()
            .unwrap_or(0)
    }

    /// Takes back an address from `allocate` (waits for uploads still reading it).
    pub fn deallocate(&self, address: usize) {
        if catch_unwind(AssertUnwindSafe(|| self.0.deallocate(address))).is_err() {
            tracing::error!("panic while freeing page-locked host memory (the block is lost)");
        }
    }
}

/// The backend's transfers and allocations since it was made, every thread's: the host's
/// costly calls into the driver ([`crate::seal_backend::Backend::traffic`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Requests for a buffer the pools had no free one for (first uses), summed over tiles.
    pub pool_misses: u64,
    /// Device allocations from the driver (slabs, buffers of their own), summed over tiles.
    pub device_allocations: u64,
    /// Page-locked host blocks allocated from the driver.
    pub pinned_allocations: u64,
    /// Asynchronous uploads from page-locked words, and their bytes.
    pub pinned_uploads: u64,
    pub pinned_upload_bytes: u64,
    /// Blocking uploads from pageable words, and their bytes.
    pub pageable_uploads: u64,
    pub pageable_upload_bytes: u64,
    /// Downloads, and their bytes.
    pub downloads: u64,
    pub download_bytes: u64,
    /// SEAL's copies of device objects (`clone_image`): they share the words until one
    /// side writes.
    pub image_copies: u64,
    /// Whole images copied on the device (a write to shared words, a move between tiles),
    /// by every backend of the process.
    pub device_copies: u64,
}

/// The counters behind [`Traffic`] that the backend keeps itself (the pools count their
/// allocations); relaxed atomics, so threads count without a lock.
#[derive(Debug, Default)]
pub(crate) struct TransferCounters {
    pinned_uploads: AtomicU64,
    pinned_upload_bytes: AtomicU64,
    pageable_uploads: AtomicU64,
    pageable_upload_bytes: AtomicU64,
    downloads: AtomicU64,
    download_bytes: AtomicU64,
    image_copies: AtomicU64,
}

fn count(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

fn bytes(words: usize) -> u64 {
    words as u64 * std::mem::size_of::<u64>() as u64
}

impl TransferCounters {
    /// An upload of `words` words, from page-locked words (`pinned`) or pageable ones.
    pub(crate) fn upload(&self, words: usize, pinned: bool) {
        if pinned {
            count(&self.pinned_uploads, 1);
            count(&self.pinned_upload_bytes, bytes(words));
        } else {
            count(&self.pageable_uploads, 1);
            count(&self.pageable_upload_bytes, bytes(words));
        }
    }

    pub(crate) fn download(&self, words: usize) {
        count(&self.downloads, 1);
        count(&self.download_bytes, bytes(words));
    }

    pub(crate) fn image_copy(&self) {
        count(&self.image_copies, 1);
    }

    /// The counts, with the allocations the pools counted.
    pub(crate) fn read(
        &self,
        pool_misses: u64,
        device_allocations: u64,
        pinned_allocations: u64,
        device_copies: u64,
    ) -> Traffic {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Traffic {
            pool_misses,
            device_allocations,
            pinned_allocations,
            pinned_uploads: get(&self.pinned_uploads),
            pinned_upload_bytes: get(&self.pinned_upload_bytes),
            pageable_uploads: get(&self.pageable_uploads),
            pageable_upload_bytes: get(&self.pageable_upload_bytes),
            downloads: get(&self.downloads),
            download_bytes: get(&self.download_bytes),
            image_copies: get(&self.image_copies),
            device_copies,
        }
    }
}
