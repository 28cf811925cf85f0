//! `SEAL_OPENCL_CROSSCHECK`: sampled routed operations also run on SEAL's CPU path, from
//! host copies of the device operands, and the device result's words and metadata must
//! equal SEAL's (ffi/crosscheck.cc, `OpenClBackend::crosschecked`). The backend reads the
//! switch once, when it is installed, and its counts are the process's, so every test runs
//! in a child process (`child_test!`).
//!
//! A mismatch cannot be provoked honestly through SEAL's API (the device computes SEAL's
//! words), so `seal_opencl::ffi::crosscheck_corrupt_next_result()` flips one bit of the
//! next cross-checked result on the device, after the operation and before the
//! comparison, as a wrong kernel would: the comparison must see it.

use seal_opencl::config::CROSSCHECK;
use seal_opencl::ffi::{
    crosscheck_checks, crosscheck_corrupt_next_result, crosscheck_last_mismatch,
    crosscheck_mismatches,
};
use seal_opencl::{ErrorKind, Result};
use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::harness::*;
use seal_opencl_testkit::seal_c::*;

/// A call on (x, b, plain), `x` the result operand.
type Op = fn(&Fixture, &mut Ciphertext, &Ciphertext, &Plaintext) -> Result<()>;

/// `x` one level down, out of place into a fresh destination.
fn rescaled_into_fresh(fx: &Fixture, x: &mut Ciphertext) -> Result<()> {
    // A copy carries the mark of `x`, so the destination goes to the device too.
    let mut d = x.clone();
    fx.evaluator.rescale_to_next(x, &mut d)?;
    *x = d;
    Ok(())
}

/// (name, routed operations it makes, call): every routed operation, from fresh operands
/// (size 2, first level, NTT form).
fn cases() -> Vec<(&'static str, u64, Op)> {
    vec![
        ("negate", 1, |fx, x, _, _| fx.evaluator.negate_inplace(x)),
        ("add", 1, |fx, x, b, _| fx.evaluator.add_inplace(x, b)),
        ("sub", 1, |fx, x, b, _| fx.evaluator.sub_inplace(x, b)),
        ("add_plain", 1, |fx, x, _, p| {
            fx.evaluator.add_plain_inplace(x, p)
        }),
        ("sub_plain", 1, |fx, x, _, p| {
            fx.evaluator.sub_plain_inplace(x, p)
        }),
        ("multiply_plain", 1, |fx, x, _, p| {
            fx.evaluator.multiply_plain_inplace(x, p)
        }),
        ("multiply", 1, |fx, x, b, _| {
            fx.evaluator.multiply_inplace(x, b)
        }),
        ("square", 1, |fx, x, _, _| fx.evaluator.square_inplace(x)),
        ("multiply a size-3 product (size 4)", 2, |fx, x, b, _| {
            // Scale 1 keeps the product's scale in bounds.
            let mut one = b.clone();
            one.set_scale(1.0);
            fx.evaluator.multiply_inplace(x, &one)?;
            fx.evaluator.multiply_inplace(x, &one)
        }),
        ("multiply, relinearize, rescale", 3, |fx, x, b, _| {
            fx.evaluator.multiply_inplace(x, b)?;
            fx.evaluator.relinearize_inplace(x, &fx.relin)?;
            fx.evaluator.rescale_to_next_inplace(x)
        }),
        (
            "square, relinearize, rescale into a fresh destination",
            3,
            |fx, x, _, _| {
                fx.evaluator.square_inplace(x)?;
                fx.evaluator.relinearize_inplace(x, &fx.relin)?;
                rescaled_into_fresh(fx, x)
            },
        ),
        ("mod_switch_to_next", 1, |fx, x, _, _| {
            fx.evaluator.mod_switch_to_next_inplace(x)
        }),
        ("mod_switch_to_next out of place", 1, |fx, x, _, _| {
            let mut d = x.clone();
            fx.evaluator.mod_switch_to_next(x, &mut d)?;
            *x = d;
            Ok(())
        }),
        (
            "mod_switch_to_next of a plaintext, add_plain at the next level",
            3,
            |fx, x, _, p| {
                let mut q = p.try_clone()?;
                fx.evaluator.mod_switch_to_next_plain_inplace(&mut q)?;
                fx.evaluator.mod_switch_to_next_inplace(x)?;
                fx.evaluator.add_plain_inplace(x, &q)
            },
        ),
        ("rotate by 1", 1, |fx, x, _, _| {
            fx.evaluator.rotate_vector_inplace(x, 1, &fx.galois)
        }),
        (
            "rotate by 3 (two Galois steps: 4 and -1)",
            2,
            |fx, x, _, _| fx.evaluator.rotate_vector_inplace(x, 3, &fx.galois),
        ),
        ("complex_conjugate", 1, |fx, x, _, _| {
            fx.evaluator.complex_conjugate_inplace(x, &fx.galois)
        }),
        ("transform_from_ntt, transform_to_ntt", 2, |fx, x, _, _| {
            fx.evaluator.transform_from_ntt_inplace(x)?;
            fx.evaluator.transform_to_ntt_inplace(x)
        }),
    ]
}

/// Runs every case on CPU operands and on device operands: every call succeeds and equals
/// SEAL's CPU result. Returns the number of routed operations made.
fn run_cases(fx: &Fixture) -> u64 {
    let mut rng = rng();
    let mut calls = 0;
    for (name, routed, op) in cases() {
        let (a, b, p) = fx.operands(&mut rng);
        let mut cpu = a.clone();
        op(fx, &mut cpu, &b, &p).unwrap_or_else(|e| panic!("{name} on the CPU: {e}"));
        let mut gpu = on_gpu(&a);
        op(fx, &mut gpu, &on_gpu(&b), &plain_on_gpu(&p))
            .unwrap_or_else(|e| panic!("{name} on the device: {e}"));
        assert_same(&cpu, &gpu, name);
        calls += routed;
    }
    assert_no_cpu_fallback();
    calls
}

child_test! {
    fn every_operation_is_compared_with_1() [(CROSSCHECK.name, "1")] {
        let fx = Fixture::new();
        let calls = run_cases(&fx);
        assert_eq!(crosscheck_mismatches(), 0, "{}", crosscheck_last_mismatch());
        assert_eq!(
            crosscheck_checks(),
            calls,
            "every routed operation compared"
        );
    }
}

child_test! {
    fn every_third_operation_is_compared_with_3() [(CROSSCHECK.name, "3")] {
        let fx = Fixture::new();
        let calls = run_cases(&fx);
        assert_eq!(crosscheck_mismatches(), 0, "{}", crosscheck_last_mismatch());
        // Routed operations 1, 4, 7, ... of the backend.
        assert_eq!(crosscheck_checks(), calls.div_ceil(3));
    }
}

child_test! {
    fn nothing_is_compared_with_0() [(CROSSCHECK.name, "0")] {
        let fx = Fixture::new();
        // Armed, but nothing is cross-checked: no result is touched.
        crosscheck_corrupt_next_result();
        run_cases(&fx);
        assert_eq!(crosscheck_checks(), 0);
        assert_eq!(crosscheck_mismatches(), 0);
    }
}

/// Runs the Evaluator call `call` with the test hook armed: it must throw `logic_error`,
/// making `mismatches` in all, and the mismatch's message must name each of `parts`.
fn assert_detected(call: impl FnOnce() -> Result<()>, mismatches: u64, parts: &[&str]) {
    crosscheck_corrupt_next_result();
    let err = call().expect_err("a wrong device result passed the cross-check");
    assert_eq!(err.kind(), ErrorKind::Logic, "{err}");
    assert_eq!(crosscheck_mismatches(), mismatches);
    let message = crosscheck_last_mismatch();
    eprintln!("{message}");
    for part in parts {
        assert!(message.contains(part), "{part:?} not in {message:?}");
    }
}

child_test! {
    fn a_wrong_device_result_is_detected() [(CROSSCHECK.name, "1")] {
        let (fx, mut rng) = Fixture::with_rng();
        let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));

        // A ciphertext result: multiply (3 polynomials of 2 primes, N = 4096).
        let mut gpu = on_gpu(&a);
        assert_detected(
            || fx.evaluator.multiply_inplace(&mut gpu, &on_gpu(&b)),
            1,
            &[
                CROSSCHECK.name,
                "multiply (N = 4096, 2 primes)",
                "in 1 of 24576 words; first at word 12288 (polynomial 1, prime 1, coefficient 0)",
                "device 0x",
                "CPU 0x",
            ],
        );

        // A plaintext result: mod_switch_to_next (one prime left: 4096 words).
        let mut plain = plain_on_gpu(&fx.plain(&mut rng));
        assert_detected(
            || fx.evaluator.mod_switch_to_next_plain_inplace(&mut plain),
            2,
            &[
                "mod_switch_to_next (plaintext) (N = 4096, 2 primes)",
                "in 1 of 4096 words; first at word 2048 (polynomial 0, prime 0, coefficient 2048)",
            ],
        );

        // The hook is spent: the next operations pass.
        let checks = crosscheck_checks();
        let calls = run_cases(&fx);
        assert_eq!(crosscheck_checks(), checks + calls);
        assert_eq!(crosscheck_mismatches(), 2);
    }
}

child_test! {
    /// SEAL's CPU path throws "result ciphertext is transparent" after computing; the words it
    /// computed are compared anyway (no false mismatch), and the device path reports the
    /// result as it does without cross-checking: at the call where the host knows (a - a),
    /// else at the first host read (deferred). An operand that is itself a transparent result
    /// with its report pending cannot be downloaded for the CPU reference: that call is not
    /// compared.
    fn transparent_results_are_no_mismatch() [(CROSSCHECK.name, "1")] {
        let fx = Fixture::new();
        let a = fx.encrypt(&mut rng());

        // a - a: transparent, known at the call; SEAL's words (zero) stay, as on the CPU.
        let mut gpu = on_gpu(&a);
        let twin = gpu.clone();
        let err = fx.evaluator.sub_inplace(&mut gpu, &twin).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Logic, "{err}");
        assert_eq!(crosscheck_checks(), 1);
        assert_eq!(crosscheck_mismatches(), 0, "{}", crosscheck_last_mismatch());
        assert!(gpu.data().unwrap().iter().all(|&w| w == 0));

        // a + (-a), the negation computed on the device: transparent, which only the device
        // knows (compared; reported at the first host read), then its square (its operand's
        // report is pending: not compared).
        let mut gpu = on_gpu(&a);
        let mut negated = gpu.clone();
        fx.evaluator.negate_inplace(&mut negated).unwrap();
        fx.evaluator.add_inplace(&mut gpu, &negated).unwrap();
        assert_eq!(crosscheck_checks(), 3);
        fx.evaluator.square_inplace(&mut gpu).unwrap();
        assert_eq!(crosscheck_checks(), 3);
        assert_eq!(crosscheck_mismatches(), 0, "{}", crosscheck_last_mismatch());
        assert!(gpu.data().is_err(), "a transparent result reached the host");
    }
}

child_test! {
    /// Values other than `0`, `1` or a positive integer are refused when the backend is
    /// installed, listing the accepted values.
    fn an_unknown_crosscheck_value_is_refused() {
        let value = std::env::var(CROSSCHECK.name).unwrap();
        let err = seal_opencl::ffi::install_backend().unwrap_err().to_string();
        for part in [
            CROSSCHECK.name,
            value.as_str(),
            "`0`",
            "`1`",
            "a positive integer N",
        ] {
            assert!(err.contains(part), "{part:?} not in {err:?}");
        }
        assert!(!gpu_backend_installed());
    }
    parent(child) {
        for value in ["maybe", "-1", "1.5", "99999999999999999999999"] {
            run_child(child, &[(CROSSCHECK.name, value)]);
        }
    }
}

child_test! {
    /// A routed `Encryptor::encrypt` (seal-patch 0010) adds its plaintext with the routed
    /// add_plain, at the plaintext's scale, which the cross-check compares with SEAL's (the
    /// zero's samples are SEAL's and not cross-checked: the CPU would draw others): one check,
    /// no mismatch, and the words SEAL's from the same seed.
    fn an_encrypt_is_compared_with_1() [(CROSSCHECK.name, "1")] {
        use seal_opencl_testkit::encrypt::{seeded_encrypt, EncryptCase};
        install();
        let case = EncryptCase {
            log_n: 12,
            coeff_bits: vec![35, 30, 35],
            level: 0,
            plain: true,
            scale_bits: 20,
            seed: 5,
        };
        let cpu = seeded_encrypt(&case, false).unwrap();
        let gpu = seeded_encrypt(&case, true).unwrap();
        assert!(gpu.device_newer);
        assert_words(&cpu.words, &gpu.words, "encrypt");
        assert_eq!(crosscheck_mismatches(), 0, "{}", crosscheck_last_mismatch());
        assert_eq!(crosscheck_checks(), 1);
    }
}
