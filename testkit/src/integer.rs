//! SEAL's integer schemes (BFV, BGV) as their own oracle: `integer_operations` runs each
//! Evaluator operation on host copies of two fresh ciphertexts (SEAL's CPU path) and on marked
//! copies (routed to the installed backend), and says for each whether it was routed and whether
//! the words and metadata agree; `integer_fuzz` makes random sequences of them
//! (`testkit/cpp/integer.cc`). Install the backend first.

pub use bridge::*;

#[cxx::bridge(namespace = "seal_opencl_testkit")]
mod bridge {
    /// One parameter set: BFV or BGV, N = 2^log_n, primes of `coeff_bits` (the last the special
    /// prime), a batching plain modulus of `plain_bits`, and the seed of the inputs.
    #[derive(Debug, Clone)]
    struct IntegerCase {
        bgv: bool,
        log_n: u32,
        coeff_bits: Vec<i32>,
        plain_bits: i32,
        seed: u64,
    }

    /// One operation's comparison of the routed result with SEAL's.
    #[derive(Debug, Clone)]
    struct IntegerOutcome {
        operation: String,
        /// The exception SEAL's CPU path threw, as "type: message", or empty.
        cpu_error: String,
        /// The exception the routed path threw, likewise.
        device_error: String,
        /// The result's newer words are on the device (the backend computed it).
        routed: bool,
        /// The CPU result's parms_id (first word), size, NTT form, correction factor and scale.
        cpu_metadata: String,
        /// The routed result's, likewise.
        device_metadata: String,
        /// The first word that differs, or -1.
        first_difference: i64,
    }

    /// A differential fuzzing run: random operations on random operands, each on SEAL's CPU
    /// copies and on marked copies, compared after every call (words, metadata, exception).
    #[derive(Debug, Clone)]
    struct IntegerFuzz {
        /// Evaluator calls made on each side.
        calls: u64,
        mismatches: u64,
        /// The first mismatch: its call, operation and what differed; empty with none.
        first: String,
    }

    // SAFETY: the declaration matches testkit/cpp/integer.h; the function keeps no reference
    // to its argument after it returns.
    unsafe extern "C++" {
        include!("seal-opencl-testkit/cpp/integer.h");

        /// Every operation of the case's scheme, in a fixed order.
        fn integer_operations(c: &IntegerCase) -> Result<Vec<IntegerOutcome>>;
        /// `calls` random Evaluator calls on four ciphertexts of the case (a slot refilled
        /// with a fresh encryption one draw in 16); after a mismatch the run goes on from
        /// SEAL's words.
        fn integer_fuzz(c: &IntegerCase, calls: u64) -> Result<IntegerFuzz>;
    }
}
