//! SEAL's CKKS operations on the device: the elementwise kernels (`opencl/ckks.cl`) with
//! their host references (`host`, the oracles, one function per kernel of the same name)
//! and launchers (`kernels`: [`kernels::CkksKernels`] per (context, N) and
//! [`kernels::ModuliTable`]); the device data of a parameter set (`context`); the fused
//! passes, NTT passes with an operation's element-wise steps in their loads and stores
//! (`fused`, kernels in `opencl/fused.cl` and `chain.cl`);
//! and SEAL's Evaluator operations as sequences of those kernels and NTTs (`ops`).

use crate::error::{Error, Result};

pub mod context;
pub mod encode;
pub mod fused;
pub mod host;
pub mod kernels;
pub mod ops;

/// One term of a sum into an accumulator (kernel `ckks_sum`, host reference
/// [`host::ckks_sum`]): a ciphertext's words, or their product with a plaintext's (K N
/// words broadcast to every polynomial: SEAL's multiply_plain_ntt), or, in coefficient
/// form, X^`shift` times its words in Z_q[X]/(X^N + 1) (SEAL's multiply_plain by that
/// monomial of coefficient 1; 0 < shift < N), added or, with `subtract`, subtracted. `T` is
/// the words: a device region or a host slice.
#[derive(Clone, Copy, Debug)]
pub struct SumTerm<T> {
    pub words: T,
    pub plain: Option<T>,
    pub subtract: bool,
    /// 0: unshifted; else no `plain`.
    pub shift: u32,
}

impl<T> SumTerm<T> {
    /// `words`, added or subtracted, unshifted.
    pub fn words(words: T, subtract: bool) -> SumTerm<T> {
        SumTerm {
            words,
            plain: None,
            subtract,
            shift: 0,
        }
    }
}

/// The bits of one term's shift in the kernels' shift words (four terms to a word).
const SHIFT_BITS: usize = 16;

/// Up to eight terms' shifts as the kernels take them, in two words (`shifts_lo`, terms 0-3,
/// and `shifts_hi`, terms 4-7): term i's in bits 16 (i mod 4) .. + 15 of its word.
/// Errors: more than eight, a shift of N (`n`) or more, or of more than 16 bits (N above
/// 2^16).
pub(crate) fn packed_shifts(shifts: impl IntoIterator<Item = u32>, n: usize) -> Result<[u64; 2]> {
    let per_word = 64 / SHIFT_BITS;
    shifts
        .into_iter()
        .enumerate()
        .try_fold([0u64; 2], |mut words, (i, shift)| {
            if i >= 2 * per_word || shift as usize >= n.min(1 << SHIFT_BITS) {
                return Err(Error::invalid(format!(
                    "a term shifted by X^{shift} (term {i}) at N = {n}: shifts are below N and \
                     2^{SHIFT_BITS}, at most eight"
                )));
            }
            words[i / per_word] |= u64::from(shift) << ((i % per_word) * SHIFT_BITS);
            Ok(words)
        })
}

/// A galois element SEAL's `apply_galois_inplace` takes at degree `n`: odd and below 2N;
/// otherwise SEAL's `invalid_argument`, word for word. The one check of a galois element:
/// the backend's call and every launcher that indexes by one make it.
pub fn check_galois_elt(galois_elt: u32, n: usize) -> Result<()> {
    if galois_elt.is_multiple_of(2) || galois_elt as usize >= 2 * n {
        return Err(Error::invalid("Galois element is not valid"));
    }
    Ok(())
}
