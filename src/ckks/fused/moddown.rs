//! The mod-down's forward transforms with its element-wise steps fused into their loads
//! and stores (`opencl/moddown.cl`, after `opencl/inv_fwd.cl`), for `ops::moddown`.

use super::{residues, FusedPasses, LOAD_MODDOWN};
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{kernel_sigs, same_buffer, Buffer, Event, Queue};
use crate::error::{Error, Result};
use crate::ntt::{check_buffers, shared_args, to_u32};

kernel_sigs! {
    pub(super) NTT_FWD_BLOCK_MODDOWN = ntt_fwd_block_moddown(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32, last: Buf,
        last_prime: U32, dst: Buf, dst_stride: U32, src: Buf, src_stride: U32, inv: Buf,
        acc: Buf, acc_polys: U32,
    );
}

/// The mod-down of SEAL's rescale (`divide_and_round_q_last_ntt_inplace`) and key
/// switching (the end of `switch_key_inplace`) after the first pass of the last residue's
/// inverse NTT, as [`FusedPasses::forward_moddown`] runs it over `count` polynomials and
/// the plan's first `primes` primes: for p < count and i < primes,
///     dst[p * dst_stride + i] = (src[p * src_stride + i] - NTT_i(round(last[p]))) * inv_i
///                                [+ acc[p * dst_stride + i] for p < acc_polys],
/// everything mod q_i, where round is SEAL's rounding of the last residue and its
/// reduction mod q_i (`host::ckks_moddown_prep`) and the difference and product those of
/// `host::ckks_divide_round_finish`. Strides count residues.
pub struct ModDown<'a> {
    /// `count` residues under the plan's prime `last_prime` after the first pass of their
    /// inverse transform, < 2 q_last (`NttPlan::inverse_first_pass_from`, or key
    /// switching's `last`): with a one-pass layout, coefficients.
    pub last: &'a Buffer<u64>,
    pub last_prime: usize,
    /// The intermediate of a two-pass layout (count * primes * N words); unused with one
    /// pass (any buffer then, e.g. `last`).
    pub scratch: &'a Buffer<u64>,
    /// Canonical on exit.
    pub dst: &'a Buffer<u64>,
    pub dst_stride: usize,
    pub src: &'a Buffer<u64>,
    pub src_stride: usize,
    /// `primes` Shoup pairs (operand, quotient) of q_last^-1 mod q_i.
    pub inv: &'a Buffer<u64>,
    /// Canonical words added to the first `acc_polys` polynomials, laid out as dst (acc
    /// may be dst: key switching adds into the ciphertext); unused with `acc_polys` = 0.
    pub acc: &'a Buffer<u64>,
    pub acc_polys: usize,
    pub count: usize,
    pub primes: usize,
}

impl FusedPasses {
    /// The rest of the last residues' inverse transform, then the mod-down's forward
    /// transforms with its element-wise steps fused into their first loads and last stores
    /// (see [`ModDown`]): one launch with a one-pass layout, two otherwise (the first
    /// finishes the inverse and runs the forward transforms' first passes). The unfused
    /// equivalent is the inverse's last pass, `ckks_moddown_prep`, the lazy forward
    /// transform and `ckks_divide_round_finish`.
    ///
    /// Errors: `count` or `primes` is 0; `primes` or `last_prime` outside the plan; a
    /// stride below `primes`; a buffer shorter than the words it is read or written at;
    /// dst is src with different strides, or dst, scratch, last or inv alias where one of
    /// them is written.
    pub fn forward_moddown(&self, queue: &Queue, md: &ModDown, events: bool) -> Result<Vec<Event>> {
        const WHAT: &str = "forward_moddown";
        let plan = self.plan();
        let l = plan.coeff_modulus_size();
        if md.primes == 0 || md.primes > l || md.last_prime >= l {
            return Err(Error::invalid(format!(
                "{WHAT}: {} primes and last prime {} in a plan of {l}",
                md.primes, md.last_prime
            )));
        }
        if md.count == 0 || md.acc_polys > md.count {
            return Err(Error::invalid(format!(
                "{WHAT}: {} polynomials, {} of them added to",
                md.count, md.acc_polys
            )));
        }
        plan.check_queue(queue)?;
        for (what, stride) in [("dst_stride", md.dst_stride), ("src_stride", md.src_stride)] {
            if stride < md.primes {
                return Err(Error::invalid(format!(
                    "{WHAT}: {what} = {stride} is below {} primes",
                    md.primes
                )));
            }
        }
        if same_buffer(md.dst, md.src) && md.dst_stride != md.src_stride {
            return Err(Error::invalid(format!(
                "{WHAT}: dst is src with different strides"
            )));
        }
        let residues = residues(WHAT, md.count, md.primes)?;
        // With one pass the scratch is not touched.
        let two_pass = plan.launches_per_transform() == 2;
        let scratch_words = if two_pass {
            plan.extent(WHAT, residues, 1, 1)?
        } else {
            0
        };
        let polys = |stride| plan.extent(WHAT, md.count, stride, md.primes);
        check_buffers(
            WHAT,
            &[
                ("last", md.last, plan.extent(WHAT, md.count, 1, 1)?, false),
                ("dst", md.dst, polys(md.dst_stride)?, true),
                ("src", md.src, polys(md.src_stride)?, false),
                ("inv", md.inv, 2 * md.primes, false),
                ("scratch", md.scratch, scratch_words, two_pass),
                (
                    "acc",
                    md.acc,
                    plan.extent(WHAT, md.acc_polys, md.dst_stride, md.primes)?,
                    false,
                ),
            ],
            // Each work item reads its src and acc words before writing the same dst word.
            &[("dst", "src"), ("dst", "acc")],
        )?;
        let [values, primes] = shared_args(md.scratch, md.primes);
        let last_prime = U32(md.last_prime as u32);
        let mut out = Vec::new();
        if let Some(strided) = &self.inv_fwd_strided {
            let (outs, chunks) = self.fan_out(strided, md.count, md.primes);
            let args = [
                values,
                primes,
                ("in", Buf(md.last)),
                ("kind", U32(LOAD_MODDOWN)),
                ("in_prime", last_prime),
                ("outs_per_group", U32(outs)),
                ("chunks", U32(chunks)),
            ];
            let groups = md.count * chunks as usize;
            // SAFETY: group (r, chunk) reads residue r < count of last (checked) and
            // writes residues r * primes + o, o < primes, of scratch (checked to hold
            // count * primes * N words); primes o and last_prime below the plan's L
            // (checked).
            unsafe { strided.launch(queue, &args, groups, events, &mut out) }?;
        }
        let args = [
            values,
            primes,
            ("last", Buf(md.last)),
            ("last_prime", last_prime),
            ("dst", Buf(md.dst)),
            ("dst_stride", U32(to_u32(md.dst_stride)?)),
            ("src", Buf(md.src)),
            ("src_stride", U32(to_u32(md.src_stride)?)),
            ("inv", Buf(md.inv)),
            ("acc", Buf(md.acc)),
            ("acc_polys", U32(md.acc_polys as u32)),
        ];
        // SAFETY: residue r = p * primes + i (p < count, i < primes) reads residue r of
        // scratch (two passes) or p of last (one pass), residue p * stride + i <=
        // (count - 1) * stride + primes - 1 of src and dst, inv pair i < primes (all
        // checked).
        unsafe {
            self.moddown_block
                .launch(queue, &args, residues, events, &mut out)
        }?;
        Ok(out)
    }
}
