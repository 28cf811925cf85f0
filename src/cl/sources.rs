//! The OpenCL C sources, embedded at compile time (never read from disk at run time).
//! A program is built from a list of these, concatenated in order: `ARITH` first, since
//! every other file uses its helpers.

/// Modular arithmetic helpers shared by every kernel.
pub const ARITH: &str = include_str!("../../opencl/arith.cl");

/// One test kernel per helper of `ARITH`, for the bit-exact tests against `crate::arith`.
pub const ARITH_TEST: &str = include_str!("../../opencl/arith_test.cl");

/// The negacyclic NTT kernels (naive radix-2 and staged radix-4/8/16), built after `ARITH`:
/// the transform core, which the fused passes below are built after.
pub const NTT: &str = include_str!("../../opencl/ntt.cl");

/// The elementwise CKKS kernels (add/sub/negate, multiply_plain, tensor, residue copies,
/// galois permutation, rescale and key-switching steps), built after `ARITH` with
/// `-D LOG_N=..`.
pub const CKKS: &str = include_str!("../../opencl/ckks.cl");

/// The inverse's strided pass fused with forward strided passes under other primes, built
/// after `NTT` for the fused passes of key switching and the mod-down (`crate::ckks::fused`).
pub const INV_FWD: &str = include_str!("../../opencl/inv_fwd.cl");

/// The mod-down's forward block pass, built after `NTT` and `INV_FWD`.
pub const MODDOWN: &str = include_str!("../../opencl/moddown.cl");

/// Key switching's forward block pass with its decomposition and inner product, built
/// after `NTT` and `INV_FWD` with `-D KS_ROWS=.. -D KS_LOCAL_ROOTS=..`.
pub const KEYSWITCH: &str = include_str!("../../opencl/keyswitch.cl");

/// The galois permutation fused with an inverse transform's first pass, built after `NTT`.
pub const GALOIS: &str = include_str!("../../opencl/galois.cl");

/// A key switch's five fused launches chained into one, built after `NTT`, `INV_FWD`,
/// `MODDOWN`, `GALOIS` and `KEYSWITCH` (with `-D KS_ROWS=1`), and `-D DEVICE_FENCE_PTX`
/// on NVIDIA.
pub const CHAIN: &str = include_str!("../../opencl/chain.cl");

/// The per-coefficient steps of BFV's multiplication by BEHZ base extensions (the
/// extension of each input to base q U Bsk, and the scaling by t / q back to q), built
/// after `ARITH` with `-D LOG_N=.. -D BEHZ_K=.. -D BEHZ_NB=..` and the constants' offsets
/// (`crate::integer::multiply`).
pub const BEHZ: &str = include_str!("../../opencl/behz.cl");

/// BFV multiplication's tensor product fused with the inverse transform's block pass, built
/// after `NTT` on the plan over q U Bsk (`crate::integer::multiply`).
pub const BEHZ_TENSOR: &str = include_str!("../../opencl/behz_tensor.cl");
