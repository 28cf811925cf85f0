//! Work that waits for what consumes it: products (CKKS's and BGV's, in NTT form, of two
//! ciphertexts, and every scheme's of a ciphertext and a plaintext in NTT form) and sums
//! (adds and subs into an accumulator).
//!
//! SEAL's programs multiply and then relinearize the product (`multiply_inplace`, then
//! `relinearize_inplace`; or out of place, a copy and the in-place call), multiply by a
//! plaintext into a temporary that they then add into an accumulator (a network layer's or
//! a PIR database's product, a matrix's diagonals, a polynomial's terms), and add many
//! terms into one accumulator with no read between. At small rings NVIDIA's OpenCL charges
//! the host more per launch (~10 us) than the device takes for such a step, and at any
//! ring each step is a pass over memory of its own. So a multiply of two ciphertexts of
//! two polynomials (CKKS's where the level's key switches run on the fused passes, BGV's
//! where the level chains) and a multiply_plain in NTT form enqueue nothing: the product's
//! image holds a buffer for it and a [`Deferred`], its operands and where to compute it.
//! The relinearization that takes a ciphertext product runs both in one launch where the
//! level chains, the tensor product inside the key switch's first launch elsewhere
//! (`LevelOps::multiply_relinearize`), and waits in its queue's batch for up to three more
//! such pairs to share its launches (`batch.rs`); a CKKS rotation of a plaintext product
//! (of two polynomials) reads the product in its permutation
//! (`LevelOps::apply_galois_times_plain`: TenSEAL's matrix products multiply each
//! diagonal, then rotate it).
//!
//! An add or sub of a ciphertext of the accumulator's size into it enqueues nothing either:
//! the accumulator holds a deferred sum, its terms (a ciphertext's words, or a deferred
//! plaintext product's factors: the product's own image stays deferred), and they run as
//! one launch of `ckks_sum` (`LevelOps::sum`) when anything reaches the accumulator's
//! words, or at once when the sum has `SUM_TERMS_MAX` terms: m terms cost ceil(m / M)
//! launches. A sum starts from the accumulator's words where it holds them alone (adding
//! in place), else from zero with its first term what the accumulator held (words it
//! shares with a copy, or its own deferred plaintext product) into a buffer of its own.
//!
//! A plaintext product, or a sum from zero of up to `SOURCE_TERMS_MAX` unshifted terms
//! (ciphertexts' words or plaintext products), is read rather than run by a chained rescale
//! (`LevelOps::rescale_sum`, [`Deferred::product_sources`]: a layer's or a dot product's
//! multiply_plain and adds, then the rescale, cost one launch) and by the chained inverse
//! transform. A sum from zero (into a buffer of its own) of up to `SOURCE_TERMS_MAX`
//! ciphertexts' words is read rather than run by the chained passes that take it
//! ([`Deferred::sources`]: a rotation, CKKS's in NTT form and BFV's in coefficient form,
//! BFV's multiply_plain, transform_to_ntt), goes along with a copy of its image, and joins,
//! terms and all, a sum it is a term of ([`Deferred::flattened`]): SealPIR's expansion adds
//! and subtracts out of place, and rotates, multiplies and transforms what it added. An
//! image that was ever copied starts its sums from zero where rotations read sums
//! (`GpuImage::add_to_sum`), so that a rotate-and-sum (SEAL's out-of-place rotate_vector
//! copies the accumulator, which then adds the rotation) reads the accumulator's pending
//! sum in each rotation. A multiply_plain by X^s (a monomial of coefficient 1, in
//! coefficient form) enqueues nothing either: it shifts such a sum's terms further
//! ([`Deferred::shifted`]), or makes the ciphertext's words the one term, shifted, of a new
//! such sum (`GpuImage::defer_shifted`); SealPIR's expansion multiplies each difference by
//! X^-2^i.
//!
//! Anything else that reaches the words (a host read, another operation, a copy of a sum
//! into its accumulator's words, a term of another sum) runs the product or the sum on its
//! own first (`GpuImage::words`). Either way the words are SEAL's. A deferred item runs on
//! the queue it was deferred on; a sum takes terms from that queue only (an add issued on
//! another runs it first and starts anew), and only words on its tile.
//!
//! The operands' and terms' words stay as they were until it runs: the deferred item holds
//! them, and an image writes words it shares only after copying them (copy on write,
//! `image.rs`). An accumulator that adds into its own words holds them alone while its sum
//! is pending (a copy of it runs the sum first), so nothing else reads or writes them
//! meanwhile.

use std::sync::Arc;

use super::batch::{Job, Kind, Room, SwitchBatch, Ticket};
use super::image::Words;
use crate::ckks::context::{CkksContext, KswitchKey};
use crate::ckks::fused::{DropCorrection, SOURCE_TERMS_MAX};
use crate::ckks::ops::LevelOps;
use crate::ckks::SumTerm;
use crate::cl::Region;
use crate::device::Graph;
use crate::error::{Error, Result};

/// Work into an image's words at a level of `primes` primes, to be enqueued on `graph`'s
/// queue.
#[derive(Clone)]
pub(super) struct Deferred {
    context: Arc<CkksContext>,
    graph: Graph,
    primes: usize,
    work: Work,
}

#[derive(Clone)]
enum Work {
    /// `a`'s words (in NTT form) times `product`'s factor.
    Product { a: Arc<Words>, product: Product },
    /// Adds and subs into the image's words.
    Sum(Sum),
    /// A key switch waiting in its queue's batch (`batch.rs`) for others to share its
    /// launch: a ciphertext product and its relinearization, or a rotation.
    Batched(Ticket),
}

/// dst = dst (0 without `accumulate`) +- each term, in order, over `polys` polynomials:
/// SEAL's add_inplace or sub_inplace of each term into an accumulator.
#[derive(Clone)]
struct Sum {
    polys: usize,
    accumulate: bool,
    /// 1 to `SUM_TERMS_MAX`.
    terms: Vec<Term>,
}

/// A term of a deferred sum: a ciphertext's words, or a plaintext product's factors.
pub(super) type Term = SumTerm<Arc<Words>>;

/// What multiplies `a`.
#[derive(Clone)]
pub(super) enum Product {
    /// SEAL's ckks_multiply (or bgv_multiply in NTT form: the same tensor product; the
    /// correction factor is metadata, SEAL's) of two ciphertexts of two polynomials: `a`
    /// times these words (None: a square), relinearized with `correction` on its
    /// mod-down (CKKS rounds; BGV corrects mod t).
    Tensor {
        b: Option<Arc<Words>>,
        correction: DropCorrection,
    },
    /// SEAL's multiply_plain_ntt of `a`'s `polys` polynomials by a plaintext's words.
    Plain { plain: Arc<Words>, polys: usize },
}

impl Product {
    /// The words `a` is multiplied by: the other ciphertext's or the plaintext's (None: a
    /// square, `a` itself).
    pub(super) fn other_factor(&self) -> Option<&Arc<Words>> {
        match self {
            Product::Tensor { b, .. } => b.as_ref(),
            Product::Plain { plain, .. } => Some(plain),
        }
    }
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let work = match &self.work {
            Work::Product {
                product: Product::Tensor { b: None, .. },
                ..
            } => "square".to_string(),
            Work::Product {
                product: Product::Tensor { b: Some(_), .. },
                ..
            } => "multiply".to_string(),
            Work::Product {
                product: Product::Plain { .. },
                ..
            } => "multiply_plain".to_string(),
            Work::Sum(sum) => format!("sum of {} terms", sum.terms.len()),
            Work::Batched(_) => "key switch, batched".to_string(),
        };
        f.debug_struct("Deferred")
            .field("tile", &self.tile())
            .field("queue", &self.graph.queue_index())
            .field("primes", &self.primes)
            .field("work", &work)
            .finish()
    }
}

impl Deferred {
    pub(super) fn new(
        context: Arc<CkksContext>,
        graph: &Graph,
        primes: usize,
        a: Arc<Words>,
        product: Product,
    ) -> Deferred {
        Deferred {
            context,
            graph: graph.clone(),
            primes,
            work: Work::Product { a, product },
        }
    }

    /// A key switch that `ticket`'s batch runs (a product and its relinearization, or a
    /// rotation), at a level of `primes` primes.
    pub(super) fn batched(context: Arc<CkksContext>, primes: usize, ticket: Ticket) -> Deferred {
        Deferred {
            context,
            graph: ticket.graph().clone(),
            primes,
            work: Work::Batched(ticket),
        }
    }

    /// A sum of `terms` (1 to `SUM_TERMS_MAX`) over `polys` polynomials into the image's
    /// words, added to them with `accumulate` (else to zero).
    pub(super) fn sum(
        context: Arc<CkksContext>,
        graph: &Graph,
        primes: usize,
        polys: usize,
        accumulate: bool,
        terms: Vec<Term>,
    ) -> Deferred {
        Deferred {
            context,
            graph: graph.clone(),
            primes,
            work: Work::Sum(Sum {
                polys,
                accumulate,
                terms,
            }),
        }
    }

    /// The tile the product is computed on (its operands' and its buffer's).
    pub(super) fn tile(&self) -> usize {
        self.graph.tile().index()
    }

    /// The product, if this is one (None: a sum).
    fn product(&self) -> Option<&Product> {
        match &self.work {
            Work::Product { product, .. } => Some(product),
            Work::Sum(_) | Work::Batched(_) => None,
        }
    }

    /// Whether this is a key switch waiting in a batch.
    pub(super) fn is_batched(&self) -> bool {
        matches!(self.work, Work::Batched(_))
    }

    /// A product's factors' words (`a`, then the other where it is not `a`); none for other
    /// work.
    pub(super) fn factors(&self) -> Vec<&Arc<Words>> {
        match &self.work {
            Work::Product { a, product } => {
                std::iter::once(a).chain(product.other_factor()).collect()
            }
            Work::Sum(_) | Work::Batched(_) => Vec::new(),
        }
    }

    /// Whether this is a product of two ciphertexts (which a relinearization takes).
    pub(super) fn is_tensor(&self) -> bool {
        matches!(self.product(), Some(Product::Tensor { .. }))
    }

    /// A plaintext product's polynomials (None: a product of two ciphertexts, or a sum).
    pub(super) fn plain_polys(&self) -> Option<usize> {
        match self.product() {
            Some(Product::Plain { polys, .. }) => Some(*polys),
            _ => None,
        }
    }

    /// Whether a copy of its image may take this along (into a buffer of its own): a
    /// product, or a sum from zero, which reads only its terms. A sum that adds into the
    /// image's own words runs first.
    pub(super) fn travels_with_copy(&self) -> bool {
        match &self.work {
            Work::Product { .. } => true,
            Work::Sum(sum) => !sum.accumulate,
            Work::Batched(_) => false,
        }
    }

    /// The terms of this sum, where a chained pass in coefficient form may read it on its
    /// loads instead of its words ([`crate::ckks::fused::Sources`]): a sum from zero on
    /// `tile` of 1 to [`SOURCE_TERMS_MAX`] ciphertexts' words (no plaintext product).
    fn source_terms(&self, tile: usize) -> Option<&[Term]> {
        match &self.work {
            Work::Sum(sum)
                if !sum.accumulate
                    && self.tile() == tile
                    && sum.terms.len() <= SOURCE_TERMS_MAX
                    && sum.terms.iter().all(|t| t.plain.is_none()) =>
            {
                Some(&sum.terms)
            }
            _ => None,
        }
    }

    /// Whether a chained pass on `tile` that reads up to `slots` terms may read this on its
    /// loads ([`Deferred::sources`]).
    pub(super) fn reads_as_sources(&self, tile: usize, slots: usize) -> bool {
        self.source_terms(tile).is_some_and(|t| t.len() <= slots)
    }

    /// This sum's terms as `Sources`, their words ordered on `graph`'s queue behind their
    /// last writers: what a consumer reads in place of running the sum. Errors: not such a
    /// sum ([`Deferred::reads_as_sources`]).
    pub(super) fn sources<'a>(&'a self, graph: &Graph) -> Result<Vec<SumTerm<&'a Region>>> {
        let terms = self
            .source_terms(graph.tile().index())
            .ok_or_else(|| Error::Logic("deferred work read as a sum of ciphertexts".into()))?;
        terms.iter().map(|t| ordered_term(t, graph)).collect()
    }

    /// Whether the chained inverse transform on `tile` of `polys` polynomials may take this
    /// in place of its words ([`Deferred::product_sources`]): a sum from zero over `polys`
    /// polynomials of 1 to [`SOURCE_TERMS_MAX`] unshifted terms (ciphertexts' words or
    /// plaintext products), or a plaintext product of `polys` polynomials.
    pub(super) fn reads_as_products(&self, tile: usize, polys: usize) -> bool {
        self.tile() == tile
            && match &self.work {
                Work::Sum(sum) => {
                    !sum.accumulate
                        && sum.polys == polys
                        && sum.terms.len() <= SOURCE_TERMS_MAX
                        && sum.terms.iter().all(|t| t.shift == 0)
                }
                Work::Product { .. } => self.plain_polys() == Some(polys),
                Work::Batched(_) => false,
            }
    }

    /// This sum's terms, or this plaintext product as one term, their words ordered on
    /// `graph`'s queue behind their last writers: what the inverse transform reads in place
    /// of running it (`crate::ckks::fused::Sources::products`). Errors: not such work
    /// ([`Deferred::reads_as_products`]).
    pub(super) fn product_sources<'a>(&'a self, graph: &Graph) -> Result<Vec<SumTerm<&'a Region>>> {
        let not = || Error::Logic("deferred work read as a sum of products".into());
        match &self.work {
            Work::Sum(sum) => {
                if !self.reads_as_products(graph.tile().index(), sum.polys) {
                    return Err(not());
                }
                sum.terms.iter().map(|t| ordered_term(t, graph)).collect()
            }
            Work::Product {
                a,
                product: Product::Plain { plain, .. },
            } => Ok(vec![SumTerm {
                plain: Some(plain.ordered_read(graph)?),
                ..SumTerm::words(a.ordered_read(graph)?, false)
            }]),
            Work::Product { .. } | Work::Batched(_) => Err(not()),
        }
    }

    /// The terms of this sum with `subtract` applied to each (a sum taken as a term of
    /// another: its terms join it), where it is one that consumers read on load
    /// ([`Deferred::reads_as_sources`]) with at most `room` terms.
    pub(super) fn flattened(&self, tile: usize, subtract: bool, room: usize) -> Option<Vec<Term>> {
        let terms = self.source_terms(tile).filter(|t| t.len() <= room)?;
        Some(
            terms
                .iter()
                .map(|t| SumTerm {
                    shift: t.shift,
                    ..SumTerm::words(t.words.clone(), t.subtract != subtract)
                })
                .collect(),
        )
    }

    /// This sum, where consumers read it on load ([`Deferred::reads_as_sources`]), times
    /// X^`shift` (0 < shift < N, coefficient form): each term shifted further. X^a X^b =
    /// X^(a + b), and X^(a + b) = -X^(a + b - N) where a + b reaches N (X^N = -1): the
    /// term is then subtracted where it was added and the other way round.
    pub(super) fn shifted(&self, tile: usize, shift: u32) -> Option<Deferred> {
        let Work::Sum(sum) = &self.work else {
            return None;
        };
        let n = self.context.coeff_count() as u32;
        let terms = self
            .source_terms(tile)?
            .iter()
            .map(|t| {
                let total = t.shift + shift;
                let wraps = total >= n;
                SumTerm {
                    shift: if wraps { total - n } else { total },
                    ..SumTerm::words(t.words.clone(), t.subtract != wraps)
                }
            })
            .collect();
        Some(Deferred {
            work: Work::Sum(Sum {
                terms,
                ..sum.clone()
            }),
            ..self.clone()
        })
    }

    /// This plaintext product of `polys` polynomials on `tile` as a term of a sum (added,
    /// or subtracted with `subtract`); None for any other deferred work.
    pub(super) fn as_term(&self, polys: usize, tile: usize, subtract: bool) -> Option<Term> {
        match &self.work {
            Work::Product {
                a,
                product: Product::Plain { plain, polys: p },
            } if *p == polys && self.tile() == tile => Some(SumTerm {
                plain: Some(plain.clone()),
                ..SumTerm::words(a.clone(), subtract)
            }),
            _ => None,
        }
    }

    /// The sum pending on `graph`'s queue, if this is one.
    pub(super) fn sum_on(&mut self, graph: &Graph) -> Option<&mut Vec<Term>> {
        let here =
            self.tile() == graph.tile().index() && self.graph.queue_index() == graph.queue_index();
        match &mut self.work {
            Work::Sum(sum) if here => Some(&mut sum.terms),
            _ => None,
        }
    }

    /// The operands' buffers, ordered on `graph`'s queue behind their last writers: `a`
    /// and the other factor. Errors: a sum.
    pub(super) fn operands(&self, graph: &Graph) -> Result<(&Region, &Region)> {
        let Work::Product { a, product } = &self.work else {
            return Err(Error::Logic("a deferred sum run as a product".into()));
        };
        let a = a.ordered_read(graph)?;
        let b = match product.other_factor() {
            Some(b) => b.ordered_read(graph)?,
            None => a,
        };
        Ok((a, b))
    }

    /// Enqueues the product or the sum into `dst`'s words (the image's own) on the queue
    /// it was deferred on; a batched product, its batch (the batch holds `dst`'s words).
    pub(super) fn run(&self, dst: &Words) -> Result<()> {
        let ops = || LevelOps::new(&self.context, &self.graph, self.primes);
        match &self.work {
            Work::Batched(ticket) => return ticket.run(),
            Work::Product { product, .. } => {
                let ops = ops()?;
                let (a, b) = self.operands(&self.graph)?;
                let dst = dst.written_next_on(&self.graph)?;
                match product {
                    Product::Tensor { .. } => ops.tensor(dst, a, 2, b, 2)?,
                    Product::Plain { polys, .. } => ops.multiply_plain(dst, a, *polys, b)?,
                }
            }
            Work::Sum(sum) => {
                let terms = sum
                    .terms
                    .iter()
                    .map(|t| ordered_term(t, &self.graph))
                    .collect::<Result<Vec<_>>>()?;
                let dst = dst.written_next_on(&self.graph)?;
                ops()?.sum(dst, sum.accumulate, &terms, sum.polys)?;
            }
        }
        // Outside any operation's issue: `synchronize` must wait for this queue too.
        self.graph.note_issued();
        Ok(())
    }

    /// Enqueues a product of two ciphertexts and its relinearization with `key` on `ops`'
    /// queue into `dst` (three polynomials, the product's buffer on `ops`' tile; its first
    /// two hold the result).
    pub(super) fn run_relinearized(
        &self,
        ops: &LevelOps,
        dst: &Region,
        key: &KswitchKey,
    ) -> Result<()> {
        let Some(&Product::Tensor { correction, .. }) = self.product() else {
            return Err(Error::Logic(
                "a plaintext product relinearized as a ciphertext one".into(),
            ));
        };
        let (a, b) = self.operands(ops.graph())?;
        ops.multiply_relinearize(dst, a, b, key, correction)
    }

    /// This product of two ciphertexts, into `dst` (the image's words), and its
    /// relinearization with `key` as a job of `batch`, as full as `room`, which holds the
    /// words until it runs: the image's deferred work from now on. Errors: not such a
    /// product; as [`SwitchBatch::join_deferred`]'s (nothing joined).
    pub(super) fn join_batch(
        &self,
        batch: &Arc<SwitchBatch>,
        room: Room,
        key: Arc<KswitchKey>,
        dst: Arc<Words>,
    ) -> Result<Deferred> {
        let Some(&Product::Tensor { correction, .. }) = self.product() else {
            return Err(Error::Logic(
                "a plaintext product relinearized as a ciphertext one".into(),
            ));
        };
        let job = Job::Product {
            dst,
            product: self.clone(),
        };
        let kind = Kind::Products { key, correction };
        batch.join_deferred(self.context.clone(), self.primes, kind, job, room)
    }

    /// SEAL's apply_galois of this plaintext product (of two polynomials), into `dst` (the
    /// image's words), with `galois_elt` and `key` as a job of `batch`, as full as `room`,
    /// which holds the words until it runs: the image's deferred work from now on. Errors:
    /// not such a product; as [`SwitchBatch::join_deferred`]'s (nothing joined).
    pub(super) fn join_rotation_batch(
        &self,
        batch: &Arc<SwitchBatch>,
        room: Room,
        galois_elt: u32,
        key: Arc<KswitchKey>,
        dst: Arc<Words>,
    ) -> Result<Deferred> {
        let Work::Product {
            a,
            product: Product::Plain { plain, polys: 2 },
        } = &self.work
        else {
            return Err(Error::Logic(
                "a rotation of a product other than a plaintext one of two polynomials".into(),
            ));
        };
        let job = Job::Rotation {
            dst,
            src: a.clone(),
            plain: Some(plain.clone()),
            galois_elt,
            key,
        };
        batch.join_deferred(
            self.context.clone(),
            self.primes,
            Kind::Rotations,
            job,
            room,
        )
    }

    /// Enqueues SEAL's apply_galois of this plaintext product (of two polynomials) with
    /// `galois_elt` and `key` on `ops`' queue into `dst` (the product's buffer on `ops`'
    /// tile): the permutation reads the ciphertext times the plaintext.
    pub(super) fn run_rotated(
        &self,
        ops: &LevelOps,
        dst: &Region,
        galois_elt: u32,
        key: &KswitchKey,
    ) -> Result<()> {
        if self.plain_polys() != Some(2) {
            return Err(Error::Logic(
                "a rotation of a product other than a plaintext one of two polynomials".into(),
            ));
        }
        let (ct, plain) = self.operands(ops.graph())?;
        ops.apply_galois_times_plain(dst, ct, plain, galois_elt, key)
    }
}

/// Term `t` with its words and plaintext ordered on `graph`'s queue behind their last
/// writers.
fn ordered_term<'a>(t: &'a Term, graph: &Graph) -> Result<SumTerm<&'a Region>> {
    Ok(SumTerm {
        words: t.words.ordered_read(graph)?,
        plain: t
            .plain
            .as_ref()
            .map(|p| p.ordered_read(graph))
            .transpose()?,
        subtract: t.subtract,
        shift: t.shift,
    })
}
