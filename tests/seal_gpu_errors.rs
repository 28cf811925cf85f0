//! Bad input on device operands raises what SEAL raises for the same call on CPU operands
//! (the same C++ exception type, seen here as the same HRESULT and `ErrorKind`), and
//! leaves the device operands as they were: same metadata, same words, and still usable
//! (an operation afterwards equals SEAL's CPU result). seal-patch/README.md, "Routing":
//! checks SEAL makes after computing (scale bounds, the key switch's key checks) are made
//! before routing, so a routed call that throws changes nothing, where the CPU path may
//! have modified its operand.
//!
//! Device errors (out of memory) are in `seal_gpu_oom.rs`: the backend reads the pool
//! limit once, when it is installed.

use seal_opencl::config::CHECK_TRANSPARENT;
use seal_opencl::{Error, ErrorKind, Result};
use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::harness::*;
use seal_opencl_testkit::seal_c::*;

/// A call on (a, b, plain), `a` the result operand.
type BadOp = fn(&Fixture, &mut Ciphertext, &Ciphertext, &Plaintext) -> Result<()>;

/// Turns fresh encryptions (a, b) and a fresh plaintext into one case's operands.
type Edit = fn(&Fixture, &mut Ciphertext, &mut Ciphertext, &mut Plaintext);

fn hresult(e: &Error) -> i64 {
    match e {
        Error::Seal { hresult, .. } => *hresult,
        other => panic!("not an error of SEAL's C API: {other}"),
    }
}

/// The fresh operands as they are.
fn fresh(_: &Fixture, _: &mut Ciphertext, _: &mut Ciphertext, _: &mut Plaintext) {}

/// `a` one level down (mod_switch_to_next on the CPU): at the last level.
fn a_at_last_level(fx: &Fixture, a: &mut Ciphertext, _: &mut Ciphertext, _: &mut Plaintext) {
    fx.evaluator.mod_switch_to_next_inplace(a).unwrap();
}

/// `b` one level down (mod_switch_to_next on the CPU).
fn b_at_next_level(fx: &Fixture, _: &mut Ciphertext, b: &mut Ciphertext, _: &mut Plaintext) {
    fx.evaluator.mod_switch_to_next_inplace(b).unwrap();
}

/// a = a * b: a size-3 ciphertext at the product of the scales.
fn a_times_b(fx: &Fixture, a: &mut Ciphertext, b: &mut Ciphertext, _: &mut Plaintext) {
    fx.evaluator.multiply_inplace(a, b).unwrap();
}

/// `a` at scale 2^40: its product with an operand at scale 2^30 or more is over the 65 bits
/// of the data primes, SEAL's bound on a scale.
fn a_at_a_large_scale(_: &Fixture, a: &mut Ciphertext, _: &mut Ciphertext, _: &mut Plaintext) {
    a.set_scale(2f64.powi(40));
}

/// Runs `op` on fresh operands changed by `edit`, on the CPU and on the device (a and b
/// device newer, the plaintext marked): both fail with the same HRESULT, SEAL's
/// `std::invalid_argument`; the device operands keep their metadata and words, and a negate
/// and an add afterwards equal the CPU's.
fn check_fails_alike(fx: &Fixture, name: &str, edit: Edit, op: BadOp) {
    let (mut a, mut b, mut p) = fx.operands(&mut rng());
    edit(fx, &mut a, &mut b, &mut p);

    let mut cpu = a.clone();
    let cpu_err = match op(fx, &mut cpu, &b, &p) {
        Ok(()) => panic!("{name}: SEAL accepted the call on CPU operands"),
        Err(e) => e,
    };
    assert_eq!(
        cpu_err.kind(),
        ErrorKind::InvalidArgument,
        "{name}: CPU error {cpu_err}"
    );

    let (mut ga, mut gb, gp) = (resident(fx, &a), resident(fx, &b), plain_on_gpu(&p));
    let gpu_err = match op(fx, &mut ga, &gb, &gp) {
        Ok(()) => {
            panic!("{name}: the device call succeeded where SEAL's CPU call failed with {cpu_err}")
        }
        Err(e) => e,
    };
    eprintln!("{name}: CPU {cpu_err}; device {gpu_err}");
    assert_eq!(
        hresult(&gpu_err),
        hresult(&cpu_err),
        "{name}: device error {gpu_err}, CPU error {cpu_err}"
    );

    for (what, want, got) in [("a", &a, &ga), ("b", &b, &gb)] {
        let what = format!("{name}: operand {what} after the failed call");
        assert!(got.on_gpu(), "{what}: lost its mark");
        assert_same(want, got, &what);
    }
    assert_words(
        &p.data().unwrap(),
        &gp.data().unwrap(),
        &format!("{name}: the plaintext"),
    );

    // Still usable: the images hold the words (data() above may have read host words).
    for (what, want, got) in [("a", &a, &mut ga), ("b", &b, &mut gb)] {
        let mut cpu = want.clone();
        fx.evaluator.negate_inplace(&mut cpu).unwrap();
        fx.evaluator.negate_inplace(got).unwrap();
        let twin = cpu.clone();
        fx.evaluator.add_inplace(&mut cpu, &twin).unwrap();
        let twin = got.clone();
        fx.evaluator.add_inplace(got, &twin).unwrap();
        assert_same(
            &cpu,
            got,
            &format!("{name}: operand {what}, negate and add after"),
        );
    }
    assert_no_cpu_fallback();
}

/// (name, the operands' edit, call): calls SEAL rejects with `std::invalid_argument`.
fn cases() -> Vec<(&'static str, Edit, BadOp)> {
    vec![
        (
            "add at different levels (parms_id mismatch)",
            b_at_next_level,
            |fx, a, b, _| fx.evaluator.add_inplace(a, b),
        ),
        ("sub at different levels", a_at_last_level, |fx, a, b, _| {
            fx.evaluator.sub_inplace(a, b)
        }),
        (
            "multiply at different levels",
            b_at_next_level,
            |fx, a, b, _| fx.evaluator.multiply_inplace(a, b),
        ),
        (
            "add with different scales",
            |fx, _, b, _| b.set_scale(fx.scale * 2.0),
            |fx, a, b, _| fx.evaluator.add_inplace(a, b),
        ),
        (
            "add_plain with a different scale",
            |fx, _, _, p| p.set_scale(fx.scale * 2.0),
            |fx, a, _, p| fx.evaluator.add_plain_inplace(a, p),
        ),
        (
            // SEAL's CPU path computes, then checks the scale (operand modified).
            "multiply with the product's scale out of bounds",
            |_, a, b, _| {
                a.set_scale(2f64.powi(40));
                b.set_scale(2f64.powi(40));
            },
            |fx, a, b, _| fx.evaluator.multiply_inplace(a, b),
        ),
        (
            "square with the scale out of bounds",
            a_at_a_large_scale,
            |fx, a, _, _| fx.evaluator.square_inplace(a),
        ),
        (
            "multiply_plain with the scale out of bounds",
            a_at_a_large_scale,
            |fx, a, _, p| fx.evaluator.multiply_plain_inplace(a, p),
        ),
        (
            "multiply_plain with a plaintext at another level",
            |fx, _, _, p| fx.evaluator.mod_switch_to_next_plain_inplace(p).unwrap(),
            |fx, a, _, p| fx.evaluator.multiply_plain_inplace(a, p),
        ),
        (
            "rescale_to_next into a destination at the last level",
            a_at_last_level,
            |fx, a, _, _| {
                let mut d = Ciphertext::new()?;
                fx.evaluator.rescale_to_next(a, &mut d)
            },
        ),
        (
            "rescale_to_next at the last level",
            a_at_last_level,
            |fx, a, _, _| fx.evaluator.rescale_to_next_inplace(a),
        ),
        (
            "mod_switch_to_next at the last level",
            a_at_last_level,
            |fx, a, _, _| fx.evaluator.mod_switch_to_next_inplace(a),
        ),
        (
            "rotate by a step without a Galois key",
            fresh,
            |fx, a, _, _| fx.evaluator.rotate_vector_inplace(a, 2, &fx.galois),
        ),
        (
            "apply_galois with an even element (its index holds step 1's key)",
            fresh,
            |fx, a, _, _| fx.evaluator.apply_galois_inplace(a, 4, &fx.galois),
        ),
        ("rotate a size-3 ciphertext", a_times_b, |fx, a, _, _| {
            fx.evaluator.rotate_vector_inplace(a, 1, &fx.galois)
        }),
        (
            "relinearize a size-4 ciphertext (no key for the cube of the secret)",
            |fx, a, b, p| {
                b.set_scale(1.0);
                a_times_b(fx, a, b, p);
                a_times_b(fx, a, b, p);
            },
            |fx, a, _, _| fx.evaluator.relinearize_inplace(a, &fx.relin),
        ),
        (
            "relinearize with relin keys of another parameter set",
            a_times_b,
            |fx, a, _, _| {
                let other = other_parameters();
                fx.evaluator.relinearize_inplace(a, &other.relin)
            },
        ),
        (
            // SEAL's CPU path permutes the operand, then the key switch throws.
            "rotate with Galois keys of another parameter set",
            fresh,
            |fx, a, _, _| {
                let other = other_parameters();
                fx.evaluator.rotate_vector_inplace(a, 1, &other.galois)
            },
        ),
        (
            // Found by the fuzzer (tests/seal_fuzz.rs): SEAL's resize of the destination
            // throws; the device computed a product of 17 polynomials.
            "multiply into more than SEAL_CIPHERTEXT_SIZE_MAX (16) polynomials",
            |fx, a, b, _| {
                a.set_scale(1.0);
                b.set_scale(1.0);
                for _ in 0..14 {
                    fx.evaluator.multiply_inplace(a, b).unwrap();
                }
                assert_eq!(a.size(), 16);
            },
            |fx, a, b, _| fx.evaluator.multiply_inplace(a, b),
        ),
        (
            "transform_to_ntt of a ciphertext in NTT form",
            fresh,
            |fx, a, _, _| fx.evaluator.transform_to_ntt_inplace(a),
        ),
    ]
}

/// A parameter set of the same N and as many primes, with different primes: another
/// key parms_id, but the same Galois elements.
fn other_parameters() -> Fixture {
    Fixture::with_params(4096, &[36, 30, 34], 30)
}

#[test]
fn bad_input_fails_alike_and_leaves_operands_unchanged() {
    let fx = Fixture::new();
    for (name, edit, op) in cases() {
        check_fails_alike(&fx, name, edit, op);
    }
}

/// SEAL's own behaviour, not an error: relinearizing a size-2 ciphertext does nothing.
#[test]
fn relinearize_of_size_two_changes_nothing() {
    let fx = Fixture::new();
    let a = fx.encrypt(&mut rng());
    let mut g = resident(&fx, &a);
    fx.evaluator.relinearize_inplace(&mut g, &fx.relin).unwrap();
    assert_same(&a, &g, "relinearize of size 2");
}

/// rotate_vector by 7 goes through SEAL's NAF steps -1 then 8; the fixture has no key for
/// 8, so SEAL throws after the first step has rotated the operand. Not "unchanged", but the
/// device must do what SEAL does: the same error and the same words.
#[test]
fn rotation_failing_midway_matches_seal() {
    let fx = Fixture::new();
    let a = fx.encrypt(&mut rng());
    let mut cpu = a.clone();
    let mut gpu = resident(&fx, &a);
    let cpu_err = fx
        .evaluator
        .rotate_vector_inplace(&mut cpu, 7, &fx.galois)
        .unwrap_err();
    let gpu_err = fx
        .evaluator
        .rotate_vector_inplace(&mut gpu, 7, &fx.galois)
        .unwrap_err();
    assert_eq!(cpu_err.kind(), ErrorKind::InvalidArgument, "{cpu_err}");
    assert_eq!(
        hresult(&gpu_err),
        hresult(&cpu_err),
        "{gpu_err} vs {cpu_err}"
    );
    assert_ne!(
        cpu.data().unwrap(),
        a.data().unwrap(),
        "SEAL left the operand unchanged"
    );
    assert_same(&cpu, &gpu, "after the failed rotation");
    assert_no_cpu_fallback();
}

/// The fixture, a second one of equal parameters (another key generator), and two fresh
/// ciphertexts of the first.
fn two_generators() -> (Fixture, Fixture, Ciphertext, Ciphertext) {
    let (fx, mut rng) = Fixture::with_rng();
    let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));
    (fx, Fixture::new(), a, b)
}

/// Keys of another KeyGenerator of identical parameters have the same parms_id: SEAL
/// accepts them (the result decrypts to noise under the wrong secret, but the words are
/// defined). The device, which caches keys by object and contents, uses the keys given.
#[test]
fn keys_of_another_generator_with_equal_parameters_are_used() {
    let (fx, other, a, b) = two_generators();
    for (what, relin, galois) in [
        ("own keys", &fx.relin, &fx.galois),
        ("another generator's keys", &other.relin, &other.galois),
        ("own keys again", &fx.relin, &fx.galois),
    ] {
        let run = |a: &mut Ciphertext, b: &Ciphertext| {
            fx.evaluator.multiply_inplace(a, b).unwrap();
            fx.evaluator.relinearize_inplace(a, relin).unwrap();
            fx.evaluator.rotate_vector_inplace(a, 1, galois).unwrap();
        };
        let (mut cpu, mut gpu) = (a.clone(), on_gpu(&a));
        run(&mut cpu, &b);
        run(&mut gpu, &on_gpu(&b));
        assert_same(&cpu, &gpu, what);
    }
    // New key objects, possibly at a freed key's address: the cache must not confuse them.
    for round in 0..3 {
        for (keygen, what) in [(&other.keygen, "fresh"), (&fx.keygen, "fresh own")] {
            let galois = keygen.galois_keys_from_steps(&[1]).unwrap();
            assert_same_on_both(
                &a,
                |x| fx.evaluator.rotate_vector_inplace(x, 1, &galois).unwrap(),
                &format!("{what} Galois keys, round {round}"),
            );
        }
    }
    assert_no_cpu_fallback();
}

/// Keys assigned into an object that was used before (same object, same address, new words):
/// its version changes (seal-patch 0006), so the device uploads the new keys instead of
/// using the old ones.
#[test]
fn keys_assigned_into_a_used_object_are_uploaded_again() {
    let (fx, other, a, b) = two_generators();
    let mut keys = fx.keygen.relin_keys().unwrap();
    for round in 0..3 {
        assert_same_on_both(
            &a,
            |x| {
                fx.evaluator.multiply_inplace(x, &b).unwrap();
                fx.evaluator.relinearize_inplace(x, &keys).unwrap();
            },
            &format!("round {round}"),
        );
        let next = if round % 2 == 0 {
            &other.relin
        } else {
            &fx.relin
        };
        keys.assign(next).unwrap();
    }
    assert_no_cpu_fallback();
}

/// Where a marked operand is host newer, the call uploads it; where it is device newer (an
/// operation on the device wrote it: two negations), a copy shares its device words.
fn make_device_newer(fx: &Fixture, a: &mut Ciphertext) -> Result<()> {
    fx.evaluator.negate_inplace(a)?;
    fx.evaluator.negate_inplace(a)
}

/// Calls whose result is transparent (fourteen cases): SEAL's CPU path
/// (SEAL_THROW_ON_TRANSPARENT_CIPHERTEXT, on in this build) throws
/// `logic_error("result ciphertext is transparent")` after computing. Returns (name,
/// operand, plaintext, call, whether only the device knows the result is transparent); the
/// call's second ciphertext is the operand itself. The host knows it for a zero plaintext,
/// for a ciphertext subtracted from itself, from a copy sharing its device words or from one
/// with equal host words, and for every operation on transparent operands it uploaded; a
/// ciphertext plus its negation computed on the device is zero only the device sees.
fn transparent_calls(
    fx: &Fixture,
    a: &Ciphertext,
) -> Vec<(&'static str, Ciphertext, Plaintext, BadOp, bool)> {
    let zero = fx
        .encoder
        .encode(
            &vec![0.0; fx.encoder.slot_count()],
            &fx.ctx.first_parms_id(),
            fx.scale,
        )
        .unwrap();
    let t = fx.transparent(a);
    let cases: [(&'static str, &Ciphertext, BadOp, bool); 14] = [
        (
            "multiply_plain by zero",
            a,
            |fx, a, _, p| fx.evaluator.multiply_plain_inplace(a, p),
            false,
        ),
        (
            "sub a ciphertext from its device copy",
            a,
            |fx, a, _, _| {
                make_device_newer(fx, a)?;
                let copy = a.clone();
                fx.evaluator.sub_inplace(a, &copy)
            },
            false,
        ),
        (
            "sub a device ciphertext from itself, out of place",
            a,
            |fx, a, _, _| {
                make_device_newer(fx, a)?;
                let x = a.clone();
                fx.evaluator.sub(&x, &x, a)
            },
            false,
        ),
        (
            "sub a ciphertext from an equal one uploaded apart",
            a,
            |fx, a, b, _| fx.evaluator.sub_inplace(a, b),
            false,
        ),
        (
            "add a ciphertext and its negation",
            a,
            |fx, a, _, _| {
                let mut negated = a.clone();
                fx.evaluator.negate_inplace(&mut negated)?;
                fx.evaluator.add_inplace(a, &negated)
            },
            true,
        ),
        (
            "sub a host ciphertext from itself, out of place",
            a,
            |fx, a, _, _| {
                // A copy of the result operand, so that it carries the operand's mark; the
                // destination's copy of it shares its device words.
                let x = a.clone();
                fx.evaluator.sub(&x, &x, a)
            },
            false,
        ),
        (
            "multiply by a ciphertext with zero c1",
            &t,
            |fx, a, b, _| fx.evaluator.multiply_inplace(a, b),
            false,
        ),
        (
            "add two transparent ciphertexts",
            &t,
            |fx, a, b, _| fx.evaluator.add_inplace(a, b),
            false,
        ),
        (
            "negate a transparent ciphertext",
            &t,
            |fx, a, _, _| fx.evaluator.negate_inplace(a),
            false,
        ),
        (
            "square a transparent ciphertext",
            &t,
            |fx, a, _, _| fx.evaluator.square_inplace(a),
            false,
        ),
        (
            "relinearize a transparent product",
            &t,
            |fx, a, _, _| {
                // A transparent product of size 3 (square throws after computing it: SEAL's CPU
                // path leaves it in `a`, and so does the device path).
                match fx.evaluator.square_inplace(a) {
                    Err(e) if e.kind() != ErrorKind::Logic => return Err(e),
                    _ => {}
                }
                fx.evaluator.relinearize_inplace(a, &fx.relin)
            },
            false,
        ),
        (
            "rescale a transparent ciphertext",
            &t,
            |fx, a, _, _| fx.evaluator.rescale_to_next_inplace(a),
            false,
        ),
        (
            "mod_switch a transparent ciphertext",
            &t,
            |fx, a, _, _| fx.evaluator.mod_switch_to_next_inplace(a),
            false,
        ),
        (
            "rotate a transparent ciphertext",
            &t,
            |fx, a, _, _| fx.evaluator.rotate_vector_inplace(a, 1, &fx.galois),
            false,
        ),
    ];
    cases
        .into_iter()
        .map(|(name, operand, call, device_only)| {
            (name, operand.clone(), zero.clone(), call, device_only)
        })
        .collect()
}

/// By default (`SEAL_OPENCL_CHECK_TRANSPARENT` unset: deferred) a result the host knows to be
/// transparent throws SEAL's `logic_error` at the call, as on the CPU, and leaves the words
/// SEAL's CPU path leaves (programs such as TenSEAL catch it there and recover). A result
/// only the device knows to be transparent is tested on the device without waiting: the call
/// returns, and every host read of the result (its words, decrypt) throws SEAL's
/// `logic_error`. A transparent result never reaches the host.
#[test]
fn transparent_results_throw_at_the_call_or_else_at_the_first_host_read_by_default() {
    let fx = Fixture::new();
    let a = fx.encrypt(&mut rng());
    for (name, operand, plain, op, device_only) in transparent_calls(&fx, &a) {
        let mut cpu = operand.clone();
        let cpu_err = op(&fx, &mut cpu, &operand, &plain).unwrap_err();
        assert_eq!(
            cpu_err.kind(),
            ErrorKind::Logic,
            "{name}: CPU error {cpu_err}"
        );
        let mut gpu = on_gpu(&operand);
        let result = op(&fx, &mut gpu, &operand, &plain_on_gpu(&plain));
        if !device_only {
            let err = result.expect_err(&format!("{name}: the device call returned"));
            assert_eq!(
                hresult(&err),
                hresult(&cpu_err),
                "{name}: {err} vs {cpu_err}"
            );
            assert_same(&cpu, &gpu, name);
            continue;
        }
        result.unwrap_or_else(|e| panic!("{name}: the device call did not return: {e}"));
        for (read, result) in [
            ("host read", gpu.data().map(drop)),
            ("decrypt", fx.decryptor.decrypt(&gpu).map(drop)),
            ("host read again", gpu.data().map(drop)),
        ] {
            let err = result.expect_err(&format!("{name}: {read} of a transparent result"));
            assert_eq!(err.kind(), ErrorKind::Logic, "{name}: {read}: {err}");
        }
    }
    assert_no_cpu_fallback();
}

child_test! {
    /// An unrecognised value of the switch is an error when the backend is installed (listing
    /// the accepted values), not a silent default.
    fn an_unknown_transparency_switch_is_refused() [(CHECK_TRANSPARENT.name, "maybe")] {
        let err = seal_opencl::ffi::install_backend().unwrap_err().to_string();
        for value in ["maybe", "deferred", "eager", "off"] {
            assert!(err.contains(value), "{err}");
        }
    }
}

child_test! {
    /// With `SEAL_OPENCL_CHECK_TRANSPARENT=eager` the device path throws what SEAL's CPU path
    /// throws for a transparent result, and leaves the same words.
    fn transparent_results_are_checked_when_asked() [(CHECK_TRANSPARENT.name, "eager")] {
        let fx = Fixture::new();
        let a = fx.encrypt(&mut rng());
        for (name, operand, plain, op, _) in transparent_calls(&fx, &a) {
            let mut cpu = operand.clone();
            let cpu_err = op(&fx, &mut cpu, &operand, &plain).unwrap_err();
            // Marked, not made resident: negating a transparent operand twice would throw.
            let mut gpu = on_gpu(&operand);
            let gpu_err = op(&fx, &mut gpu, &operand, &plain_on_gpu(&plain)).unwrap_err();
            assert_eq!(
                gpu_err.kind(),
                cpu_err.kind(),
                "{name}: {gpu_err} vs {cpu_err}"
            );
            assert_same(&cpu, &gpu, name);
        }
        // A result that is not transparent passes the check.
        let mut cpu = a.clone();
        fx.evaluator.negate_inplace(&mut cpu).unwrap();
        let mut gpu = resident(&fx, &a);
        fx.evaluator.negate_inplace(&mut gpu).unwrap();
        assert_same(&cpu, &gpu, "negate with the check on");
        assert_no_cpu_fallback();
    }
}
