//! A rotation's first launch: SEAL's `apply_galois_ntt` fused with the first pass of key
//! switching's inverse transform (`ntt_inv_block_galois`, `opencl/fused.cl`), for
//! `ops::keyswitch` (apply_galois).

use super::FusedPasses;
use crate::ckks::check_galois_elt;
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{kernel_sigs, Event, Queue, Region};
use crate::error::Result;
use crate::ntt::{check_buffers, to_u32};

kernel_sigs! {
    pub(super) NTT_INV_BLOCK_GALOIS = ntt_inv_block_galois(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
        src: Buf, plain: Buf, times_plain: U32, galois_elt: U32, permuted: Buf,
        transformed_first: U32,
    );
}

impl FusedPasses {
    /// SEAL's `apply_galois_ntt` with `galois_elt` on `count` polynomials of `primes`
    /// residues (the first count * primes residues of `src`, in NTT form) into `permuted`,
    /// fused with the first pass of the last polynomial's inverse transform into `values`
    /// (its `primes` residues, as `NttPlan::inverse_first_pass_from` leaves them): a
    /// rotation's permutation and its key switching's first pass in one launch, in place
    /// of `ckks_galois_ntt` followed by `inverse_first_pass_from`. With `plain` (`primes`
    /// residues in NTT form) `src` times `plain` is permuted: SEAL's multiply_plain_ntt
    /// and the rotation of its product, in the same launch. `src` is unchanged.
    ///
    /// Errors: `count` or `primes` 0 or too large; `galois_elt` even or not below 2N; a
    /// buffer shorter than the words it is read or written at; `src`, `values` and
    /// `permuted` not three distinct buffers, or `plain` overlapping values or permuted.
    #[allow(clippy::too_many_arguments)]
    pub fn inverse_first_pass_galois(
        &self,
        queue: &Queue,
        values: &Region,
        src: &Region,
        plain: Option<&Region>,
        permuted: &Region,
        galois_elt: u32,
        count: usize,
        primes: usize,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "inverse_first_pass_galois";
        let plan = self.plan();
        check_galois_elt(galois_elt, plan.coeff_count())?;
        // The launch covers every polynomial's residues; values gets the last one's.
        let residues = plan.validate(queue, src, count, primes)?;
        let words = plan.extent(WHAT, count, primes, 0)?;
        let one = plan.extent(WHAT, 1, primes, 0)?;
        let mut buffers = vec![
            ("values", values, one, true),
            ("src", src, words, false),
            ("permuted", permuted, words, true),
        ];
        buffers.extend(plain.map(|p| ("plain", p, one, false)));
        check_buffers(WHAT, &buffers, &[])?;
        let args = [
            ("reduce", U32(1)),
            ("src", Buf(src)),
            // Not read without the plaintext.
            ("plain", Buf(plain.unwrap_or(src))),
            ("times_plain", U32(plain.is_some().into())),
            ("galois_elt", U32(galois_elt)),
            ("permuted", Buf(permuted)),
            ("transformed_first", U32(to_u32(residues - primes)?)),
        ];
        let mut out = Vec::new();
        // SAFETY: work groups of residue r < residues read words below N of residue r of
        // src (and of residue r mod primes of plain, checked to hold primes * N words) and write the same words of residue r of permuted (both checked to hold
        // residues * N words); those of r >= residues - primes also write residue
        // r - (residues - primes) < primes of values (checked to hold primes * N words),
        // words below N; the three buffers are distinct (checked).
        unsafe {
            self.inv_galois
                .launch(queue, values, primes, &args, residues, events, &mut out)
        }?;
        Ok(out)
    }
}
