//! `CKKSEncoder::encode`'s host half (SEAL's `encode_internal` for a vector of values) on
//! the device: the inverse FFT of the placed values, the rounding of each coefficient and
//! its reduction mod every prime of the level (`opencl/encode.cl`), with the host references
//! the kernels equal word for word. The NTT that ends an encoding is the level's forward
//! transform, as for any plaintext.
//!
//! SEAL places the values (and their conjugates) at `matrix_reps_index_map_` into N complex
//! numbers z, computes `transform_from_rev(z, log N, inv_root_powers_, scale / N)`, checks
//! the largest |Re c_k| against the level's modulus, and reduces round(Re c_k) mod each prime
//! (through 64-bit words where the coefficients fit them). The device takes z after the
//! placement, with SEAL's roots, and only where [`coefficients_fit`] proves every
//! coefficient below 2^62 and SEAL's check passing: there SEAL's result is this module's;
//! elsewhere the caller keeps SEAL's CPU path, its exceptions included.
//!
//! Doubles travel as their IEEE bits in the backend's 64-bit words: z's re and im at words
//! 2k and 2k + 1.

use std::sync::Arc;

use parking_lot::Mutex;

use super::kernels::{Checks, ModuliTable, Slot, MODULI_STRIDE};
use crate::arith::Modulus;
use crate::cl::KernelArg::U64;
use crate::cl::{kernel_sigs, sources, Context, Queue, Region};
use crate::device::Graph;
use crate::error::{Error, Result};
use crate::ntt::{COEFF_COUNT_POWER_MAX, COEFF_COUNT_POWER_MIN};

/// log2 of the most values one work group of `encode_fft_blocks` transforms in local memory:
/// 2048 complex numbers, 32 KiB (the least local memory a full-profile device has).
pub const BLOCK_LOG_MAX: u32 = 11;

/// Work items per work group of both kernels at most (fewer where the kernel's build allows
/// fewer): a block of 2048 values gives each of 1024 items one butterfly a stage.
const GROUP_MAX: usize = 1024;

/// The largest power of two at most `limit` and GROUP_MAX (at least 1).
fn group_size(limit: usize) -> usize {
    let cap = GROUP_MAX.min(limit).max(1);
    1 << (usize::BITS - 1 - cap.leading_zeros())
}

/// log2 B for N = 2^`log_n`: the stages of gap below B run in blocks of B values, the rest
/// (at least the last, scaled one) in `encode_fft_finish`.
pub fn block_log(log_n: u32) -> u32 {
    log_n.saturating_sub(1).min(BLOCK_LOG_MAX)
}

/// The largest magnitude below which the device rounds and reduces a coefficient (SEAL's
/// fast path takes any below 2^64; the margin keeps the bound's own rounding harmless).
const MAGNITUDE_MAX: f64 = (1u64 << 62) as f64;

/// Whether every coefficient of the encoding of `values` (z, 2N words of IEEE bits) with
/// scalar `fix` is provably below 2^62 and below 2^(bits - 2), `bits` at most the bit count
/// of the level's modulus: then SEAL's own check passes (its bit count of the largest
/// coefficient, plus one, is below the modulus's) and its 64-bit path runs.
///
/// |c_k| <= fix * sum_j |z_j| <= fix * sum_j (|re z_j| + |im z_j|) for the exact transform
/// (every root has modulus 1); SEAL's rounding errors add at most a relative log2(N) * 2^-51
/// per stage's root and sum (below 2^-30 for N <= 2^17), covered by the factor 1 + 2^-20,
/// and round() at most one half. Non-finite values fail the comparisons (NaN) or the bound
/// (infinity): SEAL's path decides those.
pub fn coefficients_fit(values: &[u64], fix: f64, bits: u32) -> bool {
    let sum: f64 = values.iter().map(|&w| f64::from_bits(w).abs()).sum();
    let bound = fix.abs() * sum * (1.0 + f64::powi(2.0, -20)) + 1.0;
    let limit = MAGNITUDE_MAX.min(f64::powi(2.0, bits as i32 - 2));
    bound < limit
}

/// A lower bound on the bit count of the product of `moduli` (SEAL's
/// `total_coeff_modulus_bit_count`): each prime of b bits is at least 2^(b - 1).
pub fn modulus_bits_at_least(moduli: &[Modulus]) -> u32 {
    moduli.iter().map(|q| q.bit_count() - 1).sum::<u32>() + 1
}

fn complex(words: &[u64], k: usize) -> (f64, f64) {
    (
        f64::from_bits(words[2 * k]),
        f64::from_bits(words[2 * k + 1]),
    )
}

fn set_complex(words: &mut [u64], k: usize, (re, im): (f64, f64)) {
    words[2 * k] = re.to_bits();
    words[2 * k + 1] = im.to_bits();
}

/// std::complex<double>'s product for finite operands, as GCC computes it (no fused
/// multiply-add: Rust does not contract).
fn complex_mul((ar, ai): (f64, f64), (br, bi): (f64, f64)) -> (f64, f64) {
    (ar * br - ai * bi, ar * bi + ai * br)
}

/// SEAL's `DWTHandler::transform_from_rev(values, log N, roots, &fix)` for
/// `Arithmetic<complex<double>, complex<double>, double>`: `values` and `roots` N complex
/// numbers each (2N words of IEEE bits), transformed in place, in SEAL's order.
pub fn fft_from_rev(values: &mut [u64], roots: &[u64], fix: f64) {
    let n = values.len() / 2;
    let mut root = 0;
    let mut gap = 1;
    let mut m = n >> 1;
    while m > 1 {
        let mut offset = 0;
        for _ in 0..m {
            root += 1;
            let r = complex(roots, root);
            for x in offset..offset + gap {
                let (u, v) = (complex(values, x), complex(values, x + gap));
                set_complex(values, x, (u.0 + v.0, u.1 + v.1));
                set_complex(values, x + gap, complex_mul((u.0 - v.0, u.1 - v.1), r));
            }
            offset += gap << 1;
        }
        gap <<= 1;
        m >>= 1;
    }
    root += 1;
    let r = complex(roots, root);
    let scaled_r = (r.0 * fix, r.1 * fix);
    for x in 0..gap {
        let (u, v) = (complex(values, x), complex(values, x + gap));
        set_complex(values, x, ((u.0 + v.0) * fix, (u.1 + v.1) * fix));
        set_complex(
            values,
            x + gap,
            complex_mul((u.0 - v.0, u.1 - v.1), scaled_r),
        );
    }
}

/// SEAL's rounding and reduction of the transformed `values` (encode_internal's path for
/// coefficients below 2^64): c = round(Re z_k) (half away from zero), dst[j N + k] = |c| mod
/// q_j, negated mod q_j where c is negative. `dst` holds `moduli.len()` residues of N words.
/// Needs every |c| < 2^64 ([`coefficients_fit`]).
pub fn round_to_residues(values: &[u64], moduli: &[Modulus], dst: &mut [u64]) {
    let n = values.len() / 2;
    for k in 0..n {
        let c = complex(values, k).0.round();
        let magnitude = c.abs() as u64;
        for (j, q) in moduli.iter().enumerate() {
            let r = magnitude % q.value();
            dst[j * n + k] = if c.is_sign_negative() && r != 0 {
                q.value() - r
            } else {
                r
            };
        }
    }
}

kernel_sigs! {
    ENCODE_FFT_BLOCKS = encode_fft_blocks(values: Buf, roots: Buf);
    ENCODE_FFT_FINISH = encode_fft_finish(values: Buf, roots: Buf, fix_bits: U64, dst: Buf, moduli: Buf, K: U32);
}

/// Roots on the host and their copy on the device.
struct UploadedRoots {
    words: Vec<u64>,
    region: Arc<Region>,
}

/// The kernels of `opencl/encode.cl` for one N, and SEAL's roots on the device. Built on a
/// CKKS context's first encoding (`CkksContext::encoder`), only on devices with doubles.
pub struct EncodeKernels {
    ctx: Arc<Context>,
    log_n: u32,
    blocks: Slot,
    finish: Slot,
    /// Work items per group each kernel's build allows, powers of two.
    groups: [usize; 2],
    /// The last roots uploaded: their words on the host and on the device. SEAL's encoders of
    /// one N all hold the same roots, so this is uploaded once.
    roots: Mutex<Option<Arc<UploadedRoots>>>,
}

impl EncodeKernels {
    /// Builds `opencl/encode.cl` for N = 2^`log_n` (`COEFF_COUNT_POWER_MIN` ..=
    /// `COEFF_COUNT_POWER_MAX`, the NTT's range).
    pub fn new(ctx: &Arc<Context>, log_n: u32) -> Result<EncodeKernels> {
        if !(COEFF_COUNT_POWER_MIN..=COEFF_COUNT_POWER_MAX).contains(&log_n) {
            return Err(Error::invalid(format!(
                "the encoding kernels take N = 2^{COEFF_COUNT_POWER_MIN} .. \
                 2^{COEFF_COUNT_POWER_MAX}, not 2^{log_n}"
            )));
        }
        let program = ctx.program(
            &[sources::ENCODE],
            &format!("-D LOG_N={log_n} -D LOG_B={}", block_log(log_n)),
        )?;
        let blocks = Slot::new(&program, &ENCODE_FFT_BLOCKS)?;
        let finish = Slot::new(&program, &ENCODE_FFT_FINISH)?;
        let groups = [
            group_size(ctx.kernel_work_group_size(&blocks.kernel.lock())?),
            group_size(ctx.kernel_work_group_size(&finish.kernel.lock())?),
        ];
        Ok(EncodeKernels {
            ctx: Arc::clone(ctx),
            log_n,
            blocks,
            finish,
            groups,
            roots: Mutex::new(None),
        })
    }

    /// `roots` (SEAL's inv_root_powers_, 2N words of IEEE bits) on the device: the cached
    /// upload when the words are the same, else a new one (blocking, on `queue`).
    /// The comparison runs outside the lock, so threads encoding at once do not queue on it.
    pub fn roots(&self, queue: &Queue, roots: &[u64]) -> Result<Arc<Region>> {
        let cached = self.roots.lock().clone();
        if let Some(cached) = cached.filter(|c| c.words.as_slice() == roots) {
            return Ok(cached.region.clone());
        }
        let region = Arc::new(self.ctx.upload(queue, roots)?);
        *self.roots.lock() = Some(Arc::new(UploadedRoots {
            words: roots.to_vec(),
            region: region.clone(),
        }));
        Ok(region)
    }

    /// dst (K residues of N words, coefficient form) = SEAL's encoding of `values` (z, 2N
    /// words, overwritten) before its NTT: [`fft_from_rev`] with `roots` and `fix`, then
    /// [`round_to_residues`] mod the first K primes of `moduli`. Two launches on `graph`.
    /// Needs every coefficient below 2^62 ([`coefficients_fit`]); dst not values.
    #[allow(clippy::too_many_arguments)] // mirrors the kernels' arguments
    pub fn encode(
        &self,
        graph: &Graph,
        values: &Region,
        roots: &Region,
        fix: f64,
        dst: &Region,
        moduli: &ModuliTable,
        k: usize,
    ) -> Result<()> {
        if !Arc::ptr_eq(graph.context(), &self.ctx) {
            return Err(Error::invalid(
                "encode: graph is on another OpenCL context than the encoding kernels",
            ));
        }
        let n = 1usize << self.log_n;
        let b = 1usize << block_log(self.log_n);
        let c = Checks::new(ENCODE_FFT_FINISH.name, n);
        c.nonzero(&[("K", k)])?;
        c.covers(moduli, k)?;
        c.distinct(&[(("dst", dst), ("values", values))])?;
        let values = c.buf("values", values, c.words(&[2])?)?;
        let roots = c.buf("roots", roots, c.words(&[2])?)?;
        let blocks_args = [values, roots];
        let finish_args = [
            values,
            roots,
            ("fix_bits", U64(fix.to_bits())),
            c.buf("dst", dst, c.words(&[k])?)?,
            c.buf("moduli", moduli.buffer(), MODULI_STRIDE * k)?,
            c.u32("K", k)?,
        ];
        if b > 1 {
            let group = self.groups[0].min(b / 2);
            // SAFETY: group g of `group` items touches values g B .. g B + B - 1 < N and
            // roots below N: inside the 2N words checked above.
            unsafe {
                self.blocks
                    .launch(graph, &blocks_args, (n / b) * group, group.into())
            }?;
        }
        // SAFETY: item t < B touches values t + s B < N, roots below N and dst words j N +
        // t + s B for j < K: inside the lengths checked above; moduli rows j < K.
        unsafe {
            self.finish
                .launch(graph, &finish_args, b, self.groups[1].min(b).into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_log_leaves_the_last_stage_to_finish() {
        assert_eq!(block_log(1), 0);
        assert_eq!(block_log(2), 1);
        assert_eq!(block_log(12), 11);
        assert_eq!(block_log(13), 11);
        assert_eq!(block_log(17), 11);
    }

    #[test]
    fn group_sizes_are_powers_of_two_within_the_limits() {
        assert_eq!(group_size(0), 1);
        assert_eq!(group_size(1), 1);
        assert_eq!(group_size(768), 512);
        assert_eq!(group_size(1024), 1024);
        assert_eq!(group_size(4096), GROUP_MAX);
    }

    #[test]
    fn bound_refuses_large_and_non_finite_values() {
        let words = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert!(coefficients_fit(
            &words(&[1.0, -1.0, 0.5, 0.0]),
            2f64.powi(40),
            100
        ));
        assert!(!coefficients_fit(&words(&[1.0, 0.0]), 2f64.powi(62), 100));
        assert!(!coefficients_fit(&words(&[1.0, 0.0]), 2f64.powi(40), 42));
        assert!(!coefficients_fit(&words(&[f64::NAN, 0.0]), 1.0, 100));
        assert!(!coefficients_fit(&words(&[f64::INFINITY, 0.0]), 1.0, 100));
    }
}
