//! The element-wise kernels of BFV and BGV (`opencl/integer.cl` through
//! `integer::kernels::IntegerKernels`) equal their host references (`integer::host`) word
//! for word, on fresh random inputs with edge values mixed in, several prime sets (17 to 60
//! bits; a dropped prime larger and smaller than those kept) and plain moduli of 17, 20 and
//! 60 bits. Outputs are poisoned before each kernel runs, in regions at a non-zero offset
//! of their buffers with poisoned guards around them. The coefficient-form permutation is
//! checked against the NTT-form one through the host NTT, and bad arguments are
//! `InvalidArgument` errors. The plaintext kernels of `opencl/plain.cl` (through
//! `ckks::kernels::CkksKernels`) likewise, on full, short and single-coefficient plaintexts.

use std::sync::OnceLock;

use rand::Rng;
use seal_opencl::arith::{invert_uint_mod, Modulus, ShoupOperand};
use seal_opencl::ckks::host as ckks_host;
use seal_opencl::ckks::kernels::{CkksKernels, IntegerPlain, Lift, ModuliTable};
use seal_opencl::cl::Region;
use seal_opencl::config::Config;
use seal_opencl::device::{DeviceOptions, Devices, Graph, Partition};
use seal_opencl::integer::host;
use seal_opencl::integer::kernels::IntegerKernels;
use seal_opencl::integer::PlainScaling;
use seal_opencl::ntt::{create_ntt_tables, host as ntt_host};
use seal_opencl::ErrorKind;
use seal_opencl_testkit::guarded::{self, POISON};
use seal_opencl_testkit::harness::{primes, rng};

const LOG_N: u32 = 12;
const N: usize = 1 << LOG_N;
/// Polynomials per buffer: more than one, so that a kernel indexing polynomials wrongly
/// shows.
const POLYS: usize = 3;

struct Env {
    _devices: Devices,
    graph: Graph,
    kernels: IntegerKernels,
    ckks: CkksKernels,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let devices = Devices::new(DeviceOptions {
            selector: Config::from_env().unwrap().device,
            partition: Partition::WholeDevices,
            ..Default::default()
        })
        .expect("devices");
        let graph = devices.graph();
        let kernels = IntegerKernels::new(graph.context(), LOG_N).expect("integer kernels build");
        let ckks = CkksKernels::new(graph.context(), LOG_N).expect("CKKS kernels build");
        Env {
            _devices: devices,
            graph,
            kernels,
            ckks,
        }
    })
}

/// The prime sets every kernel runs on (the last prime is the one a division drops).
fn prime_sets() -> Vec<Vec<Modulus>> {
    vec![
        primes(LOG_N, &[60, 50, 40]),
        primes(LOG_N, &[30, 60, 45, 60]),
        primes(LOG_N, &[17, 60, 36, 20]),
    ]
}

/// Plain moduli of 17, 20 and 60 bits: batching primes (SEAL's second largest of their
/// sizes, apart from every prime of [`prime_sets`]) and a 60-bit prime that is not 1 mod
/// 2N (the kernels do not care).
fn plain_moduli() -> Vec<Modulus> {
    let batching = primes(LOG_N, &[17, 17, 20, 20]);
    vec![
        batching[1],
        batching[3],
        Modulus::new((1u64 << 60) - 93).unwrap(),
    ]
}

/// A word below `bound`: random, or one of the edges 0 and bound - 1 (one in 8 each).
fn word(rng: &mut impl Rng, bound: u64) -> u64 {
    match rng.gen_range(0..16) {
        0 => 0,
        1 => bound - 1,
        _ => rng.gen_range(0..bound),
    }
}

fn canonical(rng: &mut impl Rng, moduli: &[Modulus], polys: usize) -> Vec<u64> {
    (0..polys * moduli.len() * N)
        .map(|w| word(rng, moduli[(w / N) % moduli.len()].value()))
        .collect()
}

/// A region of `words` poisoned words between guards ([`guarded::poisoned`]).
fn poisoned(words: usize) -> Region {
    guarded::poisoned(&env().graph, words)
}

fn upload(data: &[u64]) -> Region {
    guarded::upload(&env().graph, data)
}

fn table(moduli: &[Modulus]) -> ModuliTable {
    let g = &env().graph;
    ModuliTable::new(g.context(), g.queue(), moduli).unwrap()
}

/// The words of a region; panics where a guard word is not poison any more
/// ([`guarded::down`]).
fn down(region: &Region) -> Vec<u64> {
    guarded::down(&env().graph, region)
}

#[track_caller]
fn assert_words(got: &[u64], want: &[u64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what}: word {i} (residue {}, coefficient {}) is {:#x}, host says {:#x}",
            i / N,
            i % N,
            got[i],
            want[i]
        );
    }
}

/// Galois elements: rotate_rows by 1 (3), rotate_columns (2N - 1), and random odd ones.
fn galois_elts(rng: &mut impl Rng) -> Vec<u32> {
    let mut elts = vec![3, 2 * N as u32 - 1, 1];
    elts.extend((0..2).map(|_| 2 * rng.gen_range(0..N as u32) + 1));
    elts
}

#[test]
fn integer_apply_galois_equals_host() {
    let (e, mut rng) = (env(), rng());
    for moduli in prime_sets() {
        let k = moduli.len();
        let mt = table(&moduli);
        for galois_elt in galois_elts(&mut rng) {
            let src = canonical(&mut rng, &moduli, POLYS);
            let mut want = vec![0; src.len()];
            host::integer_apply_galois(&mut want, &src, galois_elt, &moduli, N);
            let (dsrc, dst) = (upload(&src), poisoned(src.len()));
            e.kernels
                .integer_apply_galois(&e.graph, &dst, &dsrc, galois_elt, &mt, k, POLYS)
                .unwrap();
            let what = format!("K = {k}, element {galois_elt}");
            assert_words(&down(&dst), &want, &what);
            assert_words(&down(&dsrc), &src, &format!("{what}: its source"));
        }
    }
}

/// The coefficient-form permutation is the NTT-form one (SEAL's two `apply_galois`) seen
/// through the NTT: NTT(apply_galois(x)) = apply_galois_ntt(NTT(x)).
#[test]
fn integer_apply_galois_is_the_ntt_permutation() {
    let mut rng = rng();
    let moduli = primes(LOG_N, &[60, 40, 17]);
    let tables = create_ntt_tables(LOG_N, &moduli).unwrap();
    for galois_elt in galois_elts(&mut rng) {
        let x = canonical(&mut rng, &moduli, 1);
        let mut permuted = vec![0; x.len()];
        host::integer_apply_galois(&mut permuted, &x, galois_elt, &moduli, N);
        let mut x_ntt = x.clone();
        for (j, r) in permuted.chunks_exact_mut(N).enumerate() {
            ntt_host::ntt_negacyclic_harvey(r, &tables[j]);
        }
        for (j, r) in x_ntt.chunks_exact_mut(N).enumerate() {
            ntt_host::ntt_negacyclic_harvey(r, &tables[j]);
        }
        let mut want = vec![0; x.len()];
        ckks_host::ckks_galois_ntt(&mut want, &x_ntt, galois_elt, LOG_N);
        assert_words(&permuted, &want, &format!("element {galois_elt}"));
    }
}

/// SEAL's modulus switch in coefficient form in one launch (`integer_divide_round_coeff`)
/// equals its host composition (the dropped residue gathered, rounded or BGV's delta, the
/// division), BFV and BGV with every plain modulus, at every K_out the prime sets allow, on
/// fresh canonical ciphertexts and a poisoned dst with guards; src unchanged.
#[test]
fn integer_divide_round_coeff_equals_host() {
    let (e, mut rng) = (env(), rng());
    for moduli in prime_sets() {
        let mt = table(&moduli);
        for k_out in 1..moduli.len() {
            let q_last = moduli[k_out];
            let inv: Vec<ShoupOperand> = moduli[..k_out]
                .iter()
                .map(|q| {
                    ShoupOperand::new(invert_uint_mod(q_last.value() % q.value(), q).unwrap(), q)
                })
                .collect();
            let inv_words: Vec<u64> = inv.iter().flat_map(|s| [s.operand, s.quotient]).collect();
            let dinv = upload(&inv_words);
            let src: Vec<u64> = (0..POLYS * (k_out + 1) * N)
                .map(|w| word(&mut rng, moduli[(w / N) % (k_out + 1)].value()))
                .collect();
            let dsrc = upload(&src);
            let bgv: Vec<Option<(Modulus, u64)>> = std::iter::once(None)
                .chain(plain_moduli().into_iter().map(|t| {
                    let inv_t = invert_uint_mod(q_last.value() % t.value(), &t).unwrap();
                    Some((t, inv_t))
                }))
                .collect();
            for scheme in &bgv {
                let scheme = scheme.as_ref().map(|(t, inv_t)| (t, *inv_t));
                let mut want = vec![0; POLYS * k_out * N];
                host::integer_divide_round_coeff(
                    &mut want, &src, &inv, &moduli, k_out, scheme, POLYS, N,
                );
                let dst = poisoned(want.len());
                e.kernels
                    .integer_divide_round_coeff(
                        &e.graph, &dst, &dsrc, &dinv, &mt, k_out, scheme, POLYS,
                    )
                    .unwrap();
                let what = format!(
                    "K_out = {k_out}, BGV t {:?}",
                    scheme.map(|(t, _)| t.value())
                );
                assert_words(&down(&dst), &want, &what);
                assert_words(&down(&dsrc), &src, &format!("{what}: its input"));
            }
        }
    }
    // Its checks: dst over src, a K_out past the table, an unreduced inv_t.
    let moduli = &prime_sets()[0];
    let mt = table(moduli);
    let (src, inv) = (poisoned(POLYS * 3 * N), poisoned(8));
    let t = plain_moduli()[0];
    let call = |dst: &Region, k_out, bgv| {
        e.kernels
            .integer_divide_round_coeff(&e.graph, dst, &src, &inv, &mt, k_out, bgv, POLYS)
    };
    assert!(call(&src, 2, None).is_err());
    assert!(call(&poisoned(POLYS * 3 * N), 3, None).is_err());
    assert!(call(&poisoned(POLYS * 2 * N), 2, Some((&t, t.value()))).is_err());
    assert!(call(&poisoned(POLYS * 2 * N), 2, None).is_ok());
}

#[test]
fn integer_mod_t_prep_equals_host() {
    let (e, mut rng) = (env(), rng());
    for moduli in prime_sets() {
        let mt = table(&moduli);
        let k = moduli.len();
        let q_last = moduli[k - 1];
        for plain in plain_moduli() {
            let inv_t = invert_uint_mod(q_last.value() % plain.value(), &plain).unwrap();
            // An inverse NTT's lazy output: below 2 q_last, with q_last, 2 q_last - 1 and
            // the canonical edges mixed in.
            let last: Vec<u64> = (0..POLYS * N)
                .map(|_| match rng.gen_range(0..8) {
                    0 => q_last.value(),
                    1 => 2 * q_last.value() - 1,
                    _ => word(&mut rng, 2 * q_last.value()),
                })
                .collect();
            // Every data prime, or all but the last (the key switch's and the mod switch's
            // outputs).
            for k_out in [k - 1, 1] {
                let mut want = vec![0; POLYS * k_out * N];
                host::integer_mod_t_prep(&mut want, &last, k - 1, &moduli, k_out, &plain, inv_t, N);
                let (dlast, dst) = (upload(&last), poisoned(want.len()));
                e.kernels
                    .integer_mod_t_prep(
                        &e.graph,
                        &dst,
                        &dlast,
                        k - 1,
                        &mt,
                        k_out,
                        &plain,
                        inv_t,
                        POLYS,
                    )
                    .unwrap();
                let what = format!("K = {k}, K_out = {k_out}, t = {}", plain.value());
                assert_words(&down(&dst), &want, &what);
                assert_words(&down(&dlast), &last, &format!("{what}: its input"));
            }
        }
    }
}

/// The correction's definition: c - delta_i is divisible by q_last and 0 mod t, checked on
/// the host reference with u128 arithmetic (one prime kept, so delta is the residue of an
/// integer below q_last * t).
#[test]
fn integer_mod_t_prep_makes_c_minus_delta_divisible() {
    let mut rng = rng();
    let moduli = primes(LOG_N, &[60, 40]);
    for plain in plain_moduli() {
        let q_last = moduli[1];
        let inv_t = invert_uint_mod(q_last.value() % plain.value(), &plain).unwrap();
        let last: Vec<u64> = (0..N).map(|_| word(&mut rng, q_last.value())).collect();
        let mut delta = vec![0; N];
        host::integer_mod_t_prep(&mut delta, &last, 1, &moduli, 1, &plain, inv_t, N);
        for (&c, &d) in last.iter().zip(&delta) {
            let (t, ql) = (plain.value() as u128, q_last.value() as u128);
            let kt = ((t - c as u128 % t) % t) * inv_t as u128 % t;
            let exact = c as u128 + ql * kt;
            assert_eq!(exact % ql, c as u128 % ql);
            assert_eq!(exact % t, 0, "c + q_last * kt is 0 mod t");
            assert_eq!(d as u128, exact % moduli[0].value() as u128);
        }
    }
}

#[test]
fn bad_arguments_are_errors() {
    let e = env();
    let moduli = primes(LOG_N, &[60, 50, 40]);
    let mt = table(&moduli);
    let (a, b) = (poisoned(2 * 3 * N), poisoned(2 * 3 * N));
    let invalid = |r: seal_opencl::Result<()>, what: &str| {
        assert_eq!(
            r.expect_err(what).kind(),
            ErrorKind::InvalidArgument,
            "{what}"
        );
    };
    let k = e
        .kernels
        .integer_apply_galois(&e.graph, &a, &b, 4, &mt, 3, 2);
    invalid(k, "an even galois element");
    let k = e
        .kernels
        .integer_apply_galois(&e.graph, &a, &a, 3, &mt, 3, 2);
    invalid(k, "dst = src");
    let k = e
        .kernels
        .integer_apply_galois(&e.graph, &a, &b, 3, &mt, 3, 3);
    invalid(k, "too short buffers");
    let k = e
        .kernels
        .integer_apply_galois(&e.graph, &a, &b, 3, &mt, 4, 1);
    invalid(k, "a moduli table too short");
    let plain = plain_moduli()[0];
    let k = e
        .kernels
        .integer_mod_t_prep(&e.graph, &a, &b, 2, &mt, 2, &plain, plain.value(), 2);
    invalid(k, "inv_t not reduced");
    let k = e
        .kernels
        .integer_mod_t_prep(&e.graph, &a, &a, 2, &mt, 2, &plain, 1, 2);
    invalid(k, "dst = last");
    let k = e
        .kernels
        .integer_mod_t_prep(&e.graph, &a, &b, 3, &mt, 2, &plain, 1, 2);
    invalid(k, "last prime past the table");
    // Nothing ran: every region is still poison.
    assert!(down(&a).iter().chain(&down(&b)).all(|&w| w == POISON));
}

/// Plaintexts of `count` coefficients below t: the degree N, three, and one.
const PLAIN_COUNTS: [usize; 3] = [N, 3, 1];

#[test]
fn plain_lift_equals_host() {
    let mut rng = rng();
    for moduli in prime_sets() {
        let k = moduli.len();
        for t in plain_moduli() {
            for count in PLAIN_COUNTS {
                for upper_half in [true, false] {
                    // 1 leaves the coefficients; BGV's correction factors are any unit mod t.
                    for scalar in [1, rng.gen_range(1..t.value())] {
                        let plain: Vec<u64> =
                            (0..count).map(|_| word(&mut rng, t.value())).collect();
                        let words = upload(&plain);
                        let dst = poisoned(k * N);
                        let p = IntegerPlain {
                            words: &words,
                            count,
                            t: t.value(),
                        };
                        let how = Lift { scalar, upper_half };
                        env()
                            .ckks
                            .plain_lift(&env().graph, &dst, p, how, &table(&moduli), k)
                            .unwrap();
                        let want =
                            host::plain_lift(&plain, N, t.value(), scalar, upper_half, &moduli);
                        assert_words(
                            &down(&dst),
                            &want,
                            &format!("plain_lift t={} count={count} {how:?}", t.value()),
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn plain_scale_add_equals_host() {
    let mut rng = rng();
    for moduli in prime_sets() {
        let k = moduli.len();
        for t in plain_moduli() {
            let scaling = PlainScaling::new(t.value(), &moduli).unwrap();
            let delta = upload(&scaling.delta);
            for count in PLAIN_COUNTS {
                for subtract in [false, true] {
                    let plain: Vec<u64> = (0..count).map(|_| word(&mut rng, t.value())).collect();
                    let words = upload(&plain);
                    let src = canonical(&mut rng, &moduli, 1);
                    let p = IntegerPlain {
                        words: &words,
                        count,
                        t: t.value(),
                    };
                    let (src_region, dst) = (upload(&src), poisoned(k * N));
                    env()
                        .ckks
                        .plain_scale_add(
                            &env().graph,
                            &dst,
                            &src_region,
                            p,
                            &table(&moduli),
                            &delta,
                            scaling.q_mod_t,
                            k,
                            subtract,
                        )
                        .unwrap();
                    let mut want = src.clone();
                    host::plain_scale_add(
                        &mut want,
                        N,
                        &plain,
                        t.value(),
                        &moduli,
                        &scaling.delta,
                        scaling.q_mod_t,
                        subtract,
                    );
                    assert_words(
                        &down(&dst),
                        &want,
                        &format!(
                            "plain_scale_add t={} count={count} subtract={subtract}",
                            t.value()
                        ),
                    );
                }
            }
        }
    }
}

/// delta_j = floor(q / t) mod q_j and q mod t, against the quotient of q's product in u128
/// (two primes of up to 60 bits) reduced directly.
#[test]
fn plain_scaling_is_the_quotient_of_q_by_t() {
    for moduli in prime_sets() {
        for t in plain_moduli() {
            let two = &moduli[..2];
            let q = two[0].value() as u128 * two[1].value() as u128;
            let scaling = PlainScaling::new(t.value(), two).unwrap();
            assert_eq!(scaling.q_mod_t as u128, q % t.value() as u128);
            for (j, m) in two.iter().enumerate() {
                let want = ((q / t.value() as u128) % m.value() as u128) as u64;
                assert_eq!(scaling.delta[j], want, "delta_{j}, t = {}", t.value());
            }
        }
    }
}
