//! SEAL's integer schemes, BFV and BGV, on the device.
//!
//! Their ciphertexts are the same RNS polynomials as CKKS's (SEAL's layout: polynomial, then
//! prime, then coefficient), on the same primes, NTT tables and key switching keys, so they
//! run on `crate::ckks`'s per-parameter-set data (`ckks::context::CkksContext`), its NTT plans
//! and its element-wise kernels. What differs, and lives here:
//!
//! - the plain modulus t: BFV's scaling of plaintexts by Delta = floor(q / t), BGV's
//!   correction factors and its divide-and-round by q_last with the correction mod t;
//! - BFV's ciphertexts in coefficient form, and its multiplication by SEAL's BEHZ base
//!   extensions: `behz` (SEAL's `RNSTool` of a level as `BehzTables`, with host references
//!   of its steps and of `bfv_multiply`; its base converters in `baseconv`) and `multiply` (`BehzLevel`, that level on the
//!   device, whose `bfv_multiply` enqueues the product on a graph; `opencl/behz.cl`).

mod baseconv;
pub mod behz;
pub mod multiply;
