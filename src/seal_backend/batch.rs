//! Key switches that wait for each other: up to `batch_products` multiplies and their
//! relinearizations, with one key (`LevelOps::multiply_relinearize_jobs`), and up to
//! `batch_rotations` rotations of CKKS ciphertexts, each with its own galois element and
//! key (`LevelOps::apply_galois_jobs`), in one chained launch, or in one launch per fused
//! pass where the level does not chain.
//!
//! At N = 2^13 a chained key switch fills a few of an H200's compute units and spends half
//! its time in its passes' hand-overs, so one thread's stream of them is bound by one
//! launch's latency, not by the device's throughput or the host's issue; at 2^15, where
//! key switches run as five launches, the host's enqueues (about 100k a second a process)
//! bound key switches from several threads, on two GPUs most. Wherever the level's key
//! switches run on the fused passes, a relinearization that takes a deferred ciphertext
//! product (`deferred.rs`) therefore enqueues nothing: it joins its queue's batch; so does
//! a rotation of a ciphertext whose words are computed (not a deferred sum, which the
//! rotation reads in its own launch), or pending in the batch, or a deferred plaintext
//! product.
//!
//! The batch is a sequence of waves, each one launch of independent jobs. A job goes into
//! the first wave after the waves that write its inputs (the words of a pending job: the
//! next NAF step of a rotation, a rotation of a product of a pending rotation) that has
//! room, else into a new last wave; waves launch in order on the batch's queue, so a job
//! reads what the waves before it wrote. The first wave launches once it holds the
//! setting's jobs or more than `batch_waves` waves wait; every wave up to a job's launches
//! when anything reaches the job's words: its image's (`Ticket::run`, from
//! `GpuImage::words`, the one way to an image's buffer), or the words themselves, which
//! carry their wave (`WaveMark`, settled by `Words::ordered_read`) when a sum takes them as
//! a term or a product as a factor; and every wave at [`SwitchBatch::flush`]
//! (`Backend::synchronize`, the end of a compute frame). A job of another kind, level, key
//! or mod-down runs the pending ones first. TenSEAL's matrix products rotate each diagonal
//! by a few NAF steps and add it into an accumulator: the diagonals' first steps share a
//! wave, their second steps the next.
//!
//! The batch holds each job's operands and result buffer until it runs, so a job whose
//! image was dropped or overwritten still runs (and costs what it cost before); none is
//! lost. Each job's words are those of a launch of its own (`tests/ckks_ops.rs`), so
//! SEAL's.
//!
//! The batch belongs to one queue of one tile; a job joins it from the issuing thread
//! (which holds the queue's issue lock); a pending wave may run from any thread, like any
//! deferred work, on the batch's queue. A job's inputs pending in another batch are
//! enqueued there before it joins, so a launch reads only words whose writers were
//! enqueued before it, and never waits for another batch's lock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use super::deferred::Deferred;
use super::image::Words;
use crate::ckks::context::{CkksContext, KswitchKey};
use crate::ckks::fused::{DropCorrection, TensorJob};
use crate::ckks::ops::{LevelOps, Rotation};
use crate::device::Graph;
use crate::error::{Error, Result};

/// How full a batch gets: jobs a wave (1 to `KS_JOBS_MAX`: the first wave launches when it
/// holds this many) and waves (at least 1: a job that would make more launches the first
/// wave; with 1, a job whose input is pending runs the batch first).
#[derive(Clone, Copy, Debug)]
pub(super) struct Room {
    pub jobs: usize,
    pub waves: usize,
}

/// One queue's pending key switches.
pub(super) struct SwitchBatch {
    graph: Graph,
    /// Waves enqueued so far: wave w has been enqueued once this passed w. Written under
    /// `pending`'s lock, read without it ([`WaveMark::settle`]).
    launched: AtomicU64,
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    /// What every pending job shares; None while none is pending.
    shared: Option<Shared>,
    /// The pending waves in launch order, the first wave number `launched`; each holds 1 to
    /// the setting's jobs, none of which reads words another job of its wave writes.
    waves: VecDeque<Vec<Job>>,
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

impl Job {
    /// The words the job writes.
    fn dst(&self) -> &Arc<Words> {
        match self {
            Job::Product { dst, .. } | Job::Rotation { dst, .. } => dst,
        }
    }

    /// The words the job reads.
    fn inputs(&self) -> Vec<&Arc<Words>> {
        match self {
            Job::Product { product, .. } => product.factors(),
            Job::Rotation { src, plain, .. } => std::iter::once(src).chain(plain).collect(),
        }
    }
}

/// A job's place in its batch: [`Ticket::run`] enqueues its wave (and every wave before it)
/// unless that ran already.
#[derive(Clone)]
pub(super) struct Ticket {
    batch: Arc<SwitchBatch>,
    wave: u64,
}

impl Ticket {
    /// Enqueues the job's wave and those before it, if still pending. On an error the
    /// waves not enqueued stay pending, so a later use tries again.
    pub(super) fn run(&self) -> Result<()> {
        self.batch.run_through(self.wave)
    }

    /// The batch's queue (for the image's deferred work).
    pub(super) fn graph(&self) -> &Graph {
        &self.batch.graph
    }

    /// The mark of the job's wave that its destination's words carry.
    fn mark(&self) -> WaveMark {
        WaveMark {
            batch: Arc::downgrade(&self.batch),
            wave: self.wave,
        }
    }
}

/// The wave of a batch that writes a pending job's destination words, which they carry
/// (`Words::ordered_read` settles it before any read): a sum's term, a product's factor or
/// another job's source may take such words while the job is pending. Weak: the words do
/// not keep the batch (which holds them) alive.
#[derive(Clone, Debug)]
pub(super) struct WaveMark {
    batch: Weak<SwitchBatch>,
    wave: u64,
}

impl WaveMark {
    /// Enqueues the wave and those before it, if still pending (a batch that is gone ran
    /// them). On an error they stay pending.
    pub(super) fn settle(&self) -> Result<()> {
        match self.batch.upgrade() {
            Some(batch) => batch.run_through(self.wave),
            None => Ok(()),
        }
    }

    fn of(&self, batch: &Arc<SwitchBatch>) -> bool {
        std::ptr::eq(self.batch.as_ptr(), Arc::as_ptr(batch))
    }
}

impl SwitchBatch {
    pub(super) fn new(graph: Graph) -> Arc<SwitchBatch> {
        Arc::new(SwitchBatch {
            graph,
            launched: AtomicU64::new(0),
            pending: Mutex::new(Pending::default()),
        })
    }

    /// Adds `job` of `shared`'s level and kind to the first wave after those writing its
    /// inputs that has room for it (`room.jobs`), a new last wave if none has: the pending
    /// jobs of another level or kind run first, inputs that another batch writes are
    /// enqueued there first (so a launch never waits for another batch), and then the
    /// first wave runs while it is full or while there are more than `room.waves`. On an
    /// error that leaves the job pending, the batch is as it was before the call, the job
    /// not in it; an error of a wave after the job's leaves that wave pending (its jobs'
    /// uses try again) and the job joined.
    fn join(self: &Arc<Self>, shared: Shared, job: Job, room: Room) -> Result<Ticket> {
        let mut after = None;
        for words in job.inputs() {
            match words.writer() {
                Some(mark) if mark.of(self) => after = after.max(Some(mark.wave)),
                Some(mark) => mark.settle()?,
                None => {}
            }
        }
        let mut pending = self.pending.lock();
        if pending.shared.as_ref().is_some_and(|s| !s.same(&shared)) {
            self.launch_through(&mut pending, u64::MAX)?;
        }
        let launched = self.launched.load(Ordering::Acquire);
        let waves = &mut pending.waves;
        let first = after.map_or(0, |w| (w + 1).saturating_sub(launched) as usize);
        let first = first.min(waves.len());
        let index = (first..waves.len())
            .find(|&i| waves[i].len() < room.jobs)
            .unwrap_or(waves.len());
        if index == waves.len() {
            waves.push_back(Vec::new());
        }
        let dst = job.dst().clone();
        waves[index].push(job);
        pending.shared = Some(shared);
        let ticket = Ticket {
            batch: self.clone(),
            wave: launched + index as u64,
        };
        let previous = dst.set_writer(Some(ticket.mark()));
        while pending.waves.len() > room.waves
            || pending.waves.front().is_some_and(|w| w.len() >= room.jobs)
        {
            if let Err(e) = self.launch_front(&mut pending) {
                if self.launched.load(Ordering::Acquire) > ticket.wave {
                    break;
                }
                // The job's wave is still pending and the job its last (no job joined
                // after it, and none can read its words yet).
                let i = (ticket.wave - self.launched.load(Ordering::Acquire)) as usize;
                pending.waves[i].pop();
                if pending.waves[i].is_empty() {
                    pending.waves.remove(i);
                }
                if pending.waves.is_empty() {
                    pending.shared = None;
                }
                dst.set_writer(previous);
                return Err(e);
            }
        }
        Ok(ticket)
    }

    /// `job` (of `kind`, at a level of `primes` primes) joined as [`SwitchBatch::join`] joins
    /// it, as full as `room`: the deferred work of the image whose words the job writes.
    /// Errors: as [`SwitchBatch::join`]'s.
    pub(super) fn join_deferred(
        self: &Arc<Self>,
        context: Arc<CkksContext>,
        primes: usize,
        kind: Kind,
        job: Job,
        room: Room,
    ) -> Result<Deferred> {
        let shared = Shared {
            context: context.clone(),
            primes,
            kind,
        };
        let ticket = self.join(shared, job, room)?;
        Ok(Deferred::batched(context, primes, ticket))
    }

    /// Enqueues every pending wave.
    pub(super) fn flush(&self) -> Result<()> {
        self.launch_through(&mut self.pending.lock(), u64::MAX)
    }

    /// Enqueues the pending waves up to `wave`, if any is still pending.
    fn run_through(&self, wave: u64) -> Result<()> {
        if self.launched.load(Ordering::Acquire) > wave {
            return Ok(());
        }
        self.launch_through(&mut self.pending.lock(), wave)
    }

    /// Enqueues the pending waves up to `wave`, first to last. On an error the waves not
    /// enqueued stay pending.
    fn launch_through(&self, pending: &mut Pending, wave: u64) -> Result<()> {
        while self.launched.load(Ordering::Acquire) <= wave && !pending.waves.is_empty() {
            self.launch_front(pending)?;
        }
        Ok(())
    }

    /// Enqueues the first pending wave (at most `KS_JOBS_MAX` jobs: one launch, or one per
    /// fused pass); its jobs
    /// are no longer pending once enqueued. Their inputs' writers were enqueued before (in
    /// an earlier wave of this batch, or at the join), or are the job itself (a rotation in
    /// place, which reads its words before it writes them), so the launch reads them as
    /// they are and waits for no batch. On an error the wave stays pending.
    fn launch_front(&self, pending: &mut Pending) -> Result<()> {
        let (Some(shared), Some(wave)) = (&pending.shared, pending.waves.front()) else {
            return Ok(());
        };
        let ops = LevelOps::new(&shared.context, &self.graph, shared.primes)?;
        let mixed = || Error::Logic("a batch of key switches of two kinds".into());
        match &shared.kind {
            Kind::Products { key, correction } => {
                let jobs = wave
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
                let rotations = wave
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
                            src: src.read_in_wave(&self.graph)?,
                            plain: plain
                                .as_ref()
                                .map(|p| p.read_in_wave(&self.graph))
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
        pending.waves.pop_front();
        if pending.waves.is_empty() {
            pending.shared = None;
        }
        self.launched.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }
}
