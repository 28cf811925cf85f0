//! The OpenCL C sources, embedded at compile time (never read from disk at run time).
//! A program is built from a list of these, concatenated in order: `ARITH` first, since
//! every other file uses its helpers.

/// Modular arithmetic helpers shared by every kernel.
pub const ARITH: &str = include_str!("../../opencl/arith.cl");

/// One test kernel per helper of `ARITH`, for the bit-exact tests against `crate::arith`.
pub const ARITH_TEST: &str = include_str!("../../opencl/arith_test.cl");

/// The negacyclic NTT kernels (naive radix-2 and staged radix-4/8/16), built after `ARITH`:
/// the transform alone, whose staged steps the fused passes (`FUSED`) load and store for.
pub const NTT: &str = include_str!("../../opencl/ntt.cl");

/// The elementwise CKKS kernels (add/sub/negate, multiply_plain, tensor, residue copies,
/// galois permutation, rescale and key-switching steps), built after `ARITH` with
/// `-D LOG_N=..`.
pub const CKKS: &str = include_str!("../../opencl/ckks.cl");

/// CKKSEncoder::encode's FFT, rounding and reduction in doubles (`crate::ckks::encode`),
/// built alone with `-D LOG_N=.. -D LOG_B=..` on devices with `cl_khr_fp64`.
pub const ENCODE: &str = include_str!("../../opencl/encode.cl");

/// The plaintexts of the integer schemes (BFV, BGV) into RNS: the lift of multiply_plain and
/// BFV's scaled addition, built after `CKKS` in its program.
pub const PLAIN: &str = include_str!("../../opencl/plain.cl");

/// The CKKS fused passes (`crate::ckks::fused`), built after `NTT`: the loads of key
/// switching's decomposition and the mod-down's rounding, the galois permutation with an
/// inverse's first pass, the inverse's strided pass fused with forward ones, the mod-down's
/// forward block pass, and with `-D KS_ROWS=.. -D KS_LOCAL_ROOTS=..` key switching's
/// forward block pass with its inner product.
pub const FUSED: &str = include_str!("../../opencl/fused.cl");

/// A key switch's five fused launches chained into one, built after `NTT` and `FUSED`
/// (with `-D KS_ROWS=1`), and `-D DEVICE_FENCE_PTX` on NVIDIA.
pub const CHAIN: &str = include_str!("../../opencl/chain.cl");

/// The element-wise kernels of BFV and BGV that CKKS has none of (the galois permutation in
/// coefficient form, BGV's plain modulus correction), built after `ARITH` with
/// `-D LOG_N=..`.
pub const INTEGER: &str = include_str!("../../opencl/integer.cl");

/// The per-coefficient steps of BFV's multiplication by BEHZ base extensions (the
/// extension of each input to base q U Bsk, and the scaling by t / q back to q), built
/// after `ARITH` with `-D LOG_N=.. -D BEHZ_K=.. -D BEHZ_NB=..` and the constants' offsets
/// (`crate::integer::multiply`).
pub const BEHZ: &str = include_str!("../../opencl/behz.cl");

/// BFV multiplication's tensor product fused with the inverse transform's block pass, built
/// after `NTT` on the plan over q U Bsk (`crate::integer::multiply`).
pub const BEHZ_TENSOR: &str = include_str!("../../opencl/behz_tensor.cl");

/// BFV multiplication in two chained launches (the extension with the forward transform,
/// the tensor product with the inverse transform and the scaling), built after `CHAIN`,
/// `BEHZ_TENSOR` and `BEHZ` on a BFV level's plan over q U Bsk with `BEHZ`'s options
/// (`crate::ckks::fused::FusedPasses::for_behz`).
pub const BEHZ_CHAIN: &str = include_str!("../../opencl/behz_chain.cl");
