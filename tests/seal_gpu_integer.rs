//! The bit-exact rule for SEAL's integer schemes: every BFV and BGV operation the backend runs
//! gives SEAL's CPU words and metadata from the same inputs (`seal_opencl_testkit::integer`),
//! at several parameter sets (N = 2^12 and 2^13, plain moduli of 17 to 40 bits), with pooled
//! device buffers poisoned so that unwritten words show up. An operation SEAL refuses (a
//! transparent result) throws the same exception routed. A short differential fuzzing run per
//! scheme mixes them at random.

use seal_opencl_testkit::fixture::install;
use seal_opencl_testkit::integer::{integer_fuzz, integer_operations, IntegerCase};

/// (log2 N, bit sizes of the primes, bits of the plain modulus).
const PARAMETER_SETS: [(u32, &[i32], i32); 4] = [
    (12, &[36, 36, 37], 17),
    (13, &[50, 40, 40, 50], 20),
    (13, &[60, 60, 60], 40),
    (13, &[45, 30, 60, 30, 50], 24),
];

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

/// A short differential fuzzing run per scheme and parameter set (examples/seal_fuzz_integer.rs
/// makes the long ones): no call may differ from SEAL's.
#[test]
fn fuzzing_finds_no_difference() {
    install();
    for bgv in [false, true] {
        for (log_n, bits, plain_bits) in PARAMETER_SETS {
            let case = IntegerCase {
                bgv,
                log_n,
                coeff_bits: bits.to_vec(),
                plain_bits,
                seed: rand::random(),
            };
            let report = integer_fuzz(&case, 150).unwrap_or_else(|e| panic!("{case:?}: {e}"));
            assert!(report.calls > 100, "{case:?}: {report:?}");
            assert_eq!(report.mismatches, 0, "{case:?}: {}", report.first);
        }
    }
}
