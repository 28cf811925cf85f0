//! SEAL's base conversion between RNS bases (`util/rns.cpp`'s `BaseConverter` and the parts
//! of `RNSBase` it needs), the multiprecision arithmetic on products of primes that SEAL's
//! `RNSTool` initialises its constants with (`util/uintarith`'s `modulo_uint`,
//! `get_significant_bit_count_uint`), and `util/uintarithsmallmod`'s `dot_product_mod`: the
//! host side of `crate::integer::behz`.

use crate::arith::{
    barrett_reduce_128, barrett_reduce_64, invert_uint_mod, multiply_uint_mod_shoup, Modulus,
    ShoupOperand,
};
use crate::error::{Error, Result};

/// The most primes an input base of a base conversion may have here: SEAL's
/// `dot_product_mod` sums at most 16 products of two words in 128 bits before it reduces
/// (larger sums it splits; the device kernels do not), so K and NB are at most 16.
pub const BEHZ_BASE_MAX: usize = 16;

/// A multiprecision unsigned integer, least significant word first.
pub(super) type BigUint = Vec<u64>;

/// The product of `moduli` (SEAL's `RNSBase::base_prod`).
pub(super) fn product(moduli: &[Modulus]) -> BigUint {
    let mut out = vec![1u64];
    for m in moduli {
        let mut carry = 0u128;
        for w in out.iter_mut() {
            let t = *w as u128 * m.value() as u128 + carry;
            *w = t as u64;
            carry = t >> 64;
        }
        if carry != 0 {
            out.push(carry as u64);
        }
    }
    out
}

/// x mod m, exact (SEAL's `modulo_uint`).
pub(super) fn modulo_uint(x: &[u64], m: u64) -> u64 {
    x.iter()
        .rev()
        .fold(0u128, |r, &w| ((r << 64) | w as u128) % m as u128) as u64
}

/// The bit count of x (SEAL's `get_significant_bit_count_uint`).
pub(super) fn significant_bits(x: &[u64]) -> u32 {
    match x.iter().rposition(|&w| w != 0) {
        Some(i) => 64 * i as u32 + 64 - x[i].leading_zeros(),
        None => 0,
    }
}

/// Errors unless the slice `what` of `len` words holds at least `needed`.
pub(super) fn check_len(step: &str, what: &str, len: usize, needed: usize) -> Result<()> {
    if len < needed {
        return Err(Error::invalid(format!(
            "{step}: `{what}` holds {len} words; {needed} needed"
        )));
    }
    Ok(())
}

/// a^-1 mod m, or SEAL's logic_error "invalid rns bases".
pub(super) fn invert(a: u64, m: &Modulus) -> Result<u64> {
    invert_uint_mod(a, m).ok_or_else(|| Error::Logic("invalid rns bases".into()))
}

/// SEAL's `dot_product_mod`: sum a_i b_i accumulated exactly in 128 bits and reduced once
/// by Barrett; past 16 terms, the last count - 16 are reduced first (recursively) and
/// their residue starts the sum of the first 16.
pub fn dot_product_mod(a: &[u64], b: &[u64], modulus: &Modulus) -> u64 {
    let count = a.len().min(b.len());
    if count == 0 {
        return 0;
    }
    let (head, mut acc) = if count > BEHZ_BASE_MAX {
        let rest = dot_product_mod(&a[BEHZ_BASE_MAX..count], &b[BEHZ_BASE_MAX..count], modulus);
        (BEHZ_BASE_MAX, rest as u128)
    } else {
        (count, 0u128)
    };
    for (x, y) in a[..head].iter().zip(&b[..head]) {
        acc = acc.wrapping_add(*x as u128 * *y as u128);
    }
    barrett_reduce_128(acc as u64, (acc >> 64) as u64, modulus)
}

/// SEAL's `BaseConverter` from `ibase` to `obase`: the input's residues times
/// (Q / q_i)^-1 mod q_i, then for each output prime p the sum of those times Q / q_i mod p
/// (Q = prod ibase): x mod p up to a multiple of Q (the "fast" conversion).
#[derive(Clone, Debug)]
pub struct BaseConverter {
    ibase: Vec<Modulus>,
    obase: Vec<Modulus>,
    /// (Q / q_i)^-1 mod q_i (SEAL's `inv_punctured_prod_mod_base_array`).
    inv_punctured: Vec<ShoupOperand>,
    /// Row j, column i: (Q / q_i) mod p_j (SEAL's `base_change_matrix_`).
    matrix: Vec<Vec<u64>>,
}

impl BaseConverter {
    /// SEAL's `BaseConverter(ibase, obase)`. Errors: `Logic` ("invalid rns bases") where a
    /// prime of ibase shares a factor with another.
    pub fn new(ibase: &[Modulus], obase: &[Modulus]) -> Result<BaseConverter> {
        let punctured: Vec<BigUint> = (0..ibase.len())
            .map(|i| {
                let others: Vec<Modulus> = (0..ibase.len())
                    .filter(|&l| l != i)
                    .map(|l| ibase[l])
                    .collect();
                product(&others)
            })
            .collect();
        let inv_punctured = ibase
            .iter()
            .zip(&punctured)
            .map(|(q, p)| Ok(ShoupOperand::new(invert(modulo_uint(p, q.value()), q)?, q)))
            .collect::<Result<_>>()?;
        let matrix = obase
            .iter()
            .map(|o| {
                punctured
                    .iter()
                    .map(|p| modulo_uint(p, o.value()))
                    .collect()
            })
            .collect();
        Ok(BaseConverter {
            ibase: ibase.to_vec(),
            obase: obase.to_vec(),
            inv_punctured,
            matrix,
        })
    }

    /// (Q / q_i)^-1 mod q_i for each input prime.
    pub fn inv_punctured(&self) -> &[ShoupOperand] {
        &self.inv_punctured
    }

    /// Row j: (Q / q_i) mod p_j for each input prime i.
    pub fn matrix(&self) -> &[Vec<u64>] {
        &self.matrix
    }

    /// SEAL's `fast_convert_array`: `input` holds ibase.len() residues of `n` words (each
    /// below 2^64; multiplied by Shoup, or reduced by Barrett where (Q / q_i)^-1 = 1), `out`
    /// gets obase.len() residues, canonical. Errors: a slice too short.
    pub fn fast_convert_array(&self, input: &[u64], out: &mut [u64], n: usize) -> Result<()> {
        let k = self.ibase.len();
        check_len("fast_convert_array", "input", input.len(), k * n)?;
        check_len("fast_convert_array", "out", out.len(), self.obase.len() * n)?;
        let mut temp = vec![0u64; n * k];
        for (i, (q, inv)) in self.ibase.iter().zip(&self.inv_punctured).enumerate() {
            for (c, &x) in input[i * n..(i + 1) * n].iter().enumerate() {
                temp[c * k + i] = if inv.operand == 1 {
                    barrett_reduce_64(x, q)
                } else {
                    multiply_uint_mod_shoup(x, *inv, q)
                };
            }
        }
        for (j, (p, row)) in self.obase.iter().zip(&self.matrix).enumerate() {
            for (c, o) in out[j * n..(j + 1) * n].iter_mut().enumerate() {
                *o = dot_product_mod(&temp[c * k..(c + 1) * k], row, p);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multiprecision helpers against u128 arithmetic where it suffices.
    #[test]
    fn products_and_remainders_are_exact() {
        let moduli = [
            Modulus::new((1 << 61) - 1).unwrap(),
            Modulus::new(12289).unwrap(),
        ];
        let p = product(&moduli);
        let expected = ((1u128 << 61) - 1) * 12289;
        assert_eq!(p, vec![expected as u64, (expected >> 64) as u64]);
        assert_eq!(modulo_uint(&p, 1_000_003), (expected % 1_000_003) as u64);
        assert_eq!(significant_bits(&p), 128 - expected.leading_zeros());
        assert_eq!(significant_bits(&[0, 0]), 0);
    }
}
