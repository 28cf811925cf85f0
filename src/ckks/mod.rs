//! SEAL's CKKS operations on the device: the elementwise kernels (`opencl/ckks.cl`) with
//! their host references (`host`, the oracles, one function per kernel of the same name)
//! and launchers (`kernels`: [`kernels::CkksKernels`] per (context, N) and
//! [`kernels::ModuliTable`]); the device data of a parameter set (`context`); the fused
//! passes, NTT passes with an operation's element-wise steps in their loads and stores
//! (`fused`, kernels in `opencl/fused.cl` and `chain.cl`);
//! and SEAL's Evaluator operations as sequences of those kernels and NTTs (`ops`).

use crate::error::{Error, Result};

pub mod context;
pub mod fused;
pub mod host;
pub mod kernels;
pub mod ops;

/// One term of a sum into an accumulator (kernel `ckks_sum`, host reference
/// [`host::ckks_sum`]): a ciphertext's words, or their product with a plaintext's (K N
/// words broadcast to every polynomial: SEAL's multiply_plain_ntt), added or, with
/// `subtract`, subtracted. `T` is the words: a device region or a host slice.
#[derive(Clone, Copy, Debug)]
pub struct SumTerm<T> {
    pub words: T,
    pub plain: Option<T>,
    pub subtract: bool,
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
