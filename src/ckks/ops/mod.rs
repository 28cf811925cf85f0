//! SEAL's CKKS Evaluator operations as sequences of kernels on one graph's queue (Zhai et
//! al., "Accelerating Encrypted Computing on Intel GPUs", Listing 7): each function only
//! enqueues and returns; temporaries come from the graph's pool as scratch buffers and go
//! back as soon as the sequence is enqueued.
//!
//! Ciphertexts are buffers in SEAL's layout (polynomial, then prime, then coefficient)
//! at a level of K primes, in NTT form unless stated. Every function names the SEAL
//! routine it reproduces; their outputs equal SEAL's word for word because each step
//! computes the same residues and every output is fully reduced, as SEAL's are.
//!
//! One file per SEAL operation (key switching with the two operations made of it), each an
//! `impl LevelOps` block:
//!
//! | file | SEAL |
//! |---|---|
//! | `elementwise.rs` | negate, add, sub, multiply_plain_ntt |
//! | `tensor.rs` | ckks_multiply (multiply, square) |
//! | `keyswitch.rs` | switch_key_inplace, and relinearize_internal and apply_galois_inplace (rotate_vector, complex_conjugate), made of it |
//! | `rescale.rs` | mod_switch_scale_to_next, mod_switch_drop_to_next |
//! | `moddown.rs` | divide_and_round_q_last_ntt_inplace and the end of switch_key_inplace, shared |
//!
//! The fused passes they run on a staged NTT plan are in `crate::ckks::fused` (one file per
//! pass, beside its kernel source). This file holds the level's view and the transforms.

mod elementwise;
mod keyswitch;
mod moddown;
mod rescale;
mod tensor;

pub use keyswitch::Rotation;
pub(crate) use keyswitch::Switch;
pub(crate) use moddown::{LastResidue, ModDownSpec};

use super::context::{CkksContext, LevelData};
use super::fused::{ChainedTransform, Sources};
use crate::cl::Region;
use crate::device::Graph;
use crate::error::{Error, Result};
use crate::memcache::PoolBuffer;
use crate::ntt::{NttDirection, NttPlan};

/// One level's view of an operation: the context, the graph it runs on, and level K.
pub struct LevelOps<'a> {
    context: &'a CkksContext,
    graph: &'a Graph,
    level: std::sync::Arc<LevelData>,
}

impl<'a> LevelOps<'a> {
    /// Operations at the level of `primes` (K) primes of `context`, on `graph`.
    pub fn new(context: &'a CkksContext, graph: &'a Graph, primes: usize) -> Result<Self> {
        let level = context.level(graph.queue(), primes)?;
        Ok(LevelOps {
            context,
            graph,
            level,
        })
    }

    /// The graph the operations are enqueued on.
    pub fn graph(&self) -> &Graph {
        self.graph
    }

    /// K.
    pub fn primes(&self) -> usize {
        self.level.primes()
    }

    /// Words of one polynomial at this level (K * N).
    pub fn poly_words(&self) -> usize {
        self.primes() * self.context.coeff_count()
    }

    pub(crate) fn n(&self) -> usize {
        self.context.coeff_count()
    }

    /// The parameter set (the integer schemes' operations reach its kernels and plans).
    pub(crate) fn context(&self) -> &CkksContext {
        self.context
    }

    /// The level's device data.
    pub(crate) fn level(&self) -> &LevelData {
        &self.level
    }

    /// A result buffer of `polys` polynomials at level `primes` (an open frame retains it).
    pub fn alloc_result(&self, polys: usize, primes: usize) -> Result<PoolBuffer> {
        self.graph.alloc(polys * primes * self.n())
    }

    pub(crate) fn scratch(&self, words: usize) -> Result<PoolBuffer> {
        self.graph.alloc_scratch(words)
    }

    /// The level plan's transform of `polys` polynomials of `primes` residues in `buf`:
    /// fully reduced with `reduce`, else lazy (forward < 4q, inverse < 2q). One launch
    /// where the level chains ([`super::fused::FusedPasses::chained_transform`], profiled as
    /// `ntt_forward_chained` or `ntt_inverse_chained`), else the plan's (`ntt_forward`,
    /// `ntt_inverse`, numbered by pass).
    pub(crate) fn ntt(
        &self,
        buf: &Region,
        [polys, primes]: [usize; 2],
        to: NttDirection,
        reduce: bool,
    ) -> Result<()> {
        if self.chains_transform() {
            return self.ntt_chained(buf, None, [polys, primes], to, reduce);
        }
        let plan = self.level.plan();
        self.ntt_with(ntt_name(to), plan, buf, polys, primes, to, reduce)
    }

    /// Whether this level's transforms run as one chained launch each
    /// ([`super::fused::FusedPasses::chained_transform`]).
    pub fn chains_transform(&self) -> bool {
        self.level.fused().is_some_and(|f| f.chains())
    }

    /// Whether this level's chained transforms take a sum ([`LevelOps::transform_sum`]).
    pub fn chains_transform_sum(&self) -> bool {
        self.level.fused().is_some_and(|f| f.chains_transform_sum())
    }

    /// SEAL's transform_to_ntt (`to` forward) or transform_from_ntt of `src` (`polys`
    /// polynomials of the level's primes, summed in the transform's first pass: forward a
    /// sum of ciphertexts, [`Sources::sum`]; inverse a sum of plaintext products in NTT
    /// form, [`Sources::products`]) into `dst` (which may be an unshifted term), fully
    /// reduced, in one launch. Errors: the level does not chain it
    /// ([`LevelOps::chains_transform_sum`]); as the launcher's.
    pub fn transform_sum(
        &self,
        dst: &Region,
        src: Sources,
        polys: usize,
        to: NttDirection,
    ) -> Result<()> {
        self.ntt_chained(dst, Some(src), [polys, self.primes()], to, true)
    }

    /// [`LevelOps::ntt`] in one chained launch, of `sum` where given.
    fn ntt_chained(
        &self,
        buf: &Region,
        sum: Option<Sources>,
        [polys, primes]: [usize; 2],
        to: NttDirection,
        reduce: bool,
    ) -> Result<()> {
        let fused = self.level.fused().filter(|f| f.chains()).ok_or_else(|| {
            Error::Logic("a chained transform at a level that does not chain".into())
        })?;
        let events = fused.chained_transform(
            self.graph.queue(),
            &ChainedTransform {
                values: buf,
                sum,
                count: polys,
                primes,
                direction: to,
                reduce,
                counters: self.graph.chain_counters(),
            },
            self.graph.is_profiling(),
        )?;
        let name = match (to, sum) {
            (NttDirection::Forward, None) => "ntt_forward_chained",
            (NttDirection::Inverse, None) => "ntt_inverse_chained",
            (NttDirection::Forward, Some(_)) => "ntt_forward_sum_chained",
            (NttDirection::Inverse, Some(_)) => "ntt_inverse_sum_chained",
        };
        self.graph.note_launches(name, events)
    }

    /// `plan`'s transform on this graph, profiled as `name`; its kernels' events are
    /// created only when the graph records them (profiling).
    #[allow(clippy::too_many_arguments)]
    fn ntt_with(
        &self,
        name: &str,
        plan: &NttPlan,
        buf: &Region,
        polys: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
    ) -> Result<()> {
        let events = plan.transform(
            self.graph.queue(),
            buf,
            polys,
            primes,
            direction,
            reduce,
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches(name, events)
    }

    /// Forward (SEAL's transform_to_ntt_inplace) or inverse (transform_from_ntt_inplace)
    /// NTT of `polys` polynomials, fully reduced.
    pub fn transform(&self, ct: &Region, polys: usize, direction: NttDirection) -> Result<()> {
        self.ntt(ct, [polys, self.primes()], direction, true)
    }
}

fn ntt_name(direction: NttDirection) -> &'static str {
    match direction {
        NttDirection::Forward => "ntt_forward",
        NttDirection::Inverse => "ntt_inverse",
    }
}
