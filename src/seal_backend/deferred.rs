//! A CKKS multiply whose tensor product waits for its relinearization.
//!
//! SEAL's programs multiply and then relinearize the product (`multiply_inplace`, then
//! `relinearize_inplace`; or out of place, a copy and the in-place call), and at small rings
//! NVIDIA's OpenCL charges the host more per launch (~10 us) than the device takes for the
//! tensor product. So where the level chains, a multiply of two ciphertexts of two
//! polynomials enqueues nothing: the product's image holds a buffer for its three
//! polynomials and a [`DeferredTensor`], the product's operands and where to compute it.
//! The relinearization that takes it runs both in one launch
//! (`LevelOps::multiply_relinearize`); anything else that reaches the words (a host read,
//! another operation, a copy on another tile) runs the tensor product on its own first
//! (`GpuImage::words`). Either way the words are SEAL's.
//!
//! The operands' words stay as they were until it runs: the deferred product holds them,
//! and an image writes words it shares only after copying them (copy on write, `image.rs`).

use std::sync::Arc;

use super::image::Words;
use crate::ckks::context::{CkksContext, KswitchKey};
use crate::ckks::ops::LevelOps;
use crate::cl::Region;
use crate::device::Graph;
use crate::error::Result;

/// The tensor product of `a` and `b` (two polynomials each at a level of `primes` primes,
/// in NTT form; `b` None: a square), to be enqueued on `graph`'s queue.
#[derive(Clone)]
pub(super) struct DeferredTensor {
    context: Arc<CkksContext>,
    graph: Graph,
    primes: usize,
    a: Arc<Words>,
    b: Option<Arc<Words>>,
}

impl std::fmt::Debug for DeferredTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredTensor")
            .field("tile", &self.tile())
            .field("queue", &self.graph.queue_index())
            .field("primes", &self.primes)
            .field("square", &self.b.is_none())
            .finish()
    }
}

impl DeferredTensor {
    pub(super) fn new(
        context: Arc<CkksContext>,
        graph: &Graph,
        primes: usize,
        a: Arc<Words>,
        b: Option<Arc<Words>>,
    ) -> DeferredTensor {
        DeferredTensor {
            context,
            graph: graph.clone(),
            primes,
            a,
            b,
        }
    }

    /// The tile the product is computed on (its operands' and its buffer's).
    pub(super) fn tile(&self) -> usize {
        self.graph.tile().index()
    }

    /// The operands' buffers, ordered on `graph`'s queue behind their last writers.
    fn operands(&self, graph: &Graph) -> Result<(&Region, &Region)> {
        let a = self.a.ordered_read(graph)?;
        let b = match &self.b {
            Some(b) => b.ordered_read(graph)?,
            None => a,
        };
        Ok((a, b))
    }

    /// Enqueues the tensor product into `product`'s three polynomials on the queue it was
    /// deferred on.
    pub(super) fn run(&self, product: &Words) -> Result<()> {
        let ops = LevelOps::new(&self.context, &self.graph, self.primes)?;
        let (a, b) = self.operands(&self.graph)?;
        let dst = product.written_next_on(&self.graph)?;
        ops.tensor(dst, a, 2, b, 2)?;
        // Outside any operation's issue: `synchronize` must wait for this queue too.
        self.graph.note_issued();
        Ok(())
    }

    /// Enqueues the product and its relinearization with `key` on `ops`' queue into `dst`
    /// (three polynomials, the product's buffer on `ops`' tile; its first two hold the
    /// result).
    pub(super) fn run_relinearized(
        &self,
        ops: &LevelOps,
        dst: &Region,
        key: &KswitchKey,
    ) -> Result<()> {
        let (a, b) = self.operands(ops.graph())?;
        ops.multiply_relinearize(dst, a, b, key)
    }
}
