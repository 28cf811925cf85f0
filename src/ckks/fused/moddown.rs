//! The mod-down's forward transforms with its element-wise steps fused into their loads
//! and stores (`ntt_fwd_block_moddown`, after `ntt_inv_fwd_strided`; `opencl/fused.cl`), for `ops::moddown`.

use super::{check_jobs, residues, FusedPasses, LOAD_MODDOWN, MORE_JOBS};
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{kernel_sigs, Event, KernelArg, Queue, Region};
use crate::error::{Error, Result};
use crate::ntt::{check_buffers, to_u32, NttPlan};

kernel_sigs! {
    pub(super) NTT_FWD_BLOCK_MODDOWN = ntt_fwd_block_moddown(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32, last: Buf,
        last_prime: U32, dst: Buf, dst_stride: U32, src: Buf, src_stride: U32, inv: Buf,
        acc: Buf, acc_polys: U32, jobs: U32, dst1: Buf, acc1: Buf, dst2: Buf, acc2: Buf,
        dst3: Buf, acc3: Buf,
    );
}

/// The kernel's parameter names for jobs 1 to 3: dst, acc.
const MORE_NAMES: [[&str; 2]; MORE_JOBS] = [["dst1", "acc1"], ["dst2", "acc2"], ["dst3", "acc3"]];

/// The division by the dropped prime q_last that ends a mod-down (SEAL's rescale,
/// `divide_and_round_q_last_ntt_inplace`, and the end of key switching's
/// `switch_key_inplace`), for p < polys and i < primes:
///     dst[p * dst_stride + i] = (src[p * src_stride + i] - NTT_i(round(last[p]))) * inv_i
///                                [+ acc[p * dst_stride + i] for p < the addend's polys],
/// everything mod q_i and canonical on exit, where last[p] is polynomial p's residue under
/// q_last in coefficient form, round is SEAL's rounding of it and its reduction mod q_i
/// (`host::ckks_moddown_prep`) and the difference and product those of
/// `host::ckks_divide_round_finish`. Strides count residues.
#[derive(Clone, Copy)]
pub struct DivideRound<'a> {
    pub dst: &'a Region,
    pub dst_stride: usize,
    pub src: &'a Region,
    pub src_stride: usize,
    /// q_last's index among the primes of the level's moduli table (the plan's).
    pub last_prime: usize,
    /// `primes` Shoup pairs (operand, quotient) of q_last^-1 mod q_i.
    pub inv: &'a Region,
    /// The canonical addend of the first polynomials, laid out as dst (it may be dst: key
    /// switching adds into the ciphertext), and how many polynomials get it; None: nothing
    /// added (rescale).
    pub acc: Option<(&'a Region, usize)>,
    pub polys: usize,
    pub primes: usize,
}

impl<'a> DivideRound<'a> {
    /// A modulus switch's division: `polys` polynomials of `k` residues in src (k >= 2)
    /// into dst's k - 1, dropping the last prime (index k - 1), with nothing added; `inv`
    /// the level's k - 1 pairs of q_{k-1}^-1 mod q_i (SEAL's rescale and mod switch).
    pub fn dropping_last(
        dst: &'a Region,
        src: &'a Region,
        k: usize,
        inv: &'a Region,
        polys: usize,
    ) -> DivideRound<'a> {
        DivideRound {
            dst,
            dst_stride: k - 1,
            src,
            src_stride: k,
            last_prime: k - 1,
            inv,
            acc: None,
            polys,
            primes: k - 1,
        }
    }
}

/// A [`DivideRound`] after the first pass of the dropped residues' inverse NTT, as
/// [`FusedPasses::forward_moddown`] runs it over the plan's first `primes` primes.
///
/// With `more` the launches divide 1 + more.len() times (at most `KS_JOBS_MAX`,
/// independent): job j (`divide`'s dst and acc for job 0, more[j - 1]'s after) from the
/// j-th `polys` residues of `last` and the j-th polys * src_stride residues of `src`,
/// through the j-th polys * primes of `scratch`, its words those of a launch of its own.
pub struct ModDown<'a> {
    /// `polys` residues under the plan's prime `last_prime` after the first pass of their
    /// inverse transform, < 2 q_last (`NttPlan::inverse_first_pass_from`, or key
    /// switching's `last`): with a one-pass layout, coefficients.
    pub last: &'a Region,
    /// The intermediate of a two-pass layout (polys * primes * N words); unused with one
    /// pass (any buffer then, e.g. `last`).
    pub scratch: &'a Region,
    pub divide: DivideRound<'a>,
    /// Jobs 1 on: where they divide into and what they add (to the first polynomials, as
    /// many as job 0's addend).
    pub more: &'a [DivideInto<'a>],
}

/// A mod-down's destination and addend in a launch of several ([`ModDown::more`]), laid
/// out as [`DivideRound::dst`] and [`DivideRound::acc`].
#[derive(Clone, Copy)]
pub struct DivideInto<'a> {
    pub dst: &'a Region,
    pub acc: &'a Region,
}

/// The errors of a mod-down `d` over `plan` adding to `acc_polys` polynomials, before any
/// buffer's length: no polynomial or prime, primes or the last prime outside the plan, more
/// polynomials added to than divided, a stride below the primes, dst overlapping src other
/// than as src with equal strides.
pub(super) fn check_moddown(
    what: &str,
    plan: &NttPlan,
    d: &DivideRound,
    acc_polys: usize,
) -> Result<()> {
    let l = plan.coeff_modulus_size();
    if d.primes == 0 || d.primes > l || d.last_prime >= l {
        return Err(Error::invalid(format!(
            "{what}: {} primes and last prime {} in a plan of {l}",
            d.primes, d.last_prime
        )));
    }
    if d.polys == 0 || acc_polys > d.polys {
        return Err(Error::invalid(format!(
            "{what}: {} polynomials, {acc_polys} of them added to",
            d.polys
        )));
    }
    for (name, stride) in [("dst_stride", d.dst_stride), ("src_stride", d.src_stride)] {
        if stride < d.primes {
            return Err(Error::invalid(format!(
                "{what}: {name} = {stride} is below {} primes",
                d.primes
            )));
        }
    }
    if d.dst.overlaps(d.src) && !(d.dst.same_start(d.src) && d.dst_stride == d.src_stride) {
        return Err(Error::invalid(format!(
            "{what}: dst overlaps src other than as src with equal strides"
        )));
    }
    Ok(())
}

impl FusedPasses {
    /// The rest of the last residues' inverse transform, then the mod-down's forward
    /// transforms with its element-wise steps fused into their first loads and last stores
    /// (see [`ModDown`]): one launch with a one-pass layout, two otherwise (the first
    /// finishes the inverse and runs the forward transforms' first passes). The unfused
    /// equivalent is the inverse's last pass, `ckks_moddown_prep`, the lazy forward
    /// transform and `ckks_divide_round_finish`.
    ///
    /// Errors: `polys` or `primes` is 0; `primes` or `last_prime` outside the plan; more
    /// polynomials added to than `polys`; a stride below `primes`; a buffer shorter than
    /// the words it is read or written at; dst is src with different strides, or dst,
    /// scratch, last or inv alias where one of them is written.
    pub fn forward_moddown(&self, queue: &Queue, md: &ModDown, events: bool) -> Result<Vec<Event>> {
        const WHAT: &str = "forward_moddown";
        let plan = self.plan();
        let d = &md.divide;
        // Without an addend the kernel adds to no polynomial (it still takes a buffer).
        let (acc, acc_polys) = d.acc.unwrap_or((d.dst, 0));
        check_moddown(WHAT, plan, d, acc_polys)?;
        plan.check_queue(queue)?;
        let jobs = 1 + md.more.len();
        check_jobs(WHAT, jobs)?;
        let residues = residues(WHAT, d.polys, d.primes)?;
        // With one pass the scratch is not touched.
        let two_pass = plan.launches_per_transform() == 2;
        let scratch_words = if two_pass {
            plan.extent(WHAT, jobs * residues, 1, 1)?
        } else {
            0
        };
        let polys = |stride| plan.extent(WHAT, d.polys, stride, d.primes);
        let (dst_words, acc_words) = (
            polys(d.dst_stride)?,
            plan.extent(WHAT, acc_polys, d.dst_stride, d.primes)?,
        );
        let mut buffers = vec![
            (
                "last",
                md.last,
                plan.extent(WHAT, jobs * d.polys, 1, 1)?,
                false,
            ),
            (
                "src",
                d.src,
                plan.extent(WHAT, jobs * d.polys, d.src_stride, d.primes)?,
                false,
            ),
            ("inv", d.inv, 2 * d.primes, false),
            ("scratch", md.scratch, scratch_words, two_pass),
        ];
        let first = DivideInto { dst: d.dst, acc };
        // Each work item reads its src and acc words before writing the same dst word.
        let mut may_alias = vec![("dst", "src"), ("dst", "acc")];
        buffers.extend([
            ("dst", d.dst, dst_words, true),
            ("acc", acc, acc_words, false),
        ]);
        for (job, [dst, acc]) in md.more.iter().zip(MORE_NAMES) {
            buffers.extend([
                (dst, job.dst, dst_words, true),
                (acc, job.acc, acc_words, false),
            ]);
            may_alias.push((dst, acc));
        }
        check_buffers(WHAT, &buffers, &may_alias)?;
        let last_prime = U32(d.last_prime as u32);
        let mut out = Vec::new();
        if let Some(strided) = &self.inv_fwd_strided {
            let (outs, chunks) = self.fan_out(strided, jobs * d.polys, d.primes);
            let args = [
                ("in", Buf(md.last)),
                ("kind", U32(LOAD_MODDOWN)),
                ("in_prime", last_prime),
                ("outs_per_group", U32(outs)),
                ("chunks", U32(chunks)),
                ("jobs", U32(jobs as u32)),
            ];
            let groups = jobs * d.polys * chunks as usize;
            // SAFETY: job j's group (r, chunk) reads residue j polys + r < jobs polys of
            // last (checked) and writes residues (j polys + r) primes + o, o < primes, of
            // scratch (checked to hold jobs polys primes N words); primes o and last_prime
            // below the plan's L (checked).
            unsafe {
                strided.launch(queue, md.scratch, d.primes, &args, groups, events, &mut out)
            }?;
        }
        let mut args: Vec<(&str, KernelArg)> = vec![
            ("last", Buf(md.last)),
            ("last_prime", last_prime),
            ("dst", Buf(d.dst)),
            ("dst_stride", U32(to_u32(d.dst_stride)?)),
            ("src", Buf(d.src)),
            ("src_stride", U32(to_u32(d.src_stride)?)),
            ("inv", Buf(d.inv)),
            ("acc", Buf(acc)),
            ("acc_polys", U32(acc_polys as u32)),
            ("jobs", U32(jobs as u32)),
        ];
        for (j, names) in MORE_NAMES.iter().enumerate() {
            // Jobs past the launch's are not read: job 0's stand in.
            let job = md.more.get(j).unwrap_or(&first);
            args.extend([(names[0], Buf(job.dst)), (names[1], Buf(job.acc))]);
        }
        // SAFETY: job j's residue r = p * primes + i (p < polys, i < primes) reads residue
        // j polys primes + r of scratch (two passes) or j polys + p of last (one pass),
        // residue (j polys + p) * src_stride + i of src, residue p * stride + i <= (polys -
        // 1) * stride + primes - 1 of its dst and acc (p < acc_polys), inv pair i < primes
        // (all checked).
        unsafe {
            self.moddown_block.launch(
                queue,
                md.scratch,
                d.primes,
                &args,
                jobs * residues,
                events,
                &mut out,
            )
        }?;
        Ok(out)
    }
}
