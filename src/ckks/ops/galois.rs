//! SEAL's `apply_galois_inplace` for CKKS (Evaluator::rotate_vector,
//! complex_conjugate): the galois permutation in NTT form, then key switching
//! ([`super::keyswitch`]).

use super::keyswitch::Switch;
use super::LevelOps;
use crate::ckks::context::KswitchKey;
use crate::ckks::fused::FirstPass;
#[cfg(doc)]
use crate::ckks::fused::FusedPasses;
use crate::cl::Region;
use crate::error::Result;

impl LevelOps<'_> {
    /// SEAL's apply_galois_inplace for CKKS on a ciphertext `ct` of 2 polynomials in NTT
    /// form, into `dst` (which may be `ct`: `ct` is read only by the permutation, before
    /// anything writes `dst`): permutes both, keeps the first, and key-switches the second
    /// back. Fused, the permutation shares its launch with the first pass of key switching's
    /// inverse NTT ([`FusedPasses::inverse_first_pass_galois`], `opencl/fused.cl`): 5
    /// launches with a two-pass NTT layout, one where the level chains
    /// ([`FusedPasses::chained_key_switch`]).
    pub fn apply_galois(
        &self,
        dst: &Region,
        ct: &Region,
        galois_elt: u32,
        key: &KswitchKey,
    ) -> Result<()> {
        let words = self.poly_words();
        self.check_key_switch(key, words)?;
        let permuted = self.scratch(2 * words)?;
        // dst = (permuted[0], 0) + the key-switched permuted[1], with the first term added
        // by the mod-down's last store.
        let switch = Switch {
            ct: dst,
            acc: (permuted.buffer(), 1),
            target: permuted.buffer(),
            target_offset: words,
            key,
        };
        let Some(fused) = self.fused_key_switch() else {
            self.context.kernels().ckks_galois_ntt(
                self.graph,
                permuted.buffer(),
                ct,
                galois_elt,
                2 * self.primes(),
            )?;
            return self.switch_key_into(&switch);
        };
        if fused.chains() {
            let first = FirstPass::Galois {
                src: ct,
                galois_elt,
                permuted: permuted.buffer(),
            };
            return self.switch_key_chained(fused, &switch, first);
        }
        let t_target = self.scratch(words)?;
        let events = fused.inverse_first_pass_galois(
            self.graph.queue(),
            t_target.buffer(),
            ct,
            permuted.buffer(),
            galois_elt,
            2,
            self.primes(),
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches("ntt_inverse_galois", events)?;
        self.switch_key_from_first_pass(fused, &switch, t_target)
    }
}
