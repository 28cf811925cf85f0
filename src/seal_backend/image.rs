//! The device image of one SEAL Ciphertext or Plaintext: a pooled buffer and the number of
//! words SEAL's metadata says it holds (the buffer may be larger: pooled buffers are
//! reused for smaller requests, and an image shrinks without copying when polynomials or
//! a plaintext's last prime are dropped).
//!
//! An image also knows what the host knows of its words ([`Known`]: zeros uploaded, or
//! derived by the operation that wrote them), which answers SEAL's transparency check at the
//! call where it can (see `transparency.rs`), and remembers a pending transparency check:
//! SEAL asked whether the result it holds is transparent, and the backend answered without
//! waiting for the device. The answer is needed only when the words reach the host, and every
//! way they can (a host read, save, decrypt, a copy's download) goes through a download of
//! this image or of a copy, which carries the check: the download tests the words it brought
//! over.
//!
//! Threads issue on queues of their own, and an image can be used from several (a result
//! handed to another thread, a plaintext shared by many): every use goes through
//! [`GpuImage::read_on`] or [`GpuImage::write_on`], which order it behind the uses of
//! other queues ([`BufferUses`]); when the buffer goes back to the pool, the uses on
//! queues other than the one it was handed out for go with it, so its next holder waits
//! for them too.
//!
//! A copy of an image (SEAL's copy of a device object) shares its buffer ([`Words`]) until
//! one of them writes (copy on write): a copy costs neither an allocation nor a launch, and
//! SEAL's out-of-place calls (a copy, then the in-place operation on it) cost what the
//! operation costs. An operation that writes a new buffer anyway (multiply, rescale, mod
//! switch) reads the shared words; one that can run out of place (negate, add, sub,
//! multiply_plain, apply_galois) reads them and writes a new buffer
//! ([`GpuImage::rewrite_on`]); the others copy them first ([`GpuImage::write_on`]).
//!
//! An image lives on one tile: its buffer comes from that tile's pool. An operation issued
//! on another tile (the issuing thread's) moves it there on the device, ordered behind its
//! last writer like any use on another queue (the tiles share one OpenCL context, so the
//! markers and the copy cross tiles): an operand the operation writes moves for good (a
//! copy into a buffer of the issuing tile's pool becomes the image's), one it only reads is
//! copied into a temporary of that pool for the operation ([`Operand`]). On the image's
//! own tile none of this costs more than comparing two numbers.
//!
//! An upload from page-locked words (`PinnedHost`) returns before the copy finished; the
//! image keeps its event so that the SEAL object waits for it before a host write
//! (`wait_upload`, seal-patch 0007).
//!
//! A product or a sum may be deferred ([`Deferred`]): the image holds the buffer its words go
//! to and what computes them. Every way to its words goes through [`GpuImage::words`], which
//! runs it first; a relinearization takes a ciphertext product instead, and a rotation a
//! plaintext one ([`GpuImage::consume_deferred`]), and runs the two in one launch; an add
//! into an accumulator records a term of its deferred sum ([`GpuImage::add_to_sum`]), the
//! term a ciphertext's words or a plaintext product's factors ([`GpuImage::sum_term`]).
//! A key switch that waits in its queue's batch (`batch.rs`) is such deferred work too, and
//! its words carry the batch's wave that writes them ([`Words::ordered_read`] enqueues it
//! first): a product, a sum or another key switch of the batch takes them as they are
//! ([`GpuImage::shared_words`]) and leaves the key switch pending.

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::ckks::context::CkksContext;
use crate::ckks::fused::{Sources, SOURCE_TERMS_MAX};
use crate::ckks::kernels::SUM_TERMS_MAX;
use crate::ckks::ops::LevelOps;
use crate::ckks::SumTerm;
use crate::cl::{Event, PinnedHost, Region};
use crate::device::{BufferUses, Graph};
use crate::error::{Error, Result};
use crate::memcache::PoolBuffer;
use crate::ntt::NttDirection;

use super::batch::WaveMark;
use super::deferred::{Deferred, Term};
use super::transparency::{Known, Zeros};

/// SEAL's message for a transparent result.
const TRANSPARENT: &str = "result ciphertext is transparent";

/// Whole images copied on the device so far, in every backend of the process: a write to
/// words a copy shares, or a move to another tile.
static DEVICE_COPIES: AtomicU64 = AtomicU64::new(0);

/// Whole images the device copied so far (see `DEVICE_COPIES`).
pub(crate) fn device_copies() -> u64 {
    DEVICE_COPIES.load(Ordering::Relaxed)
}

/// Owned by exactly one SEAL object through the bridge (`rust::Box<GpuImage>`). Dropping
/// it returns the buffer to its pool (parked until the frame ends if a frame retains it)
/// unless a copy still shares it.
#[derive(Debug, Default)]
pub struct GpuImage {
    /// Shared with the image's copies until one of them writes.
    words: Option<Arc<Words>>,
    len: usize,
    /// What the host knows of the words: set by an upload and by the operation that wrote
    /// them, forgotten by every other write.
    known: Known,
    /// SEAL's transparency check of the result the image holds, answered at its download.
    transparency: Option<PendingCheck>,
    /// The last upload, when it may still read the SEAL object's host words.
    upload: Mutex<Option<Event>>,
    /// The product or sum `words` are to hold, not enqueued yet (see the module's
    /// documentation).
    deferred: Mutex<Option<Deferred>>,
    /// Whether the image was ever copied ([`GpuImage::duplicate`]): its sums then start
    /// from zero where rotations read them on load ([`GpuImage::add_to_sum`]), so that a
    /// copy takes the pending sum along instead of running it (SEAL's out-of-place
    /// rotate_vector copies an accumulator that a rotate-and-sum then adds the rotation
    /// into).
    copied: AtomicBool,
}

/// A pooled buffer holding the words of one or more images (an image and its copies), and
/// the queues that used it. Only an image that holds it alone writes it.
#[derive(Debug)]
pub(super) struct Words {
    buffer: PoolBuffer,
    /// The tile whose pool `buffer` came from (`Tile::index`).
    tile: usize,
    /// A lock because threads read shared words at once.
    uses: Mutex<BufferUses>,
    /// The batch's wave that writes these words, while that may be pending (`batch.rs`):
    /// every read enqueues it first.
    writer: Mutex<Option<WaveMark>>,
}

impl Words {
    /// `buffer` of `graph`'s tile, written by commands on `graph`'s queue.
    fn written_on(buffer: PoolBuffer, graph: &Graph) -> Arc<Words> {
        Arc::new(Words {
            buffer,
            tile: graph.tile().index(),
            uses: Mutex::new(BufferUses::written_on(graph)),
            writer: Mutex::new(None),
        })
    }

    /// The buffer, with its pending writer enqueued first (a batch's wave) and commands
    /// enqueued on `graph`'s queue after this call ordered behind its last writer on
    /// another queue.
    pub(super) fn ordered_read(&self, graph: &Graph) -> Result<&Region> {
        if let Some(mark) = self.writer() {
            mark.settle()?;
        }
        self.read_in_wave(graph)
    }

    /// The buffer, for a launch of a batch's wave that reads it (`batch.rs`): ordered as
    /// [`Words::ordered_read`] orders it, without enqueueing its writer, which is that wave
    /// (a rotation in place), one enqueued before it, or no batch's.
    pub(super) fn read_in_wave(&self, graph: &Graph) -> Result<&Region> {
        self.uses.lock().before_read(graph)?;
        Ok(self.buffer.buffer())
    }

    /// The batch's wave that writes these words (enqueued or not).
    pub(super) fn writer(&self) -> Option<WaveMark> {
        self.writer.lock().clone()
    }

    /// Makes `mark` the words' writer (a batch's job that writes them joined), returning
    /// the one before.
    pub(super) fn set_writer(&self, mark: Option<WaveMark>) -> Option<WaveMark> {
        std::mem::replace(&mut self.writer.lock(), mark)
    }

    /// The buffer, for commands enqueued on `graph`'s queue after this call that write it:
    /// they are ordered behind every use on another queue, and `graph` becomes its writer.
    /// Only for words no other image can read meanwhile (a deferred product's).
    pub(super) fn written_next_on(&self, graph: &Graph) -> Result<&Region> {
        self.uses.lock().before_write(graph)?;
        Ok(self.buffer.buffer())
    }

    /// The tile whose pool the buffer came from.
    pub(super) fn tile(&self) -> usize {
        self.tile
    }
}

impl Drop for Words {
    /// Gives the buffer back to its pool with the uses the pool does not see (those on
    /// queues other than the one it was handed out for), so its next holder waits for them.
    fn drop(&mut self) {
        let mut uses = std::mem::take(self.uses.get_mut());
        match uses.markers_except(self.buffer.queue()) {
            Ok(markers) => markers.iter().for_each(|m| self.buffer.record_use(m)),
            Err(e) => {
                // No marker (a lost device): wait on the host instead, so the next holder
                // still comes after every use; if even that fails the device is gone and
                // nothing will run on the buffer again.
                tracing::warn!(error = %e, "no marker for a freed buffer; waiting for its queues");
                if let Err(e) = uses.finish_all() {
                    tracing::error!(error = %e, "waiting for a freed buffer's queues failed");
                }
            }
        }
    }
}

/// Where an operation writes an image's new contents ([`GpuImage::rewrite_on`]): `dst`,
/// reading the image's current words from [`Rewrite::src`], the same buffer when the image
/// is written in place. Dropped once the operation is enqueued.
pub(crate) struct Rewrite<'a> {
    pub dst: &'a Region,
    /// The shared words the image held before, when it is not written in place.
    source: Option<Arc<Words>>,
}

impl Rewrite<'_> {
    pub fn src(&self) -> &Region {
        self.source.as_ref().map_or(self.dst, |w| w.buffer.buffer())
    }

    /// Whether `src` and `dst` are different buffers (the words the operation leaves
    /// unwritten must be copied).
    pub fn out_of_place(&self) -> bool {
        self.source.is_some()
    }
}

/// An operand's words for one operation: the image's own buffer, or a copy of it on the
/// issuing tile, which returns to that tile's pool when the operation is enqueued (its
/// reuse is ordered behind the operation's commands, as any pooled buffer's).
pub(crate) enum Operand<'a> {
    Own(&'a Region),
    Copy(PoolBuffer),
}

impl Deref for Operand<'_> {
    type Target = Region;

    fn deref(&self) -> &Region {
        match self {
            Operand::Own(buffer) => buffer,
            Operand::Copy(copy) => copy.buffer(),
        }
    }
}

/// SEAL's transparency check of an operation's result: the result is transparent when
/// words `from ..` of the image (polynomials 1 and up) are all zero.
#[derive(Clone, Debug)]
struct PendingCheck {
    /// The operation that produced the result (for the log).
    operation: Box<str>,
    from: usize,
}

impl GpuImage {
    pub(crate) fn empty() -> GpuImage {
        GpuImage::default()
    }

    /// The words the image holds (SEAL's uint64_count).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The zero polynomials the host knows of, for polynomials of `poly_words` words.
    pub(crate) fn zeros(&self, poly_words: usize) -> Zeros {
        self.known.zeros(poly_words)
    }

    /// Records what the operation that just wrote the image knows of its polynomials (of
    /// `poly_words` words).
    pub(crate) fn set_zeros(&mut self, zeros: Zeros, poly_words: usize) {
        self.known = zeros.known(poly_words);
    }

    /// The words, with a deferred product enqueued first: every use of them comes here.
    fn words(&self) -> Result<&Arc<Words>> {
        self.run_deferred()?;
        match &self.words {
            Some(w) if self.len > 0 => Ok(w),
            _ => Err(Error::Logic("operand's device image holds no words".into())),
        }
    }

    fn buffer(&self) -> Result<&Region> {
        Ok(self.words()?.buffer.buffer())
    }

    /// Enqueues the deferred product or sum, if any, into the image's buffer; on error it
    /// stays deferred (and the words as they were), so that a later use tries again.
    fn run_deferred(&self) -> Result<()> {
        let mut deferred = self.deferred.lock();
        if let (Some(product), Some(words)) = (deferred.as_ref(), &self.words) {
            product.run(words)?;
            *deferred = None;
        }
        Ok(())
    }

    /// Makes `buffer` the image's, holding `len` words that `product` computes when they
    /// are first used, or with the operation that consumes it.
    pub(super) fn defer(
        &mut self,
        graph: &Graph,
        buffer: PoolBuffer,
        len: usize,
        product: Deferred,
    ) {
        self.replace(graph, buffer, len);
        *self.deferred.get_mut() = Some(product);
    }

    /// Takes the deferred product, if any and `usable` says so, and runs `consume` with it
    /// into the image's own buffer on `graph`'s queue (its words unwritten until then): an
    /// operation that computes the product in its own launch. Returns whether there was
    /// one to take; on an error the product stays deferred, so a later use runs it again.
    pub(super) fn consume_deferred(
        &mut self,
        graph: &Graph,
        usable: impl FnOnce(&Deferred) -> bool,
        consume: impl FnOnce(&Deferred, &Region) -> Result<()>,
    ) -> Result<bool> {
        let deferred = self.deferred.get_mut();
        let Some(product) = deferred.take_if(|d| usable(d)) else {
            return Ok(false);
        };
        let ran = self.write_on(graph).and_then(|dst| consume(&product, dst));
        if ran.is_err() {
            *self.deferred.get_mut() = Some(product);
        }
        ran.map(|()| true)
    }

    /// Runs `read` with the deferred work, if any and `usable` says so, leaving it deferred:
    /// an operation that reads the work's inputs in its own launch in place of the image's
    /// words (which stay unwritten; a later use runs the work). Returns whether it did.
    pub(super) fn read_deferred(
        &self,
        usable: impl FnOnce(&Deferred) -> bool,
        read: impl FnOnce(&Deferred) -> Result<()>,
    ) -> Result<bool> {
        let deferred = self.deferred.lock();
        match deferred.as_ref().filter(|d| usable(d)) {
            Some(work) => read(work).map(|()| true),
            None => Ok(false),
        }
    }

    /// The terms of the sum deferred in the image on `graph`'s queue, if one is.
    fn pending_sum(&mut self, graph: &Graph) -> Option<&mut Vec<Term>> {
        self.deferred
            .get_mut()
            .as_mut()
            .and_then(|d| d.sum_on(graph))
    }

    /// The image as terms of a sum of `polys` polynomials on `tile` (added, or subtracted
    /// with `subtract`), with room for `room` more terms: its deferred plaintext product's
    /// factors (the product stays deferred), or the terms of its deferred sum where
    /// consumers read that on load and it fits (the sum stays deferred), else its words
    /// (anything else deferred run first). None: its words lie on another tile.
    pub(super) fn sum_terms(
        &self,
        polys: usize,
        tile: usize,
        subtract: bool,
        room: usize,
    ) -> Result<Option<Vec<Term>>> {
        let deferred = {
            let deferred = self.deferred.lock();
            deferred.as_ref().and_then(|d| {
                d.as_term(polys, tile, subtract)
                    .map(|t| vec![t])
                    .or_else(|| d.flattened(tile, subtract, room))
            })
        };
        if deferred.is_some() {
            return Ok(deferred);
        }
        let words = self.shared_words()?;
        Ok((words.tile() == tile).then(|| vec![SumTerm::words(words, subtract)]))
    }

    /// How many terms [`GpuImage::add_to_sum`] takes into the image on `graph`'s queue in
    /// one call (at least 1): the room left in its pending sum, else in a new one (whose
    /// first term may be the image's own words).
    pub(super) fn sum_room(&mut self, graph: &Graph) -> usize {
        // A pending sum runs when it reaches SUM_TERMS_MAX terms, so it holds fewer; a new
        // one (a start term and these) stays below that too.
        match self.pending_sum(graph) {
            Some(terms) => SUM_TERMS_MAX - terms.len(),
            None => SUM_TERMS_MAX - 2,
        }
    }

    /// Adds `terms` (1 to [`GpuImage::sum_room`] of them, of `polys` polynomials, the
    /// image's size, on `ops`' tile) to the sum deferred in the image (see `deferred.rs`):
    /// more terms of the sum pending on `ops`' queue, run at once when it has
    /// [`SUM_TERMS_MAX`]; else a new sum: from the image's words where it holds them alone
    /// (unless it was ever copied and `rotations_read_sums` says that a rotation at this
    /// level reads a sum from zero on its loads: asked only then, since it looks up the
    /// scheme's kernels), or from its deferred plaintext product (into the
    /// product's buffer), or from its words as the first term (into a new buffer of its own:
    /// words it shares, or a copied image's, whose copies then take the sum along); any
    /// other deferred work runs first. Returns false, changing nothing, where the image's
    /// words lie on another tile. On an error the image is as it was.
    pub(super) fn add_to_sum(
        &mut self,
        ops: &LevelOps,
        context: &Arc<CkksContext>,
        polys: usize,
        terms: Vec<Term>,
        rotations_read_sums: impl FnOnce() -> Result<bool>,
    ) -> Result<bool> {
        let graph = ops.graph();
        let tile = graph.tile().index();
        let added = terms.len();
        if added == 0 || added > self.sum_room(graph) {
            return Err(Error::Logic(format!(
                "{added} terms added to a sum with room for {}",
                self.sum_room(graph)
            )));
        }
        if let Some(pending) = self.pending_sum(graph) {
            pending.extend(terms);
            if pending.len() == SUM_TERMS_MAX {
                if let Err(e) = self.run_deferred() {
                    // Still pending: without this call's terms.
                    if let Some(pending) = self.pending_sum(graph) {
                        pending.truncate(SUM_TERMS_MAX - added);
                    }
                    return Err(e);
                }
            }
            self.new_contents();
            return Ok(true);
        }
        let product = self
            .deferred
            .get_mut()
            .as_ref()
            .and_then(|d| d.as_term(polys, tile, false));
        let (accumulate, start) = match product {
            Some(product) => (false, Some(product)),
            None if self.tile() != tile => return Ok(false),
            None if self.holds_alone()? && !(*self.copied.get_mut() && rotations_read_sums()?) => {
                (true, None)
            }
            None => {
                let fresh = graph.alloc(self.len)?;
                let shared = self.words.replace(Words::written_on(fresh, graph));
                let words = shared.ok_or_else(|| Error::Logic("a sum into no words".into()))?;
                (false, Some(SumTerm::words(words, false)))
            }
        };
        let terms = start.into_iter().chain(terms).collect();
        *self.deferred.get_mut() = Some(Deferred::sum(
            context.clone(),
            graph,
            ops.primes(),
            polys,
            accumulate,
            terms,
        ));
        self.new_contents();
        Ok(true)
    }

    /// Makes the image X^`shift` times its `polys` polynomials in coefficient form (0 < shift
    /// < N: SEAL's multiply_plain by that monomial of coefficient 1), deferred as a sum from
    /// zero that chained passes read on load (see `deferred.rs`): a pending such sum, its
    /// terms shifted further; else the image's words (any other deferred work run first) as
    /// the one term of a sum into a new buffer of its own. Returns false, changing nothing,
    /// where its words lie on another tile than `ops`'. On an error the image is as it was.
    pub(super) fn defer_shifted(
        &mut self,
        ops: &LevelOps,
        context: &Arc<CkksContext>,
        polys: usize,
        shift: u32,
    ) -> Result<bool> {
        let graph = ops.graph();
        let tile = graph.tile().index();
        let deferred = self.deferred.get_mut();
        if let Some(shifted) = deferred.as_ref().and_then(|d| d.shifted(tile, shift)) {
            *deferred = Some(shifted);
            self.new_contents();
            return Ok(true);
        }
        if self.tile() != tile {
            return Ok(false);
        }
        let words = self.shared_words()?;
        let fresh = graph.alloc(self.len)?;
        self.words = Some(Words::written_on(fresh, graph));
        let term = SumTerm {
            shift,
            ..SumTerm::words(words, false)
        };
        *self.deferred.get_mut() = Some(Deferred::sum(
            context.clone(),
            graph,
            ops.primes(),
            polys,
            false,
            vec![term],
        ));
        self.new_contents();
        Ok(true)
    }

    /// The words the image holds, for work deferred with them (which keeps them from being
    /// written: a writer of shared words copies them first): a key switch pending in a
    /// batch stays pending (the words carry its wave, which their first read enqueues);
    /// any other deferred work runs first.
    pub(super) fn shared_words(&self) -> Result<Arc<Words>> {
        if self
            .deferred
            .lock()
            .as_ref()
            .is_some_and(Deferred::is_batched)
        {
            if let Some(words) = self.words.as_ref().filter(|_| self.len > 0) {
                return Ok(words.clone());
            }
        }
        Ok(self.words()?.clone())
    }

    /// The tile of the image's buffer (0 while there is none).
    fn tile(&self) -> usize {
        self.words.as_ref().map_or(0, |w| w.tile)
    }

    /// The words, for commands that read them on `graph`'s queue: they are ordered behind
    /// the last writer on another queue. From another tile than `graph`'s they are copied
    /// into a temporary of `graph`'s tile first.
    pub(crate) fn read_on(&self, graph: &Graph) -> Result<Operand<'_>> {
        let buffer = self.ordered_read(graph)?;
        if self.tile() == graph.tile().index() {
            return Ok(Operand::Own(buffer));
        }
        let copy = graph.alloc_scratch(self.len)?;
        crate::cl::copy_range(graph.queue(), buffer, 0, copy.buffer(), 0, self.len)?;
        Ok(Operand::Copy(copy))
    }

    /// The buffer, for commands that write it (and may read it) on `graph`'s queue: they
    /// are ordered behind every use on another queue. Words shared with a copy, or on
    /// another tile, are copied into a buffer of `graph`'s tile first, which becomes the
    /// image's alone.
    pub(crate) fn write_on(&mut self, graph: &Graph) -> Result<&Region> {
        if self.tile() != graph.tile().index() || !self.holds_alone()? {
            self.copy_to(graph)?;
        }
        self.new_contents();
        let words = self.exclusive()?;
        words.uses.get_mut().before_write(graph)?;
        Ok(words.buffer.buffer())
    }

    /// Where an operation that can run out of place writes the image's new contents on
    /// `graph`'s queue: in place when the image holds its buffer alone on `graph`'s tile
    /// (ordered behind every use on another queue), else into a new buffer of `graph`'s
    /// tile, which becomes the image's, reading the shared words (ordered behind their last
    /// writer). Words on another tile move to `graph`'s first.
    pub(crate) fn rewrite_on(&mut self, graph: &Graph) -> Result<Rewrite<'_>> {
        if self.tile() != graph.tile().index() {
            self.copy_to(graph)?;
        }
        if self.holds_alone()? {
            self.new_contents();
            let words = self.exclusive()?;
            words.uses.get_mut().before_write(graph)?;
            return Ok(Rewrite {
                dst: words.buffer.buffer(),
                source: None,
            });
        }
        let fresh = graph.alloc(self.len)?;
        self.ordered_read(graph)?;
        self.new_contents();
        let source = self.words.replace(Words::written_on(fresh, graph));
        Ok(Rewrite {
            dst: self.buffer()?,
            source,
        })
    }

    /// Hands the deferred product, if any and `usable` says so, to `join` with the image's
    /// words (held alone, on `graph`'s tile; else nothing is handed), which returns the
    /// work that computes them from now on (the product and its relinearization in a
    /// batch: `batch.rs`). Returns whether it was handed; on an error the product stays
    /// deferred.
    pub(super) fn defer_to_batch(
        &mut self,
        graph: &Graph,
        usable: impl FnOnce(&Deferred) -> bool,
        join: impl FnOnce(&Deferred, Arc<Words>) -> Result<Deferred>,
    ) -> Result<bool> {
        let here = self.tile() == graph.tile().index();
        let alone = |w: &&Arc<Words>| here && Arc::strong_count(w) == 1;
        let Some(words) = self.words.as_ref().filter(alone).cloned() else {
            return Ok(false);
        };
        let deferred = self.deferred.get_mut();
        let Some(product) = deferred.take_if(|d| usable(d)) else {
            return Ok(false);
        };
        match join(&product, words) {
            Ok(batched) => {
                self.new_contents();
                *self.deferred.get_mut() = Some(batched);
                Ok(true)
            }
            Err(e) => {
                *self.deferred.get_mut() = Some(product);
                Err(e)
            }
        }
    }

    /// Hands the image's words (`src`, as [`GpuImage::shared_words`] gives them: a pending
    /// key switch of a batch stays pending, any other deferred work is enqueued first) and
    /// where its new contents go (`dst`: those words where the image holds them alone,
    /// else a new buffer of `graph`'s tile) to `join`, which returns the work that computes
    /// them (a rotation in a batch: `batch.rs`, which holds both until it runs); `dst`
    /// becomes the image's. Returns whether it was handed: not where the words lie on
    /// another tile. On an error the image is as it was.
    pub(super) fn rewrite_in_batch(
        &mut self,
        graph: &Graph,
        join: impl FnOnce(Arc<Words>, Arc<Words>) -> Result<Deferred>,
    ) -> Result<bool> {
        if self.tile() != graph.tile().index() {
            return Ok(false);
        }
        let src = self.shared_words()?;
        // The image's reference and this one: no copy shares the words.
        let dst = if Arc::strong_count(&src) == 2 {
            src.clone()
        } else {
            Words::written_on(graph.alloc(self.len)?, graph)
        };
        let deferred = join(src, dst.clone())?;
        self.words = Some(dst);
        self.new_contents();
        *self.deferred.get_mut() = Some(deferred);
        Ok(true)
    }

    /// Forgets what was known and checked of the words: an operation writes new ones (and
    /// records what it knows of them itself).
    fn new_contents(&mut self) {
        self.known = Known::Nothing;
        self.transparency = None;
    }

    /// Whether this image and `other` hold the same words: the same buffer, as a copy and
    /// its original do until one of them writes.
    pub(crate) fn same_words(&self, other: &GpuImage) -> bool {
        self.len == other.len
            && matches!((&self.words, &other.words), (Some(a), Some(b)) if Arc::ptr_eq(a, b))
    }

    /// Whether no copy shares the image's words. Errors: the image holds none.
    fn holds_alone(&self) -> Result<bool> {
        Ok(Arc::strong_count(self.words()?) == 1)
    }

    /// The words, which the image holds alone (the caller made sure).
    fn exclusive(&mut self) -> Result<&mut Words> {
        self.words()?;
        self.words
            .as_mut()
            .and_then(Arc::get_mut)
            .ok_or_else(|| Error::Logic("device image written while a copy shares it".into()))
    }

    /// The buffer, with commands enqueued on `graph`'s queue after this call ordered behind
    /// its last writer on another queue.
    fn ordered_read(&self, graph: &Graph) -> Result<&Region> {
        self.words()?.ordered_read(graph)
    }

    /// Copies the words into a buffer of `graph`'s tile (on its queue, behind the last
    /// writer), which becomes the image's alone; the old one goes back to its pool behind
    /// the copy (when no other copy shares it). On error the image is unchanged.
    fn copy_to(&mut self, graph: &Graph) -> Result<()> {
        let copy = graph.alloc(self.len)?;
        let source = self.ordered_read(graph)?;
        crate::cl::copy_range(graph.queue(), source, 0, copy.buffer(), 0, self.len)?;
        self.words = Some(Words::written_on(copy, graph));
        DEVICE_COPIES.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Checks that the image holds `polys` polynomials at the operations' level.
    pub(crate) fn expect(&self, polys: usize, ops: &LevelOps, name: &str) -> Result<()> {
        let want = polys * ops.poly_words();
        if polys == 0 || self.len != want {
            return Err(Error::invalid(format!(
                "{name} is not valid for encryption parameters: its device image holds {} words, \
                 {polys} polynomials of {} primes need {want}",
                self.len,
                ops.primes()
            )));
        }
        Ok(())
    }

    /// Overwrites the image with `data` on `graph`'s queue, reusing the buffer when it is
    /// large enough and on `graph`'s tile (after every command using it, on any queue).
    /// New contents: no pending check. Returns before the copy finished when `data` lies in
    /// `pinned` memory (which keeps it until then; the owner calls `wait_upload` before it
    /// writes `data`), and records the copy as the buffer's writer; otherwise blocks, so
    /// `data` may go away after. Returns whether the copy was from `pinned` memory.
    pub(crate) fn upload(
        &mut self,
        graph: &Graph,
        data: &[u64],
        pinned: &PinnedHost,
    ) -> Result<bool> {
        self.transparency = None;
        self.known = Known::of_words(data);
        // New words replace a deferred product's: it never needs to run.
        *self.deferred.get_mut() = None;
        if data.is_empty() {
            self.words = None;
            self.len = 0;
            return Ok(false);
        }
        let queue = graph.queue();
        let reusable = match self.words.as_mut().and_then(Arc::get_mut) {
            Some(w) if w.buffer.words() >= data.len() && w.tile == graph.tile().index() => {
                w.uses.get_mut().before_write(graph)?;
                true
            }
            _ => false,
        };
        if !reusable {
            self.words = Some(Words::written_on(graph.alloc(data.len())?, graph));
        }
        self.len = data.len();
        let words = self.exclusive()?;
        // An older upload's event is no longer needed: the new copy, on the same queue or
        // ordered behind the old one's, ends after it.
        let event = match pinned.write(queue, words.buffer.buffer(), data)? {
            Some(event) => {
                words.uses.get_mut().set_written_on(graph);
                Some(event)
            }
            None => {
                words.buffer.write_on(queue, data)?;
                // Blocking: the buffer is unused on the device now.
                *words.uses.get_mut() = BufferUses::default();
                None
            }
        };
        let pinned_upload = event.is_some();
        *self.upload.get_mut() = event;
        Ok(pinned_upload)
    }

    /// Waits until the last upload no longer reads the host words it was given. Its
    /// success does not matter here: the caller is about to overwrite those words, which
    /// makes the image stale, and a failed copy shows in the device's next error.
    pub fn wait_upload(&self) {
        let pending = self.upload.lock().take();
        if let Some(event) = pending {
            if let Err(e) = crate::cl::wait(&event) {
                tracing::debug!("upload from page-locked memory failed: {e}");
            }
        }
    }

    /// Copies the first `out.len()` words to the host; waits for the work writing them
    /// (the buffer's queue is in order).
    pub(crate) fn download(&self, out: &mut [u64]) -> Result<()> {
        self.download_from(0, out)
    }

    /// Copies words `offset ..` (as many as `out` holds) to the host; waits as `download`.
    /// With a check pending, a transparent result is SEAL's `logic_error` (the words may
    /// be in `out` then: SEAL keeps the object device-newer, so no read returns them, and
    /// every download answers the same until a new result or upload replaces the check).
    pub(crate) fn download_from(&self, offset: usize, out: &mut [u64]) -> Result<()> {
        if offset + out.len() > self.len {
            return Err(Error::invalid(format!(
                "download of {} words at {offset} from an image of {}",
                out.len(),
                self.len
            )));
        }
        if !out.is_empty() {
            self.read_words(offset, out)?;
        }
        self.check_pending(offset, out)
    }

    /// Reads words `offset ..` into `out` on the last writer's queue (behind the write) or,
    /// with none recorded, the queue the buffer was handed out for, and returns when they are there
    /// (`cl::read_yielding`: no blocking read, see there why).
    fn read_words(&self, offset: usize, out: &mut [u64]) -> Result<()> {
        let words = self.words()?;
        let uses = words.uses.lock();
        let queue = uses.writer_queue().unwrap_or(words.buffer.queue());
        // The lock is held until the words are here, as around the blocking read before: a
        // writer on another queue orders behind this read.
        crate::cl::read_yielding(words.buffer.buffer(), queue, offset, out)
    }

    /// Errors when a pending check finds the result transparent, testing the words just
    /// downloaded (`out`, from word `offset`) and reading the rest of polynomials 1 and
    /// up only when the download did not cover them (never for SEAL's whole downloads).
    /// A real ciphertext's polynomial 1 is uniformly random: the test stops at its first
    /// word.
    fn check_pending(&self, offset: usize, out: &[u64]) -> Result<()> {
        let Some(check) = &self.transparency else {
            return Ok(());
        };
        let transparent = if offset <= check.from && offset + out.len() >= self.len {
            out[check.from - offset..].iter().all(|&w| w == 0)
        } else {
            let mut tail = vec![0u64; self.len - check.from];
            self.read_words(check.from, &mut tail)?;
            tail.iter().all(|&w| w == 0)
        };
        if transparent {
            // SEAL's exception, word for word, as callers match it; which operation made the
            // result goes to the log.
            tracing::warn!(
                operation = %check.operation,
                "a result the device computed is transparent; SEAL's logic_error is thrown at \
                 its first host read instead of at the call (SEAL_OPENCL_CHECK_TRANSPARENT=eager \
                 throws at the call)"
            );
            return Err(Error::Logic(TRANSPARENT.into()));
        }
        Ok(())
    }

    /// Records SEAL's transparency check of `operation`'s result, polynomials 1 and up
    /// starting at word `from` (replacing an older check: the image holds a new result).
    pub(crate) fn set_pending(&mut self, operation: &str, from: usize) {
        self.transparency = Some(PendingCheck {
            operation: operation.into(),
            from: from.min(self.len),
        });
    }

    /// A new image with the same words on `graph`'s tile: sharing this image's buffer when
    /// it lies there (copied on the device only when one of them writes), else copied there
    /// (enqueued). A pending check comes along. A deferred product or sum from zero on
    /// `graph`'s tile stays deferred in both: the copy gets a buffer of its own and the same
    /// work (so that SEAL's out-of-place relinearize, a copy then relinearize_inplace, still
    /// runs with it, and an out-of-place rotation or multiply_plain still reads a sum on its
    /// loads); a sum into the image's own words runs first.
    pub(crate) fn duplicate(&self, graph: &Graph) -> Result<GpuImage> {
        if self.len == 0 {
            return Ok(GpuImage::empty());
        }
        self.copied.store(true, Ordering::Relaxed);
        {
            let deferred = self.deferred.lock();
            let here = |d: &&Deferred| d.tile() == graph.tile().index();
            if let Some(work) = deferred.as_ref().filter(here) {
                // A product or a sum from zero: the copy computes it into a buffer of its
                // own. A key switch pending in a batch: the copy shares the words the batch
                // writes (copy on write, as for computed words) and runs the batch as the
                // image does, so that a copy of a pending rotation (SEAL's out-of-place
                // rotate_vector and rotate_vector_many copy before they rotate) leaves it
                // pending.
                let words = if work.travels_with_copy() {
                    Some(Words::written_on(graph.alloc(self.len)?, graph))
                } else if work.is_batched() {
                    self.words.clone()
                } else {
                    None
                };
                if let Some(words) = words {
                    return Ok(GpuImage {
                        words: Some(words),
                        len: self.len,
                        known: self.known,
                        transparency: self.transparency.clone(),
                        upload: Mutex::new(None),
                        deferred: Mutex::new(Some(work.clone())),
                        copied: AtomicBool::new(false),
                    });
                }
            }
        }
        self.run_deferred()?;
        let mut copy = GpuImage {
            words: self.words.clone(),
            len: self.len,
            known: self.known,
            transparency: self.transparency.clone(),
            upload: Mutex::new(None),
            deferred: Mutex::new(None),
            copied: AtomicBool::new(false),
        };
        if self.tile() != graph.tile().index() {
            copy.copy_to(graph)?;
        }
        Ok(copy)
    }

    /// Makes `buffer` the image's, holding `len` words written by commands on `graph`'s
    /// queue: a new result, not checked yet.
    pub(crate) fn replace(&mut self, graph: &Graph, buffer: PoolBuffer, len: usize) {
        debug_assert!(buffer.words() >= len);
        self.words = Some(Words::written_on(buffer, graph));
        self.len = len;
        *self.deferred.get_mut() = None;
        self.new_contents();
    }

    /// Keeps only the first `len` words.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Moves the contents out (pending check included), leaving the image empty (for
    /// in-place operations that write a new buffer; `restore` puts them back if the
    /// operation fails). The last upload's event stays: it guards the SEAL object's host
    /// words, which a whole overwrite (encrypt into a device-newer object) may replace
    /// without a download.
    pub(crate) fn take(&mut self) -> GpuImage {
        let upload = self.upload.get_mut().take();
        let taken = std::mem::take(self);
        *self.upload.get_mut() = upload;
        taken
    }

    pub(crate) fn restore(&mut self, previous: GpuImage) {
        let upload = self.upload.get_mut().take();
        *self = previous;
        *self.upload.get_mut() = upload;
    }
}

/* ---- writing an operation's result into an image ---------------------------------- */

/// Runs `step` on where `ct`'s new contents go ([`GpuImage::rewrite_on`]), then records
/// that the result has `zeros`.
pub(super) fn rewrite(
    ops: &LevelOps,
    ct: &mut GpuImage,
    zeros: Zeros,
    step: impl FnOnce(&Rewrite) -> Result<()>,
) -> Result<()> {
    step(&ct.rewrite_on(ops.graph())?)?;
    ct.set_zeros(zeros, ops.poly_words());
    Ok(())
}

/// The NTT of `ct`'s `size` polynomials in place: a zero polynomial's transform is zero.
/// Where the level's chained transform takes a sum, a sum deferred in ct is transformed
/// from its terms, summed in the transform's first pass, so it takes no launch of its own:
/// forward, a sum from zero of ciphertexts (BFV's out-of-place add, say); inverse, plaintext
/// products added in NTT form, or one such product (a polynomial's terms, a dot product).
pub(super) fn transform(
    ops: &LevelOps,
    ct: &mut GpuImage,
    size: usize,
    direction: NttDirection,
) -> Result<()> {
    let zeros = ct.zeros(ops.poly_words());
    let graph = ops.graph();
    let tile = graph.tile().index();
    let consumed = ops.chains_transform_sum()
        && ct.consume_deferred(
            graph,
            |d| match direction {
                NttDirection::Forward => d.reads_as_sources(tile, SOURCE_TERMS_MAX),
                NttDirection::Inverse => d.reads_as_products(tile, size),
            },
            |d, dst| {
                let src = match direction {
                    NttDirection::Forward => Sources::sum(&d.sources(graph)?)?,
                    NttDirection::Inverse => Sources::products(&d.product_sources(graph)?)?,
                };
                ops.transform_sum(dst, src, size, direction)
            },
        )?;
    if !consumed {
        ops.transform(ct.write_on(graph)?, size, direction)?;
    }
    ct.set_zeros(zeros, ops.poly_words());
    Ok(())
}

/// Runs `op(src, dst)` with the image's contents as src and the image itself as dst (for
/// operations that write a new buffer); on failure the contents are put back.
pub(super) fn in_place(
    ct: &mut GpuImage,
    op: impl FnOnce(&GpuImage, &mut GpuImage) -> Result<()>,
) -> Result<()> {
    let src = ct.take();
    op(&src, ct).inspect_err(|_| ct.restore(src))
}

/// Where an operation on ct's first polynomial writes a new buffer, ct's other `size - 1`
/// polynomials pass unchanged.
pub(super) fn copy_other_polys(ops: &LevelOps, target: &Rewrite, size: usize) -> Result<()> {
    if target.out_of_place() {
        ops.copy_tail(target.dst, target.src(), 1, size - 1)?;
    }
    Ok(())
}
