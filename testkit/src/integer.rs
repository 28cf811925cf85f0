//! SEAL's integer schemes (BFV, BGV) as their own oracle: `integer_operations` runs each
//! Evaluator operation on host copies of two fresh ciphertexts (SEAL's CPU path) and on marked
//! copies (routed to the installed backend), and says for each whether it was routed and whether
//! the words and metadata agree; `integer_fuzz` makes random sequences of them
//! (`testkit/cpp/integer.cc`). Install the backend first.

pub use bridge::*;

/// The parameter sets the tests and the fuzzing example run: (log2 N, bit sizes of the primes,
/// bits of the plain modulus), N = 2^12 and 2^13, plain moduli of 17 to 40 bits.
pub const PARAMETER_SETS: [(u32, &[i32], i32); 4] = [
    (12, &[36, 36, 37], 17),
    (13, &[50, 40, 40, 50], 20),
    (13, &[60, 60, 60], 40),
    (13, &[45, 30, 60, 30, 50], 24),
];

/// `calls` fuzzing calls at every parameter set for BFV (`bgv` false) or BGV, seeds drawn from
/// `seed`: the reports with their cases.
pub fn fuzz_scheme(
    bgv: bool,
    calls: u64,
    seed: u64,
) -> Result<Vec<(IntegerCase, IntegerFuzz)>, cxx::Exception> {
    PARAMETER_SETS
        .iter()
        .enumerate()
        .map(|(i, &(log_n, bits, plain_bits))| {
            let case = IntegerCase {
                bgv,
                log_n,
                coeff_bits: bits.to_vec(),
                plain_bits,
                seed: seed.wrapping_add(i as u64),
            };
            integer_fuzz(&case, calls).map(|report| (case, report))
        })
        .collect()
}

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
    /// copies and on marked copies, compared after every call (words, metadata, exception;
    /// after an exception the slot starts afresh on both sides: SEAL's CPU path may have
    /// written it before throwing, where a routed call leaves it unchanged).
    #[derive(Debug, Clone)]
    struct IntegerFuzz {
        /// Evaluator calls made on each side.
        calls: u64,
        /// Calls whose result the backend computed (its newer words on the device).
        routed: u64,
        mismatches: u64,
        /// The first mismatch: its call, operation and what differed, and the 40 calls up to
        /// it; empty with none.
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
        /// SealPIR's query expansion, `rounds` rounds (apply_galois, add, sub and
        /// multiply_plain by a monomial per entry, out of place) on an encryption marked for
        /// the device; the entries are dropped unread (what they defer never runs). For
        /// counting its launches.
        fn sealpir_expansion(c: &IntegerCase, rounds: u32) -> Result<()>;
        /// APSI's inner polynomial in NTT form: an encryption marked for the device and
        /// transformed to NTT form, `terms` multiply_plains of it by NTT-form plaintexts
        /// added into one accumulator, which is then transformed back (and dropped). For
        /// counting its launches.
        fn apsi_inner_polynomial(c: &IntegerCase, terms: u32) -> Result<()>;
    }
}
