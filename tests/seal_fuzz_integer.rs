//! Differential fuzzing of BFV and BGV (`seal_opencl_testkit::integer::integer_fuzz`): random
//! Evaluator calls on random operands, on SEAL's CPU copies and on marked copies, compared
//! after every call, at every parameter set of the integer tests. The backend checks
//! transparent results eagerly (`fuzz::install_backend`), as SEAL does at the call.
//! examples/seal_fuzz_integer.rs makes the long runs.

use seal_opencl_testkit::fuzz::install_backend;
use seal_opencl_testkit::integer::fuzz_scheme;

#[test]
fn fuzzing_finds_no_difference() {
    install_backend().unwrap();
    for bgv in [false, true] {
        let seed = rand::random();
        for (case, report) in fuzz_scheme(bgv, 150, seed).unwrap() {
            assert!(report.calls > 100, "{case:?}: {report:?}");
            // A good part of the calls is routed; the rest throw (no level left, a form the
            // operation refuses, too many polynomials) on both sides alike, or are copies or
            // BGV additions of unequal correction factors (62-73% routed in runs of 11000 draws).
            assert!(report.routed * 2 > report.calls, "{case:?}: {report:?}");
            assert_eq!(report.mismatches, 0, "{case:?}: {}", report.first);
        }
    }
}
