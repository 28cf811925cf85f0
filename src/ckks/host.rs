//! Host references of the elementwise CKKS kernels in `opencl/ckks.cl`, one function of
//! the same name per kernel, written with `crate::arith` (itself checked against plain
//! `u128` arithmetic and SEAL). The device kernels must equal these word for word.
//!
//! Layout (SEAL's): a polynomial array with K residues per polynomial stores coefficient
//! `k` of residue `j` of polynomial `p` at word `(p * K + j) * n + k`. `n` is the
//! polynomial degree N; K is `moduli.len()` unless a function says otherwise.
//!
//! These are test oracles: a size that does not match the documented shapes is a bug in
//! the caller and panics (`# Panics`); the device launchers return errors instead.

use super::SumTerm;
use crate::arith::{
    add_uint_mod, barrett_reduce_64, mad_uint_mod, multiply_uint_mod, multiply_uint_mod_shoup,
    negate_uint_mod, sub_uint_mod, Modulus, ShoupOperand,
};
use crate::ntt::reverse_bits;

/// The prime of word `w` in an array with `k` residues of `n` words per polynomial.
fn prime_of(w: usize, k: usize, n: usize) -> usize {
    (w / n) % k
}

fn check_shape(words: usize, k: usize, n: usize) {
    assert!(k >= 1 && n >= 1, "K and N must be at least 1");
    assert!(
        words.is_multiple_of(k * n),
        "{words} words are not whole polynomials of {k} residues of {n}"
    );
}

/// dst = a + b mod q_j, word for word. On entry a, b canonical, all of equal length (whole
/// polynomials). # Panics: on mismatched lengths.
pub fn ckks_add(dst: &mut [u64], a: &[u64], b: &[u64], moduli: &[Modulus], n: usize) {
    check_shape(dst.len(), moduli.len(), n);
    assert!(a.len() == dst.len() && b.len() == dst.len());
    for (w, d) in dst.iter_mut().enumerate() {
        *d = add_uint_mod(a[w], b[w], &moduli[prime_of(w, moduli.len(), n)]);
    }
}

/// dst = a - b mod q_j. As [`ckks_add`].
pub fn ckks_sub(dst: &mut [u64], a: &[u64], b: &[u64], moduli: &[Modulus], n: usize) {
    check_shape(dst.len(), moduli.len(), n);
    assert!(a.len() == dst.len() && b.len() == dst.len());
    for (w, d) in dst.iter_mut().enumerate() {
        *d = sub_uint_mod(a[w], b[w], &moduli[prime_of(w, moduli.len(), n)]);
    }
}

/// dst = -a mod q_j. As [`ckks_add`].
pub fn ckks_negate(dst: &mut [u64], a: &[u64], moduli: &[Modulus], n: usize) {
    check_shape(dst.len(), moduli.len(), n);
    assert!(a.len() == dst.len());
    for (w, d) in dst.iter_mut().enumerate() {
        *d = negate_uint_mod(a[w], &moduli[prime_of(w, moduli.len(), n)]);
    }
}

/// dst[p][j][k] = values[p N + k] mod q_j in [0, q_j) for every polynomial p (dst whole
/// polynomials of K residues, `values` N a polynomial): SEAL's samples at every prime.
pub fn ckks_lift_signed(dst: &mut [u64], values: &[i8], moduli: &[Modulus], n: usize) {
    let k = moduli.len();
    check_shape(dst.len(), k, n);
    assert_eq!(values.len() * k, dst.len(), "not N values a polynomial");
    for (w, d) in dst.iter_mut().enumerate() {
        let v = values[(w / (k * n)) * n + w % n];
        let q = moduli[prime_of(w, k, n)].value();
        *d = if v < 0 {
            q - v.unsigned_abs() as u64
        } else {
            v as u64
        };
    }
}

/// ct[p][j][k] = ct[p][j][k] * plain[j][k] mod q_j for every polynomial p (SEAL's
/// `multiply_plain_ntt`). On entry `plain` holds K * N canonical words.
pub fn ckks_multiply_plain(ct: &mut [u64], plain: &[u64], moduli: &[Modulus], n: usize) {
    let k = moduli.len();
    check_shape(ct.len(), k, n);
    assert_eq!(plain.len(), k * n, "plaintext is not K * N words");
    for poly in ct.chunks_exact_mut(k * n) {
        for (w, x) in poly.iter_mut().enumerate() {
            *x = multiply_uint_mod(*x, plain[w], &moduli[w / n]);
        }
    }
}

/// X^shift times every polynomial of `a` in Z_q[X]/(X^N + 1), as SEAL's
/// `negacyclic_shift_poly_coeffmod` computes it: coefficient i of a residue goes to index
/// i + shift, or to i + shift - N negated (0 stays 0) where that reaches N. On entry a is
/// canonical and shift < N. # Panics: as [`ckks_add`], or a shift of N or more.
pub fn negacyclic_shift(a: &[u64], shift: usize, moduli: &[Modulus], n: usize) -> Vec<u64> {
    check_shape(a.len(), moduli.len(), n);
    assert!(shift < n, "a shift of {shift} at N = {n}");
    let mut out = vec![0; a.len()];
    for (r, (residue, dst)) in a.chunks_exact(n).zip(out.chunks_exact_mut(n)).enumerate() {
        let q = &moduli[r % moduli.len()];
        for (i, &x) in residue.iter().enumerate() {
            let to = i + shift;
            if to < n {
                dst[to] = x;
            } else {
                dst[to - n] = negate_uint_mod(x, q);
            }
        }
    }
    out
}

/// dst = dst (zero without `accumulate`) +- each term mod q_j, in order: SEAL's
/// multiply_plain_ntt of each product term (or multiply_plain by X^shift of each shifted
/// one) into a temporary, then one `add_inplace` (`sub_inplace`) per term into the
/// accumulator. On entry every input holds canonical words; each term the words of dst, its
/// plaintext K * N.
pub fn ckks_sum(
    dst: &mut [u64],
    accumulate: bool,
    terms: &[SumTerm<&[u64]>],
    moduli: &[Modulus],
    n: usize,
) {
    if !accumulate {
        dst.fill(0);
    }
    for term in terms {
        let mut value = term.words.to_vec();
        if term.shift != 0 {
            value = negacyclic_shift(&value, term.shift as usize, moduli, n);
        }
        if let Some(plain) = term.plain {
            ckks_multiply_plain(&mut value, plain, moduli, n);
        }
        let acc = dst.to_vec();
        if term.subtract {
            ckks_sub(dst, &acc, &value, moduli, n);
        } else {
            ckks_add(dst, &acc, &value, moduli, n);
        }
    }
}

/// The tensor product of SEAL's `ckks_multiply` in NTT form: `a` holds `s1` polynomials,
/// `b` holds `s2`, `dst` gets s1 + s2 - 1 with dst[t] = sum_{i + l = t} a[i] * b[l] mod q.
pub fn ckks_tensor(
    dst: &mut [u64],
    a: &[u64],
    s1: usize,
    b: &[u64],
    s2: usize,
    moduli: &[Modulus],
    n: usize,
) {
    let words = moduli.len() * n;
    assert!(s1 >= 1 && s2 >= 1);
    assert!(a.len() == s1 * words && b.len() == s2 * words);
    assert_eq!(dst.len(), (s1 + s2 - 1) * words);
    for (t, out) in dst.chunks_exact_mut(words).enumerate() {
        for (w, d) in out.iter_mut().enumerate() {
            let q = &moduli[w / n];
            let mut acc = 0;
            for i in t.saturating_sub(s2 - 1)..=t.min(s1 - 1) {
                acc = mad_uint_mod(a[i * words + w], b[(t - i) * words + w], acc, q);
            }
            *d = acc;
        }
    }
}

/// dst[p * dst_stride + j][k] = src[p * src_stride + j][k] for p < polys, j <
/// residues_per_poly (strides in residues). Other words of `dst` are left alone.
#[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
pub fn ckks_copy_residues(
    dst: &mut [u64],
    dst_stride: usize,
    src: &[u64],
    src_stride: usize,
    residues_per_poly: usize,
    polys: usize,
    n: usize,
) {
    for p in 0..polys {
        for j in 0..residues_per_poly {
            let d = (p * dst_stride + j) * n;
            let s = (p * src_stride + j) * n;
            dst[d..d + n].copy_from_slice(&src[s..s + n]);
        }
    }
}

/// dst[p][k] = src[p * src_stride + index][k] for p < polys.
pub fn ckks_gather_residue(
    dst: &mut [u64],
    src: &[u64],
    src_stride: usize,
    index: usize,
    polys: usize,
    n: usize,
) {
    ckks_copy_residues(dst, 1, &src[index * n..], src_stride, 1, polys, n);
}

/// SEAL 4.0's `GaloisTool::generate_table_ntt`: entry i (i < N) is the index of the NTT
/// slot that moves to slot i under X -> X^galois_elt. On entry galois_elt odd, < 2N.
pub fn galois_table_ntt(galois_elt: u32, log_n: u32) -> Vec<u32> {
    let n = 1u64 << log_n;
    (n..2 * n)
        .map(|i| {
            let reversed = reverse_bits(i, log_n + 1);
            let index_raw = ((galois_elt as u64 * reversed) >> 1) & (n - 1);
            reverse_bits(index_raw, log_n) as u32
        })
        .collect()
}

/// SEAL's `apply_galois_ntt` on every residue of `src`: dst[r][i] = src[r][table[i]].
pub fn ckks_galois_ntt(dst: &mut [u64], src: &[u64], galois_elt: u32, log_n: u32) {
    let n = 1usize << log_n;
    assert!(dst.len() == src.len() && src.len().is_multiple_of(n));
    let table = galois_table_ntt(galois_elt, log_n);
    for (d, s) in dst.chunks_exact_mut(n).zip(src.chunks_exact(n)) {
        for (x, &t) in d.iter_mut().zip(&table) {
            *x = s[t as usize];
        }
    }
}

/// SEAL's neg_half_mod: q_i - (q_last >> 1) mod q_i (arith.cl's `moddown_fix`).
pub fn moddown_fix(q_last: &Modulus, q: &Modulus) -> u64 {
    q.value() - barrett_reduce_64(q_last.value() >> 1, q)
}

/// One word of the mod-down's input under q (arith.cl's `moddown_round`): x (< 2 q_last,
/// an inverse NTT's output) rounded, r = (x + (q_last >> 1)) mod q_last, then
/// (q < q_last ? r mod q : r) + fix, in [0, 2q) (not reduced).
pub fn moddown_round(x: u64, q_last: &Modulus, q: &Modulus, fix: u64) -> u64 {
    let r = barrett_reduce_64(x + (q_last.value() >> 1), q_last);
    let r = if q.value() < q_last.value() {
        barrett_reduce_64(r, q)
    } else {
        r
    };
    r + fix
}

/// The mod-down's last step on one word (arith.cl's `moddown_finish`): (x + 4q - t) * inv
/// mod q, for x < q and t < 4q.
pub fn moddown_finish(x: u64, t: u64, inv: ShoupOperand, q: &Modulus) -> u64 {
    multiply_uint_mod_shoup(x + (q.value() << 2) - t, inv, q)
}

/// "(ct mod q_last) mod q_i" with SEAL's rounding and lazy `J += neg_half_mod`: `last`
/// holds one residue per polynomial mod q_last = moduli[last_q_index], as an inverse NTT
/// leaves it (on entry < 2 q_last); dst gets `k_out` residues per polynomial, primes
/// 0..k_out, each word [`moddown_round`] of the last residue's word under q_i.
pub fn ckks_moddown_prep(
    dst: &mut [u64],
    last: &[u64],
    last_q_index: usize,
    moduli: &[Modulus],
    k_out: usize,
    n: usize,
) {
    let q_last = &moduli[last_q_index];
    assert_eq!(dst.len(), last.len() * k_out);
    for (p, last) in last.chunks_exact(n).enumerate() {
        for (i, qi) in moduli[..k_out].iter().enumerate() {
            let fix = moddown_fix(q_last, qi);
            let out = &mut dst[(p * k_out + i) * n..][..n];
            for (d, &x) in out.iter_mut().zip(last) {
                *d = moddown_round(x, q_last, qi, fix);
            }
        }
    }
}

/// The last step of rescale and key switching: for p < polys, i < k_out,
/// y = [`moddown_finish`] of src[p * src_stride + i] and t[p * k_out + i] under q_i, then
/// dst[p * dst_stride + i] = y, or dst + y mod q_i with `accumulate`. On entry t < 4 q_i,
/// src canonical, `inv[i]` = q_last^-1 mod q_i with its Shoup quotient.
#[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
pub fn ckks_divide_round_finish(
    dst: &mut [u64],
    dst_stride: usize,
    src: &[u64],
    src_stride: usize,
    t: &[u64],
    inv: &[ShoupOperand],
    moduli: &[Modulus],
    k_out: usize,
    polys: usize,
    accumulate: bool,
    n: usize,
) {
    for p in 0..polys {
        for (i, q) in moduli[..k_out].iter().enumerate() {
            let d0 = (p * dst_stride + i) * n;
            let s0 = (p * src_stride + i) * n;
            let t0 = (p * k_out + i) * n;
            for k in 0..n {
                let y = moddown_finish(src[s0 + k], t[t0 + k], inv[i], q);
                let d = &mut dst[d0 + k];
                *d = if accumulate {
                    add_uint_mod(*d, y, q)
                } else {
                    y
                };
            }
        }
    }
}

/// Key switching's RNS decomposition: `moduli_ext` holds K data primes then the special
/// prime; `t_target` holds K canonical residues (residue J mod q_J, coefficient form);
/// dst gets K * (K + 1) residues with dst[J * (K + 1) + I] = t_target[J] if q_J <= q_I,
/// else t_target[J] mod q_I.
pub fn ckks_ks_decompose(dst: &mut [u64], t_target: &[u64], moduli_ext: &[Modulus], n: usize) {
    let k = moduli_ext.len() - 1;
    assert_eq!(t_target.len(), k * n);
    assert_eq!(dst.len(), k * (k + 1) * n);
    for (jj, x) in t_target.chunks_exact(n).enumerate() {
        for (ii, qi) in moduli_ext.iter().enumerate() {
            let out = &mut dst[(jj * (k + 1) + ii) * n..][..n];
            for (d, &x) in out.iter_mut().zip(x) {
                *d = if moduli_ext[jj].value() <= qi.value() {
                    x
                } else {
                    barrett_reduce_64(x, qi)
                };
            }
        }
    }
}

/// Key switching's inner product, the data primes apart from the special prime: with
/// s(c, I) = sum_{J < K} dec[J * (K + 1) + I] * key[J][c][kp(I)] mod q_I for c < 2,
/// kp(I) = I for I < K and `key_special_index` for I = K, `prod[c * K + I] = s(c, I)` for
/// I < K (2 K residues) and `last[c] = s(c, K)` (2 residues). Key word of (J, c, prime p,
/// k) is ((J * 2 + c) * key_stride_primes + p) * n + k. On entry dec < 4 q_I, key
/// canonical.
#[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
pub fn ckks_ks_inner_product(
    prod: &mut [u64],
    last: &mut [u64],
    dec: &[u64],
    key: &[u64],
    key_stride_primes: usize,
    key_special_index: usize,
    moduli_ext: &[Modulus],
    n: usize,
) {
    let k = moduli_ext.len() - 1;
    assert_eq!(prod.len(), 2 * k * n);
    assert_eq!(last.len(), 2 * n);
    for c in 0..2 {
        for (ii, q) in moduli_ext.iter().enumerate() {
            let kp = if ii < k { ii } else { key_special_index };
            let out = if ii < k {
                &mut prod[(c * k + ii) * n..][..n]
            } else {
                &mut last[c * n..][..n]
            };
            for (kk, d) in out.iter_mut().enumerate() {
                let mut acc = 0;
                for jj in 0..k {
                    // dec may be up to 4q: reduce it first so multiply_uint_mod's
                    // operands are canonical, as its contract asks.
                    let x = barrett_reduce_64(dec[(jj * (k + 1) + ii) * n + kk], q);
                    let y = key[((jj * 2 + c) * key_stride_primes + kp) * n + kk];
                    acc = add_uint_mod(acc, multiply_uint_mod(x, y, q), q);
                }
                *d = acc;
            }
        }
    }
}

/// The words of a Shoup operand table as the kernels read it: (operand, quotient) pairs.
pub fn shoup_words(operands: &[ShoupOperand]) -> Vec<u64> {
    operands
        .iter()
        .flat_map(|w| [w.operand, w.quotient])
        .collect()
}
