//! Host reference of the negacyclic NTT, written after SEAL's `DWTHandler::transform_to_rev`
//! / `transform_from_rev` (util/dwthandler.h) with `ModArithLazy` (util/ntt.h) and the
//! wrappers in util/ntt.cpp. Every butterfly runs the same word operations in the same
//! order as SEAL, so lazy outputs are SEAL's lazy outputs, not only congruent to them.
//! The kernels in `opencl/ntt.cl` must agree with these functions word for word.
//!
//! Order contracts (as SEAL's): the forward transform takes coefficients in standard order
//! and leaves evaluations in bit-reversed order; the inverse takes bit-reversed order and
//! returns standard order.

use super::NttTables;
use crate::arith::{
    butterfly_forward_lazy, butterfly_inverse_lazy, multiply_uint_mod_shoup,
    multiply_uint_mod_shoup_lazy, reduce_once, Modulus, ShoupOperand,
};

/// SEAL's `ModArithLazy::mul_root_scalar`: the root r times the scalar s, fully reduced,
/// with its own Shoup quotient. The inverse transform folds N^-1 into its last root this way.
pub fn mul_root_scalar(r: ShoupOperand, s: ShoupOperand, modulus: &Modulus) -> ShoupOperand {
    ShoupOperand::new(multiply_uint_mod_shoup(r.operand, s, modulus), modulus)
}

/// The inverse transform's last butterfly (gap N/2) with N^-1 folded in, as the `scalar`
/// branch of SEAL's `transform_from_rev`: on entry x, y < 2q; on exit x' = (x + y) / N and
/// y' = w (x - y) / N (mod q), both < 2q, where `scaled_root` = w / N.
#[inline]
pub fn butterfly_inverse_last_lazy(
    x: u64,
    y: u64,
    inv_degree: ShoupOperand,
    scaled_root: ShoupOperand,
    modulus: &Modulus,
) -> (u64, u64) {
    let two_q = modulus.value() << 1;
    let u = reduce_once(x, two_q);
    let x2 = multiply_uint_mod_shoup_lazy(reduce_once(u + y, two_q), inv_degree, modulus);
    let y2 = multiply_uint_mod_shoup_lazy(u + two_q - y, scaled_root, modulus);
    (x2, y2)
}

/// Forward negacyclic NTT, lazy: on entry `operand` holds N coefficients in [0, 4q) in
/// standard order; on exit the evaluations, bit-reversed, in [0, 4q).
///
/// Panics if `operand.len()` is not N (SEAL's debug check).
pub fn ntt_negacyclic_harvey_lazy(operand: &mut [u64], tables: &NttTables) {
    let n = tables.coeff_count();
    assert_eq!(operand.len(), n, "operand must hold N = {n} coefficients");
    let modulus = tables.modulus();
    let roots = tables.get_from_root_powers();
    // SEAL runs rounds m = 1, 2, .., N/4 in its main loop and the last round (m = N/2,
    // gap 1) separately; without a scalar that last round is the same butterfly, so one
    // loop over all rounds performs the same operations in the same order.
    let mut root_index = 0;
    let mut gap = n >> 1;
    let mut m = 1;
    while m < n {
        let butterfly = |x, y, r| butterfly_forward_lazy(x, y, r, modulus);
        butterfly_round(operand, roots, &mut root_index, (m, gap), butterfly);
        gap >>= 1;
        m <<= 1;
    }
}

/// One round of SEAL's loops: `m` groups of butterflies on pairs `gap` apart, group i
/// with the root after `root_index` (which it advances), in SEAL's order.
fn butterfly_round(
    operand: &mut [u64],
    roots: &[ShoupOperand],
    root_index: &mut usize,
    (m, gap): (usize, usize),
    butterfly: impl Fn(u64, u64, ShoupOperand) -> (u64, u64),
) {
    let mut offset = 0;
    for _ in 0..m {
        *root_index += 1;
        let r = roots[*root_index];
        for x in offset..offset + gap {
            let (a, b) = butterfly(operand[x], operand[x + gap], r);
            operand[x] = a;
            operand[x + gap] = b;
        }
        offset += gap << 1;
    }
}

/// Forward negacyclic NTT: as `ntt_negacyclic_harvey_lazy`, then every value reduced
/// from [0, 4q) to [0, q).
pub fn ntt_negacyclic_harvey(operand: &mut [u64], tables: &NttTables) {
    ntt_negacyclic_harvey_lazy(operand, tables);
    let q = tables.modulus().value();
    for x in operand.iter_mut() {
        *x = reduce_once(reduce_once(*x, q << 1), q);
    }
}

/// Inverse negacyclic NTT with the factor N^-1, lazy: on entry `operand` holds N values
/// in [0, 2q) in bit-reversed order; on exit the coefficients in standard order, in [0, 2q).
///
/// Panics if `operand.len()` is not N.
pub fn inverse_ntt_negacyclic_harvey_lazy(operand: &mut [u64], tables: &NttTables) {
    inverse_ntt_negacyclic_harvey_lazy_rounds(operand, tables, tables.coeff_count_power());
}

/// The first `rounds` rounds (gaps 1 .. 2^(rounds - 1)) of
/// `inverse_ntt_negacyclic_harvey_lazy`, the last of them with N^-1 folded in when
/// `rounds` is log N (the whole transform): what the device's inverse leaves after its
/// first pass (`NttPlan::inverse_first_pass_from`, `rounds` = log G). Values in [0, 2q)
/// on entry and exit.
///
/// Panics if `operand.len()` is not N or `rounds` exceeds log N.
pub fn inverse_ntt_negacyclic_harvey_lazy_rounds(
    operand: &mut [u64],
    tables: &NttTables,
    rounds: u32,
) {
    let n = tables.coeff_count();
    assert_eq!(operand.len(), n, "operand must hold N = {n} values");
    let log_n = tables.coeff_count_power();
    assert!(
        rounds <= log_n,
        "{rounds} rounds of a {log_n}-round transform"
    );
    let modulus = tables.modulus();
    let roots = tables.get_from_inv_root_powers();
    let mut root_index = 0;
    let mut gap = 1;
    let mut m = n >> 1;
    for _ in 0..rounds.min(log_n - 1) {
        let butterfly = |x, y, r| butterfly_inverse_lazy(x, y, r, modulus);
        butterfly_round(operand, roots, &mut root_index, (m, gap), butterfly);
        gap <<= 1;
        m >>= 1;
    }
    if rounds < log_n {
        return;
    }
    // Last round (gap N/2, root index N - 1) with N^-1 folded in.
    let inv_degree = tables.inv_degree_modulo();
    let scaled_root = mul_root_scalar(roots[root_index + 1], inv_degree, modulus);
    for x in 0..gap {
        let (a, b) = butterfly_inverse_last_lazy(
            operand[x],
            operand[x + gap],
            inv_degree,
            scaled_root,
            modulus,
        );
        operand[x] = a;
        operand[x + gap] = b;
    }
}

/// Inverse negacyclic NTT: as `inverse_ntt_negacyclic_harvey_lazy`, then every value
/// reduced from [0, 2q) to [0, q).
pub fn inverse_ntt_negacyclic_harvey(operand: &mut [u64], tables: &NttTables) {
    inverse_ntt_negacyclic_harvey_lazy(operand, tables);
    let q = tables.modulus().value();
    for x in operand.iter_mut() {
        *x = reduce_once(*x, q);
    }
}

/// Applies `transform` to every residue polynomial of a batch laid out as SEAL lays out
/// polynomials: poly-major, then prime, then coefficient, so that N-word chunk `i` is
/// reduced mod prime `i % tables.len()` (SEAL's `PolyIter` / `RNSIter` overloads).
///
/// Panics if `values.len()` is not a multiple of N * `tables.len()`.
pub fn transform_batch(
    values: &mut [u64],
    tables: &[NttTables],
    transform: fn(&mut [u64], &NttTables),
) {
    let n = tables[0].coeff_count();
    assert_eq!(
        values.len() % (n * tables.len()),
        0,
        "a batch holds whole polynomials of {} residues of {n} words",
        tables.len()
    );
    for (i, residue) in values.chunks_exact_mut(n).enumerate() {
        transform(residue, &tables[i % tables.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{get_primes, multiply_uint_mod, pow_uint_mod, Modulus};
    use crate::ntt::tables::reverse_bits;
    use rand::{Rng, SeedableRng};

    fn rng() -> rand::rngs::StdRng {
        let seed = rand::random();
        eprintln!("seed {seed}");
        rand::rngs::StdRng::seed_from_u64(seed)
    }

    /// Primes 1 mod 2N of 17 (where one exists) to 60 bits.
    fn primes(log_n: u32) -> Vec<Modulus> {
        [17, 20, 30, 40, 50, 59, 60]
            .into_iter()
            .filter_map(|bits| get_primes(2 << log_n, bits, 1).ok())
            .map(|p| Modulus::new(p[0]).unwrap())
            .collect()
    }

    /// a * b mod (X^N + 1, q), schoolbook.
    fn negacyclic_product(a: &[u64], b: &[u64], q: &Modulus) -> Vec<u64> {
        let n = a.len();
        let mut c = vec![0u64; n];
        for (i, &ai) in a.iter().enumerate() {
            for (j, &bj) in b.iter().enumerate() {
                let p = multiply_uint_mod(ai, bj, q);
                let k = (i + j) % n;
                c[k] = if i + j < n {
                    crate::arith::add_uint_mod(c[k], p, q)
                } else {
                    crate::arith::sub_uint_mod(c[k], p, q)
                };
            }
        }
        c
    }

    #[test]
    fn pointwise_product_is_negacyclic_convolution() {
        let mut rng = rng();
        for log_n in 1..=7 {
            for q in primes(log_n) {
                let t = NttTables::new(log_n, &q).unwrap();
                let n = 1 << log_n;
                let a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..q.value())).collect();
                let b: Vec<u64> = (0..n).map(|_| rng.gen_range(0..q.value())).collect();
                let (mut fa, mut fb) = (a.clone(), b.clone());
                ntt_negacyclic_harvey(&mut fa, &t);
                ntt_negacyclic_harvey(&mut fb, &t);
                let mut prod: Vec<u64> = fa
                    .iter()
                    .zip(&fb)
                    .map(|(&x, &y)| multiply_uint_mod(x, y, &q))
                    .collect();
                inverse_ntt_negacyclic_harvey(&mut prod, &t);
                assert_eq!(
                    prod,
                    negacyclic_product(&a, &b, &q),
                    "N = {n}, q = {}",
                    q.value()
                );
            }
        }
    }

    #[test]
    fn forward_evaluates_at_odd_powers_in_bit_reversed_order() {
        for log_n in [1, 4, 10] {
            for q in primes(log_n) {
                let t = NttTables::new(log_n, &q).unwrap();
                let n = 1usize << log_n;
                // x^0 evaluates to 1 everywhere.
                let mut one = vec![0u64; n];
                one[0] = 1;
                ntt_negacyclic_harvey(&mut one, &t);
                assert!(one.iter().all(|&v| v == 1));
                // x^1 evaluates at psi^(2 bitrev(k) + 1) in slot k.
                let mut x = vec![0u64; n];
                x[1] = 1;
                ntt_negacyclic_harvey(&mut x, &t);
                for (k, &v) in x.iter().enumerate() {
                    let e = 2 * reverse_bits(k as u64, log_n) + 1;
                    assert_eq!(v, pow_uint_mod(t.get_root(), e, &q), "slot {k}");
                }
            }
        }
    }

    #[test]
    fn inverse_undoes_forward_and_lazy_ranges_hold() {
        let mut rng = rng();
        for log_n in [1, 2, 3, 8, 11] {
            for q in primes(log_n) {
                let t = NttTables::new(log_n, &q).unwrap();
                let n = 1 << log_n;
                let qv = q.value();
                let mut a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..qv)).collect();
                a[0] = 0;
                a[n - 1] = qv - 1;
                let orig = a.clone();
                // Lazy forward accepts [0, 4q): feed 4q - 1 and 2q + x and check the range.
                let mut lazy: Vec<u64> = a.iter().map(|&x| x + 2 * qv).collect();
                lazy[0] = 4 * qv - 1;
                ntt_negacyclic_harvey_lazy(&mut lazy, &t);
                assert!(lazy.iter().all(|&v| v < 4 * qv));
                let mut wide = a.clone();
                wide[0] = qv - 1;
                ntt_negacyclic_harvey(&mut wide, &t);
                assert!(lazy.iter().zip(&wide).all(|(&l, &w)| l % qv == w && w < qv));

                ntt_negacyclic_harvey(&mut a, &t);
                assert!(a.iter().all(|&v| v < qv));
                let mut lazy_inv = a.clone();
                inverse_ntt_negacyclic_harvey_lazy(&mut lazy_inv, &t);
                assert!(lazy_inv.iter().all(|&v| v < 2 * qv));
                inverse_ntt_negacyclic_harvey(&mut a, &t);
                assert_eq!(a, orig);
                assert!(lazy_inv.iter().zip(&orig).all(|(&l, &o)| l % qv == o));
            }
        }
    }

    #[test]
    fn batch_uses_prime_of_each_residue() {
        let log_n = 4;
        let ps = primes(log_n);
        let tables: Vec<NttTables> = ps[..3]
            .iter()
            .map(|q| NttTables::new(log_n, q).unwrap())
            .collect();
        let n = 1 << log_n;
        let mut values: Vec<u64> = (0..2 * 3 * n as u64).collect();
        let mut want = values.clone();
        for (i, chunk) in want.chunks_exact_mut(n).enumerate() {
            ntt_negacyclic_harvey(chunk, &tables[i % 3]);
        }
        transform_batch(&mut values, &tables, ntt_negacyclic_harvey);
        assert_eq!(values, want);
    }
}
