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
//!   of its steps and of `bfv_multiply`; its base converters in `baseconv`) and `multiply`
//!   (`BehzLevel`, that level on the device, whose `bfv_multiply` enqueues the product on a
//!   graph; `opencl/behz.cl`, `opencl/behz_tensor.cl`).
//!
//! Modules: `ops` (key switching, relinearize, apply_galois and mod_switch_to_next for both
//! schemes, on CKKS's key switching and mod-down), `plain` (a plaintext mod t multiplied into
//! or added to a ciphertext), `kernels` (the launchers of `opencl/integer.cl`) and `host` (the
//! host references of `integer.cl` and `plain.cl`).

mod baseconv;
pub mod behz;
pub mod host;
pub mod kernels;
pub mod multiply;
pub mod ops;
pub mod plain;

use crate::arith::{invert_uint_mod, multiply_uint_mod, negate_uint_mod, Modulus};
use crate::error::{Error, Result};

/// BFV's scaling of a plaintext at one level of primes q_0 .. q_{K-1}, q their product, as
/// SEAL's `ContextData` holds it: `delta[j]` = floor(q / t) mod q_j
/// (`coeff_div_plain_modulus`) and `q_mod_t` = q mod t (`coeff_modulus_mod_plain_modulus`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainScaling {
    pub delta: Vec<u64>,
    pub q_mod_t: u64,
}

impl PlainScaling {
    /// From q = t floor(q / t) + (q mod t) and q = 0 mod q_j: floor(q / t) = -(q mod t) t^-1
    /// mod q_j. Errors: t shares a factor with a prime (SEAL refuses such parameters).
    pub fn new(t: u64, moduli: &[Modulus]) -> Result<PlainScaling> {
        let plain = Modulus::new(t)?;
        let q_mod_t = moduli.iter().fold(1 % t, |acc, q| {
            multiply_uint_mod(acc, q.value() % t, &plain)
        });
        let delta = moduli
            .iter()
            .map(|q| {
                let t_inv = invert_uint_mod(t, q).ok_or_else(|| {
                    Error::invalid(format!(
                        "plain modulus {t} is not coprime to the prime {}",
                        q.value()
                    ))
                })?;
                let r = multiply_uint_mod(q_mod_t % q.value(), t_inv, q);
                Ok(negate_uint_mod(r, q))
            })
            .collect::<Result<_>>()?;
        Ok(PlainScaling { delta, q_mod_t })
    }
}
