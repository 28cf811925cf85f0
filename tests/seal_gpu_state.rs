//! The per-object state machine of the patched SEAL (seal-patch/README.md, "The state
//! machine") with this backend behind it: a ciphertext or plaintext changed on the host
//! after upload is uploaded again; a copy of a device ciphertext is independent; copy
//! assignment keeps the mark and the words; decrypt returns the device result without an
//! explicit sync; frames may end and start between operations; long chains in one frame
//! and chains on several threads stay equal to SEAL's CPU words.
//!
//! Move: SEAL's C API has no move (constructor or assignment; `Ciphertext_Set` is copy
//! assignment), and a Rust move of `Ciphertext` moves the handle, not the SEAL object, so
//! SEAL-level moves are not reachable from here. The Rust moves are exercised anyway
//! (into a thread and back, `threads`).

use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::seal_c::*;

/// An operation on (a, b, plain), `a` the result, run once on CPU and once on device
/// operands.
type Op = fn(&Fixture, &mut Ciphertext, &Ciphertext, &Plaintext);

fn add(fx: &Fixture, a: &mut Ciphertext, b: &Ciphertext, _: &Plaintext) {
    fx.evaluator.add_inplace(a, b).unwrap();
}

fn multiply_plain(fx: &Fixture, a: &mut Ciphertext, _: &Ciphertext, p: &Plaintext) {
    fx.evaluator.multiply_plain_inplace(a, p).unwrap();
}

fn mul_lin_rs_rotate(fx: &Fixture, a: &mut Ciphertext, b: &Ciphertext, _: &Plaintext) {
    fx.evaluator.multiply_inplace(a, b).unwrap();
    fx.evaluator.relinearize_inplace(a, &fx.relin).unwrap();
    fx.evaluator.rescale_to_next_inplace(a).unwrap();
    fx.evaluator
        .rotate_vector_inplace(a, 1, &fx.galois)
        .unwrap();
}

/// Runs `op` on `cpu` (unmarked) and on `gpu` (marked) with the same other operands and
/// checks the device words against the CPU's.
fn check_op(
    fx: &Fixture,
    op: Op,
    cpu: &mut Ciphertext,
    gpu: &mut Ciphertext,
    b: &Ciphertext,
    p: &Plaintext,
    what: &str,
) {
    op(fx, cpu, b, p);
    op(fx, gpu, &on_gpu(b), &plain_on_gpu(p));
    assert!(gpu.on_gpu(), "{what}: the result lost its mark");
    assert_same(cpu, gpu, what);
}

/// Host writes after upload: the next operation uses the new host words, not the stale
/// device image (which the patched SEAL keeps to reuse its buffer).
#[test]
fn host_write_after_upload_is_uploaded_again() {
    let (fx, mut rng) = Fixture::with_rng();
    type Overwrite = fn(&Fixture, &mut Ciphertext, &mut rand::rngs::StdRng);
    let overwrites: [(&str, Overwrite); 2] = [
        ("set_data (Ciphertext::load)", |fx, g, rng| {
            let other = fx.encrypt(rng);
            g.set_data(&fx.ctx, &other.data().unwrap()).unwrap();
        }),
        ("Encryptor::encrypt_into", |fx, g, rng| {
            fx.encryptor.encrypt_into(&fx.plain(rng), g).unwrap();
        }),
    ];
    for (write, overwrite) in overwrites {
        for (state, extra_ops) in [("device newer", 1), ("in sync", 0)] {
            let what = format!("{write} on a {state} ciphertext");
            let (a, b, p) = fx.operands(&mut rng);
            let (mut cpu, mut gpu) = (a.clone(), on_gpu(&a));
            // check_op's assert_same reads the words (in sync); a second op makes the
            // device newer.
            for op in 0..=extra_ops {
                check_op(
                    &fx,
                    add,
                    &mut cpu,
                    &mut gpu,
                    &b,
                    &p,
                    &format!("{what}: op {op}"),
                );
            }
            let before = gpu.data().unwrap();
            overwrite(&fx, &mut gpu, &mut rng);
            assert!(gpu.on_gpu(), "{what}: the overwrite dropped the mark");
            assert_ne!(
                gpu.data().unwrap(),
                before,
                "{what}: the overwrite changed nothing"
            );
            // The CPU operand gets the new host words.
            let mut cpu = fx.host_copy(&gpu);
            check_op(
                &fx,
                multiply_plain,
                &mut cpu,
                &mut gpu,
                &b,
                &p,
                &format!("{what}: op after the write"),
            );
        }
    }
    assert_no_cpu_fallback();
}

/// `clone` of a device ciphertext (a device-to-device copy) is independent of its source
/// both ways, in every state of the source.
#[test]
fn copy_of_a_device_ciphertext_is_independent() {
    let (fx, mut rng) = Fixture::with_rng();
    type Make = fn(&Fixture, &Ciphertext) -> Ciphertext;
    let sources: [(&str, Make); 3] = [
        ("device newer", resident),
        ("host newer", |_, a| on_gpu(a)),
        ("in sync", |fx, a| {
            let g = resident(fx, a);
            g.data().unwrap();
            g
        }),
    ];
    for (state, make) in sources {
        let (a, b, p) = fx.operands(&mut rng);
        let want_a = a.data().unwrap();
        // MulLin, rescale and rotate on `target`, against SEAL's from `a`.
        let op = |target: &mut Ciphertext, what: &str| {
            let mut cpu = a.clone();
            let what = format!("{state}: {what}");
            check_op(&fx, mul_lin_rs_rotate, &mut cpu, target, &b, &p, &what);
        };

        // An operation on the copy leaves the source alone.
        let source = make(&fx, &a);
        let mut copy = source.clone();
        assert!(copy.on_gpu(), "{state}: the copy lost the mark");
        op(&mut copy, "op on the copy");
        assert_words(
            &want_a,
            &source.data().unwrap(),
            &format!("{state}: the source after an op on its copy"),
        );

        // An operation on the source leaves the copy alone.
        let mut source = make(&fx, &a);
        let mut copy = source.clone();
        op(&mut source, "op on the source");
        assert_words(
            &want_a,
            &copy.data().unwrap(),
            &format!("{state}: the copy after an op on its source"),
        );
        // And the copy still computes from its own image.
        op(&mut copy, "op on the copy after");
    }
    assert_no_cpu_fallback();
}

/// Copy assignment (`Ciphertext_Set`) copies the mark like any attribute, and the words.
#[test]
fn copy_assignment_keeps_mark_and_words() {
    let (fx, mut rng) = Fixture::with_rng();
    let (a, b, p) = fx.operands(&mut rng);
    let source = resident(&fx, &a);
    for (what, mut destination) in [
        ("into an empty ciphertext", Ciphertext::new().unwrap()),
        ("into a device ciphertext", resident(&fx, &b)),
        ("into an unmarked ciphertext", b.clone()),
    ] {
        destination.assign(&source);
        assert!(destination.on_gpu(), "{what}: the mark was not copied");
        assert_same(&a, &destination, what);
        let mut cpu = a.clone();
        check_op(
            &fx,
            mul_lin_rs_rotate,
            &mut cpu,
            &mut destination,
            &b,
            &p,
            &format!("{what}: op on the destination"),
        );
        assert_words(
            &a.data().unwrap(),
            &source.data().unwrap(),
            &format!("{what}: the source after"),
        );
    }
    // An unmarked source makes the destination unmarked (the mark is an attribute).
    let mut destination = resident(&fx, &b);
    destination.assign(&a);
    assert!(
        !destination.on_gpu(),
        "assigning an unmarked ciphertext kept the mark"
    );
    assert_same(&a, &destination, "from an unmarked source");
    assert_no_cpu_fallback();
}

/// `Decryptor::decrypt` of a device result (no explicit sync) equals decrypting the CPU
/// result; frames ended, started and synchronised between operations change nothing.
#[test]
fn decrypt_returns_the_device_result_and_frames_change_nothing() {
    let (fx, mut rng) = Fixture::with_rng();
    let sync_points: [(&str, fn()); 4] = [
        ("none", || {}),
        ("end_compute_frame", || end_compute_frame().unwrap()),
        ("start_compute_frame", || start_compute_frame().unwrap()),
        ("synchronize", || synchronize().unwrap()),
    ];
    for (name, sync) in sync_points {
        let (a, b, p) = fx.operands(&mut rng);
        let (mut cpu, mut gpu) = (a.clone(), on_gpu(&a));
        let (gb, gp) = (on_gpu(&b), plain_on_gpu(&p));
        // Every step on both, `sync` between device steps.
        let steps: [Op; 5] = [
            |fx, a, _, p| fx.evaluator.add_plain_inplace(a, p).unwrap(),
            |fx, a, b, _| {
                fx.evaluator.multiply_inplace(a, b).unwrap();
                fx.evaluator.relinearize_inplace(a, &fx.relin).unwrap();
            },
            |fx, a, _, _| fx.evaluator.rescale_to_next_inplace(a).unwrap(),
            |fx, a, _, _| {
                fx.evaluator
                    .rotate_vector_inplace(a, -1, &fx.galois)
                    .unwrap()
            },
            |fx, a, _, _| fx.evaluator.negate_inplace(a).unwrap(),
        ];
        for step in steps {
            step(&fx, &mut cpu, &b, &p);
            step(&fx, &mut gpu, &gb, &gp);
            sync();
        }
        // The device result is newer than the host words: decrypt must download.
        let want = fx.decryptor.decrypt(&cpu).unwrap().data().unwrap();
        let got = fx.decryptor.decrypt(&gpu).unwrap().data().unwrap();
        assert_words(&want, &got, &format!("decrypt, sync point {name}"));
        assert!(gpu.on_gpu());
        assert_same(&cpu, &gpu, &format!("words, sync point {name}"));
        // The operands are intact after the frame ended.
        assert_same(&b, &gb, &format!("operand b, sync point {name}"));
    }
    assert_no_cpu_fallback();
}

/// A marked plaintext re-encoded on the host after upload is uploaded again.
#[test]
fn plaintext_changed_after_upload_is_uploaded_again() {
    let (fx, mut rng) = Fixture::with_rng();
    let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));
    let first = fx.ctx.first_parms_id();
    let mut p = plain_on_gpu(&fx.plain(&mut rng));

    let (mut cpu, mut gpu) = (a.clone(), on_gpu(&a));
    fx.evaluator.multiply_plain_inplace(&mut cpu, &p).unwrap();
    fx.evaluator.multiply_plain_inplace(&mut gpu, &p).unwrap();
    assert_same(&cpu, &gpu, "multiply_plain uploads the plaintext");

    // In sync: re-encode, then multiply_plain again.
    let values = fx.values(&mut rng);
    fx.encoder
        .encode_into(&values, &first, fx.scale, &mut p)
        .unwrap();
    assert!(p.on_gpu(), "encode_into dropped the plaintext's mark");
    let q = fx.encoder.encode(&values, &first, fx.scale).unwrap();
    assert_words(&q.data().unwrap(), &p.data().unwrap(), "re-encoded words");
    let (mut cpu, mut gpu) = (b.clone(), on_gpu(&b));
    fx.evaluator.multiply_plain_inplace(&mut cpu, &q).unwrap();
    fx.evaluator.multiply_plain_inplace(&mut gpu, &p).unwrap();
    assert_same(&cpu, &gpu, "multiply_plain after encode_into (in sync)");

    // Device newer (mod_switched on the device, shorter): re-encode at the first level.
    fx.evaluator
        .mod_switch_to_next_plain_inplace(&mut p)
        .unwrap();
    let values = fx.values(&mut rng);
    fx.encoder
        .encode_into(&values, &first, fx.scale, &mut p)
        .unwrap();
    let q = fx.encoder.encode(&values, &first, fx.scale).unwrap();
    assert_eq!(
        p.coeff_count(),
        q.coeff_count(),
        "coeff_count after encode_into"
    );
    let (mut cpu, mut gpu) = (a.clone(), on_gpu(&a));
    fx.evaluator.multiply_plain_inplace(&mut cpu, &q).unwrap();
    fx.evaluator.multiply_plain_inplace(&mut gpu, &p).unwrap();
    assert_same(
        &cpu,
        &gpu,
        "multiply_plain after encode_into (device newer)",
    );
    assert_no_cpu_fallback();
}

/// 200 rounds of four operations on one ciphertext without a decrypt in between.
#[test]
fn many_operations_without_a_decrypt() {
    let (fx, mut rng) = Fixture::with_rng();
    let (a, b, p) = fx.operands(&mut rng);
    // Scale 1: multiply_plain keeps the ciphertext's scale.
    let three = fx
        .encoder
        .encode_scalar(3.0, &fx.ctx.first_parms_id(), 1.0)
        .unwrap();
    let (mut cpu, mut gpu) = (a.clone(), on_gpu(&a));
    let (gb, gp, g3) = (on_gpu(&b), plain_on_gpu(&p), plain_on_gpu(&three));
    let round = |ct: &mut Ciphertext, b: &Ciphertext, p: &Plaintext, three: &Plaintext| {
        fx.evaluator.add_inplace(ct, b).unwrap();
        fx.evaluator.multiply_plain_inplace(ct, three).unwrap();
        fx.evaluator.sub_plain_inplace(ct, p).unwrap();
        fx.evaluator.negate_inplace(ct).unwrap();
    };
    for _ in 0..200 {
        round(&mut cpu, &b, &p, &three);
        round(&mut gpu, &gb, &gp, &g3);
    }
    assert_same(&cpu, &gpu, "after 200 rounds");
    assert_no_cpu_fallback();
}

/// Two threads, each with its own evaluator, keys and operands (built here, moved in),
/// run chains on the device concurrently, decrypting as they go (which ends the shared
/// frame under the other thread's feet); each result equals its CPU result.
#[test]
fn threads() {
    let (fx, mut rng) = Fixture::with_rng();
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let evaluator = Evaluator::new(&fx.ctx).unwrap();
            let relin = fx.keygen.relin_keys().unwrap();
            let galois = fx.keygen.galois_keys_from_steps(&[1, -1]).unwrap();
            let decryptor = Decryptor::new(&fx.ctx, &fx.keygen.secret_key().unwrap()).unwrap();
            let (a, b, p) = fx.operands(&mut rng);
            let (ga, gb, gp) = (on_gpu(&a), on_gpu(&b), plain_on_gpu(&p));
            std::thread::spawn(move || {
                let chain = |a: &mut Ciphertext, b: &Ciphertext, p: &Plaintext| {
                    let mut outputs = Vec::new();
                    for i in 0..8 {
                        let mut c = a.clone();
                        evaluator.add_plain_inplace(&mut c, p).unwrap();
                        evaluator.multiply_inplace(&mut c, b).unwrap();
                        evaluator.relinearize_inplace(&mut c, &relin).unwrap();
                        evaluator.rescale_to_next_inplace(&mut c).unwrap();
                        evaluator
                            .rotate_vector_inplace(&mut c, if i % 2 == 0 { 1 } else { -1 }, &galois)
                            .unwrap();
                        let d = decryptor.decrypt(&c).unwrap();
                        outputs.push((c, d.data().unwrap()));
                        evaluator.add_inplace(a, b).unwrap();
                    }
                    outputs
                };
                let (mut a, mut ga) = (a, ga);
                let cpu = chain(&mut a, &b, &p);
                let gpu = chain(&mut ga, &gb, &gp);
                // Moved back out of the thread with the results.
                (t, cpu, gpu, ga, a)
            })
        })
        .collect();
    for h in handles {
        let (t, cpu, gpu, ga, a) = h.join().expect("a chain thread panicked");
        for (i, ((c, dc), (g, dg))) in cpu.iter().zip(&gpu).enumerate() {
            assert_same(c, g, &format!("thread {t}, step {i}"));
            assert_words(dc, dg, &format!("thread {t}, step {i}: decryption"));
        }
        assert!(ga.on_gpu());
        assert_same(&a, &ga, &format!("thread {t}: the moved ciphertext"));
    }
    assert_no_cpu_fallback();
}
