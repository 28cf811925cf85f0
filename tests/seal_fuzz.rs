//! Differential fuzzing (`seal_opencl_testkit::fuzz`) in small: random programs of
//! every routed operation, valid and invalid, on `.gpu()` copies and on SEAL's CPU path,
//! over parameter sets of N = 2^12 and 2^13 (one prime without key switching, two primes,
//! more levels, 30- to 60-bit primes), with a fixed seed. `examples/seal_fuzz.rs` runs the
//! large version on the GPU machine. The backend needs eager transparency checks
//! (`fuzz::install_backend`); the detection test runs in a child process, since it
//! installs with cross-checking on and arms the process's cross-check test hook.

use rand::SeedableRng;
use seal_opencl::config::CROSSCHECK;
use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fuzz::{self, Kind, ParamSet, Program, Setup};

const SEED: u64 = 0x5ea1_f022;

/// Parameter sets of the test, in `examples/seal_fuzz.rs`'s `--params` syntax: a single
/// prime (no special prime, no key switching), the smallest chain with key switching, mixed
/// sizes, 60-bit primes, and many small primes.
const SETS: &str = "12:50;12:30,30;12:40,30,30,50;13:60,60,60;13:30x8";

/// Random programs on every parameter set give SEAL's words, or SEAL's errors, on the
/// device. The one test of this process that installs the backend.
#[test]
fn random_programs_give_seals_words_and_errors() {
    fuzz::install_backend().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(SEED);
    let mut total = fuzz::Counts::default();
    for set in ParamSet::parse_list(SETS).unwrap() {
        let setup = Setup::new(&set).unwrap();
        for _ in 0..6 {
            let program = Program::random(&mut rng, 60);
            match fuzz::run(&setup, &program).unwrap() {
                Ok(counts) => total.add(counts),
                Err(failure) => {
                    let short = fuzz::shrink(&program, 200, |p| Ok(fuzz::run(&setup, p)?.is_err()))
                        .unwrap();
                    panic!(
                        "{set}: {failure}\nshortest reproducer:\n{}",
                        fuzz::trace(&setup, &short).unwrap().join("\n")
                    );
                }
            }
        }
    }
    eprintln!("{total:?}");
    // Both outcomes occur, so the comparison of each ran.
    assert!(total.valid > 500 && total.invalid > 200, "{total:?}");
}

child_test! {
    /// A device result with one wrong bit (the cross-check's test hook makes the GPU path
    /// throw) is a failure the fuzzer reports at its step.
    fn a_wrong_device_result_is_a_failure() [(CROSSCHECK.name, "1")] {
        fuzz::install_backend().unwrap();
        let setup = Setup::new(&"12:40,30,50".parse().unwrap()).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(SEED);
        let program = Program::random(&mut rng, 30);
        seal_opencl::ffi::crosscheck_corrupt_next_result();
        let failure = fuzz::run(&setup, &program).unwrap().unwrap_err();
        assert!(failure.what.contains("GPU Err"), "{failure}");
    }
}

/// Shrinking keeps what makes a program fail and drops the rest: here "a multiply before a
/// rescale" out of 60 random steps.
#[test]
fn shrinking_finds_the_shortest_failing_program() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(SEED);
    let fails = |p: &Program| {
        let multiply = p.steps.iter().position(|s| s.kind == Kind::Multiply);
        let rescale = p.steps.iter().rposition(|s| s.kind == Kind::RescaleToNext);
        matches!((multiply, rescale), (Some(m), Some(r)) if m < r)
    };
    let program = loop {
        let p = Program::random(&mut rng, 60);
        if fails(&p) {
            break p;
        }
    };
    let short = fuzz::shrink(&program, 1000, |p| Ok(fails(p))).unwrap();
    let kinds: Vec<Kind> = short.steps.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [Kind::Multiply, Kind::RescaleToNext]);
}

/// The parameter-set syntax of `examples/seal_fuzz.rs`.
#[test]
fn parameter_sets_parse() {
    let set: ParamSet = "13:60,30x3,60".parse().unwrap();
    assert_eq!(set.log_n, 13);
    assert_eq!(set.bits, [60, 30, 30, 30, 60]);
    assert_eq!(set.to_string(), "13:60,30,30,30,60");
    assert!("13".parse::<ParamSet>().is_err());
    assert!("13:6o".parse::<ParamSet>().is_err());
    let sets = ParamSet::parse_list("12:50; 13:30x2;").unwrap();
    let shown: Vec<String> = sets.iter().map(ParamSet::to_string).collect();
    assert_eq!(shown, ["12:50", "13:30,30"]);
    assert!(ParamSet::parse_list("12:50;13").is_err());
}
