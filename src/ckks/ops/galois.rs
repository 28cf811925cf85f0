//! SEAL's `apply_galois_inplace` for CKKS (Evaluator::rotate_vector,
//! complex_conjugate): the galois permutation in NTT form, then key switching
//! ([`super::relin`]).

use super::LevelOps;
use crate::ckks::context::KswitchKey;
use crate::cl::Buffer;
use crate::error::Result;

impl LevelOps<'_> {
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
        // ct = (permuted[0], 0) + the key-switched permuted[1], with the first term added
        // by the mod-down's last store.
        self.switch_key_into(ct, (permuted.buffer(), 1), permuted.buffer(), words, key)
    }
}
