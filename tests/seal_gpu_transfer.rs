//! Transfers of marked objects (seal-patch 0007): their host words live in the
//! backend's page-locked memory, uploads from there return before the copy finished, host
//! writes wait for it, and freeing the words waits too. Every result is compared word for
//! word with SEAL's CPU result. The tests that count page-locked bytes or set the cap run in
//! child processes (the count is per process, the cap is read at install).

use seal_opencl::cl::pinned_bytes_in_use;
use seal_opencl::config::{LOG, MAX_PINNED_BYTES};
use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::harness::*;
use seal_opencl_testkit::seal_c::*;

/// MulLinRS of two marked copies of `a`, `b` against the same on the CPU, checked through a
/// host read of the result (which waits only for its download).
fn check_request(fx: &Fixture, a: &Ciphertext, b: &Ciphertext, what: &str) {
    let (mut cpu, mut gpu) = (a.clone(), on_gpu(a));
    let gpu_b = on_gpu(b);
    for (x, y) in [(&mut cpu, b), (&mut gpu, &gpu_b)] {
        fx.evaluator.multiply_inplace(x, y).unwrap();
        fx.evaluator.relinearize_inplace(x, &fx.relin).unwrap();
        fx.evaluator.rescale_to_next_inplace(x).unwrap();
    }
    assert_same(&cpu, &gpu, what);
}

/// A marked input whose upload was just enqueued (in sync, the copy maybe still running) is
/// overwritten on the host, in every way SEAL offers: the next routed operation sees the new
/// words, and the result of the operation that used the old ones keeps them.
#[test]
fn host_writes_after_an_upload_are_seen_by_the_next_operation() {
    let (fx, mut rng) = Fixture::with_rng();
    type Overwrite = fn(&Fixture, &mut Ciphertext, &Ciphertext);
    let overwrites: [(&str, Overwrite); 3] = [
        ("set_data (load)", |fx, g, new| {
            g.set_data(&fx.ctx, &new.data().unwrap()).unwrap()
        }),
        ("copy assignment from a marked host object", |_, g, new| {
            g.assign(&on_gpu(new))
        }),
        ("Encryptor::encrypt_into", |fx, g, new| {
            let plain = fx.decryptor.decrypt(new).unwrap();
            fx.encryptor.encrypt_into(&plain, g).unwrap();
            // encrypt_into draws fresh randomness: the CPU side must use these words.
            let _ = g.data().unwrap();
        }),
    ];
    for (write, overwrite) in overwrites {
        let (r0, x0, x1) = (
            fx.encrypt(&mut rng),
            fx.encrypt(&mut rng),
            fx.encrypt(&mut rng),
        );
        let mut g = on_gpu(&x0);
        let (mut first, mut second) = (on_gpu(&r0), on_gpu(&r0));
        // Uploads g (asynchronously: its words are page-locked) and adds on the device.
        fx.evaluator.add_inplace(&mut first, &g).unwrap();
        overwrite(&fx, &mut g, &x1);
        assert!(g.on_gpu(), "{write}: the mark stays");
        let x1_words = fx.host_copy(&g);
        fx.evaluator.add_inplace(&mut second, &g).unwrap();

        let (mut want_first, mut want_second) = (r0.clone(), r0.clone());
        fx.evaluator.add_inplace(&mut want_first, &x0).unwrap();
        fx.evaluator
            .add_inplace(&mut want_second, &x1_words)
            .unwrap();
        assert_same(
            &want_first,
            &first,
            &format!("{write}: operation before the write"),
        );
        assert_same(
            &want_second,
            &second,
            &format!("{write}: operation after the write"),
        );
    }
    assert_no_cpu_fallback();
}

/// A host read right after a chain of routed operations returns the chain's result, for
/// ciphertexts and for a plaintext operand.
#[test]
fn host_read_after_operations_returns_their_result() {
    let (fx, mut rng) = Fixture::with_rng();
    for round in 0..3 {
        let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));
        check_request(&fx, &a, &b, &format!("MulLinRS, round {round}"));
    }
    let (a, p) = (fx.encrypt(&mut rng), fx.plain(&mut rng));
    let (mut cpu, mut gpu) = (a.clone(), on_gpu(&a));
    fx.evaluator.multiply_plain_inplace(&mut cpu, &p).unwrap();
    fx.evaluator
        .multiply_plain_inplace(&mut gpu, &plain_on_gpu(&p))
        .unwrap();
    assert_same(&cpu, &gpu, "multiply_plain with a marked plaintext");
    assert_no_cpu_fallback();
}

/// Marked inputs destroyed right after the operation that uploads them, while the copy may
/// still read their words; their page-locked blocks drain and serve new marked objects with
/// other words as soon as the copy finished. Every result stays SEAL's.
#[test]
fn destroying_a_marked_object_with_an_upload_in_flight_is_safe() {
    let (fx, mut rng) = Fixture::with_rng();
    let inputs: Vec<Ciphertext> = (0..8).map(|_| fx.encrypt(&mut rng)).collect();
    let r0 = fx.encrypt(&mut rng);
    let mut gpu = on_gpu(&r0);
    let mut cpu = r0.clone();
    for x in &inputs {
        let g = on_gpu(x);
        fx.evaluator.add_inplace(&mut gpu, &g).unwrap();
        drop(g);
        // Likely the block g just gave back (once its upload finished), overwritten by a new
        // object's words.
        let mut other = on_gpu(&fx.encrypt(&mut rng));
        fx.evaluator.negate_inplace(&mut other).unwrap();
        fx.evaluator.add_inplace(&mut cpu, x).unwrap();
    }
    assert_same(&cpu, &gpu, "sum of destroyed inputs");
}

/// Threads share a marked input that is not on the device yet: the first to use it uploads
/// it without waiting, on its own queue, and the others (on theirs) are ordered behind that
/// copy on the device. Repeated with fresh words each round; every sum is SEAL's.
#[test]
fn threads_share_an_input_whose_upload_is_in_flight() {
    let (fx, mut rng) = Fixture::with_rng();
    for round in 0..4 {
        let x = fx.encrypt(&mut rng);
        let shared = on_gpu(&x);
        let starts: Vec<Ciphertext> = (0..4).map(|_| fx.encrypt(&mut rng)).collect();
        let sums: Vec<Ciphertext> = std::thread::scope(|scope| {
            let workers: Vec<_> = starts
                .iter()
                .map(|start| {
                    let (ctx, shared) = (&fx.ctx, &shared);
                    scope.spawn(move || {
                        let evaluator = Evaluator::new(ctx).unwrap();
                        let mut sum = on_gpu(start);
                        evaluator.add_inplace(&mut sum, shared).unwrap();
                        sum
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        for (t, (start, sum)) in starts.iter().zip(&sums).enumerate() {
            let mut want = start.clone();
            fx.evaluator.add_inplace(&mut want, &x).unwrap();
            assert_same(&want, sum, &format!("round {round}, thread {t}"));
        }
    }
}

child_test! {
    /// Marking moves a ciphertext's words into page-locked memory (and a result's host
    /// read allocates there), and they go back when the objects die.
    fn marked_words_are_page_locked_and_returned() [] {
        let (fx, mut rng) = Fixture::with_rng();
        let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));
        let before = pinned_bytes_in_use();
        let bytes = a.uint64_count() * 8;
        {
            let ga = on_gpu(&a);
            assert!(
                pinned_bytes_in_use() >= before + bytes,
                "a marked ciphertext's words are page-locked"
            );
            let mut product = ga.clone();
            fx.evaluator
                .multiply_inplace(&mut product, &on_gpu(&b))
                .unwrap();
            let held = pinned_bytes_in_use();
            let _ = product.data().unwrap();
            assert!(
                pinned_bytes_in_use() >= held + product.uint64_count() * 8,
                "the host read of a device result allocates page-locked words"
            );
            check_request(&fx, &a, &b, "MulLinRS in page-locked memory");
        }
        assert_eq!(
            pinned_bytes_in_use(),
            before,
            "page-locked words go back when their objects die"
        );
    }
}

child_test! {
    /// With a cap smaller than one ciphertext, every marked object falls back to pageable
    /// memory; results are still SEAL's, and the fallback is reported once.
    fn pinned_cap_falls_back_cleanly_with_one_warning() {
        let (fx, mut rng) = Fixture::with_rng();
        for round in 0..3 {
            let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));
            check_request(
                &fx,
                &a,
                &b,
                &format!("MulLinRS past the cap, round {round}"),
            );
        }
        assert_eq!(
            pinned_bytes_in_use(),
            0,
            "nothing is page-locked past the cap"
        );
    }
    parent(child) {
        for cap in ["0", "4096"] {
            let out = run_child_output(
                child,
                &[(MAX_PINNED_BYTES.name, cap), (LOG.name, "warn")],
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            let warnings = stderr.matches("page-locked host memory").count();
            assert_eq!(warnings, 1, "cap {cap}: one warning, stderr:\n{stderr}");
        }
    }
}

child_test! {
    /// A cap that is not a byte count is refused when the backend is installed.
    fn bad_pinned_cap_is_refused() [(MAX_PINNED_BYTES.name, "lots")] {
        let err = seal_opencl::ffi::install_backend().unwrap_err();
        assert!(
            err.to_string().contains(MAX_PINNED_BYTES.name),
            "the error names the variable: {err}"
        );
    }
}
