//! Compute frames and buffer lifetime (after the XeHE paper, III-G).
//!
//! Between `start_compute_frame` and `end_compute_frame` every cached buffer carries a
//! retain bit: a buffer freed inside the frame (a ciphertext going out of scope while
//! its kernels may still run) is parked as ready-to-free instead of going back to the
//! free pool. Ending the frame waits for every queue and only then returns those buffers.
//! Periodic explicit frames therefore act as a garbage collector; a frame that is never
//! ended keeps every buffer freed in it.
//!
//! The SEAL integration opens a frame only when the program asks
//! (`GpuBackend_StartComputeFrame`); `Decryptor::decrypt` ends it. Without one, freed
//! buffers go back to the pool at once, their reuse ordered on the device.
//!
//! Host work never waits inside a frame: starting one, allocating and freeing do not
//! synchronise (pool reuse is ordered on the device, see `crate::memcache`); only
//! `end_compute_frame`, downloads and explicit syncs wait. Unlike XeHE's
//! StartComputeFrame, starting does not synchronise either: retaining only changes what
//! later frees do, and nothing earlier depends on it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::cl::{self, Queue};
use crate::error::Result;
use crate::memcache::Memcache;
use crate::profiler::Profiler;

/// What ending a frame did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameReport {
    /// A frame was open (ending with none open only synchronises).
    pub was_open: bool,
    /// Ready-to-free buffers returned to their pools.
    pub buffers_returned: usize,
    pub bytes_returned: u64,
}

/// The frame state over a set of pools and the queues that use them (one per `Devices`:
/// every tile's pool and queues).
pub struct FrameControl {
    memcaches: Vec<Memcache>,
    queues: Vec<Queue>,
    profiler: Option<Arc<Profiler>>,
    open: AtomicBool,
    /// Serialises start and end so that a frame is opened and closed as a whole.
    transition: Mutex<()>,
}

impl FrameControl {
    /// Frames over `memcaches`, synchronising `queues` at frame end. With a profiler,
    /// frame end also turns its completed events into timestamps.
    pub fn new(
        memcaches: Vec<Memcache>,
        queues: Vec<Queue>,
        profiler: Option<Arc<Profiler>>,
    ) -> FrameControl {
        FrameControl {
            memcaches,
            queues,
            profiler,
            open: AtomicBool::new(false),
            transition: Mutex::new(()),
        }
    }

    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// Opens a frame: every live cached buffer and every one allocated from now on is
    /// retained. Opening an open frame changes nothing.
    pub fn start_compute_frame(&self) {
        let _guard = self.transition.lock();
        if self.open.load(Ordering::Acquire) {
            return;
        }
        let _span = tracing::debug_span!("start_compute_frame").entered();
        for memcache in &self.memcaches {
            memcache.start_frame();
        }
        self.open.store(true, Ordering::Release);
    }

    /// Waits for every queue, then closes the frame: clears the retain bits and returns
    /// the ready-to-free buffers to their pools. If a queue fails to synchronise, the
    /// error is returned and the frame stays open (its buffers stay parked: their
    /// commands may not have finished).
    pub fn end_compute_frame(&self) -> Result<FrameReport> {
        let _guard = self.transition.lock();
        let _span = tracing::debug_span!("end_compute_frame").entered();
        for queue in &self.queues {
            cl::finish(queue)?;
        }
        let was_open = self.open.load(Ordering::Acquire);
        let mut report = FrameReport {
            was_open,
            ..FrameReport::default()
        };
        if was_open {
            for memcache in &self.memcaches {
                let (buffers, bytes) = memcache.end_frame();
                report.buffers_returned += buffers;
                report.bytes_returned += bytes;
            }
            self.open.store(false, Ordering::Release);
        }
        if let Some(profiler) = &self.profiler {
            profiler.resolve_completed();
        }
        tracing::debug!(?report, "compute frame ended");
        Ok(report)
    }
}
