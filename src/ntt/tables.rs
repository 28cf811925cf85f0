//! NTT tables after SEAL's `util/ntt.h` (`NTTTables::initialize`): the same minimal
//! primitive 2N-th root, the same bit-reversed and scrambled orders, the same Shoup
//! operands. The device plans upload these arrays unchanged, so any table the kernels use
//! can be diffed against SEAL's entry by entry.

use crate::arith::{
    invert_uint_mod, minimal_primitive_root, multiply_uint_mod_shoup, Modulus, ShoupOperand,
};
use crate::error::{Error, Result};

/// SEAL's range of `coeff_count_power`: polynomial degrees 2 (`SEAL_POLY_MOD_DEGREE_MIN`)
/// to 131072 (`SEAL_POLY_MOD_DEGREE_MAX`).
pub const COEFF_COUNT_POWER_MIN: u32 = 1;
pub const COEFF_COUNT_POWER_MAX: u32 = 17;

/// The low `bit_count` bits of `operand` in reverse order (SEAL's `reverse_bits`).
pub fn reverse_bits(operand: u64, bit_count: u32) -> u64 {
    if bit_count == 0 {
        0
    } else {
        operand.reverse_bits() >> (64 - bit_count)
    }
}

/// Precomputed powers of a primitive 2N-th root of unity for one prime, as SEAL's
/// `NTTTables`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttTables {
    root: u64,
    inv_root: u64,
    coeff_count_power: u32,
    coeff_count: usize,
    modulus: Modulus,
    /// N^-1 mod q.
    inv_degree_modulo: ShoupOperand,
    /// `root_powers[reverse_bits(i, log N)] = root^i` for 1 <= i < N; entry 0 is 1.
    root_powers: Vec<ShoupOperand>,
    /// `inv_root_powers[reverse_bits(i - 1, log N) + 1] = root^-i` for 1 <= i < N;
    /// entry 0 is 1.
    inv_root_powers: Vec<ShoupOperand>,
}

impl NttTables {
    /// The tables for N = 2^`coeff_count_power` and `modulus`.
    ///
    /// Errors (`InvalidArgument`, as SEAL throws `invalid_argument`): `coeff_count_power`
    /// outside 1..=17, or no primitive 2N-th root of unity mod `modulus` (it is not a
    /// prime that is 1 mod 2N).
    pub fn new(coeff_count_power: u32, modulus: &Modulus) -> Result<Self> {
        if !(COEFF_COUNT_POWER_MIN..=COEFF_COUNT_POWER_MAX).contains(&coeff_count_power) {
            return Err(Error::invalid(format!(
                "coeff_count_power {coeff_count_power} out of range \
                 {COEFF_COUNT_POWER_MIN}..={COEFF_COUNT_POWER_MAX}"
            )));
        }
        let coeff_count = 1usize << coeff_count_power;
        let invalid = || {
            Error::invalid(format!(
                "invalid modulus {} for an NTT of size {coeff_count}",
                modulus.value()
            ))
        };
        let root = minimal_primitive_root(2 * coeff_count as u64, modulus).ok_or_else(invalid)?;
        let inv_root = invert_uint_mod(root, modulus).ok_or_else(invalid)?;

        let powers_in = |base: u64, place: &dyn Fn(usize) -> usize| {
            let one = ShoupOperand::new(1, modulus);
            let mut table = vec![one; coeff_count];
            let step = ShoupOperand::new(base, modulus);
            let mut power = base;
            for i in 1..coeff_count {
                table[place(i)] = ShoupOperand::new(power, modulus);
                power = multiply_uint_mod_shoup(power, step, modulus);
            }
            table
        };
        let root_powers = powers_in(root, &|i| {
            reverse_bits(i as u64, coeff_count_power) as usize
        });
        let inv_root_powers = powers_in(inv_root, &|i| {
            reverse_bits(i as u64 - 1, coeff_count_power) as usize + 1
        });

        let inv_degree = invert_uint_mod(coeff_count as u64, modulus).ok_or_else(invalid)?;
        Ok(NttTables {
            root,
            inv_root,
            coeff_count_power,
            coeff_count,
            modulus: *modulus,
            inv_degree_modulo: ShoupOperand::new(inv_degree, modulus),
            root_powers,
            inv_root_powers,
        })
    }

    /// The minimal primitive 2N-th root of unity the tables are built from.
    pub fn get_root(&self) -> u64 {
        self.root
    }

    /// root^-1 mod q.
    pub fn get_inv_root(&self) -> u64 {
        self.inv_root
    }

    /// Powers of the root in bit-reversed order (N entries; entry 0 is 1).
    pub fn get_from_root_powers(&self) -> &[ShoupOperand] {
        &self.root_powers
    }

    /// Powers of the inverse root in SEAL's scrambled order (N entries; entry 0 is 1).
    pub fn get_from_inv_root_powers(&self) -> &[ShoupOperand] {
        &self.inv_root_powers
    }

    pub fn inv_degree_modulo(&self) -> ShoupOperand {
        self.inv_degree_modulo
    }

    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    pub fn coeff_count_power(&self) -> u32 {
        self.coeff_count_power
    }

    pub fn coeff_count(&self) -> usize {
        self.coeff_count
    }
}

/// One `NttTables` per modulus, in order (SEAL's `CreateNTTTables`).
///
/// Errors: `moduli` is empty, or any of `NttTables::new`'s.
pub fn create_ntt_tables(coeff_count_power: u32, moduli: &[Modulus]) -> Result<Vec<NttTables>> {
    if moduli.is_empty() {
        return Err(Error::invalid("invalid modulus: no moduli given"));
    }
    moduli
        .iter()
        .map(|m| NttTables::new(coeff_count_power, m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{get_primes, pow_uint_mod};

    #[test]
    fn powers_sit_where_seal_puts_them() {
        let log_n = 5;
        let q = Modulus::new(get_primes(64, 30, 1).unwrap()[0]).unwrap();
        let t = NttTables::new(log_n, &q).unwrap();
        let n = 1u64 << log_n;
        assert_eq!(pow_uint_mod(t.get_root(), n, &q), q.value() - 1);
        assert_eq!(
            t.get_root() as u128 * t.get_inv_root() as u128 % q.value() as u128,
            1
        );
        for i in 1..n {
            let w = t.get_from_root_powers()[reverse_bits(i, log_n) as usize];
            assert_eq!(w, ShoupOperand::new(pow_uint_mod(t.get_root(), i, &q), &q));
            let wi = t.get_from_inv_root_powers()[reverse_bits(i - 1, log_n) as usize + 1];
            assert_eq!(wi.operand, pow_uint_mod(t.get_inv_root(), i, &q));
        }
        assert_eq!(t.get_from_root_powers()[0].operand, 1);
        assert_eq!(t.get_from_inv_root_powers()[0].operand, 1);
        assert_eq!(t.inv_degree_modulo().operand * n % q.value(), 1);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let q = Modulus::new(get_primes(1 << 11, 30, 1).unwrap()[0]).unwrap();
        assert!(NttTables::new(0, &q).is_err());
        assert!(NttTables::new(18, &q).is_err());
        // q is 1 mod 2^11 but (almost surely) not 1 mod 2^18.
        assert!(q.value() % (1 << 18) != 1 && NttTables::new(17, &q).is_err());
        assert!(NttTables::new(10, &q).is_ok());
        assert!(create_ntt_tables(10, &[]).is_err());
        // 2^16 + 1 is prime but a primitive 2^18-th root cannot exist mod it.
        assert!(NttTables::new(17, &Modulus::new(65537).unwrap()).is_err());
    }

    #[test]
    fn reverse_bits_matches_definition() {
        assert_eq!(reverse_bits(0b0011, 4), 0b1100);
        assert_eq!(reverse_bits(1, 1), 1);
        assert_eq!(reverse_bits(5, 0), 0);
        assert_eq!(reverse_bits(1, 17), 1 << 16);
    }
}
