//! A rotation's first launch: SEAL's `apply_galois_ntt` fused with the first pass of key
//! switching's inverse transform (`ntt_inv_block_galois`, `opencl/fused.cl`), for
//! `ops::keyswitch` (apply_galois), one rotation or several in one launch.

use super::{check_jobs, FusedPasses, MORE_JOBS};
use crate::ckks::check_galois_elt;
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{kernel_sigs, Event, KernelArg, Queue, Region};
use crate::error::Result;
use crate::ntt::{check_buffers, to_u32};

kernel_sigs! {
    pub(super) NTT_INV_BLOCK_GALOIS = ntt_inv_block_galois(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
        src: Buf, plain: Buf, galois_elt: U32, permuted: Buf, transformed_first: U32,
        jobs: U32, plain_jobs: U32, src1: Buf, plain1: Buf, galois_elt1: U32, src2: Buf,
        plain2: Buf, galois_elt2: U32, src3: Buf, plain3: Buf, galois_elt3: U32,
    );
}

/// One rotation's permutation in [`FusedPasses::inverse_first_pass_galois`]: SEAL's
/// `apply_galois_ntt` of `src` (with `plain`, of `src` times `plain`) by `galois_elt`.
#[derive(Clone, Copy)]
pub struct Permutation<'a> {
    pub src: &'a Region,
    pub plain: Option<&'a Region>,
    pub galois_elt: u32,
}

/// The kernel's parameter names for jobs 1 to 3: src, plain, galois_elt.
const MORE_NAMES: [[&str; 3]; MORE_JOBS] = [
    ["src1", "plain1", "galois_elt1"],
    ["src2", "plain2", "galois_elt2"],
    ["src3", "plain3", "galois_elt3"],
];

impl FusedPasses {
    /// For each of `jobs` (1 to `KS_JOBS_MAX`, independent), SEAL's `apply_galois_ntt` with
    /// its `galois_elt` on `count` polynomials of `primes` residues (the first count *
    /// primes residues of its `src`, in NTT form) into the j-th count * primes residues of
    /// `permuted`, fused with the first pass of the last polynomial's inverse transform
    /// into the j-th `primes` residues of `values` (as `NttPlan::inverse_first_pass_from`
    /// leaves them): rotations' permutations and their key switching's first pass in one
    /// launch, in place of `ckks_galois_ntt` followed by `inverse_first_pass_from`, each
    /// job's words those of a launch of its own. With its `plain` (`primes` residues in NTT
    /// form) a job permutes `src` times `plain`: SEAL's multiply_plain_ntt and the rotation
    /// of its product, in the same launch. The sources are unchanged.
    ///
    /// Errors: no job or too many; `count` or `primes` 0 or too large; a `galois_elt` even
    /// or not below 2N; a buffer shorter than the words it is read or written at; a source
    /// or plaintext overlapping `values` or `permuted`, or the two overlapping.
    #[allow(clippy::too_many_arguments)]
    pub fn inverse_first_pass_galois(
        &self,
        queue: &Queue,
        values: &Region,
        jobs: &[Permutation],
        permuted: &Region,
        count: usize,
        primes: usize,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "inverse_first_pass_galois";
        check_jobs(WHAT, jobs.len())?;
        let plan = self.plan();
        let mut residues = 0;
        for job in jobs {
            check_galois_elt(job.galois_elt, plan.coeff_count())?;
            // The launch covers every polynomial's residues; values gets the last one's.
            residues = plan.validate(queue, job.src, count, primes)?;
        }
        let words = plan.extent(WHAT, count, primes, 0)?;
        let one = plan.extent(WHAT, 1, primes, 0)?;
        let mut buffers = vec![
            ("values", values, jobs.len() * one, true),
            ("permuted", permuted, jobs.len() * words, true),
        ];
        let names = std::iter::once(["src", "plain", "galois_elt"]).chain(MORE_NAMES);
        for (job, [src, plain, _]) in jobs.iter().zip(names) {
            buffers.push((src, job.src, words, false));
            buffers.extend(job.plain.map(|p| (plain, p, one, false)));
        }
        check_buffers(WHAT, &buffers, &[])?;
        let (first, more) = jobs.split_first().expect("checked: at least one job");
        let plain_jobs = jobs.iter().enumerate().fold(0, |bits, (j, job)| {
            bits | u32::from(job.plain.is_some()) << j
        });
        let mut args: Vec<(&str, KernelArg)> = vec![
            ("reduce", U32(1)),
            ("src", Buf(first.src)),
            // Not read without the plaintext.
            ("plain", Buf(first.plain.unwrap_or(first.src))),
            ("galois_elt", U32(first.galois_elt)),
            ("permuted", Buf(permuted)),
            ("transformed_first", U32(to_u32(residues - primes)?)),
            ("jobs", U32(jobs.len() as u32)),
            ("plain_jobs", U32(plain_jobs)),
        ];
        for (j, names) in MORE_NAMES.iter().enumerate() {
            // Jobs past the launch's are not read: job 0's stand in.
            let job = more.get(j).unwrap_or(first);
            args.extend([
                (names[0], Buf(job.src)),
                (names[1], Buf(job.plain.unwrap_or(job.src))),
                (names[2], U32(job.galois_elt)),
            ]);
        }
        let mut out = Vec::new();
        // SAFETY: job j's work groups of residue r < residues read words below N of residue
        // r of its src (and of residue r mod primes of its plain, checked to hold primes * N
        // words) and write the same words of residue j * residues + r of permuted (checked
        // to hold jobs * residues * N words); those of r >= residues - primes also write
        // residue j * primes + r - (residues - primes) of values (checked to hold jobs *
        // primes * N words), words below N; no source overlaps values or permuted, nor they
        // each other (checked).
        unsafe {
            self.inv_galois.launch(
                queue,
                values,
                primes,
                &args,
                jobs.len() * residues,
                events,
                &mut out,
            )
        }?;
        Ok(out)
    }
}
