//! The bit-exact rule (docs/ARCHITECTURE.md, "The rule: identical words"): every routed
//! CKKS Evaluator operation, and the CKKS routines, run on `.gpu()` ciphertexts give the
//! words SEAL computes on the CPU from the same inputs, with the same metadata, and decrypt
//! to the same values.
//! Several parameter sets (3 primes at N = 2^12, 5 at 2^13, 60-bit primes, mixed 30- to
//! 60-bit primes), fresh random inputs each run, pooled device buffers poisoned
//! (`SEAL_OPENCL_POISON`) so unwritten words show up.

use seal_opencl::ckks::kernels::SUM_TERMS_MAX;
use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::harness::launches;
use seal_opencl_testkit::seal_c::{Ciphertext, Plaintext};

/// Every routed operation on N = `n`, the primes of `bits`, scale 2^`scale_bits`; failures
/// name the parameter set ("N=2^12 {35,30,35}").
fn check_all(n: u64, bits: &[i32], scale_bits: i32) {
    let fx = Fixture::with_params(n, bits, scale_bits);
    let bits: Vec<String> = bits.iter().map(i32::to_string).collect();
    let name = format!("N=2^{} {{{}}}", n.trailing_zeros(), bits.join(","));
    check_operations(&fx, &name);
}

/// The parameter sets (N, bit sizes of the primes, scale bits): 3 primes at N = 2^12, 5 at
/// 2^13, 60-bit primes, and mixed 30- to 60-bit primes.
const PARAMETER_SETS: [(u64, &[i32], i32); 4] = [
    (4096, &[35, 30, 35], 30),
    (8192, &[50, 40, 40, 40, 40], 40),
    (8192, &[60, 60, 60], 50),
    (8192, &[60, 30, 45, 30, 50], 30),
];

#[test]
fn every_operation_on_every_parameter_set() {
    for (n, bits, scale_bits) in PARAMETER_SETS {
        check_all(n, bits, scale_bits);
    }
}

child_test! {
    /// Determinism: every operation run three times gives the same words: twice on one
    /// backend (the second run on buffers the first one used, poisoned in between), and once
    /// on a second backend installed after the first was dropped (fresh pools, queues,
    /// tables and keys). In a child process, since it reinstalls the backend.
    fn determinism() [] {
        let (fx, mut rng) = Fixture::with_rng();
        let (a, b, p) = fx.operands(&mut rng);
        let run_all = || -> Vec<Vec<u64>> {
            operations()
                .into_iter()
                .map(|(_, op)| {
                    let mut g = on_gpu(&a);
                    op(&fx, &mut g, &on_gpu(&b), &plain_on_gpu(&p));
                    g.data().unwrap()
                })
                .collect()
        };
        let first = run_all();
        let again = run_all();
        reinstall();
        let fresh = run_all();
        for (i, (name, _)) in operations().iter().enumerate() {
            assert!(
                first[i] == again[i],
                "{name}: a second run on one backend differs"
            );
            assert!(
                first[i] == fresh[i],
                "{name}: a run on a fresh backend differs"
            );
        }
        assert_no_cpu_fallback();
    }
}

/// Copies of device ciphertexts share their words until one side writes (copy on write,
/// `src/seal_backend/image.rs`): every operation applied to a copy of a resident ciphertext
/// gives SEAL's words and leaves the original's as they were, and applied to the original
/// after copying, leaves the copy's; and the operations that read a second ciphertext, with
/// that operand the original of the copy they write.
#[test]
fn copies_share_words_until_written() {
    let (fx, mut rng) = Fixture::with_rng();
    for (name, op) in operations() {
        let (a, b, p) = fx.operands(&mut rng);
        let mut want = a.clone();
        op(&fx, &mut want, &b, &p);
        let device_plain = plain_on_gpu(&p);

        let original = resident(&fx, &a);
        let mut copy = original.clone();
        op(&fx, &mut copy, &resident(&fx, &b), &device_plain);
        assert_same(&want, &copy, &format!("{name} on a copy"));
        assert_same(&a, &original, &format!("{name} on a copy: the original"));

        let mut original = resident(&fx, &a);
        let copy = original.clone();
        op(&fx, &mut original, &resident(&fx, &b), &device_plain);
        assert_same(&want, &original, &format!("{name} on a copied original"));
        assert_same(&a, &copy, &format!("{name} on a copied original: the copy"));

        if !["add", "multiply", "MulLin", "MulLinRSModSwAdd"].contains(&name) {
            continue;
        }
        let mut want_self = a.clone();
        op(&fx, &mut want_self, &a, &p);
        let original = resident(&fx, &a);
        let mut copy = original.clone();
        op(&fx, &mut copy, &original, &device_plain);
        assert_same(
            &want_self,
            &copy,
            &format!("{name} of a copy with its original"),
        );
        assert_same(
            &a,
            &original,
            &format!("{name} of a copy with its original: the original"),
        );
    }
    assert_no_cpu_fallback();
}

/// Parameters whose top level chains (N = 2^13, a two-pass NTT layout; its key switches
/// run on the fused passes unchained where `SEAL_OPENCL_CHAIN=0`), where a product is
/// deferred, and a random generator.
fn chaining_fixture() -> (Fixture, rand::rngs::StdRng) {
    let (n, bits, scale_bits) = PARAMETER_SETS[1];
    (
        Fixture::with_params(n, bits, scale_bits),
        seal_opencl_testkit::harness::rng(),
    )
}

/// A multiply's product waits for its relinearization (`src/seal_backend/deferred.rs`):
/// every way to reach it gives SEAL's words. Relinearized in place, out of place (a copy of
/// the product, then both read; also after a read, the copy sharing the product's words),
/// read before relinearizing, added to another, squared
/// (`x * x`),
/// with an operand written after the multiply and before the product is used, and
/// overwritten by a new product unread; plaintext products added and subtracted, read and
/// rotated.
#[test]
fn deferred_products_reach_every_use() {
    let (fx, mut rng) = chaining_fixture();
    let ev = &fx.evaluator;
    let (x, y, pt) = fx.operands(&mut rng);
    let mul = |a: &Ciphertext, b: &Ciphertext| {
        let mut out = a.clone();
        ev.multiply_inplace(&mut out, b).unwrap();
        out
    };
    let relin = |a: &Ciphertext| {
        let mut out = a.clone();
        ev.relinearize_inplace(&mut out, &fx.relin).unwrap();
        out
    };
    let product = mul(&x, &y);
    let (xg, yg) = (resident(&fx, &x), resident(&fx, &y));

    let mut p = xg.clone();
    ev.multiply_inplace(&mut p, &yg).unwrap();
    ev.relinearize_inplace(&mut p, &fx.relin).unwrap();
    assert_same(&relin(&product), &p, "relinearized in place");

    let mut p = Ciphertext::new().unwrap();
    ev.multiply(&xg, &yg, &mut p).unwrap();
    let mut r = Ciphertext::new().unwrap();
    ev.relinearize(&p, &fx.relin, &mut r).unwrap();
    assert_same(&relin(&product), &r, "relinearized out of place");
    assert_same(&product, &p, "the product a copy was relinearized from");

    let mut p = xg.clone();
    ev.multiply_inplace(&mut p, &yg).unwrap();
    assert_same(&product, &p, "read before relinearizing");
    ev.relinearize_inplace(&mut p, &fx.relin).unwrap();
    assert_same(&relin(&product), &p, "relinearized after a read");

    // Read, so that its words are the product's own; then SEAL's out-of-place relinearize,
    // whose copy shares them: read by the key switch, not copied first.
    let mut p = xg.clone();
    ev.multiply_inplace(&mut p, &yg).unwrap();
    assert_same(&product, &p, "read before relinearizing into another");
    let mut r = Ciphertext::new().unwrap();
    ev.relinearize(&p, &fx.relin, &mut r).unwrap();
    assert_same(
        &relin(&product),
        &r,
        "relinearized out of place after a read",
    );
    assert_same(
        &product,
        &p,
        "the read product a copy was relinearized from",
    );

    // Two products, both deferred, added.
    let (mut p, mut q) = (xg.clone(), xg.clone());
    ev.multiply_inplace(&mut p, &yg).unwrap();
    ev.multiply_inplace(&mut q, &xg).unwrap();
    ev.add_inplace(&mut p, &q).unwrap();
    let mut want = product.clone();
    ev.add_inplace(&mut want, &mul(&x, &x)).unwrap();
    assert_same(&want, &p, "added to another product");

    let mut p = xg.clone();
    ev.multiply_inplace(&mut p, &xg).unwrap();
    ev.relinearize_inplace(&mut p, &fx.relin).unwrap();
    assert_same(&relin(&mul(&x, &x)), &p, "x * x relinearized");

    let mut p = xg.clone();
    ev.square_inplace(&mut p).unwrap();
    ev.relinearize_inplace(&mut p, &fx.relin).unwrap();
    let mut want = x.clone();
    ev.square_inplace(&mut want).unwrap();
    assert_same(&relin(&want), &p, "a square relinearized");

    // The operands change after the multiply: the product still has the old words.
    let (mut a, mut b) = (xg.clone(), yg.clone());
    let mut p = Ciphertext::new().unwrap();
    ev.multiply(&a, &b, &mut p).unwrap();
    ev.negate_inplace(&mut a).unwrap();
    ev.add_inplace(&mut b, &yg).unwrap();
    ev.relinearize_inplace(&mut p, &fx.relin).unwrap();
    assert_same(&relin(&product), &p, "operands written after the multiply");
    let mut want_b = y.clone();
    ev.add_inplace(&mut want_b, &y).unwrap();
    assert_same(&want_b, &b, "the operand written after the multiply");

    // Plaintext products added into and subtracted from an accumulator (computed in the
    // sum, the temporaries staying deferred), one of them then read itself.
    let pg = plain_on_gpu(&pt);
    let (mut acc, mut t1, mut t2) = (
        Ciphertext::new().unwrap(),
        Ciphertext::new().unwrap(),
        Ciphertext::new().unwrap(),
    );
    ev.multiply_plain(&xg, &pg, &mut acc).unwrap();
    ev.multiply_plain(&yg, &pg, &mut t1).unwrap();
    ev.multiply_plain(&xg, &pg, &mut t2).unwrap();
    ev.add_inplace(&mut acc, &t1).unwrap();
    ev.sub_inplace(&mut acc, &t2).unwrap();
    let (mut want_t1, mut want_t2) = (Ciphertext::new().unwrap(), Ciphertext::new().unwrap());
    ev.multiply_plain(&y, &pt, &mut want_t1).unwrap();
    ev.multiply_plain(&x, &pt, &mut want_t2).unwrap();
    let mut want = want_t2.clone();
    ev.add_inplace(&mut want, &want_t1).unwrap();
    ev.sub_inplace(&mut want, &want_t2).unwrap();
    assert_same(&want, &acc, "plaintext products added and subtracted");
    assert_same(&want_t1, &t1, "a plaintext product added, then read");
    // A plaintext product rotated in place (its permutation reads the product).
    ev.multiply_plain_inplace(&mut t2, &pg).unwrap();
    ev.rotate_vector_inplace(&mut t2, 1, &fx.galois).unwrap();
    ev.multiply_plain_inplace(&mut want_t2, &pt).unwrap();
    ev.rotate_vector_inplace(&mut want_t2, 1, &fx.galois)
        .unwrap();
    assert_same(&want_t2, &t2, "a plaintext product rotated");
    // TenSEAL's matrix product: each diagonal's product rotated in place and added into
    // the accumulator; each product also rotated out of place (a copy rotated) by 3, which
    // SEAL makes two rotations (4, then -1); one product read itself after a conjugation.
    let (mut acc, mut want_acc) = (Ciphertext::new().unwrap(), Ciphertext::new().unwrap());
    ev.multiply_plain(&xg, &pg, &mut acc).unwrap();
    ev.multiply_plain(&x, &pt, &mut want_acc).unwrap();
    for (step, ct, want_ct) in [(1, &xg, &x), (5, &yg, &y)] {
        let (mut t, mut want_t) = (Ciphertext::new().unwrap(), Ciphertext::new().unwrap());
        ev.multiply_plain(ct, &pg, &mut t).unwrap();
        ev.multiply_plain(want_ct, &pt, &mut want_t).unwrap();
        let (mut r, mut want_r) = (Ciphertext::new().unwrap(), Ciphertext::new().unwrap());
        ev.rotate_vector(&t, 3, &fx.galois, &mut r).unwrap();
        ev.rotate_vector(&want_t, 3, &fx.galois, &mut want_r)
            .unwrap();
        assert_same(&want_r, &r, "a plaintext product rotated out of place");
        ev.rotate_vector_inplace(&mut t, step, &fx.galois).unwrap();
        ev.rotate_vector_inplace(&mut want_t, step, &fx.galois)
            .unwrap();
        ev.add_inplace(&mut acc, &t).unwrap();
        ev.add_inplace(&mut want_acc, &want_t).unwrap();
    }
    assert_same(&want_acc, &acc, "plaintext products rotated and added");
    let (mut t, mut want_t) = (Ciphertext::new().unwrap(), Ciphertext::new().unwrap());
    ev.multiply_plain(&yg, &pg, &mut t).unwrap();
    ev.multiply_plain(&y, &pt, &mut want_t).unwrap();
    let mut c = Ciphertext::new().unwrap();
    ev.complex_conjugate(&t, &fx.galois, &mut c).unwrap();
    assert_same(&want_t, &t, "a conjugated plaintext product read");
    let mut want_c = Ciphertext::new().unwrap();
    ev.complex_conjugate(&want_t, &fx.galois, &mut want_c)
        .unwrap();
    assert_same(&want_c, &c, "a plaintext product conjugated");

    // A product replaced unread by another, then relinearized.
    let mut p = xg.clone();
    ev.multiply_inplace(&mut p, &yg).unwrap();
    p = xg.clone();
    ev.multiply_inplace(&mut p, &xg).unwrap();
    ev.relinearize_inplace(&mut p, &fx.relin).unwrap();
    assert_same(&relin(&mul(&x, &x)), &p, "a product replaced unread");
    assert_no_cpu_fallback();
}

/// The inputs of a program of sums on one path: ciphertexts and plaintexts, SEAL's CPU
/// objects or device ones (resident ciphertexts, marked plaintexts).
struct Inputs {
    cts: Vec<Ciphertext>,
    plains: Vec<Plaintext>,
}

/// The terms of the sums' loops: more than two launches' worth (`SUM_TERMS_MAX` = 8).
const TERMS: usize = 2 * SUM_TERMS_MAX + 3;

/// Rotation steps with a Galois key of their own in the fixture (`STEPS`): one
/// apply_galois each.
const KEYED_STEPS: [i32; 6] = [1, 4, 16, 5, -1, -7];

/// Adds into accumulators as programs write them (`deferred.rs`'s sums), every result named:
/// a network layer's or SealPIR's loop (multiply_plain into a temporary, add or sub into an
/// accumulator that starts as the first product), TenSEAL's (ciphertexts added in turn),
/// ciphertext and product terms mixed, add_many; and a pending sum of three terms, into an
/// accumulator that holds its words or shares them with a copy, then read, copied (and
/// added to again), rotated, rescaled, negated, a term of another sum, overwritten unread;
/// a sum whose terms are written after they were added; a sum of products of two
/// ciphertexts relinearized and rescaled.
fn sums_program(fx: &Fixture, inputs: &Inputs) -> Vec<(String, Ciphertext)> {
    let ev = &fx.evaluator;
    let (c, p) = (&inputs.cts, &inputs.plains);
    let new = || Ciphertext::new().unwrap();
    let product = |i: usize, j: usize| {
        let mut t = new();
        ev.multiply_plain(&c[i % c.len()], &p[j % p.len()], &mut t)
            .unwrap();
        t
    };
    let mut out = Vec::new();

    let mut acc = product(0, 0);
    for i in 1..TERMS {
        let t = product(i, i + 1);
        if i % 3 == 2 {
            ev.sub_inplace(&mut acc, &t).unwrap();
        } else {
            ev.add_inplace(&mut acc, &t).unwrap();
        }
    }
    out.push(("products added and subtracted".to_string(), acc));

    let mut acc = c[0].clone();
    for i in 0..TERMS {
        if i % 4 == 3 {
            ev.sub_inplace(&mut acc, &c[i % c.len()]).unwrap();
        } else {
            ev.add_inplace(&mut acc, &c[i % c.len()]).unwrap();
        }
    }
    out.push(("ciphertexts added and subtracted".to_string(), acc));

    // Ciphertext terms of a product's scale: products already run (negated twice).
    let ran = |i: usize, j: usize| {
        let mut t = product(i, j);
        ev.negate_inplace(&mut t).unwrap();
        ev.negate_inplace(&mut t).unwrap();
        t
    };
    let mut acc = product(1, 0);
    for i in 0..11 {
        let t = if i % 2 == 0 { ran(i, i) } else { product(i, i) };
        if i % 5 == 4 {
            ev.sub_inplace(&mut acc, &t).unwrap();
        } else {
            ev.add_inplace(&mut acc, &t).unwrap();
        }
    }
    out.push(("ciphertext and product terms".to_string(), acc));

    let many: Vec<&Ciphertext> = (0..TERMS).map(|i| &c[i % c.len()]).collect();
    let mut acc = new();
    ev.add_many(&many, &mut acc).unwrap();
    out.push(("add_many".to_string(), acc));

    let base = ran(0, 0);
    for alone in [true, false] {
        let how = if alone { "in place" } else { "from a copy" };
        // Three terms pending, each of the base's scale: c1 * p0 (a product), c2 * p1 (its
        // words), - c3 * p2 (a product).
        let pending = || {
            let mut acc = base.clone();
            if alone {
                ev.negate_inplace(&mut acc).unwrap();
            }
            ev.add_inplace(&mut acc, &product(1, 0)).unwrap();
            ev.add_inplace(&mut acc, &ran(2, 1)).unwrap();
            ev.sub_inplace(&mut acc, &product(3, 2)).unwrap();
            acc
        };
        out.push((format!("{how}: read"), pending()));
        let mut acc = pending();
        let copy = acc.clone();
        ev.add_inplace(&mut acc, &product(2, 2)).unwrap();
        out.push((format!("{how}: copied"), copy));
        out.push((format!("{how}: added to after a copy"), acc));
        let mut acc = pending();
        ev.rotate_vector_inplace(&mut acc, 1, &fx.galois).unwrap();
        out.push((format!("{how}: rotated"), acc));
        let mut acc = pending();
        ev.rescale_to_next_inplace(&mut acc).unwrap();
        out.push((format!("{how}: rescaled"), acc));
        let mut acc = pending();
        ev.negate_inplace(&mut acc).unwrap();
        out.push((format!("{how}: negated"), acc));
        let (acc, mut other) = (pending(), product(2, 0));
        ev.add_inplace(&mut other, &ran(3, 1)).unwrap();
        ev.add_inplace(&mut other, &acc).unwrap();
        out.push((format!("{how}: a term of another sum"), other));
        out.push((format!("{how}: the term of another sum"), acc));
        let mut acc = pending();
        ev.multiply_plain(&c[1], &p[1], &mut acc).unwrap();
        out.push((format!("{how}: overwritten unread"), acc));
    }
    out.push(("the base of the sums".to_string(), base));

    // Terms written after they were added: the sum has their old words.
    let (mut acc, mut t, mut u) = (c[0].clone(), c[1].clone(), product(2, 1));
    ev.add_inplace(&mut acc, &c[2]).unwrap();
    ev.add_inplace(&mut acc, &t).unwrap();
    let mut acc_of_products = product(3, 0);
    ev.add_inplace(&mut acc_of_products, &u).unwrap();
    ev.negate_inplace(&mut t).unwrap();
    ev.add_plain_inplace(&mut t, &p[0]).unwrap();
    ev.rotate_vector_inplace(&mut u, 1, &fx.galois).unwrap();
    out.push(("terms written after: the sum".to_string(), acc));
    out.push(("terms written after: a term".to_string(), t));
    out.push((
        "product terms written after: the sum".to_string(),
        acc_of_products,
    ));
    out.push(("product terms written after: a term".to_string(), u));

    // Rotate-and-sum (TenSEAL's sum and dot product, an inner product): SEAL's out-of-place
    // rotate_vector copies the accumulator, which then adds or subtracts the rotation; a
    // copied accumulator's sums start from zero, so that the copy takes the pending sum
    // along and a chained rotation reads it on its loads. A copy kept midway, unread while
    // the accumulator's sum grows, keeps the sum it was made of.
    let mut acc = ran(1, 2);
    let mut midway = new();
    for i in 0..11 {
        let mut rotated = new();
        ev.rotate_vector(&acc, KEYED_STEPS[i % 6], &fx.galois, &mut rotated)
            .unwrap();
        if i % 4 == 3 {
            ev.sub_inplace(&mut acc, &rotated).unwrap();
        } else {
            ev.add_inplace(&mut acc, &rotated).unwrap();
        }
        if i == 4 {
            midway = acc.clone();
        }
    }
    out.push(("rotate and sum".to_string(), acc));
    out.push(("rotate and sum: a copy midway".to_string(), midway));

    // Products of two ciphertexts summed, then relinearized and rescaled.
    let mul = |i: usize, j: usize| {
        let mut t = new();
        ev.multiply(&c[i], &c[j], &mut t).unwrap();
        t
    };
    let mut acc = mul(0, 1);
    for (i, j) in [(1, 2), (2, 3), (0, 0)] {
        ev.add_inplace(&mut acc, &mul(i, j)).unwrap();
    }
    ev.relinearize_inplace(&mut acc, &fx.relin).unwrap();
    ev.rescale_to_next_inplace(&mut acc).unwrap();
    out.push((
        "products of ciphertexts summed, relinearized".to_string(),
        acc,
    ));
    out
}

/// Deferred sums (`src/seal_backend/deferred.rs`): every result of [`sums_program`] on the
/// device equals SEAL's, at N = 2^12 {35, 30, 35} and at N = 2^13 with five primes (where
/// the level chains) and with 60-bit primes.
#[test]
fn deferred_sums_reach_every_use() {
    let mut rng = seal_opencl_testkit::harness::rng();
    for (n, bits, scale_bits) in [PARAMETER_SETS[0], PARAMETER_SETS[1], PARAMETER_SETS[2]] {
        let fx = Fixture::with_params(n, bits, scale_bits);
        let cpu = Inputs {
            cts: (0..4).map(|_| fx.encrypt(&mut rng)).collect(),
            plains: (0..3).map(|_| fx.plain(&mut rng)).collect(),
        };
        let gpu = Inputs {
            cts: cpu.cts.iter().map(|c| resident(&fx, c)).collect(),
            plains: cpu.plains.iter().map(plain_on_gpu).collect(),
        };
        let want = sums_program(&fx, &cpu);
        let got = sums_program(&fx, &gpu);
        for ((name, want), (_, got)) in want.iter().zip(&got) {
            assert_same(want, got, &format!("N={n} {bits:?}: {name}"));
        }
    }
    assert_no_cpu_fallback();
}

child_test! {
    /// The product is deferred where the level chains (N = 2^13):
    /// a multiply of resident ciphertexts launches nothing and its relinearization one
    /// kernel, a multiply_plain into a temporary added into another ciphertext and read one
    /// (the sum), and a multiply_plain rotated, then added and read, two; m terms added
    /// into an accumulator cost ceil(m / M) launches (M = `SUM_TERMS_MAX`), a multiply_plain
    /// rescaled one, and so do three added and rescaled; with
    /// `SEAL_OPENCL_DEFER_MULTIPLY=0` (the second child) one and one, two, three, and a
    /// launch per multiply_plain and per add. In a child
    /// process, since it installs the backend with the global profiler on.
    fn a_multiply_and_its_relinearization_are_one_launch() {
        let profiler = seal_opencl::profiler::enable_global();
        let deferred = std::env::var("SEAL_OPENCL_DEFER_MULTIPLY").as_deref() != Ok("0");
        let batched = deferred && batch_products() > 1;
        let (fx, mut rng) = chaining_fixture();
        let (x, y, pt) = fx.operands(&mut rng);
        let (mut p, yg) = (resident(&fx, &x), resident(&fx, &y));
        let multiply = launches(&profiler, None, || fx.evaluator.multiply_inplace(&mut p, &yg).unwrap());
        let relinearize = launches(&profiler, None, || {
            fx.evaluator.relinearize_inplace(&mut p, &fx.relin).unwrap()
        });
        let read = launches(&profiler, None, || {
            p.data().unwrap();
        });
        // A batched relinearization waits for another to share its launch, or for a use.
        let want = match (deferred, batched) {
            (true, true) => (0, 0, 1),
            (true, false) => (0, 1, 0),
            (false, _) => (1, 1, 0),
        };
        assert_eq!((multiply, relinearize, read), want);
        assert_same(&fx.mul_lin(&x, &y), &p, "MulLin");
        // A multiply_plain into a temporary added into an accumulator, then read: one
        // launch (the sum, at the read).
        let (plain, mut acc, mut t) = (
            plain_on_gpu(&pt),
            Ciphertext::new().unwrap(),
            Ciphertext::new().unwrap(),
        );
        fx.evaluator.multiply_plain(&yg, &plain, &mut acc).unwrap();
        // Run the accumulator's own product before counting.
        fx.evaluator.negate_inplace(&mut acc).unwrap();
        fx.evaluator.negate_inplace(&mut acc).unwrap();
        let launched = launches(&profiler, None, || {
            fx.evaluator.multiply_plain(&yg, &plain, &mut t).unwrap();
            fx.evaluator.add_inplace(&mut acc, &t).unwrap();
            acc.data().unwrap();
        });
        assert_eq!(launched, if deferred { 1 } else { 2 });
        // TenSEAL's diagonal: a multiply_plain, its rotation in place and its add into an
        // accumulator, then read: the rotation reads the product, the read runs the sum.
        let launched = launches(&profiler, None, || {
            fx.evaluator.multiply_plain(&yg, &plain, &mut t).unwrap();
            fx.evaluator.rotate_vector_inplace(&mut t, 1, &fx.galois).unwrap();
            fx.evaluator.add_inplace(&mut acc, &t).unwrap();
            acc.data().unwrap();
        });
        assert_eq!(launched, if deferred { 2 } else { 3 });
        // Rotate-and-sum: each step an out-of-place rotation of the accumulator (which
        // reads its pending sum) and an add into it; a sum runs when it reaches M terms (the
        // accumulator's words and M - 1 rotations), and at the read. Without deferral a
        // launch per rotation and per add.
        let steps: usize = 12;
        let (mut acc, mut want) = (resident(&fx, &x), x.clone());
        let launched = launches(&profiler, None, || {
            for i in 0..steps {
                let mut rotated = Ciphertext::new().unwrap();
                fx.evaluator
                    .rotate_vector(&acc, KEYED_STEPS[i % 6], &fx.galois, &mut rotated)
                    .unwrap();
                fx.evaluator.add_inplace(&mut acc, &rotated).unwrap();
            }
            acc.data().unwrap();
        });
        let sums = steps.div_ceil(SUM_TERMS_MAX - 1);
        let (steps, sums) = (steps as u64, sums as u64);
        assert_eq!(launched, if deferred { steps + sums } else { 2 * steps });
        for i in 0..steps as usize {
            let mut rotated = Ciphertext::new().unwrap();
            fx.evaluator
                .rotate_vector(&want, KEYED_STEPS[i % 6], &fx.galois, &mut rotated)
                .unwrap();
            fx.evaluator.add_inplace(&mut want, &rotated).unwrap();
        }
        assert_same(&want, &acc, "rotate and sum");
        // A multiply_plain rescaled (a dot product's, a layer's product), and three of them
        // added and rescaled (a layer's sum): the rescale reads the product or the sum from
        // its factors in its own launch. Without deferral a launch for each product and
        // add too.
        let mut product = Ciphertext::new().unwrap();
        fx.evaluator.multiply_plain(&y, &pt, &mut product).unwrap();
        for terms in [1, 3] {
            let launched = launches(&profiler, None, || {
                fx.evaluator.multiply_plain(&yg, &plain, &mut acc).unwrap();
                for _ in 1..terms {
                    fx.evaluator.multiply_plain(&yg, &plain, &mut t).unwrap();
                    fx.evaluator.add_inplace(&mut acc, &t).unwrap();
                }
                fx.evaluator.rescale_to_next_inplace(&mut acc).unwrap();
            });
            assert_eq!(launched, if deferred { 1 } else { 2 * terms }, "{terms} products rescaled");
            let mut want = product.clone();
            for _ in 1..terms {
                fx.evaluator.add_inplace(&mut want, &product).unwrap();
            }
            fx.evaluator.rescale_to_next_inplace(&mut want).unwrap();
            assert_same(&want, &acc, &format!("{terms} products rescaled"));
        }
        // m terms into an accumulator cost ceil(m / M) launches, floor(m / M) of them at the
        // adds (a sum of M terms runs at once) and one at the read for the rest: products
        // added into an accumulator that holds its words, into one that starts as the first
        // product (the network's and SealPIR's loops), and ciphertexts (TenSEAL's). Without
        // deferral 2m, 2m - 1 and m.
        let (x_cpu, p_cpu) = (x.clone(), pt);
        for m in [1, SUM_TERMS_MAX - 1, SUM_TERMS_MAX, SUM_TERMS_MAX + 1, 2 * SUM_TERMS_MAX + 3] {
            let sums = (m / SUM_TERMS_MAX, usize::from(m % SUM_TERMS_MAX != 0));
            // x * p, run (negated twice), holding its words.
            let (mut acc, mut want) = (Ciphertext::new().unwrap(), Ciphertext::new().unwrap());
            fx.evaluator.multiply_plain(&resident(&fx, &x), &plain, &mut acc).unwrap();
            fx.evaluator.negate_inplace(&mut acc).unwrap();
            fx.evaluator.negate_inplace(&mut acc).unwrap();
            fx.evaluator.multiply_plain(&x_cpu, &p_cpu, &mut want).unwrap();
            let at_adds = launches(&profiler, None, || {
                for _ in 0..m {
                    fx.evaluator.multiply_plain(&yg, &plain, &mut t).unwrap();
                    fx.evaluator.add_inplace(&mut acc, &t).unwrap();
                }
            });
            let at_read = launches(&profiler, None, || {
                acc.data().unwrap();
            });
            let want_counts = if deferred { sums } else { (2 * m, 0) };
            assert_eq!((at_adds as usize, at_read as usize), want_counts, "{m} products");
            let mut t_cpu = Ciphertext::new().unwrap();
            fx.evaluator.multiply_plain(&y, &p_cpu, &mut t_cpu).unwrap();
            for _ in 0..m {
                fx.evaluator.add_inplace(&mut want, &t_cpu).unwrap();
            }
            assert_same(&want, &acc, &format!("{m} products"));

            let launched = launches(&profiler, None, || {
                fx.evaluator.multiply_plain(&yg, &plain, &mut acc).unwrap();
                for _ in 1..m {
                    fx.evaluator.multiply_plain(&yg, &plain, &mut t).unwrap();
                    fx.evaluator.add_inplace(&mut acc, &t).unwrap();
                }
                acc.data().unwrap();
            });
            let want_count = if deferred { sums.0 + sums.1 } else { 2 * m - 1 };
            assert_eq!(launched as usize, want_count, "{m} products from a product");

            let mut acc = resident(&fx, &x);
            let launched = launches(&profiler, None, || {
                for _ in 0..m {
                    fx.evaluator.add_inplace(&mut acc, &yg).unwrap();
                }
                acc.data().unwrap();
            });
            let want_count = if deferred { sums.0 + sums.1 } else { m };
            assert_eq!(launched as usize, want_count, "{m} ciphertexts");
        }
    }
    parent(child) {
        seal_opencl_testkit::harness::run_child(child, &[]);
        seal_opencl_testkit::harness::run_child(
            child,
            &[(seal_opencl::config::DEFER_MULTIPLY.name, "0")],
        );
        seal_opencl_testkit::harness::run_child(
            child,
            &[(seal_opencl::config::BATCH_PRODUCTS.name, "1")],
        );
    }
}

/// The value a batch `setting` (`SEAL_OPENCL_BATCH_PRODUCTS`, `SEAL_OPENCL_BATCH_ROTATIONS`
/// or `SEAL_OPENCL_BATCH_WAVES`) has in this process (`default` where unset).
fn batch_setting(setting: seal_opencl::config::Setting, default: usize) -> usize {
    std::env::var(setting.name).map_or(default, |v| v.parse().unwrap())
}

/// The `SEAL_OPENCL_BATCH_PRODUCTS` setting of this process.
fn batch_products() -> usize {
    batch_setting(
        seal_opencl::config::BATCH_PRODUCTS,
        seal_opencl::ckks::context::DEFAULT_BATCH_PRODUCTS,
    )
}

/// Whether this process chains key switches at [`chaining_fixture`]'s level: unless its
/// parent turned chaining off (`SEAL_OPENCL_CHAIN=0`), where they run on the fused passes
/// unchained, several a launch all the same.
fn chains() -> bool {
    std::env::var(seal_opencl::config::CHAIN.name).as_deref() != Ok("0")
}

/// The launches of one batch of key switches, as `first` (a batch of one, launched with
/// nothing else) counted them: one where the level chains, one per fused pass (more than
/// one) where it does not. The counts of the batch tests below are in these units.
fn batch_launches(first: u64) -> u64 {
    if chains() {
        assert_eq!(first, 1, "a chained batch of key switches");
    } else {
        assert!(
            first > 1,
            "unchained, a batch of key switches took {first} launch"
        );
    }
    first
}

/// Runs the child test `child` once per environment of `settings`, each also with chaining
/// off (`SEAL_OPENCL_CHAIN=0`: the key switches' fused passes, several jobs a launch).
fn run_chained_and_not(child: &str, settings: &[&[(&str, &str)]]) {
    for env in settings {
        seal_opencl_testkit::harness::run_child(child, env);
        let unchained: Vec<(&str, &str)> = env
            .iter()
            .copied()
            .chain([(seal_opencl::config::CHAIN.name, "0")])
            .collect();
        seal_opencl_testkit::harness::run_child(child, &unchained);
    }
}

child_test! {
    /// Relinearizations of deferred multiplies wait for each other where the level's key
    /// switches run on the fused passes (`src/seal_backend/batch.rs`), up to
    /// `SEAL_OPENCL_BATCH_PRODUCTS` (B) in one batch, one launch where the level chains and
    /// one batch the passes' launches where it does not ([`batch_launches`]): m
    /// independent MulLins from one thread launch floor(m / B) batches at their
    /// relinearizations and one more at the read where B does not divide m; a pending one
    /// runs at any use of its words (another operation, a read from another thread, a
    /// copy), at `synchronize`, and still runs (for the others of its launch) when its
    /// ciphertext was overwritten; one with another key runs the pending ones first. Every
    /// result is SEAL's. Run with B = 2, 3 and 4 (the default), chained and not. In a child
    /// process, since it installs the backend with the global profiler on.
    fn relinearizations_share_launches() {
        let profiler = seal_opencl::profiler::enable_global();
        let most = batch_products() as u64;
        let (fx, mut rng) = chaining_fixture();
        let ev = &fx.evaluator;
        let (x, y, _) = fx.operands(&mut rng);
        let (xg, yg) = (resident(&fx, &x), resident(&fx, &y));
        let want = fx.mul_lin(&x, &y);
        let want_square = fx.mul_lin(&x, &x);
        let mul_lin = |a: &Ciphertext, b: &Ciphertext| {
            let mut p = a.clone();
            ev.multiply_inplace(&mut p, b).unwrap();
            ev.relinearize_inplace(&mut p, &fx.relin).unwrap();
            p
        };
        let unit = batch_launches(launches(&profiler, None, || {
            mul_lin(&xg, &yg).data().unwrap();
        }));
        for m in [1, most, 2 * most + 1] {
            let mut results = Vec::new();
            let at_calls = launches(&profiler, None, || {
                for i in 0..m {
                    results.push(if i % 3 == 2 { mul_lin(&xg, &xg) } else { mul_lin(&xg, &yg) });
                }
            });
            let at_reads = launches(&profiler, None, || {
                for r in &results {
                    r.data().unwrap();
                }
            });
            assert_eq!(
                (at_calls, at_reads),
                (unit * (m / most), unit * u64::from(m % most != 0)),
                "{m} MulLins, {most} a launch"
            );
            for (i, r) in results.iter().enumerate() {
                let want = if i % 3 == 2 { &want_square } else { &want };
                assert_same(want, r, &format!("MulLin {i} of {m}"));
            }
        }
        // A pending one used by another operation: it runs then, alone.
        let mut p = mul_lin(&xg, &yg);
        let used = launches(&profiler, None, || ev.negate_inplace(&mut p).unwrap());
        assert_eq!(used, unit + 1, "a pending MulLin negated");
        let mut want_negated = want.clone();
        ev.negate_inplace(&mut want_negated).unwrap();
        assert_same(&want_negated, &p, "a pending MulLin negated");
        // Copied, and read from another thread.
        let p = mul_lin(&xg, &yg);
        let copy = p.clone();
        std::thread::scope(|s| {
            s.spawn(|| assert_same(&want, &p, "a pending MulLin read by another thread"));
        });
        assert_same(&want, &copy, "a copy of a pending MulLin");
        // synchronize runs it.
        let p = mul_lin(&xg, &yg);
        let synchronized = launches(&profiler, None, || {
            seal_opencl_testkit::seal_c::synchronize().unwrap()
        });
        assert_eq!(synchronized, unit, "synchronize");
        assert_same(&want, &p, "a pending MulLin after synchronize");
        // Overwritten while pending: it still runs, in the launch of the next.
        if most > 1 {
            // A slot a pending MulLin is written into, then overwritten (as a loop
            // variable is).
            let mut slot = [mul_lin(&xg, &yg)];
            slot[0] = xg.clone();
            let (mut q, mut r) = (Ciphertext::new().unwrap(), Ciphertext::new().unwrap());
            let launched = launches(&profiler, None, || {
                for _ in 1..most {
                    q = mul_lin(&xg, &yg);
                }
                r = mul_lin(&xg, &xg);
                r.data().unwrap();
            });
            // most - 1 more fill the first launch; the last runs at its read.
            assert_eq!(launched, 2 * unit, "after an overwritten pending MulLin");
            assert_same(&want, &q, "the MulLin after an overwritten pending one");
            assert_same(&want_square, &r, "the MulLin after those");
            assert_same(&x, &slot[0], "the overwritten one");
        }
        // A relinearization with another key (a fresh set) runs the pending ones first.
        let other = fx.keygen.relin_keys().unwrap();
        let p = mul_lin(&xg, &yg);
        let mut q = xg.clone();
        ev.multiply_inplace(&mut q, &yg).unwrap();
        let launched = launches(&profiler, None, || {
            ev.relinearize_inplace(&mut q, &other).unwrap()
        });
        assert_eq!(launched, unit * u64::from(most > 1), "a MulLin with another key");
        assert_same(&want, &p, "the MulLin before one with another key");
        let mut want_other = x.clone();
        ev.multiply_inplace(&mut want_other, &y).unwrap();
        ev.relinearize_inplace(&mut want_other, &other).unwrap();
        assert_same(&want_other, &q, "a MulLin with another key");
        assert_no_cpu_fallback();
    }
    parent(child) {
        let name = seal_opencl::config::BATCH_PRODUCTS.name;
        run_chained_and_not(child, &[&[(name, "2")], &[(name, "3")], &[(name, "4")]]);
    }
}

/// The `SEAL_OPENCL_BATCH_ROTATIONS` setting of this process.
fn batch_rotations() -> usize {
    batch_setting(
        seal_opencl::config::BATCH_ROTATIONS,
        seal_opencl::ckks::context::DEFAULT_BATCH_ROTATIONS,
    )
}

/// Runs the child test `child` with `SEAL_OPENCL_BATCH_ROTATIONS` 1 (each at its call), 2, 3
/// and 4 (the default), each chained and not ([`run_chained_and_not`]).
fn run_at_each_rotation_batch(child: &str) {
    let name = seal_opencl::config::BATCH_ROTATIONS.name;
    run_chained_and_not(
        child,
        &[
            &[(name, "1")],
            &[(name, "2")],
            &[(name, "3")],
            &[(name, "4")],
        ],
    );
}

child_test! {
    /// Rotations of computed ciphertexts wait for each other where the level's key switches
    /// run on the fused passes (`src/seal_backend/batch.rs`), up to
    /// `SEAL_OPENCL_BATCH_ROTATIONS` (B) in one batch (one launch chained, the passes'
    /// launches unchained: [`batch_launches`]), each with its own galois element and key: m
    /// rotations of one ciphertext out of place (a network's baby steps), m ciphertexts
    /// rotated or conjugated in place, and m plaintext products rotated in place (TenSEAL's
    /// diagonals), launch floor(m / B) batches at their calls and one more at the read where
    /// B does not divide m; a step of two keys (two apply_galois on one ciphertext) takes two
    /// batches (two waves); a pending rotation runs alone at another operation's use, and
    /// before a MulLin's relinearization joins the batch. Every result is SEAL's. Run with
    /// B = 1 (each at its call), 2, 3 and 4 (the default), chained and not. In a child
    /// process, since it installs the backend with the global profiler on.
    fn rotations_share_launches() {
        let profiler = seal_opencl::profiler::enable_global();
        let most = batch_rotations() as u64;
        let (fx, mut rng) = chaining_fixture();
        let ev = &fx.evaluator;
        let (x, y, pt) = fx.operands(&mut rng);
        let (xg, yg, plain) = (resident(&fx, &x), resident(&fx, &y), plain_on_gpu(&pt));
        let rotated = |ct: &Ciphertext, i: usize| {
            let mut r = Ciphertext::new().unwrap();
            if i % 4 == 3 {
                ev.complex_conjugate(ct, &fx.galois, &mut r).unwrap();
            } else {
                ev.rotate_vector(ct, KEYED_STEPS[i % 6], &fx.galois, &mut r).unwrap();
            }
            r
        };
        let unit = batch_launches(launches(&profiler, None, || {
            rotated(&xg, 0).data().unwrap();
        }));
        for m in [1, most, 2 * most + 1] {
            let counts = (unit * (m / most), unit * u64::from(m % most != 0));
            let mut results = Vec::new();
            let at_calls = launches(&profiler, None, || {
                for i in 0..m as usize {
                    results.push(rotated(&xg, i));
                }
            });
            let at_reads = launches(&profiler, None, || {
                for r in &results {
                    r.data().unwrap();
                }
            });
            assert_eq!((at_calls, at_reads), counts, "{m} rotations of one, {most} a launch");
            for (i, r) in results.iter().enumerate() {
                assert_same(&rotated(&x, i), r, &format!("rotation {i} of {m} of one"));
            }
            let mut cts: Vec<Ciphertext> = (0..m).map(|_| resident(&fx, &y)).collect();
            let at_calls = launches(&profiler, None, || {
                for (i, ct) in cts.iter_mut().enumerate() {
                    if i % 4 == 3 {
                        ev.complex_conjugate_inplace(ct, &fx.galois).unwrap();
                    } else {
                        ev.rotate_vector_inplace(ct, KEYED_STEPS[i % 6], &fx.galois).unwrap();
                    }
                }
            });
            let at_reads = launches(&profiler, None, || {
                for ct in &cts {
                    ct.data().unwrap();
                }
            });
            assert_eq!((at_calls, at_reads), counts, "{m} in place, {most} a launch");
            for (i, ct) in cts.iter().enumerate() {
                assert_same(&rotated(&y, i), ct, &format!("rotation {i} of {m} in place"));
            }
            let product_rotated = |ct: &Ciphertext, p: &Plaintext, i: usize| {
                let mut t = Ciphertext::new().unwrap();
                ev.multiply_plain(ct, p, &mut t).unwrap();
                ev.rotate_vector_inplace(&mut t, KEYED_STEPS[i % 6], &fx.galois).unwrap();
                t
            };
            let mut products = Vec::new();
            let at_calls = launches(&profiler, None, || {
                for i in 0..m as usize {
                    products.push(product_rotated(&xg, &plain, i));
                }
            });
            let at_reads = launches(&profiler, None, || {
                for t in &products {
                    t.data().unwrap();
                }
            });
            assert_eq!((at_calls, at_reads), counts, "{m} products, {most} a launch");
            for (i, t) in products.iter().enumerate() {
                let what = format!("product {i} of {m} rotated");
                assert_same(&product_rotated(&x, &pt, i), t, &what);
            }
        }
        // 17 = 16 + 1: two apply_galois on one ciphertext, two launches (with B > 1 both at
        // the read: the second step joins the wave after the first's).
        let mut r = Ciphertext::new().unwrap();
        let launched = launches(&profiler, None, || {
            ev.rotate_vector(&xg, 17, &fx.galois, &mut r).unwrap();
            r.data().unwrap();
        });
        assert_eq!(launched, 2 * unit, "a step of two keys");
        let mut want = Ciphertext::new().unwrap();
        ev.rotate_vector(&x, 17, &fx.galois, &mut want).unwrap();
        assert_same(&want, &r, "a step of two keys");
        // A pending rotation used by another operation runs then, alone (with B = 1 it ran
        // at its call).
        let mut r = rotated(&xg, 0);
        let used = launches(&profiler, None, || ev.negate_inplace(&mut r).unwrap());
        assert_eq!(used, 1 + unit * u64::from(most > 1), "a pending rotation negated");
        let mut want = rotated(&x, 0);
        ev.negate_inplace(&mut want).unwrap();
        assert_same(&want, &r, "a pending rotation negated");
        // A relinearization that joins the batch runs the pending rotation first.
        let r = rotated(&xg, 1);
        let mut p = xg.clone();
        ev.multiply_inplace(&mut p, &yg).unwrap();
        let launched = launches(&profiler, None, || {
            ev.relinearize_inplace(&mut p, &fx.relin).unwrap()
        });
        assert_eq!(launched, unit * u64::from(most > 1), "a MulLin after a rotation");
        assert_same(&rotated(&x, 1), &r, "the rotation before a MulLin");
        assert_same(&fx.mul_lin(&x, &y), &p, "the MulLin after a rotation");
        assert_no_cpu_fallback();
    }
    parent(child) {
        run_at_each_rotation_batch(child);
    }
}

child_test! {
    /// A rotation's NAF steps wait in the batch's waves (`src/seal_backend/batch.rs`): a
    /// step whose input is pending joins the next wave, a sum takes a pending rotation as a
    /// term, and the first wave launches when full. TenSEAL's matrix product as it writes
    /// it: m diagonals (a multiply_plain into a temporary, rotated in place by a step of two
    /// keys, 3 = 4 - 1 or 17 = 16 + 1), each kept and added into an accumulator. The key
    /// switches launch 2 floor(m / B) batches at the calls ([`batch_launches`]), at the
    /// accumulator's read two more where B does not divide m, and then the sum once. Every
    /// result is SEAL's. B = 1 (each at its call), 2, 3, 4, chained and not; and B = 4 with
    /// one wave (`SEAL_OPENCL_BATCH_WAVES=1`: a step runs the batch first; words only). An
    /// out-of-place rotation of a pending rotation (SEAL copies it first) joins the next
    /// wave: no launch at the calls.
    fn rotation_steps_share_waves() {
        let profiler = seal_opencl::profiler::enable_global();
        let most = batch_rotations() as u64;
        let waves = batch_setting(
            seal_opencl::config::BATCH_WAVES,
            seal_opencl::ckks::context::DEFAULT_BATCH_WAVES,
        );
        let (fx, mut rng) = chaining_fixture();
        let ev = &fx.evaluator;
        let (x, y, pt) = fx.operands(&mut rng);
        let (xg, plain) = (resident(&fx, &x), plain_on_gpu(&pt));
        let diagonal = |ct: &Ciphertext, p: &Plaintext, i: u64| {
            let mut t = Ciphertext::new().unwrap();
            ev.multiply_plain(ct, p, &mut t).unwrap();
            let step = if i.is_multiple_of(2) { 3 } else { 17 };
            ev.rotate_vector_inplace(&mut t, step, &fx.galois).unwrap();
            t
        };
        let unit = batch_launches(launches(&profiler, None, || {
            let mut r = Ciphertext::new().unwrap();
            ev.rotate_vector(&xg, 1, &fx.galois, &mut r).unwrap();
            r.data().unwrap();
        }));
        for m in [1, most, most + 1] {
            let mut acc = y.clone();
            ev.multiply_plain_inplace(&mut acc, &pt).unwrap();
            let mut acc_g = resident(&fx, &acc);
            let mut diagonals = Vec::new();
            let at_calls = launches(&profiler, None, || {
                for i in 0..m {
                    let t = diagonal(&xg, &plain, i);
                    ev.add_inplace(&mut acc_g, &t).unwrap();
                    diagonals.push(t);
                }
            });
            let at_read = launches(&profiler, None, || {
                acc_g.data().unwrap();
            });
            if waves > 1 {
                let want = (2 * unit * (m / most), 2 * unit * u64::from(m % most != 0) + 1);
                assert_eq!((at_calls, at_read), want, "{m} diagonals, {most} a wave");
            }
            for (i, t) in diagonals.iter().enumerate() {
                let expected = diagonal(&x, &pt, i as u64);
                assert_same(&expected, t, &format!("diagonal {i} of {m}"));
                ev.add_inplace(&mut acc, &expected).unwrap();
            }
            assert_same(&acc, &acc_g, &format!("the sum of {m} diagonals"));
        }
        // SEAL's out-of-place rotate_vector copies, then rotates the copy: a copy of a
        // pending rotation shares its words and leaves it pending.
        let (mut first, mut second) = (Ciphertext::new().unwrap(), Ciphertext::new().unwrap());
        let at_calls = launches(&profiler, None, || {
            ev.rotate_vector(&xg, 1, &fx.galois, &mut first).unwrap();
            ev.rotate_vector(&first, 4, &fx.galois, &mut second).unwrap();
        });
        let at_reads = launches(&profiler, None, || {
            second.data().unwrap();
            first.data().unwrap();
        });
        if waves > 1 {
            let want = if most == 1 { (2 * unit, 0) } else { (0, 2 * unit) };
            assert_eq!((at_calls, at_reads), want, "a rotation of a pending one's copy");
        }
        let mut want_first = Ciphertext::new().unwrap();
        ev.rotate_vector(&x, 1, &fx.galois, &mut want_first).unwrap();
        let mut want_second = Ciphertext::new().unwrap();
        ev.rotate_vector(&want_first, 4, &fx.galois, &mut want_second).unwrap();
        assert_same(&want_first, &first, "a pending rotation copied");
        assert_same(&want_second, &second, "the rotation of a pending rotation's copy");
        assert_no_cpu_fallback();
    }
    parent(child) {
        run_at_each_rotation_batch(child);
        seal_opencl_testkit::harness::run_child(
            child,
            &[
                (seal_opencl::config::BATCH_ROTATIONS.name, "4"),
                (seal_opencl::config::BATCH_WAVES.name, "1"),
            ],
        );
    }
}

/* ---- encryption (seal-patch 0010) ---------------------------------------------------- */

use seal_opencl_testkit::encrypt::{seeded_encrypt, EncryptCase, Encrypted};

/// The encryption of `c` on SEAL's CPU path and routed, from one seed: the routed one ran on
/// the device (its words only there after the call) and equals SEAL's, word and metadata.
fn check_encryption(c: &EncryptCase) -> Encrypted {
    let cpu = seeded_encrypt(c, false).unwrap();
    let gpu = seeded_encrypt(c, true).unwrap();
    assert!(!cpu.device_newer, "{c:?}: the CPU path's result");
    assert!(gpu.device_newer, "{c:?}: not routed");
    let what = format!("{c:?}");
    assert_words(&cpu.words, &gpu.words, &what);
    assert_eq!(
        Encrypted {
            device_newer: false,
            ..gpu
        },
        cpu,
        "{what}: metadata"
    );
    cpu
}

/// `Encryptor::encrypt_zero(parms_id)` and `Encryptor::encrypt` of a CKKS plaintext with the
/// public key, at the first data level (encrypted at the key level, then divided by the
/// special prime), one below (a level of the chain, the public key's residues copied down) and
/// the last: SEAL's words from the same seed, at every parameter set (N = 2^12 and 2^13), with
/// poisoned buffers, no CPU fallback. Two seeds give different words (the check is not
/// vacuous).
#[test]
fn encryption_is_seals() {
    install();
    for (n, bits, scale_bits) in PARAMETER_SETS {
        let log_n = n.trailing_zeros();
        let last = bits.len() as u32 - 2;
        for level in [0, 1.min(last), last] {
            for plain in [false, true] {
                let case = |seed| EncryptCase {
                    log_n,
                    coeff_bits: bits.to_vec(),
                    level,
                    plain,
                    scale_bits: scale_bits.min(20),
                    seed,
                };
                let first = check_encryption(&case(1));
                let second = check_encryption(&case(2));
                assert_ne!(first.words, second.words, "{:?}: seeds 1 and 2", case(1));
            }
        }
    }
    assert_no_cpu_fallback();
}

child_test! {
    /// The launches of a routed encrypt_zero at N = 2^13 (where the level chains): the
    /// samples' residues (one), the NTT of the three samples (one chained launch), the public
    /// key's residues copied to the level below the key level (none at the first data level,
    /// encrypted at the key level), the products added into the noise (one), the rescale (one
    /// chained launch); an encrypt adds the plaintext (one more). In a child process, since it
    /// installs the backend with the global profiler on.
    fn encrypt_zero_launches() [] {
        let profiler = seal_opencl::profiler::enable_global();
        install();
        {
            let case = EncryptCase {
                log_n: 13,
                coeff_bits: vec![50, 40, 40, 40, 40],
                level: 0,
                plain: false,
                scale_bits: 20,
                seed: 3,
            };
            // Warm up (tables, programs), then count.
            seeded_encrypt(&case, true).unwrap();
            let mut counts = std::collections::BTreeMap::new();
            profiler.clear_events();
            let out = seeded_encrypt(&case, true).unwrap();
            assert!(out.device_newer);
            for s in profiler.kernel_stats().unwrap() {
                counts.insert(s.name, s.count);
            }
            assert_eq!(counts.get("ntt_forward_chained"), Some(&1), "{counts:?}");
            assert_eq!(counts.get("ckks_lift_signed"), Some(&1), "{counts:?}");
            let total: u64 = counts.values().sum();
            assert_eq!(total, 4, "first data level: {counts:?}");
        }
        for (level, plain, more) in [(1, false, 1), (0, true, 1), (1, true, 2)] {
            let case = EncryptCase {
                log_n: 13,
                coeff_bits: vec![50, 40, 40, 40, 40],
                level,
                plain,
                scale_bits: 20,
                seed: 3,
            };
            seeded_encrypt(&case, true).unwrap();
            let launched = launches(&profiler, None, || {
                assert!(seeded_encrypt(&case, true).unwrap().device_newer);
            });
            assert_eq!(launched, 4 + more, "{case:?}");
        }
        assert_no_cpu_fallback();
    }
}
