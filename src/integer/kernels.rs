//! Launchers of `opencl/integer.cl`, the element-wise kernels of BFV and BGV that CKKS has
//! none of: [`IntegerKernels`] holds them, built once per (OpenCL context, N). As
//! `crate::ckks::kernels`' launchers (whose checks they share), each validates its
//! arguments before enqueueing anything and its result equals the host reference of the
//! same name in [`super::host`] word for word.

use std::sync::Arc;

use crate::arith::Modulus;
use crate::ckks::kernels::{Checks, ModuliTable, RowKernels};
use crate::cl::KernelArg::{Buf, U32, U64};
use crate::cl::{kernel_sigs, sources, Context, KernelSig, Region};
use crate::device::Graph;
use crate::error::{Error, Result};
use crate::ntt::{COEFF_COUNT_POWER_MAX, COEFF_COUNT_POWER_MIN};

kernel_sigs! {
    INTEGER_APPLY_GALOIS = integer_apply_galois(dst: Buf, src: Buf, moduli: Buf, galois_elt: U32, K: U32);
    INTEGER_MOD_T_PREP = integer_mod_t_prep(dst: Buf, last: Buf, moduli: Buf, last_q_index: U32, K_out: U32, t: U64, t_r0: U64, t_r1: U64, inv_t: U64);
    INTEGER_DIVIDE_ROUND_COEFF = integer_divide_round_coeff(dst: Buf, src: Buf, inv: Buf, moduli: Buf, K_out: U32, bgv: U32, t: U64, t_r0: U64, t_r1: U64, inv_t: U64);
}

/// The kernels of `opencl/integer.cl`, in the order [`IntegerKernels`] holds them.
const INTEGER_SIGS: [&KernelSig; 3] = [
    &INTEGER_APPLY_GALOIS,
    &INTEGER_MOD_T_PREP,
    &INTEGER_DIVIDE_ROUND_COEFF,
];

/// Every kernel of `opencl/integer.cl` for one N, shared by threads (`&self` methods); each
/// method enqueues one kernel on the graph's queue through [`Graph::launch`] and returns.
/// Errors (`InvalidArgument`, nothing enqueued): a count of 0, an index out of range, a
/// moduli table too short, a buffer shorter than the words the kernel touches, aliasing the
/// kernel cannot take, or a graph on another OpenCL context.
pub struct IntegerKernels {
    log_n: u32,
    /// The kernels of [`INTEGER_SIGS`].
    kernels: RowKernels,
}

impl IntegerKernels {
    /// Builds `opencl/integer.cl` (after `arith.cl`) for N = 2^`log_n` on `ctx` (programs
    /// are cached by the context) and creates its kernels. Errors: `log_n` outside SEAL's
    /// range, or the build fails.
    pub fn new(ctx: &Arc<Context>, log_n: u32) -> Result<IntegerKernels> {
        if !(COEFF_COUNT_POWER_MIN..=COEFF_COUNT_POWER_MAX).contains(&log_n) {
            return Err(Error::invalid(format!(
                "integer kernels support N = 2^{COEFF_COUNT_POWER_MIN} .. \
                 2^{COEFF_COUNT_POWER_MAX}, not 2^{log_n}"
            )));
        }
        let program = ctx.program(
            &[sources::ARITH, sources::INTEGER],
            &format!("-D LOG_N={log_n}"),
        )?;
        Ok(IntegerKernels {
            log_n,
            kernels: RowKernels::new(ctx, &program, &INTEGER_SIGS, "integer.cl")?,
        })
    }

    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    fn checks(&self, sig: &'static KernelSig) -> Checks {
        Checks::new(sig.name, 1 << self.log_n)
    }

    /// SEAL's `GaloisTool::apply_galois` (coefficient form) on every residue of `polys`
    /// polynomials of `k` residues (prime j = residue % k, moduli[j]): coefficient i of a
    /// residue moves to index (i * galois_elt) mod N, negated mod q_j where
    /// (i * galois_elt) mod 2N >= N. On entry src canonical, galois_elt odd and < 2N; on
    /// exit dst canonical. dst must not overlap src.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn integer_apply_galois(
        &self,
        graph: &Graph,
        dst: &Region,
        src: &Region,
        galois_elt: u32,
        moduli: &ModuliTable,
        k: usize,
        polys: usize,
    ) -> Result<()> {
        let c = self.checks(&INTEGER_APPLY_GALOIS);
        c.nonzero(&[("K", k), ("polys", polys)])?;
        crate::ckks::check_galois_elt(galois_elt, 1 << self.log_n)?;
        c.covers(moduli, k)?;
        c.distinct(&[(("dst", dst), ("src", src))])?;
        let words = c.words(&[polys, k])?;
        let args = [
            c.buf("dst", dst, words)?,
            c.buf("src", src, words)?,
            ("moduli", Buf(moduli.buffer())),
            ("galois_elt", U32(galois_elt)),
            c.u32("K", k)?,
        ];
        // SAFETY: item (w, p), w < K N, p < polys, reads src[p K N + w] and writes
        // dst[p K N + (w / N) N + index] with index < N (masked): both below polys K N
        // (checked); prime w / N < K of the table (checked).
        unsafe {
            self.kernels
                .launch(graph, &INTEGER_APPLY_GALOIS, &args, c.words(&[k])?, polys)
        }
    }

    /// What BGV's division by the dropped prime q_last = moduli[last_q_index] subtracts
    /// (SEAL's `mod_t_and_divide_q_last_ntt_inplace` and the BGV branch of
    /// `switch_key_inplace`): with c the dropped residue and t = `plain`,
    /// dst[p][i] = (c + q_last * ((-c mod t) * inv_t mod t)) mod q_i for i < k_out.
    ///
    /// On entry `last` holds `polys` residues mod q_last in coefficient form, packed, lazy
    /// (< 2 q_last) or canonical; `inv_t` = q_last^-1 mod t. On exit dst (polys * k_out
    /// residues) canonical, coefficient form; `last` unchanged. dst must not overlap last.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn integer_mod_t_prep(
        &self,
        graph: &Graph,
        dst: &Region,
        last: &Region,
        last_q_index: usize,
        moduli: &ModuliTable,
        k_out: usize,
        plain: &Modulus,
        inv_t: u64,
        polys: usize,
    ) -> Result<()> {
        let c = self.checks(&INTEGER_MOD_T_PREP);
        c.nonzero(&[("K_out", k_out), ("polys", polys)])?;
        c.covers(moduli, k_out.max(last_q_index + 1))?;
        c.distinct(&[(("dst", dst), ("last", last))])?;
        if inv_t >= plain.value() {
            return Err(c.error(format!(
                "inv_t = {inv_t} is not reduced mod t = {}",
                plain.value()
            )));
        }
        let [r0, r1, _] = plain.const_ratio();
        let args = [
            c.buf("dst", dst, c.words(&[polys, k_out])?)?,
            c.buf("last", last, c.words(&[polys])?)?,
            ("moduli", Buf(moduli.buffer())),
            c.u32("last_q_index", last_q_index)?,
            c.u32("K_out", k_out)?,
            ("t", U64(plain.value())),
            ("t_r0", U64(r0)),
            ("t_r1", U64(r1)),
            ("inv_t", U64(inv_t)),
        ];
        // SAFETY: item (i N + k, p) writes dst[(p * K_out + i) * N + k] < polys K_out N,
        // reads last[p * N + k] < polys N, and primes i < K_out and last_q_index of the
        // table (all checked).
        unsafe {
            self.kernels
                .launch(graph, &INTEGER_MOD_T_PREP, &args, c.words(&[k_out])?, polys)
        }
    }
}

impl IntegerKernels {
    /// SEAL's modulus switch of `polys` ciphertext polynomials in coefficient form (K_out + 1
    /// residues each in src, K_out in dst) by their last prime q_last = moduli[k_out], in
    /// one launch: with c the dropped residue, dst[p][i] = (src[p][i] - sub_i) q_last^-1 mod
    /// q_i, sub_i the rounded c (BFV's divide_and_round_q_last_inplace, `bgv` None) or BGV's
    /// delta with (t, inv_t = q_last^-1 mod t) (SEAL 4.0's mod_t_and_divide_q_last_inplace).
    /// `inv` holds k_out Shoup pairs of q_last^-1 mod q_i (`LevelData::inv_last`). On entry
    /// src canonical; on exit dst canonical. dst must not overlap src.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn integer_divide_round_coeff(
        &self,
        graph: &Graph,
        dst: &Region,
        src: &Region,
        inv: &Region,
        moduli: &ModuliTable,
        k_out: usize,
        bgv: Option<(&Modulus, u64)>,
        polys: usize,
    ) -> Result<()> {
        let c = self.checks(&INTEGER_DIVIDE_ROUND_COEFF);
        c.nonzero(&[("K_out", k_out), ("polys", polys)])?;
        c.covers(moduli, k_out + 1)?;
        c.distinct(&[(("dst", dst), ("src", src))])?;
        let (t, t_r0, t_r1, inv_t) = match bgv {
            Some((plain, inv_t)) if inv_t >= plain.value() => {
                return Err(c.error(format!(
                    "inv_t = {inv_t} is not reduced mod t = {}",
                    plain.value()
                )))
            }
            Some((plain, inv_t)) => {
                let [r0, r1, _] = plain.const_ratio();
                (plain.value(), r0, r1, inv_t)
            }
            None => (0, 0, 0, 0),
        };
        let args = [
            c.buf("dst", dst, c.words(&[polys, k_out])?)?,
            c.buf("src", src, c.words(&[polys, k_out + 1])?)?,
            c.buf("inv", inv, 2 * k_out)?,
            ("moduli", Buf(moduli.buffer())),
            c.u32("K_out", k_out)?,
            ("bgv", U32(bgv.is_some().into())),
            ("t", U64(t)),
            ("t_r0", U64(t_r0)),
            ("t_r1", U64(t_r1)),
            ("inv_t", U64(inv_t)),
        ];
        // SAFETY: item (i N + k, p), i < K_out, p < polys, writes dst[(p K_out + i) N + k] <
        // polys K_out N, reads src[(p (K_out + 1) + i) N + k] and src[(p (K_out + 1) + K_out)
        // N + k] < polys (K_out + 1) N, inv[2 i + 1] < 2 K_out, and primes i and K_out of the
        // table (all checked).
        unsafe {
            self.kernels.launch(
                graph,
                &INTEGER_DIVIDE_ROUND_COEFF,
                &args,
                c.words(&[k_out])?,
                polys,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_the_source() {
        crate::cl::check_source(sources::INTEGER, &INTEGER_SIGS).unwrap();
    }
}
