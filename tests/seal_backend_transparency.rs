//! SEAL's transparency check of results, as the backend behind SEAL answers it
//! (`seal_backend::Backend::is_transparent`, without SEAL): where the host knows the answer
//! (uploaded zeros, a product with a zero plaintext, `a - a` of shared words, and every
//! operation on transparent operands) true at once in every mode, as SEAL throws at the call;
//! where only the device knows, deferred by default (the check is recorded on the image and
//! answers false at once; a transparent result fails the image's downloads, whole or partial,
//! with SEAL's `logic_error` word for word), eager, or off; and the mode's parser rejects
//! unknown values.

use rand::Rng;
use seal_opencl::arith::get_primes;
use seal_opencl::config::CHECK_TRANSPARENT;
use seal_opencl::device::{DeviceOptions, Devices};
use seal_opencl::seal_backend::{Backend, GpuImage, Level, TransparencyCheck};
use seal_opencl::{Error, ErrorKind};
use seal_opencl_testkit::fixture::backend_on;
use seal_opencl_testkit::harness::rng;

const LOG_N: u32 = 12;
const N: usize = 1 << LOG_N;
/// Primes of the test level (K = 2; the third is the key level's special prime).
const PRIMES: usize = 2;
const POLY: usize = PRIMES * N;

fn backend(mode: TransparencyCheck) -> Backend {
    backend_on(Devices::new(DeviceOptions::default()).unwrap()).checking_transparency(mode)
}

fn key_moduli() -> Vec<u64> {
    get_primes(2 * N as u64, 40, PRIMES + 1).unwrap()
}

fn level(key_moduli: &[u64]) -> Level<'_> {
    Level {
        key_parms_id: [7, 0, 0, 0],
        log_n: LOG_N,
        key_moduli,
        using_keyswitching: true,
        primes: PRIMES,
        plain_modulus: 0,
        scheme: seal_opencl::seal_backend::Scheme::Ckks,
    }
}

/// Two canonical polynomials at the test level; data(1) all zero with `zero_tail`.
fn ciphertext(rng: &mut impl Rng, moduli: &[u64], zero_tail: bool) -> Vec<u64> {
    (0..2 * POLY)
        .map(|w| match w >= POLY && zero_tail {
            true => 0,
            false => rng.gen_range(0..moduli[(w / N) % PRIMES]),
        })
        .collect()
}

fn read(backend: &Backend, image: &GpuImage) -> seal_opencl::Result<Vec<u64>> {
    let mut out = vec![0; image.len()];
    backend.download(image, &mut out).map(|()| out)
}

/// `result` is SEAL's `logic_error("result ciphertext is transparent")`, word for word (callers
/// such as TenSEAL compare the message).
#[track_caller]
fn assert_transparent_error(result: seal_opencl::Result<Vec<u64>>) {
    match result {
        Err(err @ Error::Logic(_)) => {
            assert_eq!(err.kind(), ErrorKind::Logic);
            assert_eq!(err.to_string(), "result ciphertext is transparent");
        }
        other => panic!("expected SEAL's transparency error, got {other:?}"),
    }
}

/// One polynomial at the test level (a plaintext), random, or zero but for its first word.
fn plaintext(rng: &mut impl Rng, moduli: &[u64], zero_tail: bool) -> Vec<u64> {
    (0..POLY)
        .map(|w| match w > 0 && zero_tail {
            true => 0,
            false => rng.gen_range(1..moduli[w / N]),
        })
        .collect()
}

/// `a - b` where `b` is a separate upload of a's words: zero, which only the device knows.
fn device_zero(backend: &Backend, level: &Level, words: &[u64]) -> GpuImage {
    let mut a = backend.create_image(words).unwrap();
    let twin = backend.create_image(words).unwrap();
    backend.sub(level, &mut a, 2, &twin, 2).unwrap();
    a
}

const MODES: [TransparencyCheck; 3] = [
    TransparencyCheck::Deferred,
    TransparencyCheck::Eager,
    TransparencyCheck::Off,
];

/// Results the host knows to be transparent: true at the call in every mode, nothing left
/// pending (the words SEAL's CPU path leaves download as they are).
#[test]
fn the_host_answers_at_the_call_what_it_knows_in_every_mode() {
    let (moduli, mut rng) = (key_moduli(), rng());
    let level = level(&moduli);
    let words = ciphertext(&mut rng, &moduli, false);
    let zero_tail = ciphertext(&mut rng, &moduli, true);
    for mode in MODES {
        let backend = backend(mode);
        let zero_plain = backend.create_image(&[0; POLY]).unwrap();
        type Case = fn(&Backend, &Level, &mut GpuImage, &GpuImage) -> seal_opencl::Result<()>;
        let cases: [(&str, &[u64], usize, usize, Case); 11] = [
            (
                "an uploaded transparent ciphertext",
                &zero_tail,
                2,
                POLY,
                |_, _, _, _| Ok(()),
            ),
            (
                "multiply_plain by zero",
                &words,
                2,
                POLY,
                |b, l, ct, zero| b.multiply_plain(l, ct, 2, zero),
            ),
            ("sub a device copy", &words, 2, POLY, |b, l, ct, _| {
                let copy = b.clone_image(ct)?;
                b.sub(l, ct, 2, &copy, 2)
            }),
            ("sub itself", &words, 2, POLY, |b, l, ct, _| {
                b.zero(l, ct, 2)
            }),
            ("negate", &zero_tail, 2, POLY, |b, l, ct, _| {
                b.negate(l, ct, 2)
            }),
            ("add two", &zero_tail, 2, POLY, |b, l, ct, _| {
                let other = b.clone_image(ct)?;
                b.add(l, ct, 2, &other, 2)
            }),
            ("multiply two", &zero_tail, 3, POLY, |b, l, ct, _| {
                let other = b.clone_image(ct)?;
                b.multiply(l, ct, 2, &other, 2)
            }),
            ("square", &zero_tail, 3, POLY, |b, l, ct, _| {
                b.square(l, ct, 2)
            }),
            ("add_plain", &zero_tail, 2, POLY, |b, l, ct, _| {
                let plain = b.create_image(&[5; POLY])?;
                b.add_plain(l, ct, 2, &plain)
            }),
            ("rescale", &zero_tail, 2, N, |b, l, ct, _| {
                b.rescale_to_next_inplace(l, ct, 2)
            }),
            ("transform_from_ntt", &zero_tail, 2, POLY, |b, l, ct, _| {
                b.transform_from_ntt(l, ct, 2)
            }),
        ];
        for (name, input, size, poly_words, op) in cases {
            let mut ct = backend.create_image(input).unwrap();
            op(&backend, &level, &mut ct, &zero_plain).unwrap();
            assert!(
                backend
                    .is_transparent(&mut ct, size, poly_words, name)
                    .unwrap(),
                "{mode}: {name}"
            );
            let result = read(&backend, &ct).unwrap_or_else(|e| panic!("{mode}: {name}: {e}"));
            assert!(
                result[poly_words..].iter().all(|&w| w == 0),
                "{mode}: {name}"
            );
        }
    }
}

/// What the host does not know stays the device's to say: a plaintext zero but for one word,
/// a ciphertext with one nonzero word in its last polynomial, a product of a transparent and
/// a random ciphertext, and two uploads of equal words subtracted.
#[test]
fn the_host_claims_nothing_it_does_not_know() {
    let (moduli, mut rng) = (key_moduli(), rng());
    let level = level(&moduli);
    let backend = backend(TransparencyCheck::Off);
    let words = ciphertext(&mut rng, &moduli, false);
    let zero_tail = ciphertext(&mut rng, &moduli, true);

    let mut ct = backend.create_image(&words).unwrap();
    let almost_zero = backend
        .create_image(&plaintext(&mut rng, &moduli, true))
        .unwrap();
    backend
        .multiply_plain(&level, &mut ct, 2, &almost_zero)
        .unwrap();
    assert!(!backend
        .is_transparent(&mut ct, 2, POLY, "multiply_plain")
        .unwrap());

    let mut last_word = zero_tail.clone();
    last_word[2 * POLY - 1] = 1;
    let mut ct = backend.create_image(&last_word).unwrap();
    assert!(!backend.is_transparent(&mut ct, 2, POLY, "negate").unwrap());

    let mut ct = backend.create_image(&zero_tail).unwrap();
    let random = backend.create_image(&words).unwrap();
    backend.multiply(&level, &mut ct, 2, &random, 2).unwrap();
    assert!(!backend
        .is_transparent(&mut ct, 3, POLY, "multiply")
        .unwrap());

    let mut zero = device_zero(&backend, &level, &words);
    assert!(!backend.is_transparent(&mut zero, 2, POLY, "sub").unwrap());
    assert_eq!(
        read(&backend, &zero).unwrap(),
        vec![0; 2 * POLY],
        "off: no device check"
    );
    backend.end_compute_frame().unwrap();
}

#[test]
fn deferred_check_reports_a_device_only_transparent_result_at_the_first_download() {
    let (moduli, mut rng) = (key_moduli(), rng());
    let (backend, level) = (backend(TransparencyCheck::default()), level(&moduli));
    let words = ciphertext(&mut rng, &moduli, false);

    // A zero only the device knows: the check answers false at once, and every download
    // fails, also one of data(0) alone (it reads data(1) to test it).
    let mut image = device_zero(&backend, &level, &words);
    assert!(!backend.is_transparent(&mut image, 2, POLY, "sub").unwrap());
    assert_transparent_error(read(&backend, &image));
    assert_transparent_error(read(&backend, &image));
    let mut first = vec![0; POLY];
    let err = backend.download(&image, &mut first).unwrap_err();
    assert_transparent_error(Err(err));

    // A copy carries the check; an upload replaces the result, and the check with it.
    let copy = backend.clone_image(&image).unwrap();
    assert_transparent_error(read(&backend, &copy));
    backend.upload(&mut image, &words).unwrap();
    assert_eq!(read(&backend, &image).unwrap(), words);
    assert_transparent_error(read(&backend, &copy));

    // (a - a) * b: a new buffer, zero again; the old check went with the old buffer.
    let mut zero = device_zero(&backend, &level, &words);
    let b = backend.create_image(&words).unwrap();
    backend.multiply(&level, &mut zero, 2, &b, 2).unwrap();
    assert!(!backend
        .is_transparent(&mut zero, 3, POLY, "multiply")
        .unwrap());
    assert_transparent_error(read(&backend, &zero));
    backend.end_compute_frame().unwrap();
}

#[test]
fn deferred_check_passes_a_result_that_is_not_transparent() {
    let (moduli, mut rng) = (key_moduli(), rng());
    let (backend, level) = (backend(TransparencyCheck::Deferred), level(&moduli));
    let words = ciphertext(&mut rng, &moduli, false);
    let mut image = backend.create_image(&words).unwrap();
    assert!(!backend.is_transparent(&mut image, 2, POLY, "add").unwrap());
    assert_eq!(read(&backend, &image).unwrap(), words);
    assert_eq!(read(&backend, &image).unwrap(), words, "second download");
    let copy = backend.clone_image(&image).unwrap();
    assert_eq!(read(&backend, &copy).unwrap(), words, "copy");

    // Only data(1) .. counts: a zero data(0) with a nonzero data(1) passes.
    let mut tail_only = vec![0; 2 * POLY];
    tail_only[2 * POLY - 1] = 1;
    let mut image = backend.create_image(&tail_only).unwrap();
    assert!(!backend.is_transparent(&mut image, 2, POLY, "sub").unwrap());
    assert_eq!(read(&backend, &image).unwrap(), tail_only);

    // b * b rescaled: random, passes.
    let mut b = backend.create_image(&words).unwrap();
    backend.square(&level, &mut b, 2).unwrap();
    backend.rescale_to_next_inplace(&level, &mut b, 3).unwrap();
    assert!(!backend
        .is_transparent(&mut b, 3, N, "rescale_to_next")
        .unwrap());
    assert_eq!(read(&backend, &b).unwrap().len(), 3 * N);

    // SEAL's answer for fewer than 2 polynomials needs no device.
    let mut single = backend.create_image(&words[..POLY]).unwrap();
    assert!(backend.is_transparent(&mut single, 1, POLY, "sub").unwrap());
    backend.end_compute_frame().unwrap();
}

#[test]
fn eager_check_downloads_what_only_the_device_knows() {
    let (moduli, mut rng) = (key_moduli(), rng());
    let (eager, level) = (backend(TransparencyCheck::Eager), level(&moduli));
    let words = ciphertext(&mut rng, &moduli, false);
    let mut zero = device_zero(&eager, &level, &words);
    assert!(eager.is_transparent(&mut zero, 2, POLY, "sub").unwrap());
    assert_eq!(
        read(&eager, &zero).unwrap(),
        vec![0; 2 * POLY],
        "no check left behind"
    );
    let mut image = eager.create_image(&words).unwrap();
    assert!(!eager.is_transparent(&mut image, 2, POLY, "negate").unwrap());
    assert!(eager.is_transparent(&mut image, 1, POLY, "negate").unwrap());
    eager.end_compute_frame().unwrap();
}

#[test]
fn unknown_check_mode_is_rejected_naming_the_accepted_ones() {
    // Through the settings, as an install reads it: the error names the setting too.
    let err = seal_opencl::config::Config::from_lookup(|name| {
        (name == CHECK_TRANSPARENT.name).then(|| "maybe".to_string())
    })
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    let message = err.to_string();
    for word in [CHECK_TRANSPARENT.name, "maybe", "deferred", "eager", "off"] {
        assert!(message.contains(word), "{message}");
    }
    for bad in ["1", "true", "on"] {
        assert!(TransparencyCheck::parse(Some(bad)).is_err(), "{bad}");
    }
    for mode in [
        TransparencyCheck::Deferred,
        TransparencyCheck::Eager,
        TransparencyCheck::Off,
    ] {
        assert_eq!(
            TransparencyCheck::parse(Some(&mode.to_string())).unwrap(),
            mode
        );
    }
    assert_eq!(
        TransparencyCheck::parse(Some(" Eager ")).unwrap(),
        TransparencyCheck::Eager
    );
    for unset in [None, Some(""), Some(" ")] {
        assert_eq!(
            TransparencyCheck::parse(unset).unwrap(),
            TransparencyCheck::Deferred,
            "{unset:?}"
        );
    }
}
