//! `seal_opencl_testkit::seal_c` against CPU SEAL (no GPU backend installed): CKKS round trips at
//! N = 2^12 with primes of {40, 30, 30, 40} bits, the evaluator's operations checked by
//! decrypting, word access, and bad input coming back as errors; the routines' default
//! primes within SEAL's security bound.
//!
//! 140 bits at N = 2^12 exceed SEAL's 128-bit security bound (109 bits), so the test
//! context is made with `SecLevelType::None`; small and fast is what tests need.

use seal_opencl::ErrorKind;
use seal_opencl_testkit::fixture::Fixture;
use seal_opencl_testkit::seal_c::{
    self, Ciphertext, CkksContext, CkksEncoder, Encryptor, Evaluator, KeyGenerator, SecLevelType,
};

const N: u64 = 4096;
const BITS: [i32; 4] = [40, 30, 30, 40];
const SCALE_BITS: i32 = 30;
const SCALE: f64 = (1u64 << SCALE_BITS) as f64;
const TOLERANCE: f64 = 1e-3;

fn test_context() -> CkksContext {
    CkksContext::new_with_security(N, &BITS, SecLevelType::None).unwrap()
}

/// The fixture's keys and tools on the test context, SEAL's CPU path only (nothing
/// installed); Galois keys for the steps 1 and -1 and the conjugation (0).
struct Ckks(Fixture);

impl std::ops::Deref for Ckks {
    type Target = Fixture;
    fn deref(&self) -> &Fixture {
        &self.0
    }
}

impl Ckks {
    fn new() -> Self {
        Ckks(Fixture::of_context(test_context(), &[1, -1, 0], SCALE_BITS))
    }

    fn slots(&self) -> usize {
        self.encoder.slot_count()
    }

    /// Deterministic values in [-1, 1).
    fn values(&self, seed: u64) -> Vec<f64> {
        (0..self.slots() as u64)
            .map(|i| ((i * 7919 + seed * 104_729) % 2000) as f64 / 1000.0 - 1.0)
            .collect()
    }

    fn encrypt(&self, values: &[f64]) -> Ciphertext {
        let plain = self
            .encoder
            .encode(values, &self.ctx.first_parms_id(), SCALE)
            .unwrap();
        self.encryptor.encrypt(&plain).unwrap()
    }

    fn decrypt(&self, ct: &Ciphertext) -> Vec<f64> {
        self.encoder
            .decode(&self.decryptor.decrypt(ct).unwrap())
            .unwrap()
    }
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < TOLERANCE, "{what}: slot {i}: {g} vs {w}");
    }
}

#[test]
fn context_describes_the_modulus_chain() {
    let context = test_context();
    assert_eq!(context.poly_modulus_degree(), N);
    assert!(context.using_keyswitching());
    let chain = context.parms_id_chain().unwrap();
    assert_eq!(chain.len(), 3, "data levels of 3, 2 and 1 primes");
    assert_eq!(chain[0], context.first_parms_id());
    assert_eq!(*chain.last().unwrap(), context.last_parms_id());
    let key_primes = context.coeff_modulus(&context.key_parms_id()).unwrap();
    assert_eq!(key_primes.len(), 4);
    for (&q, &bits) in key_primes.iter().zip(&BITS) {
        assert_eq!(64 - q.leading_zeros(), bits as u32);
        assert_eq!(q % (2 * N), 1);
    }
    for (level, id) in chain.iter().enumerate() {
        let primes = context.coeff_modulus(id).unwrap();
        assert_eq!(primes[..], key_primes[..3 - level], "level {level}");
        assert_eq!(context.chain_index(id).unwrap(), 2 - level as u64);
    }

    // The same primes given explicitly make the same context.
    let explicit =
        CkksContext::with_moduli_and_security(N, &key_primes, SecLevelType::None).unwrap();
    assert_eq!(explicit.first_parms_id(), context.first_parms_id());
    assert_eq!(explicit.parms_id_chain().unwrap(), chain);
}

#[test]
fn encode_encrypt_decrypt_decode_round_trips() {
    let ckks = Ckks::new();
    assert_eq!(ckks.slots(), N as usize / 2);
    let values = ckks.values(1);
    let ct = ckks.encrypt(&values);
    assert_eq!(ct.size(), 2);
    assert_eq!(ct.coeff_modulus_size(), 3);
    assert_eq!(ct.poly_modulus_degree(), N);
    assert_eq!(ct.parms_id(), ckks.ctx.first_parms_id());
    assert_eq!(ct.scale(), SCALE);
    assert!(ct.is_ntt_form());
    assert!(!ct.on_gpu());
    assert_close(&ckks.decrypt(&ct), &values, "round trip");

    let complex: Vec<(f64, f64)> = values.iter().map(|&v| (v, -v / 2.0)).collect();
    let plain = ckks
        .encoder
        .encode_complex(&complex, &ckks.ctx.first_parms_id(), SCALE)
        .unwrap();
    assert_eq!(plain.coeff_count(), 3 * N);
    assert!(plain.is_ntt_form());
    let decoded = ckks
        .encoder
        .decode_complex(
            &ckks
                .decryptor
                .decrypt(&ckks.encryptor.encrypt(&plain).unwrap())
                .unwrap(),
        )
        .unwrap();
    let (re, im): (Vec<f64>, Vec<f64>) = decoded.into_iter().unzip();
    assert_close(&re, &values, "complex re");
    let want_im: Vec<f64> = values.iter().map(|v| -v / 2.0).collect();
    assert_close(&im, &want_im, "complex im");
}

#[test]
fn multiply_relinearize_rescale_gives_the_product() {
    let ckks = Ckks::new();
    let (a, b) = (ckks.values(2), ckks.values(3));
    let (ca, cb) = (ckks.encrypt(&a), ckks.encrypt(&b));
    let mut product = Ciphertext::new().unwrap();
    ckks.evaluator.multiply(&ca, &cb, &mut product).unwrap();
    assert_eq!(product.size(), 3);
    assert_eq!(product.scale(), SCALE * SCALE);
    ckks.evaluator
        .relinearize_inplace(&mut product, &ckks.relin)
        .unwrap();
    assert_eq!(product.size(), 2);
    ckks.evaluator
        .rescale_to_next_inplace(&mut product)
        .unwrap();
    assert_eq!(product.coeff_modulus_size(), 2);
    let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    assert_close(&ckks.decrypt(&product), &want, "a * b");

    // In-place forms and square agree with the out-of-place ones.
    let mut sq = ca.clone();
    ckks.evaluator.square_inplace(&mut sq).unwrap();
    let mut sq2 = Ciphertext::new().unwrap();
    ckks.evaluator.multiply(&ca, &ca, &mut sq2).unwrap();
    assert_eq!(
        sq.data().unwrap(),
        sq2.data().unwrap(),
        "square = a * a, word for word"
    );
    let mut aa = ca.clone();
    ckks.evaluator.multiply_inplace(&mut aa, &ca).unwrap();
    assert_eq!(aa.data().unwrap(), sq2.data().unwrap());

    // add / sub / negate / add_many.
    let mut sum = Ciphertext::new().unwrap();
    ckks.evaluator.add(&ca, &cb, &mut sum).unwrap();
    let mut diff = ca.clone();
    ckks.evaluator.sub_inplace(&mut diff, &cb).unwrap();
    ckks.evaluator.negate_inplace(&mut diff).unwrap();
    let mut many = Ciphertext::new().unwrap();
    ckks.evaluator
        .add_many(&[&ca, &cb, &ca], &mut many)
        .unwrap();
    let zip =
        |f: fn(f64, f64) -> f64| -> Vec<f64> { a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect() };
    assert_close(&ckks.decrypt(&sum), &zip(|x, y| x + y), "a + b");
    assert_close(&ckks.decrypt(&diff), &zip(|x, y| y - x), "-(a - b)");
    assert_close(&ckks.decrypt(&many), &zip(|x, y| 2.0 * x + y), "a + b + a");
}

#[test]
fn rotate_conjugate_and_apply_galois() {
    let ckks = Ckks::new();
    let values = ckks.values(4);
    let ct = ckks.encrypt(&values);
    let n = ckks.slots();

    let mut rotated = Ciphertext::new().unwrap();
    ckks.evaluator
        .rotate_vector(&ct, 1, &ckks.galois, &mut rotated)
        .unwrap();
    let want: Vec<f64> = (0..n).map(|i| values[(i + 1) % n]).collect();
    assert_close(&ckks.decrypt(&rotated), &want, "rotate by 1");
    ckks.evaluator
        .rotate_vector_inplace(&mut rotated, -1, &ckks.galois)
        .unwrap();
    assert_close(&ckks.decrypt(&rotated), &values, "rotate back");

    // Conjugation of (v, v/4 i) gives (v, -v/4 i).
    let complex: Vec<(f64, f64)> = values.iter().map(|&v| (v, v / 4.0)).collect();
    let plain = ckks
        .encoder
        .encode_complex(&complex, &ckks.ctx.first_parms_id(), SCALE)
        .unwrap();
    let cc = ckks.encryptor.encrypt(&plain).unwrap();
    let mut conj = Ciphertext::new().unwrap();
    ckks.evaluator
        .complex_conjugate(&cc, &ckks.galois, &mut conj)
        .unwrap();
    let decoded = ckks
        .encoder
        .decode_complex(&ckks.decryptor.decrypt(&conj).unwrap())
        .unwrap();
    for (i, ((re, im), v)) in decoded.iter().zip(&values).enumerate() {
        assert!(
            (re - v).abs() < TOLERANCE && (im + v / 4.0).abs() < TOLERANCE,
            "slot {i}"
        );
    }

    // The conjugation is the Galois element 2N - 1: apply_galois gives the same words.
    let conj_elt = (2 * N - 1) as u32;
    assert!(ckks.galois.has_key(conj_elt).unwrap());
    assert!(!ckks.galois.has_key(7).unwrap());
    assert_eq!(ckks.galois.size(), 3);
    let mut via_elt = cc.clone();
    ckks.evaluator
        .apply_galois_inplace(&mut via_elt, conj_elt, &ckks.galois)
        .unwrap();
    assert_eq!(via_elt.data().unwrap(), conj.data().unwrap());
    // No key for that element.
    let err = ckks
        .evaluator
        .apply_galois(&cc, 7, &ckks.galois, &mut via_elt)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
}

#[test]
fn plain_operations_and_modulus_switching() {
    let ckks = Ckks::new();
    let (a, b) = (ckks.values(5), ckks.values(6));
    let ct = ckks.encrypt(&a);
    let first = ckks.ctx.first_parms_id();
    let pb = ckks.encoder.encode(&b, &first, SCALE).unwrap();

    let mut sum = Ciphertext::new().unwrap();
    ckks.evaluator.add_plain(&ct, &pb, &mut sum).unwrap();
    let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_close(&ckks.decrypt(&sum), &want, "a + plain b");
    ckks.evaluator.sub_plain_inplace(&mut sum, &pb).unwrap();
    assert_close(&ckks.decrypt(&sum), &a, "a + b - b");

    let mut product = ct.clone();
    ckks.evaluator
        .multiply_plain_inplace(&mut product, &pb)
        .unwrap();
    ckks.evaluator
        .rescale_to_next_inplace(&mut product)
        .unwrap();
    let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    assert_close(&ckks.decrypt(&product), &want, "a * plain b");

    // mod_switch_to_next drops one prime and keeps the values and the scale.
    let mut switched = Ciphertext::new().unwrap();
    ckks.evaluator
        .mod_switch_to_next(&ct, &mut switched)
        .unwrap();
    assert_eq!(switched.coeff_modulus_size(), ct.coeff_modulus_size() - 1);
    assert_eq!(switched.scale(), ct.scale());
    let chain = ckks.ctx.parms_id_chain().unwrap();
    assert_eq!(switched.parms_id(), chain[1]);
    assert_close(&ckks.decrypt(&switched), &a, "mod switched");
    // Its words are the original's residues without the last prime.
    let (words, k) = (ct.data().unwrap(), 3 * N as usize);
    let expected: Vec<u64> = (0..2)
        .flat_map(|poly| words[poly * k..poly * k + 2 * N as usize].to_vec())
        .collect();
    assert_eq!(switched.data().unwrap(), expected);

    let mut to_last = ct.clone();
    ckks.evaluator
        .mod_switch_to_inplace(&mut to_last, &ckks.ctx.last_parms_id())
        .unwrap();
    assert_eq!(to_last.coeff_modulus_size(), 1);
    assert_close(&ckks.decrypt(&to_last), &a, "mod switched to last");

    // Plaintexts switch too, so they can meet a switched ciphertext.
    let mut pb_next = pb.clone();
    ckks.evaluator
        .mod_switch_to_next_plain_inplace(&mut pb_next)
        .unwrap();
    assert_eq!(pb_next.coeff_count(), 2 * N);
    assert_eq!(pb_next.parms_id(), chain[1]);
    ckks.evaluator
        .add_plain_inplace(&mut switched, &pb_next)
        .unwrap();
    let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_close(&ckks.decrypt(&switched), &want, "switched a + switched b");

    // rescale_to reaches the last level in one call (the scale shrinks by both primes).
    let mut deep = Ciphertext::new().unwrap();
    ckks.evaluator
        .rescale_to(&ct, &ckks.ctx.last_parms_id(), &mut deep)
        .unwrap();
    assert_eq!(deep.coeff_modulus_size(), 1);

    // NTT form round trip.
    let mut coeffs = Ciphertext::new().unwrap();
    ckks.evaluator.transform_from_ntt(&ct, &mut coeffs).unwrap();
    assert!(!coeffs.is_ntt_form());
    assert_ne!(coeffs.data().unwrap(), words);
    ckks.evaluator
        .transform_to_ntt_inplace(&mut coeffs)
        .unwrap();
    assert!(coeffs.is_ntt_form());
    assert_eq!(coeffs.data().unwrap(), words);
}

#[test]
fn words_of_a_clone_equal_the_original_and_set_data_writes_them() {
    let ckks = Ckks::new();
    let ct = ckks.encrypt(&ckks.values(7));
    let words = ct.data().unwrap();
    assert_eq!(words.len() as u64, 2 * 3 * N);
    assert_eq!(words.len() as u64, ct.uint64_count());
    let primes = ckks.ctx.coeff_modulus(&ct.parms_id()).unwrap();
    for (j, residue) in words.chunks(N as usize).enumerate() {
        let q = primes[j % 3];
        assert!(residue.iter().all(|&w| w < q), "residue {j} reduced");
    }
    let copy = ct.clone();
    assert_eq!(copy.data().unwrap(), words);
    assert_eq!(copy.parms_id(), ct.parms_id());
    assert_eq!(copy.scale(), ct.scale());

    // Negating by hand through set_data equals the evaluator's negate.
    let negated: Vec<u64> = words
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let q = primes[(i / N as usize) % 3];
            if w == 0 {
                0
            } else {
                q - w
            }
        })
        .collect();
    let mut by_hand = ct.clone();
    by_hand.set_data(&ckks.ctx, &negated).unwrap();
    let mut by_seal = Ciphertext::new().unwrap();
    ckks.evaluator.negate(&ct, &mut by_seal).unwrap();
    assert_eq!(by_hand.data().unwrap(), by_seal.data().unwrap());
    // Wrong length or unreduced words are rejected, the ciphertext is left alone.
    assert_eq!(
        by_hand
            .set_data(&ckks.ctx, &negated[1..])
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    let mut unreduced = negated.clone();
    unreduced[0] = u64::MAX;
    assert!(by_hand.set_data(&ckks.ctx, &unreduced).is_err());

    let plain = ckks.decryptor.decrypt(&ct).unwrap();
    assert_eq!(plain.data().unwrap().len() as u64, plain.coeff_count());
    assert_eq!(plain.clone().data().unwrap(), plain.data().unwrap());
}

#[test]
fn data_of_a_large_ciphertext_takes_milliseconds() {
    // N = 2^15 with 8 primes: 2 * 8 * 2^15 words.
    let context = CkksContext::new(1 << 15, &[50, 40, 40, 40, 40, 40, 40, 50]).unwrap();
    let keygen = KeyGenerator::new(&context).unwrap();
    let encoder = CkksEncoder::new(&context).unwrap();
    let encryptor = Encryptor::new(&context, &keygen.public_key().unwrap()).unwrap();
    let plain = encoder
        .encode_scalar(0.5, &context.first_parms_id(), 2f64.powi(40))
        .unwrap();
    let ct = encryptor.encrypt(&plain).unwrap();
    let start = std::time::Instant::now();
    let words = ct.data().unwrap();
    let elapsed = start.elapsed();
    eprintln!("data() of {} words: {elapsed:?}", words.len());
    assert_eq!(words.len(), 2 * 7 * (1 << 15));
    assert!(elapsed.as_millis() < 500, "data() took {elapsed:?}");
}

#[test]
fn bad_input_is_an_error_not_a_crash() {
    let ckks = Ckks::new();
    let a = ckks.encrypt(&ckks.values(8));
    let mut lower = Ciphertext::new().unwrap();
    ckks.evaluator.mod_switch_to_next(&a, &mut lower).unwrap();

    // Operands at different levels.
    let mut dest = Ciphertext::new().unwrap();
    let err = ckks.evaluator.add(&a, &lower, &mut dest).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("Evaluator_Add"), "{err}");
    let mut a2 = a.clone();
    let err = ckks
        .evaluator
        .multiply_inplace(&mut a2, &lower)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        a2.data().unwrap(),
        a.data().unwrap(),
        "operand left unchanged"
    );

    // End of the chain, empty inputs, scales, parms_ids SEAL does not know.
    let mut last = a.clone();
    ckks.evaluator
        .mod_switch_to_inplace(&mut last, &ckks.ctx.last_parms_id())
        .unwrap();
    assert!(ckks.evaluator.rescale_to_next_inplace(&mut last).is_err());
    assert!(ckks
        .evaluator
        .mod_switch_to_next_inplace(&mut last)
        .is_err());
    let empty = Ciphertext::new().unwrap();
    assert!(ckks.evaluator.negate(&empty, &mut dest).is_err());
    assert!(ckks.decryptor.decrypt(&empty).is_err());
    assert!(ckks.evaluator.add_many(&[], &mut dest).is_err());
    let first = ckks.ctx.first_parms_id();
    for scale in [0.0, -1.0, f64::NAN, f64::INFINITY, 2f64.powi(200)] {
        let err = ckks.encoder.encode(&[1.0], &first, scale).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "scale {scale}");
    }
    assert!(ckks.encoder.encode(&[f64::NAN], &first, SCALE).is_err());
    let too_many = vec![0.0; ckks.slots() + 1];
    assert!(ckks.encoder.encode(&too_many, &first, SCALE).is_err());
    let bogus = [1, 2, 3, 4];
    assert_eq!(
        ckks.encoder
            .encode(&[1.0], &bogus, SCALE)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    assert!(ckks.ctx.coeff_modulus(&bogus).is_err());
    assert!(ckks.evaluator.mod_switch_to(&a, &bogus, &mut dest).is_err());
    assert!(ckks.galois.has_key(2).is_err(), "even Galois element");

    // Parameters SEAL rejects.
    for (n, bits) in [(4096, vec![61]), (3000, vec![40]), (4096, vec![60, 60, 60])] {
        let err = CkksContext::new(n, &bits).expect_err("rejected");
        assert_eq!(
            err.kind(),
            ErrorKind::InvalidArgument,
            "{n} {bits:?}: {err}"
        );
    }
    // SEAL's default security check: 140 bits at N = 4096 is too many, at 8192 fine.
    let err = CkksContext::new(N, &BITS).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("security standard"), "{err}");
    assert!(CkksContext::new(2 * N, &BITS).is_ok());
    assert!(CkksContext::new(N, &[]).is_err());
    let with_moduli = |q: &[u64]| CkksContext::with_moduli_and_security(N, q, SecLevelType::TC128);
    assert!(with_moduli(&[]).is_err());
    assert!(with_moduli(&[1 << 62]).is_err());
    // Not 1 mod 2N: SEAL's context refuses it.
    assert!(with_moduli(&[1_000_003, 65537]).is_err());
}

#[test]
fn gpu_marking_without_a_backend_is_a_logic_error() {
    assert!(!seal_c::gpu_backend_installed());
    let ckks = Ckks::new();
    let mut ct = ckks.encrypt(&ckks.values(9));
    let err = ct.gpu().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Logic, "{err}");
    assert!(err.to_string().contains("Ciphertext_Gpu"), "{err}");
    assert!(!ct.on_gpu());
    let mut plain = ckks.decryptor.decrypt(&ct).unwrap();
    assert_eq!(plain.gpu().unwrap_err().kind(), ErrorKind::Logic);
    assert!(!plain.on_gpu());
    for result in [
        seal_c::start_compute_frame(),
        seal_c::end_compute_frame(),
        seal_c::synchronize(),
    ] {
        assert_eq!(result.unwrap_err().kind(), ErrorKind::Logic);
    }
    // Everything still works on the CPU.
    assert_close(&ckks.decrypt(&ct), &ckks.values(9), "after failed gpu()");
}

#[test]
fn objects_move_between_threads() {
    let ckks = Ckks::new();
    let ct = ckks.encrypt(&ckks.values(10));
    let evaluator = Evaluator::new(&ckks.ctx).unwrap();
    let doubled = std::thread::spawn(move || {
        let mut sum = Ciphertext::new().unwrap();
        evaluator.add(&ct, &ct, &mut sum).unwrap();
        sum
    })
    .join()
    .unwrap();
    let want: Vec<f64> = ckks.values(10).iter().map(|v| 2.0 * v).collect();
    assert_close(&ckks.decrypt(&doubled), &want, "a + a on another thread");
}

#[test]
fn default_data_primes_fit_seals_bound() {
    use seal_opencl_testkit::routines::default_data_primes;
    assert_eq!(default_data_primes(13).unwrap(), 2);
    assert_eq!(default_data_primes(14).unwrap(), 7);
    assert_eq!(default_data_primes(15).unwrap(), 8);
    assert_eq!(default_data_primes(16).unwrap(), 8);
    for log_n in [1, 10, 12] {
        let e = default_data_primes(log_n).unwrap_err();
        assert!(e.to_string().contains("2^13"), "{e}");
    }
}
