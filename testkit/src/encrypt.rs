//! SEAL's CKKS public-key encryption with a seeded PRNG (`Blake2xbPRNGFactory`), on SEAL's CPU
//! path and into a marked ciphertext (routed to the installed backend, seal-patch 0010), so that
//! the two can be compared word for word: the same seed draws the same keys and samples
//! (`testkit/cpp/encrypt.cc`). Install the backend first.

pub use bridge::*;

#[cxx::bridge(namespace = "seal_opencl_testkit")]
mod bridge {
    /// One encryption: CKKS at N = 2^log_n, primes of `coeff_bits` (the last the special
    /// prime), at the level `level` primes below the first data level, of zero
    /// (`Encryptor::encrypt_zero(parms_id)`) or, with `plain`, of an encoded vector
    /// (`Encryptor::encrypt`) at scale 2^`scale_bits`; keys and samples from `seed`.
    #[derive(Debug, Clone)]
    struct EncryptCase {
        log_n: u32,
        coeff_bits: Vec<i32>,
        level: u32,
        plain: bool,
        scale_bits: i32,
        seed: u64,
    }

    /// The ciphertext's words and metadata.
    #[derive(Debug, Clone, PartialEq)]
    struct Encrypted {
        words: Vec<u64>,
        parms_id: Vec<u64>,
        size: u64,
        coeff_modulus_size: u64,
        scale: f64,
        ntt_form: bool,
        correction_factor: u64,
        /// Whether the result was on the device only (routed) right after the call.
        device_newer: bool,
    }

    // SAFETY: every declaration matches testkit/cpp/encrypt.h; the C++ function validates its
    // arguments and throws instead of failing silently.
    unsafe extern "C++" {
        include!("seal-opencl-testkit/cpp/encrypt.h");

        /// The encryption of `c` into an unmarked ciphertext (SEAL's CPU path), or, with
        /// `gpu`, into a `.gpu()`-marked one.
        fn seeded_encrypt(c: &EncryptCase, gpu: bool) -> Result<Encrypted>;
    }
}
