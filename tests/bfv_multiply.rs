//! BFV multiplication by SEAL's BEHZ base extensions (`seal_opencl::integer`):
//!
//! - the host tables pick SEAL's Bsk (`RNSTool::base_Bsk`) and the host reference
//!   `BehzTables::bfv_multiply_host` equals SEAL's CPU `Evaluator::multiply` and `square` word
//!   for word, on real BFV ciphertexts (the test kit's BFV oracle), for sizes 2 x 2 and 3 x 2;
//! - the device sequence `BehzLevel::bfv_multiply` equals the host reference word for word on
//!   the same ciphertexts and on fresh random inputs (canonical residues with 0 and q - 1
//!   mixed in), outputs poisoned first, for products and squares of sizes 2 x 2, 3 x 2, 1 x 3;
//! - the naive NTT plan, separate launches instead of the two chained ones, and a second run
//!   give the same words;
//! - a product or a square takes two chained launches where the level chains, else one
//!   extension, the forward transform, the tensor fused with the inverse transform (apart
//!   with the naive plan) and one scaling;
//! - bad arguments are `InvalidArgument` errors, at the level and at the chained launchers.
//!
//! Parameters: N = 2^12 and 2^13 (launch counts also at 2^14), one to four primes of 40 to
//! 60 bits, plain moduli of 17, 20 and 60 bits (the last with 60-bit primes, where SEAL's B
//! takes one prime more than q).

use std::sync::{Arc, OnceLock};

use rand::Rng;
use seal_opencl::arith::{coeff_modulus_create, get_primes};
use seal_opencl::ckks::context::DEFAULT_CHAIN_GROUPS_PER_UNIT;
use seal_opencl::ckks::fused::{ChainedBehzForward, ChainedBehzTensorFloor};
use seal_opencl::cl::{self, Region};
use seal_opencl::config::Config;
use seal_opencl::device::{DeviceOptions, Devices, Graph, Partition, CHAIN_COUNTER_WORDS};
use seal_opencl::integer::behz::BehzTables;
use seal_opencl::integer::multiply::{BehzLevel, BehzLevels};
use seal_opencl::memcache::MemcacheConfig;
use seal_opencl::ntt::NttStrategy;
use seal_opencl::profiler::Profiler;
use seal_opencl::ErrorKind;
use seal_opencl_testkit::harness::rng;
use seal_opencl_testkit::oracle_bfv::{seal_bfv_products, SealBfvProducts};

const POISON: u64 = 0xBAD0_BAD0_BAD0_BAD0;

/// Chained launches as the backend's default at N <= 2^14.
const CHAIN: Option<u32> = Some(DEFAULT_CHAIN_GROUPS_PER_UNIT);

/// One parameter set: N = 2^log_n, the key level's prime sizes, t, and how many levels the
/// ciphertexts are switched down before multiplying.
struct Params {
    log_n: u32,
    bits: &'static [i32],
    plain_modulus: u64,
    levels_down: usize,
}

fn parameter_sets() -> Vec<Params> {
    let t20 = get_primes(2 << 13, 20, 1).unwrap()[0];
    // A 60-bit t that is not 1 mod 2N, so it is none of the coefficient primes.
    let t60 = get_primes(2, 60, 1).unwrap()[0];
    vec![
        Params {
            log_n: 12,
            bits: &[40, 40, 40, 40],
            plain_modulus: 65537,
            levels_down: 0,
        },
        Params {
            log_n: 12,
            bits: &[40, 40, 40, 40],
            plain_modulus: 65537,
            levels_down: 1,
        },
        Params {
            log_n: 12,
            bits: &[60, 60, 60],
            plain_modulus: t60,
            levels_down: 0,
        },
        Params {
            log_n: 13,
            bits: &[50, 50, 50, 50, 50],
            plain_modulus: t20,
            levels_down: 0,
        },
        // One prime left: every (Q / q_i)^-1 is 1 (SEAL's Barrett branch).
        Params {
            log_n: 12,
            bits: &[50, 50, 50],
            plain_modulus: t20,
            levels_down: 1,
        },
        Params {
            log_n: 13,
            bits: &[60, 60, 60, 60],
            plain_modulus: t60,
            levels_down: 1,
        },
    ]
}

/// SEAL's products for `p`, and the host tables of their level.
fn seal_case(p: &Params, seed: u64) -> (SealBfvProducts, BehzTables) {
    let key_moduli = coeff_modulus_create(1 << p.log_n, p.bits).unwrap();
    let seal = seal_bfv_products(p.log_n, &key_moduli, p.plain_modulus, p.levels_down, seed)
        .expect("SEAL's BFV products");
    let tables = BehzTables::new(p.log_n, &seal.level_moduli, p.plain_modulus).unwrap();
    (seal, tables)
}

#[test]
fn host_reference_equals_seal_multiply_and_square() {
    for (case, p) in parameter_sets().iter().enumerate() {
        let (seal, tables) = seal_case(p, 1 + case as u64);
        let what = format!(
            "N = 2^{}, q = {:?}, t = {}",
            p.log_n, seal.level_moduli, p.plain_modulus
        );
        let bsk: Vec<u64> = tables.base_bsk().iter().map(|m| m.value()).collect();
        assert_eq!(bsk, seal.base_bsk, "Bsk, {what}");

        let product = tables
            .bfv_multiply_host(&seal.ct1, 2, &seal.ct2, 2)
            .unwrap();
        assert!(product == seal.product, "multiply 2 x 2, {what}");
        let square = tables
            .bfv_multiply_host(&seal.ct1, 2, &seal.ct1, 2)
            .unwrap();
        assert!(square == seal.square, "square, {what}");
        let product3 = tables
            .bfv_multiply_host(&seal.product, 3, &seal.ct2, 2)
            .unwrap();
        assert!(product3 == seal.product3, "multiply 3 x 2, {what}");
    }
}

/// One device whose pooled buffers (the product's scratch) come poisoned, and its graph,
/// shared by the tests of a run.
struct Env {
    _devices: Devices,
    graph: Graph,
}

/// Devices with pooled buffers poisoned and `profiler` attached if given.
fn devices(profiler: Option<Arc<Profiler>>) -> Devices {
    Devices::new(DeviceOptions {
        selector: Config::from_env().unwrap().device,
        partition: Partition::WholeDevices,
        memcache: MemcacheConfig {
            poison: Some(POISON),
            ..DeviceOptions::default().memcache
        },
        profiler,
        ..Default::default()
    })
    .expect("devices")
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let devices = devices(None);
        let graph = devices.graph();
        Env {
            _devices: devices,
            graph,
        }
    })
}

fn level(tables: &BehzTables) -> BehzLevel {
    level_with(tables, NttStrategy::STAGED, CHAIN)
}

fn level_with(tables: &BehzTables, strategy: NttStrategy, chain: Option<u32>) -> BehzLevel {
    let graph = &env().graph;
    BehzLevel::new(
        graph.context(),
        graph.queue(),
        tables.clone(),
        strategy,
        chain,
    )
    .expect("BEHZ level")
}

fn upload(words: &[u64]) -> Region {
    let graph = &env().graph;
    graph.context().upload(graph.queue(), words).unwrap()
}

/// The device product of `a` (`s1` polynomials) and `b` (`s2`; None: a squared) into a
/// poisoned result.
fn device_multiply(
    level: &BehzLevel,
    a: &[u64],
    s1: usize,
    b: Option<(&[u64], usize)>,
) -> Vec<u64> {
    let graph = &env().graph;
    let (k, n) = (level.primes(), level.tables().coeff_count());
    let s2 = b.map_or(s1, |(_, s)| s);
    let dst = graph
        .context()
        .buffer(graph.queue(), (s1 + s2 - 1) * k * n)
        .unwrap();
    cl::poison(graph.queue(), &dst, POISON).unwrap();
    let a_dev = upload(a);
    match b {
        Some((b, s2)) => {
            let b_dev = upload(b);
            level
                .bfv_multiply(graph, &dst, &a_dev, s1, &b_dev, s2)
                .unwrap();
        }
        None => level
            .bfv_multiply(graph, &dst, &a_dev, s1, &a_dev, s1)
            .unwrap(),
    }
    cl::download(graph.queue(), &dst).unwrap()
}

/// `polys` random polynomials of the tables' level, canonical, with 0 and q - 1 mixed in.
fn random_ct(tables: &BehzTables, polys: usize, rng: &mut impl Rng) -> Vec<u64> {
    let n = tables.coeff_count();
    let mut out = Vec::with_capacity(polys * tables.base_q().len() * n);
    for _ in 0..polys {
        for q in tables.base_q() {
            out.extend((0..n).map(|c| match c % 61 {
                0 => 0,
                1 => q.value() - 1,
                _ => rng.gen_range(0..q.value()),
            }));
        }
    }
    out
}

#[test]
fn device_equals_host_on_seal_ciphertexts() {
    for (case, p) in parameter_sets().iter().enumerate() {
        let (seal, tables) = seal_case(p, 100 + case as u64);
        let level = level(&tables);
        let what = format!("N = 2^{}, q = {:?}", p.log_n, seal.level_moduli);
        let product = device_multiply(&level, &seal.ct1, 2, Some((&seal.ct2, 2)));
        assert!(product == seal.product, "multiply, {what}");
        let square = device_multiply(&level, &seal.ct1, 2, None);
        assert!(square == seal.square, "square, {what}");
        let product3 = device_multiply(&level, &seal.product, 3, Some((&seal.ct2, 2)));
        assert!(product3 == seal.product3, "multiply 3 x 2, {what}");
    }
}

#[test]
fn device_equals_host_on_random_inputs() {
    let mut rng = rng();
    for p in parameter_sets() {
        let key_moduli = coeff_modulus_create(1 << p.log_n, p.bits).unwrap();
        let level_moduli = &key_moduli[..key_moduli.len() - 1 - p.levels_down];
        let tables = BehzTables::new(p.log_n, level_moduli, p.plain_modulus).unwrap();
        let what = format!("N = 2^{}, q = {level_moduli:?}", p.log_n);
        assert_random_products_match_host(&level(&tables), &tables, &mut rng, &what);
    }
}

/// `level`'s products of fresh random operands of sizes 2 x 2, 3 x 2 and 1 x 3, and a
/// square, equal the host reference's words (`what` names the case in a failure).
fn assert_random_products_match_host(
    level: &BehzLevel,
    tables: &BehzTables,
    rng: &mut impl Rng,
    what: &str,
) {
    for (s1, s2) in [(2, 2), (3, 2), (1, 3)] {
        let a = random_ct(tables, s1, rng);
        let b = random_ct(tables, s2, rng);
        let host = tables.bfv_multiply_host(&a, s1, &b, s2).unwrap();
        let device = device_multiply(level, &a, s1, Some((&b, s2)));
        assert!(host == device, "{s1} x {s2}, {what}");
    }
    let a = random_ct(tables, 2, rng);
    let host = tables.bfv_multiply_host(&a, 2, &a, 2).unwrap();
    assert!(
        host == device_multiply(level, &a, 2, None),
        "square, {what}"
    );
}

/// Separate launches give the two chained launches' words at 2^13, where the layout takes
/// two passes, both the host reference's, for products and a square.
#[test]
fn chained_and_separate_transforms_give_the_same_words() {
    let mut rng = rng();
    let key_moduli = coeff_modulus_create(1 << 13, &[50, 50, 50, 50, 50]).unwrap();
    let tables = BehzTables::new(13, &key_moduli[..4], 65537).unwrap();
    let (chained, separate) = (
        level(&tables),
        level_with(&tables, NttStrategy::STAGED, None),
    );
    assert!(
        chained.launches() < separate.launches(),
        "no chained launch at 2^13"
    );
    for (what, level) in [("chained", &chained), ("separate", &separate)] {
        assert_random_products_match_host(level, &tables, &mut rng, what);
    }
}

/// The naive NTT plan gives the staged plan's words, and a second run on the same inputs
/// (fresh scratch and result buffers) the first run's.
#[test]
fn naive_plan_and_second_runs_give_the_same_words() {
    let mut rng = rng();
    let key_moduli = coeff_modulus_create(1 << 12, &[60, 60, 60]).unwrap();
    let tables = BehzTables::new(12, &key_moduli[..2], 65537).unwrap();
    let (staged, naive) = (
        level(&tables),
        level_with(&tables, NttStrategy::Naive, CHAIN),
    );
    let a = random_ct(&tables, 2, &mut rng);
    let b = random_ct(&tables, 2, &mut rng);
    let first = device_multiply(&staged, &a, 2, Some((&b, 2)));
    assert!(
        first == device_multiply(&staged, &a, 2, Some((&b, 2))),
        "second run"
    );
    assert!(
        first == device_multiply(&naive, &a, 2, Some((&b, 2))),
        "naive plan"
    );
    assert!(
        first == tables.bfv_multiply_host(&a, 2, &b, 2).unwrap(),
        "host"
    );
}

/// A product, or a square, takes two launches where two-pass transforms chain (2^13 on the
/// test devices, which have the chain's fence): the extension with the forward transform,
/// the tensor product with the inverse and the scaling. Else one extension, the forward
/// transform's passes, the inverse's (the first with the tensor product) and one scaling: 4
/// launches with one-pass transforms, 6 with two-pass ones (and at 2^14, above
/// `BEHZ_CHAIN_LOG_N`, whatever the chain setting); with a naive plan log N each way and the
/// tensor apart.
/// On devices of its own, so that no other test's launches are counted.
#[test]
fn launch_counts() {
    let mut rng = rng();
    let profiler = Profiler::new();
    let devices = devices(Some(profiler.clone()));
    let graph = &devices.graph();
    let upload = |words: &[u64]| graph.context().upload(graph.queue(), words).unwrap();
    for log_n in [12, 13, 14] {
        let key_moduli = coeff_modulus_create(1 << log_n, &[50, 50, 50]).unwrap();
        let tables = BehzTables::new(log_n, &key_moduli[..2], 65537).unwrap();
        let a = upload(&random_ct(&tables, 2, &mut rng));
        let b = upload(&random_ct(&tables, 2, &mut rng));
        let dst = graph
            .context()
            .buffer(graph.queue(), (3 * 2) << log_n)
            .unwrap();
        let setups = [
            (NttStrategy::STAGED, CHAIN),
            (NttStrategy::STAGED, None),
            (NttStrategy::Naive, CHAIN),
        ];
        for (strategy, chain) in setups {
            let level = BehzLevel::new(
                graph.context(),
                graph.queue(),
                tables.clone(),
                strategy,
                chain,
            )
            .unwrap();
            let expected = match (strategy, chain, log_n) {
                (NttStrategy::Naive, _, _) => 3 + 2 * log_n as usize,
                (_, Some(_), 13) => 2,
                (_, _, 12) => 4,
                _ => 6,
            };
            assert_eq!(
                level.launches(),
                expected,
                "{strategy} {chain:?} at 2^{log_n}"
            );
            for (what, b) in [("multiply", &b), ("square", &a)] {
                graph.finish().unwrap();
                profiler.clear_events();
                level.bfv_multiply(graph, &dst, &a, 2, b, 2).unwrap();
                let launches: u64 = profiler
                    .kernel_stats()
                    .unwrap()
                    .iter()
                    .map(|s| s.count)
                    .sum();
                assert_eq!(
                    launches, expected as u64,
                    "{what}, {strategy} {chain:?} at 2^{log_n}"
                );
            }
        }
    }
}

/// A parameter set's levels are built once each, over the first K data primes.
#[test]
fn levels_are_built_once_over_the_first_primes() {
    let graph = &env().graph;
    let data = &coeff_modulus_create(1 << 12, &[40, 40, 40, 40]).unwrap()[..3];
    let levels =
        BehzLevels::new(graph.context(), 12, data, 65537, NttStrategy::STAGED, CHAIN).unwrap();
    for k in 1..=3 {
        let level = levels.level(graph.queue(), k).unwrap();
        assert!(Arc::ptr_eq(
            &level,
            &levels.level(graph.queue(), k).unwrap()
        ));
        let expected = BehzTables::new(12, &data[..k], 65537).unwrap();
        assert_eq!(level.tables().base_q(), expected.base_q());
        assert_eq!(level.tables().base_bsk(), expected.base_bsk());
    }
    for k in [0, 4] {
        let e = levels.level(graph.queue(), k).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "level {k}");
    }
}

#[test]
fn bad_arguments_are_invalid() {
    let key_moduli = coeff_modulus_create(1 << 12, &[40, 40, 40]).unwrap();
    let tables = BehzTables::new(12, &key_moduli[..2], 65537).unwrap();
    let level = level(&tables);
    let graph = &env().graph;
    let words = 2 * 2 * 4096;
    let a = upload(&vec![0; words]);
    let b = upload(&vec![0; words]);
    let dst = upload(&vec![0; 3 * 2 * 4096]);
    let short = upload(&vec![0; words - 1]);
    let invalid =
        |r: seal_opencl::Result<()>| assert_eq!(r.unwrap_err().kind(), ErrorKind::InvalidArgument);
    invalid(level.bfv_multiply(graph, &dst, &a, 0, &b, 2));
    invalid(level.bfv_multiply(graph, &dst, &short, 2, &b, 2));
    invalid(level.bfv_multiply(graph, &short, &a, 2, &b, 2));
    invalid(level.bfv_multiply(graph, &a, &a, 2, &b, 2));
    let part = a.part(1, words - 1).unwrap();
    invalid(level.bfv_multiply(graph, &dst, &a, 1, &part, 1));
    assert_eq!(
        BehzTables::new(12, &[], 65537).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

/// The chained launchers (`FusedPasses::chained_behz_extend_forward` and
/// `chained_behz_tensor_floor`; their words are the tests above) refuse sizes of 0 or above
/// 64 and s1 above the polynomials, regions shorter than their polynomials, values
/// overlapping an operand or dst, and counters inside the values.
#[test]
fn chained_launchers_reject_bad_arguments() {
    let key_moduli = coeff_modulus_create(1 << 13, &[50, 50, 50]).unwrap();
    let tables = BehzTables::new(13, &key_moduli[..2], 65537).unwrap();
    let level = level(&tables);
    let fused = level.chained().expect("a chaining level at 2^13");
    let graph = &env().graph;
    let (queue, ctx) = (graph.queue(), graph.context());
    let counters = graph.chain_counters();
    let n = tables.coeff_count();
    let (k, w) = (2, 2 + tables.base_bsk().len());
    let buffer = |words: usize| ctx.buffer(queue, words).unwrap();
    let invalid = |r: seal_opencl::Result<Vec<cl::Event>>, what: &str| {
        assert_eq!(
            r.err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument),
            "{what}"
        )
    };

    let (x, a, b) = (buffer(4 * w * n), buffer(2 * k * n), buffer(2 * k * n));
    let f = |values, a, s1, b, polys| ChainedBehzForward {
        values,
        a,
        s1,
        b,
        polys,
        counters,
    };
    let run = |f: ChainedBehzForward| fused.chained_behz_extend_forward(queue, &f, false);
    assert!(run(f(&x, &a, 2, &b, 4)).is_ok());
    assert!(run(f(&x, &a, 2, &a, 2)).is_ok(), "a square");
    invalid(run(f(&x, &a, 0, &b, 4)), "s1 = 0");
    invalid(run(f(&x, &a, 3, &b, 2)), "s1 above the polynomials");
    invalid(run(f(&x, &a, 2, &b, 5)), "values too short");
    invalid(run(f(&x, &a, 3, &b, 4)), "a too short");
    invalid(run(f(&x, &a, 1, &b, 4)), "b too short");
    let inside = x.part(w * n, 2 * k * n).unwrap();
    invalid(run(f(&x, &inside, 2, &b, 4)), "values overlapping a");
    let counters_inside = x.part(w * n, CHAIN_COUNTER_WORDS).unwrap();
    invalid(
        run(ChainedBehzForward {
            counters: &counters_inside,
            ..f(&x, &a, 2, &b, 4)
        }),
        "counters inside the values",
    );

    let (xa, xb) = (
        x.part(0, 2 * w * n).unwrap(),
        x.part(2 * w * n, 2 * w * n).unwrap(),
    );
    let (y, dst) = (buffer(3 * w * n), buffer(3 * k * n));
    let t = |values, a, s1, b, s2, dst| ChainedBehzTensorFloor {
        values,
        a,
        s1,
        b,
        s2,
        dst,
        counters,
    };
    let run = |t: ChainedBehzTensorFloor| fused.chained_behz_tensor_floor(queue, &t, false);
    assert!(run(t(&y, &xa, 2, &xb, 2, &dst)).is_ok());
    assert!(run(t(&y, &xa, 2, &xa, 2, &dst)).is_ok(), "a square");
    invalid(run(t(&y, &xa, 0, &xb, 2, &dst)), "s1 = 0");
    invalid(run(t(&y, &xa, 2, &xb, 65, &dst)), "s2 = 65");
    invalid(run(t(&y, &xa, 3, &xb, 2, &dst)), "values too short");
    let (y4, dst4, dst_short) = (buffer(4 * w * n), buffer(4 * k * n), buffer(3 * k * n - 1));
    invalid(run(t(&y4, &xa, 2, &xb, 3, &dst4)), "b too short");
    invalid(run(t(&y, &xa, 2, &xb, 2, &dst_short)), "dst too short");
    let y_dst = y.part(0, 3 * k * n).unwrap();
    invalid(run(t(&y, &xa, 2, &xb, 2, &y_dst)), "dst inside the values");
    invalid(run(t(&x, &xa, 2, &xb, 2, &dst)), "values overlapping a");
    let dst_a = xa.part(0, 3 * k * n).unwrap();
    invalid(run(t(&y, &xa, 2, &xb, 2, &dst_a)), "dst overlapping a");
}
