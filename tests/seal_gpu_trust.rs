//! Regressions of what a new user met: operations on device results after the
//! backend was uninstalled, threads sharing an operand that is not on the device yet, and
//! images of an old backend after an uninstall and install. Each call either gives SEAL's
//! CPU words or throws SEAL's exception type (here: `ErrorKind::Logic`); nothing aborts.
//!
//! Uninstalling switches the backend off for the whole process, so those tests run in a
//! child process each (`child_test!`).

use std::sync::atomic::{AtomicBool, Ordering};

use seal_opencl::{ErrorKind, Result};
use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::seal_c::*;

/// Fails unless `result` is SEAL's `logic_error` whose message says why.
fn assert_unreachable<T: std::fmt::Debug>(result: Result<T>, what: &str) {
    let err = result.expect_err(what);
    assert_eq!(err.kind(), ErrorKind::Logic, "{what}: {err}");
}

/// A call on a device result `a` with other operands `b` (a ciphertext) and `p` (a
/// plaintext), both at `a`'s level and scale.
type Call = fn(&Fixture, &mut Ciphertext, &Ciphertext, &Plaintext) -> Result<()>;

/// Evaluator entry points (those the issue saw abort first), copies and host reads. The
/// bool says whether the call needs a product (size 3: relinearize) rather than a
/// ciphertext of size 2 at the fixture's scale.
fn calls_on_a_pending_result() -> Vec<(&'static str, bool, Call)> {
    vec![
        ("relinearize", true, |fx, a, _, _| {
            fx.evaluator.relinearize_inplace(a, &fx.relin)
        }),
        ("rotate_vector", false, |fx, a, _, _| {
            fx.evaluator.rotate_vector_inplace(a, 1, &fx.galois)
        }),
        ("multiply_plain", false, |fx, a, _, p| {
            fx.evaluator.multiply_plain_inplace(a, p)
        }),
        ("rescale_to_next", false, |fx, a, _, _| {
            fx.evaluator.rescale_to_next_inplace(a)
        }),
        ("mod_switch_to_next", false, |fx, a, _, _| {
            fx.evaluator.mod_switch_to_next_inplace(a)
        }),
        ("multiply", false, |fx, a, b, _| {
            fx.evaluator.multiply_inplace(a, b)
        }),
        ("negate", false, |fx, a, _, _| {
            fx.evaluator.negate_inplace(a)
        }),
        ("add", false, |fx, a, b, _| fx.evaluator.add_inplace(a, b)),
        ("transform_from_ntt", false, |fx, a, _, _| {
            fx.evaluator.transform_from_ntt_inplace(a)
        }),
        ("host read", true, |_, a, _, _| a.data().map(drop)),
        ("copy", false, |_, a, _, _| a.try_clone().map(drop)),
        ("decrypt", false, |fx, a, _, _| {
            fx.decryptor.decrypt(a).map(drop)
        }),
    ]
}

/// The calls of [`calls_on_a_pending_result`], each with a result only the device holds:
/// `a` * `b` (size 3) where the call needs a product, else -`a`.
fn calls_with_pending_results(
    fx: &Fixture,
    a: &Ciphertext,
    b: &Ciphertext,
) -> Vec<(&'static str, bool, Call, Ciphertext)> {
    calls_on_a_pending_result()
        .into_iter()
        .map(|(name, product, call)| {
            let mut x = on_gpu(a);
            if product {
                fx.evaluator.multiply_inplace(&mut x, b).unwrap();
            } else {
                fx.evaluator.negate_inplace(&mut x).unwrap();
            }
            (name, product, call, x)
        })
        .collect()
}

child_test! {
    /// After `uninstall_backend()`, every call on a result that only the device
    /// held throws `logic_error` before SEAL touches the words (SEAL's CPU path iterates
    /// with noexcept iterators: a throw there ended the process).
    fn calls_on_a_pending_result_after_uninstall_throw() [] {
        let (fx, mut rng) = Fixture::with_rng();
        let (a, b, p) = fx.operands(&mut rng);
        let calls = calls_with_pending_results(&fx, &a, &b);
        seal_opencl::ffi::uninstall_backend().unwrap();
        for (name, product, call, mut x) in calls {
            assert_unreachable(call(&fx, &mut x, &b, &p), name);
            let size = if product { 3 } else { 2 };
            assert_eq!(x.size(), size, "{name}: the operand's metadata changed");
        }
    }
}

child_test! {
    /// Uninstalling from one thread while two others issue operations: each call
    /// gives SEAL's words or throws `logic_error`; the process lives.
    fn uninstall_while_threads_issue_work() [] {
        let (fx, mut rng) = Fixture::with_rng();
        let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));
        let want = fx.mul_lin(&a, &b);
        for round in 0..3 {
            reinstall();
            let stop = AtomicBool::new(false);
            std::thread::scope(|s| {
                for t in 0..2 {
                    let (ctx, relin, a, b, want, stop) = (&fx.ctx, &fx.relin, &a, &b, &want, &stop);
                    s.spawn(move || {
                        let evaluator = Evaluator::new(ctx).unwrap();
                        while !stop.load(Ordering::Relaxed) {
                            let mut x = a.clone();
                            let run = |x: &mut Ciphertext| -> Result<Vec<u64>> {
                                x.gpu()?;
                                evaluator.multiply_inplace(x, b)?;
                                evaluator.relinearize_inplace(x, relin)?;
                                x.data()
                            };
                            match run(&mut x) {
                                Ok(words) => assert_words(
                                    &want.data().unwrap(),
                                    &words,
                                    &format!("round {round}, thread {t}"),
                                ),
                                Err(e) => assert_eq!(e.kind(), ErrorKind::Logic, "{e}"),
                            }
                        }
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
                seal_opencl::ffi::uninstall_backend().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(50));
                stop.store(true, Ordering::Relaxed);
            });
        }
    }
}

/// 8 threads share an operand that is not on the device yet (a plaintext of
/// multiply_plain, then a ciphertext of multiply) and the relinearization keys, each with
/// its own evaluator and result:
/// the first routed use of the shared operand uploads it once, under the object's lock;
/// every thread's result is SEAL's CPU result. A fresh shared operand every round, marked
/// in odd rounds, unmarked (marked by the first call) in even ones.
#[test]
fn threads_share_an_operand_that_is_not_uploaded() {
    const ROUNDS: usize = 200;
    const THREADS: usize = 8;
    let (fx, mut rng) = Fixture::with_rng();
    let (a, b, p) = fx.operands(&mut rng);
    let mut by_plain = a.clone();
    fx.evaluator
        .multiply_plain_inplace(&mut by_plain, &p)
        .unwrap();
    let mut by_ct = a.clone();
    fx.evaluator.multiply_inplace(&mut by_ct, &b).unwrap();
    fx.evaluator
        .relinearize_inplace(&mut by_ct, &fx.relin)
        .unwrap();
    let (by_plain, by_ct) = (by_plain.data().unwrap(), by_ct.data().unwrap());

    for round in 0..ROUNDS {
        let mut shared_plain = p.clone();
        let mut shared_ct = b.clone();
        if round % 2 == 1 {
            shared_plain.gpu().unwrap();
            shared_ct.gpu().unwrap();
        }
        let results: Vec<(Vec<u64>, Vec<u64>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|_| {
                    let (ctx, relin, a, shared_plain, shared_ct) =
                        (&fx.ctx, &fx.relin, &a, &shared_plain, &shared_ct);
                    s.spawn(move || {
                        let evaluator = Evaluator::new(ctx).unwrap();
                        let mut x = a.clone();
                        x.gpu().unwrap();
                        evaluator
                            .multiply_plain_inplace(&mut x, shared_plain)
                            .unwrap();
                        let mut y = a.clone();
                        y.gpu().unwrap();
                        evaluator.multiply_inplace(&mut y, shared_ct).unwrap();
                        evaluator.relinearize_inplace(&mut y, relin).unwrap();
                        (x.data().unwrap(), y.data().unwrap())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (t, (x, y)) in results.iter().enumerate() {
            assert_words(
                &by_plain,
                x,
                &format!("round {round}, thread {t}: multiply_plain"),
            );
            assert_words(
                &by_ct,
                y,
                &format!("round {round}, thread {t}: multiply, relinearize"),
            );
        }
        assert_eq!(
            shared_plain.data().unwrap(),
            p.data().unwrap(),
            "round {round}"
        );
    }
    assert_no_cpu_fallback();
}

/// Threads making the first host read of a shared device result at once: the
/// download happens once, under the object's lock, and every reader sees SEAL's words.
#[test]
fn threads_read_a_shared_device_result() {
    let (fx, mut rng) = Fixture::with_rng();
    let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));
    let mut want = a.clone();
    fx.evaluator.multiply_inplace(&mut want, &b).unwrap();
    let want = want.data().unwrap();
    for round in 0..50 {
        let mut shared = on_gpu(&a);
        fx.evaluator.multiply_inplace(&mut shared, &b).unwrap();
        std::thread::scope(|s| {
            for t in 0..8 {
                let (shared, want) = (&shared, &want);
                s.spawn(move || {
                    assert_words(
                        want,
                        &shared.data().unwrap(),
                        &format!("round {round}, thread {t}"),
                    )
                });
            }
        });
    }
}

/// A result computed on one thread and handed to another (a channel, no synchronization)
/// is used there as SEAL's words: the other thread's operations are ordered after the
/// first thread's on the device, and many threads share the keys.
#[test]
fn a_result_handed_to_another_thread_is_used_there() {
    let (fx, mut rng) = Fixture::with_rng();
    let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));
    let mut want = fx.mul_lin(&a, &b);
    fx.evaluator
        .rotate_vector_inplace(&mut want, 1, &fx.galois)
        .unwrap();
    let want = want.data().unwrap();
    let (ctx, relin, galois) = (&fx.ctx, &fx.relin, &fx.galois);
    for round in 0..20 {
        let (send, receive) = std::sync::mpsc::channel::<Ciphertext>();
        std::thread::scope(|s| {
            let (a, b) = (&a, &b);
            s.spawn(move || {
                let evaluator = Evaluator::new(ctx).unwrap();
                let mut x = on_gpu(a);
                evaluator.multiply_inplace(&mut x, b).unwrap();
                evaluator.relinearize_inplace(&mut x, relin).unwrap();
                send.send(x).unwrap();
            });
            let consumer = s.spawn(move || {
                let evaluator = Evaluator::new(ctx).unwrap();
                let mut x = receive.recv().unwrap();
                evaluator.rotate_vector_inplace(&mut x, 1, galois).unwrap();
                x.data().unwrap()
            });
            assert_words(&want, &consumer.join().unwrap(), &format!("round {round}"));
        });
    }
}

child_test! {
    /// An uninstall and install leave objects with images of the old backend (its
    /// OpenCL context is gone). One whose host words are current drops that image and is
    /// uploaded to the new backend; one whose words only the old device held throws
    /// `logic_error` naming the cause, for operations, copies and host reads alike.
    fn images_of_an_old_backend_are_never_used() [] {
        let (fx, mut rng) = Fixture::with_rng();
        let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));

        // The program that found the bug: a in sync (decrypted), then reinstall, then two
        // transforms.
        let mut cpu = a.clone();
        let mut gpu = on_gpu(&a);
        for x in [&mut cpu, &mut gpu] {
            fx.evaluator.negate_inplace(x).unwrap();
        }
        fx.decryptor.decrypt(&gpu).unwrap();
        reinstall();
        for x in [&mut cpu, &mut gpu] {
            fx.evaluator.transform_from_ntt_inplace(x).unwrap();
            fx.evaluator.transform_to_ntt_inplace(x).unwrap();
        }
        assert_same(
            &cpu,
            &gpu,
            "in sync before the reinstall, transformed after",
        );
        let copy = gpu.try_clone().unwrap();
        assert_same(&cpu, &copy, "a copy after the reinstall");

        // In sync and copied straight after a reinstall: the copy takes the host words.
        fx.decryptor.decrypt(&gpu).unwrap();
        reinstall();
        let copy = gpu.try_clone().unwrap();
        assert_same(
            &cpu,
            &copy,
            "a copy of an in-sync object after the reinstall",
        );

        // Results only the old device held.
        let mut calls = calls_with_pending_results(&fx, &a, &b);
        reinstall();
        let p = fx.plain(&mut rng);
        for (name, _, call, x) in &mut calls {
            assert_unreachable(call(&fx, x, &b, &p), name);
        }
        // Overwriting one as a result is fine: its old words are not needed.
        let pending = &mut calls[0].3;
        fx.evaluator.rescale_to_next(&gpu, pending).unwrap();
        let mut want = cpu.clone();
        fx.evaluator.rescale_to_next_inplace(&mut want).unwrap();
        assert_same(
            &want,
            pending,
            "a destination whose image was the old backend's",
        );
    }
}
