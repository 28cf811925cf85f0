//! The element-wise operations, one kernel each on the level's residues: SEAL's
//! `negate_inplace`, `add_inplace`, `sub_inplace` (`copy_tail` for the polynomials an
//! out-of-place one leaves as they are, `zero`), `multiply_plain_ntt`, and many adds and
//! subs into one accumulator (`sum`).

use super::LevelOps;
use crate::arith::Modulus;
use crate::ckks::fused::{ChainedMultiplyPlain, FusedPasses, Sources};
use crate::ckks::kernels::IntegerPlain;
use crate::ckks::SumTerm;
use crate::cl::{self, Region};
use crate::error::{Error, Result};

/// Defines the operations of two ciphertexts, one kernel each.
macro_rules! binary_ops {
    ($($(#[$doc:meta])* $name:ident => $kernel:ident;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(
                &self,
                dst: &Region,
                a: &Region,
                b: &Region,
                polys: usize,
            ) -> Result<()> {
                let (k, moduli) = (self.primes(), self.level.moduli());
                self.context.kernels().$kernel(self.graph, dst, a, b, moduli, k, polys)
            }
        )*
    };
}

impl LevelOps<'_> {
    /// dst = -ct over `polys` polynomials (SEAL's negate_inplace); dst may be ct.
    pub fn negate(&self, dst: &Region, ct: &Region, polys: usize) -> Result<()> {
        let (k, moduli) = (self.primes(), self.level.moduli());
        self.context
            .kernels()
            .ckks_negate(self.graph, dst, ct, moduli, k, polys)
    }

    binary_ops! {
        /// dst = a + b over the first `polys` polynomials (SEAL's add_poly_coeffmod per
        /// poly); dst may be a or b.
        add => ckks_add;
        /// dst = a - b over the first `polys` polynomials; dst may be a or b.
        sub => ckks_sub;
    }

    /// Copies polynomials `from .. from + polys` of src to the same place in dst: the
    /// polynomials an out-of-place add / sub leaves as they are.
    pub fn copy_tail(&self, dst: &Region, src: &Region, from: usize, polys: usize) -> Result<()> {
        if polys == 0 {
            return Ok(());
        }
        let (words, offset) = (polys * self.poly_words(), from * self.poly_words());
        cl::copy_range(self.graph.queue(), src, offset, dst, offset, words)
    }

    /// Zeroes `polys` polynomials (SEAL's result of sub_inplace(a, a)).
    pub fn zero(&self, ct: &Region, polys: usize) -> Result<()> {
        cl::fill_range(self.graph.queue(), ct, 0, polys * self.poly_words(), 0)
    }

    /// dst = ct * plain in NTT form, SEAL's multiply_plain_ntt; dst may be ct.
    pub fn multiply_plain(
        &self,
        dst: &Region,
        ct: &Region,
        polys: usize,
        plain: &Region,
    ) -> Result<()> {
        let (k, moduli) = (self.primes(), self.level.moduli());
        self.context
            .kernels()
            .ckks_multiply_plain(self.graph, dst, ct, plain, moduli, k, polys)
    }

    /// dst = dst (0 without `accumulate`) +- each of `terms` over `polys` polynomials, in
    /// one launch: SEAL's add_inplace (sub_inplace) of each term into an accumulator, a
    /// product term multiplied into a temporary first (multiply_plain_ntt). 1 to
    /// `SUM_TERMS_MAX` terms; a term's words may be dst.
    pub fn sum(
        &self,
        dst: &Region,
        accumulate: bool,
        terms: &[SumTerm<&Region>],
        polys: usize,
    ) -> Result<()> {
        let (k, moduli) = (self.primes(), self.level.moduli());
        self.context
            .kernels()
            .ckks_sum(self.graph, dst, accumulate, terms, moduli, k, polys)
    }
}

impl LevelOps<'_> {
    /// Whether this level's key switches in coefficient form run in one chained launch
    /// ([`LevelOps::switch_key_coeff_chained`]).
    pub(crate) fn chains_coeff_key_switch(&self) -> bool {
        self.fused_key_switch()
            .is_some_and(FusedPasses::chains_coeff_key_switch)
    }

    /// Whether multiply_plain in coefficient form runs in one chained launch at this level
    /// ([`LevelOps::multiply_plain_coeff_chained`]).
    pub(crate) fn chains_multiply_plain(&self) -> bool {
        self.fused_key_switch()
            .is_some_and(FusedPasses::chains_multiply_plain)
    }

    /// SEAL's multiply_plain_normal in one chained launch
    /// ([`FusedPasses::chained_multiply_plain`]): src (`polys` polynomials in coefficient
    /// form; a sum read on load) times the plaintext lifted to Z_q, upper-half coefficients
    /// standing for themselves minus t with `upper_half`, into ct (which may be a source).
    /// Errors: the level does not chain it ([`LevelOps::chains_multiply_plain`]); as the
    /// launcher's.
    pub(crate) fn multiply_plain_coeff_chained(
        &self,
        ct: &Region,
        src: Sources,
        polys: usize,
        plain: IntegerPlain,
        upper_half: bool,
    ) -> Result<()> {
        let fused = self
            .fused_key_switch()
            .filter(|f| f.chains_multiply_plain())
            .ok_or_else(|| {
                Error::Logic("a chained multiply_plain at a level that does not chain".into())
            })?;
        let k = self.primes();
        let values = self.scratch((polys + 1) * k * self.n())?;
        let events = fused.chained_multiply_plain(
            self.graph.queue(),
            &ChainedMultiplyPlain {
                src,
                ct,
                polys,
                plain: plain.words,
                plain_count: plain.count.min(self.n()),
                t: &Modulus::new(plain.t)?,
                threshold: if upper_half {
                    plain.threshold()
                } else {
                    u64::MAX
                },
                values: values.buffer(),
                counters: self.graph.chain_counters(),
                k,
            },
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches("multiply_plain_chained", events)
    }
}
