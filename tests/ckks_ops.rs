//! The CKKS operations of `ckks::ops` (kernel sequences with NTTs) against the same
//! sequence of host references (`ckks::host`, `ntt::host`), on random inputs.

use std::sync::Arc;

use rand::Rng;
use seal_opencl::arith::{coeff_modulus_create, invert_uint_mod, Modulus, ShoupOperand};
use seal_opencl::ckks::context::{
    CkksContext, EncodeOnDevice, KernelChoices, KswitchKey, DEFAULT_BATCH_PRODUCTS,
    DEFAULT_BATCH_ROTATIONS, DEFAULT_BATCH_WAVES, DEFAULT_CHAIN_GROUPS_PER_UNIT,
    DEFAULT_CHAIN_LOG_N,
};
use seal_opencl::ckks::fused::{DropCorrection, Sources, TensorJob, KS_JOBS_MAX, SOURCE_TERMS_MAX};
use seal_opencl::ckks::ops::{LevelOps, Rotation};
use seal_opencl::ckks::{host, SumTerm};
use seal_opencl::cl;
use seal_opencl::device::{DeviceOptions, Devices, Graph};
use seal_opencl::memcache::MemcacheConfig;
use seal_opencl::ntt::{create_ntt_tables, host as ntt_host, NttDirection, NttStrategy, NttTables};
use seal_opencl::profiler::Profiler;
use seal_opencl_testkit::compose;
use seal_opencl_testkit::harness::{launches, rng};

fn random_poly(rng: &mut impl Rng, moduli: &[Modulus], polys: usize, n: usize) -> Vec<u64> {
    let mut v = Vec::with_capacity(polys * moduli.len() * n);
    for _ in 0..polys {
        for q in moduli {
            v.extend((0..n).map(|_| rng.gen_range(0..q.value())));
        }
    }
    v
}

/// SEAL's divide_and_round_q_last_ntt_inplace + drop (mod_switch_scale_to_next) on the
/// host, step for step as the unfused `LevelOps::rescale`: `ct` holds `polys` polynomials
/// of K = moduli.len() residues; the result K - 1.
fn host_rescale(ct: &[u64], moduli: &[Modulus], polys: usize, log_n: u32) -> Vec<u64> {
    let n = 1usize << log_n;
    let k = moduli.len();
    let tables = create_ntt_tables(log_n, moduli).unwrap();
    let mut last = vec![0; polys * n];
    host::ckks_gather_residue(&mut last, ct, k, k - 1, polys, n);
    for r in last.chunks_exact_mut(n) {
        ntt_host::inverse_ntt_negacyclic_harvey_lazy(r, &tables[k - 1]);
    }
    let mut t = vec![0; polys * (k - 1) * n];
    host::ckks_moddown_prep(&mut t, &last, k - 1, moduli, k - 1, n);
    for (r, res) in t.chunks_exact_mut(n).enumerate() {
        ntt_host::ntt_negacyclic_harvey_lazy(res, &tables[r % (k - 1)]);
    }
    let inv: Vec<ShoupOperand> = moduli[..k - 1]
        .iter()
        .map(|q| {
            ShoupOperand::new(
                invert_uint_mod(moduli[k - 1].value() % q.value(), q).unwrap(),
                q,
            )
        })
        .collect();
    let mut out = vec![0; polys * (k - 1) * n];
    host::ckks_divide_round_finish(
        &mut out,
        k - 1,
        ct,
        k,
        &t,
        &inv,
        moduli,
        k - 1,
        polys,
        false,
        n,
    );
    out
}

const POISON: u64 = 0xBAD0_BAD0_BAD0_BAD0;

/// Devices whose pooled buffers come poisoned (so a word a kernel fails to write shows),
/// with `profiler` attached if given.
fn devices(profiler: Option<Arc<Profiler>>) -> Devices {
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

/// The key primes of the tests: three data primes of different sizes (a prime larger
/// than the one dropped and one smaller take different branches of the rounding), then
/// the special prime.
fn key_moduli(log_n: u32) -> Vec<Modulus> {
    coeff_modulus_create(1 << log_n, &[50, 40, 60, 60])
        .unwrap()
        .into_iter()
        .map(|q| Modulus::new(q).unwrap())
        .collect()
}

/// Every configuration the mod-down runs in: one-pass (2^10, 2^12 on a device with
/// work groups of 2^12 words) and two-pass (2^13: S = 2^6, a multiple of 3 rounds in the
/// strided pass; 2^14: S = 2^7, not) staged layouts, fused and unfused, and the naive
/// transforms; and the fused passes of other staged variants: 8 values per work item
/// (the previous default, `r8g11c4k8p1`, and with the default's key switching),
/// 16 (steps of 4 rounds: 2^13 and 2^14 with a shorter last step in both passes), small
/// groups with many columns, large groups with few, 4 values in large groups. Key
/// switching's passes: by default 4 values per work item (steps of 2 rounds) in two-row
/// work groups; also 8 and 16 values in one row of the layout's blocks (`k16p1`,
/// `r16k8p1`), and rows: more than primes (`p9`, `p16`), split over groups with idle rows
/// in the last (`p3` at K = 3, 1), and in one pass (two rows by default at 2^12 and 2^10,
/// `p1` and `p16` besides). Fan-outs of the fused inverse-forward pass: by default 2
/// output primes per work group (the last chunk short at K = 3); one (`o1`), three with
/// one chunk short (`o3`), all in one chunk (`r8o9`). And contexts whose ckks.cl reduces
/// products by SEAL's Barrett instead of Dhem-Quisquater's, fused and unfused.
fn configs() -> Vec<(u32, NttStrategy, KernelChoices)> {
    let variant = |v: &str| NttStrategy::Staged(v.parse().unwrap());
    vec![
        (10, NttStrategy::STAGED, FUSED),
        (12, NttStrategy::STAGED, FUSED),
        (13, NttStrategy::STAGED, FUSED),
        (14, NttStrategy::STAGED, FUSED),
        (12, NttStrategy::STAGED, UNFUSED),
        (13, NttStrategy::STAGED, UNFUSED),
        (12, NttStrategy::Naive, FUSED),
        (10, NttStrategy::Naive, UNFUSED),
        (13, NttStrategy::STAGED, choices(true, false)),
        (13, NttStrategy::STAGED, UNCHAINED),
        (13, NttStrategy::STAGED, CHAIN_EACH),
        (14, NttStrategy::STAGED, CHAIN_FEW),
        (14, NttStrategy::STAGED, UNCHAINED),
        (13, variant("r8g11c4"), FUSED),
        (12, NttStrategy::STAGED, choices(false, false)),
        (13, variant("r8g11c4k8p1"), FUSED),
        (14, variant("r8g11c4"), FUSED),
        (12, variant("r16"), FUSED),
        (13, variant("r16g10c6"), FUSED),
        (14, variant("r16g11c4"), FUSED),
        (14, variant("r8g12c2"), FUSED),
        (13, variant("r4g12c5"), FUSED),
        (13, variant("k16p1"), FUSED),
        (14, variant("r16k8p1"), FUSED),
        (10, variant("p16"), FUSED),
        (12, variant("p1"), FUSED),
        (13, variant("p3"), FUSED),
        (14, variant("k8p9"), FUSED),
        (14, variant("r16k16p4"), FUSED),
        (13, variant("o1"), FUSED),
        (14, variant("o3p3"), FUSED),
        (13, variant("r8o9"), FUSED),
    ]
}

/// A configuration's kernels: fused or one per step, products by Dhem-Quisquater's Barrett
/// or SEAL's.
const fn choices(fused: bool, barrett_dq: bool) -> KernelChoices {
    KernelChoices {
        fused,
        barrett_dq,
        chain_log_n: DEFAULT_CHAIN_LOG_N,
        chain_groups_per_unit: DEFAULT_CHAIN_GROUPS_PER_UNIT,
        defer_multiply: true,
        batch_products: DEFAULT_BATCH_PRODUCTS,
        batch_rotations: DEFAULT_BATCH_ROTATIONS,
        batch_waves: DEFAULT_BATCH_WAVES,
        encode: EncodeOnDevice::Ntt,
    }
}
const FUSED: KernelChoices = choices(true, true);
const UNFUSED: KernelChoices = choices(false, true);
/// Fused, key switches in their five launches at every N.
const UNCHAINED: KernelChoices = KernelChoices {
    chain_log_n: 0,
    ..FUSED
};
/// Chained launches of one work group per pass group, and of one per compute unit (each
/// taking many tickets).
const CHAIN_EACH: KernelChoices = KernelChoices {
    chain_groups_per_unit: 0,
    ..FUSED
};
const CHAIN_FEW: KernelChoices = KernelChoices {
    chain_groups_per_unit: 1,
    ..FUSED
};

/// One configuration of `configs` on a graph: N, the key primes and the context.
struct Setup {
    log_n: u32,
    n: usize,
    strategy: NttStrategy,
    choices: KernelChoices,
    key_moduli: Vec<Modulus>,
    context: CkksContext,
}

/// Runs `f` on every configuration of `configs`, on one graph, with one random source.
fn each_setup(mut f: impl FnMut(&Setup, &Graph, &mut rand::rngs::StdRng)) {
    let mut rng = rng();
    let devices = devices(None);
    let graph = devices.graph();
    for (log_n, strategy, choices) in configs() {
        let setup = Setup {
            log_n,
            n: 1 << log_n,
            strategy,
            choices,
            key_moduli: key_moduli(log_n),
            context: context(&graph, log_n, strategy, choices),
        };
        f(&setup, &graph, &mut rng);
    }
}

fn context(
    graph: &Graph,
    log_n: u32,
    strategy: NttStrategy,
    choices: KernelChoices,
) -> CkksContext {
    let values: Vec<u64> = key_moduli(log_n).iter().map(|q| q.value()).collect();
    CkksContext::new(graph.context(), log_n, &values, true, strategy, choices).unwrap()
}

fn assert_same(got: &[u64], want: &[u64], what: &str) {
    let bad = (0..want.len()).filter(|&i| got[i] != want[i]).count();
    assert_eq!(
        bad,
        0,
        "{what}: {bad} words differ (first at {:?})",
        (0..want.len()).find(|&i| got[i] != want[i])
    );
}

#[test]
fn rescale_matches_host_composition() {
    let mut rng = rng();
    let devices = devices(None);
    let graph = devices.graph();
    let mut layouts = Vec::new();
    for (log_n, strategy, choices) in configs() {
        let n = 1 << log_n;
        let moduli = key_moduli(log_n);
        let context = context(&graph, log_n, strategy, choices);
        for (k, polys) in [(3, 2), (3, 3), (2, 2)] {
            let ct = random_poly(&mut rng, &moduli[..k], polys, n);
            let want = host_rescale(&ct, &moduli[..k], polys, log_n);
            let src = graph.context().upload(graph.queue(), &ct).unwrap();
            let ops = LevelOps::new(&context, &graph, k).unwrap();
            layouts.push(
                context
                    .level(graph.queue(), k)
                    .unwrap()
                    .plan()
                    .launches_per_transform(),
            );
            let dst = ops.alloc_result(polys, k - 1).unwrap();
            ops.rescale(dst.buffer(), &src, polys).unwrap();
            let got = cl::download(graph.queue(), dst.buffer()).unwrap();
            assert_same(
                &got,
                &want,
                &format!("2^{log_n} {strategy} {choices:?} K={k} polys={polys}"),
            );
            assert_same(
                &cl::download(graph.queue(), &src).unwrap(),
                &ct,
                "rescale's source",
            );
        }
    }
    assert!(
        layouts.contains(&1) && layouts.contains(&2),
        "one- and two-pass layouts: {layouts:?}"
    );
}

/// A rescale of plaintext products added (`LevelOps::rescale_sum`: SEAL's multiply_plain
/// into temporaries, their adds and the rescale, deferred by the backend) in one chained
/// launch: the host's sum (`host::ckks_sum` from zero) rescaled on the host, for 1, 3 and
/// 8 terms (the first times a plaintext, the second subtracted, the others either at
/// random), into a poisoned result; the terms and plaintexts left as they were. At every
/// configuration whose level has the launch, which the default layouts at 2^13 and 2^14
/// do; elsewhere `rescale_sum` is refused.
#[test]
fn rescale_sum_matches_host_composition() {
    let mut rng = rng();
    let profiler = Profiler::new();
    let devices = devices(Some(profiler.clone()));
    let graph = devices.graph();
    let upload = |words: &[u64]| graph.context().upload(graph.queue(), words).unwrap();
    let mut ran = Vec::new();
    for (log_n, strategy, choices) in configs() {
        let n = 1 << log_n;
        let (k, polys) = (3, 2);
        let moduli = &key_moduli(log_n)[..k];
        let context = context(&graph, log_n, strategy, choices);
        let ops = LevelOps::new(&context, &graph, k).unwrap();
        let what = format!("2^{log_n} {strategy} {choices:?}");
        if !ops.chains_rescale_sum() {
            assert!(
                !(strategy == NttStrategy::STAGED && choices == FUSED && log_n >= 13),
                "{what}: the chained rescale of a sum"
            );
            let term = upload(&random_poly(&mut rng, moduli, polys, n));
            let dst = ops.alloc_result(polys, k - 1).unwrap();
            let sum = Sources::products(&[SumTerm::words(&term, false)]).unwrap();
            assert!(
                ops.rescale_sum(dst.buffer(), sum, polys).is_err(),
                "{what}: refused without the launch"
            );
            continue;
        }
        for count in [1, 3, SOURCE_TERMS_MAX] {
            let host_terms: Vec<SumTerm<Vec<u64>>> = (0..count)
                .map(|i| SumTerm {
                    words: random_poly(&mut rng, moduli, polys, n),
                    plain: (i == 0 || (i > 1 && rng.gen()))
                        .then(|| random_poly(&mut rng, moduli, 1, n)),
                    subtract: i == 1 || (i > 1 && rng.gen()),
                    shift: 0,
                })
                .collect();
            let as_host = compose::borrowed_terms(&host_terms);
            let mut sum = vec![0; polys * k * n];
            host::ckks_sum(&mut sum, false, &as_host, moduli, n);
            let want = host_rescale(&sum, moduli, polys, log_n);
            let device: Vec<_> = host_terms
                .iter()
                .map(|t| (upload(&t.words), t.plain.as_deref().map(upload)))
                .collect();
            let as_device: Vec<SumTerm<&cl::Region>> = device
                .iter()
                .zip(&host_terms)
                .map(|((w, p), t)| SumTerm {
                    plain: p.as_ref(),
                    ..SumTerm::words(w, t.subtract)
                })
                .collect();
            let dst = ops.alloc_result(polys, k - 1).unwrap();
            let sources = Sources::products(&as_device).unwrap();
            let launched = launches(&profiler, Some(&graph), || {
                ops.rescale_sum(dst.buffer(), sources, polys).unwrap()
            });
            let what = format!("{what}: a rescale of {count} terms");
            assert_eq!(launched, 1, "{what}: launches");
            assert_same(
                &cl::download(graph.queue(), dst.buffer()).unwrap(),
                &want,
                &what,
            );
            for ((w, p), t) in device.iter().zip(&host_terms) {
                assert_same(&cl::download(graph.queue(), w).unwrap(), &t.words, "a term");
                if let (Some(p), Some(plain)) = (p, &t.plain) {
                    assert_same(
                        &cl::download(graph.queue(), p).unwrap(),
                        plain,
                        "a plaintext",
                    );
                }
            }
        }
        ran.push(log_n);
    }
    assert!(ran.contains(&13) && ran.contains(&14), "ran at {ran:?}");
}

#[test]
fn switch_key_matches_host_composition() {
    each_setup(|s, graph, rng| {
        let (log_n, strategy, choices, l) = (s.log_n, s.strategy, s.choices, s.key_moduli.len());
        for k in [3, 2, 1] {
            let key_words = random_poly(rng, &s.key_moduli, 2 * (l - 1), s.n);
            let key = KswitchKey::upload(&s.context, graph.queue(), l - 1, &key_words).unwrap();
            let ct = random_poly(rng, &s.key_moduli[..k], 3, s.n);
            let mut want = ct.clone();
            let target = ct[2 * k * s.n..].to_vec();
            compose::switch_key(
                &mut want,
                &target,
                &key_words,
                &s.key_moduli,
                k,
                s.log_n,
                DropCorrection::Round,
            );
            let buf = graph.context().upload(graph.queue(), &ct).unwrap();
            let ops = LevelOps::new(&s.context, graph, k).unwrap();
            // Rows of one block (at most 64 items and 2.3 KB each in two passes) fit any
            // device's work groups; in one pass a row is the whole transform (36 KB at
            // 2^12), which the device may hold only once (the H100's 48 KB).
            let level = s.context.level(graph.queue(), k).unwrap();
            if let (NttStrategy::Staged(variant), Some(passes)) = (s.strategy, level.fused()) {
                let two_pass = level.plan().launches_per_transform() == 2;
                let rows = passes.key_switch_rows();
                assert!(
                    rows > 1 || variant.rows() == 1 || !two_pass,
                    "2^{log_n} {strategy}: {rows} rows per work group"
                );
                // The default's rows and their roots (13 KB at most in two passes) fit any
                // device's local memory.
                if s.strategy == NttStrategy::STAGED && two_pass {
                    assert!(
                        passes.key_switch_local_roots(),
                        "2^{log_n}: roots in local memory"
                    );
                }
            }
            ops.switch_key(&buf, &buf, 2 * k * s.n, &key).unwrap();
            let got = cl::download(graph.queue(), &buf).unwrap();
            assert_same(
                &got,
                &want,
                &format!("2^{log_n} {strategy} {choices:?} K={k}"),
            );
        }
    });
}

/// A rotation (`LevelOps::apply_galois`) and a rotation of a plaintext product
/// (`LevelOps::apply_galois_times_plain`) give the host permutation of the ciphertext (of
/// its host product with the plaintext) with its second polynomial key-switched, out of
/// place into a poisoned buffer (the inputs kept) and in place.
#[test]
fn apply_galois_matches_host_composition() {
    each_setup(|s, graph, rng| {
        let (log_n, strategy, choices, l) = (s.log_n, s.strategy, s.choices, s.key_moduli.len());
        let k = 3;
        let moduli = &s.key_moduli[..k];
        // A rotation's element (3), also of a plaintext product, and the conjugation's
        // (2N - 1).
        for (galois_elt, times_plain) in [(3, false), (3, true), (2 * s.n as u32 - 1, false)] {
            let key_words = random_poly(rng, &s.key_moduli, 2 * (l - 1), s.n);
            let key = KswitchKey::upload(&s.context, graph.queue(), l - 1, &key_words).unwrap();
            let ct = random_poly(rng, moduli, 2, s.n);
            let plain = random_poly(rng, moduli, 1, s.n);
            let mut rotated = ct.clone();
            if times_plain {
                host::ckks_multiply_plain(&mut rotated, &plain, moduli, s.n);
            }
            let want = host_rotate(s, k, &rotated, galois_elt, &key_words);
            let buf = graph.context().upload(graph.queue(), &ct).unwrap();
            let plain_buf = graph.context().upload(graph.queue(), &plain).unwrap();
            let ops = LevelOps::new(&s.context, graph, k).unwrap();
            let rotate = |dst: &cl::Region, src: &cl::Region| {
                if times_plain {
                    ops.apply_galois_times_plain(dst, src, &plain_buf, galois_elt, &key)
                } else {
                    ops.apply_galois(dst, src, galois_elt, &key)
                }
                .unwrap()
            };
            let what = format!(
                "2^{log_n} {strategy} {choices:?} element {galois_elt} times_plain {times_plain}"
            );
            let dst = graph.context().buffer(graph.queue(), ct.len()).unwrap();
            cl::poison(graph.queue(), &dst, 0xBAD0_BAD0_BAD0_BAD0).unwrap();
            rotate(&dst, &buf);
            assert_same(
                &cl::download(graph.queue(), &dst).unwrap(),
                &want,
                &format!("{what} into dst"),
            );
            assert_same(
                &cl::download(graph.queue(), &buf).unwrap(),
                &ct,
                &format!("{what}: its input"),
            );
            assert_same(
                &cl::download(graph.queue(), &plain_buf).unwrap(),
                &plain,
                &format!("{what}: the plaintext"),
            );
            rotate(&buf, &buf);
            let got = cl::download(graph.queue(), &buf).unwrap();
            assert_same(&got, &want, &what);
        }
    });
}

/// Several independent rotations (`LevelOps::apply_galois_jobs`: up to `KS_JOBS_MAX` in
/// one chained launch, or in one launch per fused pass; five here, each with its own
/// element and key, one in place, one reading another's input buffer, two of a product
/// with a plaintext, one of them first in its launch) give each the host's rotation into a
/// poisoned buffer, leaving the inputs as they were.
#[test]
fn apply_galois_jobs_match_host_composition() {
    each_setup(|s, graph, rng| {
        let (log_n, strategy, choices, l) = (s.log_n, s.strategy, s.choices, s.key_moduli.len());
        let k = 3;
        let moduli = &s.key_moduli[..k];
        let ops = LevelOps::new(&s.context, graph, k).unwrap();
        let elements = [3, 2 * s.n as u32 - 1, 5, 3, 25];
        let keys: Vec<_> = elements
            .iter()
            .map(|_| {
                let words = random_poly(rng, &s.key_moduli, 2 * (l - 1), s.n);
                let key = KswitchKey::upload(&s.context, graph.queue(), l - 1, &words).unwrap();
                (words, key)
            })
            .collect();
        let inputs: Vec<Vec<u64>> = (0..elements.len())
            .map(|_| random_poly(rng, moduli, 2, s.n))
            .collect();
        let plain = random_poly(rng, moduli, 1, s.n);
        let up = |w: &[u64]| graph.context().upload(graph.queue(), w).unwrap();
        let srcs: Vec<_> = inputs.iter().map(|x| up(x)).collect();
        let plain_buf = up(&plain);
        // Jobs 3 (in the first launch) and 4 (the second's first) rotate a product.
        let times_plain = |j: usize| j >= 3;
        let dsts: Vec<_> = inputs
            .iter()
            .map(|x| {
                let dst = graph.context().buffer(graph.queue(), x.len()).unwrap();
                cl::poison(graph.queue(), &dst, 0xBAD0_BAD0_BAD0_BAD0).unwrap();
                dst
            })
            .collect();
        // Job 1 in place; job 2 reads job 0's input buffer.
        let src_of = |j: usize| if j == 2 { 0 } else { j };
        let rotations: Vec<Rotation> = (0..elements.len())
            .map(|j| Rotation {
                dst: if j == 1 { &srcs[1] } else { &dsts[j] },
                src: &srcs[src_of(j)],
                plain: times_plain(j).then_some(&plain_buf),
                galois_elt: elements[j],
                key: &keys[j].1,
            })
            .collect();
        ops.apply_galois_jobs(&rotations).unwrap();
        for (j, r) in rotations.iter().enumerate() {
            let what = format!("2^{log_n} {strategy} {choices:?} rotation {j} of 5");
            let mut rotated = inputs[src_of(j)].clone();
            if times_plain(j) {
                host::ckks_multiply_plain(&mut rotated, &plain, moduli, s.n);
            }
            let want = host_rotate(s, k, &rotated, elements[j], &keys[j].0);
            assert_same(&cl::download(graph.queue(), r.dst).unwrap(), &want, &what);
            if j != 1 {
                assert_same(
                    &cl::download(graph.queue(), r.src).unwrap(),
                    &inputs[src_of(j)],
                    &format!("{what}: its input"),
                );
            }
        }
        assert_same(
            &cl::download(graph.queue(), &plain_buf).unwrap(),
            &plain,
            "the plaintext",
        );
    });
}

/// SEAL's apply_galois of `ct` (two polynomials of `k` residues in NTT form) with
/// `galois_elt` on the host: the permuted first polynomial, the second key-switched with
/// `key_words` into both.
fn host_rotate(s: &Setup, k: usize, ct: &[u64], galois_elt: u32, key_words: &[u64]) -> Vec<u64> {
    let mut permuted = vec![0; ct.len()];
    host::ckks_galois_ntt(&mut permuted, ct, galois_elt, s.log_n);
    let mut want = permuted.clone();
    want[k * s.n..].fill(0);
    compose::switch_key(
        &mut want,
        &permuted[k * s.n..],
        key_words,
        &s.key_moduli,
        k,
        s.log_n,
        DropCorrection::Round,
    );
    want
}

/// The host's tensor product of `a` and `b` (two polynomials of `k` residues each),
/// key-switched with `key_words` and rounded: SEAL's multiply, then relinearize, in dst's
/// first two polynomials.
fn host_multiply_relinearize(
    s: &Setup,
    k: usize,
    a: &[u64],
    b: &[u64],
    key_words: &[u64],
) -> Vec<u64> {
    let mut want = vec![0; 3 * k * s.n];
    host::ckks_tensor(&mut want, a, 2, b, 2, &s.key_moduli[..k], s.n);
    let target = want[2 * k * s.n..].to_vec();
    compose::switch_key(
        &mut want,
        &target,
        key_words,
        &s.key_moduli,
        k,
        s.log_n,
        DropCorrection::Round,
    );
    want.truncate(2 * k * s.n);
    want
}

/// A multiply and its relinearization (`LevelOps::multiply_relinearize`, one chained launch
/// where the level chains) give the host tensor product key-switched, for two operands and
/// for a square, into a poisoned buffer, leaving the operands as they were; several
/// independent ones (`multiply_relinearize_jobs`: up to `KS_JOBS_MAX` a launch, five
/// here, a square among them) give each its own.
#[test]
fn multiply_relinearize_matches_host_composition() {
    each_setup(|s, graph, rng| {
        let (log_n, strategy, choices, l) = (s.log_n, s.strategy, s.choices, s.key_moduli.len());
        for k in [3, 1] {
            let moduli = &s.key_moduli[..k];
            let key_words = random_poly(rng, &s.key_moduli, 2 * (l - 1), s.n);
            let key = KswitchKey::upload(&s.context, graph.queue(), l - 1, &key_words).unwrap();
            let a = random_poly(rng, moduli, 2, s.n);
            let b = random_poly(rng, moduli, 2, s.n);
            let ops = LevelOps::new(&s.context, graph, k).unwrap();
            let a_buf = graph.context().upload(graph.queue(), &a).unwrap();
            let b_buf = graph.context().upload(graph.queue(), &b).unwrap();
            let poisoned = || {
                let dst = graph.context().buffer(graph.queue(), 3 * k * s.n).unwrap();
                cl::poison(graph.queue(), &dst, 0xBAD0_BAD0_BAD0_BAD0).unwrap();
                dst
            };
            for square in [false, true] {
                let other = if square { &a } else { &b };
                let want = host_multiply_relinearize(s, k, &a, other, &key_words);
                let dst = poisoned();
                let other_buf = if square { &a_buf } else { &b_buf };
                ops.multiply_relinearize(&dst, &a_buf, other_buf, &key, DropCorrection::Round)
                    .unwrap();
                let got = cl::download(graph.queue(), &dst).unwrap();
                let what = format!("2^{log_n} {strategy} {choices:?} K={k} square={square}");
                assert_same(&got[..2 * k * s.n], &want, &what);
                assert_same(
                    &cl::download(graph.queue(), &a_buf).unwrap(),
                    &a,
                    &format!("{what}: a"),
                );
                assert_same(
                    &cl::download(graph.queue(), &b_buf).unwrap(),
                    &b,
                    &format!("{what}: b"),
                );
            }
            // Five jobs: a launch of KS_JOBS_MAX and one of one where the level chains;
            // job 2 a square, job 3 reading job 0's first operand (its buffer).
            let mut operands: Vec<(Vec<u64>, Vec<u64>)> = Vec::new();
            for j in 0..5 {
                let x = match j {
                    3 => operands[0].0.clone(),
                    _ => random_poly(rng, moduli, 2, s.n),
                };
                let y = if j == 2 {
                    x.clone()
                } else {
                    random_poly(rng, moduli, 2, s.n)
                };
                operands.push((x, y));
            }
            let uploads: Vec<_> = operands
                .iter()
                .map(|(x, y)| {
                    let up = |w: &[u64]| graph.context().upload(graph.queue(), w).unwrap();
                    (up(x), up(y), poisoned())
                })
                .collect();
            let jobs: Vec<TensorJob> = uploads
                .iter()
                .enumerate()
                .map(|(j, (x, y, dst))| TensorJob {
                    a: if j == 3 { &uploads[0].0 } else { x },
                    b: if j == 2 { x } else { y },
                    dst,
                })
                .collect();
            ops.multiply_relinearize_jobs(&jobs, &key, DropCorrection::Round)
                .unwrap();
            for (j, ((x, y), (x_buf, _, dst))) in operands.iter().zip(&uploads).enumerate() {
                let what = format!("2^{log_n} {strategy} {choices:?} K={k} job {j} of 5");
                let got = cl::download(graph.queue(), dst).unwrap();
                assert_same(
                    &got[..2 * k * s.n],
                    &host_multiply_relinearize(s, k, x, y, &key_words),
                    &what,
                );
                assert_same(
                    &cl::download(graph.queue(), x_buf).unwrap(),
                    x,
                    &format!("{what}: a"),
                );
            }
        }
    });
}

/// The fused launch budget: rescale in 3 launches with a two-pass NTT layout (2 with
/// one): the last residue's inverse NTT, whose second pass shares its launch with the
/// forward NTTs' first; switch_key in 5 (3): the target's inverse NTT, the decomposition
/// and inner product inside the forward NTT, the mod-down's inverse and forward NTTs,
/// each inverse's second pass sharing the next step's launch and key switching's last
/// pass running the mod-down inverse's first; apply_galois in as many as switch_key, its
/// permutation sharing the target inverse's launch, and so a rotation of a plaintext
/// product (the permutation reads the product; one launch more unfused), a multiply and
/// its relinearization in as many as switch_key (the tensor product beside the target
/// inverse's first pass; one launch more unfused), and KS_JOBS_MAX independent rotations
/// or products (`apply_galois_jobs`, `multiply_relinearize_jobs`: one launch per pass for
/// all of them).
/// Chained, each of these is one launch, and so is a transform (transform_to_ntt,
/// transform_from_ntt, whose words are checked against the host's), which else takes the
/// plan's launches.
#[test]
fn rescale_switch_key_and_galois_launch_counts() {
    let mut rng = rng();
    let profiler = Profiler::new();
    let devices = devices(Some(profiler.clone()));
    let graph = devices.graph();
    for (log_n, strategy, choices) in configs() {
        let n = 1 << log_n;
        let key_moduli = key_moduli(log_n);
        let context = context(&graph, log_n, strategy, choices);
        let k = 3;
        let ops = LevelOps::new(&context, &graph, k).unwrap();
        let level = context.level(graph.queue(), k).unwrap();
        let per_transform = level.plan().launches_per_transform() as u64;
        let chained = level.fused().is_some_and(|f| f.chains());
        // The device runs chained key switches (PoCL, a CPU device, and NVIDIA's do) at
        // the default layout's two-pass sizes.
        if strategy == NttStrategy::STAGED && choices == FUSED && log_n >= 13 {
            assert!(chained, "2^{log_n}: key switches chained");
        }
        let ct = graph
            .context()
            .upload(
                graph.queue(),
                &random_poly(&mut rng, &key_moduli[..k], 3, n),
            )
            .unwrap();
        let dst = ops.alloc_result(2, k - 1).unwrap();
        let key_words = random_poly(&mut rng, &key_moduli, 2 * (key_moduli.len() - 1), n);
        let key = KswitchKey::upload(&context, graph.queue(), k, &key_words).unwrap();
        // Build the one-prime plans outside the counted launches.
        ops.rescale(dst.buffer(), &ct, 2).unwrap();
        ops.switch_key(&ct, &ct, 2 * k * n, &key).unwrap();
        ops.apply_galois(&ct, &ct, 3, &key).unwrap();
        let rescale = launches(&profiler, Some(&graph), || {
            ops.rescale(dst.buffer(), &ct, 2).unwrap()
        });
        let switch_key = launches(&profiler, Some(&graph), || {
            ops.switch_key(&ct, &ct, 2 * k * n, &key).unwrap()
        });
        let galois = launches(&profiler, Some(&graph), || {
            ops.apply_galois(&ct, &ct, 3, &key).unwrap()
        });
        // SEAL's transform_to_ntt / transform_from_ntt of two polynomials: one launch
        // chained, else the plan's (two with a two-pass layout); the words are the host's.
        let words = random_poly(&mut rng, &key_moduli[..k], 2, n);
        let tables = create_ntt_tables(log_n, &key_moduli[..k]).unwrap();
        let pair = graph.context().upload(graph.queue(), &words).unwrap();
        let mut want = words.clone();
        let mut transforms = [0; 2];
        for (count, (direction, host_transform)) in transforms.iter_mut().zip([
            (
                NttDirection::Forward,
                ntt_host::ntt_negacyclic_harvey as fn(&mut [u64], &NttTables),
            ),
            (
                NttDirection::Inverse,
                ntt_host::inverse_ntt_negacyclic_harvey,
            ),
        ]) {
            *count = launches(&profiler, Some(&graph), || {
                ops.transform(&pair, 2, direction).unwrap()
            });
            ntt_host::transform_batch(&mut want, &tables, host_transform);
            assert_same(
                &cl::download(graph.queue(), &pair).unwrap(),
                &want,
                &format!("2^{log_n} {strategy} {choices:?}: {direction:?} transform"),
            );
        }
        // A multiply and its relinearization: one launch chained, else the tensor
        // product's and the key switch's.
        let (product, operand) = (
            ops.alloc_result(3, k).unwrap(),
            ops.alloc_result(2, k).unwrap(),
        );
        let multiply_relinearize = launches(&profiler, Some(&graph), || {
            ops.multiply_relinearize(
                product.buffer(),
                operand.buffer(),
                &ct,
                &key,
                DropCorrection::Round,
            )
            .unwrap()
        });
        let tensor = launches(&profiler, Some(&graph), || {
            ops.tensor(product.buffer(), operand.buffer(), 2, &ct, 2)
                .unwrap()
        });
        // A rotation of a plaintext product: the rotation's launches where the permutation
        // is fused (it reads the product), else the product's launch first.
        let plain = ops.alloc_result(1, k).unwrap();
        let galois_times_plain = launches(&profiler, Some(&graph), || {
            ops.apply_galois_times_plain(&ct, &ct, plain.buffer(), 3, &key)
                .unwrap()
        });
        // KS_JOBS_MAX independent rotations: one rotation's launches for all where the key
        // switches run on the fused passes (chained or not), else one rotation's each.
        let outs: Vec<_> = (0..KS_JOBS_MAX)
            .map(|_| ops.alloc_result(2, k).unwrap())
            .collect();
        let rotations: Vec<Rotation> = outs
            .iter()
            .map(|out| Rotation {
                dst: out.buffer(),
                src: &ct,
                plain: None,
                galois_elt: 3,
                key: &key,
            })
            .collect();
        let galois_jobs = launches(&profiler, Some(&graph), || {
            ops.apply_galois_jobs(&rotations).unwrap()
        });
        let (factors, products): (Vec<_>, Vec<_>) = (0..KS_JOBS_MAX)
            .map(|_| {
                (
                    ops.alloc_result(2, k).unwrap(),
                    ops.alloc_result(3, k).unwrap(),
                )
            })
            .unzip();
        let products_jobs = launches(&profiler, Some(&graph), || {
            let jobs: Vec<TensorJob> = factors
                .iter()
                .zip(&products)
                .map(|(a, dst)| TensorJob {
                    a: a.buffer(),
                    b: &ct,
                    dst: dst.buffer(),
                })
                .collect();
            ops.multiply_relinearize_jobs(&jobs, &key, DropCorrection::Round)
                .unwrap()
        });
        let what = format!("2^{log_n} {strategy} {choices:?}");
        let on_fused_passes =
            chained || (choices.fused && matches!(strategy, NttStrategy::Staged(_)));
        assert_eq!(
            galois_times_plain,
            galois + u64::from(!on_fused_passes),
            "apply_galois_times_plain, {what}"
        );
        let each = if on_fused_passes {
            1
        } else {
            KS_JOBS_MAX as u64
        };
        assert_eq!(galois_jobs, each * galois, "apply_galois_jobs, {what}");
        if chained {
            assert_eq!(multiply_relinearize, 1, "multiply_relinearize, {what}");
        } else if on_fused_passes {
            // The tensor product shares the target inverse's first launch.
            assert_eq!(
                multiply_relinearize, switch_key,
                "multiply_relinearize, {what}"
            );
        } else {
            assert_eq!(
                multiply_relinearize,
                tensor + switch_key,
                "multiply_relinearize, {what}"
            );
        }
        assert_eq!(
            products_jobs,
            each * multiply_relinearize,
            "multiply_relinearize_jobs, {what}"
        );
        let transform = if chained { 1 } else { per_transform };
        assert_eq!(
            transforms, [transform; 2],
            "transform_to_ntt, transform_from_ntt, {what}"
        );
        if chained {
            assert_eq!(rescale, 1, "rescale, {what}");
            assert_eq!(switch_key, 1, "switch_key, {what}");
            assert_eq!(galois, 1, "apply_galois, {what}");
        } else if choices.fused && matches!(strategy, NttStrategy::Staged(_)) {
            assert_eq!(rescale, 1 + per_transform, "rescale, {what}");
            assert_eq!(switch_key, 2 * per_transform + 1, "switch_key, {what}");
            assert_eq!(galois, switch_key, "apply_galois, {what}");
        } else {
            // The permutation, then switch_key.
            assert_eq!(galois, 1 + switch_key, "apply_galois, {what}");
            // gather, INTT, prep, NTT, finish.
            assert_eq!(rescale, 3 + 2 * per_transform, "rescale, {what}");
            // (copy,) INTT, decompose, NTT, inner product, then the unfused mod-down.
            assert_eq!(
                switch_key,
                2 + 2 * per_transform + 2 + 2 * per_transform,
                "switch_key, {what}"
            );
        }
    }
}
