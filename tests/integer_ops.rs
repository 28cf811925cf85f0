//! BFV and BGV operations of `integer::ops` on the device against SEAL's CPU, word for
//! word, on real ciphertexts and keys (the test kit's `oracle_integer`): relinearize after
//! multiply, apply_galois (rotate_rows both ways, rotate_columns) and mod_switch_to_next, at
//! N = 2^12 and 2^13, 2 to 4 primes, plain moduli of 17, 20 and 59 bits, at the first level
//! and one below; each on the default fused and chained paths, the fused one unchained, and
//! one kernel per step. Pooled buffers come poisoned, so a word no kernel writes shows.
//!
//! SEAL 4.0 keeps BGV ciphertexts in coefficient form; its BGV operations compute the same
//! residues as 4.4.3's, in coefficient form (its key switch adds INTT of what 4.4.3's adds,
//! its permutation is `apply_galois`, its mod switch `mod_t_and_divide_q_last_inplace`).
//! So each build checks BGV in both forms: in SEAL's own against SEAL, in the other against
//! SEAL's results and inputs through the host's NTT (`in_form`). BGV's key switch in NTT
//! form is also checked against its host composition on random inputs
//! (`bgv_switch_key_equals_host`).

use std::sync::Arc;

use rand::Rng;
use seal_opencl::arith::Modulus;
use seal_opencl::arith::{coeff_modulus_create, invert_uint_mod, multiply_uint_mod};
use seal_opencl::ckks::context::{
    CkksContext, EncodeOnDevice, KernelChoices, KswitchKey, DEFAULT_BATCH_PRODUCTS,
    DEFAULT_BATCH_ROTATIONS, DEFAULT_BATCH_WAVES, DEFAULT_CHAIN_GROUPS_PER_UNIT,
    DEFAULT_CHAIN_LOG_N,
};
use seal_opencl::ckks::fused::{
    DropCorrection, Sources, MULTIPLY_PLAIN_SOURCE_TERMS, SOURCE_TERMS_MAX,
};
use seal_opencl::ckks::host::negacyclic_shift;
use seal_opencl::ckks::kernels::IntegerPlain;
use seal_opencl::ckks::ops::LevelOps;
use seal_opencl::ckks::SumTerm;
use seal_opencl::cl;
use seal_opencl::device::{DeviceOptions, Devices, Graph};
use seal_opencl::integer::host::plain_lift;
use seal_opencl::integer::kernels::IntegerKernels;
use seal_opencl::integer::ops::{key_switch_correction, IntegerOps, IntegerScheme};
use seal_opencl::integer::plain::{add_plain_corrected, multiply_plain_coeff};
use seal_opencl::memcache::MemcacheConfig;
use seal_opencl::ntt::{create_ntt_tables, host as ntt_host, NttDirection, NttStrategy};
use seal_opencl::profiler::Profiler;
use seal_opencl_testkit::compose;
use seal_opencl_testkit::harness::{launches, rng};
use seal_opencl_testkit::oracle_integer::{seal_integer_case, IntegerCase};

const POISON: u64 = 0xBAD0_BAD0_BAD0_BAD0;

fn devices() -> Devices {
    profiled_devices(None)
}

/// Devices whose pooled buffers come poisoned, with `profiler` attached if given.
fn profiled_devices(profiler: Option<Arc<Profiler>>) -> Devices {
    Devices::new(DeviceOptions {
        memcache: MemcacheConfig {
            poison: Some(POISON),
            ..DeviceOptions::default().memcache
        },
        profiler,
        ..Default::default()
    })
    .unwrap()
}

const fn choices(fused: bool, chain_log_n: u32) -> KernelChoices {
    KernelChoices {
        fused,
        barrett_dq: true,
        chain_log_n,
        chain_groups_per_unit: DEFAULT_CHAIN_GROUPS_PER_UNIT,
        defer_multiply: true,
        batch_products: DEFAULT_BATCH_PRODUCTS,
        batch_rotations: DEFAULT_BATCH_ROTATIONS,
        batch_waves: DEFAULT_BATCH_WAVES,
        encode: EncodeOnDevice::Ntt,
    }
}

/// The kernel choices each case runs under: the default (fused, chained at these N), fused
/// in separate launches, and one kernel per step.
const CHOICES: [KernelChoices; 3] = [
    choices(true, DEFAULT_CHAIN_LOG_N),
    choices(true, 0),
    choices(false, DEFAULT_CHAIN_LOG_N),
];

/// One parameter set: scheme, log2 N, coefficient modulus bit sizes (the last special),
/// plain modulus bits, levels dropped, rotate_rows step (0: columns).
type Params = (&'static str, u32, &'static [i32], i32, usize, i32);

fn params(scheme: &'static str) -> Vec<Params> {
    vec![
        (scheme, 12, &[40, 40, 40], 17, 0, 1),
        (scheme, 13, &[50, 40, 60, 60], 20, 0, -1),
        (scheme, 13, &[50, 40, 60, 60], 20, 1, 0),
        (scheme, 13, &[55, 60, 50, 60], 59, 0, 3),
        (scheme, 12, &[60, 60], 17, 0, 1),
    ]
}

fn scheme_of(name: &str, case: &IntegerCase) -> IntegerScheme {
    match name {
        "bfv" => IntegerScheme::Bfv,
        _ => IntegerScheme::Bgv {
            plain_modulus: Modulus::new(case.plain_modulus).unwrap(),
            ntt_form: case.ntt_form,
        },
    }
}

#[track_caller]
fn assert_same(got: &[u64], want: &[u64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        let bad = got.iter().zip(want).filter(|(a, b)| a != b).count();
        panic!(
            "{what}: {bad} words differ, the first at {i}: {:#x}, SEAL says {:#x}",
            got[i], want[i]
        );
    }
}

fn download(graph: &Graph, region: &cl::Region, words: usize) -> Vec<u64> {
    let mut got = cl::download(graph.queue(), region).unwrap();
    got.truncate(words);
    got
}

/// SEAL's case of one parameter set.
fn case_of(p: Params) -> IntegerCase {
    let (name, log_n, bits, plain_bits, drops, step) = p;
    let case = seal_integer_case(name, 1 << log_n, bits, plain_bits, drops, step).unwrap();
    // BFV's ciphertexts are in coefficient form; BGV's in NTT form from SEAL 4.1, in
    // coefficient form in 4.0 (IntegerScheme::Bgv's ntt_form follows SEAL's).
    assert!(name == "bgv" || !case.ntt_form, "BFV in NTT form");
    case
}

/// `case` with every ciphertext in NTT form (`ntt`: SEAL 4.1's BGV) or in coefficient form
/// (SEAL 4.0's): the forward or inverse NTT of each residue, under the first K primes (K - 1
/// for the mod switch's result).
fn in_form(case: &IntegerCase, log_n: u32, ntt: bool) -> IntegerCase {
    let n = 1usize << log_n;
    let moduli: Vec<Modulus> = case.key_moduli[..case.primes]
        .iter()
        .map(|&q| Modulus::new(q).unwrap())
        .collect();
    let transform = |words: &[u64], k: usize| -> Vec<u64> {
        let tables = create_ntt_tables(log_n, &moduli[..k]).unwrap();
        let mut out = words.to_vec();
        for (r, residue) in out.chunks_exact_mut(n).enumerate() {
            if ntt {
                ntt_host::ntt_negacyclic_harvey(residue, &tables[r % k]);
            } else {
                ntt_host::inverse_ntt_negacyclic_harvey(residue, &tables[r % k]);
            }
        }
        out
    };
    let k = case.primes;
    IntegerCase {
        ntt_form: ntt,
        product: transform(&case.product, k),
        relinearized: transform(&case.relinearized, k),
        ct: transform(&case.ct, k),
        rotated: transform(&case.rotated, k),
        mod_switched: if k >= 2 {
            transform(&case.mod_switched, k - 1)
        } else {
            Vec::new()
        },
        ..case.clone()
    }
}

/// Every operation of one parameter set against SEAL's results in `case`, under every
/// choice.
fn check(p: Params, case: &IntegerCase, graph: &Graph) {
    let (name, log_n, bits, ..) = p;
    let n = 1usize << log_n;
    let k = case.primes;
    let scheme = scheme_of(name, case);
    let kernels = IntegerKernels::new(graph.context(), log_n).unwrap();
    let poly = k * n;
    for choices in CHOICES {
        let what = |op: &str| {
            format!(
                "{name} 2^{log_n} {bits:?} t {} K={k} NTT form {} {choices:?}: {op}",
                case.plain_modulus, case.ntt_form
            )
        };
        let context = CkksContext::new(
            graph.context(),
            log_n,
            &case.key_moduli,
            true,
            NttStrategy::STAGED,
            choices,
        )
        .unwrap();
        let ops = IntegerOps::new(&context, &kernels, graph, k, scheme).unwrap();
        let queue = graph.queue();
        let upload = |words: &[u64]| {
            let buf = graph.alloc(words.len()).unwrap();
            cl::write(queue, buf.buffer(), 0, words).unwrap();
            buf
        };

        // relinearize after multiply, in place.
        let relin_key =
            KswitchKey::upload(&context, queue, case.relin_key_count, &case.relin_key).unwrap();
        let product = upload(&case.product);
        ops.relinearize(product.buffer(), 3, &[&relin_key]).unwrap();
        assert_same(
            &download(graph, product.buffer(), 2 * poly),
            &case.relinearized,
            &what("relinearize"),
        );

        // apply_galois into a poisoned buffer (its input kept), then in place.
        let galois_key =
            KswitchKey::upload(&context, queue, case.galois_key_count, &case.galois_key).unwrap();
        let ct = upload(&case.ct);
        let dst = graph.alloc(2 * poly).unwrap();
        ops.apply_galois(
            dst.buffer(),
            Sources::one(ct.buffer()),
            case.galois_elt,
            &galois_key,
        )
        .unwrap();
        let op = format!("apply_galois {}", case.galois_elt);
        assert_same(
            &download(graph, dst.buffer(), 2 * poly),
            &case.rotated,
            &what(&op),
        );
        assert_same(
            &download(graph, ct.buffer(), 2 * poly),
            &case.ct,
            &what(&format!("{op}: its input")),
        );
        ops.apply_galois(
            ct.buffer(),
            Sources::one(ct.buffer()),
            case.galois_elt,
            &galois_key,
        )
        .unwrap();
        assert_same(
            &download(graph, ct.buffer(), 2 * poly),
            &case.rotated,
            &what(&format!("{op} in place")),
        );

        // mod_switch_to_next into a poisoned buffer.
        if k >= 2 {
            let src = upload(&case.ct);
            let dst = graph.alloc(2 * (k - 1) * n).unwrap();
            ops.mod_switch_to_next(dst.buffer(), src.buffer(), 2)
                .unwrap();
            assert_same(
                &download(graph, dst.buffer(), 2 * (k - 1) * n),
                &case.mod_switched,
                &what("mod_switch_to_next"),
            );
        } else {
            assert!(ops.mod_switch_to_next(ct.buffer(), ct.buffer(), 2).is_err());
        }
    }
}

#[test]
fn bfv_matches_seal() {
    let devices = devices();
    let graph = devices.graph();
    for p in params("bfv") {
        check(p, &case_of(p), &graph);
    }
}

#[test]
fn bgv_matches_seal() {
    let devices = devices();
    let graph = devices.graph();
    for p in params("bgv") {
        check(p, &case_of(p), &graph);
    }
}

/// BGV in the form the SEAL built against does not keep its ciphertexts in: SEAL 4.0's and
/// 4.4.3's BGV operations compute the same residues, 4.0's in coefficient form and 4.4.3's
/// in NTT form, so each build checks the other form against its own results transformed.
#[test]
fn bgv_in_the_other_form_matches_seals_residues() {
    let devices = devices();
    let graph = devices.graph();
    for p in params("bgv") {
        let case = case_of(p);
        check(p, &in_form(&case, p.1, !case.ntt_form), &graph);
    }
}

/// BGV's key switch in NTT form (`IntegerOps::switch_key`: one chained launch at 2^13 by
/// default, CKKS's chain with `LOAD_MODDOWN_BGV` on the mod-down's loads; fused unchained and
/// unfused, `integer_mod_t_prep`) equals its host composition with BGV's correction
/// (`compose::switch_key`, `integer::host::integer_mod_t_prep`) on fresh random targets,
/// ciphertexts and keys, K = 3, 2, 1, plain moduli of 17 to 33 bits, in place in a poisoned
/// pooled buffer as a relinearization runs it.
#[test]
fn bgv_switch_key_equals_host() {
    let mut rng = rng();
    let devices = devices();
    let graph = devices.graph();
    let log_n = 13;
    let n = 1usize << log_n;
    let bits = [50, 40, 60, 60];
    let key_values = coeff_modulus_create(n as u64, &bits).unwrap();
    let key_moduli: Vec<Modulus> = key_values
        .iter()
        .map(|&q| Modulus::new(q).unwrap())
        .collect();
    let l = key_moduli.len();
    let kernels = IntegerKernels::new(graph.context(), log_n).unwrap();
    for (choices, plain_bits) in CHOICES.into_iter().zip([20, 17, 33]) {
        let t = Modulus::new(coeff_modulus_create(n as u64, &[plain_bits]).unwrap()[0]).unwrap();
        let inv_q = invert_uint_mod(key_moduli[l - 1].value() % t.value(), &t).unwrap();
        let correction = DropCorrection::PlainModulus { t, inv_q };
        let context = CkksContext::new(
            graph.context(),
            log_n,
            &key_values,
            true,
            NttStrategy::STAGED,
            choices,
        )
        .unwrap();
        let scheme = IntegerScheme::Bgv {
            plain_modulus: t,
            ntt_form: true,
        };
        for k in [3, 2, 1] {
            let mut random = |moduli: &[Modulus], polys: usize| -> Vec<u64> {
                (0..polys * moduli.len() * n)
                    .map(|w| rng.gen_range(0..moduli[(w / n) % moduli.len()].value()))
                    .collect()
            };
            let key_words = random(&key_moduli, 2 * (l - 1));
            let ct = random(&key_moduli[..k], 3);
            let mut want = ct.clone();
            let target = ct[2 * k * n..].to_vec();
            compose::switch_key(
                &mut want,
                &target,
                &key_words,
                &key_moduli,
                k,
                log_n,
                correction,
            );
            let key = KswitchKey::upload(&context, graph.queue(), l - 1, &key_words).unwrap();
            let buf = graph.alloc(ct.len()).unwrap();
            cl::write(graph.queue(), buf.buffer(), 0, &ct).unwrap();
            let ops = IntegerOps::new(&context, &kernels, &graph, k, scheme).unwrap();
            ops.switch_key(buf.buffer(), buf.buffer(), 2 * k * n, &key)
                .unwrap();
            assert_same(
                &download(&graph, buf.buffer(), ct.len()),
                &want,
                &format!("BGV switch_key 2^{log_n} t {} K={k} {choices:?}", t.value()),
            );
        }
    }
}

/// Errors before anything is enqueued: kernels of another N, a BGV plain modulus that is a
/// key prime (no q^-1 mod t), relinearize without enough polynomials, and a mod switch at
/// the last level.
#[test]
fn bad_arguments_are_errors() {
    let devices = devices();
    let graph = devices.graph();
    let case = case_of(("bfv", 12, &[40, 40, 40], 17, 0, 1));
    let context = CkksContext::new(
        graph.context(),
        12,
        &case.key_moduli,
        true,
        NttStrategy::STAGED,
        CHOICES[0],
    )
    .unwrap();
    let kernels = IntegerKernels::new(graph.context(), 12).unwrap();
    let other_n = IntegerKernels::new(graph.context(), 13).unwrap();
    let invalid = |e: seal_opencl::Error, what: &str| {
        assert_eq!(
            e.kind(),
            seal_opencl::ErrorKind::InvalidArgument,
            "{what}: {e}"
        );
    };
    let new = |kernels, primes, scheme| IntegerOps::new(&context, kernels, &graph, primes, scheme);
    invalid(
        new(&other_n, 2, IntegerScheme::Bfv).err().unwrap(),
        "kernels of another N",
    );
    let key_prime = IntegerScheme::Bgv {
        plain_modulus: Modulus::new(case.key_moduli[0]).unwrap(),
        ntt_form: true,
    };
    invalid(new(&kernels, 2, key_prime).err().unwrap(), "t a key prime");
    let ops = new(&kernels, 2, IntegerScheme::Bfv).unwrap();
    let key = KswitchKey::upload(
        &context,
        graph.queue(),
        case.relin_key_count,
        &case.relin_key,
    )
    .unwrap();
    let ct = graph.alloc(3 * 2 * 4096).unwrap();
    cl::write(graph.queue(), ct.buffer(), 0, &case.product).unwrap();
    invalid(
        ops.relinearize(ct.buffer(), 2, &[&key]).unwrap_err(),
        "relinearize 2 polynomials",
    );
    let one_prime = new(&kernels, 1, IntegerScheme::Bfv).unwrap();
    let dst = graph.alloc(2 * 4096).unwrap();
    invalid(
        one_prime
            .mod_switch_to_next(dst.buffer(), ct.buffer(), 2)
            .unwrap_err(),
        "mod switch at one prime",
    );
    // Nothing was enqueued on the product's words.
    assert_same(
        &download(&graph, ct.buffer(), case.product.len()),
        &case.product,
        "the product after the errors",
    );
}

/// The launch budget of the routed BFV and BGV operations at a level that chains (N =
/// 2^13, the default kernel choices): relinearize and apply_galois (rotate_rows,
/// rotate_columns) in one launch each, BFV's and SEAL 4.0's BGV's in coefficient form
/// (`ks_chained_coeff`), SEAL 4.4.3's BGV's in NTT form (`ks_chained`,
/// `ks_chained_galois`, BGV's correction on the mod-down's loads); BGV's multiply in NTT
/// form with its relinearization in one (`ks_chained_tensor`; the backend defers the
/// multiply to it, so a multiply and its relinearization cost 0 + 1); multiply_plain in
/// coefficient form in one (`multiply_plain_chained`); BGV's mod_switch_to_next in NTT form
/// in one (`moddown_chained`), in coefficient form in one as BFV's
/// (`integer_divide_round_coeff`, at every N);
/// transform_to_ntt and transform_from_ntt in one each (`ntt_fwd_chained`,
/// `ntt_inv_chained`), and so BGV's add_plain in NTT form in 3 (the lift, its transform,
/// the add). Issues 39 and 40: each launch costs NVIDIA's OpenCL ~10 us of host time.
#[test]
fn launch_counts_where_the_level_chains() {
    let profiler = Profiler::new();
    let devices = profiled_devices(Some(profiler.clone()));
    let graph = devices.graph();
    // Both of BGV's forms whichever SEAL this is built on (the counts do not depend on the
    // words).
    for (name, ntt_form) in [("bfv", false), ("bgv", false), ("bgv", true)] {
        let p: Params = (name, 13, &[50, 40, 60, 60], 20, 0, 1);
        let case = IntegerCase {
            ntt_form,
            ..case_of(p)
        };
        let k = case.primes;
        let scheme = scheme_of(name, &case);
        let kernels = IntegerKernels::new(graph.context(), 13).unwrap();
        let context = CkksContext::new(
            graph.context(),
            13,
            &case.key_moduli,
            true,
            NttStrategy::STAGED,
            CHOICES[0],
        )
        .unwrap();
        let ops = IntegerOps::new(&context, &kernels, &graph, k, scheme).unwrap();
        let level_ops = LevelOps::new(&context, &graph, k).unwrap();
        assert!(
            context
                .level(graph.queue(), k)
                .unwrap()
                .fused()
                .is_some_and(|f| f.chains_coeff_key_switch() && f.chains_multiply_plain()),
            "2^13 chains the integer schemes' coefficient-form passes"
        );
        let queue = graph.queue();
        let upload = |words: &[u64]| {
            let buf = graph.alloc(words.len()).unwrap();
            cl::write(queue, buf.buffer(), 0, words).unwrap();
            buf
        };
        let relin_key =
            KswitchKey::upload(&context, queue, case.relin_key_count, &case.relin_key).unwrap();
        let galois_key =
            KswitchKey::upload(&context, queue, case.galois_key_count, &case.galois_key).unwrap();
        let product = upload(&case.product);
        let ct = upload(&case.ct);
        let switched = graph.alloc(2 * (k - 1) * (1 << 13)).unwrap();
        let plain_words: Vec<u64> = (0..100).map(|i| i * 7919 % case.plain_modulus).collect();
        let plain = upload(&plain_words);
        let relinearize = || ops.relinearize(product.buffer(), 3, &[&relin_key]).unwrap();
        let rotate = || {
            ops.apply_galois(
                ct.buffer(),
                Sources::one(ct.buffer()),
                case.galois_elt,
                &galois_key,
            )
            .unwrap()
        };
        let p = IntegerPlain {
            words: plain.buffer(),
            count: plain_words.len(),
            t: case.plain_modulus,
        };
        let multiply_plain = || {
            multiply_plain_coeff(
                &level_ops,
                ct.buffer(),
                Sources::one(ct.buffer()),
                2,
                p,
                true,
            )
            .unwrap()
        };
        let mod_switch = || {
            ops.mod_switch_to_next(switched.buffer(), ct.buffer(), 2)
                .unwrap()
        };
        // SEAL's transform_to_ntt and transform_from_ntt (the BGV ones) of ct.
        let to_ntt = || {
            level_ops
                .transform(ct.buffer(), 2, NttDirection::Forward)
                .unwrap()
        };
        let from_ntt = || {
            level_ops
                .transform(ct.buffer(), 2, NttDirection::Inverse)
                .unwrap()
        };
        // BGV's add_plain in NTT form: the plaintext lifted, transformed and added.
        let add_plain = || {
            add_plain_corrected(&level_ops, ct.buffer(), ct.buffer(), p, 1, true, false).unwrap()
        };
        // Build every program and one-prime plan outside the counted launches.
        relinearize();
        rotate();
        multiply_plain();
        mod_switch();
        let counts = [
            launches(&profiler, Some(&graph), relinearize),
            launches(&profiler, Some(&graph), rotate),
            launches(&profiler, Some(&graph), multiply_plain),
            launches(&profiler, Some(&graph), mod_switch),
            launches(&profiler, Some(&graph), to_ntt),
            launches(&profiler, Some(&graph), from_ntt),
            launches(&profiler, Some(&graph), add_plain),
        ];
        assert_eq!(
            counts,
            [1, 1, 1, 1, 1, 1, 3],
            "{name} (NTT form {}): relinearize, apply_galois, multiply_plain, \
             mod_switch_to_next, transform_to_ntt, transform_from_ntt, add_plain (NTT form)",
            case.ntt_form
        );
        if name == "bgv" && case.ntt_form {
            // BGV's multiply (the tensor product) and relinearize of SEAL 4.1 and later.
            let correction = key_switch_correction(&context, scheme).unwrap();
            let a = upload(&case.ct);
            let dst = graph.alloc(3 * k * (1 << 13)).unwrap();
            let multiply_relinearize = || {
                level_ops
                    .multiply_relinearize(
                        dst.buffer(),
                        a.buffer(),
                        a.buffer(),
                        &relin_key,
                        correction,
                    )
                    .unwrap()
            };
            multiply_relinearize();
            assert_eq!(
                launches(&profiler, Some(&graph), multiply_relinearize),
                1,
                "{name}: multiply and relinearize"
            );
        }
    }
}

/// SEAL's multiply_plain_normal on the host: every residue of ct (`polys` polynomials of
/// K = moduli.len() residues, coefficient form) times the plaintext lifted (`plain_lift`),
/// through the NTT: the reference of `multiply_plain_coeff`, chained or not.
fn multiply_plain_host(
    ct: &[u64],
    plain: &[u64],
    t: u64,
    upper_half: bool,
    moduli: &[Modulus],
    log_n: u32,
) -> Vec<u64> {
    let n = 1usize << log_n;
    let k = moduli.len();
    let tables = create_ntt_tables(log_n, moduli).unwrap();
    let mut lifted = plain_lift(plain, n, t, 1, upper_half, moduli);
    for (j, residue) in lifted.chunks_exact_mut(n).enumerate() {
        ntt_host::ntt_negacyclic_harvey(residue, &tables[j]);
    }
    let mut out = ct.to_vec();
    for (r, residue) in out.chunks_exact_mut(n).enumerate() {
        let j = r % k;
        ntt_host::ntt_negacyclic_harvey(residue, &tables[j]);
        for (x, m) in residue.iter_mut().zip(&lifted[j * n..(j + 1) * n]) {
            *x = multiply_uint_mod(*x, *m, &moduli[j]);
        }
        ntt_host::inverse_ntt_negacyclic_harvey(residue, &tables[j]);
    }
    out
}

/// `multiply_plain_coeff` (SEAL's multiply_plain_normal) equals its host reference on
/// fresh random ciphertexts and plaintexts (full and short, every coefficient up to t - 1,
/// lifted or not), chained (one launch at 2^13) and in separate launches, 2 and 3
/// polynomials, on poisoned pooled buffers.
#[test]
fn multiply_plain_coeff_equals_host() {
    let mut rng = rng();
    let devices = devices();
    let graph = devices.graph();
    for (log_n, bits, plain_bits) in [(13, &[50, 40, 60, 60][..], 20), (12, &[40, 40, 40], 17)] {
        let n = 1usize << log_n;
        let key_moduli = coeff_modulus_create(n as u64, bits).unwrap();
        let t = coeff_modulus_create(n as u64, &[plain_bits]).unwrap()[0];
        let k = key_moduli.len() - 1;
        let moduli: Vec<Modulus> = key_moduli[..k]
            .iter()
            .map(|&q| Modulus::new(q).unwrap())
            .collect();
        for choices in &CHOICES[..2] {
            let context = CkksContext::new(
                graph.context(),
                log_n,
                &key_moduli,
                true,
                NttStrategy::STAGED,
                *choices,
            )
            .unwrap();
            let ops = LevelOps::new(&context, &graph, k).unwrap();
            for (polys, count, upper_half) in [(2, n, true), (3, 37, false), (2, 1, true)] {
                let ct: Vec<u64> = (0..polys * k * n)
                    .map(|w| rng.gen_range(0..moduli[(w / n) % k].value()))
                    .collect();
                let plain: Vec<u64> = (0..count).map(|_| rng.gen_range(0..t)).collect();
                let want = multiply_plain_host(&ct, &plain, t, upper_half, &moduli, log_n);
                let buf = graph.alloc(ct.len()).unwrap();
                cl::write(graph.queue(), buf.buffer(), 0, &ct).unwrap();
                let plain_buf = graph.alloc(plain.len()).unwrap();
                cl::write(graph.queue(), plain_buf.buffer(), 0, &plain).unwrap();
                let p = IntegerPlain {
                    words: plain_buf.buffer(),
                    count,
                    t,
                };
                multiply_plain_coeff(
                    &ops,
                    buf.buffer(),
                    Sources::one(buf.buffer()),
                    polys,
                    p,
                    upper_half,
                )
                .unwrap();
                assert_same(
                    &download(&graph, buf.buffer(), ct.len()),
                    &want,
                    &format!(
                        "multiply_plain 2^{log_n} {choices:?} {polys} polys, {count} \
                         coefficients, upper half {upper_half}"
                    ),
                );
            }
        }
    }
}

/// A CKKS context at N = 2^`log_n` over primes of 50, 40, 60 and 60 bits (the last the
/// special prime), whose level of the three data primes chains at 2^13; the key level's
/// primes.
fn chaining_context(graph: &Graph, log_n: u32) -> (CkksContext, Vec<Modulus>) {
    let key_values = coeff_modulus_create(1 << log_n, &[50, 40, 60, 60]).unwrap();
    let context = CkksContext::new(
        graph.context(),
        log_n,
        &key_values,
        true,
        NttStrategy::STAGED,
        CHOICES[0],
    )
    .unwrap();
    let key_moduli = key_values
        .iter()
        .map(|&q| Modulus::new(q).unwrap())
        .collect();
    (context, key_moduli)
}

/// A sum of ciphertexts read on a chained pass's loads (`Sources`: the words SEAL's adds,
/// subs and multiply_plains by X^s of the terms in turn leave) gives the words of the same
/// pass on the sum: multiply_plain in coefficient form and transform_to_ntt against their
/// host references of the host's sum, and BFV's apply_galois against the device's own on
/// the sum uploaded (that one is checked against SEAL's elsewhere), with 2 to 8 terms (the
/// multiply_plain up to its 4 slots, refused past them), some
/// subtracted, some shifted by a drawn X^s (0 < s < N, SEAL's negacyclic shift on the
/// host), one term also dst, at 2^13 (where all three chain), on poisoned pooled buffers.
/// A transform into a shifted term's own buffer is refused (its words are read elsewhere
/// than written).
#[test]
fn chained_passes_read_sums_on_load() {
    let mut rng = rng();
    let devices = devices();
    let graph = devices.graph();
    let log_n = 13;
    let n = 1usize << log_n;
    // X^s of the shifted terms, one per term of the cases below.
    let draws: Vec<u32> = (0..16).map(|_| rng.gen_range(1..n as u32)).collect();
    let mut draws = draws.into_iter();
    let (context, key_moduli) = chaining_context(&graph, log_n);
    let k = key_moduli.len() - 1;
    let moduli = &key_moduli[..k];
    let t = coeff_modulus_create(n as u64, &[20]).unwrap()[0];
    let kernels = IntegerKernels::new(graph.context(), log_n).unwrap();
    let ops = LevelOps::new(&context, &graph, k).unwrap();
    let integer = IntegerOps::new(&context, &kernels, &graph, k, IntegerScheme::Bfv).unwrap();
    let mut random = |moduli: &[Modulus], polys: usize| -> Vec<u64> {
        (0..polys * moduli.len() * n)
            .map(|w| rng.gen_range(0..moduli[(w / n) % moduli.len()].value()))
            .collect()
    };
    let key = KswitchKey::upload(&context, graph.queue(), k, &random(&key_moduli, 2 * k)).unwrap();
    let tables = create_ntt_tables(log_n, moduli).unwrap();
    let plain: Vec<u64> = (0..n).map(|w| (w as u64 * 7919) % t).collect();
    let plain_buf = graph.alloc(n).unwrap();
    cl::write(graph.queue(), plain_buf.buffer(), 0, &plain).unwrap();
    let p = IntegerPlain {
        words: plain_buf.buffer(),
        count: n,
        t,
    };
    let upload = |words: &[u64]| {
        let buf = graph.alloc(words.len()).unwrap();
        cl::write(graph.queue(), buf.buffer(), 0, words).unwrap();
        buf
    };
    for (negate, shifted) in [
        (&[false, true][..], &[false, true][..]),
        (&[false, true, true], &[true, false, true]),
        (&[false, false, true, false], &[false, true, false, true]),
        (
            &[false, true, false, false, true, false, true, true],
            &[false, true, false, true, true, false, false, true],
        ),
    ] {
        let shifts: Vec<u32> = shifted
            .iter()
            .map(|&s| if s { draws.next().unwrap() } else { 0 })
            .collect();
        // SEAL's multiply_plain of a shifted term by its X^s, then add_inplace and
        // sub_inplace of each term in turn, from the first.
        let terms: Vec<Vec<u64>> = negate.iter().map(|_| random(moduli, 2)).collect();
        let shifted_terms: Vec<Vec<u64>> = terms
            .iter()
            .zip(&shifts)
            .map(|(t, &s)| match s {
                0 => t.clone(),
                s => negacyclic_shift(t, s as usize, moduli, n),
            })
            .collect();
        let mut sum = shifted_terms[0].clone();
        for (term, &sub) in shifted_terms.iter().zip(negate.iter()).skip(1) {
            for (w, (s, x)) in sum.iter_mut().zip(term).enumerate() {
                let q = moduli[(w / n) % k].value();
                *s = if sub { (*s + q - x) % q } else { (*s + x) % q };
            }
        }
        let bufs: Vec<_> = terms.iter().map(|t| upload(t)).collect();
        let sources: Vec<_> = bufs
            .iter()
            .zip(negate.iter().zip(&shifts))
            .map(|(b, (&sub, &shift))| SumTerm {
                shift,
                ..SumTerm::words(b.buffer(), sub)
            })
            .collect();
        let src = Sources::sum(&sources).unwrap();
        let what = format!(
            "{} terms, subtracted {negate:?}, shifted {shifts:?}",
            negate.len()
        );

        let dst = graph.alloc(sum.len()).unwrap();
        let multiplied = multiply_plain_coeff(&ops, dst.buffer(), src, 2, p, true);
        if src.len() > MULTIPLY_PLAIN_SOURCE_TERMS {
            assert!(
                multiplied.is_err(),
                "multiply_plain of {what}: more terms than slots"
            );
        } else {
            multiplied.unwrap();
            let want = multiply_plain_host(&sum, &plain, t, true, moduli, log_n);
            assert_same(
                &download(&graph, dst.buffer(), sum.len()),
                &want,
                &format!("multiply_plain of {what}"),
            );
        }

        let dst = graph.alloc(sum.len()).unwrap();
        assert!(ops.chains_transform());
        ops.transform_sum(dst.buffer(), src, 2, NttDirection::Forward)
            .unwrap();
        let mut want = sum.clone();
        for (r, residue) in want.chunks_exact_mut(n).enumerate() {
            ntt_host::ntt_negacyclic_harvey(residue, &tables[r % k]);
        }
        assert_same(
            &download(&graph, dst.buffer(), sum.len()),
            &want,
            &format!("transform_to_ntt of {what}"),
        );
        if let Some(at) = shifts.iter().position(|&s| s != 0) {
            assert!(
                ops.transform_sum(bufs[at].buffer(), src, 2, NttDirection::Forward)
                    .is_err(),
                "transform_to_ntt of {what} into shifted term {at}'s buffer"
            );
        }

        let summed = upload(&sum);
        let want_dst = graph.alloc(sum.len()).unwrap();
        integer
            .apply_galois(want_dst.buffer(), Sources::one(summed.buffer()), 3, &key)
            .unwrap();
        let want = download(&graph, want_dst.buffer(), sum.len());
        let dst = graph.alloc(sum.len()).unwrap();
        integer.apply_galois(dst.buffer(), src, 3, &key).unwrap();
        assert_same(
            &download(&graph, dst.buffer(), sum.len()),
            &want,
            &format!("apply_galois of {what}"),
        );
        // The first term's buffer as dst: read in the first pass, written in the last.
        integer
            .apply_galois(bufs[0].buffer(), src, 3, &key)
            .unwrap();
        assert_same(
            &download(&graph, bufs[0].buffer(), sum.len()),
            &want,
            &format!("apply_galois of {what} into its first term"),
        );
    }
    assert!(Sources::sum(&[]).is_err());
    let nine = [SumTerm::words(plain_buf.buffer(), false); SOURCE_TERMS_MAX + 1];
    assert!(Sources::sum(&nine).is_err());
    let product = SumTerm {
        plain: Some(plain_buf.buffer()),
        ..SumTerm::words(plain_buf.buffer(), false)
    };
    assert!(Sources::sum(&[product]).is_err());
}

/// SEAL's multiply_plain in NTT form of terms into temporaries, then add_inplace and
/// sub_inplace of them in turn and transform_from_ntt: the chained inverse transform reads
/// the sum on its loads (`ntt_inv_sum_chained`), the same words as the host's steps, for
/// 1 to 8 terms with and without plaintexts, into a fresh (poisoned) buffer and into the
/// first term's own.
#[test]
fn inverse_transform_reads_sums_of_products_on_load() {
    let mut rng = rng();
    let devices = devices();
    let graph = devices.graph();
    let log_n = 13;
    let n = 1usize << log_n;
    let (context, key_moduli) = chaining_context(&graph, log_n);
    let k = key_moduli.len() - 1;
    let moduli = &key_moduli[..k];
    let ops = LevelOps::new(&context, &graph, k).unwrap();
    assert!(ops.chains_transform_sum());
    let tables = create_ntt_tables(log_n, moduli).unwrap();
    let mut random = |polys: usize| -> Vec<u64> {
        (0..polys * k * n)
            .map(|w| rng.gen_range(0..moduli[(w / n) % k].value()))
            .collect()
    };
    let upload = |words: &[u64]| {
        let buf = graph.alloc(words.len()).unwrap();
        cl::write(graph.queue(), buf.buffer(), 0, words).unwrap();
        buf
    };
    // (subtracted, times a plaintext) of each term.
    for (negate, products) in [
        (&[false][..], &[true][..]),
        (&[false, true], &[true, false]),
        (&[true, false, true], &[true, true, true]),
        (
            &[false, true, false, false, true, false, true, true],
            &[true, true, false, true, true, true, false, true],
        ),
    ] {
        let terms: Vec<Vec<u64>> = negate.iter().map(|_| random(2)).collect();
        let plains: Vec<Vec<u64>> = negate.iter().map(|_| random(1)).collect();
        let mut want = vec![0u64; 2 * k * n];
        for ((term, plain), (&sub, &times)) in
            terms.iter().zip(&plains).zip(negate.iter().zip(products))
        {
            for (w, (s, &x)) in want.iter_mut().zip(term).enumerate() {
                let q = &moduli[(w / n) % k];
                let x = if times {
                    multiply_uint_mod(x, plain[w % (k * n)], q)
                } else {
                    x
                };
                let q = q.value();
                *s = if sub { (*s + q - x) % q } else { (*s + x) % q };
            }
        }
        for (r, residue) in want.chunks_exact_mut(n).enumerate() {
            ntt_host::inverse_ntt_negacyclic_harvey(residue, &tables[r % k]);
        }
        let term_bufs: Vec<_> = terms.iter().map(|t| upload(t)).collect();
        let plain_bufs: Vec<_> = plains.iter().map(|p| upload(p)).collect();
        let sources: Vec<_> = term_bufs
            .iter()
            .zip(&plain_bufs)
            .zip(negate.iter().zip(products))
            .map(|((t, p), (&sub, &times))| SumTerm {
                plain: times.then(|| p.buffer()),
                ..SumTerm::words(t.buffer(), sub)
            })
            .collect();
        let src = Sources::products(&sources).unwrap();
        let what = format!(
            "{} terms, subtracted {negate:?}, products {products:?}",
            negate.len()
        );
        let dst = graph.alloc(want.len()).unwrap();
        ops.transform_sum(dst.buffer(), src, 2, NttDirection::Inverse)
            .unwrap();
        assert_same(
            &download(&graph, dst.buffer(), want.len()),
            &want,
            &format!("transform_from_ntt of {what}"),
        );
        ops.transform_sum(term_bufs[0].buffer(), src, 2, NttDirection::Inverse)
            .unwrap();
        assert_same(
            &download(&graph, term_bufs[0].buffer(), want.len()),
            &want,
            &format!("transform_from_ntt of {what} into its first term"),
        );
        // Products are read by the inverse transform only.
        let dst = graph.alloc(want.len()).unwrap();
        assert!(ops
            .transform_sum(dst.buffer(), src, 2, NttDirection::Forward)
            .is_err());
        if let Some(at) = products.iter().position(|&p| p) {
            assert!(
                ops.transform_sum(plain_bufs[at].buffer(), src, 2, NttDirection::Inverse)
                    .is_err(),
                "transform_from_ntt of {what} into plaintext {at}'s buffer"
            );
        }
    }
    let words = graph.alloc(2 * k * n).unwrap();
    let plain = graph.alloc(k * n).unwrap();
    let short = plain.buffer().part(0, (k - 1) * n).unwrap();
    let term = SumTerm {
        plain: Some(&short),
        ..SumTerm::words(words.buffer(), false)
    };
    let dst = graph.alloc(2 * k * n).unwrap();
    assert!(
        ops.transform_sum(
            dst.buffer(),
            Sources::products(&[term]).unwrap(),
            2,
            NttDirection::Inverse
        )
        .is_err(),
        "a plaintext of fewer than K residues"
    );
    let shifted = SumTerm {
        shift: 1,
        ..SumTerm::words(words.buffer(), false)
    };
    assert!(Sources::products(&[shifted]).is_err());
    assert!(Sources::products(&[]).is_err());
    assert!(Sources::products(&[term; SOURCE_TERMS_MAX + 1]).is_err());
}
