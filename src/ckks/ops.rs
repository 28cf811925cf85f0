//! SEAL's CKKS Evaluator operations as sequences of kernels on one graph's queue (seed 001
//! Listing 7): each function only enqueues and returns; temporaries come from the
//! graph's pool as scratch buffers and go back as soon as the sequence is enqueued.
//!
//! Ciphertexts are buffers in SEAL's layout (polynomial, then prime, then coefficient)
//! at a level of K primes, in NTT form unless stated. Every function names the SEAL
//! routine it reproduces; their outputs equal SEAL's word for word because each step
//! computes the same residues and every output is fully reduced, as SEAL's are.

use super::context::{CkksContext, KswitchKey, LevelData};
use crate::cl::{self, Buffer};
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

    fn n(&self) -> usize {
        self.context.coeff_count()
    }

    /// A result buffer of `polys` polynomials at level `primes` (an open frame retains it).
    pub fn alloc_result(&self, polys: usize, primes: usize) -> Result<PoolBuffer> {
        self.graph.alloc(polys * primes * self.n())
    }

    fn scratch(&self, words: usize) -> Result<PoolBuffer> {
        self.graph.alloc_scratch(words)
    }

    fn ntt(
        &self,
        buf: &Buffer<u64>,
        polys: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
    ) -> Result<()> {
        self.ntt_with(self.level.plan(), buf, polys, primes, direction, reduce)
    }

    /// `plan`'s transform on this graph; its kernels' events are created only when the
    /// graph records them (profiling).
    fn ntt_with(
        &self,
        plan: &NttPlan,
        buf: &Buffer<u64>,
        polys: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
    ) -> Result<()> {
        let events = plan.enqueue(
            self.graph.queue(),
            buf,
            polys,
            primes,
            direction,
            reduce,
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches(ntt_name(direction), events)
    }

    /// encrypted = -encrypted over `polys` polynomials (SEAL's negate_inplace).
    pub fn negate(&self, ct: &Buffer<u64>, polys: usize) -> Result<()> {
        let k = self.primes();
        self.context
            .kernels()
            .ckks_negate(self.graph, ct, ct, self.level.moduli(), k, polys)
    }

    /// a = a + b over the first `polys` polynomials (SEAL's add_poly_coeffmod per poly).
    pub fn add(&self, a: &Buffer<u64>, b: &Buffer<u64>, polys: usize) -> Result<()> {
        let k = self.primes();
        self.context
            .kernels()
            .ckks_add(self.graph, a, a, b, self.level.moduli(), k, polys)
    }

    /// a = a - b over the first `polys` polynomials.
    pub fn sub(&self, a: &Buffer<u64>, b: &Buffer<u64>, polys: usize) -> Result<()> {
        let k = self.primes();
        self.context
            .kernels()
            .ckks_sub(self.graph, a, a, b, self.level.moduli(), k, polys)
    }

    /// dst = src (copy of `polys` polynomials) or, with `negate`, dst = -src; both as
    /// sub-buffers starting at polynomial `from` of each. For the polynomials one operand
    /// of add / sub has and the other lacks.
    pub fn copy_tail(
        &self,
        dst: &Buffer<u64>,
        src: &Buffer<u64>,
        from: usize,
        polys: usize,
        negate: bool,
    ) -> Result<()> {
        if polys == 0 {
            return Ok(());
        }
        let words = polys * self.poly_words();
        let offset = from * self.poly_words();
        if negate {
            let d = cl::sub_buffer(dst, offset, words)?;
            let s = cl::sub_buffer(src, offset, words)?;
            self.context.kernels().ckks_negate(
                self.graph,
                &d,
                &s,
                self.level.moduli(),
                self.primes(),
                polys,
            )
        } else {
            cl::copy_range(self.graph.queue(), src, offset, dst, offset, words)
        }
    }

    /// Zeroes `polys` polynomials (SEAL's result of sub_inplace(a, a)).
    pub fn zero(&self, ct: &Buffer<u64>, polys: usize) -> Result<()> {
        cl::fill_range(self.graph.queue(), ct, 0, polys * self.poly_words(), 0)
    }

    /// dst = a (x) b, SEAL's ckks_multiply: the tensor product of a ciphertext of `s1`
    /// polynomials with one of `s2` in NTT form, `s1 + s2 - 1` polynomials. a and b may be
    /// the same buffer (square). One multiply-add kernel, or with the context's tensor
    /// unfused ([`CkksContext::fused_tensor`]) the naive sequence of
    /// [`LevelOps::tensor_unfused`].
    pub fn tensor(
        &self,
        dst: &Buffer<u64>,
        a: &Buffer<u64>,
        s1: usize,
        b: &Buffer<u64>,
        s2: usize,
    ) -> Result<()> {
        if !self.context.fused_tensor() {
            return self.tensor_unfused(dst, a, s1, b, s2);
        }
        self.context.kernels().ckks_tensor(
            self.graph,
            dst,
            a,
            s1,
            b,
            s2,
            self.level.moduli(),
            self.primes(),
        )
    }

    /// [`LevelOps::tensor`] without fusion (the benchmarks' baseline): for each output
    /// polynomial t and each pair i + j = t, a copy of a[i] multiplied by b[j] with the
    /// dyadic-product kernel (`ckks_multiply_plain` on one polynomial), into dst[t] for the
    /// first pair and into a temporary added to dst[t] (`ckks_add`) for the others. Same
    /// residues as the fused kernel: each product and each sum is fully reduced mod q.
    pub fn tensor_unfused(
        &self,
        dst: &Buffer<u64>,
        a: &Buffer<u64>,
        s1: usize,
        b: &Buffer<u64>,
        s2: usize,
    ) -> Result<()> {
        if s1 == 0 || s2 == 0 {
            return Err(Error::invalid("tensor product of an empty ciphertext"));
        }
        let words = self.poly_words();
        let (k, queue) = (self.primes(), self.graph.queue());
        let (kernels, moduli) = (self.context.kernels(), self.level.moduli());
        let tmp = self.scratch(words)?;
        for t in 0..s1 + s2 - 1 {
            let out = cl::sub_buffer(dst, t * words, words)?;
            for i in t.saturating_sub(s2 - 1)..=t.min(s1 - 1) {
                let first = i == t.saturating_sub(s2 - 1);
                let target = if first { &out } else { tmp.buffer() };
                let b_j = cl::sub_buffer(b, (t - i) * words, words)?;
                cl::copy_range(queue, a, i * words, target, 0, words)?;
                kernels.ckks_multiply_plain(self.graph, target, &b_j, moduli, k, 1)?;
                if !first {
                    kernels.ckks_add(self.graph, &out, &out, tmp.buffer(), moduli, k, 1)?;
                }
            }
        }
        Ok(())
    }

    /// ct *= plain in NTT form, SEAL's multiply_plain_ntt.
    pub fn multiply_plain(
        &self,
        ct: &Buffer<u64>,
        polys: usize,
        plain: &Buffer<u64>,
    ) -> Result<()> {
        self.context.kernels().ckks_multiply_plain(
            self.graph,
            ct,
            plain,
            self.level.moduli(),
            self.primes(),
            polys,
        )
    }

    /// Forward (SEAL's transform_to_ntt_inplace) or inverse (transform_from_ntt_inplace)
    /// NTT of `polys` polynomials, fully reduced.
    pub fn transform(&self, ct: &Buffer<u64>, polys: usize, direction: NttDirection) -> Result<()> {
        self.ntt(ct, polys, self.primes(), direction, true)
    }

    /// dst (K - 1 primes) = src (K primes) without the last prime of each of `polys`
    /// polynomials: SEAL's mod_switch_drop_to_next.
    pub fn drop_last_prime(
        &self,
        dst: &Buffer<u64>,
        src: &Buffer<u64>,
        polys: usize,
    ) -> Result<()> {
        let k = self.primes();
        if k < 2 {
            return Err(Error::invalid("end of modulus switching chain reached"));
        }
        self.context
            .kernels()
            .ckks_copy_residues(self.graph, dst, k - 1, src, k, k - 1, polys)
    }

    /// dst (K - 1 primes) = src (K primes) divided by the last prime and rounded, for
    /// `polys` polynomials: SEAL's RNSTool::divide_and_round_q_last_ntt_inplace on each,
    /// followed by the drop of the last prime (mod_switch_scale_to_next).
    pub fn rescale(&self, dst: &Buffer<u64>, src: &Buffer<u64>, polys: usize) -> Result<()> {
        let k = self.primes();
        let inv_last = self.level.inv_last()?;
        let kernels = self.context.kernels();
        let moduli = self.level.moduli();
        let n = self.n();
        // The last residue of every polynomial, in coefficient form (rounded by
        // ckks_moddown_prep).
        let last = self.scratch(polys * n)?;
        kernels.ckks_gather_residue(self.graph, last.buffer(), src, k, k - 1, polys)?;
        let single = self.context.single_prime_plan(self.graph.queue(), k - 1)?;
        self.ntt_with(
            &single,
            last.buffer(),
            polys,
            1,
            NttDirection::Inverse,
            true,
        )?;
        // Rounding and (ct mod q_last) mod q_i in one kernel, back to NTT form under each
        // remaining prime.
        let t = self.scratch(polys * (k - 1) * n)?;
        kernels.ckks_moddown_prep(
            self.graph,
            t.buffer(),
            last.buffer(),
            k - 1,
            moduli,
            k - 1,
            polys,
        )?;
        self.ntt(t.buffer(), polys, k - 1, NttDirection::Forward, false)?;
        kernels.ckks_divide_round_finish(
            self.graph,
            dst,
            k - 1,
            src,
            k,
            t.buffer(),
            inv_last,
            moduli,
            k - 1,
            polys,
            false,
        )
    }

    /// SEAL's switch_key_inplace for CKKS: key-switches `target` (one polynomial of K
    /// residues in NTT form, at word `target_offset` of `target`) with `key` and adds the
    /// result to the first two polynomials of `ct`. `target` may be `ct` itself (the
    /// polynomial is copied before `ct` is written).
    pub fn switch_key(
        &self,
        ct: &Buffer<u64>,
        target: &Buffer<u64>,
        target_offset: usize,
        key: &KswitchKey,
    ) -> Result<()> {
        let k = self.primes();
        if key.decomposition_count() < k {
            return Err(Error::invalid(
                "kswitch_keys is not valid for encryption parameters (too few keys for the level)",
            ));
        }
        let special = self.context.special_index()?;
        let inv_special = self.level.inv_special()?;
        let kernels = self.context.kernels();
        let moduli = self.level.moduli();
        let n = self.n();
        let ext = k + 1;

        // t_target: the target in coefficient form.
        let t_target = self.scratch(k * n)?;
        cl::copy_range(
            self.graph.queue(),
            target,
            target_offset,
            t_target.buffer(),
            0,
            k * n,
        )?;
        self.ntt(t_target.buffer(), 1, k, NttDirection::Inverse, true)?;
        // Every residue J under every prime I of the extended base, back in NTT form.
        let dec = self.scratch(k * ext * n)?;
        kernels.ckks_ks_decompose(self.graph, dec.buffer(), t_target.buffer(), moduli, k)?;
        drop(t_target);
        self.ntt(dec.buffer(), k, ext, NttDirection::Forward, false)?;
        // Inner product with the key: two polynomials at level K in prod, their residues
        // under the special prime in last.
        let prod = self.scratch(2 * k * n)?;
        let last = self.scratch(2 * n)?;
        kernels.ckks_ks_inner_product(
            self.graph,
            prod.buffer(),
            last.buffer(),
            dec.buffer(),
            key.buffer(),
            self.context.key_moduli().len(),
            special,
            moduli,
            k,
        )?;
        drop(dec);
        // Mod-down by the special prime, with rounding (in ckks_moddown_prep).
        let single = self
            .context
            .single_prime_plan(self.graph.queue(), special)?;
        self.ntt_with(&single, last.buffer(), 2, 1, NttDirection::Inverse, false)?;
        let t = self.scratch(2 * k * n)?;
        kernels.ckks_moddown_prep(self.graph, t.buffer(), last.buffer(), k, moduli, k, 2)?;
        self.ntt(t.buffer(), 2, k, NttDirection::Forward, false)?;
        kernels.ckks_divide_round_finish(
            self.graph,
            ct,
            k,
            prod.buffer(),
            k,
            t.buffer(),
            inv_special,
            moduli,
            k,
            2,
            true,
        )
    }

    /// SEAL's apply_galois_inplace for CKKS on a ciphertext of 2 polynomials in NTT form:
    /// permutes both, keeps the first, and key-switches the second back.
    pub fn apply_galois(&self, ct: &Buffer<u64>, galois_elt: u32, key: &KswitchKey) -> Result<()> {
        let words = self.poly_words();
        let permuted = self.scratch(2 * words)?;
        self.context.kernels().ckks_galois_ntt(
            self.graph,
            permuted.buffer(),
            ct,
            galois_elt,
            2 * self.primes(),
        )?;
        cl::copy_range(self.graph.queue(), permuted.buffer(), 0, ct, 0, words)?;
        cl::fill_range(self.graph.queue(), ct, words, words, 0)?;
        self.switch_key(ct, permuted.buffer(), words, key)
    }
}

fn ntt_name(direction: NttDirection) -> &'static str {
    match direction {
        NttDirection::Forward => "ntt_forward",
        NttDirection::Inverse => "ntt_inverse",
    }
}
