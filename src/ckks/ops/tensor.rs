//! SEAL's `ckks_multiply` (Evaluator::multiply, square): the tensor product of two
//! ciphertexts in NTT form.

use super::LevelOps;
use crate::cl::{self, Region};
use crate::error::{Error, Result};

impl LevelOps<'_> {
    /// dst = a (x) b, SEAL's ckks_multiply: the tensor product of a ciphertext of `s1`
    /// polynomials with one of `s2` in NTT form, `s1 + s2 - 1` polynomials. a and b may be
    /// the same buffer (square). One multiply-add kernel, or with the context's tensor
    /// unfused ([`crate::ckks::context::CkksContext::fused`]) the naive sequence of
    /// [`LevelOps::tensor_unfused`].
    pub fn tensor(&self, dst: &Region, a: &Region, s1: usize, b: &Region, s2: usize) -> Result<()> {
        if !self.context.fused() {
            return self.tensor_unfused(dst, [a, b], [s1, s2]);
        }
        let (k, moduli) = (self.primes(), self.level.moduli());
        self.context
            .kernels()
            .ckks_tensor(self.graph, dst, a, s1, b, s2, moduli, k)
    }

    /// [`LevelOps::tensor`] without fusion (the benchmarks' baseline): for each output
    /// polynomial t and each pair i + j = t, copies of a[i] and b[j] multiplied with the
    /// dyadic-product kernel (`ckks_multiply_plain` on one polynomial), into a temporary for
    /// dst[t] for the first pair and into another added to it (`ckks_add`) for the others,
    /// then copied to dst[t]. Same residues as the fused kernel: each product and each sum is
    /// fully reduced mod q.
    fn tensor_unfused(
        &self,
        dst: &Region,
        [a, b]: [&Region; 2],
        [s1, s2]: [usize; 2],
    ) -> Result<()> {
        if s1 == 0 || s2 == 0 {
            return Err(Error::invalid("tensor product of an empty ciphertext"));
        }
        let words = self.poly_words();
        let (k, queue) = (self.primes(), self.graph.queue());
        let (kernels, moduli) = (self.context.kernels(), self.level.moduli());
        let (sum, tmp, b_j) = (
            self.scratch(words)?,
            self.scratch(words)?,
            self.scratch(words)?,
        );
        for t in 0..s1 + s2 - 1 {
            for i in t.saturating_sub(s2 - 1)..=t.min(s1 - 1) {
                let first = i == t.saturating_sub(s2 - 1);
                let target = if first { sum.buffer() } else { tmp.buffer() };
                cl::copy_range(queue, a, i * words, target, 0, words)?;
                cl::copy_range(queue, b, (t - i) * words, b_j.buffer(), 0, words)?;
                kernels.ckks_multiply_plain(
                    self.graph,
                    target,
                    target,
                    b_j.buffer(),
                    moduli,
                    k,
                    1,
                )?;
                if !first {
                    kernels.ckks_add(
                        self.graph,
                        sum.buffer(),
                        sum.buffer(),
                        tmp.buffer(),
                        moduli,
                        k,
                        1,
                    )?;
                }
            }
            cl::copy_range(queue, sum.buffer(), 0, dst, t * words, words)?;
        }
        Ok(())
    }
}
