//! Device out of memory, provoked by capping the pool (`SEAL_OPENCL_MAX_BYTES`, read once
//! when the backend is installed, hence a test file of its own): the failure is a value
//! (`Error::OutOfMemory`, kind `Runtime`, with the pool's numbers), the operands stay as
//! they were, nothing aborts, and the device works again once memory is freed.
//!
//! Two levels:
//! - the backend behind SEAL (`seal_backend::Backend`, the code ffi/routing.cc calls),
//!   with a capped pool of its own: must pass;
//! - the whole path through SEAL's C API, where the out-of-memory `std::runtime_error`
//!   crosses `Evaluator_*` and comes back as `COR_E_IO` (seal-patch 0005). It runs in a
//!   child process, so that an abort (an exception escaping the C API) fails this test
//!   instead of taking the test runner with it.

use seal_opencl::device::{DeviceOptions, Devices};
use seal_opencl::memcache::MemcacheConfig;
use seal_opencl::seal_backend::GpuImage;
use seal_opencl::{Error, ErrorKind};
use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::harness::*;
use seal_opencl_testkit::seal_c::*;

const N: usize = BACKEND_N;
/// Pool cap of both tests: room for a handful of N = 2^12 two-prime ciphertexts (128 KiB
/// each) besides the parameter tables.
const MAX_BYTES: u64 = 2 << 20;

#[test]
fn backend_out_of_memory_is_an_error_and_changes_nothing() {
    let params = BackendParams::new();
    let (key_moduli, level) = (&params.key_moduli, params.level());
    let devices = Devices::new(DeviceOptions {
        memcache: MemcacheConfig {
            max_bytes_held: Some(MAX_BYTES),
            ..DeviceOptions::default().memcache
        },
        ..DeviceOptions::default()
    })
    .unwrap();
    let backend = backend_on(devices);
    let words = |seed: u64| -> Vec<u64> {
        (0..2 * 2 * N)
            .map(|i| (seed * 0x9E37_79B9 + i as u64 * 7919) % key_moduli[(i / N) % 2])
            .collect()
    };
    let read = |image: &GpuImage| {
        let mut out = vec![0; image.len()];
        backend.download(image, &mut out).unwrap();
        out
    };

    // Fill the pool with ciphertext images until an allocation fails.
    let mut images = Vec::new();
    let err = loop {
        match backend.create_image(&words(images.len() as u64)) {
            Ok(image) => images.push(image),
            Err(e) => break e,
        }
        assert!(
            images.len() < 64,
            "a pool capped at {MAX_BYTES} bytes took 64 images"
        );
    };
    assert!(matches!(err, Error::OutOfMemory(_)), "create_image: {err}");
    assert_eq!(err.kind(), ErrorKind::Runtime, "{err}");
    eprintln!("{} images, then: {err}", images.len());
    assert!(images.len() >= 2, "the cap leaves no room for two operands");

    // An operation that needs a new buffer fails, and leaves its operands alone.
    let (a, b) = images.split_at_mut(1);
    let (a, b) = (&mut a[0], &b[0]);
    let (want_a, want_b) = (read(a), read(b));
    let err = backend.multiply(&level, a, 2, b, 2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Runtime, "multiply: {err}");
    let err = backend.rescale_to_next_inplace(&level, a, 2).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::Runtime,
        "rescale_to_next_inplace: {err}"
    );
    assert_eq!(
        a.len(),
        want_a.len(),
        "operand a's length after the failed calls"
    );
    assert_eq!(read(a), want_a, "operand a after the failed calls");
    assert_eq!(read(b), want_b, "operand b after the failed calls");
    // A copy shares b's buffer (no allocation); writing it needs one: an error, and both
    // keep their words.
    let mut copy = backend.clone_image(b).unwrap();
    let err = backend.negate(&level, &mut copy, 2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Runtime, "negate of a copy: {err}");
    assert_eq!(read(&copy), want_b, "the copy after the failed negate");
    assert_eq!(read(b), want_b, "operand b after its copy's failed negate");
    // A sum into a copy needs a buffer of its own too (a deferred sum's, allocated at the
    // add): an error at the call, and every operand keeps its words.
    let err = backend.add(&level, &mut copy, 2, a, 2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Runtime, "add into a copy: {err}");
    assert_eq!(read(&copy), want_b, "the copy after the failed add");
    assert_eq!(read(b), want_b, "operand b after its copy's failed add");
    assert_eq!(read(a), want_a, "operand a after the failed add");
    drop(copy);

    // Freeing memory makes the device usable again.
    let (a, b) = (images.remove(0), images.remove(0));
    images.clear();
    backend.end_compute_frame().unwrap();
    let mut a = a;
    backend.multiply(&level, &mut a, 2, &b, 2).unwrap();
    assert_eq!(a.len(), 3 * 2 * N);
    backend.end_compute_frame().unwrap();
}

child_test! {
    /// Through SEAL's C API, in a child process (an abort would end every test): the backend
    /// installed with the pool capped, filled through SEAL; `Runtime` errors, unchanged
    /// operands and a working device after freeing.
    fn seal_out_of_memory_raises_runtime_error() [
        (seal_opencl::config::MAX_BYTES.name, &MAX_BYTES.to_string())
    ] {
        let fx = Fixture::with_params(N as u64, &[35, 30, 35], 30);
        let mut rng = rng();
        let a = fx.encrypt(&mut rng);
        let mut held = Vec::new();
        let err = loop {
            let mut g = on_gpu(&a);
            match fx.evaluator.negate_inplace(&mut g) {
                Ok(()) => held.push(g),
                Err(e) => break e,
            }
            assert!(
                held.len() < 64,
                "a pool capped at {MAX_BYTES} bytes took 64 ciphertexts"
            );
        };
        eprintln!("{} ciphertexts, then: {err}", held.len());
        assert_eq!(err.kind(), ErrorKind::Runtime, "{err}");
        let (mut x, y) = (held.remove(0), held.remove(0));
        let (want_x, want_y) = (x.data().unwrap(), y.data().unwrap());
        let err = fx.evaluator.multiply_inplace(&mut x, &y).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Runtime, "{err}");
        assert_words(&want_x, &x.data().unwrap(), "x after the failed multiply");
        assert_words(&want_y, &y.data().unwrap(), "y after the failed multiply");
        held.clear();
        end_compute_frame().unwrap();
        let mut cpu = a.clone();
        fx.evaluator.negate_inplace(&mut cpu).unwrap();
        let b = fx.encrypt(&mut rng);
        fx.evaluator.multiply_inplace(&mut cpu, &b).unwrap();
        fx.evaluator.multiply_inplace(&mut x, &on_gpu(&b)).unwrap();
        assert_same(&cpu, &x, "multiply after freeing");
    }
}
