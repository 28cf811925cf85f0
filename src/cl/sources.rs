//! The OpenCL C sources, embedded at compile time (never read from disk at run time).
//! A program is built from a list of these, concatenated in order: `ARITH` first, since
//! every other file uses its helpers.

/// Modular arithmetic helpers shared by every kernel, plus one-line test kernels.
pub const ARITH: &str = include_str!("../../opencl/arith.cl");

/// One test kernel per helper of `ARITH`, for the bit-exact tests against `crate::arith`.
pub const ARITH_TEST: &str = include_str!("../../opencl/arith_test.cl");

/// The negacyclic NTT kernels (naive radix-2 and staged radix-4/8/16), built after `ARITH`.
pub const NTT: &str = include_str!("../../opencl/ntt.cl");

/// The elementwise CKKS kernels (add/sub/negate, multiply_plain, tensor, residue copies,
/// galois permutation, rescale and key-switching steps), built after `ARITH` with
/// `-D LOG_N=..`.
pub const CKKS: &str = include_str!("../../opencl/ckks.cl");
