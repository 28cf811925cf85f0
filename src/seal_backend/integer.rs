//! The routed operations only BFV and BGV take: a plaintext of N or fewer coefficients mod t
//! (its image holds exactly those words) multiplied into a coefficient-form ciphertext, or
//! scaled by q / t and added (`crate::integer::plain`); and the key switches and modulus
//! switches of the routed operations, CKKS's or the integer schemes' (`crate::integer::ops`)
//! by the level's scheme.

use std::sync::Arc;

use super::image::Rewrite;
use super::image::{copy_other_polys, rewrite};
use super::transparency::Zeros;
use super::{Backend, GpuImage, Level};
use crate::arith::Modulus;
use crate::ckks::context::KswitchKey;
use crate::ckks::fused::{Sources, MULTIPLY_PLAIN_SOURCE_TERMS};
use crate::ckks::kernels::IntegerPlain;
use crate::ckks::ops::LevelOps;
use crate::cl::{self, Region};
use crate::error::{Error, Result};
use crate::integer::kernels::IntegerKernels;
use crate::integer::multiply::BehzLevels;
use crate::integer::ops::{IntegerOps, IntegerScheme};
use crate::integer::plain::{add_plain_corrected, multiply_plain_coeff, scale_add_plain};
use crate::memcache::PoolBuffer;
use crate::ntt::NttDirection;

/// SEAL's scheme of an operation's parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Ckks,
    /// Ciphertexts in coefficient form.
    Bfv,
    /// Ciphertexts in NTT form with `ntt_form` (SEAL 4.1 on), else in coefficient form.
    Bgv {
        ntt_form: bool,
    },
}

impl Backend {
    /// ct *= plain with both in coefficient form (SEAL's `multiply_plain_normal`); upper-half
    /// coefficients stand for themselves minus t with `upper_half` (see
    /// `integer::plain::multiply_plain_coeff`). With `power_of_x` = Some(s), plain is the
    /// monomial X^s (coefficient 1: SEAL shifts, whatever t), which, where the level chains
    /// and 0 < s < N, is deferred as a sum that the chained passes read on load
    /// (`GpuImage::defer_shifted`): SealPIR's query expansion multiplies every difference by
    /// such a monomial and rotates, adds or transforms the product.
    pub fn multiply_plain_coeff(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
        upper_half: bool,
        power_of_x: Option<u64>,
    ) -> Result<()> {
        let step = |ops: &LevelOps, target: &Rewrite, p: IntegerPlain| {
            let src = Sources::one(target.src());
            multiply_plain_coeff(ops, target.dst, src, size, p, upper_half)
        };
        // Else a sum from zero deferred in ct (SEAL's out-of-place sub, say, copied into the
        // product) is read on the chained launch's loads: it never runs.
        let deferred = |ops: &LevelOps, ct: &mut GpuImage, p: IntegerPlain| {
            if !ops.chains_multiply_plain() {
                return Ok(false);
            }
            if let Some(shift) = power_of_x.filter(|&s| (1..ops.n() as u64).contains(&s)) {
                let context = self.context(ops.graph(), level)?;
                if ct.defer_shifted(ops, &context, size, shift as u32)? {
                    return Ok(true);
                }
            }
            let tile = ops.graph().tile().index();
            ct.consume_deferred(
                ops.graph(),
                |d| d.reads_as_sources(tile, MULTIPLY_PLAIN_SOURCE_TERMS),
                |d, dst| {
                    let src = Sources::sum(&d.sources(ops.graph())?)?;
                    multiply_plain_coeff(ops, dst, src, size, p, upper_half)
                },
            )
        };
        self.with_integer_plain(
            "multiply_plain",
            level,
            ct,
            size,
            plain,
            Zeros::times_plain,
            Some(&deferred),
            step,
        )
    }

    /// ct.data(0) += round(q plain / t), or -= with `subtract` (BFV's add_plain, sub_plain).
    pub fn add_plain_scaled(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
        subtract: bool,
    ) -> Result<()> {
        let step = |ops: &LevelOps, target: &Rewrite, p: IntegerPlain| {
            copy_other_polys(ops, target, size)?;
            scale_add_plain(ops, target.dst, target.src(), p, subtract)
        };
        let name = if subtract { "sub_plain" } else { "add_plain" };
        self.with_integer_plain(name, level, ct, size, plain, Zeros::plus_plain, None, step)
    }

    /// ct.data(0) += plain times the correction factor `factor` mod t, or -= with `subtract`
    /// (BGV's add_plain, sub_plain), in the level's form.
    pub fn add_plain_corrected(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
        factor: u64,
        subtract: bool,
    ) -> Result<()> {
        let Scheme::Bgv { ntt_form } = level.scheme else {
            return Err(Error::invalid(
                "a plaintext times a correction factor is BGV's add_plain",
            ));
        };
        let step = |ops: &LevelOps, target: &Rewrite, p: IntegerPlain| {
            copy_other_polys(ops, target, size)?;
            add_plain_corrected(ops, target.dst, target.src(), p, factor, ntt_form, subtract)
        };
        let name = if subtract { "sub_plain" } else { "add_plain" };
        self.with_integer_plain(name, level, ct, size, plain, Zeros::plus_plain, None, step)
    }

    /// `step(ops, target, plain)` after checking that `ct` holds `size` polynomials and `plain`
    /// 1 to N coefficients mod t; `target` is where ct's new contents go; the result's zeros
    /// are `zeros(ct's, plain's)`. Where `consume(ops, ct, plain)` returns true, it did the
    /// operation itself (with ct's deferred work) and `step` does not run.
    #[allow(clippy::too_many_arguments)]
    fn with_integer_plain(
        &self,
        name: &'static str,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
        zeros: fn(Zeros, Zeros) -> Zeros,
        consume: Option<&ConsumePlain<'_>>,
        step: impl FnOnce(&LevelOps, &Rewrite, IntegerPlain) -> Result<()>,
    ) -> Result<()> {
        self.with_ops(name, level, |ops| {
            ct.expect(size, ops, "encrypted")?;
            let (count, t) = plain_shape(ops, level, plain)?;
            let zeros = zeros(ct.zeros(ops.poly_words()), plain.zeros(count));
            let words = plain.read_on(ops.graph())?;
            let p = IntegerPlain {
                words: &words,
                count,
                t,
            };
            if let Some(consume) = consume {
                if consume(ops, ct, p)? {
                    ct.set_zeros(zeros, ops.poly_words());
                    return Ok(());
                }
            }
            rewrite(ops, ct, zeros, |target| step(ops, target, p))
        })
    }
}

/// An operation on a ciphertext and a plaintext that may run with the ciphertext's deferred
/// work (see `Backend::with_integer_plain`): whether it did.
type ConsumePlain<'a> = dyn Fn(&LevelOps, &mut GpuImage, IntegerPlain) -> Result<bool> + 'a;

/// The plaintext's coefficients and plain modulus: errors unless the level has a plain
/// modulus and the image holds 1 to N coefficients.
fn plain_shape(ops: &LevelOps, level: &Level, plain: &GpuImage) -> Result<(usize, u64)> {
    let n = 1usize << level.log_n;
    if level.plain_modulus == 0 {
        return Err(Error::invalid(
            "a plaintext in coefficient form needs a plain modulus (BFV or BGV)",
        ));
    }
    if plain.is_empty() || plain.len() > n {
        return Err(Error::invalid(format!(
            "plain is not valid for encryption parameters: its device image holds {} words, \
             at most N = {n} coefficients at {} primes",
            plain.len(),
            ops.primes()
        )));
    }
    Ok((plain.len(), level.plain_modulus))
}

/* ---- products, key switching and modulus switching: CKKS's, or the integer schemes' --- */

impl Backend {
    /// dst = a (x) b (`a_size` and `b_size` polynomials; b may be a): BFV's by SEAL's BEHZ
    /// base extensions in coefficient form, CKKS's and BGV's the tensor product in NTT form,
    /// and BGV's of coefficient-form operands (SEAL 4.0) by SEAL's `bgv_multiply`: the
    /// operands' forward NTTs (copies: a and b stay), the tensor product, and its inverse NTT.
    /// Each step is exact mod q_i, so the words are SEAL's whatever order it sums in.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tensor_into(
        &self,
        ops: &LevelOps,
        level: &Level,
        dst: &Region,
        a: &Region,
        a_size: usize,
        b: &Region,
        b_size: usize,
    ) -> Result<()> {
        match level.scheme {
            Scheme::Ckks | Scheme::Bgv { ntt_form: true } => {
                return ops.tensor(dst, a, a_size, b, b_size)
            }
            Scheme::Bgv { ntt_form: false } => {
                let words = ops.poly_words();
                let to_ntt = |src: &Region, size: usize| -> Result<PoolBuffer> {
                    let copy = ops.scratch(size * words)?;
                    cl::copy_range(ops.graph().queue(), src, 0, copy.buffer(), 0, size * words)?;
                    ops.transform(copy.buffer(), size, NttDirection::Forward)?;
                    Ok(copy)
                };
                let a_ntt = to_ntt(a, a_size)?;
                // A square (b is a) transforms once, as SEAL does for one operand.
                let b_ntt = if std::ptr::eq(a, b) {
                    None
                } else {
                    Some(to_ntt(b, b_size)?)
                };
                let b_ntt = b_ntt.as_ref().unwrap_or(&a_ntt);
                ops.tensor(dst, a_ntt.buffer(), a_size, b_ntt.buffer(), b_size)?;
                return ops.transform(dst, a_size + b_size - 1, NttDirection::Inverse);
            }
            Scheme::Bfv => {}
        }
        let key = (level.key_parms_id, ops.graph().tile().index());
        let found = self.behz.read().get(&key).cloned();
        let levels = match found {
            Some(levels) => levels,
            None => {
                let mut all = self.behz.write();
                match all.get(&key) {
                    Some(levels) => levels.clone(),
                    None => {
                        let data = if level.using_keyswitching {
                            &level.key_moduli[..level.key_moduli.len() - 1]
                        } else {
                            level.key_moduli
                        };
                        let levels = Arc::new(BehzLevels::new(
                            ops.graph().context(),
                            level.log_n,
                            data,
                            level.plain_modulus,
                            self.strategy,
                            ops.context().chain(),
                        )?);
                        all.insert(key, levels.clone());
                        levels
                    }
                }
            }
        };
        levels
            .level(ops.graph().queue(), ops.primes())?
            .bfv_multiply(ops.graph(), dst, a, a_size, b, b_size)
    }

    /// Relinearizes `ct` (`size` polynomials) in place with `keys` in `level`'s scheme.
    pub(super) fn relinearize_in(
        &self,
        ops: &LevelOps,
        level: &Level,
        ct: &Region,
        size: usize,
        keys: &[&KswitchKey],
    ) -> Result<()> {
        self.by_scheme(
            ops,
            level,
            || ops.relinearize(ct, size, keys),
            |integer| integer.relinearize(ct, size, keys),
        )
    }

    /// dst's first two polynomials = `src`'s three relinearized with `key`, in `level`'s
    /// scheme (dst does not overlap src).
    pub(super) fn relinearize_into(
        &self,
        ops: &LevelOps,
        level: &Level,
        dst: &Region,
        src: &Region,
        key: &KswitchKey,
    ) -> Result<()> {
        self.by_scheme(
            ops,
            level,
            || ops.relinearize_into(dst, src, key),
            |integer| integer.relinearize_into(dst, src, key),
        )
    }

    /// dst = `src` permuted by `galois_elt` and key-switched with `key`, in `level`'s scheme
    /// (a sum of ciphertexts only where [`Backend::rotates_sums`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn apply_galois_into(
        &self,
        ops: &LevelOps,
        level: &Level,
        dst: &Region,
        src: Sources,
        galois_elt: u32,
        key: &KswitchKey,
    ) -> Result<()> {
        self.by_scheme(
            ops,
            level,
            || ops.apply_galois_sum(dst, src, galois_elt, key),
            |integer| integer.apply_galois(dst, src, galois_elt, key),
        )
    }

    /// Whether [`Backend::apply_galois_into`] reads a sum of ciphertexts on its loads at
    /// this level (a chained rotation: CKKS's in NTT form, BFV's and SEAL 4.0's BGV's in
    /// coefficient form).
    pub(super) fn rotates_sums(&self, ops: &LevelOps, level: &Level) -> Result<bool> {
        self.by_scheme(
            ops,
            level,
            || Ok(ops.chains()),
            |integer| Ok(integer.rotates_sums()),
        )
    }

    /// dst = src's `polys` polynomials at the next level, in `level`'s scheme.
    pub(super) fn mod_switch_into(
        &self,
        ops: &LevelOps,
        level: &Level,
        dst: &Region,
        src: &Region,
        polys: usize,
    ) -> Result<()> {
        self.by_scheme(
            ops,
            level,
            || ops.drop_last_prime(dst, src, polys),
            |integer| integer.mod_switch_to_next(dst, src, polys),
        )
    }

    /// `ckks()` for CKKS; for BFV and BGV, `integer` on the level's integer operations.
    fn by_scheme<T>(
        &self,
        ops: &LevelOps,
        level: &Level,
        ckks: impl FnOnce() -> Result<T>,
        integer: impl FnOnce(&IntegerOps) -> Result<T>,
    ) -> Result<T> {
        match self.integer_ops(ops, level)? {
            None => ckks(),
            Some((kernels, scheme)) => integer(&IntegerOps::new(
                ops.context(),
                &kernels,
                ops.graph(),
                ops.primes(),
                scheme,
            )?),
        }
    }

    /// None for CKKS; for BFV and BGV their kernels on the tile of `ops` (built on first use)
    /// and the scheme.
    fn integer_ops(
        &self,
        ops: &LevelOps,
        level: &Level,
    ) -> Result<Option<(Arc<IntegerKernels>, IntegerScheme)>> {
        let scheme = match level.scheme {
            Scheme::Ckks => return Ok(None),
            Scheme::Bfv => IntegerScheme::Bfv,
            Scheme::Bgv { ntt_form } => IntegerScheme::Bgv {
                plain_modulus: Modulus::new(level.plain_modulus)?,
                ntt_form,
            },
        };
        let key = (ops.graph().tile().index(), level.log_n);
        if let Some(kernels) = self.integer_kernels.read().get(&key) {
            return Ok(Some((kernels.clone(), scheme)));
        }
        let mut all = self.integer_kernels.write();
        let kernels = match all.get(&key) {
            Some(kernels) => kernels.clone(),
            None => {
                let kernels = Arc::new(IntegerKernels::new(ops.graph().context(), level.log_n)?);
                all.insert(key, kernels.clone());
                kernels
            }
        };
        Ok(Some((kernels, scheme)))
    }
}
