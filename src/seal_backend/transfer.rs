//! The backend's page-locked host memory as SEAL's `seal::gpu::HostMemory` sees it
//! (seal-patch 0007; `RustHostMemory` in ffi/backend.cc). SEAL allocates the words of
//! marked objects through it, so their uploads run without blocking and their downloads
//! land without a staging copy (see `crate::cl::PinnedHost`).

use std::panic::{catch_unwind, AssertUnwindSafe};
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
