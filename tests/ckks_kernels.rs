//! The elementwise CKKS kernels (`opencl/ckks.cl` through `ckks::kernels::CkksKernels`)
//! equal their host references (`ckks::host`) word for word, on random canonical inputs
//! with the edge values 0 and q - 1 mixed in (0, q - 1, q and 2q - 1 where an input may
//! be lazy, below 2q), for several prime sets (40-60 bits; a mixed
//! 30/60-bit set where q_J > q_I and q_J < q_I both occur; one with a 17-bit prime).
//! Outputs are poisoned before each kernel runs. The galois table formula is checked
//! against the automorphism X -> X^elt through the host NTT. Bad arguments are
//! `InvalidArgument` errors and enqueue nothing.

use std::sync::OnceLock;

use rand::rngs::StdRng;
use rand::Rng;
use seal_opencl::arith::{invert_uint_mod, negate_uint_mod, Modulus, ShoupOperand};
use seal_opencl::ckks::host;
use seal_opencl::ckks::kernels::{pack_signed, CkksKernels, ModuliTable, SUM_TERMS_MAX};
use seal_opencl::ckks::SumTerm;
use seal_opencl::cl::{self, Region};
use seal_opencl::config::Config;
use seal_opencl::device::{DeviceOptions, Devices, Graph, Partition};
use seal_opencl::ntt::{create_ntt_tables, host as ntt_host};
use seal_opencl::{Error, ErrorKind};
use seal_opencl_testkit::compose;
use seal_opencl_testkit::guarded::{self, POISON};
use seal_opencl_testkit::harness::{primes, rng};

const LOG_N: u32 = 12;
const N: usize = 1 << LOG_N;
/// Polynomials per buffer where a test has no reason for another count: more than one, so
/// that a kernel indexing polynomials wrongly shows.
const POLYS: usize = 3;

/// One device, one graph and the kernels for N = 2^log_n, shared by the tests of a run
/// (so PoCL compiles each program once).
struct Env {
    _devices: Devices,
    graph: Graph,
    kernels: CkksKernels,
    /// The kernels built with `SEAL_BARRETT` (products of two residues reduced by SEAL's
    /// Barrett, not Dhem-Quisquater's), for the kernels that build changes.
    seal_kernels: CkksKernels,
}

impl Env {
    /// Both builds of the kernels, named.
    fn both_reductions(&self) -> [(&'static str, &CkksKernels); 2] {
        [
            ("Dhem-Quisquater's Barrett", &self.kernels),
            ("SEAL_BARRETT", &self.seal_kernels),
        ]
    }
}

fn env_for(log_n: u32) -> &'static Env {
    static ENVS: [OnceLock<Env>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = match log_n {
        12 => &ENVS[0],
        13 => &ENVS[1],
        _ => panic!("tests use N = 2^12 or 2^13"),
    };
    slot.get_or_init(|| {
        let devices = Devices::new(DeviceOptions {
            selector: Config::from_env().unwrap().device,
            partition: Partition::WholeDevices,
            ..Default::default()
        })
        .expect("devices");
        let graph = devices.graph();
        let kernels = CkksKernels::new(graph.context(), log_n).expect("CKKS kernels build");
        let seal_kernels =
            CkksKernels::with_seal_barrett(graph.context(), log_n).expect("CKKS kernels build");
        Env {
            _devices: devices,
            graph,
            kernels,
            seal_kernels,
        }
    })
}

fn env() -> &'static Env {
    env_for(LOG_N)
}

/// The `count` largest 61-bit primes (SEAL's largest modulus size), largest first. Not
/// NTT-friendly (get_primes stops at SEAL's 60 bits): the kernels they test do not care.
fn primes_61_bit(count: usize) -> Vec<Modulus> {
    (0..1u64 << 20)
        .map(|i| (1u64 << 61) - 1 - 2 * i)
        .filter(|&v| seal_opencl::arith::is_prime(v))
        .take(count)
        .map(|v| Modulus::new(v).unwrap())
        .collect()
}

/// The prime sets every kernel runs on.
fn prime_sets() -> Vec<Vec<Modulus>> {
    vec![
        primes(LOG_N, &[60, 50, 40]),
        primes(LOG_N, &[30, 60, 30, 60, 60]),
        primes(LOG_N, &[17, 60, 45, 36]),
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

/// `polys` polynomials of `moduli.len()` residues: each word of residue j is `f(q_j)`.
fn poly_words(moduli: &[Modulus], polys: usize, mut f: impl FnMut(u64) -> u64) -> Vec<u64> {
    (0..polys * moduli.len() * N)
        .map(|w| f(moduli[(w / N) % moduli.len()].value()))
        .collect()
}

/// `polys` polynomials of canonical words (below their prime) over `moduli`.
fn canonical(rng: &mut impl Rng, moduli: &[Modulus], polys: usize) -> Vec<u64> {
    poly_words(moduli, polys, |q| word(rng, q))
}

/// Runs `check` with the shared environment and one seeded generator on every prime set.
fn each_prime_set(mut check: impl FnMut(&Env, &mut StdRng, &[Modulus])) {
    let (e, mut rng) = (env(), rng());
    for moduli in prime_sets() {
        check(e, &mut rng, &moduli);
    }
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

/// Asserts device == host word for word, naming the first difference.
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

/// The device launch of an elementwise operation into `dst` from the first operand `src`
/// (the other operands fixed), as a table entry.
type Launch<'a> = &'a dyn Fn(&Region, &Region) -> seal_opencl::Result<()>;
/// A host reference: writes into `want` the words dst must hold.
type HostRef<'a> = &'a dyn Fn(&mut [u64]);

#[test]
fn ckks_add_sub_negate_equal_host() {
    each_prime_set(|e, rng, moduli| {
        let k = moduli.len();
        let a = canonical(rng, moduli, POLYS);
        let b = canonical(rng, moduli, POLYS);
        let (da, db, mt) = (upload(&a), upload(&b), table(moduli));
        let words = a.len();
        let (kx, g) = (&e.kernels, &e.graph);
        // (name, device launch, host reference into the words dst must hold).
        let ops: [(&str, Launch, HostRef); 3] = [
            (
                "ckks_add",
                &|dst, src| kx.ckks_add(g, dst, src, &db, &mt, k, POLYS),
                &|want| host::ckks_add(want, &a, &b, moduli, N),
            ),
            (
                "ckks_sub",
                &|dst, src| kx.ckks_sub(g, dst, src, &db, &mt, k, POLYS),
                &|want| host::ckks_sub(want, &a, &b, moduli, N),
            ),
            (
                "ckks_negate",
                &|dst, src| kx.ckks_negate(g, dst, src, &mt, k, POLYS),
                &|want| host::ckks_negate(want, &a, moduli, N),
            ),
        ];
        for (what, device, host_op) in ops {
            let mut want = vec![0; words];
            host_op(&mut want);
            // Out of place into a poisoned buffer.
            let dst = poisoned(words);
            device(&dst, &da).unwrap();
            assert_words(&down(&dst), &want, what);
            // In place: dst is a.
            let inplace = upload(&a);
            device(&inplace, &inplace).unwrap();
            assert_words(&down(&inplace), &want, &format!("{what} in place"));
        }

        // Fewer polynomials than the buffers hold: the rest stays untouched.
        let dst = poisoned(words);
        kx.ckks_sub(g, &dst, &da, &db, &mt, k, 1).unwrap();
        let got = down(&dst);
        let mut want = vec![0; k * N];
        host::ckks_sub(&mut want, &a[..k * N], &b[..k * N], moduli, N);
        assert_words(&got[..k * N], &want, "ckks_sub of one polynomial");
        assert!(got[k * N..].iter().all(|&x| x == POISON));
    });
}

#[test]
fn ckks_add_at_n_8192() {
    let e = env_for(13);
    let mut rng = rng();
    let moduli = primes(13, &[60, 40, 50]);
    let n = 1 << 13;
    let a: Vec<u64> = (0..2 * 3 * n)
        .map(|w| word(&mut rng, moduli[(w / n) % 3].value()))
        .collect();
    let b: Vec<u64> = (0..2 * 3 * n)
        .map(|w| word(&mut rng, moduli[(w / n) % 3].value()))
        .collect();
    let g = &e.graph;
    let up = |d: &[u64]| g.context().upload(g.queue(), d).unwrap();
    let (da, db) = (up(&a), up(&b));
    let mt = ModuliTable::new(g.context(), g.queue(), &moduli).unwrap();
    let dst = g.context().buffer(g.queue(), a.len()).unwrap();
    cl::poison(g.queue(), &dst, POISON).unwrap();
    e.kernels.ckks_add(g, &dst, &da, &db, &mt, 3, 2).unwrap();
    let mut want = vec![0; a.len()];
    host::ckks_add(&mut want, &a, &b, &moduli, n);
    assert_eq!(cl::download(g.queue(), &dst).unwrap(), want);

    // And the galois permutation at this size.
    let gdst = g.context().buffer(g.queue(), a.len()).unwrap();
    cl::poison(g.queue(), &gdst, POISON).unwrap();
    e.kernels.ckks_galois_ntt(g, &gdst, &da, 3, 6).unwrap();
    host::ckks_galois_ntt(&mut want, &a, 3, 13);
    assert_eq!(cl::download(g.queue(), &gdst).unwrap(), want);
}

#[test]
fn ckks_multiply_plain_equals_host() {
    each_prime_set(|e, rng, moduli| {
        let k = moduli.len();
        for ((build, kernels), polys) in e
            .both_reductions()
            .into_iter()
            .flat_map(|b| [(b, 1), (b, 3)])
        {
            let ct = canonical(rng, moduli, polys);
            let plain = canonical(rng, moduli, 1);
            let (dct, dplain, mt) = (upload(&ct), upload(&plain), table(moduli));
            let mut want = ct.clone();
            host::ckks_multiply_plain(&mut want, &plain, moduli, N);
            // Out of place into a poisoned buffer, then in place.
            let dst = poisoned(ct.len());
            kernels
                .ckks_multiply_plain(&e.graph, &dst, &dct, &dplain, &mt, k, polys)
                .unwrap();
            let what = |how: &str| format!("ckks_multiply_plain {how} ({build})");
            assert_words(&down(&dst), &want, &what("into dst"));
            assert_words(&down(&dct), &ct, &what("input"));
            kernels
                .ckks_multiply_plain(&e.graph, &dct, &dct, &dplain, &mt, k, polys)
                .unwrap();
            assert_words(&down(&dct), &want, &what("in place"));
        }
    });
}

/// ckks_sum of 1, 3 and `SUM_TERMS_MAX` terms (the first a plaintext product, the second a
/// ciphertext subtracted, the third and the last of more than three shifted by a drawn
/// X^s, 0 < s < N, the others drawn: a product, shifted or neither, added or subtracted),
/// from zero into a poisoned buffer and onto an accumulator in place, under both
/// reductions, equals the host's one add_inplace (sub_inplace) per term (SEAL's
/// negacyclic shift of a shifted one first); the terms are left as they were. Then a term
/// that is dst itself (acc + acc - t).
#[test]
fn ckks_sum_equals_host() {
    each_prime_set(|e, rng, moduli| {
        let k = moduli.len();
        let mt = table(moduli);
        for ((build, kernels), count) in e
            .both_reductions()
            .into_iter()
            .flat_map(|b| [(b, 1), (b, 3), (b, SUM_TERMS_MAX)])
        {
            let acc = canonical(rng, moduli, POLYS);
            let host_terms: Vec<SumTerm<Vec<u64>>> = (0..count)
                .map(|i| {
                    let shifted = i == 2 || (i > 2 && i == count - 1);
                    let product = i == 0 || (i > 2 && !shifted && rng.gen());
                    let plain = product.then(|| canonical(rng, moduli, 1));
                    let shift = if shifted || (i > 2 && !product && rng.gen()) {
                        rng.gen_range(1..N as u32)
                    } else {
                        0
                    };
                    SumTerm {
                        words: canonical(rng, moduli, POLYS),
                        plain,
                        subtract: i == 1 || (i > 1 && rng.gen()),
                        shift,
                    }
                })
                .collect();
            let device: Vec<(Region, Option<Region>)> = host_terms
                .iter()
                .map(|t| (upload(&t.words), t.plain.as_deref().map(upload)))
                .collect();
            let as_host = compose::borrowed_terms(&host_terms);
            let as_device: Vec<SumTerm<&Region>> = device
                .iter()
                .zip(&host_terms)
                .map(|((w, p), t)| SumTerm {
                    words: w,
                    plain: p.as_ref(),
                    subtract: t.subtract,
                    shift: t.shift,
                })
                .collect();
            for accumulate in [false, true] {
                let what = |how: &str| {
                    format!("ckks_sum of {count} terms {how} ({build}, accumulate {accumulate})")
                };
                let mut want = if accumulate {
                    acc.clone()
                } else {
                    vec![POISON; acc.len()]
                };
                host::ckks_sum(&mut want, accumulate, &as_host, moduli, N);
                let dst = if accumulate {
                    upload(&acc)
                } else {
                    poisoned(acc.len())
                };
                kernels
                    .ckks_sum(&e.graph, &dst, accumulate, &as_device, &mt, k, POLYS)
                    .unwrap();
                assert_words(&down(&dst), &want, &what("into dst"));
            }
            for ((w, p), t) in device.iter().zip(&host_terms) {
                assert_words(
                    &down(w),
                    &t.words,
                    &format!("ckks_sum ({build}): a term's words"),
                );
                if let (Some(p), Some(hp)) = (p, &t.plain) {
                    assert_words(&down(p), hp, &format!("ckks_sum ({build}): a plaintext"));
                }
            }
            // dst a term of its own sum: acc + acc - t_0 (t_0 a product).
            let dacc = upload(&acc);
            let (t0, p0) = &device[0];
            let terms = [
                SumTerm::words(&dacc, false),
                SumTerm {
                    plain: p0.as_ref(),
                    ..SumTerm::words(t0, true)
                },
            ];
            kernels
                .ckks_sum(&e.graph, &dacc, true, &terms, &mt, k, POLYS)
                .unwrap();
            let mut want = acc.clone();
            let host_terms = [
                SumTerm::words(&acc[..], false),
                SumTerm {
                    plain: host_terms[0].plain.as_deref(),
                    ..SumTerm::words(&host_terms[0].words[..], true)
                },
            ];
            host::ckks_sum(&mut want, true, &host_terms, moduli, N);
            assert_words(
                &down(&dacc),
                &want,
                &format!("ckks_sum ({build}) with dst a term"),
            );
        }
    });
}

/// ckks_tensor of `a` (s1 polynomials) and `b` (s2; None: `a`'s buffer again, squaring)
/// into a poisoned buffer equals the host's, under both reductions.
fn check_tensor(moduli: &[Modulus], a: &[u64], s1: usize, b: Option<&[u64]>, s2: usize) {
    let e = env();
    let k = moduli.len();
    let (da, db) = (upload(a), b.map(upload));
    let words = (s1 + s2 - 1) * k * N;
    let db = db.as_ref().unwrap_or(&da);
    let mut want = vec![0; words];
    host::ckks_tensor(&mut want, a, s1, b.unwrap_or(a), s2, moduli, N);
    for (build, kernels) in e.both_reductions() {
        let dst = poisoned(words);
        kernels
            .ckks_tensor(&e.graph, &dst, &da, s1, db, s2, &table(moduli), k)
            .unwrap();
        let what = format!("ckks_tensor {s1}x{s2}, squaring {} ({build})", b.is_none());
        assert_words(&down(&dst), &want, &what);
    }
}

#[test]
fn ckks_tensor_equals_host() {
    let mut rng = rng();
    // 61-bit primes too: SEAL's largest, where the 128-bit sums come closest to overflow.
    for moduli in prime_sets().into_iter().chain([primes_61_bit(2)]) {
        for (s1, s2) in [(2, 2), (3, 2), (2, 3), (3, 4), (1, 2)] {
            let a = canonical(&mut rng, &moduli, s1);
            let b = canonical(&mut rng, &moduli, s2);
            check_tensor(&moduli, &a, s1, Some(&b), s2);
        }
        // Squaring: a and b are the same buffer.
        for s in [2, 3] {
            check_tensor(&moduli, &canonical(&mut rng, &moduli, s), s, None, s);
        }
    }
}

#[test]
fn ckks_tensor_all_max_words() {
    // Every input q - 1: the 128-bit sums are at their largest, in the kernel's 2 x 2 path
    // and in its general one.
    for moduli in [primes(LOG_N, &[60, 60]), primes_61_bit(2)] {
        for s in [2, 3] {
            let a = poly_words(&moduli, s, |q| q - 1);
            check_tensor(&moduli, &a, s, None, s);
        }
    }
}

#[test]
fn ckks_lift_signed_equals_host() {
    each_prime_set(|e, rng, moduli| {
        let k = moduli.len();
        // Every signed byte somewhere (the extremes first), then random ones: more than the
        // samples' -21 .. 21, which the kernel does not assume.
        let mut values: Vec<i8> = (i8::MIN..=i8::MAX).collect();
        values.extend((values.len()..POLYS * N).map(|_| rng.gen::<i8>()));
        let src = upload(&pack_signed(&values));
        let dst = poisoned(POLYS * k * N);
        e.kernels
            .ckks_lift_signed(&e.graph, &dst, &src, &table(moduli), k, POLYS)
            .unwrap();
        let mut want = vec![0; POLYS * k * N];
        host::ckks_lift_signed(&mut want, &values, moduli, N);
        assert_words(&down(&dst), &want, "ckks_lift_signed");
        // The reference itself: v mod q in [0, q).
        let q = moduli[k - 1].value();
        assert_eq!(want[(k - 1) * N], q - 128, "-128 at the last prime");
        assert_eq!(want[(k - 1) * N + 255], 127, "127 at the last prime");
    });
}

#[test]
fn ckks_copy_residues_and_gather_equal_host() {
    each_prime_set(|e, rng, moduli| {
        let k = moduli.len();
        let src = canonical(rng, moduli, POLYS);
        let dsrc = upload(&src);

        // mod_switch_drop_to_next.
        let dst = poisoned(POLYS * (k - 1) * N);
        e.kernels
            .ckks_drop_last(&e.graph, &dst, &dsrc, k, POLYS)
            .unwrap();
        let mut want = vec![POISON; POLYS * (k - 1) * N];
        host::ckks_copy_residues(&mut want, k - 1, &src, k, k - 1, POLYS, N);
        assert_words(&down(&dst), &want, "ckks_drop_last");

        // General strides: 2 residues per polynomial into slots of k + 1; gaps untouched.
        let dst = poisoned(POLYS * (k + 1) * N);
        e.kernels
            .ckks_copy_residues(&e.graph, &dst, k + 1, &dsrc, k, 2, POLYS)
            .unwrap();
        let mut want = vec![POISON; POLYS * (k + 1) * N];
        host::ckks_copy_residues(&mut want, k + 1, &src, k, 2, POLYS, N);
        assert_words(&down(&dst), &want, "ckks_copy_residues");

        for index in [0, k - 1] {
            let dst = poisoned(POLYS * N);
            e.kernels
                .ckks_gather_residue(&e.graph, &dst, &dsrc, k, index, POLYS)
                .unwrap();
            let mut want = vec![0; POLYS * N];
            host::ckks_gather_residue(&mut want, &src, k, index, POLYS, N);
            assert_words(&down(&dst), &want, "ckks_gather_residue");
        }
    });
}

#[test]
fn ckks_galois_ntt_equals_host() {
    let e = env();
    let mut rng = rng();
    let two_n = 2 * N as u32;
    let mut elts = vec![3, two_n - 1, 1];
    // Some powers of 5 (SEAL's rotation generator) and random odd elements.
    let mut g = 1u32;
    for _ in 0..3 {
        g = (g * 5) % two_n;
        g = (g * 5) % two_n;
        elts.push(g);
    }
    elts.push(rng.gen_range(0..N as u32) * 2 + 1);
    for moduli in prime_sets() {
        let k = moduli.len();
        let src = canonical(&mut rng, &moduli, 2);
        let dsrc = upload(&src);
        for &elt in &elts {
            let dst = poisoned(src.len());
            e.kernels
                .ckks_galois_ntt(&e.graph, &dst, &dsrc, elt, 2 * k)
                .unwrap();
            let mut want = vec![0; src.len()];
            host::ckks_galois_ntt(&mut want, &src, elt, LOG_N);
            assert_words(&down(&dst), &want, &format!("ckks_galois_ntt {elt}"));
        }
    }
}

/// The NTT-domain table is SEAL's: permuting NTT(c) by it is NTT of c(X^elt), where
/// X^i -> X^(i * elt mod 2N), negated when the exponent wraps past N.
#[test]
fn galois_table_ntt_is_the_automorphism() {
    let mut rng = rng();
    let moduli = primes(LOG_N, &[60, 40]);
    let tables = create_ntt_tables(LOG_N, &moduli).unwrap();
    let two_n = 2 * N as u32;
    for elt in [two_n - 1, 3, 5, 25] {
        for (q, t) in moduli.iter().zip(&tables) {
            let c: Vec<u64> = (0..N).map(|_| word(&mut rng, q.value())).collect();
            let mut want = vec![0u64; N];
            for (i, &ci) in c.iter().enumerate() {
                let idx = (i as u64 * elt as u64) % (2 * N as u64);
                if idx < N as u64 {
                    want[idx as usize] = ci;
                } else {
                    want[idx as usize - N] = negate_uint_mod(ci, q);
                }
            }
            let mut ntt = c.clone();
            ntt_host::ntt_negacyclic_harvey(&mut ntt, t);
            let mut permuted = vec![0u64; N];
            host::ckks_galois_ntt(&mut permuted, &ntt, elt, LOG_N);
            ntt_host::inverse_ntt_negacyclic_harvey(&mut permuted, t);
            assert_eq!(permuted, want, "galois element {elt} mod {}", q.value());
        }
    }
}

/// `words` words below 2 q (an inverse NTT's lazy output), with the edges 0, q - 1, q and
/// 2 q - 1 each at a fixed place and mixed in at random.
fn unrounded(rng: &mut impl Rng, q: u64, words: usize) -> Vec<u64> {
    let edges = [0, q - 1, q, 2 * q - 1];
    let mut v: Vec<u64> = (0..words)
        .map(|_| match rng.gen_range(0..16) {
            e @ 0..=3 => edges[e],
            _ => rng.gen_range(0..2 * q),
        })
        .collect();
    v[..edges.len()].copy_from_slice(&edges);
    v
}

#[test]
fn ckks_moddown_prep_equals_host() {
    let e = env();
    let mut rng = rng();
    // The 61-bit set has the largest sums x + (q_last >> 1) < 2.5 q_last < 2^63.
    for moduli in prime_sets().into_iter().chain([primes_61_bit(3)]) {
        let k = moduli.len();
        let mt = table(&moduli);
        // Rescale (last prime dropped, K - 1 outputs) and key switching (the special
        // prime last, outputs for every data prime), plus a middle prime as "last" so
        // that primes above and below it both occur.
        for (last_q_index, k_out) in [(k - 1, k - 1), (1, k)] {
            let polys = 2;
            let q_last = moduli[last_q_index].value();
            let last = unrounded(&mut rng, q_last, polys * N);
            let dst = poisoned(polys * k_out * N);
            e.kernels
                .ckks_moddown_prep(
                    &e.graph,
                    &dst,
                    &upload(&last),
                    last_q_index,
                    &mt,
                    k_out,
                    polys,
                )
                .unwrap();
            let mut want = vec![0; polys * k_out * N];
            host::ckks_moddown_prep(&mut want, &last, last_q_index, &moduli, k_out, N);
            assert_words(&down(&dst), &want, "ckks_moddown_prep");
        }
    }
}

#[test]
fn ckks_divide_round_finish_equals_host() {
    each_prime_set(|e, rng, moduli| {
        let k = moduli.len();
        let k_out = k - 1;
        let q_last = moduli[k - 1];
        let mt = table(moduli);
        let inv: Vec<ShoupOperand> = moduli[..k_out]
            .iter()
            .map(|q| {
                let x = seal_opencl::arith::barrett_reduce_64(q_last.value(), q);
                ShoupOperand::new(invert_uint_mod(x, q).unwrap(), q)
            })
            .collect();
        let dinv = upload(&host::shoup_words(&inv));
        let polys = 2;
        let t = poly_words(&moduli[..k_out], polys, |q| word(rng, 4 * q));
        let dt = upload(&t);
        // src with K residues per polynomial (the ciphertext before rescaling).
        let src = canonical(rng, moduli, polys);
        let dsrc = upload(&src);

        // dst (its words before, its stride), from src or in place, added to or not.
        let check = |before: Vec<u64>, dst_stride, in_place: bool, accumulate, what: &str| {
            let dst = upload(&before);
            let dsrc = if in_place { &dst } else { &dsrc };
            e.kernels
                .ckks_divide_round_finish(
                    &e.graph, &dst, dst_stride, dsrc, k, &dt, &dinv, &mt, k_out, polys, accumulate,
                )
                .unwrap();
            let mut want = before;
            host::ckks_divide_round_finish(
                &mut want, dst_stride, &src, k, &t, &inv, moduli, k_out, polys, accumulate, N,
            );
            assert_words(&down(&dst), &want, what);
        };
        // Rescale: into a fresh K - 1 residue buffer.
        let fresh = vec![POISON; polys * k_out * N];
        check(fresh, k_out, false, false, "ckks_divide_round_finish");
        // In place over the source, same strides (the gaps stay as they were).
        check(
            src.clone(),
            k,
            true,
            false,
            "ckks_divide_round_finish in place",
        );
        // Key switching: accumulate into another ciphertext.
        let acc = canonical(rng, &moduli[..k_out], polys);
        check(
            acc,
            k_out,
            false,
            true,
            "ckks_divide_round_finish accumulate",
        );
    });
}

#[test]
fn ckks_ks_decompose_equals_host() {
    each_prime_set(|e, rng, moduli_ext| {
        let k = moduli_ext.len() - 1;
        let t_target = canonical(rng, &moduli_ext[..k], 1);
        let dst = poisoned(k * (k + 1) * N);
        e.kernels
            .ckks_ks_decompose(&e.graph, &dst, &upload(&t_target), &table(moduli_ext), k)
            .unwrap();
        let mut want = vec![0; k * (k + 1) * N];
        host::ckks_ks_decompose(&mut want, &t_target, moduli_ext, N);
        assert_words(&down(&dst), &want, "ckks_ks_decompose");
    });
}

/// Runs `ckks_ks_inner_product` on the device and its host reference on the same inputs
/// (K = moduli_ext.len() - 1) and compares both outputs word for word. The device's
/// outputs are poisoned and one residue longer than the kernel writes: that residue must
/// stay poisoned.
fn check_ks_inner_product(
    dec: &[u64],
    key: &[u64],
    key_stride_primes: usize,
    key_special_index: usize,
    moduli_ext: &[Modulus],
    what: &str,
) {
    let e = env();
    let k = moduli_ext.len() - 1;
    let (prod_words, last_words) = (2 * k * N, 2 * N);
    let prod = poisoned(prod_words + N);
    let last = poisoned(last_words + N);
    e.kernels
        .ckks_ks_inner_product(
            &e.graph,
            &prod,
            &last,
            &upload(dec),
            &upload(key),
            key_stride_primes,
            key_special_index,
            &table(moduli_ext),
            k,
        )
        .unwrap();
    let mut want_prod = vec![0; prod_words];
    let mut want_last = vec![0; last_words];
    host::ckks_ks_inner_product(
        &mut want_prod,
        &mut want_last,
        dec,
        key,
        key_stride_primes,
        key_special_index,
        moduli_ext,
        N,
    );
    for (buf, want, name) in [(&prod, &want_prod, "prod"), (&last, &want_last, "last")] {
        let got = down(buf);
        assert_words(&got[..want.len()], want, &format!("{what}: {name}"));
        assert!(
            got[want.len()..].iter().all(|&x| x == POISON),
            "{what}: written past the end of {name}"
        );
    }
}

#[test]
fn ckks_ks_inner_product_equals_host() {
    let mut rng = rng();
    for set in prime_sets() {
        // The key covers all primes of `set` (L_key = set.len(), special last); the data
        // level has K = L_key - 1 primes (top level) or K = L_key - 2 (one level down).
        let l_key = set.len();
        for k in [l_key - 1, l_key - 2] {
            let mut moduli_ext: Vec<Modulus> = set[..k].to_vec();
            moduli_ext.push(set[l_key - 1]);
            let dec = poly_words(&moduli_ext, k, |q| word(&mut rng, 4 * q));
            let key = canonical(&mut rng, &set, 2 * k);
            check_ks_inner_product(
                &dec,
                &key,
                l_key,
                l_key - 1,
                &moduli_ext,
                &format!("ckks_ks_inner_product K = {k}"),
            );
        }
    }
}

#[test]
fn ckks_ks_inner_product_largest_words() {
    // dec = 4q - 1 and key = q - 1 everywhere with 60-bit primes: the 128-bit sum at its
    // largest.
    let set = primes(LOG_N, &[60, 60, 60, 60]);
    let k = 3;
    let dec = poly_words(&set, k, |q| 4 * q - 1);
    let key = poly_words(&set, 2 * k, |q| q - 1);
    check_ks_inner_product(
        &dec,
        &key,
        k + 1,
        k,
        &set,
        "ckks_ks_inner_product of the largest words",
    );
}

/// `result` is an InvalidArgument error, and `untouched` still holds only poison after
/// the queue drained (nothing was enqueued).
#[track_caller]
fn assert_rejected(result: seal_opencl::Result<()>, untouched: &Region) {
    match result {
        Err(err @ Error::InvalidArgument(_)) => {
            assert_eq!(err.kind(), ErrorKind::InvalidArgument);
            eprintln!("rejected: {err}");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    env().graph.finish().unwrap();
    assert!(down(untouched).iter().all(|&x| x == POISON), "a kernel ran");
}

#[test]
fn ckks_bad_arguments_are_rejected() {
    let e = env();
    let (g, kx) = (&e.graph, &e.kernels);
    let moduli = primes(LOG_N, &[60, 50, 40]);
    let mt = table(&moduli);
    let mut rng = rng();
    let a = upload(&canonical(&mut rng, &moduli, 2));
    let short = upload(&canonical(&mut rng, &moduli, 1));
    let words = 2 * 3 * N;

    // Elementwise family.
    let dst = poisoned(words);
    assert_rejected(kx.ckks_add(g, &dst, &a, &short, &mt, 3, 2), &dst);
    assert_rejected(kx.ckks_sub(g, &dst, &a, &a, &mt, 0, 2), &dst);
    assert_rejected(kx.ckks_negate(g, &dst, &a, &mt, 3, 0), &dst);
    assert_rejected(
        kx.ckks_add(g, &dst, &a, &a, &table(&moduli[..2]), 3, 2),
        &dst,
    );
    let ct = poisoned(words);
    assert_rejected(
        kx.ckks_multiply_plain(g, &ct, &ct, &upload(&[1; 3]), &mt, 3, 2),
        &ct,
    );

    // Sums: no term, more than SUM_TERMS_MAX, a term too short, a plaintext too short or
    // overlapping dst, dst too short; a shift of N, a shifted product, a shifted term that
    // is dst.
    fn term<'a>(words: &'a Region, plain: Option<&'a Region>) -> SumTerm<&'a Region> {
        SumTerm {
            plain,
            ..SumTerm::words(words, false)
        }
    }
    fn shifted(term: SumTerm<&Region>, shift: u32) -> SumTerm<&Region> {
        SumTerm { shift, ..term }
    }
    let dst = poisoned(words);
    let short_dst = poisoned(words - 1);
    let plain = upload(&canonical(&mut rng, &moduli, 1));
    let short_plain = plain.part(0, 3 * N - 1).unwrap();
    let plain_in_dst = dst.part(0, 3 * N).unwrap();
    let nine = vec![term(&a, None); SUM_TERMS_MAX + 1];
    for (terms, out) in [
        (&[][..], &dst),
        (&nine[..], &dst),
        (&[term(&short, None)][..], &dst),
        (&[term(&a, Some(&short_plain))][..], &dst),
        (&[term(&a, Some(&plain_in_dst))][..], &dst),
        (&[term(&a, Some(&plain))][..], &short_dst),
        (&[shifted(term(&a, None), N as u32)][..], &dst),
        (&[shifted(term(&a, Some(&plain)), 1)][..], &dst),
        (&[shifted(term(&dst, None), 1)][..], &dst),
    ] {
        assert_rejected(kx.ckks_sum(g, out, true, terms, &mt, 3, 2), out);
    }

    // Tensor.
    let dst = poisoned(3 * 3 * N - 1);
    assert_rejected(kx.ckks_tensor(g, &dst, &a, 2, &a, 2, &mt, 3), &dst);
    let a_poisoned = poisoned(3 * 3 * N);
    assert_rejected(
        kx.ckks_tensor(g, &a_poisoned, &a_poisoned, 1, &a, 2, &mt, 3),
        &a_poisoned,
    );
    let dst = poisoned(3 * 3 * N);
    assert_rejected(kx.ckks_tensor(g, &dst, &a, 0, &a, 2, &mt, 3), &dst);
    assert_rejected(kx.ckks_tensor(g, &dst, &a, 65, &a, 2, &mt, 3), &dst);

    // Lifts: src short of the values, dst short of the residues, no prime, dst is src.
    let values = upload(&pack_signed(&vec![1; 2 * N]));
    let dst = poisoned(words);
    let short_values = values.part(0, 2 * N / 8 - 1).unwrap();
    assert_rejected(kx.ckks_lift_signed(g, &dst, &short_values, &mt, 3, 2), &dst);
    let short_dst = poisoned(words - 1);
    assert_rejected(
        kx.ckks_lift_signed(g, &short_dst, &values, &mt, 3, 2),
        &short_dst,
    );
    assert_rejected(kx.ckks_lift_signed(g, &dst, &values, &mt, 0, 2), &dst);
    assert_rejected(kx.ckks_lift_signed(g, &dst, &dst, &mt, 3, 2), &dst);

    // Residue copies.
    let dst = poisoned(words);
    assert_rejected(kx.ckks_copy_residues(g, &dst, 3, &short, 3, 3, 2), &dst);
    assert_rejected(kx.ckks_copy_residues(g, &dst, 2, &a, 3, 3, 2), &dst);
    assert_rejected(kx.ckks_drop_last(g, &dst, &a, 1, 2), &dst);
    assert_rejected(kx.ckks_gather_residue(g, &dst, &a, 3, 3, 2), &dst);
    assert_rejected(kx.ckks_gather_residue(g, &dst, &short, 3, 2, 2), &dst);

    // Galois.
    let dst = poisoned(words);
    assert_rejected(kx.ckks_galois_ntt(g, &dst, &a, 4, 6), &dst);
    assert_rejected(kx.ckks_galois_ntt(g, &dst, &a, 2 * N as u32 + 1, 6), &dst);
    assert_rejected(kx.ckks_galois_ntt(g, &dst, &short, 3, 6), &dst);
    assert_rejected(kx.ckks_galois_ntt(g, &dst, &dst, 3, 6), &dst);

    // Rescale steps.
    let dst = poisoned(words);
    assert_rejected(
        kx.ckks_moddown_prep(g, &dst, &upload(&[0; N]), 2, &mt, 2, 2),
        &dst,
    );
    assert_rejected(kx.ckks_moddown_prep(g, &dst, &a, 3, &mt, 2, 2), &dst);
    let inv = upload(&[1, 0, 1]);
    let t = upload(&vec![0; words]);
    assert_rejected(
        kx.ckks_divide_round_finish(g, &dst, 2, &a, 3, &t, &inv, &mt, 2, 2, false),
        &dst,
    );
    let inv = upload(&[1, 0, 1, 0]);
    assert_rejected(
        kx.ckks_divide_round_finish(g, &dst, 2, &dst, 3, &t, &inv, &mt, 2, 2, false),
        &dst,
    );
    assert_rejected(
        kx.ckks_divide_round_finish(g, &dst, 1, &a, 3, &t, &inv, &mt, 2, 2, false),
        &dst,
    );

    // Key switching.
    let dst = poisoned(2 * 3 * N);
    assert_rejected(kx.ckks_ks_decompose(g, &dst, &a, &mt, 3), &dst);
    assert_rejected(
        kx.ckks_ks_decompose(g, &dst, &upload(&vec![0; N]), &mt, 2),
        &dst,
    );
    assert_rejected(kx.ckks_ks_decompose(g, &dst, &dst, &mt, 2), &dst);
    // K = 2 with the special prime third: prod 2 K = 4 residues, last 2.
    let prod = poisoned(2 * 2 * N);
    let last = poisoned(2 * N);
    let dec = upload(&vec![0; 2 * 3 * N]);
    let key = upload(&vec![0; 2 * 2 * 3 * N]);
    let inner = |p, l, d, k, special| kx.ckks_ks_inner_product(g, p, l, d, k, 3, special, &mt, 2);
    for (p, l, d, k, special) in [
        (&prod, &last, &dec, &short, 2),          // key too short
        (&prod, &last, &dec, &key, 3),            // special index outside the key
        (&prod, &last, &short, &key, 2),          // dec too short
        (&prod, &prod, &dec, &key, 2),            // last is prod
        (&prod, &last, &prod, &key, 2),           // dec is prod
        (&prod, &last, &last, &key, 2),           // dec is last
        (&prod, &last, &dec, &last, 2),           // key is last
        (&last, &prod, &dec, &key, 2),            // prod (2 residues) too short
        (&prod, &upload(&[0; N]), &dec, &key, 2), // last too short
    ] {
        assert_rejected(inner(p, l, d, k, special), &prod);
        assert_rejected(inner(p, l, d, k, special), &last);
    }
}

#[test]
fn ckks_kernels_reject_bad_sizes_and_foreign_graphs() {
    let ctx = env().graph.context();
    assert!(matches!(
        CkksKernels::new(ctx, 18),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        CkksKernels::new(ctx, 0),
        Err(Error::InvalidArgument(_))
    ));
    let g = &env().graph;
    assert!(ModuliTable::new(g.context(), g.queue(), &[]).is_err());

    // Kernels built on another context (the N = 2^13 environment's) on this graph, with
    // buffers long enough for them: only the context differs.
    let other = CkksKernels::new(env_for(13).graph.context(), 13).unwrap();
    let mt = table(&primes(LOG_N, &[40]));
    let v = poisoned(2 * N);
    assert_rejected(
        other.ckks_negate(g, &v, &upload(&vec![0; 2 * N]), &mt, 1, 1),
        &v,
    );
}

#[test]
fn ckks_ks_inner_product_reduces_midway_with_61_bit_primes() {
    // 61-bit primes: products reach 2^124, so only 15 fit the 128-bit accumulator and
    // K = 17 takes the kernel's intermediate reduction. Largest words and random ones.
    let mut rng = rng();
    let set = primes_61_bit(18);
    let k = 17;
    for largest in [true, false] {
        // Below 4 q (dec) and q (key): the largest words, or random ones.
        let mut below = |bound: u64| {
            if largest {
                bound - 1
            } else {
                word(&mut rng, bound)
            }
        };
        let dec = poly_words(&set, k, |q| below(4 * q));
        let key = poly_words(&set, 2 * k, &mut below);
        check_ks_inner_product(
            &dec,
            &key,
            k + 1,
            k,
            &set,
            "ckks_ks_inner_product, 61-bit primes",
        );
    }
}

/// Regions of one buffer that share words without starting at the same word are refused
/// where a kernel may take an output as an input (it reads each word before writing the
/// same word, which a shifted alias breaks), and any overlap where it may not; disjoint
/// regions of one buffer are fine.
#[test]
fn partly_overlapping_regions_are_rejected() {
    let e = env();
    let (g, kx) = (&e.graph, &e.kernels);
    let moduli = primes(LOG_N, &[40]);
    let mt = table(&moduli);
    let whole = g.context().buffer(g.queue(), 4 * N).unwrap();
    cl::poison(g.queue(), &whole, POISON).unwrap();
    let part = |at: usize| whole.part(at, N).unwrap();
    let (dst, shifted) = (part(0), part(N / 2));
    assert_rejected(kx.ckks_negate(g, &dst, &shifted, &mt, 1, 1), &dst);
    assert_rejected(kx.ckks_galois_ntt(g, &dst, &shifted, 3, 1), &dst);
    assert_rejected(kx.ckks_galois_ntt(g, &dst, &part(0), 3, 1), &dst);
    let words = canonical(&mut rng(), &moduli, 1);
    let src = part(2 * N);
    cl::write(g.queue(), &src, 0, &words).unwrap();
    // Disjoint regions of the buffer: the words of a buffer of their own.
    kx.ckks_negate(g, &part(3 * N), &src, &mt, 1, 1).unwrap();
    let mut want = vec![0; N];
    host::ckks_negate(&mut want, &words, &moduli, N);
    assert_words(
        &cl::download(g.queue(), &part(3 * N)).unwrap(),
        &want,
        "negate",
    );
    assert!(cl::download(g.queue(), &part(N))
        .unwrap()
        .iter()
        .all(|&w| w == POISON));
}
