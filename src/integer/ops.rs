//! SEAL's BFV and BGV Evaluator operations that need key switching or a division by a
//! dropped prime, as kernel sequences on one level's device regions (as
//! `crate::ckks::ops`, whose key switching and mod-down they run on): `switch_key_inplace`,
//! `relinearize_internal`, `apply_galois_inplace` and `mod_switch_scale_to_next`.
//!
//! SEAL's schemes differ in two places only, which [`IntegerScheme`] names:
//!
//! - **The form of a ciphertext.** BFV's are in coefficient form; BGV's in NTT form (SEAL
//!   4.1 and later; 4.0 kept them in coefficient form). Key switching is exact modular
//!   arithmetic: its inner product with the key depends only on the target's residues
//!   (SEAL transforms a coefficient-form target itself, and takes an NTT-form target's
//!   residue under its own prime as it is, lazy or not, which changes no residue), and its
//!   mod-down gives canonical residues that SEAL adds in the ciphertext's form. So in
//!   coefficient form SEAL's result is the NTT-form key switch of NTT(target), transformed
//!   back, added: that is what [`IntegerOps::switch_key`] runs, so BFV key switches on
//!   CKKS's fused and chained paths. Where the level chains, BFV's key switch (and a
//!   rotation's permutation before it) is one launch of its own
//!   (`LevelOps::switch_key_coeff_chained`): the chain's decomposition loads the target's
//!   coefficients as they lie, its mod-down divides in place, and two more passes
//!   transform the pair back and add.
//! - **What the division by the dropped prime q subtracts** ([`DropCorrection`]). CKKS
//!   and BFV round: they subtract ((c + q/2) mod q) - q/2 for the dropped residue c. BGV
//!   subtracts c + q * ((-c mod t) * q^-1 mod t), divisible by q and 0 mod t, so the
//!   message survives mod t. Every other step is the same and every output canonical, so
//!   where the level chains BGV's key switches and mod switches are CKKS's chained launches
//!   with that correction on the mod-down's loads (`LOAD_MODDOWN_BGV`, opencl/fused.cl;
//!   in coefficient form, SEAL 4.0's, BFV's chain likewise); elsewhere they run CKKS's
//!   unfused inner product, then CKKS's unfused mod-down with `integer_mod_t_prep`
//!   (opencl/integer.cl) as its prep.

use super::kernels::IntegerKernels;
use crate::arith::{invert_uint_mod, Modulus};
use crate::ckks::context::{CkksContext, KswitchKey};
use crate::ckks::fused::{DivideRound, DropCorrection, FirstPass, Sources};
use crate::ckks::ops::{LastResidue, LevelOps, ModDownSpec, Switch};
use crate::cl::{self, Region};
use crate::device::Graph;
use crate::error::{Error, Result};
use crate::ntt::NttDirection;

/// The scheme of an operation, as far as the operations here differ (see the module's
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntegerScheme {
    /// BFV: coefficient form; divisions round.
    Bfv,
    /// BGV with plain modulus t = `plain_modulus`: divisions carry the correction mod t;
    /// `ntt_form` as SEAL 4.1 and later keep ciphertexts (false: SEAL 4.0).
    Bgv {
        plain_modulus: Modulus,
        ntt_form: bool,
    },
}

/// One level's view of a BFV or BGV operation: CKKS's [`LevelOps`] on the same context,
/// graph and level, the integer kernels, and the scheme.
pub struct IntegerOps<'a> {
    ops: LevelOps<'a>,
    kernels: &'a IntegerKernels,
    scheme: IntegerScheme,
}

impl<'a> IntegerOps<'a> {
    /// Operations of `scheme` at the level of `primes` (K) primes of `context`, on `graph`.
    /// Errors: `kernels` built for another N; the level does not exist; BGV's plain
    /// modulus shares a factor with a key prime.
    pub fn new(
        context: &'a CkksContext,
        kernels: &'a IntegerKernels,
        graph: &'a Graph,
        primes: usize,
        scheme: IntegerScheme,
    ) -> Result<Self> {
        if kernels.log_n() != context.log_n() {
            return Err(Error::invalid(format!(
                "integer kernels for N = 2^{} on a context of N = 2^{}",
                kernels.log_n(),
                context.log_n()
            )));
        }
        if let IntegerScheme::Bgv { plain_modulus, .. } = scheme {
            for q in context.key_moduli() {
                inverse_mod_t(q, &plain_modulus)?;
            }
        }
        Ok(IntegerOps {
            ops: LevelOps::new(context, graph, primes)?,
            kernels,
            scheme,
        })
    }

    /// K.
    pub fn primes(&self) -> usize {
        self.ops.primes()
    }

    /// Words of one polynomial at this level (K * N).
    pub fn poly_words(&self) -> usize {
        self.ops.poly_words()
    }

    fn ntt_form(&self) -> bool {
        match self.scheme {
            IntegerScheme::Bfv => false,
            IntegerScheme::Bgv { ntt_form, .. } => ntt_form,
        }
    }

    fn graph(&self) -> &Graph {
        self.ops.graph()
    }

    /// Whether key switches in coefficient form (BFV's, SEAL 4.0's BGV's) run in one
    /// chained launch at this level ([`LevelOps::switch_key_coeff_chained`]): the chain's
    /// passes are CKKS's with the target's coefficients loaded as they lie, the mod-down's
    /// loads subtracting [`IntegerOps::correction`], and the pair transformed back before
    /// the addition.
    fn chains_coeff(&self) -> bool {
        !self.ntt_form() && self.ops.chains_coeff_key_switch()
    }

    /// Whether [`IntegerOps::apply_galois`] reads a sum of ciphertexts on load (its
    /// permutation's pass, where the key switch chains in coefficient form).
    pub fn rotates_sums(&self) -> bool {
        self.chains_coeff()
    }

    /// What key switching's mod-down by the special prime subtracts in this scheme
    /// ([`key_switch_correction`]).
    fn correction(&self) -> Result<DropCorrection> {
        key_switch_correction(self.ops.context(), self.scheme)
    }

    /// SEAL's switch_key_inplace for BFV and BGV: key-switches `target` (K residues at word
    /// `target_offset` of `target`, a multiple of N, in the scheme's form) with `key` and
    /// adds the result to the first two polynomials of `ct` (in the same form). `target`
    /// may lie in `ct` after its first two polynomials (it is read before `ct` is written).
    pub fn switch_key(
        &self,
        ct: &Region,
        target: &Region,
        target_offset: usize,
        key: &KswitchKey,
    ) -> Result<()> {
        self.ops.check_key_switch(key, target_offset)?;
        if self.ntt_form() {
            return self.switch_key_ntt(&Switch {
                ct,
                acc: (ct, 2),
                target,
                target_offset,
                key,
            });
        }
        if self.chains_coeff() {
            let first = FirstPass::Target {
                src: target,
                first: target_offset / self.ops.n(),
            };
            return self
                .ops
                .switch_key_coeff_chained(first, ct, (ct, 2), key, self.correction()?);
        }
        // Coefficient form: the target's NTT in a scratch buffer, then the key switch.
        let words = self.poly_words();
        let target_ntt = self.ops.scratch(words)?;
        cl::copy_range(
            self.graph().queue(),
            target,
            target_offset,
            target_ntt.buffer(),
            0,
            words,
        )?;
        self.ops.ntt(
            target_ntt.buffer(),
            [1, self.primes()],
            NttDirection::Forward,
            true,
        )?;
        self.switch_key_from_ntt(ct, target_ntt.buffer(), key)
    }

    /// Key switching in coefficient form from the target's NTT (`target_ntt`, K residues,
    /// canonical): pair = the NTT-form key switch of it, then ct += INTT(pair) over ct's
    /// first two polynomials (see the module's documentation). `key` is checked.
    fn switch_key_from_ntt(
        &self,
        ct: &Region,
        target_ntt: &Region,
        key: &KswitchKey,
    ) -> Result<()> {
        let k = self.primes();
        let pair = self.ops.scratch(2 * self.poly_words())?;
        self.switch_key_ntt(&Switch {
            ct: pair.buffer(),
            acc: (pair.buffer(), 0),
            target: target_ntt,
            target_offset: 0,
            key,
        })?;
        self.ops
            .ntt(pair.buffer(), [2, k], NttDirection::Inverse, true)?;
        self.ops.context().kernels().ckks_add(
            self.graph(),
            ct,
            ct,
            pair.buffer(),
            self.ops.level().moduli(),
            k,
            2,
        )
    }

    /// Key switch `s` with its target, ct and addend in NTT form: CKKS's key switch where
    /// the division rounds (fused or chained where the context allows); BGV's in one
    /// chained launch, CKKS's chain with BGV's correction on the mod-down's loads
    /// ([`LevelOps::switch_key_in_one_launch`]), where the level chains
    /// ([`LevelOps::chains`]); else CKKS's unfused inner product and BGV's mod-down.
    fn switch_key_ntt(&self, s: &Switch) -> Result<()> {
        let correction = self.correction()?;
        let DropCorrection::PlainModulus { t, inv_q } = correction else {
            return self.ops.switch_key_into(s);
        };
        if self.ops.chains() {
            let first = FirstPass::Target {
                src: s.target,
                first: s.target_offset / self.ops.n(),
            };
            return self.ops.switch_key_in_one_launch(s, first, correction);
        }
        let (prod, last) = self.ops.key_switch_inner_product(s)?;
        let md = self.ops.key_switch_mod_down_spec(
            s,
            LastResidue::Packed(last.buffer()),
            prod.buffer(),
        )?;
        self.mod_down_bgv(&md, &t, inv_q)
    }

    /// `md` in NTT form with BGV's correction mod `plain` (`inv_t` = q_last^-1 mod t): the
    /// unfused mod-down of `crate::ckks::ops` with `integer_mod_t_prep` as its prep.
    fn mod_down_bgv(&self, md: &ModDownSpec, plain: &Modulus, inv_t: u64) -> Result<()> {
        let single = self
            .ops
            .context()
            .single_prime_plan(self.graph().queue(), md.last_key_prime)?;
        let d = &md.divide;
        self.ops.mod_down_unfused_with(md, &single, |t, coeffs| {
            self.kernels.integer_mod_t_prep(
                self.graph(),
                t,
                coeffs,
                d.last_prime,
                self.ops.level().moduli(),
                d.primes,
                plain,
                inv_t,
                d.polys,
            )
        })
    }

    /// SEAL's relinearize_internal: `ct` holds `size` polynomials in the scheme's form; for
    /// each key, last polynomial first, key-switches that polynomial into the first two.
    /// `keys[s]` switches polynomial `size - 1 - s`. On exit the first `size - keys.len()`
    /// polynomials hold the result (the caller truncates); in coefficient form, where the
    /// level does not chain, the switched polynomials are left in NTT form (each is
    /// transformed in place, which spares a copy: SEAL drops them).
    pub fn relinearize(&self, ct: &Region, size: usize, keys: &[&KswitchKey]) -> Result<()> {
        if keys.len() + 2 > size {
            return Err(Error::invalid(format!(
                "relinearize {size} polynomials with {} keys",
                keys.len()
            )));
        }
        let words = self.poly_words();
        for key in keys {
            self.ops.check_key_switch(key, words)?;
        }
        for (step, key) in keys.iter().enumerate() {
            let target = (size - 1 - step) * words;
            if self.ntt_form() || self.chains_coeff() {
                self.switch_key(ct, ct, target, key)?;
            } else {
                let target = ct.part(target, words)?;
                self.ops
                    .ntt(&target, [1, self.primes()], NttDirection::Forward, true)?;
                self.switch_key_from_ntt(ct, &target, key)?;
            }
        }
        Ok(())
    }

    /// [`IntegerOps::relinearize`] of `src`'s three polynomials with `key`, out of place:
    /// dst's first two polynomials = src's plus the key-switched third. The key switch adds
    /// src's pair itself where it can (in NTT form, or chained in coefficient form); else
    /// src is copied into dst first. dst must not overlap src.
    pub fn relinearize_into(&self, dst: &Region, src: &Region, key: &KswitchKey) -> Result<()> {
        if dst.overlaps(src) {
            return Err(Error::invalid("relinearize_into: dst overlaps src"));
        }
        let words = self.poly_words();
        self.ops.check_key_switch(key, 2 * words)?;
        if self.ntt_form() {
            return self.switch_key_ntt(&Switch {
                ct: dst,
                acc: (src, 2),
                target: src,
                target_offset: 2 * words,
                key,
            });
        }
        if self.chains_coeff() {
            let first = FirstPass::Target {
                src,
                first: 2 * words / self.ops.n(),
            };
            return self.ops.switch_key_coeff_chained(
                first,
                dst,
                (src, 2),
                key,
                self.correction()?,
            );
        }
        self.ops.copy_tail(dst, src, 0, 3)?;
        self.relinearize(dst, 3, &[key])
    }

    /// SEAL's apply_galois_inplace for BFV and BGV on `src` (2 polynomials in the scheme's
    /// form; a sum of several only where [`IntegerOps::rotates_sums`]), into `dst` (which
    /// may be a source: they are read only by the permutation, before anything writes
    /// `dst`): permutes both polynomials (coefficient form: SEAL's `apply_galois` with its
    /// sign flips, `integer_apply_galois`; NTT form: `apply_galois_ntt`, `ckks_galois_ntt`),
    /// keeps the first and key-switches the second with `key` (the key of `galois_elt`).
    pub fn apply_galois(
        &self,
        dst: &Region,
        src: Sources,
        galois_elt: u32,
        key: &KswitchKey,
    ) -> Result<()> {
        let k = self.primes();
        let words = self.poly_words();
        self.ops.check_key_switch(key, words)?;
        let moduli = self.ops.level().moduli();
        let permuted = self.ops.scratch(2 * words)?;
        let first = FirstPass::Galois {
            src,
            plain: None,
            galois_elt,
            permuted: permuted.buffer(),
            more: &[],
        };
        if self.chains_coeff() {
            // dst = (permuted[0], 0) + the key-switched permuted[1], one launch.
            return self.ops.switch_key_coeff_chained(
                first,
                dst,
                (permuted.buffer(), 1),
                key,
                self.correction()?,
            );
        }
        let ct = src.single("apply_galois")?;
        if self.ntt_form() {
            let switch = Switch::rotation(dst, permuted.buffer(), words, key);
            if self.ops.chains() {
                return self
                    .ops
                    .switch_key_in_one_launch(&switch, first, self.correction()?);
            }
            self.ops.context().kernels().ckks_galois_ntt(
                self.graph(),
                permuted.buffer(),
                ct,
                galois_elt,
                2 * k,
            )?;
            return self.switch_key_ntt(&switch);
        }
        self.kernels.integer_apply_galois(
            self.graph(),
            permuted.buffer(),
            ct,
            galois_elt,
            moduli,
            k,
            2,
        )?;
        // dst = INTT(the NTT-form key switch of NTT(permuted[1])) + (permuted[0], 0), as
        // in switch_key; permuted[1] is the key switch's target only, so it is transformed
        // in place.
        let second = permuted.buffer().part(words, words)?;
        self.ops.ntt(&second, [1, k], NttDirection::Forward, true)?;
        self.switch_key_ntt(&Switch {
            ct: dst,
            acc: (dst, 0),
            target: &second,
            target_offset: 0,
            key,
        })?;
        self.ops.ntt(dst, [2, k], NttDirection::Inverse, true)?;
        self.ops.context().kernels().ckks_add(
            self.graph(),
            dst,
            dst,
            permuted.buffer(),
            moduli,
            k,
            1,
        )
    }

    /// SEAL's mod_switch_scale_to_next for BFV and BGV (Evaluator::mod_switch_to_next):
    /// dst (K - 1 primes) = src (K primes, `polys` polynomials in the scheme's form)
    /// divided by the level's last prime q_{K-1}, dropping it: BFV rounds
    /// (`RNSTool::divide_and_round_q_last_inplace`), BGV corrects mod t
    /// (`mod_t_and_divide_q_last_ntt_inplace`, or 4.0's `mod_t_and_divide_q_last_inplace`).
    /// In coefficient form one launch (`integer_divide_round_coeff`); in NTT form the
    /// transforms of the dropped residue and of the prep's output join them, or,
    /// where the level chains, one launch (a rescale's chained mod-down with BGV's
    /// correction on its loads, [`LevelOps::mod_down_chained`]).
    /// dst must not overlap src. SEAL multiplies BGV's correction factor by
    /// q_{K-1}^-1 mod t; that is metadata, the caller's.
    pub fn mod_switch_to_next(&self, dst: &Region, src: &Region, polys: usize) -> Result<()> {
        let k = self.primes();
        if k < 2 {
            return Err(Error::invalid("end of modulus switching chain reached"));
        }
        let level = self.ops.level();
        let inv = level.inv_last()?;
        let q_last = &level.moduli().moduli()[k - 1];
        if let (
            true,
            IntegerScheme::Bgv {
                plain_modulus: plain,
                ..
            },
        ) = (self.ntt_form(), self.scheme)
        {
            let divide = DivideRound::dropping_last(dst, src, k, inv, polys);
            let inv_q = inverse_mod_t(q_last, &plain)?;
            if self.ops.chains() {
                let correction = DropCorrection::PlainModulus { t: plain, inv_q };
                return self.ops.mod_down_chained(k - 1, &divide, correction);
            }
            let md = ModDownSpec {
                last: LastResidue::Within {
                    buf: src,
                    stride: k,
                    index: k - 1,
                },
                last_key_prime: k - 1,
                divide,
                more: &[],
            };
            return self.mod_down_bgv(&md, &plain, inv_q);
        }
        // Coefficient form: no transform; what the division subtracts is computed from the
        // dropped residue as it lies, all in one launch.
        let bgv = match self.scheme {
            IntegerScheme::Bfv => None,
            IntegerScheme::Bgv { plain_modulus, .. } => {
                Some((plain_modulus, inverse_mod_t(q_last, &plain_modulus)?))
            }
        };
        self.kernels.integer_divide_round_coeff(
            self.graph(),
            dst,
            src,
            inv,
            level.moduli(),
            k - 1,
            bgv.as_ref().map(|(t, inv_t)| (t, *inv_t)),
            polys,
        )
    }
}

/// What key switching's mod-down by `context`'s special prime subtracts in `scheme`: BFV
/// rounds, BGV corrects mod t (with q_special^-1 mod t, SEAL's `inv_q_last_mod_t` of the key
/// level). Errors: no special prime; q_special and t share a factor.
pub fn key_switch_correction(
    context: &CkksContext,
    scheme: IntegerScheme,
) -> Result<DropCorrection> {
    match scheme {
        IntegerScheme::Bfv => Ok(DropCorrection::Round),
        IntegerScheme::Bgv { plain_modulus, .. } => {
            let special = &context.key_moduli()[context.special_index()?];
            Ok(DropCorrection::PlainModulus {
                t: plain_modulus,
                inv_q: inverse_mod_t(special, &plain_modulus)?,
            })
        }
    }
}

/// q^-1 mod t (SEAL's `inv_q_last_mod_t`); an error where q and t share a factor.
fn inverse_mod_t(q: &Modulus, plain: &Modulus) -> Result<u64> {
    invert_uint_mod(q.value() % plain.value(), plain).ok_or_else(|| {
        Error::invalid(format!(
            "the prime {} has no inverse mod the plain modulus {}",
            q.value(),
            plain.value()
        ))
    })
}
