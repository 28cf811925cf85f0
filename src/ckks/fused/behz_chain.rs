//! BFV multiplication (SEAL's `bfv_multiply` by BEHZ base extensions) in two chained
//! launches on a BFV level's plan over q U Bsk (`opencl/behz_chain.cl`): the extension of
//! both operands with the forward transform after it, and the tensor product with the
//! inverse transform and the scaling back to q after it, three passes each, handing over
//! as chain.rs's launches do. At N = 2^13 each of the four separate launches costs the
//! host ~10 us and the device a launch's start; the passes across residues (the extension,
//! the scaling) are per-coefficient steps, so they chain like any other pass.
//! `crate::integer::multiply` holds the level's tables, and the separate launches where the
//! level does not chain.

use super::chain::{chain_ends, no_chained_passes, ChainedPasses};
use super::FusedPasses;
use crate::ckks::kernels::TENSOR_SIZE_MAX;
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{kernel_sigs, Event, KernelArg, Program, Queue, Region};
use crate::device::CHAIN_COUNTER_WORDS;
use crate::error::{Error, Result};
use crate::ntt::{check_buffers, NttPlan, Pass};

kernel_sigs! {
    BEHZ_EXTEND_FWD_CHAINED = behz_extend_fwd_chained(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32, a: Buf, b: Buf,
        s1: U32, moduli: Buf, consts: Buf, counters: Buf, end1: U32, end2: U32, tickets: U32,
        per_group: U32,
    );
    BEHZ_TENSOR_FLOOR_CHAINED = behz_tensor_floor_chained(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, a: Buf,
        s1: U32, b: Buf, s2: U32, dst: Buf, moduli: Buf, consts: Buf, counters: Buf, end1: U32,
        end2: U32, tickets: U32, per_group: U32,
    );
}

/// One BFV level's BEHZ data as `opencl/behz.cl` reads it, for the chained passes built
/// with it ([`FusedPasses::for_behz`]): the build options (`-D BEHZ_K=.. -D BEHZ_NB=..` and
/// the constants' section offsets), K (the primes of q), and the tables those options
/// describe, on the plan's context: the moduli table (q's primes, then Bsk's, the plan's
/// W primes) and the constants.
#[derive(Clone)]
pub struct BehzBuild {
    pub options: String,
    pub q_primes: usize,
    pub moduli: Region,
    pub consts: Region,
}

/// The two chained launches and the tables they read.
pub(super) struct BehzPasses {
    extend_forward: Pass,
    tensor_floor: Pass,
    build: BehzBuild,
}

impl BehzPasses {
    /// The passes of `program` (the chained program built with `build.options`), work
    /// groups of `wg` items.
    pub(super) fn new(
        plan: &NttPlan,
        program: &Program,
        wg: usize,
        build: &BehzBuild,
    ) -> Result<BehzPasses> {
        Ok(BehzPasses {
            extend_forward: plan.pass(program, &BEHZ_EXTEND_FWD_CHAINED, &[], wg, Some(wg))?,
            tensor_floor: plan.pass(program, &BEHZ_TENSOR_FLOOR_CHAINED, &[], wg, Some(wg))?,
            build: build.clone(),
        })
    }

    pub(super) fn passes(&self) -> [&Pass; 2] {
        [&self.extend_forward, &self.tensor_floor]
    }
}

/// Steps (1)-(3) of bfv_multiply: `values` gets `polys` polynomials of W residues (the
/// plan's primes), the extensions to base q U Bsk of a's `s1` polynomials and then of b's
/// `polys - s1` (K residues each, coefficient form, canonical; none of b's when squaring),
/// transformed to NTT form, fully reduced. values overlaps neither a nor b.
pub struct ChainedBehzForward<'a> {
    pub values: &'a Region,
    pub a: &'a Region,
    pub s1: usize,
    pub b: &'a Region,
    pub polys: usize,
    pub counters: &'a Region,
}

/// Steps (4)-(8) of bfv_multiply: the tensor product of a (`s1` polynomials of W residues,
/// NTT form, canonical) and b (`s2`; a and b may be one region: a square), its lazy
/// inverse transform into `values` (s1 + s2 - 1 polynomials of W residues, scratch), then
/// times t, divided by q and back to q into `dst` (K residues a polynomial, canonical:
/// SEAL's product). values overlaps none of a, b and dst, nor dst a or b.
pub struct ChainedBehzTensorFloor<'a> {
    pub values: &'a Region,
    pub a: &'a Region,
    pub s1: usize,
    pub b: &'a Region,
    pub s2: usize,
    pub dst: &'a Region,
    pub counters: &'a Region,
}

impl FusedPasses {
    /// This BFV level's chained passes. Errors: it has none (`what` names the launcher).
    fn behz_chain(&self, what: &str) -> Result<(&ChainedPasses, &BehzPasses)> {
        let chained = self.chained_passes(what)?;
        let behz = self.behz_passes().ok_or_else(|| no_chained_passes(what))?;
        Ok((chained, behz))
    }

    /// Enqueues `pass` (one of `behz`'s kernels) over `values` (W residues a polynomial)
    /// with `args` (its own), then the level's tables and the chain's arguments for three
    /// passes of `groups` work groups each: the counters, the passes' ends, the groups'
    /// turns.
    ///
    /// # Safety
    /// Every word the kernel indexes from its passes' groups and `args` lies inside its
    /// region (the caller proves it for `args` and `values`; the tables are the ones the
    /// program's options describe, `for_behz`'s contract); the counters hold
    /// `CHAIN_COUNTER_WORDS`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch_behz(
        &self,
        (chained, behz): (&ChainedPasses, &BehzPasses),
        pass: &Pass,
        queue: &Queue,
        values: &Region,
        args: &[(&'static str, KernelArg)],
        groups: [usize; 3],
        counters: &Region,
        events: bool,
        what: &str,
    ) -> Result<Vec<Event>> {
        let [end1, end2, tickets] = chain_ends(groups, what)?;
        let (launched, per_group) = chained.launch_shape(tickets);
        let args: Vec<_> = args
            .iter()
            .copied()
            .chain([
                ("moduli", Buf(&behz.build.moduli)),
                ("consts", Buf(&behz.build.consts)),
                ("counters", Buf(counters)),
                ("end1", U32(end1)),
                ("end2", U32(end2)),
                ("tickets", U32(tickets)),
                ("per_group", U32(per_group)),
            ])
            .collect();
        let w = self.plan().coeff_modulus_size();
        let mut out = Vec::new();
        // SAFETY: this function's contract is the one `Pass::launch` asks for; each pass's
        // group index is below its ticket range (`chain_ends` of `groups`).
        unsafe { pass.launch(queue, values, w, &args, launched, events, &mut out) }?;
        Ok(out)
    }

    /// `f` in one launch of three passes (`behz_extend_fwd_chained`): the extension over
    /// every coefficient, then the plan's strided and block forward passes.
    ///
    /// Errors: no BFV chained passes at this level ([`FusedPasses::chains_behz`]); s1 of 0
    /// or above `polys`; as [`NttPlan::validate`]'s for values; a region too short, values
    /// overlapping a, b or the counters.
    pub fn chained_behz_extend_forward(
        &self,
        queue: &Queue,
        f: &ChainedBehzForward,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "chained_behz_extend_forward";
        let chain @ (chained, behz) = self.behz_chain(WHAT)?;
        if f.s1 == 0 || f.s1 > f.polys {
            return Err(Error::invalid(format!(
                "{WHAT}: s1 = {} of {} polynomials",
                f.s1, f.polys
            )));
        }
        let plan = self.plan();
        let (n, k, w) = (
            plan.coeff_count(),
            behz.build.q_primes,
            plan.coeff_modulus_size(),
        );
        let residues = plan.validate(queue, f.values, f.polys, w)?;
        let extent = plan.extent(WHAT, residues, 1, 0)?;
        let buffers = [
            ("values", f.values, extent, true),
            ("a", f.a, f.s1 * k * n, false),
            ("b", f.b, (f.polys - f.s1) * k * n, false),
            ("counters", f.counters, CHAIN_COUNTER_WORDS, true),
        ];
        check_buffers(WHAT, &buffers, &[])?;
        let groups = [
            f.polys * n / chained.work_group,
            residues * chained.strided_groups,
            residues * chained.block_groups,
        ];
        let args = [("a", Buf(f.a)), ("b", Buf(f.b)), ("s1", U32(f.s1 as u32))];
        // SAFETY: pass 1's item i of its polys N / wg groups extends coefficient i mod N of
        // polynomial i / N < polys: it reads residues below K of polynomial p of a (p < s1)
        // or p - s1 of b, and writes residues below W of polynomial p of values, all checked
        // above, and the level's moduli (W rows) and constants, which the program's options
        // describe (`for_behz`'s contract); passes 2 and 3 are the plan's forward passes over
        // residues below polys W of values (validate), under primes below W; the counters hold
        // their words.
        unsafe {
            self.launch_behz(
                chain,
                &behz.extend_forward,
                queue,
                f.values,
                &args,
                groups,
                f.counters,
                events,
                WHAT,
            )
        }
    }

    /// `f` in one launch of three passes (`behz_tensor_floor_chained`): the tensor-loading
    /// inverse block pass, the plan's strided inverse pass, then the scaling over every
    /// coefficient.
    ///
    /// Errors: no BFV chained passes at this level ([`FusedPasses::chains_behz`]); a size
    /// of 0 or above [`TENSOR_SIZE_MAX`] (the 128-bit sums' bound); as
    /// [`NttPlan::validate`]'s for values; a region too short, or overlapping another it
    /// must not.
    pub fn chained_behz_tensor_floor(
        &self,
        queue: &Queue,
        f: &ChainedBehzTensorFloor,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "chained_behz_tensor_floor";
        let chain @ (chained, behz) = self.behz_chain(WHAT)?;
        for (name, size) in [("s1", f.s1), ("s2", f.s2)] {
            if !(1..=TENSOR_SIZE_MAX).contains(&size) {
                return Err(Error::invalid(format!(
                    "{WHAT}: {name} = {size} is not in 1..={TENSOR_SIZE_MAX}"
                )));
            }
        }
        let plan = self.plan();
        let (n, k, w) = (
            plan.coeff_count(),
            behz.build.q_primes,
            plan.coeff_modulus_size(),
        );
        let polys = f.s1 + f.s2 - 1;
        let residues = plan.validate(queue, f.values, polys, w)?;
        let extent = plan.extent(WHAT, residues, 1, 0)?;
        let buffers = [
            ("values", f.values, extent, true),
            ("dst", f.dst, polys * k * n, true),
            ("a", f.a, f.s1 * w * n, false),
            ("b", f.b, f.s2 * w * n, false),
            ("counters", f.counters, CHAIN_COUNTER_WORDS, true),
        ];
        check_buffers(WHAT, &buffers, &[])?;
        let groups = [
            residues * chained.block_groups,
            residues * chained.strided_groups,
            polys * n / chained.work_group,
        ];
        let args = [
            ("a", Buf(f.a)),
            ("s1", U32(f.s1 as u32)),
            ("b", Buf(f.b)),
            ("s2", U32(f.s2 as u32)),
            ("dst", Buf(f.dst)),
        ];
        // SAFETY: pass 1 writes residue r = t W + j < polys W of values (validate) from
        // residue i W + j of a (i < s1) and of b (< s2), pass 2 rewrites those residues;
        // pass 3's item i of its polys N / wg groups reads residues below W of polynomial
        // i / N < polys of values and writes residues below K of it in dst, all checked
        // above, with the level's moduli and constants, which the program's options
        // describe (`for_behz`'s contract); primes below W; the counters hold their words.
        unsafe {
            self.launch_behz(
                chain,
                &behz.tensor_floor,
                queue,
                f.values,
                &args,
                groups,
                f.counters,
                events,
                WHAT,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cl::sources;

    #[test]
    fn signatures_match_behz_chain_cl() {
        crate::cl::check_source(
            sources::BEHZ_CHAIN,
            &[&BEHZ_EXTEND_FWD_CHAINED, &BEHZ_TENSOR_FLOOR_CHAINED],
        )
        .unwrap();
    }
}
