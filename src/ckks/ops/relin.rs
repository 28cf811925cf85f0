//! SEAL's `switch_key_inplace` for CKKS and `relinearize_internal` (Evaluator::relinearize),
//! which key-switches the ciphertext's polynomials beyond the second, last first. Rotations
//! reach key switching through [`super::galois`].

use super::moddown::{LastResidue, ModDownSpec};
use super::LevelOps;
use crate::ckks::context::KswitchKey;
use crate::ckks::kernels::reduce_every;
use crate::cl::{self, Buffer};
use crate::error::{Error, Result};
use crate::ntt::{KeySwitch, NttDirection};

impl LevelOps<'_> {
    /// SEAL's relinearize_internal: `ct` holds `size` polynomials; for each key, last
    /// polynomial first, key-switches that polynomial into the first two. `keys[s]`
    /// switches polynomial `size - 1 - s`. On exit the first `size - keys.len()`
    /// polynomials hold the result (the caller truncates).
    pub fn relinearize(&self, ct: &Buffer<u64>, size: usize, keys: &[&KswitchKey]) -> Result<()> {
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

    /// SEAL's switch_key_inplace for CKKS: key-switches `target` (one polynomial of K
    /// residues in NTT form, at word `target_offset` of `target`, a multiple of N) with
    /// `key` and adds the result to the first two polynomials of `ct`. `target` may be
    /// `ct` itself (the polynomial is read before `ct` is written). Fused: 5 launches with
    /// a two-pass NTT layout, 3 with one (the target's inverse NTT, the forward NTTs with
    /// the decomposition and the inner product in them, the mod-down), each pass of an
    /// inverse sharing its launch with the next step's first.
    pub fn switch_key(
        &self,
        ct: &Buffer<u64>,
        target: &Buffer<u64>,
        target_offset: usize,
        key: &KswitchKey,
    ) -> Result<()> {
        self.switch_key_into(ct, (ct, 2), target, target_offset, key)
    }

    /// [`LevelOps::switch_key`] writing ct's first two polynomials as the key-switched
    /// pair plus `acc`'s first `acc.1` polynomials (laid out as ct; `acc` may be ct), so
    /// that a rotation adds its permuted first polynomial without copying it first.
    pub(super) fn switch_key_into(
        &self,
        ct: &Buffer<u64>,
        acc: (&Buffer<u64>, usize),
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
        let n = self.n();
        if !target_offset.is_multiple_of(n) {
            return Err(Error::invalid(format!(
                "switch_key: target offset {target_offset} is not a multiple of N = {n}"
            )));
        }
        let special = self.context.special_index()?;
        let inv_special = self.level.inv_special()?;
        let kernels = self.context.kernels();
        let moduli = self.level.moduli();
        let ext = k + 1;

        // t_target: the target in coefficient form. Fused: the inverse's first pass reads
        // it where it lies; its second pass, the decomposition and the inner product with
        // the key run with the forward transforms (NttPlan::forward_key_switch), whose
        // last pass also starts the mod-down. Unfused: a copy, the transform, the
        // decomposition, its transforms and the inner product, one launch each.
        let t_target = self.scratch(k * n)?;
        let plan = self.level.plan();
        let fused = self.context.fused() && plan.has_fused_passes();
        let queue = self.graph.queue();
        let profiling = self.graph.is_profiling();
        let prod = self.scratch(2 * k * n)?;
        let last = self.scratch(2 * n)?;
        if fused {
            let events = plan.inverse_first_pass_from(
                queue,
                t_target.buffer(),
                target,
                k,
                target_offset / n,
                1,
                k,
                profiling,
            )?;
            self.graph.note_launches("ntt_inverse", events)?;
            let between = if plan.launches_per_transform() == 2 {
                Some(self.scratch(k * ext * n)?)
            } else {
                None
            };
            let events = plan.forward_key_switch(
                queue,
                &KeySwitch {
                    t_target: t_target.buffer(),
                    target,
                    target_first: target_offset / n,
                    key: key.buffer(),
                    key_stride_primes: self.context.key_moduli().len(),
                    key_special_index: special,
                    reduce_every: reduce_every(&moduli.moduli()[..ext]),
                    prod: prod.buffer(),
                    last: last.buffer(),
                    scratch: between.as_ref().map_or(t_target.buffer(), |b| b.buffer()),
                    k,
                },
                profiling,
            )?;
            self.graph.note_launches("ntt_forward_ks", events)?;
        } else {
            cl::copy_range(queue, target, target_offset, t_target.buffer(), 0, k * n)?;
            self.ntt(t_target.buffer(), 1, k, NttDirection::Inverse, true)?;
            // Every residue J under every prime I of the extended base, back in NTT form.
            let dec = self.scratch(k * ext * n)?;
            kernels.ckks_ks_decompose(self.graph, dec.buffer(), t_target.buffer(), moduli, k)?;
            self.ntt(dec.buffer(), k, ext, NttDirection::Forward, false)?;
            // Inner product with the key: two polynomials at level K in prod, their
            // residues under the special prime in last.
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
        }
        drop(t_target);
        // Mod-down by the special prime into the first two polynomials of ct.
        self.mod_down(&ModDownSpec {
            last: if fused {
                LastResidue::FirstPassDone(last.buffer())
            } else {
                LastResidue::Packed(last.buffer())
            },
            last_key_prime: special,
            last_prime: k,
            inv: inv_special,
            dst: ct,
            dst_stride: k,
            src: prod.buffer(),
            src_stride: k,
            primes: k,
            polys: 2,
            acc: Some(acc),
        })
    }
}
