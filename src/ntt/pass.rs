//! One pass of a transform as a launchable kernel ([`Pass`]): the kernels of `opencl/ntt.cl`
//! (their signatures, declared once here) and those that callers build on a plan's tables
//! and layout from sources of their own after the transform core
//! (`NttPlan::build_program`, `NttPlan::pass`). Every such kernel starts with the shared
//! parameters (values, roots, params, coeff_modulus_size); a plan sets the tables when it
//! builds the kernel and each launch sets the rest by name.

use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{
    self, kernel_sigs, Event, Kernel, KernelArg, KernelSig, Queue, Region, SharedKernel,
    SpatialDims,
};
use crate::error::{Error, Result};

kernel_sigs! {
    pub(super) NTT_FWD_NAIVE = ntt_fwd_naive(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
        log_gap: U32,
    );
    pub(super) NTT_INV_NAIVE = ntt_inv_naive(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
        log_gap: U32,
    );
    pub(super) NTT_FWD_BLOCK = ntt_fwd_block(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
    );
    pub(super) NTT_INV_BLOCK = ntt_inv_block(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
    );
    pub(super) NTT_INV_BLOCK_GATHER = ntt_inv_block_gather(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
        src: Buf, src_stride: U32, src_first: U32,
    );
    pub(super) NTT_FWD_STRIDED = ntt_fwd_strided(
        values: Buf, root_powers: Buf, params: Buf, coeff_modulus_size: U32,
    );
    pub(crate) NTT_INV_STRIDED = ntt_inv_strided(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
    );
}

/// The kernels of `opencl/ntt.cl`.
#[cfg(test)]
const NTT_SIGS: [&KernelSig; 7] = [
    &NTT_FWD_NAIVE,
    &NTT_INV_NAIVE,
    &NTT_FWD_BLOCK,
    &NTT_INV_BLOCK,
    &NTT_INV_BLOCK_GATHER,
    &NTT_FWD_STRIDED,
    &NTT_INV_STRIDED,
];

/// The parameters a plan sets when it builds a pass: its tables.
pub(super) const TABLE_PARAMS: [&str; 3] = ["root_powers", "inv_root_powers", "params"];

/// One kernel launch of a transform: the kernel with its tables (and any argument fixed at
/// plan time) set, behind a lock held from setting the per-call arguments to the enqueue
/// (OpenCL captures arguments at enqueue), and its NDRange.
pub struct Pass {
    kernel: SharedKernel,
    sig: &'static KernelSig,
    /// The parameters set when the kernel was built.
    fixed: Vec<&'static str>,
    /// Work items per residue polynomial.
    items_per_residue: usize,
    /// The required work-group size (staged kernels), or None (naive).
    work_group: Option<usize>,
}

impl Pass {
    /// `sig`'s kernel with `fixed` set (names among its parameters), launched with
    /// `items_per_residue` work items per residue in work groups of `work_group`.
    pub(super) fn new(
        program: &cl::Program,
        sig: &'static KernelSig,
        fixed: &[(&'static str, KernelArg)],
        items_per_residue: usize,
        work_group: Option<usize>,
    ) -> Result<Pass> {
        Ok(Pass {
            kernel: cl::shared_kernel(sig.build(program, fixed)?),
            sig,
            fixed: fixed.iter().map(|&(name, _)| name).collect(),
            items_per_residue,
            work_group,
        })
    }

    /// The kernel (to query what its build holds, e.g. its largest work group).
    pub fn kernel(&self) -> parking_lot::MutexGuard<'_, Kernel> {
        self.kernel.lock()
    }

    /// Whether each launch sets parameter `name` (the kernel has it, not fixed).
    pub fn sets(&self, name: &str) -> bool {
        self.sig.params.iter().any(|&(p, _)| p == name) && !self.fixed.contains(&name)
    }

    /// Work groups per residue launched.
    pub fn groups_per_residue(&self) -> usize {
        self.items_per_residue / self.work_group.unwrap_or(1)
    }

    /// Sets the arguments every pass starts with, `values` and its `primes` residues per
    /// polynomial (`coeff_modulus_size`), then `args` (every other parameter the launch
    /// sets, in declaration order; see [`KernelSig::set`]), and enqueues the kernel on
    /// `queue` over `residues` residues; pushes its event when `want_event`.
    ///
    /// # Safety
    /// Every index the kernel computes from `residues`, `primes` and `args` lies inside the
    /// buffer it indexes (the tables hold the plan's L primes: `primes` or a prime index is
    /// at most L).
    #[allow(clippy::too_many_arguments)] // the shared arguments, the rest and the range
    pub unsafe fn launch(
        &self,
        queue: &Queue,
        values: &Region,
        primes: usize,
        args: &[(&str, KernelArg)],
        residues: usize,
        want_event: bool,
        events: &mut Vec<Event>,
    ) -> Result<()> {
        let shared = [
            ("values", Buf(values)),
            ("coeff_modulus_size", U32(primes as u32)),
        ];
        let mut event = want_event.then(Event::empty);
        // SAFETY: the kernel was built from `self.sig` with `self.fixed` set; the caller's
        // contract (every index in range).
        unsafe {
            cl::launch(
                queue,
                &self.kernel,
                self.sig,
                shared.iter().chain(args),
                &self.fixed,
                residues * self.items_per_residue,
                self.work_group.map(SpatialDims::from),
                event.as_mut(),
            )
        }?;
        events.extend(event);
        Ok(())
    }
}

/// `v` as a 32-bit kernel argument.
pub fn to_u32(v: usize) -> Result<u32> {
    u32::try_from(v)
        .map_err(|_| Error::invalid(format!("{v} does not fit a 32-bit kernel argument")))
}

/// Checks the regions of a launch, each (name, region, words touched, written): every
/// region holds its words, and no written region overlaps another of the list, but for the
/// pairs `may_alias` (written, read) whose kernel reads each word before writing it, which
/// may also start at the same word.
pub fn check_buffers(
    what: &str,
    buffers: &[(&str, &Region, usize, bool)],
    may_alias: &[(&str, &str)],
) -> Result<()> {
    for &(name, buf, need, _) in buffers {
        if buf.words() < need {
            return Err(Error::invalid(format!(
                "{what}: {name} holds {} words; {need} are touched",
                buf.words()
            )));
        }
    }
    for &(name, written, _, is_written) in buffers {
        for &(other, buf, _, _) in buffers {
            if is_written
                && name != other
                && written.overlaps(buf)
                && !(may_alias.contains(&(name, other)) && written.same_start(buf))
            {
                return Err(Error::invalid(format!(
                    "{what}: {name} must not overlap {other}"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_ntt_cl() {
        cl::check_source(cl::sources::NTT, &NTT_SIGS).unwrap();
    }
}
