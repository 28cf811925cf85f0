//! A key switch in one launch (`opencl/chain.cl`): the five launches of a fused key switch
//! with a two-pass layout (the target's inverse first pass or a rotation's galois
//! permutation with it, [`FusedPasses::forward_key_switch`]'s two, and
//! [`FusedPasses::forward_moddown`]'s two) chained, their work groups handing over through
//! the issuing queue's counters; and a rescale's three (its last residue's inverse first
//! pass and `forward_moddown`'s two). NVIDIA's OpenCL charges the host ~10 us per launch,
//! more than these passes take on the device at small rings, so a relinearization or a
//! rotation that issues one launch instead of five costs the host a fifth.
//!
//! A level's plain transform with a two-pass layout likewise runs its strided and block
//! passes as one launch ([`FusedPasses::chained_transform`]): SEAL's transform_to_ntt and
//! transform_from_ntt, and every other transform of the level's plan (`LevelOps::ntt`).
//!
//! The work groups of a chained launch take tickets in the order they start; those of a
//! pass wait for the groups of the pass before, which took their tickets earlier and so are
//! running: the wait ends on any device, however few groups it holds at once. The counters
//! are the one piece of state a chained launch leaves for the next: it finds them zero and
//! leaves them zero, so chained launches must never overlap on one set of counters; each
//! in-order queue has its own ([`crate::device::Graph::chain_counters`]).

use super::behz_chain::{BehzBuild, BehzPasses};
use super::keyswitch::check_key_switch_shape;
use super::moddown::check_moddown;
use super::{fan_out, residues, DivideRound, DropCorrection, FusedPasses, KS_JOBS_MAX, MORE_JOBS};
use crate::arith::Modulus;
use crate::ckks::{packed_shifts, SumTerm};
use crate::cl::KernelArg::{Buf, U32, U64};
use crate::cl::{kernel_sigs, sources, DeviceInfoSummary, Event, KernelArg, Queue, Region};
use crate::device::CHAIN_COUNTER_WORDS;
use crate::error::{Error, Result};
use crate::ntt::{check_buffers, to_u32, NttDirection, NttPlan, Pass, StagedLayout};

kernel_sigs! {
    KS_CHAINED = ks_chained(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32,
        inv_root_powers: Buf, src: Buf, src_first: U32, between: Buf, ks_outs: U32,
        ks_chunks: U32, target: Buf, target_first: U32, key: Buf, key_stride_primes: U32,
        key_special_index: U32, reduce_every: U32, prod: Buf, last: Buf, md_between: Buf,
        md_outs: U32, md_chunks: U32, dst: Buf, dst_stride: U32, inv: Buf, acc: Buf,
        acc_polys: U32, md_kind: U32, t: U64, t_r0: U64, t_r1: U64, inv_t: U64,
        counters: Buf, end1: U32, end2: U32, end3: U32, end4: U32,
        tickets: U32, per_group: U32,
    );
    KS_CHAINED_GALOIS = ks_chained_galois(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32,
        inv_root_powers: Buf, src0: Buf, src1: Buf, src2: Buf, src3: Buf, src4: Buf, src5: Buf,
        src6: Buf, src7: Buf, src_terms: U32, src_negate: U32, src_shifts_lo: U64,
        src_shifts_hi: U64, plain: Buf, times_plain: U32, galois_elt: U32,
        permuted: Buf, between: Buf, ks_outs: U32, ks_chunks: U32, key: Buf,
        key_stride_primes: U32, key_special_index: U32, reduce_every: U32, prod: Buf,
        last: Buf, md_between: Buf, md_outs: U32, md_chunks: U32, dst: Buf, inv: Buf,
        md_kind: U32, t: U64, t_r0: U64, t_r1: U64, inv_t: U64, jobs: U32, plain_jobs: U32,
        job_src1: Buf, job_plain1: Buf, job_key1: Buf, galois_elt1: U32, dst1: Buf,
        job_src2: Buf, job_plain2: Buf, job_key2: Buf, galois_elt2: U32, dst2: Buf,
        job_src3: Buf, job_plain3: Buf, job_key3: Buf, galois_elt3: U32, dst3: Buf,
        counters: Buf, end1: U32, end2: U32, end3: U32, end4: U32, tickets: U32,
        per_group: U32,
    );
    KS_CHAINED_COEFF = ks_chained_coeff(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32,
        inv_root_powers: Buf, src0: Buf, src1: Buf, src2: Buf, src3: Buf, src4: Buf, src5: Buf,
        src6: Buf, src7: Buf, src_terms: U32, src_negate: U32, src_shifts_lo: U64,
        src_shifts_hi: U64, galois_elt: U32, permuted: Buf, target: Buf,
        target_first: U32, ks_outs: U32, ks_chunks: U32, key: Buf, key_stride_primes: U32,
        key_special_index: U32, reduce_every: U32, prod: Buf, last: Buf, dst: Buf, inv: Buf,
        acc: Buf, acc_polys: U32, md_kind: U32, t: U64, t_r0: U64, t_r1: U64, inv_t: U64,
        counters: Buf, end1: U32, end2: U32, end3: U32, tickets: U32, per_group: U32,
    );
    MULTIPLY_PLAIN_CHAINED = multiply_plain_chained(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32,
        inv_root_powers: Buf, ct: Buf, src0: Buf, src1: Buf, src2: Buf, src3: Buf,
        src_terms: U32, src_negate: U32, src_shifts_lo: U64, polys: U32, plain: Buf,
        plain_count: U32, t: U64, t_r1: U64, threshold: U64, counters: Buf, end1: U32,
        end2: U32, tickets: U32, per_group: U32,
    );
    KS_CHAINED_TENSOR = ks_chained_tensor(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32,
        inv_root_powers: Buf, a: Buf, b: Buf, between: Buf, ks_outs: U32, ks_chunks: U32,
        key: Buf, key_stride_primes: U32, key_special_index: U32, reduce_every: U32,
        prod: Buf, last: Buf, md_between: Buf, md_outs: U32, md_chunks: U32, dst: Buf,
        inv: Buf, md_kind: U32, t: U64, t_r0: U64, t_r1: U64, inv_t: U64, jobs: U32,
        a1: Buf, b1: Buf, dst1: Buf, a2: Buf, b2: Buf, dst2: Buf, a3: Buf, b3: Buf,
        dst3: Buf, counters: Buf, end0: U32, end1: U32, end2: U32, end3: U32, end4: U32,
        tickets: U32, per_group: U32,
    );
    MODDOWN_CHAINED = moddown_chained(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32,
        inv_root_powers: Buf, src: Buf, src_stride: U32, src_first: U32, last_prime: U32,
        md_between: Buf, md_outs: U32, md_chunks: U32, dst: Buf, dst_stride: U32, inv: Buf,
        acc: Buf, acc_polys: U32, md_kind: U32, t: U64, t_r0: U64, t_r1: U64, inv_t: U64,
        counters: Buf, end1: U32, end2: U32, tickets: U32,
        per_group: U32,
    );
    MODDOWN_SUM_CHAINED = moddown_sum_chained(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32,
        inv_root_powers: Buf, src0: Buf, src1: Buf, src2: Buf, src3: Buf, src4: Buf, src5: Buf,
        src6: Buf, src7: Buf, plain0: Buf, plain1: Buf, plain2: Buf, plain3: Buf, plain4: Buf,
        plain5: Buf, plain6: Buf, plain7: Buf, src_terms: U32, src_negate: U32,
        src_products: U32, src_shifts_lo: U64, src_shifts_hi: U64, summed: Buf,
        src_stride: U32, src_first: U32, last_prime: U32, md_between: Buf, md_outs: U32,
        md_chunks: U32, dst: Buf, dst_stride: U32, inv: Buf, acc: Buf, acc_polys: U32,
        md_kind: U32, t: U64, t_r0: U64, t_r1: U64, inv_t: U64, counters: Buf, end0: U32,
        end1: U32, end2: U32, tickets: U32, per_group: U32,
    );
    NTT_FWD_CHAINED = ntt_fwd_chained(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
        counters: Buf, end1: U32, tickets: U32, per_group: U32,
    );
    NTT_FWD_SUM_CHAINED = ntt_fwd_sum_chained(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32, src0: Buf,
        src1: Buf, src2: Buf, src3: Buf, src4: Buf, src5: Buf, src6: Buf, src7: Buf,
        plain0: Buf, plain1: Buf, plain2: Buf, plain3: Buf, plain4: Buf, plain5: Buf,
        plain6: Buf, plain7: Buf, src_terms: U32, src_negate: U32, src_products: U32,
        src_shifts_lo: U64, src_shifts_hi: U64, reduce: U32, counters: Buf, end1: U32,
        end2: U32, tickets: U32, per_group: U32,
    );
    NTT_INV_CHAINED = ntt_inv_chained(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
        counters: Buf, end1: U32, tickets: U32, per_group: U32,
    );
    NTT_INV_SUM_CHAINED = ntt_inv_sum_chained(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, src0: Buf,
        src1: Buf, src2: Buf, src3: Buf, src4: Buf, src5: Buf, src6: Buf, src7: Buf,
        plain0: Buf, plain1: Buf, plain2: Buf, plain3: Buf, plain4: Buf, plain5: Buf,
        plain6: Buf, plain7: Buf, src_terms: U32, src_negate: U32, src_products: U32,
        src_shifts_lo: U64, src_shifts_hi: U64, reduce: U32, counters: Buf, end1: U32,
        end2: U32, tickets: U32, per_group: U32,
    );
}

/// The largest work group of a chained launch on a CPU device: PoCL runs a work group on one
/// worker thread, with a copy on its stack of every value live across a barrier for each
/// work item, and at 1024 items a chained key switch's copies outgrow the worker's 8 MiB
/// stack (PoCL 3.1, LLVM 15: 9.4 MiB for `ks_chained_galois` with the layout `r4g12c5` at
/// N = 2^13; 7.2 MiB at 512 items). Such layouts keep their separate launches there.
const CPU_CHAINED_WORK_GROUP_MAX: usize = 512;

/// How a chained kernel orders one work group's stores before another's loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChainFence {
    /// PTX's release and acquire at GPU scope (NVIDIA: `red.release.gpu` to count a
    /// group done, `ld.acquire.gpu` to wait).
    Ptx,
    /// A CPU device's threads share coherent memory: OpenCL's `mem_fence`.
    Cpu,
}

impl ChainFence {
    /// The fence `info`'s device has, if any: elsewhere OpenCL 1.2 orders memory across
    /// work groups only between launches, and a key switch keeps its five.
    fn of(info: &DeviceInfoSummary) -> Option<ChainFence> {
        if info.vendor.to_ascii_lowercase().contains("nvidia") {
            Some(ChainFence::Ptx)
        } else if info.is_cpu {
            Some(ChainFence::Cpu)
        } else {
            None
        }
    }

    fn build_option(self) -> &'static str {
        match self {
            ChainFence::Ptx => " -D DEVICE_FENCE_PTX",
            ChainFence::Cpu => "",
        }
    }
}

/// The chained launches of a level's plan: key switches, plain (relinearize) and after a
/// galois permutation (rotate), in NTT form and in coefficient form, and a rescale's
/// mod-down.
pub(super) struct ChainedPasses {
    plain: Pass,
    galois: Pass,
    /// A key switch in coefficient form, either first pass (None where the driver holds
    /// fewer of its work items than the layout asks: the integer schemes keep their
    /// separate launches, CKKS its chains).
    coeff: Option<Pass>,
    /// multiply_plain in coefficient form (None likewise).
    multiply_plain: Option<Pass>,
    /// A multiply's tensor product, then relinearize.
    tensor: Pass,
    /// A rescale's mod-down.
    moddown: Pass,
    /// A rescale of a sum of plaintext products, the sum its first pass (None where the
    /// driver holds fewer of its work items than the layout asks: the sum runs first).
    moddown_sum: Option<Pass>,
    /// A plain transform, forward and inverse.
    forward: Pass,
    inverse: Pass,
    /// A transform of a sum, forward and inverse, the sum its first pass (None likewise,
    /// both: the sum runs on its own first, or is read by no chained transform).
    sums: Option<[Pass; 2]>,
    /// BFV multiplication's two launches, on a BFV level's plan over q U Bsk (None
    /// elsewhere, or likewise).
    behz: Option<BehzPasses>,
    /// Work groups per residue of the block passes and of the strided passes, and work
    /// items per group.
    pub(super) block_groups: usize,
    pub(super) strided_groups: usize,
    pub(super) work_group: usize,
    /// Work groups launched, at most: each takes its share of the passes' groups in turn
    /// (None: one work group per pass group).
    launched: Option<usize>,
}

impl ChainedPasses {
    /// The work groups to launch for `tickets` pass groups, and how many tickets each
    /// takes.
    pub(super) fn launch_shape(&self, tickets: u32) -> (usize, u32) {
        let tickets = tickets as usize;
        let launched = self
            .launched
            .map_or(tickets, |most| most.min(tickets))
            .max(1);
        (launched, tickets.div_ceil(launched) as u32)
    }

    /// The chained passes for `plan`'s `layout`, where the device has a cross-group fence
    /// and the layout takes two passes, with as many columns per strided work group as
    /// make its work groups the block ones' size
    /// ([`StagedLayout::with_equal_work_groups`]; every layout gives the same words),
    /// launching at most `groups_per_unit` work groups per compute unit (0: one per pass
    /// group); with `behz` (a BFV level whose plan this is, over q U Bsk), BFV
    /// multiplication's chained launches too. None elsewhere: the key switch
    /// keeps its five launches.
    pub(super) fn new(
        plan: &NttPlan,
        layout: StagedLayout,
        groups_per_unit: u32,
        behz: Option<&BehzBuild>,
    ) -> Result<Option<ChainedPasses>> {
        let info = plan.context().info();
        let (Some(fence), Some(layout)) = (ChainFence::of(info), layout.with_equal_work_groups())
        else {
            return Ok(None);
        };
        let wg = layout.block_work_group_size();
        if fence == ChainFence::Cpu && wg > CPU_CHAINED_WORK_GROUP_MAX {
            return Ok(None);
        }
        let (Some(strided_wg), Some(strided_bytes)) = (
            layout.strided_work_group_size(),
            layout.strided_local_bytes(),
        ) else {
            return Ok(None);
        };
        let roots = 16usize << (layout.log_b() + layout.log_g());
        let words_bytes = strided_bytes.max(layout.block_local_bytes());
        if strided_wg != wg || words_bytes > info.local_mem_bytes as usize {
            return Ok(None);
        }
        let local_roots = words_bytes + roots <= info.local_mem_bytes as usize;
        let options = format!(
            "-D KS_ROWS=1 -D KS_LOCAL_ROOTS={}{} {}",
            u32::from(local_roots),
            fence.build_option(),
            behz.map_or("", |b| &b.options)
        );
        let mut extra = vec![sources::FUSED, sources::CHAIN];
        if behz.is_some() {
            extra.extend([sources::BEHZ_TENSOR, sources::BEHZ, sources::BEHZ_CHAIN]);
        }
        let program = plan.build_program(layout, &extra, options.trim_end())?;
        let plain = plan.pass(&program, &KS_CHAINED, &[], wg, Some(wg))?;
        let galois = plan.pass(&program, &KS_CHAINED_GALOIS, &[], wg, Some(wg))?;
        let coeff = plan.pass(&program, &KS_CHAINED_COEFF, &[], wg, Some(wg))?;
        let multiply_plain = plan.pass(&program, &MULTIPLY_PLAIN_CHAINED, &[], wg, Some(wg))?;
        let tensor = plan.pass(&program, &KS_CHAINED_TENSOR, &[], wg, Some(wg))?;
        let moddown = plan.pass(&program, &MODDOWN_CHAINED, &[], wg, Some(wg))?;
        let moddown_sum = plan.pass(&program, &MODDOWN_SUM_CHAINED, &[], wg, Some(wg))?;
        let forward = plan.pass(&program, &NTT_FWD_CHAINED, &[], wg, Some(wg))?;
        let inverse = plan.pass(&program, &NTT_INV_CHAINED, &[], wg, Some(wg))?;
        let forward_sum = plan.pass(&program, &NTT_FWD_SUM_CHAINED, &[], wg, Some(wg))?;
        let inverse_sum = plan.pass(&program, &NTT_INV_SUM_CHAINED, &[], wg, Some(wg))?;
        // The driver may hold fewer items of a kernel this large than the layout asks.
        let fits = |pass: &Pass| -> Result<bool> {
            Ok(plan.context().kernel_work_group_size(&pass.kernel())? >= wg)
        };
        for pass in [&plain, &galois, &tensor, &moddown, &forward, &inverse] {
            if !fits(pass)? {
                return Ok(None);
            }
        }

        let coeff = if fits(&coeff)? { Some(coeff) } else { None };
        let multiply_plain = if fits(&multiply_plain)? {
            Some(multiply_plain)
        } else {
            None
        };
        let behz = match behz
            .map(|b| BehzPasses::new(plan, &program, wg, b))
            .transpose()?
        {
            Some(b) => {
                let [extend_forward, tensor_floor] = b.passes();
                (fits(extend_forward)? && fits(tensor_floor)?).then_some(b)
            }
            None => None,
        };
        let sums =
            (fits(&forward_sum)? && fits(&inverse_sum)?).then_some([forward_sum, inverse_sum]);
        let moddown_sum = fits(&moddown_sum)?.then_some(moddown_sum);
        let words = plan.coeff_count();
        Ok(Some(ChainedPasses {
            plain,
            galois,
            coeff,
            multiply_plain,
            tensor,
            moddown,
            moddown_sum,
            forward,
            inverse,
            sums,
            behz,
            block_groups: words / (wg << layout.log_r()),
            strided_groups: words / (strided_wg << layout.log_r()),
            work_group: wg,
            // PoCL's build runs one ticket per work group (chain.cl's EACH_TURN).
            launched: (groups_per_unit > 0 && fence == ChainFence::Ptx)
                .then(|| groups_per_unit as usize * info.compute_units as usize),
        }))
    }
}

/// The most terms a chained pass reads as one ciphertext ([`Sources`]).
pub const SOURCE_TERMS_MAX: usize = 8;

/// The most terms `multiply_plain_chained` reads as one ciphertext: four slots, so that its
/// launch sets fewer arguments and its loads fold the other four away (a synchronized
/// multiply_plain of one term is what it serves most).
pub const MULTIPLY_PLAIN_SOURCE_TERMS: usize = 4;

/// A ciphertext as a chained pass in coefficient form reads it (`sum_src` in
/// `opencl/chain.cl`): the sum of 1 to [`SOURCE_TERMS_MAX`] ciphertexts' words of one
/// size, each multiplied by X^shift where it has one, added, or subtracted where its flag
/// is set: the words SEAL's add_inplace, sub_inplace and multiply_plain by such monomials
/// of the terms leave (each step canonical mod q and linear). One added, unshifted term is
/// that ciphertext. Or, for the inverse transform ([`Sources::products`],
/// `product_sum_src`), a sum in NTT form of unshifted terms, each times a plaintext where
/// it has one: SEAL's multiply_plain_ntt into temporaries, then their adds and subs.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    terms: [SumTerm<&'a Region>; SOURCE_TERMS_MAX],
    count: usize,
}

impl<'a> Sources<'a> {
    /// The ciphertext `words` itself.
    pub fn one(words: &'a Region) -> Sources<'a> {
        Sources {
            terms: [SumTerm::words(words, false); SOURCE_TERMS_MAX],
            count: 1,
        }
    }

    /// The sum of `terms` (added or subtracted, each shifted by its `shift`). Errors: none,
    /// more than [`SOURCE_TERMS_MAX`], or a plaintext product among them.
    pub fn sum(terms: &[SumTerm<&'a Region>]) -> Result<Sources<'a>> {
        if terms.iter().any(|t| t.plain.is_some()) {
            return Err(Error::invalid(
                "a plaintext product read on load as a term of a sum",
            ));
        }
        Sources::of(terms)
    }

    /// The sum of `terms` in NTT form (added or subtracted, each times its `plain` where it
    /// has one: K residues for every polynomial), which only the chained inverse transform
    /// reads. Errors: none, more than [`SOURCE_TERMS_MAX`], or a shifted term.
    pub fn products(terms: &[SumTerm<&'a Region>]) -> Result<Sources<'a>> {
        let sources = Sources::of(terms)?;
        if sources.has_shifts() {
            return Err(Error::invalid(
                "a shifted term in a sum of products in NTT form",
            ));
        }
        Ok(sources)
    }

    /// `terms` as they are. Errors: none, or more than [`SOURCE_TERMS_MAX`].
    fn of(terms: &[SumTerm<&'a Region>]) -> Result<Sources<'a>> {
        let Some(&first) = terms.first() else {
            return Err(Error::invalid("a sum of no terms"));
        };
        if terms.len() > SOURCE_TERMS_MAX {
            return Err(Error::invalid(format!(
                "a sum of {} terms read on load, more than {SOURCE_TERMS_MAX}",
                terms.len()
            )));
        }
        let mut all = [first; SOURCE_TERMS_MAX];
        all[..terms.len()].copy_from_slice(terms);
        Ok(Sources {
            terms: all,
            count: terms.len(),
        })
    }

    /// Whether a term is shifted ([`Sources::sum`]).
    fn has_shifts(&self) -> bool {
        self.terms[..self.count].iter().any(|t| t.shift != 0)
    }

    /// Whether a term is times a plaintext ([`Sources::products`]).
    fn has_products(&self) -> bool {
        self.terms[..self.count].iter().any(|t| t.plain.is_some())
    }

    /// The one ciphertext, for a pass that reads no sum. Errors: a sum.
    pub fn single(&self, what: &str) -> Result<&'a Region> {
        match self.count {
            1 if !self.terms[0].subtract && self.terms[0].shift == 0 && !self.has_products() => {
                Ok(self.terms[0].words)
            }
            _ => Err(Error::invalid(format!(
                "{what}: a sum is read on load by chained passes only"
            ))),
        }
    }

    /// The first term's words.
    pub fn first(&self) -> &'a Region {
        self.terms[0].words
    }

    /// The terms' regions, each checked as `words` long, read-only, under `src0` ..
    /// `src7`.
    fn checked(
        &self,
        words: usize,
    ) -> impl Iterator<Item = (&'static str, &'a Region, usize, bool)> + '_ {
        SOURCE_NAMES
            .iter()
            .zip(&self.terms[..self.count])
            .map(move |(&name, t)| (name, t.words, words, false))
    }

    /// The terms' plaintexts ([`Sources::products`]), each checked as `words` long,
    /// read-only, under `plain0` .. `plain7`.
    fn plains_checked(
        &self,
        words: usize,
    ) -> impl Iterator<Item = (&'static str, &'a Region, usize, bool)> + '_ {
        PLAIN_NAMES
            .iter()
            .zip(&self.terms[..self.count])
            .filter_map(move |(&name, t)| t.plain.map(|p| (name, p, words, false)))
    }

    /// The pairs of `output` and the names of the unshifted terms: a pass that reads each
    /// word of the sum where it writes `output`'s may take those as `output` itself, not a
    /// shifted term, whose word lies elsewhere.
    fn unshifted_alias(&self, output: &'static str) -> Vec<(&'static str, &'static str)> {
        SOURCE_NAMES
            .iter()
            .zip(&self.terms[..self.count])
            .filter(|(_, t)| t.shift == 0)
            .map(|(&name, _)| (output, name))
            .collect()
    }

    /// How many terms the sum has (at least one).
    #[allow(clippy::len_without_is_empty)] // never empty
    pub fn len(&self) -> usize {
        self.count
    }

    /// The kernel's first `slots` of `src0` .. `src7` (4 or 8), `src_terms`, `src_negate`,
    /// `src_shifts_lo` and, with 8 slots, `src_shifts_hi` (the slots past `count` repeat the
    /// first term, unread). Errors: more terms than slots, a shift of N (`n`) or more.
    fn args(&self, n: usize, slots: usize) -> Result<Vec<(&'static str, KernelArg<'a>)>> {
        if self.has_products() {
            return Err(Error::invalid(
                "a sum of plaintext products read on load in coefficient form",
            ));
        }
        if self.count > slots {
            return Err(Error::invalid(format!(
                "a sum of {} terms read on load by a pass of {slots} slots",
                self.count
            )));
        }
        let terms = &self.terms[..self.count];
        let [shifts_lo, shifts_hi] = packed_shifts(terms.iter().map(|t| t.shift), n)?;
        let hi = (slots > 4).then_some(("src_shifts_hi", U64(shifts_hi)));
        Ok(SOURCE_NAMES[..slots]
            .iter()
            .zip(&self.terms)
            .map(|(&name, t)| (name, Buf(t.words)))
            .chain([
                ("src_terms", U32(self.count as u32)),
                ("src_negate", U32(self.mask(|t| t.subtract))),
                ("src_shifts_lo", U64(shifts_lo)),
            ])
            .chain(hi)
            .collect())
    }

    /// The terms' flags as the kernels take them: bit j for term j where `bit` holds.
    fn mask(&self, bit: impl Fn(&SumTerm<&Region>) -> bool) -> u32 {
        self.terms[..self.count]
            .iter()
            .enumerate()
            .fold(0, |m, (j, t)| m | (u32::from(bit(t)) << j))
    }

    /// The sum kernels' (`ntt_fwd_sum_chained`, `ntt_inv_sum_chained`) `src0` .. `src7`,
    /// `plain0` .. `plain7`, `src_terms`, `src_negate`, `src_products`, `src_shifts_lo` and
    /// `src_shifts_hi` (the slots past `count`, and the plaintexts of terms without one, name
    /// the first term's words, unread). Errors: a shift of N (`n`) or more.
    fn sum_pass_args(&self, n: usize) -> Result<Vec<(&'static str, KernelArg<'a>)>> {
        let [shifts_lo, shifts_hi] =
            packed_shifts(self.terms[..self.count].iter().map(|t| t.shift), n)?;
        let unread = self.terms[0].words;
        Ok(SOURCE_NAMES
            .iter()
            .zip(&self.terms)
            .map(|(&name, t)| (name, Buf(t.words)))
            .chain(
                PLAIN_NAMES
                    .iter()
                    .zip(&self.terms)
                    .map(move |(&name, t)| (name, Buf(t.plain.unwrap_or(unread)))),
            )
            .chain([
                ("src_terms", U32(self.count as u32)),
                ("src_negate", U32(self.mask(|t| t.subtract))),
                ("src_products", U32(self.mask(|t| t.plain.is_some()))),
                ("src_shifts_lo", U64(shifts_lo)),
                ("src_shifts_hi", U64(shifts_hi)),
            ])
            .collect())
    }
}

/// The kernels' names of a [`Sources`]' terms.
const SOURCE_NAMES: [&str; SOURCE_TERMS_MAX] = [
    "src0", "src1", "src2", "src3", "src4", "src5", "src6", "src7",
];

/// The kernels' names of a [`Sources`]' plaintexts ([`Sources::products`]).
const PLAIN_NAMES: [&str; SOURCE_TERMS_MAX] = [
    "plain0", "plain1", "plain2", "plain3", "plain4", "plain5", "plain6", "plain7",
];

/// What comes before the chained key switch's decomposition, in the key switch's form (NTT
/// form for [`FusedPasses::chained_key_switch`], coefficient form for
/// [`FusedPasses::chained_key_switch_coeff`]).
#[derive(Clone, Copy)]
#[allow(clippy::large_enum_variant)] // one per launch, on the stack: boxing would cost more
pub enum FirstPass<'a> {
    /// Relinearize: the target, K residues from residue `first` of `src`.
    Target { src: &'a Region, first: usize },
    /// Rotate: SEAL's apply_galois_ntt (NTT form) or apply_galois (coefficient form) with
    /// `galois_elt` on both polynomials of `src` (2 K residues; a sum of several, in NTT form
    /// unshifted) into `permuted`, whose second polynomial is then the target
    /// and whose first is added to the result. With `plain` (K residues, NTT form only)
    /// the rotated ciphertext is `src` times `plain`: SEAL's multiply_plain_ntt, whose
    /// product the permutation reads. The launch does the same for each of `more` (at most
    /// [`KS_JOBS_MAX`] - 1, NTT form only), `permuted` then [`FirstPass::jobs`] times one
    /// rotation's.
    Galois {
        src: Sources<'a>,
        plain: Option<&'a Region>,
        galois_elt: u32,
        permuted: &'a Region,
        more: &'a [GaloisJob<'a>],
    },
    /// Multiply and relinearize: SEAL's ckks_multiply of `a` and `b` (2 K residues each in
    /// NTT form; they may be one buffer) into dst's three polynomials, whose third is then
    /// the target and whose first two are added to the result (acc is dst, 2). The launch
    /// does the same for each of `more` (at most [`KS_JOBS_MAX`] - 1, NTT form only),
    /// with the same key, its intermediates [`FirstPass::jobs`] times one's.
    Tensor {
        a: &'a Region,
        b: &'a Region,
        more: &'a [TensorJob<'a>],
    },
}

impl FirstPass<'_> {
    /// The key switches the launch carries: 1 + `more`'s with [`FirstPass::Tensor`] and
    /// [`FirstPass::Galois`], else 1 (its intermediates hold as many key switches' words).
    pub fn jobs(&self) -> usize {
        match self {
            FirstPass::Tensor { more, .. } => 1 + more.len(),
            FirstPass::Galois { more, .. } => 1 + more.len(),
            FirstPass::Target { .. } => 1,
        }
    }
}

/// A multiply and its relinearization that shares a chained launch with another
/// ([`FirstPass::Tensor`]'s `more`): the product of `a` and `b` (2 K residues each in NTT
/// form, either may be the other) into `dst`'s three polynomials, relinearized into its
/// first two. `dst` overlaps no other buffer of the launch.
#[derive(Clone, Copy)]
pub struct TensorJob<'a> {
    pub a: &'a Region,
    pub b: &'a Region,
    pub dst: &'a Region,
}

/// A rotation that shares a chained launch with another ([`FirstPass::Galois`]'s `more`):
/// SEAL's apply_galois_ntt of the ciphertext `src` (2 K residues in NTT form; with `plain`,
/// K residues in NTT form, of `src` times `plain`: SEAL's multiply_plain_ntt) with
/// `galois_elt`, key-switched with `key` (laid out as the launch's key) into `dst`'s two
/// polynomials. `dst` overlaps no other buffer of the launch but `src`, which it may be.
#[derive(Clone, Copy)]
pub struct GaloisJob<'a> {
    pub src: &'a Region,
    pub plain: Option<&'a Region>,
    pub galois_elt: u32,
    pub key: &'a Region,
    pub dst: &'a Region,
}

/// The tensor kernel's parameter names for jobs 1 to 3 ([`TensorJob`]).
const MORE_JOB_NAMES: [[&str; 3]; MORE_JOBS] = [
    ["a1", "b1", "dst1"],
    ["a2", "b2", "dst2"],
    ["a3", "b3", "dst3"],
];

/// The galois kernel's parameter names for jobs 1 to 3 ([`GaloisJob`]: src, plain, key,
/// galois_elt, dst).
const MORE_GALOIS_NAMES: [[&str; 5]; MORE_JOBS] = [
    ["job_src1", "job_plain1", "job_key1", "galois_elt1", "dst1"],
    ["job_src2", "job_plain2", "job_key2", "galois_elt2", "dst2"],
    ["job_src3", "job_plain3", "job_key3", "galois_elt3", "dst3"],
];

/// One chained key switch at level K: `first`, then SEAL's switch_key_inplace into the
/// first two polynomials of `dst` (K residues each), plus `acc`'s first `acc.1`
/// polynomials (relinearize and multiply: dst itself, 2; rotate: the permuted first
/// polynomial, always).
/// The scratch regions hold t_target (K residues), between (K (K + 1)), prod (2 K), last
/// (2) and md_between (2 K), times [`FirstPass::jobs`]; they alias nothing.
pub struct ChainedSwitch<'a> {
    pub first: FirstPass<'a>,
    pub key: &'a Region,
    pub key_stride_primes: usize,
    pub key_special_index: usize,
    pub reduce_every: u32,
    pub dst: &'a Region,
    pub acc: (&'a Region, usize),
    /// q_special^-1 mod q_i, K Shoup pairs.
    pub inv: &'a Region,
    /// What the mod-down subtracts before it divides (BGV's correction, or rounding).
    pub correction: DropCorrection,
    pub t_target: &'a Region,
    pub between: &'a Region,
    pub prod: &'a Region,
    pub last: &'a Region,
    pub md_between: &'a Region,
    pub counters: &'a Region,
    pub k: usize,
}

/// A chained key switch's inner product with the key: the key (SEAL's key vector,
/// `key_stride_primes` primes apart, the special prime at `key_special_index`), how often
/// its 128-bit sums reduce, and where its products go (`prod`, and `last` for the special
/// prime's).
struct InnerProduct<'a> {
    key: &'a Region,
    key_stride_primes: usize,
    key_special_index: usize,
    reduce_every: u32,
    prod: &'a Region,
    last: &'a Region,
}

/// The [`InnerProduct`] of a [`ChainedSwitch`] or a [`ChainedCoeffSwitch`] (their fields of
/// the same names).
macro_rules! inner_product_of {
    ($s:expr) => {
        InnerProduct {
            key: $s.key,
            key_stride_primes: $s.key_stride_primes,
            key_special_index: $s.key_special_index,
            reduce_every: $s.reduce_every,
            prod: $s.prod,
            last: $s.last,
        }
    };
}

impl<'a> InnerProduct<'a> {
    /// The kernels' `key` .. `last`, in their declaration order.
    fn args(&self) -> Result<[(&'static str, KernelArg<'a>); 6]> {
        Ok([
            ("key", Buf(self.key)),
            ("key_stride_primes", U32(to_u32(self.key_stride_primes)?)),
            ("key_special_index", U32(to_u32(self.key_special_index)?)),
            ("reduce_every", U32(self.reduce_every)),
            ("prod", Buf(self.prod)),
            ("last", Buf(self.last)),
        ])
    }
}

/// One chained key switch in coefficient form (BFV's) at level K: `first` (coefficient
/// form), then SEAL's switch_key_inplace into the first two polynomials of `dst`, plus
/// `acc`'s first `acc.1` polynomials (relinearize: dst itself, 2; rotate: the permuted
/// first polynomial, 1), all in coefficient form. The scratch regions hold values
/// (K (K + 1) residues), prod (2 K) and last (2); they alias nothing.
pub struct ChainedCoeffSwitch<'a> {
    pub first: FirstPass<'a>,
    pub key: &'a Region,
    pub key_stride_primes: usize,
    pub key_special_index: usize,
    pub reduce_every: u32,
    pub dst: &'a Region,
    pub acc: (&'a Region, usize),
    /// q_special^-1 mod q_i, K Shoup pairs.
    pub inv: &'a Region,
    /// What the mod-down subtracts before it divides (BGV's correction, or rounding).
    pub correction: DropCorrection,
    pub values: &'a Region,
    pub prod: &'a Region,
    pub last: &'a Region,
    pub counters: &'a Region,
    pub k: usize,
}

/// SEAL's multiply_plain_normal in one launch: `src` (`polys` polynomials of K residues in
/// coefficient form, canonical; a sum read on load) times the plaintext's first
/// `plain_count` words (each a coefficient mod `t`; the rest zero), lifted to Z_q with
/// coefficients from `threshold` up standing for themselves minus t (u64::MAX: none), into
/// `ct` (which may be a source). `values` ((polys + 1) K residues) is scratch.
pub struct ChainedMultiplyPlain<'a> {
    pub src: Sources<'a>,
    pub ct: &'a Region,
    pub polys: usize,
    pub plain: &'a Region,
    pub plain_count: usize,
    pub t: &'a Modulus,
    pub threshold: u64,
    pub values: &'a Region,
    pub counters: &'a Region,
    pub k: usize,
}

/// A rescale's mod-down in one launch: residue `index` of each of `divide.polys`
/// polynomials of `divide.src` (`divide.src_stride` residues apart, in NTT form) is dropped
/// by `divide` ([`DivideRound`], its `last_prime` the plan's index of that prime), the same
/// words as the one-prime plan's inverse first pass and [`FusedPasses::forward_moddown`].
/// `gathered` (polys residues) and `md_between` (polys * primes) are scratch. With `sum`
/// ([`Sources::products`]: plaintext products in NTT form added, or one), the launch first
/// writes the sum's words into `divide.src`, then scratch too (`divide.polys` polynomials of
/// `divide.src_stride` residues; each term holds as many, each plaintext `src_stride`
/// residues), and divides those: the same words as the sum's own launch and the mod-down
/// after it.
pub struct ChainedModDown<'a> {
    pub index: usize,
    pub sum: Option<Sources<'a>>,
    pub divide: DivideRound<'a>,
    /// What the division subtracts (a rescale rounds; BGV's mod switch corrects mod t).
    pub correction: DropCorrection,
    pub gathered: &'a Region,
    pub md_between: &'a Region,
    pub counters: &'a Region,
}

impl FusedPasses {
    /// Whether this level's key switches and mod-downs run as one chained launch each
    /// ([`FusedPasses::chained_key_switch`], [`FusedPasses::chained_moddown`]).
    pub fn chains(&self) -> bool {
        self.chained.is_some()
    }

    /// Whether this level's key switches in coefficient form run as one chained launch
    /// ([`FusedPasses::chained_key_switch_coeff`]).
    pub fn chains_coeff_key_switch(&self) -> bool {
        self.chained.as_ref().is_some_and(|c| c.coeff.is_some())
    }

    /// Whether this level's multiply_plain in coefficient form runs as one chained launch
    /// ([`FusedPasses::chained_multiply_plain`]).
    pub fn chains_multiply_plain(&self) -> bool {
        self.chained
            .as_ref()
            .is_some_and(|c| c.multiply_plain.is_some())
    }

    /// Whether a transform of a sum runs as one chained launch here
    /// ([`FusedPasses::chained_transform`] of [`Sources::sum`] forward, of
    /// [`Sources::products`] inverse).
    pub fn chains_transform_sum(&self) -> bool {
        self.chained.as_ref().is_some_and(|c| c.sums.is_some())
    }

    /// Whether a rescale of a sum of plaintext products runs as one chained launch here
    /// ([`FusedPasses::chained_moddown`] with [`ChainedModDown::sum`]).
    pub fn chains_moddown_sum(&self) -> bool {
        self.chained
            .as_ref()
            .is_some_and(|c| c.moddown_sum.is_some())
    }

    /// Whether BFV's multiplication runs as two chained launches here
    /// ([`FusedPasses::chained_behz_extend_forward`],
    /// [`FusedPasses::chained_behz_tensor_floor`]).
    pub fn chains_behz(&self) -> bool {
        self.behz_passes().is_some()
    }

    /// BFV multiplication's chained passes, where this level has them.
    pub(super) fn behz_passes(&self) -> Option<&BehzPasses> {
        self.chained.as_ref().and_then(|c| c.behz.as_ref())
    }

    /// `m` in one launch (see [`ChainedModDown`]).
    ///
    /// Errors: no chained passes at this level (or none of a sum,
    /// [`FusedPasses::chains_moddown_sum`]); as [`FusedPasses::forward_moddown`]'s; `index`
    /// not below the source's stride; dst overlapping src; a sum of shifted terms, its terms
    /// or plaintexts shorter than it reads or overlapping src.
    pub fn chained_moddown(
        &self,
        queue: &Queue,
        m: &ChainedModDown,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "chained_moddown";
        let chained = self.chained_passes(WHAT)?;
        let plan = self.plan();
        let d = &m.divide;
        let (acc, acc_polys) = d.acc.unwrap_or((d.dst, 0));
        check_moddown(WHAT, plan, d, acc_polys)?;
        plan.check_queue(queue)?;
        if m.index >= d.src_stride || d.last_prime >= plan.coeff_modulus_size() {
            return Err(Error::invalid(format!(
                "{WHAT}: residue {} of {} under prime {}",
                m.index, d.src_stride, d.last_prime
            )));
        }
        let polys = |stride| plan.extent(WHAT, d.polys, stride, d.primes);
        let res = |count: usize| plan.extent(WHAT, count, 1, 0);
        let sum = m.sum.as_ref();
        let pass = match sum {
            None => &chained.moddown,
            Some(s) if s.has_shifts() => {
                return Err(Error::invalid(format!(
                    "{WHAT}: a rescale of shifted terms (coefficient form)"
                )))
            }
            Some(_) => chained
                .moddown_sum
                .as_ref()
                .ok_or_else(|| no_chained_passes("chained_moddown of a sum"))?,
        };
        // The sum's pass writes every residue of src.
        let src_words = match sum {
            None => plan.extent(WHAT, d.polys, d.src_stride, d.primes.max(m.index + 1))?,
            Some(_) => res(residues(WHAT, d.polys, d.src_stride)?)?,
        };
        let terms: Vec<_> = sum
            .into_iter()
            .flat_map(|s| {
                s.checked(src_words)
                    .chain(s.plains_checked(d.src_stride * plan.coeff_count()))
            })
            .collect();
        check_buffers(
            WHAT,
            &[("src", d.src, src_words, sum.is_some())]
                .into_iter()
                .chain(terms)
                .chain([
                    ("dst", d.dst, polys(d.dst_stride)?, true),
                    ("inv", d.inv, 2 * d.primes, false),
                    (
                        "acc",
                        acc,
                        plan.extent(WHAT, acc_polys, d.dst_stride, d.primes)?,
                        false,
                    ),
                    ("gathered", m.gathered, res(d.polys)?, true),
                    (
                        "md_between",
                        m.md_between,
                        res(residues(WHAT, d.polys, d.primes)?)?,
                        true,
                    ),
                    ("counters", m.counters, CHAIN_COUNTER_WORDS, true),
                ])
                .collect::<Vec<_>>(),
            // In place (dst = src, equal strides): each work item reads its src and acc
            // words before writing the same dst word, and dst lies below the dropped
            // residue that pass 1 reads.
            &[("dst", "acc"), ("dst", "src")],
        )?;
        let (md_outs, md_chunks) = fan_out(
            self.fan_out,
            d.polys * chained.strided_groups,
            self.compute_units,
            d.primes,
        );
        // The sum's pass, where there is one: a word a work item.
        let sum_groups = sum.map_or(0, |_| src_words / chained.work_group);
        let [end0, end1, end2, tickets] = chain_ends(
            [
                sum_groups,
                d.polys * chained.block_groups,
                d.polys * md_chunks as usize * chained.strided_groups,
                residues(WHAT, d.polys, d.primes)? * chained.block_groups,
            ],
            WHAT,
        )?;
        let (groups, per_group) = chained.launch_shape(tickets);
        let (sources, src_name, ends) = match sum {
            None => (Vec::new(), "src", vec![("end1", end1), ("end2", end2)]),
            Some(s) => (
                s.sum_pass_args(plan.coeff_count())?,
                "summed",
                vec![("end0", end0), ("end1", end1), ("end2", end2)],
            ),
        };
        let args: Vec<(&str, KernelArg)> = sources
            .into_iter()
            .chain([
                (src_name, Buf(d.src)),
                ("src_stride", U32(to_u32(d.src_stride)?)),
                ("src_first", U32(to_u32(m.index)?)),
                ("last_prime", U32(to_u32(d.last_prime)?)),
                ("md_between", Buf(m.md_between)),
                ("md_outs", U32(md_outs)),
                ("md_chunks", U32(md_chunks)),
                ("dst", Buf(d.dst)),
                ("dst_stride", U32(to_u32(d.dst_stride)?)),
                ("inv", Buf(d.inv)),
                ("acc", Buf(acc)),
                ("acc_polys", U32(to_u32(acc_polys)?)),
            ])
            .chain(m.correction.args(WHAT)?)
            .chain([("counters", Buf(m.counters))])
            .chain(ends.into_iter().map(|(name, end)| (name, U32(end))))
            .chain([("tickets", U32(tickets)), ("per_group", U32(per_group))])
            .collect();
        let mut out = Vec::new();
        // SAFETY: each pass's group index is below its ticket range; a sum's pass (item w
        // of polys * src_stride * N / wg groups of wg items) reads word w of the terms and
        // word k of residue (w / N) % src_stride of the plaintexts and writes word w of src;
        // then pass 1 reads residue p * stride + index of src and writes residue p of
        // gathered, passes 2 and 3 touch what forward_moddown's two launches touch, all
        // checked above.
        unsafe { pass.launch(queue, m.gathered, d.primes, &args, groups, events, &mut out) }?;
        Ok(out)
    }

    /// `s` in one launch (see [`ChainedSwitch`]): the same words as the target's inverse
    /// first pass (or [`FusedPasses::inverse_first_pass_galois`]),
    /// [`FusedPasses::forward_key_switch`] and [`FusedPasses::forward_moddown`] in turn.
    ///
    /// Errors: no chained passes at this level; K = 0 or K + 1 above the plan's primes; a
    /// key shape that does not fit; a galois element SEAL refuses; a buffer shorter than the
    /// words it is read or written at; a written buffer overlapping another but where the
    /// key switch reads each word before writing it (dst, and the target of a relinearize
    /// in dst's third polynomial).
    pub fn chained_key_switch(
        &self,
        queue: &Queue,
        s: &ChainedSwitch,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "chained_key_switch";
        let chained = self.chained_passes(WHAT)?;
        let plan = self.plan();
        let k = s.k;
        check_key_switch_shape(
            WHAT,
            plan,
            k,
            s.key_stride_primes,
            s.key_special_index,
            s.reduce_every,
        )?;
        plan.check_queue(queue)?;
        let res = |count: usize| plan.extent(WHAT, count, 1, 0);
        let (acc, acc_polys) = s.acc;
        // A multiply's dst holds the product: three polynomials, the third the target.
        let dst_polys = match s.first {
            FirstPass::Tensor { .. } => 3,
            _ => 2,
        };
        let jobs = s.first.jobs();
        if jobs > KS_JOBS_MAX {
            return Err(Error::invalid(format!(
                "{WHAT}: {jobs} key switches in one launch; at most {KS_JOBS_MAX}"
            )));
        }
        let mut buffers = vec![
            ("key", s.key, res(2 * k * s.key_stride_primes)?, false),
            ("dst", s.dst, res(dst_polys * k)?, true),
            ("acc", acc, res(acc_polys * k)?, false),
            ("inv", s.inv, 2 * k, false),
            ("t_target", s.t_target, res(jobs * k)?, true),
            ("between", s.between, res(jobs * k * (k + 1))?, true),
            ("prod", s.prod, res(jobs * 2 * k)?, true),
            ("last", s.last, res(jobs * 2)?, true),
            ("md_between", s.md_between, res(jobs * 2 * k)?, true),
            ("counters", s.counters, CHAIN_COUNTER_WORDS, true),
        ];
        // dst is read (acc) and written word by word by the same work item; a relinearize's
        // target lies in dst's buffer after its first two polynomials, a rotation's source
        // (or a term of it) may be dst (pass 1 reads it, before pass 5 writes); a rotation's
        // addend is the permuted first polynomial (pass 1 writes it, before pass 5 reads).
        let mut may_alias = vec![("dst", "acc"), ("dst", "src"), ("permuted", "acc")];
        match s.first {
            FirstPass::Target { src, first } => {
                buffers.push(("src", src, res(first + k)?, false));
                if src.overlaps(s.dst) && (!src.same_start(s.dst) || first < 2 * k) {
                    return Err(Error::invalid(format!(
                        "{WHAT}: the target overlaps dst's first two polynomials"
                    )));
                }
                // acc is dst itself, or another ciphertext laid out as dst (SEAL's
                // out-of-place relinearize reads its operand's pair there).
                if acc_polys > 2 || (acc_polys > 0 && acc.overlaps(s.dst) && !acc.same_start(s.dst))
                {
                    return Err(Error::invalid(format!(
                        "{WHAT}: a relinearization adds dst's own first polynomials or \
                         another ciphertext's"
                    )));
                }
            }
            FirstPass::Galois {
                src,
                plain,
                galois_elt,
                permuted,
                more,
            } => {
                crate::ckks::check_galois_elt(galois_elt, plan.coeff_count())?;
                check_galois_source(WHAT, &src, plain.is_some())?;
                buffers.extend(src.checked(res(2 * k)?));
                may_alias.extend(src.unshifted_alias("dst"));
                if let Some(plain) = plain {
                    buffers.push(("plain", plain, res(k)?, false));
                }
                // Each job's key is laid out as the launch's; its dst may be its own source
                // (pass 1 reads it before pass 5 writes), no other buffer.
                for (job, [src_name, plain_name, key_name, _, dst_name]) in
                    more.iter().zip(MORE_GALOIS_NAMES)
                {
                    crate::ckks::check_galois_elt(job.galois_elt, plan.coeff_count())?;
                    buffers.push((src_name, job.src, res(2 * k)?, false));
                    if let Some(plain) = job.plain {
                        buffers.push((plain_name, plain, res(k)?, false));
                    }
                    buffers.push((key_name, job.key, res(2 * k * s.key_stride_primes)?, false));
                    buffers.push((dst_name, job.dst, res(2 * k)?, true));
                    may_alias.push((dst_name, src_name));
                }
                buffers.push(("permuted", permuted, res(jobs * 2 * k)?, true));
                if acc_polys != 1 || !acc.same_start(permuted) {
                    return Err(Error::invalid(format!(
                        "{WHAT}: a rotation adds the permuted first polynomial"
                    )));
                }
            }
            FirstPass::Tensor { a, b, more } => {
                buffers.push(("a", a, res(2 * k)?, false));
                buffers.push(("b", b, res(2 * k)?, false));
                for (job, [a_name, b_name, dst_name]) in more.iter().zip(MORE_JOB_NAMES) {
                    buffers.push((a_name, job.a, res(2 * k)?, false));
                    buffers.push((b_name, job.b, res(2 * k)?, false));
                    buffers.push((dst_name, job.dst, res(3 * k)?, true));
                }
                if acc_polys != 2 || !acc.same_start(s.dst) {
                    return Err(Error::invalid(format!(
                        "{WHAT}: a multiply adds the product's first polynomials"
                    )));
                }
            }
        }
        check_buffers(WHAT, &buffers, &may_alias)?;
        let (ks_outs, ks_chunks) = fan_out(
            self.fan_out,
            k * chained.strided_groups,
            self.compute_units,
            k + 1,
        );
        let (md_outs, md_chunks) = fan_out(
            self.fan_out,
            2 * chained.strided_groups,
            self.compute_units,
            k,
        );
        let first_residues = match s.first {
            FirstPass::Target { .. } | FirstPass::Tensor { .. } => k,
            FirstPass::Galois { .. } => 2 * k,
        };
        // Each pass's groups for one job, then for every job (job j's the j-th share).
        let one_job = [
            // The tensor product's groups, K residues of each polynomial (none without).
            match s.first {
                FirstPass::Tensor { .. } => k * chained.block_groups,
                _ => 0,
            },
            first_residues * chained.block_groups,
            k * ks_chunks as usize * chained.strided_groups,
            (k + 1) * chained.block_groups,
            2 * md_chunks as usize * chained.strided_groups,
            residues(WHAT, 2, k)? * chained.block_groups,
        ];
        let [end0, end1, end2, end3, end4, tickets] =
            chain_ends(one_job.map(|groups| groups * jobs), WHAT)?;
        let (groups, per_group) = chained.launch_shape(tickets);
        // Both kernels' parameters in declaration order: pass 1's, the decomposition's
        // (then a relinearization's target), the rest.
        let decomposition = [
            ("between", Buf(s.between)),
            ("ks_outs", U32(ks_outs)),
            ("ks_chunks", U32(ks_chunks)),
        ];
        let shared: Vec<(&str, KernelArg)> = inner_product_of!(s)
            .args()?
            .into_iter()
            .chain([
                ("md_between", Buf(s.md_between)),
                ("md_outs", U32(md_outs)),
                ("md_chunks", U32(md_chunks)),
            ])
            .collect();
        let md = s.correction.args(WHAT)?;
        let counters = ("counters", Buf(s.counters));
        let tail = [
            ("end1", U32(end1)),
            ("end2", U32(end2)),
            ("end3", U32(end3)),
            ("end4", U32(end4)),
            ("tickets", U32(tickets)),
            ("per_group", U32(per_group)),
        ];
        let mut out = Vec::new();
        match s.first {
            FirstPass::Target { src, first } => {
                let first = U32(to_u32(first)?);
                let args: Vec<(&str, KernelArg)> = [("src", Buf(src)), ("src_first", first)]
                    .into_iter()
                    .chain(decomposition)
                    .chain([("target", Buf(src)), ("target_first", first)])
                    .chain(shared)
                    .chain([
                        ("dst", Buf(s.dst)),
                        ("dst_stride", U32(to_u32(k)?)),
                        ("inv", Buf(s.inv)),
                        ("acc", Buf(acc)),
                        ("acc_polys", U32(to_u32(acc_polys)?)),
                    ])
                    .chain(md)
                    .chain([counters])
                    .chain(tail)
                    .collect();
                // SAFETY: every group index of each pass is below that pass's groups (its
                // ticket range, from the counts above); each pass touches the residues the
                // five launches it replaces touch (see forward_key_switch and
                // forward_moddown), all checked to lie in their buffers above.
                unsafe {
                    chained
                        .plain
                        .launch(queue, s.t_target, k, &args, groups, events, &mut out)
                }?;
            }
            FirstPass::Galois {
                src,
                plain,
                galois_elt,
                permuted,
                more,
            } => {
                // Jobs past `more` are not read (`jobs` says how many there are): job 0's.
                let unused = GaloisJob {
                    src: src.first(),
                    plain: None,
                    galois_elt,
                    key: s.key,
                    dst: s.dst,
                };
                // Bit j: job j's source is times its plaintext (job 0's: times_plain).
                let plain_jobs = more
                    .iter()
                    .enumerate()
                    .filter(|(_, job)| job.plain.is_some())
                    .fold(0u32, |bits, (i, _)| bits | 1 << (i + 1));
                let more_args = MORE_GALOIS_NAMES.iter().enumerate().flat_map(|(i, names)| {
                    let job = more.get(i).unwrap_or(&unused);
                    [
                        (names[0], Buf(job.src)),
                        // Not read without the plaintext.
                        (names[1], Buf(job.plain.unwrap_or(job.src))),
                        (names[2], Buf(job.key)),
                        (names[3], U32(job.galois_elt)),
                        (names[4], Buf(job.dst)),
                    ]
                });
                let args: Vec<(&str, KernelArg)> = src
                    .args(plan.coeff_count(), SOURCE_TERMS_MAX)?
                    .into_iter()
                    .chain([
                        // Not read without the plaintext.
                        ("plain", Buf(plain.unwrap_or(src.first()))),
                        ("times_plain", U32(plain.is_some().into())),
                        ("galois_elt", U32(galois_elt)),
                        ("permuted", Buf(permuted)),
                    ])
                    .chain(decomposition)
                    .chain(shared)
                    .chain([("dst", Buf(s.dst)), ("inv", Buf(s.inv))])
                    .chain(md)
                    .chain([
                        ("jobs", U32(to_u32(jobs)?)),
                        ("plain_jobs", U32(plain_jobs)),
                    ])
                    .chain(more_args)
                    .chain([counters])
                    .chain(tail)
                    .collect();
                // SAFETY: as for the plain key switch; pass 1 reads 2 K residues of each
                // term of src (and K of plain, with it) and writes 2 K of permuted (checked).
                // Job j's groups are the j-th share of each pass's, read job j's src (2 K
                // residues), plain (K, where its bit is set) and key, write its dst (checked,
                // overlapping nothing but its own src, which pass 1 reads before pass 5
                // writes) and its j-th share of permuted and of the intermediates (checked at
                // jobs times one job's).
                unsafe {
                    chained
                        .galois
                        .launch(queue, s.t_target, k, &args, groups, events, &mut out)
                }?;
            }
            FirstPass::Tensor { a, b, more } => {
                // Jobs past `more` are not read (`jobs` says how many there are): job 0's.
                let unused = TensorJob { a, b, dst: s.dst };
                let more_args = MORE_JOB_NAMES.iter().enumerate().flat_map(|(i, names)| {
                    let job = more.get(i).unwrap_or(&unused);
                    [
                        (names[0], Buf(job.a)),
                        (names[1], Buf(job.b)),
                        (names[2], Buf(job.dst)),
                    ]
                });
                let args: Vec<(&str, KernelArg)> = [("a", Buf(a)), ("b", Buf(b))]
                    .into_iter()
                    .chain(decomposition)
                    .chain(shared)
                    .chain([("dst", Buf(s.dst)), ("inv", Buf(s.inv))])
                    .chain(md)
                    .chain([("jobs", U32(to_u32(jobs)?))])
                    .chain(more_args)
                    .chain([counters, ("end0", U32(end0))])
                    .chain(tail)
                    .collect();
                // SAFETY: as for the plain key switch, the target being dst's third
                // polynomial; pass 0 reads 2 K residues of a and of b and writes dst's 3 K
                // (checked), each word by one work item of one group. Job j's groups are
                // the j-th share of each pass's (the ends count jobs shares), touch job j's
                // a, b and dst (checked, each dst overlapping nothing else) and its j-th
                // share of the intermediates (checked at jobs times one job's).
                unsafe {
                    chained
                        .tensor
                        .launch(queue, s.t_target, k, &args, groups, events, &mut out)
                }?;
            }
        }
        Ok(out)
    }
}

impl FusedPasses {
    /// `s` in one launch of four passes (`ks_chained_coeff`, `opencl/chain.cl`): the
    /// words of SEAL's switch_key_inplace in coefficient form, after SEAL's apply_galois
    /// for a rotation. Its mod-down divides in coefficient form, as SEAL's does: after the
    /// inner product every row leaves through its inverse's first pass, and one pass
    /// finishes the inverses of each data prime's residue and of the special prime's and
    /// divides.
    ///
    /// Errors: no such chained pass at this level
    /// ([`FusedPasses::chains_coeff_key_switch`]); as [`FusedPasses::chained_key_switch`]'s.
    pub fn chained_key_switch_coeff(
        &self,
        queue: &Queue,
        s: &ChainedCoeffSwitch,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "chained_key_switch_coeff";
        let chained = self.chained_passes(WHAT)?;
        let pass = chained
            .coeff
            .as_ref()
            .ok_or_else(|| no_chained_passes(WHAT))?;
        let plan = self.plan();
        let k = s.k;
        check_key_switch_shape(
            WHAT,
            plan,
            k,
            s.key_stride_primes,
            s.key_special_index,
            s.reduce_every,
        )?;
        plan.check_queue(queue)?;
        let res = |count: usize| plan.extent(WHAT, count, 1, 0);
        let (acc, acc_polys) = s.acc;
        let mut buffers = vec![
            ("key", s.key, res(2 * k * s.key_stride_primes)?, false),
            ("dst", s.dst, res(2 * k)?, true),
            ("acc", acc, res(acc_polys * k)?, false),
            ("inv", s.inv, 2 * k, false),
            ("values", s.values, res(k * (k + 1))?, true),
            ("prod", s.prod, res(2 * k)?, true),
            ("last", s.last, res(2)?, true),
            ("counters", s.counters, CHAIN_COUNTER_WORDS, true),
        ];
        // As in chained_key_switch: dst is read (acc) and written word by word by one work
        // item (pass 4); a relinearization's target lies in dst after its first two
        // polynomials, a rotation's sources may be dst (pass 1 reads them, before pass 4
        // writes); a rotation's addend is the permuted first polynomial (pass 1 writes it,
        // pass 4 reads it).
        let may_alias: Vec<_> = [("dst", "acc"), ("dst", "src"), ("permuted", "acc")]
            .into_iter()
            .chain(SOURCE_NAMES.map(|name| ("dst", name)))
            .collect();
        let (src, galois_elt, permuted, target, target_first, galois_residues) = match s.first {
            FirstPass::Target { src, first } => {
                buffers.push(("src", src, res(first + k)?, false));
                if src.overlaps(s.dst) && (!src.same_start(s.dst) || first < 2 * k) {
                    return Err(Error::invalid(format!(
                        "{WHAT}: the target overlaps dst's first two polynomials"
                    )));
                }
                // acc is dst itself, or another ciphertext laid out as dst (SEAL's
                // out-of-place relinearize reads its operand's pair there).
                if acc_polys > 2 || (acc_polys > 0 && acc.overlaps(s.dst) && !acc.same_start(s.dst))
                {
                    return Err(Error::invalid(format!(
                        "{WHAT}: a relinearization adds dst's own first polynomials or \
                         another ciphertext's"
                    )));
                }
                // Pass 1 has no groups: its buffers are never read or written.
                (Sources::one(src), 0, s.prod, src, first, 0)
            }
            FirstPass::Galois { plain: Some(_), .. } => {
                return Err(Error::invalid(format!(
                    "{WHAT}: a plaintext product is rotated in NTT form, not in coefficient form"
                )))
            }
            FirstPass::Galois { more: [_, ..], .. } => {
                return Err(Error::invalid(format!(
                    "{WHAT}: rotations share a launch in NTT form, not in coefficient form"
                )))
            }
            FirstPass::Galois {
                src,
                plain: None,
                galois_elt,
                permuted,
                more: [],
            } => {
                crate::ckks::check_galois_elt(galois_elt, plan.coeff_count())?;
                buffers.extend(src.checked(res(2 * k)?));
                buffers.push(("permuted", permuted, res(2 * k)?, true));
                if acc_polys != 1 || !acc.same_start(permuted) {
                    return Err(Error::invalid(format!(
                        "{WHAT}: a rotation adds the permuted first polynomial"
                    )));
                }
                (src, galois_elt, permuted, permuted, k, 2 * k)
            }
            FirstPass::Tensor { .. } => {
                return Err(Error::invalid(format!(
                    "{WHAT}: a CKKS product is in NTT form, not in coefficient form"
                )))
            }
        };
        check_buffers(WHAT, &buffers, &may_alias)?;
        let (ks_outs, ks_chunks) = fan_out(
            self.fan_out,
            k * chained.strided_groups,
            self.compute_units,
            k + 1,
        );
        let pair = residues(WHAT, 2, k)?;
        let [end1, end2, end3, tickets] = chain_ends(
            [
                galois_residues * chained.block_groups,
                k * ks_chunks as usize * chained.strided_groups,
                (k + 1) * chained.block_groups,
                pair * chained.strided_groups,
            ],
            WHAT,
        )?;
        let (groups, per_group) = chained.launch_shape(tickets);
        let args: Vec<(&str, KernelArg)> = src
            .args(plan.coeff_count(), SOURCE_TERMS_MAX)?
            .into_iter()
            .chain([
                ("galois_elt", U32(galois_elt)),
                ("permuted", Buf(permuted)),
                ("target", Buf(target)),
                ("target_first", U32(to_u32(target_first)?)),
                ("ks_outs", U32(ks_outs)),
                ("ks_chunks", U32(ks_chunks)),
            ])
            .chain(inner_product_of!(s).args()?)
            .chain([
                ("dst", Buf(s.dst)),
                ("inv", Buf(s.inv)),
                ("acc", Buf(acc)),
                ("acc_polys", U32(to_u32(acc_polys)?)),
            ])
            .chain(s.correction.args(WHAT)?)
            .chain([
                ("counters", Buf(s.counters)),
                ("end1", U32(end1)),
                ("end2", U32(end2)),
                ("end3", U32(end3)),
                ("tickets", U32(tickets)),
                ("per_group", U32(per_group)),
            ])
            .collect();
        let mut out = Vec::new();
        // SAFETY: every group index of each pass is below that pass's groups (its ticket
        // range, from the counts above); pass 1 reads 2 K residues of each source and
        // writes as many of permuted (a rotation's only), passes 2 and 3 touch what the NTT-form
        // chain's passes 2 and 3 touch (the target's K residues, values' K (K + 1), prod's
        // 2 K, last's 2, the key), pass 4 reads prod and last, acc's first acc_polys K
        // residues and writes dst's 2 K, all checked to lie in their buffers above.
        unsafe { pass.launch(queue, s.values, k, &args, groups, events, &mut out) }?;
        Ok(out)
    }
}

impl FusedPasses {
    /// `m` in one launch of three passes (`multiply_plain_chained`, `opencl/chain.cl`).
    ///
    /// Errors: no such chained pass at this level ([`FusedPasses::chains_multiply_plain`]);
    /// K = 0 or above the plan's primes; no polynomial; more plaintext words than N; a buffer shorter than the words it is read
    /// or written at, or a written buffer overlapping another.
    pub fn chained_multiply_plain(
        &self,
        queue: &Queue,
        m: &ChainedMultiplyPlain,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "chained_multiply_plain";
        let chained = self.chained_passes(WHAT)?;
        let pass = chained
            .multiply_plain
            .as_ref()
            .ok_or_else(|| no_chained_passes(WHAT))?;
        let plan = self.plan();
        let k = m.k;
        if k == 0 || k > plan.coeff_modulus_size() || m.polys == 0 {
            return Err(Error::invalid(format!(
                "{WHAT}: {} polynomials of {k} primes on a plan of {}",
                m.polys,
                plan.coeff_modulus_size()
            )));
        }
        if m.plain_count > plan.coeff_count() {
            return Err(Error::invalid(format!(
                "{WHAT}: {} plaintext coefficients at N = {}",
                m.plain_count,
                plan.coeff_count()
            )));
        }
        plan.check_queue(queue)?;
        let ct_residues = residues(WHAT, m.polys, k)?;
        let res = |count: usize| plan.extent(WHAT, count, 1, 0);
        let buffers: Vec<_> = [
            ("ct", m.ct, res(ct_residues)?, true),
            ("plain", m.plain, m.plain_count, false),
            ("values", m.values, res(ct_residues + k)?, true),
            ("counters", m.counters, CHAIN_COUNTER_WORDS, true),
        ]
        .into_iter()
        .chain(m.src.checked(res(ct_residues)?))
        .collect();
        // Pass 1 reads the sources, pass 3 writes ct.
        let may_alias = SOURCE_NAMES.map(|name| ("ct", name));
        check_buffers(WHAT, &buffers, &may_alias)?;
        let [end1, end2, tickets] = chain_ends(
            [
                (ct_residues + k) * chained.strided_groups,
                ct_residues * chained.block_groups,
                ct_residues * chained.strided_groups,
            ],
            WHAT,
        )?;
        let (groups, per_group) = chained.launch_shape(tickets);
        let args: Vec<(&str, KernelArg)> = [("ct", Buf(m.ct))]
            .into_iter()
            .chain(
                m.src
                    .args(plan.coeff_count(), MULTIPLY_PLAIN_SOURCE_TERMS)?,
            )
            .chain([
                ("polys", U32(to_u32(m.polys)?)),
                ("plain", Buf(m.plain)),
                ("plain_count", U32(to_u32(m.plain_count)?)),
                ("t", U64(m.t.value())),
                ("t_r1", U64(m.t.const_ratio()[1])),
                ("threshold", U64(m.threshold)),
                ("counters", Buf(m.counters)),
                ("end1", U32(end1)),
                ("end2", U32(end2)),
                ("tickets", U32(tickets)),
                ("per_group", U32(per_group)),
            ])
            .collect();
        let mut out = Vec::new();
        // SAFETY: every group index of each pass is below that pass's groups (its ticket
        // range); pass 1 reads each source's polys K residues, the plaintext below plain_count and
        // writes values' (polys + 1) K residues, pass 2 touches those, pass 3 reads values'
        // first polys K residues and writes ct's, all checked above; primes below K.
        unsafe { pass.launch(queue, m.values, k, &args, groups, events, &mut out) }?;
        Ok(out)
    }
}

/// A plain transform in one launch: `count` polynomials of `primes` residues (residue j under
/// the plan's prime j) in `values`, in place, the same words as [`NttPlan::transform`]
/// with `direction` and `reduce`; of `sum` where given (the values then written only): a
/// forward one of a sum in coefficient form ([`Sources::sum`]), an inverse one of a sum of
/// products in NTT form ([`Sources::products`]).
pub struct ChainedTransform<'a> {
    pub values: &'a Region,
    pub sum: Option<Sources<'a>>,
    pub count: usize,
    pub primes: usize,
    pub direction: NttDirection,
    pub reduce: bool,
    pub counters: &'a Region,
}

impl FusedPasses {
    /// `t` in one launch (`opencl/chain.cl`): the plan's strided and block passes in the
    /// direction's order (`ntt_fwd_chained`, `ntt_inv_chained`), after a pass that writes the
    /// sum into values where `t` has one (`ntt_fwd_sum_chained`, `ntt_inv_sum_chained`).
    ///
    /// Errors: no chained passes at this level (or none of a sum,
    /// [`FusedPasses::chains_transform_sum`]); as [`NttPlan::transform`]'s; the counters
    /// overlapping the values, a plaintext overlapping them, a region too short; a forward
    /// transform of products, an inverse one of shifted terms.
    pub fn chained_transform(
        &self,
        queue: &Queue,
        t: &ChainedTransform,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "chained_transform";
        let chained = self.chained_passes(WHAT)?;
        let plan = self.plan();
        let residues = plan.validate(queue, t.values, t.count, t.primes)?;
        let extent = plan.extent(WHAT, residues, 1, 0)?;
        let sum = t.sum.as_ref();
        let buffers: Vec<_> = [
            ("values", t.values, extent, true),
            ("counters", t.counters, CHAIN_COUNTER_WORDS, true),
        ]
        .into_iter()
        .chain(sum.into_iter().flat_map(|s| {
            s.checked(extent)
                .chain(s.plains_checked(t.primes * plan.coeff_count()))
        }))
        .collect();
        // A sum's pass reads its words where it writes values' (each word by one work
        // item); a shifted term's lie elsewhere, and a plaintext's serve every polynomial.
        let may_alias = sum.map_or_else(Vec::new, |s| s.unshifted_alias("values"));
        check_buffers(WHAT, &buffers, &may_alias)?;
        let strided = residues * chained.strided_groups;
        let block = residues * chained.block_groups;
        let (pass, ends, sources) = match (t.sum, t.direction) {
            (None, NttDirection::Forward) => (
                &chained.forward,
                chain_ends([strided, block], WHAT)?.to_vec(),
                Vec::new(),
            ),
            (None, NttDirection::Inverse) => (
                &chained.inverse,
                chain_ends([block, strided], WHAT)?.to_vec(),
                Vec::new(),
            ),
            (Some(sum), NttDirection::Forward) if sum.has_products() => {
                return Err(Error::invalid(format!(
                    "{WHAT}: a forward transform of plaintext products (NTT form)"
                )))
            }
            (Some(sum), NttDirection::Inverse) if sum.has_shifts() => {
                return Err(Error::invalid(format!(
                    "{WHAT}: an inverse transform of shifted terms (coefficient form)"
                )))
            }
            (Some(sum), direction) => {
                let [forward, inverse] = chained
                    .sums
                    .as_ref()
                    .ok_or_else(|| no_chained_passes("chained_transform of a sum"))?;
                // The sum's pass: a word a work item.
                let words = extent / chained.work_group;
                let (pass, ends) = match direction {
                    NttDirection::Forward => (forward, [words, strided, block]),
                    NttDirection::Inverse => (inverse, [words, block, strided]),
                };
                (
                    pass,
                    chain_ends(ends, WHAT)?.to_vec(),
                    sum.sum_pass_args(plan.coeff_count())?,
                )
            }
        };
        let (&tickets, pass_ends) = ends.split_last().expect("two or three passes");
        let (groups, per_group) = chained.launch_shape(tickets);
        let args: Vec<(&str, KernelArg)> = sources
            .into_iter()
            .chain([
                ("reduce", U32(t.reduce.into())),
                ("counters", Buf(t.counters)),
            ])
            .chain(
                ["end1", "end2"]
                    .into_iter()
                    .zip(pass_ends.iter().map(|&e| U32(e))),
            )
            .chain([("tickets", U32(tickets)), ("per_group", U32(per_group))])
            .collect();
        let mut out = Vec::new();
        // SAFETY: validate() checked values.len() >= residues * N and primes <= L, and the
        // sum's terms hold as many words, its plaintexts primes * N; each pass's group index
        // is below its ticket range: the transforms' passes' residues times their groups per
        // residue, so every group serves a residue below `residues`, words below N of it,
        // under prime residue % primes < L; a sum's pass residues * N / wg groups of wg
        // items, item w reading word w of the unshifted terms, a word of residue w / N of the
        // shifted ones (the shift below N, checked), word k of residue (w / N) % primes of
        // the plaintexts, and writing word w of values; the counters hold their words
        // (checked).
        unsafe { pass.launch(queue, t.values, t.primes, &args, groups, events, &mut out) }?;
        Ok(out)
    }
}

impl FusedPasses {
    /// This level's chained passes. Errors: the level does not chain (`what` names the
    /// launcher asked for them).
    pub(super) fn chained_passes(&self, what: &str) -> Result<&ChainedPasses> {
        self.chained.as_ref().ok_or_else(|| no_chained_passes(what))
    }
}

/// `what`'s error at a level without the chained pass it launches.
pub(super) fn no_chained_passes(what: &str) -> Error {
    Error::Logic(format!("{what}: no chained passes at this level"))
}

/// Errors unless `src` is what a chained rotation's permutation reads in NTT form: unshifted
/// ciphertexts' words (a shift is a coefficient-form product), and, where the permutation
/// multiplies by a plaintext (`times_plain`), one added term.
fn check_galois_source(what: &str, src: &Sources, times_plain: bool) -> Result<()> {
    if src.has_shifts() || src.has_products() {
        return Err(Error::invalid(format!(
            "{what}: a rotation in NTT form reads a sum of unshifted ciphertexts"
        )));
    }
    if times_plain && src.single(what).is_err() {
        return Err(Error::invalid(format!(
            "{what}: a rotation of a plaintext product reads one ciphertext"
        )));
    }
    Ok(())
}

/// The cumulative ends of the passes' tickets (the last: the launch's groups); an error
/// naming `what` where they overflow 32 bits.
pub(super) fn chain_ends<const P: usize>(groups: [usize; P], what: &str) -> Result<[u32; P]> {
    let mut ends = [0u32; P];
    let mut total = 0usize;
    for (end, g) in ends.iter_mut().zip(groups) {
        total += g;
        *end = u32::try_from(total)
            .map_err(|_| Error::invalid(format!("{what}: too many work groups")))?;
    }
    Ok(ends)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_chain_cl() {
        crate::cl::check_source(
            sources::CHAIN,
            &[
                &KS_CHAINED,
                &KS_CHAINED_GALOIS,
                &KS_CHAINED_COEFF,
                &MULTIPLY_PLAIN_CHAINED,
                &KS_CHAINED_TENSOR,
                &MODDOWN_CHAINED,
                &MODDOWN_SUM_CHAINED,
                &NTT_FWD_CHAINED,
                &NTT_INV_CHAINED,
                &NTT_FWD_SUM_CHAINED,
                &NTT_INV_SUM_CHAINED,
            ],
        )
        .unwrap();
    }

    #[test]
    fn ends_accumulate() {
        assert_eq!(
            chain_ends([4, 8, 5, 2, 8], "t").unwrap(),
            [4, 12, 17, 19, 27]
        );
        assert!(chain_ends([usize::MAX / 2, usize::MAX / 2, 1, 1, 1], "t").is_err());
    }
}
