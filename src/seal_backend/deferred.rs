//! Products that wait for the operation that consumes them: CKKS's and BGV's (in NTT form)
//! of two ciphertexts, and every scheme's of a ciphertext and a plaintext in NTT form.
//!
//! SEAL's programs multiply and then relinearize the product (`multiply_inplace`, then
//! `relinearize_inplace`; or out of place, a copy and the in-place call), and multiply by a
//! plaintext into a temporary that they then add into an accumulator (a matrix's diagonals,
//! a polynomial's terms). At small rings NVIDIA's OpenCL charges the host more per launch
//! (~10 us) than the device takes for the product, and at any ring the product is a pass
//! over memory of its own. So a multiply of two ciphertexts of two polynomials (where the
//! level chains) and a multiply_plain in NTT form enqueue nothing: the product's image
//! holds a buffer for it and a [`Deferred`], its operands and where to compute it. The
//! relinearization that takes a ciphertext product runs both in one launch
//! (`LevelOps::multiply_relinearize`); an add or sub of a plaintext product into another
//! ciphertext computes the product inside the sum (`LevelOps::multiply_plain_add`), and
//! the product's own image stays deferred; a CKKS rotation of a plaintext product (of two
//! polynomials) reads the product in its permutation (`LevelOps::apply_galois_times_plain`:
//! TenSEAL's matrix products multiply each diagonal, then rotate it). Anything else that reaches the words (a host
//! read, another operation, a copy on another tile) runs the product on its own first
//! (`GpuImage::words`). Either way the words are SEAL's.
//!
//! The operands' words stay as they were until it runs: the deferred product holds them,
//! and an image writes words it shares only after copying them (copy on write, `image.rs`).

use std::sync::Arc;

use super::image::Words;
use crate::ckks::context::{CkksContext, KswitchKey};
use crate::ckks::fused::DropCorrection;
use crate::ckks::ops::LevelOps;
use crate::cl::Region;
use crate::device::Graph;
use crate::error::Result;

/// A product of `a`'s words (at a level of `primes` primes, in NTT form), to be enqueued
/// on `graph`'s queue.
#[derive(Clone)]
pub(super) struct Deferred {
    context: Arc<CkksContext>,
    graph: Graph,
    primes: usize,
    a: Arc<Words>,
    product: Product,
}

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

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let product = match &self.product {
            Product::Tensor { b: None, .. } => "square",
            Product::Tensor { b: Some(_), .. } => "multiply",
            Product::Plain { .. } => "multiply_plain",
        };
        f.debug_struct("Deferred")
            .field("tile", &self.tile())
            .field("queue", &self.graph.queue_index())
            .field("primes", &self.primes)
            .field("product", &product)
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
            a,
            product,
        }
    }

    /// The tile the product is computed on (its operands' and its buffer's).
    pub(super) fn tile(&self) -> usize {
        self.graph.tile().index()
    }

    /// Whether this is a product of two ciphertexts (which a relinearization takes).
    pub(super) fn is_tensor(&self) -> bool {
        matches!(self.product, Product::Tensor { .. })
    }

    /// A plaintext product's polynomials (None: a product of two ciphertexts).
    pub(super) fn plain_polys(&self) -> Option<usize> {
        match self.product {
            Product::Plain { polys, .. } => Some(polys),
            Product::Tensor { .. } => None,
        }
    }

    /// The operands' buffers, ordered on `graph`'s queue behind their last writers: `a`
    /// and the other factor.
    fn operands(&self, graph: &Graph) -> Result<(&Region, &Region)> {
        let a = self.a.ordered_read(graph)?;
        let b = match &self.product {
            Product::Tensor { b: Some(b), .. } => b.ordered_read(graph)?,
            Product::Tensor { b: None, .. } => a,
            Product::Plain { plain, .. } => plain.ordered_read(graph)?,
        };
        Ok((a, b))
    }

    /// Enqueues the product into `product`'s words on the queue it was deferred on.
    pub(super) fn run(&self, product: &Words) -> Result<()> {
        let ops = LevelOps::new(&self.context, &self.graph, self.primes)?;
        let (a, b) = self.operands(&self.graph)?;
        let dst = product.written_next_on(&self.graph)?;
        match self.product {
            Product::Tensor { .. } => ops.tensor(dst, a, 2, b, 2)?,
            Product::Plain { polys, .. } => ops.multiply_plain(dst, a, polys, b)?,
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
        let Product::Tensor { correction, .. } = self.product else {
            return Err(crate::error::Error::Logic(
                "a plaintext product relinearized as a ciphertext one".into(),
            ));
        };
        let (a, b) = self.operands(ops.graph())?;
        ops.multiply_relinearize(dst, a, b, key, correction)
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
            return Err(crate::error::Error::Logic(
                "a rotation of a product other than a plaintext one of two polynomials".into(),
            ));
        }
        let (ct, plain) = self.operands(ops.graph())?;
        ops.apply_galois_times_plain(dst, ct, plain, galois_elt, key)
    }

    /// Enqueues dst = acc + this plaintext product (minus with `subtract`) on `ops`' queue,
    /// over its polynomials: SEAL's add_inplace (sub_inplace) of the product into acc.
    pub(super) fn run_added(
        &self,
        ops: &LevelOps,
        dst: &Region,
        acc: &Region,
        subtract: bool,
    ) -> Result<()> {
        let polys = self.plain_polys().ok_or_else(|| {
            crate::error::Error::Logic("a ciphertext product added as a plaintext one".into())
        })?;
        let (ct, plain) = self.operands(ops.graph())?;
        ops.multiply_plain_add(dst, acc, ct, plain, polys, subtract)
    }
}
