//! A multiply and its relinearization's first launch on the fused passes: SEAL's
//! ckks_multiply (the tensor product) beside the first pass of the inverse of the product's
//! third polynomial, the relinearization's target (`ntt_inv_block_product`,
//! `opencl/fused.cl`), for `ops::keyswitch` (multiply_relinearize), one product or several
//! in one launch.

use super::{check_jobs, FusedPasses, TensorJob, MORE_JOBS};
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{kernel_sigs, Event, KernelArg, Queue, Region};
use crate::error::Result;
use crate::ntt::check_buffers;

kernel_sigs! {
    pub(super) NTT_INV_BLOCK_PRODUCT = ntt_inv_block_product(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, a: Buf,
        b: Buf, dst: Buf, jobs: U32, a1: Buf, b1: Buf, dst1: Buf, a2: Buf, b2: Buf, dst2: Buf,
        a3: Buf, b3: Buf, dst3: Buf,
    );
}

/// The kernel's parameter names for jobs 1 to 3: a, b, dst.
const MORE_NAMES: [[&str; 3]; MORE_JOBS] = [
    ["a1", "b1", "dst1"],
    ["a2", "b2", "dst2"],
    ["a3", "b3", "dst3"],
];

impl FusedPasses {
    /// For each of `jobs` (1 to `KS_JOBS_MAX`, independent), SEAL's ckks_multiply of `a` and
    /// `b` (two polynomials of `primes` residues each, in NTT form; either may be the
    /// other) into `dst`'s three polynomials, and beside it, from `a`'s and `b`'s second
    /// polynomials, the first pass of the inverse of the product's third polynomial into
    /// the job's `primes` residues of `values` (the j-th, as
    /// `NttPlan::inverse_first_pass_from` leaves them): what key switching's first launch
    /// leaves for the relinearization of the product, in one launch for every job.
    ///
    /// Errors: no job or too many; `primes` 0 or beyond the plan's; a buffer shorter than
    /// the words it is read or written at; a job's `dst` overlapping `values` or any job's
    /// buffer but its own, or its own factors.
    pub fn inverse_first_pass_products(
        &self,
        queue: &Queue,
        values: &Region,
        jobs: &[TensorJob],
        primes: usize,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "inverse_first_pass_products";
        check_jobs(WHAT, jobs.len())?;
        let plan = self.plan();
        let (first, more) = jobs.split_first().expect("checked: at least one job");
        let pair = plan.extent(WHAT, 2, primes, 0)?;
        let mut buffers = vec![(
            "values",
            values,
            jobs.len() * plan.extent(WHAT, 1, primes, 0)?,
            true,
        )];
        let names = std::iter::once(["a", "b", "dst"]).chain(MORE_NAMES);
        for (job, [a, b, dst]) in jobs.iter().zip(names) {
            // Validates primes against the plan, and the factors' lengths.
            plan.validate(queue, job.a, 2, primes)?;
            buffers.extend([
                (a, job.a, pair, false),
                (b, job.b, pair, false),
                (dst, job.dst, plan.extent(WHAT, 3, primes, 0)?, true),
            ]);
        }
        check_buffers(WHAT, &buffers, &[])?;
        let mut args: Vec<(&str, KernelArg)> = vec![
            ("a", Buf(first.a)),
            ("b", Buf(first.b)),
            ("dst", Buf(first.dst)),
            ("jobs", U32(jobs.len() as u32)),
        ];
        for (j, names) in MORE_NAMES.iter().enumerate() {
            // Jobs past the launch's are not read: job 0's stand in.
            let job = more.get(j).unwrap_or(first);
            args.extend([
                (names[0], Buf(job.a)),
                (names[1], Buf(job.b)),
                (names[2], Buf(job.dst)),
            ]);
        }
        let mut out = Vec::new();
        // SAFETY: job j's tensor groups read words below 2 primes N of its a and b and
        // write words below 3 primes N of its dst; its inverse groups read words from primes
        // N to 2 primes N of its a and b and write residues j primes .. j primes + primes - 1
        // of values, words below N each (all checked to hold them); the written buffers
        // overlap nothing else (checked).
        unsafe {
            self.inv_product.launch(
                queue,
                values,
                primes,
                &args,
                jobs.len() * 2 * primes,
                events,
                &mut out,
            )
        }?;
        Ok(out)
    }
}
