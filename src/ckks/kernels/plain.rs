//! Launchers of `opencl/plain.cl`: the plaintexts of the integer schemes (BFV, BGV), N or
//! fewer coefficients below the plain modulus t, into the RNS residues of a level. Each equals
//! the host reference of the same name in `crate::integer::host`.

use super::{CkksKernels, ModuliTable, PLAIN_LIFT, PLAIN_SCALE_ADD};
use crate::arith::Modulus;
use crate::cl::KernelArg::{Buf, U64};
use crate::cl::Region;
use crate::device::Graph;
use crate::error::{Error, Result};

/// A plaintext of the integer schemes and its plain modulus: the first `count` words of
/// `words` are its coefficients (the rest of the degree N is zero), each below `t`.
#[derive(Clone, Copy)]
pub struct IntegerPlain<'a> {
    pub words: &'a Region,
    pub count: usize,
    pub t: u64,
}

/// How [`CkksKernels::plain_lift`] takes a plaintext's coefficients: times `scalar` mod t
/// first (BGV's correction factor; 1 leaves them), and with `upper_half` a coefficient
/// m >= (t + 1) / 2 stands for m - t.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lift {
    pub scalar: u64,
    pub upper_half: bool,
}

impl IntegerPlain<'_> {
    /// (t + 1) / 2: a coefficient from here up stands for itself minus t.
    pub fn threshold(&self) -> u64 {
        self.t.div_ceil(2)
    }
}

impl CkksKernels {
    /// dst (K residues of one polynomial) = the plaintext, times `lift.scalar` mod t, lifted
    /// to Z_q: residue j of coefficient k is m_k mod q_j, or, with `lift.upper_half`,
    /// (m_k - t) mod q_j for m_k >= (t + 1) / 2 (SEAL's lift in `multiply_plain_normal` and
    /// `transform_to_ntt_inplace` of a plaintext). dst must not overlap the plaintext.
    /// Errors also for t or the scalar out of range.
    pub fn plain_lift(
        &self,
        graph: &Graph,
        dst: &Region,
        plain: IntegerPlain,
        lift: Lift,
        moduli: &ModuliTable,
        k: usize,
    ) -> Result<()> {
        let c = self.checks(&PLAIN_LIFT);
        c.nonzero(&[("K", k)])?;
        let t_ratio = Modulus::new(plain.t)?.const_ratio();
        if lift.scalar >= plain.t {
            return Err(Error::invalid(format!(
                "plain_lift: scalar {} is not below t = {}",
                lift.scalar, plain.t
            )));
        }
        c.covers(moduli, k)?;
        let width = c.words(&[k])?;
        let args = [
            c.buf("dst", dst, width)?,
            c.buf("plain", plain.words, plain.count.min(self.coeff_count()))?,
            c.u32("plain_count", plain.count.min(self.coeff_count()))?,
            ("moduli", Buf(moduli.buffer())),
            ("t", U64(plain.t)),
            ("t_r0", U64(t_ratio[0])),
            ("t_r1", U64(t_ratio[1])),
            ("scalar", U64(lift.scalar)),
            // No coefficient reaches u64::MAX: none is lifted.
            (
                "threshold",
                U64(if lift.upper_half {
                    plain.threshold()
                } else {
                    u64::MAX
                }),
            ),
        ];
        c.distinct(&[(("dst", dst), ("plain", plain.words))])?;
        // SAFETY: item w < K N writes dst[w] (checked to hold K N words), reads the
        // plaintext's word w mod N only below plain_count (checked to be held), and prime
        // w / N < K of the table (checked).
        unsafe { self.kernels.launch(graph, &PLAIN_LIFT, &args, width, 1) }
    }

    /// dst = src + round(q m / t) (or minus, with `subtract`) on the first polynomial's K
    /// residues (SEAL's `multiply_add_plain_with_scaling_variant` and
    /// `multiply_sub_plain_with_scaling_variant`): residue j of coefficient k gains
    /// m_k delta_j + floor((m_k (q mod t) + (t + 1) / 2) / t) mod q_j, with `delta` holding
    /// delta_j = floor(q / t) mod q_j for j < K. dst may be src; neither may overlap the
    /// plaintext or `delta`.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn plain_scale_add(
        &self,
        graph: &Graph,
        dst: &Region,
        src: &Region,
        plain: IntegerPlain,
        moduli: &ModuliTable,
        delta: &Region,
        q_mod_t: u64,
        k: usize,
        subtract: bool,
    ) -> Result<()> {
        let c = self.checks(&PLAIN_SCALE_ADD);
        c.nonzero(&[("K", k)])?;
        c.covers(moduli, k)?;
        let width = c.words(&[k])?;
        let count = plain.count.min(self.coeff_count());
        let args = [
            c.buf("dst", dst, width)?,
            c.buf("src", src, width)?,
            c.buf("plain", plain.words, count)?,
            c.u32("plain_count", count)?,
            ("moduli", Buf(moduli.buffer())),
            c.buf("delta", delta, k)?,
            ("t", U64(plain.t)),
            ("q_mod_t", U64(q_mod_t)),
            ("threshold", U64(plain.threshold())),
            c.u32("subtract", subtract as usize)?,
        ];
        c.same_or_distinct(&[(("dst", dst), ("src", src))])?;
        c.distinct(&[
            (("dst", dst), ("plain", plain.words)),
            (("dst", dst), ("delta", delta)),
        ])?;
        // SAFETY: item w < K N reads src[w] and writes dst[w] (both checked to hold K N
        // words), reads the plaintext's word w mod N only below plain_count (held) and
        // delta[w / N] with w / N < K (held), and prime w / N of the table (checked).
        unsafe {
            self.kernels
                .launch(graph, &PLAIN_SCALE_ADD, &args, width, 1)
        }
    }
}
