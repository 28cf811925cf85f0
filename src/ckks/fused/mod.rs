//! The fused passes of the CKKS operations: passes of a level's staged NTT whose loads and
//! stores do an operation's element-wise steps, built on the plan's tables and layout from
//! one kernel source after the transform, `opencl/fused.cl` (the passes, and the loads
//! they share), and `opencl/chain.cl` after it; one file per pass here:
//!
//! | pass | kernel (`opencl/fused.cl` but where named) | operation |
//! |---|---|---|
//! | [`FusedPasses::forward_key_switch`] (`keyswitch.rs`) | `ntt_fwd_block_ks` | `ops::keyswitch` |
//! | [`FusedPasses::forward_moddown`] (`moddown.rs`) | `ntt_fwd_block_moddown` | `ops::moddown` |
//! | [`FusedPasses::inverse_first_pass_galois`] (`galois.rs`) | `ntt_inv_block_galois` | `ops::keyswitch` (apply_galois) |
//! | [`FusedPasses::inverse_first_pass_products`] (`product.rs`) | `ntt_inv_block_product` | `ops::keyswitch` (multiply_relinearize) |
//! | [`FusedPasses::chained_key_switch`] (`chain.rs`) | `ks_chained`, `ks_chained_galois` (`opencl/chain.cl`) | `ops::keyswitch` |
//! | [`FusedPasses::chained_key_switch_coeff`] (`chain.rs`) | `ks_chained_coeff` (`opencl/chain.cl`) | `ops::keyswitch` (the integer schemes' coefficient form) |
//! | [`FusedPasses::chained_multiply_plain`] (`chain.rs`) | `multiply_plain_chained` (`opencl/chain.cl`) | `ops::elementwise` (the integer schemes' coefficient form) |
//! | [`FusedPasses::chained_transform`] (`chain.rs`) | `ntt_fwd_chained`, `ntt_inv_chained` (`opencl/chain.cl`) | `ops` (`LevelOps::ntt`: the level's transforms) |
//!
//! With a two-pass layout an inverse transform's second pass and the forward transforms'
//! first passes that follow it run in one launch (`ntt_inv_fwd_strided`: key switching's
//! decomposition and the mod-down's rounding on its loads), and key switching's last pass
//! starts the mod-down's inverse. The first pass of an inverse reading from where a
//! residue lies is the plan's own (`NttPlan::inverse_first_pass_from`). Where the context
//! chains and the device allows, a key switch's five launches run as one
//! ([`FusedPasses::chained_key_switch`]), and so do a plain transform's two
//! ([`FusedPasses::chained_transform`]).
//!
//! Every fused pass runs up to [`KS_JOBS_MAX`] jobs of one shape in a launch (rotations'
//! permutations, key switches, mod-downs; `JOB_PICK` in `opencl/fused.cl`): job j's work
//! groups are the j-th share of the launch's, its intermediates j job sizes into theirs.

mod behz_chain;
mod chain;
mod galois;
mod keyswitch;
mod moddown;
mod product;

use std::sync::Arc;

pub use behz_chain::{BehzBuild, ChainedBehzForward, ChainedBehzTensorFloor};
pub use chain::{
    ChainedCoeffSwitch, ChainedModDown, ChainedMultiplyPlain, ChainedSwitch, ChainedTransform,
    FirstPass, GaloisJob, Sources, TensorJob, MULTIPLY_PLAIN_SOURCE_TERMS, SOURCE_TERMS_MAX,
};
pub use galois::Permutation;
pub use keyswitch::{KeySwitch, SwitchOperands};
pub use moddown::{DivideInto, DivideRound, ModDown};

use crate::arith::Modulus;
use crate::cl::KernelArg::{self, U32, U64};
use crate::cl::{kernel_sigs, sources};
use crate::error::{Error, Result};
use crate::ntt::{staged_only, NttPlan, NttStrategy, Pass};

kernel_sigs! {
    NTT_INV_FWD_STRIDED = ntt_inv_fwd_strided(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32, in: Buf,
        kind: U32, in_prime: U32, outs_per_group: U32, chunks: U32, inv_root_powers: Buf,
        jobs: U32,
    );
}

/// The most jobs one launch carries (`KS_JOBS_MAX` in `opencl/fused.cl`): key switches,
/// their permutations or their mod-downs in the fused passes' launches, key switches in a
/// chained launch. The kernels' parameters hold three more jobs' buffers; in a chained
/// launch each job hands over on a counter set of its own.
pub const KS_JOBS_MAX: usize = 4;
const _: () = assert!(KS_JOBS_MAX <= crate::device::CHAIN_COUNTER_SETS);

/// The jobs of a launch past its first, whose buffers the kernels take as parameters of
/// their own.
const MORE_JOBS: usize = KS_JOBS_MAX - 1;

/// Errors unless a launch of `jobs` jobs carries 1 to [`KS_JOBS_MAX`] (`what` names the
/// launcher).
fn check_jobs(what: &str, jobs: usize) -> Result<()> {
    if jobs == 0 || jobs > KS_JOBS_MAX {
        return Err(Error::invalid(format!(
            "{what}: {jobs} jobs in one launch; 1 to {KS_JOBS_MAX}"
        )));
    }
    Ok(())
}

/// `ntt_inv_fwd_strided`'s `kind` and the chained mod-downs' `md_kind`: the loads of
/// fused.cl's `LOAD_MODDOWN`, `LOAD_DECOMPOSE` and `LOAD_MODDOWN_BGV`.
const LOAD_MODDOWN: u32 = 1;
const LOAD_DECOMPOSE: u32 = 2;
const LOAD_MODDOWN_BGV: u32 = 3;

/// What a mod-down by a dropped prime q subtracts from each residue before it divides by
/// q: a function of the dropped residue c (coefficient form, canonical) that is c mod q,
/// so that the difference is divisible by q. The chained mod-downs compute it on their
/// forward first passes' loads (fused.cl's `load_op`; the kernels' `md_kind`, `t`, `t_r0`,
/// `t_r1` and `inv_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCorrection {
    /// CKKS's and BFV's rounding: ((c + q / 2) mod q) - q / 2 (`LOAD_MODDOWN`; SEAL's
    /// divide_and_round_q_last_ntt_inplace, switch_key_inplace's CKKS and BFV branch).
    Round,
    /// BGV's: c + q ((-c mod t) (q^-1 mod t) mod t), 0 mod t, so that the message survives
    /// mod t (`LOAD_MODDOWN_BGV`; SEAL's mod_t_and_divide_q_last_ntt_inplace,
    /// switch_key_inplace's BGV branch; host reference `integer::host::integer_mod_t_prep`).
    /// `inv_q` = q^-1 mod t.
    PlainModulus { t: Modulus, inv_q: u64 },
}

impl DropCorrection {
    /// The chained kernels' arguments `md_kind`, `t`, `t_r0`, `t_r1`, `inv_t` (zero
    /// where they round). Errors: `inv_q` not reduced mod t (`what` names the launcher).
    fn args(self, what: &str) -> Result<[(&'static str, KernelArg<'static>); 5]> {
        let (kind, t, [t_r0, t_r1, _], inv_q) = match self {
            DropCorrection::Round => (LOAD_MODDOWN, 0, [0; 3], 0),
            DropCorrection::PlainModulus { t, inv_q } => {
                if inv_q >= t.value() {
                    return Err(Error::invalid(format!(
                        "{what}: q^-1 mod t = {inv_q} is not reduced mod t = {}",
                        t.value()
                    )));
                }
                (LOAD_MODDOWN_BGV, t.value(), t.const_ratio(), inv_q)
            }
        };
        Ok([
            ("md_kind", U32(kind)),
            ("t", U64(t)),
            ("t_r0", U64(t_r0)),
            ("t_r1", U64(t_r1)),
            ("inv_t", U64(inv_q)),
        ])
    }
}

/// The automatic fan-out's aim: at least this many work groups per compute unit (see
/// `fan_out`).
const FAN_OUT_GROUPS_PER_UNIT: usize = 3;

/// The fused passes of one level's staged NTT plan, built once with the level and shared
/// (`&self` methods; each pass locks its kernel from setting its arguments to the enqueue).
pub struct FusedPasses {
    plan: Arc<NttPlan>,
    /// The galois permutation with the inverse's first pass (`ntt_inv_block_galois`).
    inv_galois: Pass,
    /// The tensor product beside the inverse's first pass of its third polynomial
    /// (`ntt_inv_block_product`).
    inv_product: Pass,
    /// The mod-down's inverse second pass and forward first passes (two passes only).
    inv_fwd_strided: Option<Pass>,
    /// The mod-down's forward block pass (`ntt_fwd_block_moddown`).
    moddown_block: Pass,
    /// Key switching's passes, from the build of its own layout.
    key_switch: keyswitch::KeySwitchPasses,
    /// A key switch in one launch, where the context chains and the device allows.
    chained: Option<chain::ChainedPasses>,
    /// Output primes per work group of the `ntt_inv_fwd_strided` launches (0: chosen per
    /// launch).
    fan_out: usize,
    /// The device's compute units, for the chosen fan-out.
    compute_units: usize,
}

impl FusedPasses {
    /// Builds the fused passes on `plan`'s tables and layout, and the chained key switch
    /// where `chain` asks for it (Some: at most that many work groups per compute unit, 0
    /// for one per pass group) and the device allows it.
    ///
    /// Errors: a naive plan; a build fails.
    pub fn new(plan: Arc<NttPlan>, chain: Option<u32>) -> Result<FusedPasses> {
        FusedPasses::build(plan, chain, None)
    }

    /// [`FusedPasses::new`] on a BFV level's plan over q U Bsk, with BFV multiplication's
    /// chained launches where the level chains ([`FusedPasses::chains_behz`]).
    ///
    /// # Safety
    /// `behz.options` are `opencl/behz.cl`'s defines for exactly `behz`'s tables: K =
    /// `q_primes`, NB = the plan's primes less K + 1, every constants section's offset and
    /// length inside `consts`, and `moduli` holding the plan's primes' rows. The chained
    /// kernels index the tables by them.
    pub unsafe fn for_behz(
        plan: Arc<NttPlan>,
        chain: Option<u32>,
        behz: &BehzBuild,
    ) -> Result<FusedPasses> {
        FusedPasses::build(plan, chain, Some(behz))
    }

    fn build(
        plan: Arc<NttPlan>,
        chain: Option<u32>,
        behz: Option<&BehzBuild>,
    ) -> Result<FusedPasses> {
        let (layout, variant) = match (plan.staged_layout(), plan.strategy()) {
            (Some(layout), NttStrategy::Staged(variant)) => (layout, variant),
            _ => return Err(staged_only("the fused passes")),
        };
        let program = plan.build_program(layout, &[sources::FUSED], "")?;
        let items = plan.coeff_count() >> layout.log_r();
        let block = Some(layout.block_work_group_size());
        let info = plan.context().info();
        Ok(FusedPasses {
            inv_galois: plan.pass(&program, &galois::NTT_INV_BLOCK_GALOIS, &[], items, block)?,
            inv_product: plan.pass(&program, &product::NTT_INV_BLOCK_PRODUCT, &[], items, block)?,
            inv_fwd_strided: layout
                .strided_work_group_size()
                .map(|wg| plan.pass(&program, &NTT_INV_FWD_STRIDED, &[], items, Some(wg)))
                .transpose()?,
            moddown_block: plan.pass(
                &program,
                &moddown::NTT_FWD_BLOCK_MODDOWN,
                &[],
                items,
                block,
            )?,
            key_switch: keyswitch::KeySwitchPasses::new(&plan, layout, variant)?,
            chained: match chain {
                Some(groups_per_unit) => {
                    chain::ChainedPasses::new(&plan, layout, groups_per_unit, behz)?
                }
                None => None,
            },
            fan_out: variant.fan_out() as usize,
            compute_units: info.compute_units as usize,
            plan,
        })
    }

    /// The plan the passes run on.
    pub fn plan(&self) -> &NttPlan {
        &self.plan
    }

    /// Rows (output primes) per work group of key switching's block pass: the variant's
    /// `p` where the device holds it, else fewer.
    pub fn key_switch_rows(&self) -> usize {
        self.key_switch.rows
    }

    /// Whether key switching's block pass reads its roots from local memory.
    pub fn key_switch_local_roots(&self) -> bool {
        self.key_switch.local_roots
    }

    /// The fan-out of `pass` (an `ntt_inv_fwd_strided`) over `residues` input residues
    /// and `primes` output primes (see [`fan_out`]).
    fn fan_out(&self, pass: &Pass, residues: usize, primes: usize) -> (u32, u32) {
        let groups = residues * pass.groups_per_residue();
        fan_out(self.fan_out, groups, self.compute_units, primes)
    }
}

/// The fan-out of an `ntt_inv_fwd_strided` launch of `groups` work groups per chunk over
/// `primes` output primes: (outputs per work group, chunks of them), the chunks as even as
/// the fan-out allows. `fixed` outputs per group where the variant sets them (non-zero);
/// else the fewest chunks that give at least `FAN_OUT_GROUPS_PER_UNIT` work groups per
/// compute unit: more outputs per group repeat the inverse less, more chunks spread a
/// small batch (the mod-down's two residues) over more of the device.
fn fan_out(fixed: usize, groups: usize, compute_units: usize, primes: usize) -> (u32, u32) {
    let chunks = if fixed == 0 {
        (FAN_OUT_GROUPS_PER_UNIT * compute_units).div_ceil(groups.max(1))
    } else {
        primes.div_ceil(fixed)
    }
    .clamp(1, primes.max(1));
    let outs = primes.div_ceil(chunks);
    (outs as u32, primes.div_ceil(outs) as u32)
}

/// Errors unless `count` polynomials of `primes` residues fit the 32-bit residue index
/// of a launch; returns count * primes, an error naming `what` otherwise.
fn residues(what: &str, count: usize, primes: usize) -> Result<usize> {
    count
        .checked_mul(primes)
        .filter(|&r| r <= u32::MAX as usize)
        .ok_or_else(|| Error::invalid(format!("{what}: too many residues")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_the_fused_sources() {
        let sigs = [
            &NTT_INV_FWD_STRIDED,
            &moddown::NTT_FWD_BLOCK_MODDOWN,
            &keyswitch::NTT_FWD_BLOCK_KS,
            &galois::NTT_INV_BLOCK_GALOIS,
            &product::NTT_INV_BLOCK_PRODUCT,
        ];
        crate::cl::check_source(sources::FUSED, &sigs).unwrap();
    }

    #[test]
    fn jobs_match_fused_cl() {
        let define = format!("#define KS_JOBS_MAX {KS_JOBS_MAX}\n");
        assert!(
            sources::FUSED.contains(&define),
            "fused.cl lacks {define:?}"
        );
    }

    #[test]
    fn fan_outs() {
        // 132 compute units: key switching at 2^15 (K = 8: 512 groups, 9 primes) in one
        // chunk, its mod-down (2 residues: 128 groups, 8 primes) in four; 2^14 (K = 7: 224
        // groups) in two.
        assert_eq!(fan_out(0, 512, 132, 9), (9, 1));
        assert_eq!(fan_out(0, 128, 132, 8), (2, 4));
        assert_eq!(fan_out(0, 224, 132, 8), (4, 2));
        // Never more chunks than primes, never an empty chunk.
        assert_eq!(fan_out(0, 1, 132, 3), (1, 3));
        assert_eq!(fan_out(0, 10_000, 132, 1), (1, 1));
        // A variant's own fan-out: chunks as even as it allows.
        assert_eq!(fan_out(3, 512, 132, 9), (3, 3));
        assert_eq!(fan_out(2, 512, 132, 9), (2, 5));
        assert_eq!(fan_out(4, 512, 132, 9), (3, 3));
        assert_eq!(fan_out(64, 1, 132, 9), (9, 1));
    }
}
