//! SEAL's transparency check of results, as the backend behind SEAL answers it
//! (`seal_backend::Backend::is_transparent`, without SEAL): deferred by default (the
//! check is recorded on the image and answers false at once; a transparent result fails
//! the image's downloads, whole or partial, with a `Logic` error naming the operation),
//! eager, or off; and the mode's parser rejects unknown values.

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

/// `result` is SEAL's "result ciphertext is transparent" naming `operation`.
#[track_caller]
fn assert_transparent_error(result: seal_opencl::Result<Vec<u64>>, operation: &str) {
    match result {
        Err(err @ Error::Logic(_)) => {
            assert_eq!(err.kind(), ErrorKind::Logic);
            let message = err.to_string();
            assert!(
                message.contains("result ciphertext is transparent") && message.contains(operation),
                "{message}"
            );
        }
        other => panic!("expected the transparency error of {operation}, got {other:?}"),
    }
}

#[test]
fn deferred_check_reports_a_transparent_result_at_the_first_download() {
    let (moduli, mut rng) = (key_moduli(), rng());
    let backend = backend(TransparencyCheck::default());
    let zero_tail = ciphertext(&mut rng, &moduli, true);

    // An image whose data(1) is zero: the check answers false at once, and every download
    // fails, also one of data(0) alone (it reads data(1) to test it).
    let mut image = backend.create_image(&zero_tail).unwrap();
    assert!(!backend
        .is_transparent(&mut image, 2, POLY, "negate")
        .unwrap());
    assert_transparent_error(read(&backend, &image), "negate");
    assert_transparent_error(read(&backend, &image), "negate");
    let mut first = vec![0; POLY];
    let err = backend.download(&image, &mut first).unwrap_err();
    assert_transparent_error(Err(err), "negate");

    // A copy carries the check; an upload replaces the result, and the check with it.
    let copy = backend.clone_image(&image).unwrap();
    assert_transparent_error(read(&backend, &copy), "negate");
    let words = ciphertext(&mut rng, &moduli, false);
    backend.upload(&mut image, &zero_tail).unwrap();
    assert_eq!(read(&backend, &image).unwrap(), zero_tail);
    backend.upload(&mut image, &words).unwrap();
    assert_eq!(read(&backend, &image).unwrap(), words);
    assert_transparent_error(read(&backend, &copy), "negate");
}

#[test]
fn deferred_check_passes_a_result_that_is_not_transparent() {
    let (moduli, mut rng) = (key_moduli(), rng());
    let backend = backend(TransparencyCheck::Deferred);
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

    // SEAL's answer for fewer than 2 polynomials needs no device.
    let mut single = backend.create_image(&words[..POLY]).unwrap();
    assert!(backend.is_transparent(&mut single, 1, POLY, "sub").unwrap());
}

/// Results the operations write into new buffers (tensor, rescale) and in place (sub).
#[test]
fn deferred_check_of_operation_results() {
    let (moduli, mut rng) = (key_moduli(), rng());
    let (backend, level) = (backend(TransparencyCheck::Deferred), level(&moduli));
    let words = ciphertext(&mut rng, &moduli, false);

    // a - a: zero.
    let mut a = backend.create_image(&words).unwrap();
    let twin = backend.create_image(&words).unwrap();
    backend.sub(&level, &mut a, 2, &twin, 2).unwrap();
    assert!(!backend.is_transparent(&mut a, 2, POLY, "sub").unwrap());
    assert_transparent_error(read(&backend, &a), "sub");

    // (a - a) * b: a new buffer, zero again; the old check went with the old buffer.
    backend.multiply(&level, &mut a, 2, &twin, 2).unwrap();
    assert!(!backend.is_transparent(&mut a, 3, POLY, "multiply").unwrap());
    assert_transparent_error(read(&backend, &a), "multiply");

    // b * b rescaled: random, passes.
    let mut b = backend.create_image(&words).unwrap();
    backend.square(&level, &mut b, 2).unwrap();
    backend.rescale_to_next_inplace(&level, &mut b, 3).unwrap();
    assert!(!backend
        .is_transparent(&mut b, 3, N, "rescale_to_next")
        .unwrap());
    assert_eq!(read(&backend, &b).unwrap().len(), 3 * N);
    backend.end_compute_frame().unwrap();
}

#[test]
fn eager_and_off_checks() {
    let (moduli, mut rng) = (key_moduli(), rng());
    let zero_tail = ciphertext(&mut rng, &moduli, true);
    let words = ciphertext(&mut rng, &moduli, false);

    let eager = backend(TransparencyCheck::Eager);
    let mut image = eager.create_image(&zero_tail).unwrap();
    assert!(eager.is_transparent(&mut image, 2, POLY, "negate").unwrap());
    assert_eq!(
        read(&eager, &image).unwrap(),
        zero_tail,
        "no check left behind"
    );
    let mut image = eager.create_image(&words).unwrap();
    assert!(!eager.is_transparent(&mut image, 2, POLY, "negate").unwrap());
    assert!(eager.is_transparent(&mut image, 1, POLY, "negate").unwrap());

    let off = backend(TransparencyCheck::Off);
    let mut image = off.create_image(&zero_tail).unwrap();
    assert!(!off.is_transparent(&mut image, 2, POLY, "negate").unwrap());
    assert!(!off.is_transparent(&mut image, 1, POLY, "negate").unwrap());
    assert_eq!(read(&off, &image).unwrap(), zero_tail);
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
