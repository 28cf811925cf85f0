//! SEAL's BFV and BGV as the oracle of `seal_opencl::integer`: real ciphertexts and keys of
//! one parameter set and SEAL's CPU results of the operations that key-switch or divide by a
//! dropped prime (relinearize after multiply, apply_galois, mod_switch_to_next), through a
//! cxx bridge of the test kit's own (`testkit/cpp/oracle_integer.cc`). The device's results
//! must equal these word for word (tests/integer_ops.rs).

pub use bridge::*;

#[cxx::bridge(namespace = "seal_opencl_testkit")]
mod bridge {
    /// One BFV or BGV parameter set and SEAL's results on it. Words are SEAL's layout
    /// (polynomial, prime, coefficient); keys as `seal_opencl::ckks::context::KswitchKey`
    /// takes them (a key vector's public keys one after another, each 2 polynomials over
    /// every key prime).
    #[derive(Debug, Clone)]
    struct IntegerCase {
        /// The key level's primes: the data primes, then the special prime.
        key_moduli: Vec<u64>,
        plain_modulus: u64,
        /// Whether the scheme's ciphertexts are in NTT form (BGV from SEAL 4.1).
        ntt_form: bool,
        /// K, the primes of the level the ciphertexts are at.
        primes: usize,
        /// SEAL's multiply of two fresh ciphertexts (3 polynomials).
        product: Vec<u64>,
        /// SEAL's relinearize of `product` (2 polynomials).
        relinearized: Vec<u64>,
        /// The relinearization key (key vector 0 of the RelinKeys) and its key count.
        relin_key: Vec<u64>,
        relin_key_count: usize,
        /// A fresh ciphertext (2 polynomials).
        ct: Vec<u64>,
        /// The galois element of the requested rotation and SEAL's apply_galois of `ct`.
        galois_elt: u32,
        rotated: Vec<u64>,
        /// The galois element's key vector and its key count.
        galois_key: Vec<u64>,
        galois_key_count: usize,
        /// SEAL's mod_switch_to_next of `ct` (K - 1 primes); empty at K = 1.
        mod_switched: Vec<u64>,
    }

    // SAFETY: the declaration matches testkit/cpp/oracle_integer.h; the C++ function
    // validates its arguments, throws instead of failing silently, and keeps no reference to
    // a slice after it returns.
    unsafe extern "C++" {
        include!("seal-opencl-testkit/cpp/oracle_integer.h");

        /// A `scheme` ("bfv" or "bgv") parameter set of degree `poly_modulus_degree` with
        /// `CoeffModulus::Create(degree, coeff_bit_sizes)` (the last prime special) and a
        /// batching plain modulus of `plain_bits` bits, security checks off; two random
        /// ciphertexts switched down `drops` levels; the rotation is rotate_rows by
        /// `row_step` (0: rotate_columns).
        fn seal_integer_case(
            scheme: &str,
            poly_modulus_degree: u64,
            coeff_bit_sizes: &[i32],
            plain_bits: i32,
            drops: usize,
            row_step: i32,
        ) -> Result<IntegerCase>;
    }
}
