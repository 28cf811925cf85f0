//! The bit-exact rule for SEAL's integer schemes: every BFV and BGV operation the backend runs
//! gives SEAL's CPU words and metadata from the same inputs (`seal_opencl_testkit::integer`),
//! at several parameter sets (N = 2^12 and 2^13, plain moduli of 17 to 40 bits), with pooled
//! device buffers poisoned so that unwritten words show up. An operation SEAL refuses (a
//! transparent result) throws the same exception routed. tests/seal_fuzz_integer.rs mixes them
//! at random.

use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::install;
use seal_opencl_testkit::harness::launches;
use seal_opencl_testkit::integer::{
    apsi_inner_polynomial, integer_operations, sealpir_expansion, IntegerCase, PARAMETER_SETS,
};

fn check_scheme(bgv: bool) {
    install();
    let scheme = if bgv { "BGV" } else { "BFV" };
    for (i, (log_n, bits, plain_bits)) in PARAMETER_SETS.into_iter().enumerate() {
        let case = IntegerCase {
            bgv,
            log_n,
            coeff_bits: bits.to_vec(),
            plain_bits,
            seed: rand::random(),
        };
        let outcomes = integer_operations(&case).unwrap_or_else(|e| panic!("{case:?}: {e}"));
        assert!(!outcomes.is_empty());
        for o in outcomes {
            let name = format!("{scheme} set {i} ({case:?}): {}", o.operation);
            assert_eq!(o.cpu_error, o.device_error, "{name}: SEAL threw otherwise");
            if !o.cpu_error.is_empty() {
                continue;
            }
            assert!(o.routed, "{name}: ran on the CPU");
            assert_eq!(o.cpu_metadata, o.device_metadata, "{name}: metadata");
            assert_eq!(
                o.first_difference, -1,
                "{name}: word {} differs from SEAL's",
                o.first_difference
            );
        }
    }
}

#[test]
fn bfv_operations_match_seal() {
    check_scheme(false);
}

#[test]
fn bgv_operations_match_seal() {
    check_scheme(true);
}

child_test! {
    /// Sums read on a chained pass's loads (`Sources`): at N = 2^13, where BFV's rotation and
    /// multiply_plain in coefficient form chain, a round of SealPIR's query expansion over
    /// four entries (each an apply_galois, an add, a sub and a multiply_plain by X^s, out of
    /// place; the entries' sums 3 terms long) launches once per entry: the rotation, reading
    /// its entry's pending sum. The adds and subs launch nothing, nor does the multiply_plain,
    /// which shifts the sub's terms (before: two per entry with the multiply_plain's launch,
    /// five without sums read on load). In a child process, since it installs the backend
    /// with the global profiler on.
    fn sealpir_expansion_launches_once_per_entry() [] {
        let profiler = seal_opencl::profiler::enable_global();
        install();
        let case = IntegerCase {
            bgv: false,
            log_n: 13,
            coeff_bits: PARAMETER_SETS[1].1.to_vec(),
            plain_bits: 20,
            seed: rand::random(),
        };
        assert_eq!(PARAMETER_SETS[1].0, 13);
        let rounds = |r| launches(&profiler, None, || sealpir_expansion(&case, r).unwrap());
        let (two, three) = (rounds(2), rounds(3));
        assert_eq!(three - two, 4, "round 3: {three} - {two} launches");
    }
}

child_test! {
    /// A sum of plaintext products read on the inverse transform's loads (`Sources::products`):
    /// at N = 2^13, where the level chains it, APSI's inner polynomial of 1 to 7 terms
    /// (multiply_plain in NTT form into a temporary, add_inplace into an accumulator,
    /// transform_from_ntt) launches twice: the ciphertext's transform to NTT form and the
    /// inverse transform of the sum. The products and adds launch nothing (before: three, with
    /// the sum's own launch; a sum of eight terms runs as it fills, so eight launch three).
    /// In a child process, since it installs the backend with the global profiler on.
    fn apsi_inner_polynomial_launches_twice() [] {
        let profiler = seal_opencl::profiler::enable_global();
        install();
        assert_eq!(PARAMETER_SETS[1].0, 13);
        for terms in [1, 4, 7] {
            let case = IntegerCase {
                bgv: false,
                log_n: 13,
                coeff_bits: PARAMETER_SETS[1].1.to_vec(),
                plain_bits: 20,
                seed: rand::random(),
            };
            let n = launches(&profiler, None, || apsi_inner_polynomial(&case, terms).unwrap());
            assert_eq!(n, 2, "{terms} terms: {n} launches");
        }
    }
}
