//! SEAL's BFV on the CPU as the oracle of `seal_opencl::integer`: encryption of random
//! plaintexts and `Evaluator::multiply` / `square`, through a cxx bridge of the test kit's
//! own (`testkit/cpp/oracle_bfv.cc`). The library holds none of it.

pub use bridge::*;

#[cxx::bridge(namespace = "seal_opencl_testkit")]
mod bridge {
    /// Two fresh BFV ciphertexts and SEAL's products of them, every ciphertext as its words
    /// in SEAL's layout (polynomial, then prime, then coefficient), in coefficient form.
    #[derive(Debug, Clone)]
    struct SealBfvProducts {
        /// The ciphertexts' level: its coefficient modulus.
        level_moduli: Vec<u64>,
        /// SEAL's Bsk at that level (`RNSTool::base_Bsk`): B's primes, then m_sk.
        base_bsk: Vec<u64>,
        /// Two polynomials each.
        ct1: Vec<u64>,
        ct2: Vec<u64>,
        /// `multiply(ct1, ct2)`: three polynomials.
        product: Vec<u64>,
        /// `square(ct1)`: three polynomials.
        square: Vec<u64>,
        /// `multiply(product, ct2)`: four polynomials.
        product3: Vec<u64>,
    }

    // SAFETY: the declaration matches testkit/cpp/oracle_bfv.h; the C++ function validates
    // its arguments, throws instead of failing silently, and keeps no reference to the
    // slice after it returns.
    unsafe extern "C++" {
        include!("seal-opencl-testkit/cpp/oracle_bfv.h");

        /// A BFV context for N = 2^log_n, the key level's `coeff_modulus` and
        /// `plain_modulus` (no security check); two encryptions of plaintexts drawn from a
        /// generator seeded with `seed`, switched `levels_down` levels down; SEAL's
        /// products of them.
        fn seal_bfv_products(
            log_n: u32,
            coeff_modulus: &[u64],
            plain_modulus: u64,
            levels_down: usize,
            seed: u64,
        ) -> Result<SealBfvProducts>;
    }
}
