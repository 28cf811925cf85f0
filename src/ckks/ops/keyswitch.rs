//! SEAL's `switch_key_inplace` for CKKS, and the two operations made of it:
//! `relinearize_internal` (Evaluator::relinearize, key-switching the polynomials beyond the
//! second, last first) and `apply_galois_inplace` (Evaluator::rotate_vector,
//! complex_conjugate: the galois permutation in NTT form, then key switching), as SEAL
//! keeps them beside each other. Fused with a two-pass layout it
//! is five launches, or one where the level chains ([`FusedPasses::chained_key_switch`]); the
//! mod-down at its end is [`super::moddown`]'s.

use super::moddown::{LastResidue, ModDownSpec};
use super::LevelOps;
use crate::ckks::context::KswitchKey;
use crate::ckks::fused::{
    ChainedCoeffSwitch, ChainedSwitch, DivideInto, DivideRound, DropCorrection, FirstPass,
    FusedPasses, GaloisJob, KeySwitch, Permutation, Sources, SwitchOperands, TensorJob,
    KS_JOBS_MAX,
};
use crate::ckks::kernels::reduce_every;
use crate::cl::{self, Region};
use crate::error::{Error, Result};
use crate::memcache::PoolBuffer;
use crate::ntt::NttDirection;

/// The profiler's name for a key switch in one chained launch.
const CHAINED: &str = "ks_chained";
/// The profiler's name for a key switch in coefficient form in one chained launch.
const CHAINED_COEFF: &str = "ks_chained_coeff";

/// One key switch: the target polynomial (K residues in NTT form at word `target_offset`
/// of `target`, a multiple of N), the key, and where the result goes: ct's first two
/// polynomials get the key-switched pair plus `acc`'s first `acc.1` polynomials (laid out
/// as ct; `acc` may be ct).
pub(crate) struct Switch<'b> {
    pub ct: &'b Region,
    pub acc: (&'b Region, usize),
    pub target: &'b Region,
    pub target_offset: usize,
    pub key: &'b KswitchKey,
}

impl<'b> Switch<'b> {
    /// A rotation's key switch: `dst` = (permuted[0], 0) + the key-switched permuted[1],
    /// `permuted` holding the permuted pair (`words` per polynomial); the first term is
    /// added by the mod-down's last store.
    pub(crate) fn rotation(
        dst: &'b Region,
        permuted: &'b Region,
        words: usize,
        key: &'b KswitchKey,
    ) -> Self {
        Switch {
            ct: dst,
            acc: (permuted, 1),
            target: permuted,
            target_offset: words,
            key,
        }
    }
}

impl LevelOps<'_> {
    /// SEAL's switch_key_inplace for CKKS: key-switches `target` (one polynomial of K
    /// residues in NTT form, at word `target_offset` of `target`, a multiple of N) with
    /// `key` and adds the result to the first two polynomials of `ct`. `target` may be
    /// `ct` itself (the polynomial is read before `ct` is written). Fused: 5 launches with
    /// a two-pass NTT layout, 3 with one (the target's inverse NTT, the forward NTTs with
    /// the decomposition and the inner product in them, the mod-down), each pass of an
    /// inverse sharing its launch with the next step's first; the 5 chained into one
    /// where the level chains ([`FusedPasses::chained_key_switch`]).
    pub fn switch_key(
        &self,
        ct: &Region,
        target: &Region,
        target_offset: usize,
        key: &KswitchKey,
    ) -> Result<()> {
        self.switch_key_into(&Switch {
            ct,
            acc: (ct, 2),
            target,
            target_offset,
            key,
        })
    }

    /// [`LevelOps::switch_key`] adding `s.acc` (see [`Switch`]), so that a rotation adds
    /// its permuted first polynomial without copying it first.
    pub(crate) fn switch_key_into(&self, s: &Switch) -> Result<()> {
        self.check_key_switch(s.key, s.target_offset)?;
        let Some(fused) = self.fused_key_switch() else {
            return self.switch_key_unfused(s);
        };
        if fused.chains() {
            let first = FirstPass::Target {
                src: s.target,
                first: s.target_offset / self.n(),
            };
            return self.switch_key_chained(fused, s, first, DropCorrection::Round);
        }
        // t_target: the target's inverse NTT, first pass (the whole of it with a one-pass
        // layout), read from where the target lies.
        let k = self.primes();
        let t_target = self.scratch(k * self.n())?;
        let events = self.level.plan().inverse_first_pass_from(
            self.graph.queue(),
            t_target.buffer(),
            s.target,
            k,
            s.target_offset / self.n(),
            1,
            k,
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches("ntt_inverse", events)?;
        self.switch_keys_from_first_pass(fused, std::slice::from_ref(s), t_target)
    }

    /// Errors of a key switch at this level with `key` of a target at word
    /// `target_offset`, before anything is enqueued.
    pub(crate) fn check_key_switch(&self, key: &KswitchKey, target_offset: usize) -> Result<()> {
        if key.decomposition_count() < self.primes() {
            return Err(Error::invalid(
                "kswitch_keys is not valid for encryption parameters (too few keys for the level)",
            ));
        }
        let n = self.n();
        if !target_offset.is_multiple_of(n) {
            return Err(Error::invalid(format!(
                "switch_key: target offset {target_offset} is not a multiple of N = {n}"
            )));
        }
        Ok(())
    }

    /// The fused passes key switching runs on: the context fuses and the level's NTT plan
    /// is staged (None: unfused).
    pub(super) fn fused_key_switch(&self) -> Option<&FusedPasses> {
        self.level.fused()
    }

    /// Fused key switching of each of `switches` (1 to [`KS_JOBS_MAX`], independent: no
    /// switch's `ct` overlaps another's buffers; their targets at one offset, their addends
    /// of as many polynomials) after the first pass of its target's inverse NTT, which
    /// `t_target` holds, K residues a switch (`NttPlan::inverse_first_pass_from`, or the
    /// rotations' [`FusedPasses::inverse_first_pass_galois`], or the products'
    /// [`FusedPasses::inverse_first_pass_products`]): its second pass, the decomposition
    /// and the inner product with the key run with the forward transforms
    /// ([`FusedPasses::forward_key_switch`], kernels in `opencl/fused.cl`), whose last
    /// pass also starts the mod-down. The targets (checked by
    /// [`LevelOps::check_key_switch`]) are read again for the residues SEAL takes in NTT
    /// form. Every pass runs all the switches in one launch, each switch's words those of
    /// a launch of its own.
    fn switch_keys_from_first_pass(
        &self,
        fused: &FusedPasses,
        switches: &[Switch],
        t_target: PoolBuffer,
    ) -> Result<()> {
        let (s, rest) = switches
            .split_first()
            .ok_or_else(|| Error::Logic("a launch of no key switches".into()))?;
        if rest
            .iter()
            .any(|r| r.target_offset != s.target_offset || r.acc.1 != s.acc.1)
        {
            return Err(Error::Logic(
                "key switches in one launch with targets or addends of two shapes".into(),
            ));
        }
        let jobs = switches.len();
        let k = self.primes();
        let n = self.n();
        let moduli = self.level.moduli();
        let plan = self.level.plan();
        let prod = self.scratch(jobs * 2 * k * n)?;
        let last = self.scratch(jobs * 2 * n)?;
        let between = if plan.launches_per_transform() == 2 {
            Some(self.scratch(jobs * k * (k + 1) * n)?)
        } else {
            None
        };
        let operands: Vec<SwitchOperands> = rest
            .iter()
            .map(|r| SwitchOperands {
                target: r.target,
                key: r.key.buffer(),
            })
            .collect();
        let events = fused.forward_key_switch(
            self.graph.queue(),
            &KeySwitch {
                t_target: t_target.buffer(),
                target: s.target,
                target_first: s.target_offset / n,
                key: s.key.buffer(),
                key_stride_primes: self.context.key_moduli().len(),
                key_special_index: self.context.special_index()?,
                reduce_every: reduce_every(&moduli.moduli()[..k + 1]),
                prod: prod.buffer(),
                last: last.buffer(),
                scratch: between.as_ref().map_or(t_target.buffer(), |b| b.buffer()),
                k,
                more: &operands,
            },
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches("ntt_forward_ks", events)?;
        drop((t_target, between));
        let divides: Vec<DivideInto> = rest
            .iter()
            .map(|r| DivideInto {
                dst: r.ct,
                acc: r.acc.0,
            })
            .collect();
        let spec = self.key_switch_mod_down_spec(
            s,
            LastResidue::FirstPassDone(last.buffer()),
            prod.buffer(),
        )?;
        self.mod_down(&ModDownSpec {
            more: &divides,
            ..spec
        })
    }

    /// `s` after `first` (in NTT form) in one chained launch, its mod-down subtracting
    /// `correction`: [`LevelOps::switch_key_chained`] for the integer schemes' operations.
    /// Errors: the level does not chain ([`LevelOps::chains`]); as
    /// [`LevelOps::check_key_switch`]'s and the launcher's.
    pub(crate) fn switch_key_in_one_launch(
        &self,
        s: &Switch,
        first: FirstPass,
        correction: DropCorrection,
    ) -> Result<()> {
        let fused = self
            .fused_key_switch()
            .filter(|f| f.chains())
            .ok_or_else(|| {
                Error::Logic("a chained key switch at a level that does not chain".into())
            })?;
        self.check_key_switch(s.key, s.target_offset)?;
        self.switch_key_chained(fused, s, first, correction)
    }

    /// `s` after `first` in one chained launch ([`FusedPasses::chained_key_switch`]), its
    /// mod-down subtracting `correction` (CKKS rounds; BGV corrects mod t), its
    /// intermediates in scratch buffers of their own.
    pub(crate) fn switch_key_chained(
        &self,
        fused: &FusedPasses,
        s: &Switch,
        first: FirstPass,
        correction: DropCorrection,
    ) -> Result<()> {
        let k = self.primes();
        let n = self.n();
        let jobs = first.jobs();
        let scratch = |residues: usize| self.scratch(jobs * residues * n);
        let (t_target, between, prod, last, md_between) = (
            scratch(k)?,
            scratch(k * (k + 1))?,
            scratch(2 * k)?,
            scratch(2)?,
            scratch(2 * k)?,
        );
        let events = fused.chained_key_switch(
            self.graph.queue(),
            &ChainedSwitch {
                first,
                key: s.key.buffer(),
                key_stride_primes: self.context.key_moduli().len(),
                key_special_index: self.context.special_index()?,
                reduce_every: reduce_every(&self.level.moduli().moduli()[..k + 1]),
                dst: s.ct,
                acc: s.acc,
                inv: self.level.inv_special()?,
                correction,
                t_target: t_target.buffer(),
                between: between.buffer(),
                prod: prod.buffer(),
                last: last.buffer(),
                md_between: md_between.buffer(),
                counters: self.graph.chain_counters(),
                k,
            },
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches(CHAINED, events)
    }

    /// SEAL's switch_key_inplace in coefficient form (BFV's, and SEAL 4.0's BGV's) after
    /// `first` (coefficient form: a relinearization's target, or a rotation's
    /// permutation), in one launch ([`FusedPasses::chained_key_switch_coeff`]): dst's first
    /// two polynomials = the key-switched pair plus `acc`'s first `acc.1` polynomials, in
    /// coefficient form, the mod-down subtracting `correction` (BFV rounds; BGV corrects
    /// mod t).
    /// Errors: the level does not chain it ([`LevelOps::chains_coeff_key_switch`]); as
    /// [`LevelOps::check_key_switch`]'s and the launcher's.
    pub(crate) fn switch_key_coeff_chained(
        &self,
        first: FirstPass,
        dst: &Region,
        acc: (&Region, usize),
        key: &KswitchKey,
        correction: DropCorrection,
    ) -> Result<()> {
        let fused = self
            .fused_key_switch()
            .filter(|f| f.chains_coeff_key_switch())
            .ok_or_else(|| {
                Error::Logic("a chained key switch at a level that does not chain".into())
            })?;
        let k = self.primes();
        let n = self.n();
        let target_offset = match first {
            FirstPass::Target { first, .. } => first * n,
            FirstPass::Galois { .. } => k * n,
            FirstPass::Tensor { .. } => {
                return Err(Error::Logic(
                    "a CKKS product is in NTT form, not in coefficient form".into(),
                ))
            }
        };
        self.check_key_switch(key, target_offset)?;
        let scratch = |residues: usize| self.scratch(residues * n);
        let (values, prod, last) = (scratch(k * (k + 1))?, scratch(2 * k)?, scratch(2)?);
        let events = fused.chained_key_switch_coeff(
            self.graph.queue(),
            &ChainedCoeffSwitch {
                first,
                key: key.buffer(),
                key_stride_primes: self.context.key_moduli().len(),
                key_special_index: self.context.special_index()?,
                reduce_every: reduce_every(&self.level.moduli().moduli()[..k + 1]),
                dst,
                acc,
                inv: self.level.inv_special()?,
                correction,
                values: values.buffer(),
                prod: prod.buffer(),
                last: last.buffer(),

                counters: self.graph.chain_counters(),
                k,
            },
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches(CHAINED_COEFF, events)
    }

    /// Unfused key switching: [`LevelOps::key_switch_inner_product`], then the mod-down.
    fn switch_key_unfused(&self, s: &Switch) -> Result<()> {
        let (prod, last) = self.key_switch_inner_product(s)?;
        self.key_switch_mod_down(s, LastResidue::Packed(last.buffer()), &prod)
    }

    /// Key switching up to its mod-down, one launch each: a copy of the target, its
    /// inverse transform, the decomposition, its transforms and the inner product with the
    /// key. Returns (prod, last): the inner product's two polynomials under the level's K
    /// primes (2 K residues) and under the special prime (2 residues, packed), in NTT form,
    /// canonical; they equal SEAL's t_poly_prod before its "modulus switching with
    /// scaling", which is where the schemes differ.
    pub(crate) fn key_switch_inner_product(&self, s: &Switch) -> Result<(PoolBuffer, PoolBuffer)> {
        let k = self.primes();
        let n = self.n();
        let moduli = self.level.moduli();
        let kernels = self.context.kernels();
        let queue = self.graph.queue();
        let t_target = self.scratch(k * n)?;
        cl::copy_range(
            queue,
            s.target,
            s.target_offset,
            t_target.buffer(),
            0,
            k * n,
        )?;
        self.ntt(t_target.buffer(), [1, k], NttDirection::Inverse, true)?;
        // Every residue J under every prime I of the extended base, back in NTT form.
        let dec = self.scratch(k * (k + 1) * n)?;
        kernels.ckks_ks_decompose(self.graph, dec.buffer(), t_target.buffer(), moduli, k)?;
        drop(t_target);
        self.ntt(dec.buffer(), [k, k + 1], NttDirection::Forward, false)?;
        // Inner product with the key: two polynomials at level K in prod, their residues
        // under the special prime in last.
        let prod = self.scratch(2 * k * n)?;
        let last = self.scratch(2 * n)?;
        kernels.ckks_ks_inner_product(
            self.graph,
            prod.buffer(),
            last.buffer(),
            dec.buffer(),
            s.key.buffer(),
            self.context.key_moduli().len(),
            self.context.special_index()?,
            moduli,
            k,
        )?;
        Ok((prod, last))
    }

    /// Key switching's mod-down by the special prime of `last` and `prod` (the inner
    /// product's residues under it and under the level's primes) into the first two
    /// polynomials of `s.ct`, plus `s.acc`.
    fn key_switch_mod_down(&self, s: &Switch, last: LastResidue, prod: &PoolBuffer) -> Result<()> {
        self.mod_down(&self.key_switch_mod_down_spec(s, last, prod.buffer())?)
    }

    /// The mod-down that ends key switch `s`: the special prime's residues `last`, the
    /// level's `prod` (2 K residues), divided into the first two polynomials of `s.ct`
    /// plus `s.acc`.
    pub(crate) fn key_switch_mod_down_spec<'b>(
        &'b self,
        s: &Switch<'b>,
        last: LastResidue<'b>,
        prod: &'b Region,
    ) -> Result<ModDownSpec<'b>> {
        let k = self.primes();
        Ok(ModDownSpec {
            last,
            last_key_prime: self.context.special_index()?,
            divide: DivideRound {
                dst: s.ct,
                dst_stride: k,
                src: prod,
                src_stride: k,
                last_prime: k,
                inv: self.level.inv_special()?,
                acc: Some(s.acc),
                polys: 2,
                primes: k,
            },
            more: &[],
        })
    }
}

impl LevelOps<'_> {
    /// SEAL's relinearize_internal: `ct` holds `size` polynomials; for each key, last
    /// polynomial first, key-switches that polynomial into the first two. `keys[s]`
    /// switches polynomial `size - 1 - s`. On exit the first `size - keys.len()`
    /// polynomials hold the result (the caller truncates).
    pub fn relinearize(&self, ct: &Region, size: usize, keys: &[&KswitchKey]) -> Result<()> {
        if keys.len() + 2 > size {
            return Err(Error::invalid(format!(
                "relinearize {size} polynomials with {} keys",
                keys.len()
            )));
        }
        for (step, key) in keys.iter().enumerate() {
            let target = size - 1 - step;
            self.switch_key(ct, ct, target * self.poly_words(), key)?;
        }
        Ok(())
    }

    /// [`LevelOps::relinearize`] of `src`'s three polynomials with `key`, out of place: dst's
    /// first two polynomials = src's plus the key-switched third, the same words without
    /// copying src first. dst must not overlap src.
    pub fn relinearize_into(&self, dst: &Region, src: &Region, key: &KswitchKey) -> Result<()> {
        if dst.overlaps(src) {
            return Err(Error::invalid("relinearize_into: dst overlaps src"));
        }
        self.switch_key_into(&Switch {
            ct: dst,
            acc: (src, 2),
            target: src,
            target_offset: 2 * self.poly_words(),
            key,
        })
    }
}

impl LevelOps<'_> {
    /// Whether this level runs a key switch, a multiply with its relinearization, and a
    /// rescale's mod-down as one launch each ([`FusedPasses::chains`]).
    pub fn chains(&self) -> bool {
        self.fused_key_switch().is_some_and(FusedPasses::chains)
    }

    /// Whether this level runs several rotations, or several CKKS multiplies and their
    /// relinearizations, in one launch, or one launch per pass
    /// ([`LevelOps::apply_galois_jobs`], [`LevelOps::multiply_relinearize_jobs`]): its key
    /// switches run on the fused passes, chained or not.
    pub fn batches_key_switches(&self) -> bool {
        self.fused_key_switch().is_some()
    }

    /// SEAL's ckks_multiply (or bgv_multiply in NTT form: the same tensor product) of `a`
    /// and `b` (two polynomials each in NTT form; they may be one buffer: a square) into
    /// `dst`'s three polynomials, then relinearize_internal with `key` on them, its
    /// mod-down subtracting `correction` (CKKS rounds; BGV corrects mod t): dst's first two
    /// polynomials hold the relinearized product (the caller truncates). One launch where
    /// the level chains ([`FirstPass::Tensor`]), else, rounding, [`LevelOps::tensor`] and
    /// [`LevelOps::relinearize`]: the same words. Errors: BGV's correction at a level that
    /// does not chain (its unchained key switch is `IntegerOps`'; BGV's products are
    /// deferred to their relinearization only where the level chains).
    pub fn multiply_relinearize(
        &self,
        dst: &Region,
        a: &Region,
        b: &Region,
        key: &KswitchKey,
        correction: DropCorrection,
    ) -> Result<()> {
        self.multiply_relinearize_jobs(&[TensorJob { a, b, dst }], key, correction)
    }

    /// [`LevelOps::multiply_relinearize`] of each job (independent: no job's dst overlaps
    /// another buffer of any job), all with `key`: up to [`KS_JOBS_MAX`] of them in one
    /// launch where the level chains, in one launch per pass where its key switches run on
    /// the fused passes ([`LevelOps::products_in_passes`]; CKKS's rounding), the passes
    /// running every job's groups (job j's words are those of its own launch); unfused one
    /// after the other.
    pub fn multiply_relinearize_jobs(
        &self,
        jobs: &[TensorJob],
        key: &KswitchKey,
        correction: DropCorrection,
    ) -> Result<()> {
        let unchained = self.fused_key_switch().filter(|f| !f.chains());
        if let (Some(fused), DropCorrection::Round) = (unchained, correction) {
            for launch in jobs.chunks(KS_JOBS_MAX) {
                self.products_in_passes(fused, launch, key)?;
            }
            return Ok(());
        }
        if !self.chains() && correction == DropCorrection::Round {
            for job in jobs {
                self.tensor(job.dst, job.a, 2, job.b, 2)?;
                self.relinearize(job.dst, 3, &[key])?;
            }
            return Ok(());
        }
        for launch in jobs.chunks(KS_JOBS_MAX) {
            let (first, more) = launch.split_first().expect("chunks are never empty");
            let s = Switch {
                ct: first.dst,
                acc: (first.dst, 2),
                target: first.dst,
                target_offset: 2 * self.poly_words(),
                key,
            };
            let first_pass = FirstPass::Tensor {
                a: first.a,
                b: first.b,
                more,
            };
            self.switch_key_in_one_launch(&s, first_pass, correction)?;
        }
        Ok(())
    }
}

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
        self.apply_galois_of(dst, Sources::one(ct), None, galois_elt, key)
    }

    /// [`LevelOps::apply_galois`] of each rotation (independent: no rotation's dst overlaps
    /// a buffer of another): up to [`KS_JOBS_MAX`] of them in one launch where the level
    /// chains, in one launch per pass where its key switches run on the fused passes
    /// ([`LevelOps::rotations_in_passes`]), the passes running every rotation's groups
    /// (each rotation's words are those of its own launch); unfused one after the other.
    pub fn apply_galois_jobs(&self, rotations: &[Rotation]) -> Result<()> {
        let words = self.poly_words();
        let Some(fused) = self.fused_key_switch() else {
            for r in rotations {
                self.apply_galois_of(r.dst, Sources::one(r.src), r.plain, r.galois_elt, r.key)?;
            }
            return Ok(());
        };
        if !fused.chains() {
            for launch in rotations.chunks(KS_JOBS_MAX) {
                self.rotations_in_passes(fused, launch)?;
            }
            return Ok(());
        }
        for launch in rotations.chunks(KS_JOBS_MAX) {
            let (first, rest) = launch.split_first().expect("chunks are never empty");
            let more = rest
                .iter()
                .map(|r| {
                    self.check_key_switch(r.key, words)?;
                    Ok(GaloisJob {
                        src: r.src,
                        plain: r.plain,
                        galois_elt: r.galois_elt,
                        key: r.key.buffer(),
                        dst: r.dst,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            self.check_key_switch(first.key, words)?;
            let permuted = self.scratch(launch.len() * 2 * words)?;
            let switch = Switch::rotation(first.dst, permuted.buffer(), words, first.key);
            let first_pass = FirstPass::Galois {
                src: Sources::one(first.src),
                plain: first.plain,
                galois_elt: first.galois_elt,
                permuted: permuted.buffer(),
                more: &more,
            };
            self.switch_key_chained(fused, &switch, first_pass, DropCorrection::Round)?;
        }
        Ok(())
    }

    /// [`LevelOps::apply_galois`] of the sum `src` of ciphertexts of 2 polynomials in NTT
    /// form (unshifted terms, added or subtracted: SEAL's adds and subs of them, then the
    /// rotation of their sum), read on the permutation's loads without a launch of its own.
    /// Errors: a sum of more than one term where the level does not chain
    /// ([`LevelOps::chains`]).
    pub fn apply_galois_sum(
        &self,
        dst: &Region,
        src: Sources,
        galois_elt: u32,
        key: &KswitchKey,
    ) -> Result<()> {
        self.apply_galois_of(dst, src, None, galois_elt, key)
    }

    /// SEAL's multiply_plain_ntt of `ct` (2 polynomials in NTT form) by `plain` (one
    /// polynomial in NTT form), then [`LevelOps::apply_galois`] of the product into `dst`,
    /// without the product's own launch or buffer: the permutation reads `ct` times
    /// `plain` (TenSEAL's matrix products rotate each diagonal's product). `dst` may be
    /// `ct`; `plain` is not written.
    pub fn apply_galois_times_plain(
        &self,
        dst: &Region,
        ct: &Region,
        plain: &Region,
        galois_elt: u32,
        key: &KswitchKey,
    ) -> Result<()> {
        self.apply_galois_of(dst, Sources::one(ct), Some(plain), galois_elt, key)
    }

    /// [`LevelOps::apply_galois`] of `src` (one ciphertext, or a sum where the level
    /// chains), or of its one ciphertext times `plain`.
    fn apply_galois_of(
        &self,
        dst: &Region,
        src: Sources,
        plain: Option<&Region>,
        galois_elt: u32,
        key: &KswitchKey,
    ) -> Result<()> {
        let words = self.poly_words();
        if let Some(fused) = self.fused_key_switch().filter(|f| !f.chains()) {
            let rotation = Rotation {
                dst,
                src: src.single("apply_galois")?,
                plain,
                galois_elt,
                key,
            };
            return self.rotations_in_passes(fused, &[rotation]);
        }
        self.check_key_switch(key, words)?;
        let permuted = self.scratch(2 * words)?;
        let switch = Switch::rotation(dst, permuted.buffer(), words, key);
        let Some(fused) = self.fused_key_switch() else {
            // Unfused: the product in a buffer of its own, then the permutation.
            let ct = src.single("apply_galois")?;
            let product = match plain {
                Some(plain) => {
                    let product = self.scratch(2 * words)?;
                    self.multiply_plain(product.buffer(), ct, 2, plain)?;
                    Some(product)
                }
                None => None,
            };
            self.context.kernels().ckks_galois_ntt(
                self.graph,
                permuted.buffer(),
                product.as_ref().map_or(ct, |p| p.buffer()),
                galois_elt,
                2 * self.primes(),
            )?;
            return self.switch_key_into(&switch);
        };
        let first = FirstPass::Galois {
            src,
            plain,
            galois_elt,
            permuted: permuted.buffer(),
            more: &[],
        };
        self.switch_key_chained(fused, &switch, first, DropCorrection::Round)
    }

    /// [`LevelOps::multiply_relinearize_jobs`] of 1 to [`KS_JOBS_MAX`] products on the fused
    /// passes, each pass one launch for all of them: the tensor products beside the first
    /// pass of their third polynomials' inverses
    /// ([`FusedPasses::inverse_first_pass_products`]), then
    /// [`LevelOps::switch_keys_from_first_pass`]; five launches with a two-pass layout,
    /// three with one, however many products.
    fn products_in_passes(
        &self,
        fused: &FusedPasses,
        launch: &[TensorJob],
        key: &KswitchKey,
    ) -> Result<()> {
        let words = self.poly_words();
        self.check_key_switch(key, 2 * words)?;
        let t_target = self.scratch(launch.len() * words)?;
        let events = fused.inverse_first_pass_products(
            self.graph.queue(),
            t_target.buffer(),
            launch,
            self.primes(),
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches("ntt_inverse_product", events)?;
        let switches: Vec<Switch> = launch
            .iter()
            .map(|job| Switch {
                ct: job.dst,
                acc: (job.dst, 2),
                target: job.dst,
                target_offset: 2 * words,
                key,
            })
            .collect();
        self.switch_keys_from_first_pass(fused, &switches, t_target)
    }

    /// [`LevelOps::apply_galois_jobs`] of 1 to [`KS_JOBS_MAX`] rotations on the fused
    /// passes, each pass one launch for all of them: the permutations with the first pass
    /// of their targets' inverses ([`FusedPasses::inverse_first_pass_galois`]), then
    /// [`LevelOps::switch_keys_from_first_pass`]; five launches with a two-pass layout,
    /// three with one, however many rotations.
    fn rotations_in_passes(&self, fused: &FusedPasses, launch: &[Rotation]) -> Result<()> {
        let words = self.poly_words();
        let jobs = launch.len();
        let permutations = launch
            .iter()
            .map(|r| {
                self.check_key_switch(r.key, words)?;
                Ok(Permutation {
                    src: r.src,
                    plain: r.plain,
                    galois_elt: r.galois_elt,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let permuted = self.scratch(jobs * 2 * words)?;
        let t_target = self.scratch(jobs * words)?;
        let events = fused.inverse_first_pass_galois(
            self.graph.queue(),
            t_target.buffer(),
            &permutations,
            permuted.buffer(),
            2,
            self.primes(),
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches("ntt_inverse_galois", events)?;
        let pairs = (0..jobs)
            .map(|j| permuted.buffer().part(j * 2 * words, 2 * words))
            .collect::<Result<Vec<_>>>()?;
        let switches: Vec<Switch> = launch
            .iter()
            .zip(&pairs)
            .map(|(r, pair)| Switch::rotation(r.dst, pair, words, r.key))
            .collect();
        self.switch_keys_from_first_pass(fused, &switches, t_target)
    }
}

/// One rotation of [`LevelOps::apply_galois_jobs`]: SEAL's apply_galois_inplace of `src` (2
/// polynomials in NTT form; with `plain`, one polynomial in NTT form, of `src` times
/// `plain`: [`LevelOps::apply_galois_times_plain`]) with `galois_elt` and `key` into `dst`
/// (which may be `src`).
#[derive(Clone, Copy)]
pub struct Rotation<'a> {
    pub dst: &'a Region,
    pub src: &'a Region,
    pub plain: Option<&'a Region>,
    pub galois_elt: u32,
    pub key: &'a KswitchKey,
}
