//! Relinearizations that wait for each other: up to `batch_products` multiplies and their
//! relinearizations, independent and with one key, in one chained launch
//! (`LevelOps::multiply_relinearize_jobs`).
//!
//! At N = 2^13 a chained multiply-and-relinearize fills a few of an H200's compute units
//! and spends half its time in its passes' hand-overs, so one thread's MulLin stream is
//! bound by one launch's latency, not by the device's throughput or the host's issue. A
//! relinearization that takes a deferred ciphertext product (`deferred.rs`) therefore
//! enqueues nothing either where the level chains: it joins its queue's batch, and the
//! batch launches when it holds `batch_products` jobs, when a job of another level or key
//! arrives (the pending ones first), or when anything reaches a pending job's words
//! ([`Ticket::run`], from `GpuImage::words`, the one way to an image's buffer), and at
//! [`ProductBatch::flush`] (`Backend::synchronize`, the end of a compute frame). The
//! batch holds each job's operands and result buffer until it runs, so a job whose image
//! was dropped or overwritten still runs (and costs what it cost before); none is lost.
//! Each job's words are those of a launch of its own (`tests/ckks_ops.rs`), so SEAL's.
//!
//! The batch belongs to one queue of one tile; a job joins it from the issuing thread
//! (which holds the queue's issue lock); a pending job may run from any thread, like any
//! deferred work, on the batch's queue.

use std::sync::Arc;

use parking_lot::Mutex;

use super::deferred::Deferred;
use super::image::Words;
use crate::ckks::context::{CkksContext, KswitchKey};
use crate::ckks::fused::{DropCorrection, TensorJob};
use crate::ckks::ops::LevelOps;
use crate::device::Graph;
use crate::error::Result;

/// One queue's pending multiplies and relinearizations.
pub(super) struct ProductBatch {
    graph: Graph,
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    /// Launches so far: a job that joined when this was n has run once it passed n.
    launches: u64,
    /// What every pending job shares; None while none is pending.
    shared: Option<Shared>,
    jobs: Vec<Job>,
}

/// The level, key and mod-down of a batch's jobs.
#[derive(Clone)]
pub(super) struct Shared {
    pub context: Arc<CkksContext>,
    pub primes: usize,
    pub key: Arc<KswitchKey>,
    pub correction: DropCorrection,
}

impl Shared {
    fn same(&self, other: &Shared) -> bool {
        Arc::ptr_eq(&self.context, &other.context)
            && self.primes == other.primes
            && Arc::ptr_eq(&self.key, &other.key)
            && self.correction == other.correction
    }
}

/// A deferred product of two ciphertexts (SEAL's multiply, or a square) into `dst`'s three
/// polynomials, then its relinearization into the first two.
pub(super) struct Job {
    pub dst: Arc<Words>,
    pub product: Deferred,
}

/// A job's place in its batch: [`Ticket::run`] runs it (with every job pending beside it)
/// unless it ran already.
#[derive(Clone)]
pub(super) struct Ticket {
    batch: Arc<ProductBatch>,
    launch: u64,
}

impl Ticket {
    /// Enqueues the job's batch if the job is still pending. On an error every pending job
    /// stays pending, so a later use tries again.
    pub(super) fn run(&self) -> Result<()> {
        let mut pending = self.batch.pending.lock();
        if pending.launches == self.launch {
            self.batch.launch(&mut pending)?;
        }
        Ok(())
    }

    /// The batch's queue (for the image's deferred work).
    pub(super) fn graph(&self) -> &Graph {
        &self.batch.graph
    }
}

impl ProductBatch {
    pub(super) fn new(graph: Graph) -> Arc<ProductBatch> {
        Arc::new(ProductBatch {
            graph,
            pending: Mutex::new(Pending::default()),
        })
    }

    /// Adds `job` of `shared`'s level and key: the pending jobs of another level or key run
    /// first, and the batch runs once it holds `most` (1 to `TENSOR_JOBS_MAX`). On an error
    /// the batch is as it was before the call, the job not in it.
    pub(super) fn join(self: &Arc<Self>, shared: Shared, job: Job, most: usize) -> Result<Ticket> {
        let mut pending = self.pending.lock();
        if pending.shared.as_ref().is_some_and(|s| !s.same(&shared)) {
            self.launch(&mut pending)?;
        }
        pending.shared = Some(shared);
        pending.jobs.push(job);
        let ticket = Ticket {
            batch: self.clone(),
            launch: pending.launches,
        };
        if pending.jobs.len() >= most {
            if let Err(e) = self.launch(&mut pending) {
                pending.jobs.pop();
                if pending.jobs.is_empty() {
                    pending.shared = None;
                }
                return Err(e);
            }
        }
        Ok(ticket)
    }

    /// Enqueues every pending job.
    pub(super) fn flush(&self) -> Result<()> {
        self.launch(&mut self.pending.lock())
    }

    /// Enqueues the pending jobs, if any (at most `TENSOR_JOBS_MAX`: one launch); they are
    /// no longer pending once enqueued. On an error they stay pending.
    fn launch(&self, pending: &mut Pending) -> Result<()> {
        let Some(shared) = &pending.shared else {
            return Ok(());
        };
        let ops = LevelOps::new(&shared.context, &self.graph, shared.primes)?;
        let jobs = pending
            .jobs
            .iter()
            .map(|job| {
                let (a, b) = job.product.operands(&self.graph)?;
                let dst = job.dst.written_next_on(&self.graph)?;
                Ok(TensorJob { a, b, dst })
            })
            .collect::<Result<Vec<_>>>()?;
        ops.multiply_relinearize_jobs(&jobs, &shared.key, shared.correction)?;
        // Outside any operation's issue when run from a use: `synchronize` must wait for
        // this queue too.
        self.graph.note_issued();
        pending.jobs.clear();
        pending.shared = None;
        pending.launches += 1;
        Ok(())
    }
}
