//! SEAL's `mod_switch_scale_to_next` (Evaluator::rescale_to_next, rescale_to) and
//! `mod_switch_drop_to_next` (mod_switch_to_next for CKKS ciphertexts).

use super::moddown::{LastResidue, ModDownSpec};
use super::LevelOps;
use crate::ckks::fused::DivideRound;
use crate::cl::Region;
use crate::error::{Error, Result};

impl LevelOps<'_> {
    /// dst (K - 1 primes) = src (K primes) without the last prime of each of `polys`
    /// polynomials: SEAL's mod_switch_drop_to_next.
    pub fn drop_last_prime(&self, dst: &Region, src: &Region, polys: usize) -> Result<()> {
        let k = self.primes();
        if k < 2 {
            return Err(Error::invalid("end of modulus switching chain reached"));
        }
        self.context
            .kernels()
            .ckks_drop_last(self.graph, dst, src, k, polys)
    }

    /// dst (K - 1 primes) = src (K primes) divided by the last prime and rounded, for
    /// `polys` polynomials: SEAL's RNSTool::divide_and_round_q_last_ntt_inplace on each,
    /// followed by the drop of the last prime (mod_switch_scale_to_next). The mod-down of
    /// [`super::moddown`]: 3 launches with a two-pass NTT layout (one where the level
    /// chains), 2 with one.
    pub fn rescale(&self, dst: &Region, src: &Region, polys: usize) -> Result<()> {
        let k = self.primes();
        let inv = self.level.inv_last()?;
        self.mod_down(&ModDownSpec {
            last: LastResidue::Within {
                buf: src,
                stride: k,
                index: k - 1,
            },
            last_key_prime: k - 1,
            divide: DivideRound::dropping_last(dst, src, k, inv, polys),
            more: &[],
        })
    }
}
