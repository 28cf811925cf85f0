//! SEAL's `mod_switch_scale_to_next` (Evaluator::rescale_to_next, rescale_to) and
//! `mod_switch_drop_to_next` (mod_switch_to_next for CKKS ciphertexts).

use super::moddown::{LastResidue, ModDownSpec};
use super::LevelOps;
use crate::ckks::fused::{DivideRound, DropCorrection, Sources};
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

    /// Whether [`LevelOps::rescale_sum`] runs here: the level chains, with the chained
    /// pass of a sum.
    pub fn chains_rescale_sum(&self) -> bool {
        self.level.fused().is_some_and(|f| f.chains_moddown_sum())
    }

    /// dst (K - 1 primes) = `sum` (plaintext products in NTT form added, or one:
    /// [`Sources::products`]; `polys` polynomials of K residues) rescaled, as
    /// [`LevelOps::rescale`] of the sum's words, in one launch that writes those words
    /// first (into a scratch buffer). Errors: the level has no such launch
    /// ([`LevelOps::chains_rescale_sum`]); as [`LevelOps::rescale`]'s; a term or plaintext
    /// shorter than it reads.
    pub fn rescale_sum(&self, dst: &Region, sum: Sources, polys: usize) -> Result<()> {
        let k = self.primes();
        if k < 2 {
            return Err(Error::invalid("end of modulus switching chain reached"));
        }
        let inv = self.level.inv_last()?;
        let summed = self.scratch(polys * k * self.n())?;
        let divide = DivideRound::dropping_last(dst, summed.buffer(), k, inv, polys);
        self.mod_down_chained_from(k - 1, &divide, Some(sum), DropCorrection::Round)
    }
}
