//! Host references of the integer schemes' kernels (`opencl/plain.cl`), one function per
//! kernel of the same name, word for word. Polynomials are SEAL's layout: residue j of
//! coefficient k at word j N + k.

use crate::arith::{add_uint_mod, barrett_reduce_64, mad_uint_mod, sub_uint_mod, Modulus};

/// The plaintext's coefficient k, zero past its last.
fn coefficient(plain: &[u64], k: usize) -> u64 {
    plain.get(k).copied().unwrap_or(0)
}

/// `plain` lifted to Z_q at degree `n`: residue j of coefficient k is m_k mod q_j, or
/// (m_k - t) mod q_j when m_k >= (t + 1) / 2 (SEAL's plain lift).
pub fn plain_lift(plain: &[u64], n: usize, t: u64, moduli: &[Modulus]) -> Vec<u64> {
    let threshold = t.div_ceil(2);
    let mut out = Vec::with_capacity(moduli.len() * n);
    for q in moduli {
        let t_mod_q = barrett_reduce_64(t, q);
        out.extend((0..n).map(|k| {
            let m = coefficient(plain, k);
            let r = barrett_reduce_64(m, q);
            if m >= threshold {
                sub_uint_mod(r, t_mod_q, q)
            } else {
                r
            }
        }));
    }
    out
}

/// `poly` (K residues of degree `n`) plus round(q m / t), or minus with `subtract` (SEAL's
/// `multiply_add_plain_with_scaling_variant` and `multiply_sub_plain_with_scaling_variant`):
/// residue j of coefficient k gains m_k delta_j + floor((m_k (q mod t) + (t + 1) / 2) / t)
/// mod q_j, delta_j = floor(q / t) mod q_j.
#[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
pub fn plain_scale_add(
    poly: &mut [u64],
    n: usize,
    plain: &[u64],
    t: u64,
    moduli: &[Modulus],
    delta: &[u64],
    q_mod_t: u64,
    subtract: bool,
) {
    let threshold = t.div_ceil(2);
    for (j, q) in moduli.iter().enumerate() {
        for (k, &m) in plain.iter().take(n).enumerate() {
            let fix = ((m as u128 * q_mod_t as u128 + threshold as u128) / t as u128) as u64;
            let scaled = mad_uint_mod(m, delta[j], fix, q);
            let c = &mut poly[j * n + k];
            *c = if subtract {
                sub_uint_mod(*c, scaled, q)
            } else {
                add_uint_mod(*c, scaled, q)
            };
        }
    }
}
