//! Key switching's forward transforms with the decomposition fused into their loads and
//! the inner product with the key into the last pass (`ntt_fwd_block_ks`,
//! `opencl/fused.cl`), for `ops::keyswitch`'s `switch_key`.

use super::{check_jobs, FusedPasses, LOAD_DECOMPOSE, MORE_JOBS, NTT_INV_FWD_STRIDED};
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{kernel_sigs, sources, DeviceInfoSummary, Event, KernelArg, Queue, Region};
use crate::error::{Error, Result};
use crate::ntt::{check_buffers, to_u32, NttPlan, Pass, StagedLayout, StagedVariant};

kernel_sigs! {
    pub(super) NTT_FWD_BLOCK_KS = ntt_fwd_block_ks(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32, t_target: Buf,
        target: Buf, target_first: U32, key: Buf, key_stride_primes: U32,
        key_special_index: U32, reduce_every: U32, prod: Buf, last: Buf,
        inv_root_powers: Buf, jobs: U32, target1: Buf, key1: Buf, target2: Buf, key2: Buf,
        target3: Buf, key3: Buf,
    );
}

/// The kernel's parameter names for jobs 1 to 3: target, key.
const MORE_NAMES: [[&str; 2]; MORE_JOBS] = [
    ["target1", "key1"],
    ["target2", "key2"],
    ["target3", "key3"],
];

/// Key switching's decomposition and inner product with the key after the first pass of
/// the target's inverse NTT, as [`FusedPasses::forward_key_switch`] runs them at level K
/// over the plan's first K + 1 primes (the level's, then the special prime): with t the
/// target in coefficient form (canonical), for c < 2 and I < K + 1,
///     s(c, I) = sum_{J < K} NTT_I(t[J] mod q_I) * key[J][c][kp(I)] mod q_I,
/// with the target's own residue J in NTT form in place of NTT_J(t[J]) (SEAL's choice),
/// kp(I) = I for I < K and `key_special_index` for I = K; prod[c * K + I] = s(c, I) for
/// I < K, canonical, and last[c] = s(c, K) after the first pass of its inverse NTT under
/// the special prime (the mod-down's `last`, < 2 q). The host composition is the inverse
/// NTT, `host::ckks_ks_decompose`, the lazy forward NTT, `host::ckks_ks_inner_product`
/// and the first rounds of the lazy inverse NTT
/// (`ntt::host::inverse_ntt_negacyclic_harvey_lazy_rounds`).
///
/// With `more` the launches switch 1 + more.len() targets (at most `KS_JOBS_MAX`,
/// independent) with their keys: job j's (`target` and `key` for job 0, more[j - 1]'s
/// after) from the j-th K residues of `t_target` into the j-th 2 K residues of `prod` and
/// 2 of `last`, through the j-th K (K + 1) of `scratch`, its words those of a launch of its
/// own.
pub struct KeySwitch<'a> {
    /// The target's K residues after the first pass of their inverse NTT
    /// (`NttPlan::inverse_first_pass_from`): with a one-pass layout, canonical
    /// coefficients.
    pub t_target: &'a Region,
    /// The target in NTT form: K residues from residue `target_first`.
    pub target: &'a Region,
    pub target_first: usize,
    /// SEAL's key vector, contiguous: word ((J * 2 + c) * key_stride_primes + p) * N + k.
    pub key: &'a Region,
    pub key_stride_primes: usize,
    pub key_special_index: usize,
    /// Products accumulated between reductions of the 128-bit sums (at least 1).
    pub reduce_every: u32,
    /// Outputs: 2 K and 2 residues.
    pub prod: &'a Region,
    pub last: &'a Region,
    /// The intermediate of a two-pass layout (K (K + 1) N words); unused with one pass.
    pub scratch: &'a Region,
    pub k: usize,
    /// Jobs 1 on: their targets (at `target_first`, as job 0's) and keys.
    pub more: &'a [SwitchOperands<'a>],
}

/// A key switch's target (K residues in NTT form from residue `target_first`) and key
/// (laid out as [`KeySwitch::key`]) in a launch of several ([`KeySwitch::more`]).
#[derive(Clone, Copy)]
pub struct SwitchOperands<'a> {
    pub target: &'a Region,
    pub key: &'a Region,
}

/// Key switching's passes, built for the variant's own values per work item where the
/// device holds that layout with the plan's split (`StagedLayout::for_rows`), with the
/// variant's rows per block work group where the device holds them (else one).
pub(super) struct KeySwitchPasses {
    /// The target's inverse second pass with the decomposition and the forward first
    /// passes (two passes only).
    inv_fwd_strided: Option<Pass>,
    /// Launched over ceil((K + 1) / rows) "residues": each covers `rows` rows.
    block: Pass,
    pub(super) rows: usize,
    /// Whether `block` stages its roots in local memory (`ks_local_roots_fit`).
    pub(super) local_roots: bool,
}

impl KeySwitchPasses {
    pub(super) fn new(
        plan: &NttPlan,
        layout: StagedLayout,
        variant: StagedVariant,
    ) -> Result<KeySwitchPasses> {
        let info = plan.context().info();
        let ks = layout.for_rows(info.local_mem_bytes, info.max_work_group_size, variant);
        match ks_rows_that_fit(ks, variant.rows(), info) {
            None => Self::build(plan, ks, 1),
            Some((one_block, rows)) => {
                let built = Self::build(plan, one_block, rows)?;
                let wg = rows as usize * one_block.block_work_group_size();
                let holds = plan
                    .context()
                    .kernel_work_group_size(&built.block.kernel())?;
                if holds >= wg {
                    return Ok(built);
                }
                tracing::debug!(
                    rows,
                    holds,
                    wg,
                    "key switching's rows per work group exceed what the kernel's build \
                     holds; one row"
                );
                Self::build(plan, ks, 1)
            }
        }
    }

    /// The passes of layout `ks` with `rows` rows per block work group (the context's
    /// program cache gives a build back when the options are equal).
    fn build(plan: &NttPlan, ks: StagedLayout, rows: u32) -> Result<KeySwitchPasses> {
        let local_roots = ks_local_roots_fit(ks, rows, plan.context().info());
        let options = format!(
            "-D KS_ROWS={rows} -D KS_LOCAL_ROOTS={}",
            u32::from(local_roots)
        );
        let program = plan.build_program(ks, &[sources::FUSED], &options)?;
        let items = plan.coeff_count() >> ks.log_r();
        let rows = rows as usize;
        Ok(KeySwitchPasses {
            inv_fwd_strided: ks
                .strided_work_group_size()
                .map(|wg| plan.pass(&program, &NTT_INV_FWD_STRIDED, &[], items, Some(wg)))
                .transpose()?,
            block: plan.pass(
                &program,
                &NTT_FWD_BLOCK_KS,
                &[],
                rows * items,
                Some(rows * ks.block_work_group_size()),
            )?,
            rows,
            local_roots,
        })
    }
}

/// Key switching's block pass with `want` rows per work group: the layout with one block
/// per row and the most rows up to `want` that the device's work groups and local memory
/// hold; None where that is one row (the layout's own blocks then).
fn ks_rows_that_fit(
    ks: StagedLayout,
    want: u32,
    info: &DeviceInfoSummary,
) -> Option<(StagedLayout, u32)> {
    let one_block = ks.with_one_block();
    let by_items = info.max_work_group_size / one_block.block_work_group_size();
    let by_memory = info.local_mem_bytes as usize / one_block.block_local_bytes();
    let rows = (want as usize).min(by_items).min(by_memory) as u32;
    (rows > 1).then_some((one_block, rows))
}

/// Whether key switching's block pass with `rows` rows of `ks`'s blocks also holds each
/// row's forward roots (16 bytes per word of its blocks) in local memory: its J transforms
/// then read them once per work group (`stage_block_roots` in fused.cl). Two-pass
/// layouts only: a one-pass row is a whole transform, whose roots alone take twice its
/// words (PoCL 3.1 crashed inside such a build: 16 rows at 2^10, 2048 work items, 256 KB
/// of roots).
fn ks_local_roots_fit(ks: StagedLayout, rows: u32, info: &DeviceInfoSummary) -> bool {
    let roots = 16usize << (ks.log_b() + ks.log_g());
    let fits = rows as usize * (ks.block_local_bytes() + roots) <= info.local_mem_bytes as usize;
    ks.log_s() != 0 && fits
}

/// The errors of a key switch at K = `k` over `plan` with a key of `key_stride_primes`
/// primes, before any buffer's length: K = 0 or K + 1 above the plan's primes, K or the
/// special index beyond the key's primes, no products between reductions.
pub(super) fn check_key_switch_shape(
    what: &str,
    plan: &NttPlan,
    k: usize,
    key_stride_primes: usize,
    key_special_index: usize,
    reduce_every: u32,
) -> Result<()> {
    if k == 0 || k + 1 > plan.coeff_modulus_size() {
        return Err(Error::invalid(format!(
            "{what}: K = {k} needs K + 1 primes; the plan has {}",
            plan.coeff_modulus_size()
        )));
    }
    if k > key_stride_primes || key_special_index >= key_stride_primes {
        return Err(Error::invalid(format!(
            "{what}: K = {k} and special index {key_special_index} do not fit a key of \
             {key_stride_primes} primes"
        )));
    }
    if reduce_every == 0 {
        return Err(Error::invalid(format!("{what}: reduce_every is 0")));
    }
    Ok(())
}

impl FusedPasses {
    /// Key switching's forward transforms with the decomposition fused into their loads
    /// and the inner product with the key into the last pass (see [`KeySwitch`]): one
    /// launch with a one-pass layout, two otherwise (the first finishes the target's
    /// inverse); the decomposed residues in NTT form are never stored, and the last pass
    /// also runs the first pass of the special prime's inverse for the mod-down.
    ///
    /// Errors: K = 0 or K + 1 above the plan's primes; a key shape that does not fit (K
    /// or the special index beyond key_stride_primes); a buffer shorter than the words
    /// read or written; an output aliasing another buffer.
    pub fn forward_key_switch(
        &self,
        queue: &Queue,
        ks: &KeySwitch,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "forward_key_switch";
        let plan = self.plan();
        let k = ks.k;
        check_key_switch_shape(
            WHAT,
            plan,
            k,
            ks.key_stride_primes,
            ks.key_special_index,
            ks.reduce_every,
        )?;
        plan.check_queue(queue)?;
        let jobs = 1 + ks.more.len();
        check_jobs(WHAT, jobs)?;
        // With one pass the scratch is not touched.
        let two_pass = plan.launches_per_transform() == 2;
        let residues = |count: usize, stride: usize| plan.extent(WHAT, count, stride, 0);
        let scratch_words = if two_pass {
            residues(jobs * k, k + 1)?
        } else {
            0
        };
        let target_words = residues(1, ks.target_first + k)?;
        let key_words = residues(2 * k, ks.key_stride_primes)?;
        let mut buffers = vec![
            ("t_target", ks.t_target, residues(jobs, k)?, false),
            ("prod", ks.prod, residues(jobs * 2, k)?, true),
            ("last", ks.last, residues(jobs, 2)?, true),
            ("scratch", ks.scratch, scratch_words, two_pass),
        ];
        let first = SwitchOperands {
            target: ks.target,
            key: ks.key,
        };
        buffers.extend([
            ("target", ks.target, target_words, false),
            ("key", ks.key, key_words, false),
        ]);
        for (job, [target, key]) in ks.more.iter().zip(MORE_NAMES) {
            buffers.extend([
                (target, job.target, target_words, false),
                (key, job.key, key_words, false),
            ]);
        }
        check_buffers(WHAT, &buffers, &[])?;
        let passes = &self.key_switch;
        let values = if two_pass { ks.scratch } else { ks.t_target };
        let mut out = Vec::new();
        if let Some(strided) = &passes.inv_fwd_strided {
            let (outs, chunks) = self.fan_out(strided, jobs * k, k + 1);
            let args = [
                ("in", Buf(ks.t_target)),
                ("kind", U32(LOAD_DECOMPOSE)),
                ("in_prime", U32(0)),
                ("outs_per_group", U32(outs)),
                ("chunks", U32(chunks)),
                ("jobs", U32(jobs as u32)),
            ];
            let groups = jobs * k * chunks as usize;
            // SAFETY: job j's group (J, chunk) reads residue j K + J < jobs K of t_target
            // (checked) and writes residues j K (K + 1) + J (K + 1) + I, I < K + 1, of
            // scratch (checked to hold jobs K (K + 1) residues); primes I, J < K + 1 of the
            // plan (checked).
            unsafe { strided.launch(queue, values, k + 1, &args, groups, events, &mut out) }?;
        }
        let mut args: Vec<(&str, KernelArg)> = vec![
            ("t_target", Buf(ks.t_target)),
            ("target", Buf(ks.target)),
            ("target_first", U32(to_u32(ks.target_first)?)),
            ("key", Buf(ks.key)),
            ("key_stride_primes", U32(to_u32(ks.key_stride_primes)?)),
            ("key_special_index", U32(ks.key_special_index as u32)),
            ("reduce_every", U32(ks.reduce_every)),
            ("prod", Buf(ks.prod)),
            ("last", Buf(ks.last)),
            ("jobs", U32(jobs as u32)),
        ];
        for (j, names) in MORE_NAMES.iter().enumerate() {
            // Jobs past the launch's are not read: job 0's stand in.
            let job = ks.more.get(j).unwrap_or(&first);
            args.extend([(names[0], Buf(job.target)), (names[1], Buf(job.key))]);
        }
        // SAFETY: row I < K + 1 of job j's block group g (rows past K touch only the last
        // prime's tables and their own local memory) reads residues j K (K + 1) + J (K + 1)
        // + I < jobs K (K + 1) of scratch (two passes) or j K + J < jobs K of t_target (one
        // pass), its target's residue target_first + J < target_first + K, its key's
        // residue (2 J + c) * stride + kp < 2 K stride (kp < stride), and writes prod
        // residue j 2 K + c K + I < jobs 2 K or last residue 2 j + c < 2 jobs (all checked).
        let groups_of_rows = (k + 1).div_ceil(passes.rows);
        unsafe {
            passes.block.launch(
                queue,
                values,
                k + 1,
                &args,
                jobs * groups_of_rows,
                events,
                &mut out,
            )
        }?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_switching_rows_fit_work_groups_and_local_memory() {
        let info = |local_mem_bytes: u64, max_work_group_size: usize| DeviceInfoSummary {
            name: String::new(),
            vendor: String::new(),
            platform: String::new(),
            is_gpu: true,
            is_cpu: false,
            local_mem_bytes,
            max_work_group_size,
            compute_units: 132,
            max_alloc_bytes: 0,
            global_mem_bytes: 0,
            base_addr_align_bytes: 512,
            fp64: true,
        };
        let big = info(48 * 1024, 1024);
        let default = StagedLayout::new(15, 48 * 1024, 1024, StagedVariant::DEFAULT).unwrap();
        // The default at 2^15: blocks of 2^8 words, 64 items of 4 values a row, two rows.
        let (one, rows) = ks_rows_that_fit(default, 2, &big).unwrap();
        assert_eq!((one.log_b(), one.block_work_group_size(), rows), (0, 64, 2));
        let r8: StagedVariant = "r8g11c4".parse().unwrap();
        let layout = |log_n| StagedLayout::new(log_n, 48 * 1024, 1024, r8);
        // 8 values at 2^15: 32 items a row: 9 rows of 288 items, 20.7 KB.
        let (one, rows) = ks_rows_that_fit(layout(15).unwrap(), 9, &big).unwrap();
        assert_eq!((one.log_b(), one.block_work_group_size(), rows), (0, 32, 9));
        // 2^16: also blocks of 2^8 words; 16 rows are 512 items and 36 KB.
        assert_eq!(
            ks_rows_that_fit(layout(16).unwrap(), 16, &big).unwrap().1,
            16
        );
        // 8 KB of local memory holds three rows of 2304 bytes.
        let small = info(8 * 1024, 1024);
        assert_eq!(
            ks_rows_that_fit(layout(15).unwrap(), 9, &small).unwrap().1,
            3
        );
        // 2^12 in one pass: a row is 512 items and 36 KB, so one: the layout's own.
        assert!(ks_rows_that_fit(layout(12).unwrap(), 9, &big).is_none());
        assert!(ks_rows_that_fit(layout(15).unwrap(), 1, &big).is_none());
        // Work groups of at most 64 items: two rows of 32.
        let narrow = info(1 << 20, 64);
        assert_eq!(
            ks_rows_that_fit(layout(15).unwrap(), 9, &narrow).unwrap().1,
            2
        );
    }
}
