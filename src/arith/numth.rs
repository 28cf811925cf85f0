//! Number theory after SEAL's `util/numth` and `CoeffModulus::Create`: the primes SEAL
//! picks and the root of unity its NTT tables start from. Both must equal SEAL's choice
//! exactly, or no NTT-domain word would match.

use super::{multiply_uint_mod, Modulus};
use crate::error::{Error, Result};

/// SEAL's bounds on polynomial degree and user modulus bit sizes.
const POLY_MOD_DEGREE_MIN: u64 = 2;
const POLY_MOD_DEGREE_MAX: u64 = 131072;
const USER_MOD_BIT_COUNT_MIN: i32 = 2;
const USER_MOD_BIT_COUNT_MAX: i32 = 60;

/// base^exp mod q.
pub fn pow_uint_mod(mut base: u64, mut exp: u64, modulus: &Modulus) -> u64 {
    let mut result = 1 % modulus.value();
    base %= modulus.value();
    while exp > 0 {
        if exp & 1 == 1 {
            result = multiply_uint_mod(result, base, modulus);
        }
        base = multiply_uint_mod(base, base, modulus);
        exp >>= 1;
    }
    result
}

/// a^-1 mod q, or None when gcd(a, q) != 1.
pub fn invert_uint_mod(a: u64, modulus: &Modulus) -> Option<u64> {
    let q = modulus.value() as i128;
    let (mut r0, mut r1) = (q, (a % modulus.value()) as i128);
    let (mut t0, mut t1) = (0i128, 1i128);
    while r1 != 0 {
        let k = r0 / r1;
        (r0, r1) = (r1, r0 - k * r1);
        (t0, t1) = (t1, t0 - k * t1);
    }
    (r0 == 1).then(|| t0.rem_euclid(q) as u64)
}

/// Deterministic Miller-Rabin: these twelve bases decide primality for every u64. SEAL
/// uses 40 random bases; on 64-bit inputs both give the same answer.
pub fn is_prime(value: u64) -> bool {
    if value < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for p in BASES {
        if value.is_multiple_of(p) {
            return value == p;
        }
    }
    // value is odd and > 37 here, so a 61-bit bound is not needed: use u128 directly.
    let mulmod = |a: u64, b: u64| ((a as u128 * b as u128) % value as u128) as u64;
    let powmod = |mut b: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mulmod(r, b);
            }
            b = mulmod(b, b);
            e >>= 1;
        }
        r
    };
    let d_shift = (value - 1).trailing_zeros();
    let d = (value - 1) >> d_shift;
    'bases: for a in BASES {
        let mut x = powmod(a, d);
        if x == 1 || x == value - 1 {
            continue;
        }
        for _ in 1..d_shift {
            x = mulmod(x, x);
            if x == value - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// The `count` largest primes of exactly `bit_size` bits that are 1 mod `factor`,
/// largest first (SEAL's `util::get_primes`). `bit_size` goes up to SEAL's
/// `SEAL_MOD_BIT_COUNT_MAX` (61): SEAL's own BFV base extension (`RNSTool`) asks for
/// 61-bit primes, one bit more than a user's coefficient modulus may have.
pub fn get_primes(factor: u64, bit_size: i32, count: usize) -> Result<Vec<u64>> {
    let max_bits = super::MODULUS_MAX_BITS as i32;
    if !(USER_MOD_BIT_COUNT_MIN..=max_bits).contains(&bit_size) || factor == 0 {
        return Err(Error::invalid(format!(
            "cannot look for {bit_size}-bit primes that are 1 mod {factor}"
        )));
    }
    let mut out = Vec::with_capacity(count);
    let mut value = ((1u64 << bit_size) - 1) / factor * factor + 1;
    let lower_bound = 1u64 << (bit_size - 1);
    while out.len() < count && value > lower_bound {
        if is_prime(value) {
            out.push(value);
        }
        value = match value.checked_sub(factor) {
            Some(v) => v,
            None => break,
        };
    }
    if out.len() < count {
        return Err(Error::Logic(format!(
            "failed to find {count} {bit_size}-bit primes that are 1 mod {factor}"
        )));
    }
    Ok(out)
}

/// The coefficient modulus SEAL's `CoeffModulus::Create(poly_modulus_degree, bit_sizes)`
/// returns: for each bit size, primes 1 mod 2N taken from the smallest of the largest
/// ones, in SEAL's order.
pub fn coeff_modulus_create(poly_modulus_degree: u64, bit_sizes: &[i32]) -> Result<Vec<u64>> {
    if !(POLY_MOD_DEGREE_MIN..=POLY_MOD_DEGREE_MAX).contains(&poly_modulus_degree)
        || !poly_modulus_degree.is_power_of_two()
    {
        return Err(Error::invalid("poly_modulus_degree is invalid"));
    }
    if bit_sizes
        .iter()
        .any(|b| !(USER_MOD_BIT_COUNT_MIN..=USER_MOD_BIT_COUNT_MAX).contains(b))
    {
        return Err(Error::invalid("bit_sizes is invalid"));
    }
    let mut table: std::collections::BTreeMap<i32, Vec<u64>> = Default::default();
    for &b in bit_sizes {
        table.entry(b).or_default();
    }
    for (&b, primes) in table.iter_mut() {
        let count = bit_sizes.iter().filter(|&&x| x == b).count();
        *primes = get_primes(2 * poly_modulus_degree, b, count)?;
    }
    Ok(bit_sizes
        .iter()
        .map(|b| table.get_mut(b).and_then(Vec::pop).expect("counted above"))
        .collect())
}

/// The smallest primitive `degree`-th root of unity mod a prime q (degree a power of
/// two dividing q - 1), as SEAL's `try_minimal_primitive_root`.
pub fn minimal_primitive_root(degree: u64, modulus: &Modulus) -> Option<u64> {
    let q = modulus.value();
    if degree < 2 || !degree.is_power_of_two() || !(q - 1).is_multiple_of(degree) {
        return None;
    }
    let is_primitive = |r: u64| pow_uint_mod(r, degree / 2, modulus) == q - 1;
    // Any non-residue-like x gives x^((q-1)/degree) of full order; try small x in turn.
    let root = (2..q)
        .take(1 << 16)
        .map(|x| pow_uint_mod(x, (q - 1) / degree, modulus))
        .find(|&r| is_primitive(r))?;
    // Every primitive root is an odd power of any one of them.
    let square = multiply_uint_mod(root, root, modulus);
    let mut current = root;
    let mut minimal = root;
    for _ in 0..degree / 2 {
        minimal = minimal.min(current);
        current = multiply_uint_mod(current, square, modulus);
    }
    Some(minimal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primality_matches_trial_division() {
        let trial = |n: u64| {
            n >= 2
                && (2..)
                    .take_while(|d| d * d <= n)
                    .all(|d| !n.is_multiple_of(d))
        };
        for n in 0..20_000u64 {
            assert_eq!(is_prime(n), trial(n), "{n}");
        }
        // Strong pseudoprimes to several small bases.
        for n in [3215031751u64, 2152302898747, 3474749660383, 341550071728321] {
            assert!(!is_prime(n), "{n}");
        }
        assert!(is_prime((1 << 61) - 1));
    }

    #[test]
    fn primes_are_one_mod_factor_with_the_asked_size() {
        for (bits, count) in [(17, 1), (30, 3), (50, 3), (60, 3)] {
            let primes = get_primes(2 * 8192, bits, count).unwrap();
            assert_eq!(primes.len(), count);
            for p in primes {
                assert_eq!(64 - p.leading_zeros(), bits as u32);
                assert_eq!(p % (2 * 8192), 1);
                assert!(is_prime(p));
            }
        }
        // Only two 17-bit primes are 1 mod 2^14: asking for three is an error, as in SEAL.
        assert!(get_primes(2 * 8192, 17, 3).is_err());
    }

    #[test]
    fn minimal_root_is_primitive_and_minimal() {
        let q = Modulus::new(get_primes(64, 20, 1).unwrap()[0]).unwrap();
        let root = minimal_primitive_root(64, &q).unwrap();
        assert_eq!(pow_uint_mod(root, 32, &q), q.value() - 1);
        let smaller = (1..root).find(|&r| pow_uint_mod(r, 32, &q) == q.value() - 1);
        assert_eq!(smaller, None);
    }

    #[test]
    fn inverse() {
        let q = Modulus::new(1_000_003).unwrap();
        for a in [1u64, 2, 999_999, 123_456] {
            let inv = invert_uint_mod(a, &q).unwrap();
            assert_eq!(a as u128 * inv as u128 % 1_000_003, 1);
        }
        assert_eq!(invert_uint_mod(0, &q), None);
    }
}
