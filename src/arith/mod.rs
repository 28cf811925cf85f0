//! Host reference of every modular primitive the kernels use, written after SEAL's
//! `util/uintarithsmallmod.h` and `util/dwthandler.h` (names follow SEAL's). The OpenCL
//! helpers of the same names in `opencl/arith.cl` must agree with these word for word;
//! `tests/arith.rs` checks both against plain `u128` arithmetic.
//!
//! Moduli are SEAL's: 2 <= q < 2^61 (SEAL's user moduli stop at 60 bits). Lazy forms keep
//! values in [0, 2q) or [0, 4q); 4q < 2^63 so no sum of two lazy values overflows.

mod numth;

pub use numth::{
    coeff_modulus_create, get_primes, invert_uint_mod, is_prime, minimal_primitive_root,
    pow_uint_mod,
};

use crate::error::{Error, Result};

/// SEAL's largest modulus: 61 bits, so that 4q fits in 63 bits for lazy butterflies.
pub const MODULUS_MAX_BITS: u32 = 61;

/// A modulus with its Barrett constant, as SEAL's `Modulus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modulus {
    value: u64,
    /// floor(2^128 / q) as (low word, high word), then 2^128 mod q, as SEAL's `const_ratio`.
    const_ratio: [u64; 3],
}

impl Modulus {
    pub fn new(value: u64) -> Result<Self> {
        if value < 2 || 64 - value.leading_zeros() > MODULUS_MAX_BITS {
            return Err(Error::invalid(format!(
                "modulus {value} is not in [2, 2^{MODULUS_MAX_BITS})"
            )));
        }
        // 2^128 = ratio * q + rem; computed as (2^128 - 1) / q with a fix-up of the remainder.
        let ratio = u128::MAX / value as u128;
        let mut rem = (u128::MAX % value as u128) as u64 + 1;
        let ratio = if rem == value {
            rem = 0;
            ratio + 1
        } else {
            ratio
        };
        Ok(Modulus {
            value,
            const_ratio: [ratio as u64, (ratio >> 64) as u64, rem],
        })
    }

    pub fn value(&self) -> u64 {
        self.value
    }

    pub fn const_ratio(&self) -> [u64; 3] {
        self.const_ratio
    }

    pub fn bit_count(&self) -> u32 {
        64 - self.value.leading_zeros()
    }

    /// floor(2^(2m + 1) / q), m = q's bit count: the ratio of [`barrett_reduce_dq`]
    /// (< 2^(m + 2), a word for every q < 2^61).
    pub fn dq_ratio(&self) -> u64 {
        ((1u128 << (2 * self.bit_count() + 1)) / self.value as u128) as u64
    }
}

/// An operand with its Shoup quotient floor(operand * 2^64 / q), SEAL's
/// `MultiplyUIntModOperand`. On entry to `new`, operand < q.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShoupOperand {
    pub operand: u64,
    pub quotient: u64,
}

impl ShoupOperand {
    pub fn new(operand: u64, modulus: &Modulus) -> Self {
        debug_assert!(operand < modulus.value());
        ShoupOperand {
            operand,
            quotient: (((operand as u128) << 64) / modulus.value() as u128) as u64,
        }
    }
}

#[inline]
fn mul_hi(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) >> 64) as u64
}

/// (a + b) mod q for a, b < q.
#[inline]
pub fn add_uint_mod(a: u64, b: u64, modulus: &Modulus) -> u64 {
    let s = a + b;
    if s >= modulus.value {
        s - modulus.value
    } else {
        s
    }
}

/// (a - b) mod q for a, b < q.
#[inline]
pub fn sub_uint_mod(a: u64, b: u64, modulus: &Modulus) -> u64 {
    let (d, borrow) = a.overflowing_sub(b);
    if borrow {
        d.wrapping_add(modulus.value)
    } else {
        d
    }
}

/// -a mod q for a < q (0 stays 0).
#[inline]
pub fn negate_uint_mod(a: u64, modulus: &Modulus) -> u64 {
    if a == 0 {
        0
    } else {
        modulus.value - a
    }
}

/// x mod q for any 64-bit x (SEAL's `barrett_reduce_64`).
#[inline]
pub fn barrett_reduce_64(x: u64, modulus: &Modulus) -> u64 {
    let q = modulus.value;
    let t = mul_hi(x, modulus.const_ratio[1]);
    reduce_once(x.wrapping_sub(t.wrapping_mul(q)), q)
}

/// x mod q for a 128-bit x given as (low, high) (SEAL's `barrett_reduce_128`).
#[inline]
pub fn barrett_reduce_128(lo: u64, hi: u64, modulus: &Modulus) -> u64 {
    let q = modulus.value;
    let [r0, r1, _] = modulus.const_ratio;
    // The high 64 bits of the 256-bit product x * ratio, up to the words that cannot
    // change the result by more than one q (SEAL's rounds 1 and 2).
    let carry = mul_hi(lo, r0);
    let p = lo as u128 * r1 as u128;
    let (tmp1, c1) = (p as u64).overflowing_add(carry);
    let tmp3 = ((p >> 64) as u64).wrapping_add(c1 as u64);
    let p = hi as u128 * r0 as u128;
    let (_, c2) = tmp1.overflowing_add(p as u64);
    let carry = ((p >> 64) as u64).wrapping_add(c2 as u64);
    let quot = hi.wrapping_mul(r1).wrapping_add(tmp3).wrapping_add(carry);
    reduce_once(lo.wrapping_sub(quot.wrapping_mul(q)), q)
}

/// x mod q for a 128-bit x = (lo, hi) < 2^(2m), m = q's bit count: Barrett's reduction as
/// Dhem and Quisquater refine it (Shivdikar et al., Algorithm 4), one 64 x 64-bit product
/// and one correction. With c = floor(x / 2^(m-2)) < 2^(m+2) and mu = floor(2^(2m+1) / q),
/// quot = floor(c mu / 2^(m+3)) satisfies x/q - 1 < c mu / 2^(m+3) <= x/q (the two floors
/// lose less than x / 2^(2m+1) + 2^(m-2) / q < 1/2 + 1/2), so x - quot q lies in [0, 2q).
#[inline]
pub fn barrett_reduce_dq(lo: u64, hi: u64, modulus: &Modulus) -> u64 {
    let m = modulus.bit_count();
    let x = (hi as u128) << 64 | lo as u128;
    let c = (x >> (m - 2)) as u64;
    let quot = ((c as u128 * modulus.dq_ratio() as u128) >> (m + 3)) as u64;
    reduce_once(
        lo.wrapping_sub(quot.wrapping_mul(modulus.value)),
        modulus.value,
    )
}

/// a * b mod q for a, b < q through [`barrett_reduce_dq`] (a b < q^2 < 2^(2m)).
#[inline]
pub fn multiply_uint_mod_dq(a: u64, b: u64, modulus: &Modulus) -> u64 {
    let p = a as u128 * b as u128;
    barrett_reduce_dq(p as u64, (p >> 64) as u64, modulus)
}

/// a * b mod q for a, b < q (SEAL's `multiply_uint_mod` on two plain words).
#[inline]
pub fn multiply_uint_mod(a: u64, b: u64, modulus: &Modulus) -> u64 {
    let p = a as u128 * b as u128;
    barrett_reduce_128(p as u64, (p >> 64) as u64, modulus)
}

/// x * y mod q in [0, 2q) for any 64-bit x (Shoup; SEAL's `multiply_uint_mod_lazy`).
#[inline]
pub fn multiply_uint_mod_shoup_lazy(x: u64, y: ShoupOperand, modulus: &Modulus) -> u64 {
    let t = mul_hi(x, y.quotient);
    y.operand
        .wrapping_mul(x)
        .wrapping_sub(t.wrapping_mul(modulus.value))
}

/// x * y mod q in [0, q) for any 64-bit x (SEAL's `multiply_uint_mod` with an operand).
#[inline]
pub fn multiply_uint_mod_shoup(x: u64, y: ShoupOperand, modulus: &Modulus) -> u64 {
    let r = multiply_uint_mod_shoup_lazy(x, y, modulus);
    if r >= modulus.value {
        r - modulus.value
    } else {
        r
    }
}

/// a * b + c mod q with one Barrett reduction of the 128-bit sum (Zhai et al.,
/// "Accelerating Encrypted Computing on Intel GPUs", V-A1).
/// On entry a, b < q and c < 2^64; a*b + c < 2^128 holds since q < 2^61.
#[inline]
pub fn mad_uint_mod(a: u64, b: u64, c: u64, modulus: &Modulus) -> u64 {
    let s = a as u128 * b as u128 + c as u128;
    barrett_reduce_128(s as u64, (s >> 64) as u64, modulus)
}

/// x mod q for x < 2q (or x - 2q for x in [2q, 4q) with `two_q`): SEAL's `guard`.
#[inline]
pub fn reduce_once(x: u64, bound: u64) -> u64 {
    if x >= bound {
        x - bound
    } else {
        x
    }
}

/// Harvey's forward (Cooley-Tukey) butterfly (Zhai et al., "Accelerating Encrypted
/// Computing on Intel GPUs", Algorithm 1), as SEAL's `transform_to_rev` runs it: on
/// entry x, y < 4q; on exit x', y' < 4q with x' = x + w*y, y' = x - w*y (mod q).
#[inline]
pub fn butterfly_forward_lazy(x: u64, y: u64, w: ShoupOperand, modulus: &Modulus) -> (u64, u64) {
    let two_q = modulus.value << 1;
    let u = reduce_once(x, two_q);
    let v = multiply_uint_mod_shoup_lazy(y, w, modulus);
    (u + v, u + two_q - v)
}

/// Harvey's inverse (Gentleman-Sande) butterfly as SEAL's `transform_from_rev` runs it:
/// on entry x, y < 2q; on exit x', y' < 2q with x' = x + y, y' = w*(x - y) (mod q).
#[inline]
pub fn butterfly_inverse_lazy(x: u64, y: u64, w: ShoupOperand, modulus: &Modulus) -> (u64, u64) {
    let two_q = modulus.value << 1;
    let x2 = reduce_once(x + y, two_q);
    let y2 = multiply_uint_mod_shoup_lazy(x + two_q - y, w, modulus);
    (x2, y2)
}
