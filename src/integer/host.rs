//! Host references of the kernels in `opencl/integer.cl` and `opencl/plain.cl`, one function
//! of the same name per kernel, written with `crate::arith`. The device kernels must equal these word for word.
//!
//! Layout (SEAL's): coefficient `k` of residue `j` of polynomial `p` at word
//! `(p * K + j) * n + k`. These are test oracles: a size that does not match the documented
//! shapes is a bug in the caller and panics; the device launchers return errors instead.

use crate::arith::{
    add_uint_mod, barrett_reduce_64, mad_uint_mod, multiply_uint_mod, negate_uint_mod,
    sub_uint_mod, Modulus, ShoupOperand,
};
use crate::ckks::host as ckks_host;

/// SEAL's `GaloisTool::apply_galois` (coefficient form) on every residue: for each residue
/// of `src` (K = `moduli.len()` residues per polynomial, residue j mod `moduli[j]`),
/// coefficient i goes to index (i * galois_elt) mod N of `dst`, negated where
/// (i * galois_elt) mod 2N >= N. # Panics: mismatched lengths.
pub fn integer_apply_galois(
    dst: &mut [u64],
    src: &[u64],
    galois_elt: u32,
    moduli: &[Modulus],
    n: usize,
) {
    let k = moduli.len();
    assert!(dst.len() == src.len() && src.len().is_multiple_of(k * n));
    for (r, (out, input)) in dst.chunks_exact_mut(n).zip(src.chunks_exact(n)).enumerate() {
        let q = &moduli[r % k];
        for (i, &v) in input.iter().enumerate() {
            let raw = i as u64 * galois_elt as u64;
            let index = raw as usize & (n - 1);
            out[index] = if (raw / n as u64) & 1 == 1 {
                negate_uint_mod(v, q)
            } else {
                v
            };
        }
    }
}

/// What BGV's division by q_last = `moduli[last_q_index]` subtracts (SEAL's
/// `mod_t_and_divide_q_last_ntt_inplace`, the BGV branch of `switch_key_inplace`): for
/// each of the `last.len() / n` polynomials, c = its residue in `last` (< 2 q_last, reduced
/// here), dst[p][i] = (c + q_last * ((-c mod t) * inv_t mod t)) mod q_i for i < k_out,
/// canonical. # Panics: mismatched lengths.
#[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
pub fn integer_mod_t_prep(
    dst: &mut [u64],
    last: &[u64],
    last_q_index: usize,
    moduli: &[Modulus],
    k_out: usize,
    plain: &Modulus,
    inv_t: u64,
    n: usize,
) {
    let polys = last.len() / n;
    assert!(last.len() == polys * n && dst.len() == polys * k_out * n);
    let q_last = &moduli[last_q_index];
    for (p, residue) in last.chunks_exact(n).enumerate() {
        for (k, &x) in residue.iter().enumerate() {
            let c = if x >= q_last.value() {
                x - q_last.value()
            } else {
                x
            };
            let kt = multiply_uint_mod(
                negate_uint_mod(barrett_reduce_64(c, plain), plain),
                inv_t,
                plain,
            );
            for (i, q) in moduli[..k_out].iter().enumerate() {
                let delta = multiply_uint_mod(
                    barrett_reduce_64(kt, q),
                    barrett_reduce_64(q_last.value(), q),
                    q,
                );
                dst[(p * k_out + i) * n + k] = add_uint_mod(delta, barrett_reduce_64(c, q), q);
            }
        }
    }
}

/// SEAL's modulus switch in coefficient form (`IntegerKernels::integer_divide_round_coeff`):
/// `polys` polynomials of k_out + 1 residues in src, k_out in dst, q_last = moduli[k_out];
/// the dropped residue gathered, rounded under each q_i (BFV, `bgv` None) or BGV's delta
/// (`integer_mod_t_prep` with (t, inv_t)), and the division (`ckks_divide_round_finish`).
/// # Panics: mismatched lengths.
#[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
pub fn integer_divide_round_coeff(
    dst: &mut [u64],
    src: &[u64],
    inv: &[ShoupOperand],
    moduli: &[Modulus],
    k_out: usize,
    bgv: Option<(&Modulus, u64)>,
    polys: usize,
    n: usize,
) {
    let mut last = vec![0; polys * n];
    ckks_host::ckks_gather_residue(&mut last, src, k_out + 1, k_out, polys, n);
    let mut sub = vec![0; polys * k_out * n];
    match bgv {
        None => ckks_host::ckks_moddown_prep(&mut sub, &last, k_out, moduli, k_out, n),
        Some((plain, inv_t)) => {
            integer_mod_t_prep(&mut sub, &last, k_out, moduli, k_out, plain, inv_t, n)
        }
    }
    ckks_host::ckks_divide_round_finish(
        dst,
        k_out,
        src,
        k_out + 1,
        &sub,
        inv,
        moduli,
        k_out,
        polys,
        false,
        n,
    );
}

/// The plaintext's coefficient k, zero past its last.
fn coefficient(plain: &[u64], k: usize) -> u64 {
    plain.get(k).copied().unwrap_or(0)
}

/// `plain` times `scalar` mod t, lifted to Z_q at degree `n`: residue j of coefficient k is
/// m_k mod q_j, or, with `upper_half`, (m_k - t) mod q_j when m_k >= (t + 1) / 2 (SEAL's
/// plain lift). # Panics: t is not a modulus.
pub fn plain_lift(
    plain: &[u64],
    n: usize,
    t: u64,
    scalar: u64,
    upper_half: bool,
    moduli: &[Modulus],
) -> Vec<u64> {
    let plain_modulus = Modulus::new(t).expect("t is a modulus");
    let plain: Vec<u64> = plain
        .iter()
        .map(|&m| multiply_uint_mod(m, scalar, &plain_modulus))
        .collect();
    let plain = &plain[..];
    let threshold = if upper_half { t.div_ceil(2) } else { u64::MAX };
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
