//! Key switches that wait for each other: up to `batch_products` multiplies and their
//! relinearizations, independent and with one key, in one chained launch
//! (`LevelOps::multiply_relinearize_jobs`), and up to `batch_rotations` rotations of CKKS
//! ciphertexts, independent, each with its own galois element and key, in one chained launch
//! (`LevelOps::apply_galois_jobs`).
//!
//! At N = 2^13 a chained key switch fills a few of an H200's compute units and spends half
//! its time in its passes' hand-overs, so one thread's stream of them is bound by one
//! launch's latency, not by the device's throughput or the host's issue. A relinearization
//! that takes a deferred ciphertext product (`deferred.rs`) therefore enqueues nothing
//! where the level chains: it joins its queue's batch; so does a rotation of a ciphertext
//! whose words are computed (not a deferred product or sum, which the rotation reads in its
//! own launch). The batch launches when it holds the setting's jobs, when a job of another
//! kind, level, key or mod-down arrives (the pending ones first), or when anything reaches a
//! pending job's words ([`Ticket::run`], from `GpuImage::words`, the one way to an image's
//! buffer), and at [`SwitchBatch::flush`] (`Backend::synchronize`, the end of a compute
//! frame). The batch holds each job's operands and result buffer until it runs, so a job
//! whose image was dropped or overwritten still runs (and costs what it cost before); none
//! is lost. Each job's words are those of a launch of its own (`tests/ckks_ops.rs`), so
//! SEAL's.
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
use crate::ckks::ops::{LevelOps, Rotation};
use crate::device::Graph;
use crate::error::{Error, Result};

/// One queue's pending key switches.
pub(super) struct SwitchBatch {
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

/// The level and kind of a batch's jobs.
#[derive(Clone)]
struct Shared {
    context: Arc<CkksContext>,
    primes: usize,
    kind: Kind,
}

/// What a launch's jobs have in common beyond their level.
#[derive(Clone)]
pub(super) enum Kind {
    /// Multiplies and relinearizations with one key and mod-down.
    Products {
        key: Arc<KswitchKey>,
        correction: DropCorrection,
    },
    /// CKKS rotations (each with its own key).
    Rotations,
}

impl Shared {
    fn same(&self, other: &Shared) -> bool {
        Arc::ptr_eq(&self.context, &other.context)
            && self.primes == other.primes
            && match (&self.kind, &other.kind) {
                (
                    Kind::Products { key, correction },
                    Kind::Products {
                        key: other_key,
                        correction: other_correction,
                    },
                ) => Arc::ptr_eq(key, other_key) && correction == other_correction,
                (Kind::Rotations, Kind::Rotations) => true,
                _ => false,
            }
    }
}

/// A pending key switch, into `dst`, which the batch holds until it runs.
pub(super) enum Job {
    /// A deferred product of two ciphertexts (SEAL's multiply, or a square) into `dst`'s
    /// three polynomials, then its relinearization into the first two ([`Kind::Products`]).
    Product { dst: Arc<Words>, product: Deferred },
    /// SEAL's apply_galois of the ciphertext `src` (two polynomials in NTT form; with
    /// `plain`, of its product with that plaintext: a deferred multiply_plain) with
    /// `galois_elt` and `key` into `dst` (which may be `src`) ([`Kind::Rotations`]).
    Rotation {
        dst: Arc<Words>,
        src: Arc<Words>,
        plain: Option<Arc<Words>>,
        galois_elt: u32,
        key: Arc<KswitchKey>,
    },
}

/// A job's place in its batch: [`Ticket::run`] runs it (with every job pending beside it)
/// unless it ran already.
#[derive(Clone)]
pub(super) struct Ticket {
    batch: Arc<SwitchBatch>,
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

impl SwitchBatch {
    pub(super) fn new(graph: Graph) -> Arc<SwitchBatch> {
        Arc::new(SwitchBatch {
            graph,
            pending: Mutex::new(Pending::default()),
        })
    }

    /// Adds `job` of `shared`'s level and kind: the pending jobs of another level or kind
    /// run first, and the batch runs once it holds `most` (1 to `KS_JOBS_MAX`). On an
    /// error the batch is as it was before the call, the job not in it.
    fn join(self: &Arc<Self>, shared: Shared, job: Job, most: usize) -> Result<Ticket> {
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

    /// `job` (of `kind`, at a level of `primes` primes) joined as [`SwitchBatch::join`] joins
    /// it, to run at `most` jobs: the deferred work of the image whose words the job
    /// writes. Errors: as [`SwitchBatch::join`]'s (nothing joined).
    pub(super) fn join_deferred(
        self: &Arc<Self>,
        context: Arc<CkksContext>,
        primes: usize,
        kind: Kind,
        job: Job,
        most: usize,
    ) -> Result<Deferred> {
        let shared = Shared {
            context: context.clone(),
            primes,
            kind,
        };
        let ticket = self.join(shared, job, most)?;
        Ok(Deferred::batched(context, primes, ticket))
    }

    /// Enqueues every pending job.
    pub(super) fn flush(&self) -> Result<()> {
        self.launch(&mut self.pending.lock())
    }

    /// Enqueues the pending jobs, if any (at most `KS_JOBS_MAX`: one launch); they are no
    /// longer pending once enqueued. On an error they stay pending.
    fn launch(&self, pending: &mut Pending) -> Result<()> {
        let Some(shared) = &pending.shared else {
            return Ok(());
        };
        let ops = LevelOps::new(&shared.context, &self.graph, shared.primes)?;
        let mixed = || Error::Logic("a batch of key switches of two kinds".into());
        match &shared.kind {
            Kind::Products { key, correction } => {
                let jobs = pending
                    .jobs
                    .iter()
                    .map(|job| {
                        let Job::Product { dst, product } = job else {
                            return Err(mixed());
                        };
                        let (a, b) = product.operands(&self.graph)?;
                        let dst = dst.written_next_on(&self.graph)?;
                        Ok(TensorJob { a, b, dst })
                    })
                    .collect::<Result<Vec<_>>>()?;
                ops.multiply_relinearize_jobs(&jobs, key, *correction)?;
            }
            Kind::Rotations => {
                let rotations = pending
                    .jobs
                    .iter()
                    .map(|job| {
                        let Job::Rotation {
                            dst,
                            src,
                            plain,
                            galois_elt,
                            key,
                        } = job
                        else {
                            return Err(mixed());
                        };
                        Ok(Rotation {
                            src: src.ordered_read(&self.graph)?,
                            plain: plain
                                .as_ref()
                                .map(|p| p.ordered_read(&self.graph))
                                .transpose()?,
                            dst: dst.written_next_on(&self.graph)?,
                            galois_elt: *galois_elt,
                            key,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                ops.apply_galois_jobs(&rotations)?;
            }
        }
        // Outside any operation's issue when run from a use: `synchronize` must wait for
        // this queue too.
        self.graph.note_issued();
        pending.jobs.clear();
        pending.shared = None;
        pending.launches += 1;
        Ok(())
    }
}
