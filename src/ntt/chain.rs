//! Chained passes: two NTT passes that only a kernel boundary kept apart, run as one
//! launch whose work groups hand over through counters in device memory (`opencl/ntt.cl`,
//! "Chained passes"). A launch costs NVIDIA's OpenCL driver ~10 us of host time and each
//! kernel ~6 us of device time before it does any work, so a launch saved is saved twice.
//!
//! The work groups of a chained launch take tickets in the order they start; those of the
//! second pass wait for the groups of the first, which took their tickets earlier and so
//! are running: the wait ends on any device, however few groups it holds at once. The
//! counters are the one piece of state a chained launch leaves for the next: it finds
//! them zero and leaves them zero, so chained launches must never overlap on one set of
//! counters. [`ChainCounters`] belongs to one in-order queue, which runs its launches one
//! after another, and the plan refuses it on any other queue.

use crate::cl::{self, Buffer, Context, DeviceInfoSummary, Queue};
use crate::error::{Error, Result};

/// `SEAL_OPENCL_CHAIN=0` turns chained launches off (each pass its own launch, as on
/// devices without them): the A/B switch of the benchmarks. Default on.
pub const CHAIN_ENV_VAR: &str = "SEAL_OPENCL_CHAIN";

/// The counters of the chained launches of one queue: tickets handed out, first-pass
/// groups done, groups finished (three 32-bit words, zero between launches).
pub struct ChainCounters {
    queue: Queue,
    words: Buffer<u64>,
}

impl ChainCounters {
    /// Zeroed counters for the launches of `queue` (blocking upload), which must run its
    /// commands in order.
    ///
    /// Errors: an out-of-order queue; the device's.
    pub fn new(ctx: &Context, queue: &Queue) -> Result<ChainCounters> {
        if cl::is_out_of_order(queue)? {
            return Err(Error::invalid(
                "chained NTT passes need an in-order queue: their counters pass from one \
                 launch to the next",
            ));
        }
        Ok(ChainCounters {
            queue: queue.clone(),
            words: ctx.upload(queue, &[0, 0])?,
        })
    }

    /// The counters' buffer, for a chained launch on `queue`.
    ///
    /// Errors: `queue` is not the queue the counters were made for.
    pub(super) fn for_queue(&self, queue: &Queue) -> Result<&Buffer<u64>> {
        if !cl::same_queue(&self.queue, queue) {
            return Err(Error::invalid(
                "chained NTT passes: counters made for another queue (two queues' launches \
                 would overlap on them)",
            ));
        }
        Ok(&self.words)
    }
}

/// Whether chained launches are built for `info`'s device: where the kernel knows a fence
/// that orders one work group's stores before another's loads (PTX's `membar.gl` on
/// NVIDIA; a CPU device's threads share coherent memory). Elsewhere OpenCL 1.2 promises
/// that order only between launches, and every pass keeps its own.
pub(super) fn chain_fence(info: &DeviceInfoSummary) -> Option<ChainFence> {
    if info.vendor.to_ascii_lowercase().contains("nvidia") {
        Some(ChainFence::Ptx)
    } else if info.is_cpu {
        Some(ChainFence::Cpu)
    } else {
        None
    }
}

/// How a chained kernel orders memory across work groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ChainFence {
    Ptx,
    Cpu,
}

impl ChainFence {
    /// The build option that selects the fence in ntt.cl.
    pub(super) fn build_option(self) -> &'static str {
        match self {
            ChainFence::Ptx => " -D DEVICE_FENCE_PTX",
            ChainFence::Cpu => "",
        }
    }
}
