//! SEAL itself as the oracle: its modular arithmetic, prime generation and NTT, called
//! through a cxx bridge of the test kit's own (`testkit/cpp/oracle.cc`), which the host
//! references and kernels must match word for word (tests/bridge.rs, tests/seal_oracle.rs).
//! The library holds none of it: it links into tests, benchmarks and examples only.
//!
//! Each function fails (`Err(cxx::Exception)`) with `std::invalid_argument` (or SEAL's own
//! exception) for arguments SEAL would reject: SEAL checks these preconditions only in
//! SEAL_DEBUG builds, and ours is a Release build.

pub use bridge::*;

#[cxx::bridge(namespace = "seal_opencl_testkit")]
mod bridge {
    /// SEAL's `util::NTTTables` for one prime, array for array.
    ///
    /// `root_powers[i]` is the power of `root` at bit-reversed index `i` (0-th power
    /// at index 0), `inv_root_powers` SEAL's scrambled order of inverse powers; each
    /// `_quotient` entry is the Shoup quotient floor(operand * 2^64 / modulus).
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct SealNttTables {
        root: u64,
        inv_root: u64,
        root_powers: Vec<u64>,
        root_powers_quotient: Vec<u64>,
        inv_root_powers: Vec<u64>,
        inv_root_powers_quotient: Vec<u64>,
        /// n^-1 mod q and its Shoup quotient.
        inv_degree: u64,
        inv_degree_quotient: u64,
    }

    // SAFETY: every declaration matches testkit/cpp/oracle.h; the C++ functions validate
    // their arguments, throw instead of failing silently, and keep no reference to a slice
    // after they return.
    unsafe extern "C++" {
        include!("seal-opencl-testkit/cpp/oracle.h");

        /// SEAL's `NTTTables(coeff_count_power, Modulus(modulus))`.
        fn seal_ntt_tables(coeff_count_power: i32, modulus: u64) -> Result<SealNttTables>;
        /// SEAL's `ntt_negacyclic_harvey` on one polynomial of 2^coeff_count_power
        /// coefficients: on entry in [0, q) and standard order, on exit the NTT in
        /// [0, q) and bit-reversed order.
        fn seal_ntt_forward(coeff_count_power: i32, modulus: u64, data: &mut [u64]) -> Result<()>;
        /// SEAL's `inverse_ntt_negacyclic_harvey`, the inverse of `seal_ntt_forward`.
        fn seal_ntt_inverse(coeff_count_power: i32, modulus: u64, data: &mut [u64]) -> Result<()>;

        /// SEAL's `barrett_reduce_64`: x mod q.
        fn seal_barrett_reduce_64(x: u64, q: u64) -> Result<u64>;
        /// SEAL's `barrett_reduce_128`: (hi * 2^64 + lo) mod q.
        fn seal_barrett_reduce_128(lo: u64, hi: u64, q: u64) -> Result<u64>;
        /// SEAL's `multiply_uint_mod(a, b, q)`: a * b mod q.
        fn seal_multiply_uint_mod(a: u64, b: u64, q: u64) -> Result<u64>;
        /// SEAL's `MultiplyUIntModOperand::set`: floor(y * 2^64 / q) for y < q.
        fn seal_shoup_quotient(y: u64, q: u64) -> Result<u64>;
        /// SEAL's `multiply_uint_mod(x, {y, y_quotient}, q)`: x * y mod q for y < q,
        /// trusting the given quotient.
        fn seal_multiply_uint_mod_shoup(x: u64, y: u64, y_quotient: u64, q: u64) -> Result<u64>;

        /// SEAL's `util::get_primes`: `count` primes of `bit_size` bits that are
        /// 1 mod `factor`, largest first.
        fn seal_get_primes(factor: u64, bit_size: i32, count: usize) -> Result<Vec<u64>>;
        /// SEAL's `CoeffModulus::Create(poly_modulus_degree, bit_sizes)`.
        fn seal_coeff_modulus_create(
            poly_modulus_degree: u64,
            bit_sizes: &[i32],
        ) -> Result<Vec<u64>>;
    }
}
