//! Device NTT: both strategies, and every staged variant, equal the host reference
//! (`ntt::host`, SEAL's butterflies) word for word, forward and inverse, lazy and reduced,
//! and the first passes of the inverse (the plan's from another buffer, and the fused
//! galois pass of `ckks::fused` built on it), on fresh random inputs and edge values, for
//! primes of 17 to 60 bits, several primes per polynomial and several polynomials; outputs
//! are poisoned before the kernels run; two runs give the same words; bad arguments are
//! errors.

use std::sync::Arc;

use rand::Rng;
use seal_opencl::arith::{get_primes, Modulus};
use seal_opencl::ckks::fused::{
    ChainedTransform, DivideInto, DivideRound, FusedPasses, KeySwitch, ModDown, Permutation,
    Sources, SwitchOperands, KS_JOBS_MAX,
};
use seal_opencl::ckks::SumTerm;
use seal_opencl::cl::{self, Context, Queue, Region};
use seal_opencl::config::Config;
use seal_opencl::device::CHAIN_COUNTER_WORDS;
use seal_opencl::ntt::{
    create_ntt_tables, host, NttDirection, NttPlan, NttStrategy, NttTables, StagedLayout,
};
use seal_opencl::{Error, ErrorKind};
use seal_opencl_testkit::harness::{primes, rng};

const POISON: u64 = 0xBAD0_BAD0_BAD0_BAD0;
/// The staged variants under test: the default (4 values per work item, 8 in one pass), 8
/// and 16 values per work item, small and large groups and column counts with each, and
/// the smallest groups (one block, one column per work group).
fn staged() -> Vec<NttStrategy> {
    [
        "r4g8c2", "r4g9c3", "r8g11c4", "r16g11c4", "r16g10c6", "r8g12c2", "r16g6c0", "r4g12c5",
        "r4g6c0",
    ]
    .map(|v| NttStrategy::Staged(v.parse().unwrap()))
    .to_vec()
}

/// The naive baseline and every staged variant under test.
fn strategies() -> Vec<NttStrategy> {
    [vec![NttStrategy::Naive], staged()].concat()
}

fn device() -> (Arc<Context>, Queue) {
    let ctx = Context::new(&Config::from_env().unwrap().device).unwrap();
    let queue = ctx.queue(false).unwrap();
    (ctx, queue)
}

/// `count` polynomials in SEAL's layout with residues in [0, bound(q)): random words,
/// with the first residue of each polynomial starting 0, bound - 1, and the edge
/// patterns all zero (residue 1 of polynomial 0) and all bound - 1 (residue 0 of the
/// last polynomial) when there is room.
fn inputs(
    rng: &mut impl Rng,
    tables: &[NttTables],
    count: usize,
    bound: impl Fn(u64) -> u64,
) -> Vec<u64> {
    let n = tables[0].coeff_count();
    let l = tables.len();
    let mut values = Vec::with_capacity(count * l * n);
    for r in 0..count * l {
        let b = bound(tables[r % l].modulus().value());
        let mut residue: Vec<u64> = (0..n).map(|_| rng.gen_range(0..b)).collect();
        residue[0] = 0;
        residue[1] = b - 1;
        if r == 1 {
            residue.fill(0);
        }
        if count > 1 && r == (count - 1) * l {
            residue.fill(b - 1);
        }
        values.extend(residue);
    }
    values
}

#[derive(Clone, Copy, Debug)]
enum Transform {
    Forward,
    ForwardLazy,
    Inverse,
    InverseLazy,
}

impl Transform {
    const ALL: [Transform; 4] = [
        Transform::Forward,
        Transform::ForwardLazy,
        Transform::Inverse,
        Transform::InverseLazy,
    ];

    fn host(self) -> fn(&mut [u64], &NttTables) {
        match self {
            Transform::Forward => host::ntt_negacyclic_harvey,
            Transform::ForwardLazy => host::ntt_negacyclic_harvey_lazy,
            Transform::Inverse => host::inverse_ntt_negacyclic_harvey,
            Transform::InverseLazy => host::inverse_ntt_negacyclic_harvey_lazy,
        }
    }

    /// Its direction, and whether its output is fully reduced.
    fn direction_reduce(self) -> (NttDirection, bool) {
        match self {
            Transform::Forward => (NttDirection::Forward, true),
            Transform::ForwardLazy => (NttDirection::Forward, false),
            Transform::Inverse => (NttDirection::Inverse, true),
            Transform::InverseLazy => (NttDirection::Inverse, false),
        }
    }

    /// Inputs the transform accepts: [0, 4q) forward, [0, 2q) inverse.
    fn input_bound(self, q: u64) -> u64 {
        match self {
            Transform::Forward | Transform::ForwardLazy => 4 * q,
            Transform::Inverse | Transform::InverseLazy => 2 * q,
        }
    }

    fn run(
        self,
        plan: &NttPlan,
        queue: &Queue,
        buf: &cl::Region,
        count: usize,
    ) -> seal_opencl::Result<Vec<cl::Event>> {
        match self {
            Transform::Forward => plan.ntt_negacyclic_harvey(queue, buf, count),
            Transform::ForwardLazy => plan.ntt_negacyclic_harvey_lazy(queue, buf, count),
            Transform::Inverse => plan.inverse_ntt_negacyclic_harvey(queue, buf, count),
            Transform::InverseLazy => plan.inverse_ntt_negacyclic_harvey_lazy(queue, buf, count),
        }
    }
}

/// Runs a transform (`run`, of `launches` launches) on the device over `input` (in a region
/// `slack` words longer, at word 32 of a buffer of its own, as a region of a pool's slab:
/// its tail and the words before it are poisoned and must stay so) and returns the
/// transformed words.
fn device_run(
    ctx: &Arc<Context>,
    queue: &Queue,
    input: &[u64],
    slack: usize,
    launches: usize,
    run: impl FnOnce(&cl::Region) -> seal_opencl::Result<Vec<cl::Event>>,
) -> Vec<u64> {
    const HEAD: usize = 32;
    let whole = ctx.buffer(queue, HEAD + input.len() + slack).unwrap();
    cl::poison(queue, &whole, POISON).unwrap();
    let buf = whole.part(HEAD, input.len() + slack).unwrap();
    cl::write(queue, &buf, 0, input).unwrap();
    let events = run(&buf).unwrap();
    assert_eq!(events.len(), launches);
    let head = cl::download(queue, &whole.part(0, HEAD).unwrap()).unwrap();
    assert!(
        head.iter().all(|&w| w == POISON),
        "a word before the region was written"
    );
    let mut out = cl::download(queue, &buf).unwrap();
    assert!(out[input.len()..].iter().all(|&w| w == POISON));
    out.truncate(input.len());
    out
}

/// The device output equals the host reference word for word, with the first
/// difference named.
fn assert_same(got: &[u64], want: &[u64], tables: &[NttTables], what: &str) {
    let n = tables[0].coeff_count();
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        let r = i / n;
        panic!(
            "{what}: residue {r} (q = {}), word {}: device {:#x}, host {:#x}",
            tables[r % tables.len()].modulus().value(),
            i % n,
            got[i],
            want[i]
        );
    }
}

/// Every transform of both strategies on `count` polynomials over `moduli`.
fn check_all(ctx: &Arc<Context>, queue: &Queue, log_n: u32, moduli: &[Modulus], count: usize) {
    let mut rng = rng();
    let tables = create_ntt_tables(log_n, moduli).unwrap();
    for strategy in strategies() {
        let plan = NttPlan::new(ctx, queue, log_n, moduli, strategy).unwrap();
        for transform in Transform::ALL {
            let input = inputs(&mut rng, &tables, count, |q| transform.input_bound(q));
            let mut want = input.clone();
            host::transform_batch(&mut want, &tables, transform.host());
            // Poisoned, unwritten words of an output in a buffer one residue too long.
            let got = device_run(
                ctx,
                queue,
                &input,
                1 << log_n,
                plan.launches_per_transform(),
                |buf| transform.run(&plan, queue, buf, count),
            );
            let what = format!(
                "{transform:?} {strategy} N = 2^{log_n}, L = {}, count = {count}",
                moduli.len()
            );
            assert_same(&got, &want, &tables, &what);
        }
    }
}

#[test]
fn small_sizes_match_host_reference() {
    let (ctx, queue) = device();
    // N = 2^10 .. 2^12 run in one launch of the staged NTT; 2^13 in two.
    for log_n in 10..=13 {
        check_all(&ctx, &queue, log_n, &primes(log_n, &[60]), 1);
        check_all(&ctx, &queue, log_n, &primes(log_n, &[17, 50, 30]), 2);
        check_all(
            &ctx,
            &queue,
            log_n,
            &primes(log_n, &[59, 20, 60, 40, 45]),
            3,
        );
    }
}

#[test]
fn two_pass_sizes_match_host_reference() {
    let (ctx, queue) = device();
    // 2^14: strided 7 rounds (3 + 3 + 1); 2^16: 8 + 8 (3 + 3 + 2 each); 2^17: 8 + 9.
    check_all(&ctx, &queue, 14, &primes(14, &[50, 24]), 1);
    check_all(&ctx, &queue, 16, &primes(16, &[60]), 1);
    check_all(&ctx, &queue, 17, &primes(17, &[55]), 1);
}

/// A whole transform in one chained launch (`FusedPasses::chained_transform`, where the
/// level's plan takes two passes) equals the host reference word for word, forward and
/// inverse, lazy and reduced, for 1 to 3 polynomials of 1 to 4 primes (17 to 60 bits) in a
/// poisoned region with poisoned words around it, at 2^13 and 2^14 with the default layout
/// and with 8 and 16 values per work item, each chained program with as many columns per
/// strided group as make its groups the block groups' size; the queue's counters are zero
/// again after every launch. A one-pass layout (2^12) has no chained transform: the plan's
/// one launch stays.
#[test]
fn chained_transforms_match_host_reference() {
    let (ctx, queue) = device();
    let mut rng = rng();
    let counters = ctx.upload(&queue, &[0; CHAIN_COUNTER_WORDS]).unwrap();
    let variant = |v: &str| NttStrategy::Staged(v.parse().unwrap());
    for (log_n, strategy) in [
        (12, NttStrategy::STAGED),
        (13, NttStrategy::STAGED),
        (13, variant("r16g10c6")),
        (14, NttStrategy::STAGED),
        (14, variant("r8g11c4")),
    ] {
        let moduli = primes(log_n, &[60, 17, 50, 30]);
        let tables = create_ntt_tables(log_n, &moduli).unwrap();
        let plan = Arc::new(NttPlan::new(&ctx, &queue, log_n, &moduli, strategy).unwrap());
        let two_pass = plan.launches_per_transform() == 2;
        assert_eq!(two_pass, log_n > 12, "2^{log_n} {strategy}");
        let fused = FusedPasses::new(plan.clone(), Some(1)).unwrap();
        assert_eq!(fused.chains(), two_pass, "2^{log_n} {strategy} chains");
        if two_pass && strategy == NttStrategy::STAGED {
            chained_transform_rejects_bad_arguments(&ctx, &queue, &fused, &counters);
        }
        for (count, primes) in [(1, 4), (2, 3), (3, 1)] {
            for transform in Transform::ALL {
                let (direction, reduce) = transform.direction_reduce();
                let tables = &tables[..primes];
                let input = inputs(&mut rng, tables, count, |q| transform.input_bound(q));
                let chained = |values: &cl::Region| {
                    let t = ChainedTransform {
                        values,
                        sum: None,
                        count,
                        primes,
                        direction,
                        reduce,
                        counters: &counters,
                    };
                    fused.chained_transform(&queue, &t, true)
                };
                let what = format!(
                    "{transform:?} {strategy} N = 2^{log_n}, {primes} primes, count = {count}"
                );
                if !two_pass {
                    let buf = ctx.upload(&queue, &input).unwrap();
                    assert!(
                        matches!(chained(&buf), Err(Error::Logic(_))),
                        "{what}: no chained transform"
                    );
                    continue;
                }
                let mut want = input.clone();
                host::transform_batch(&mut want, tables, transform.host());
                let got = device_run(&ctx, &queue, &input, 1 << log_n, 1, chained);
                assert_same(&got, &want, tables, &what);
                assert!(
                    cl::download(&queue, &counters)
                        .unwrap()
                        .iter()
                        .all(|&w| w == 0),
                    "{what}: counters left zero"
                );
            }
        }
    }
}

/// `fused` (a chaining level of 4 primes) refuses a chained transform of no polynomials,
/// of more primes than its plan's, of more words than the region holds, with counters
/// inside the values, an inverse one of a shifted term and a forward one of a product.
fn chained_transform_rejects_bad_arguments(
    ctx: &Arc<Context>,
    queue: &Queue,
    fused: &FusedPasses,
    counters: &cl::Region,
) {
    let n = fused.plan().coeff_count();
    let values = ctx.buffer(queue, 4 * n).unwrap();
    let t = |values, count, primes, counters| ChainedTransform {
        values,
        sum: None,
        count,
        primes,
        direction: NttDirection::Forward,
        reduce: true,
        counters,
    };
    let run = |t: ChainedTransform| fused.chained_transform(queue, &t, false);
    assert!(run(t(&values, 1, 4, counters)).is_ok());
    let other = ctx.buffer(queue, 4 * n).unwrap();
    let shifted = SumTerm {
        shift: 1,
        ..SumTerm::words(&other, false)
    };
    let inverse_of_shifted = ChainedTransform {
        sum: Some(Sources::sum(&[shifted]).unwrap()),
        direction: NttDirection::Inverse,
        ..t(&values, 1, 4, counters)
    };
    assert_invalid(
        run(inverse_of_shifted),
        "an inverse transform of a shifted term",
    );
    let product = SumTerm {
        plain: Some(&other),
        ..SumTerm::words(&other, false)
    };
    let forward_of_product = ChainedTransform {
        sum: Some(Sources::products(&[product]).unwrap()),
        ..t(&values, 1, 4, counters)
    };
    assert_invalid(run(forward_of_product), "a forward transform of a product");
    assert_invalid(run(t(&values, 0, 4, counters)), "count 0");
    assert_invalid(
        run(t(&values, 1, 5, counters)),
        "more primes than the plan's",
    );
    assert_invalid(run(t(&values, 2, 4, counters)), "values too short");
    let inside = values.part(3 * n, CHAIN_COUNTER_WORDS).unwrap();
    assert_invalid(run(t(&values, 1, 4, &inside)), "counters inside the values");
}

#[test]
fn forward_then_inverse_is_identity_and_runs_are_deterministic() {
    let (ctx, queue) = device();
    let mut rng = rng();
    let log_n = 13;
    let moduli = primes(log_n, &[60, 50, 40]);
    let tables = create_ntt_tables(log_n, &moduli).unwrap();
    let input = inputs(&mut rng, &tables, 2, |q| q);
    for strategy in strategies() {
        let plan = NttPlan::new(&ctx, &queue, log_n, &moduli, strategy).unwrap();
        let buf = ctx.upload(&queue, &input).unwrap();
        plan.ntt_negacyclic_harvey(&queue, &buf, 2).unwrap();
        let forward = cl::download(&queue, &buf).unwrap();
        plan.inverse_ntt_negacyclic_harvey(&queue, &buf, 2).unwrap();
        assert_eq!(
            cl::download(&queue, &buf).unwrap(),
            input,
            "{strategy} round trip"
        );

        // A fresh queue and plan give the same words.
        let queue2 = ctx.queue(false).unwrap();
        let plan2 = NttPlan::new(&ctx, &queue2, log_n, &moduli, strategy).unwrap();
        let buf2 = ctx.upload(&queue2, &input).unwrap();
        plan2.ntt_negacyclic_harvey(&queue2, &buf2, 2).unwrap();
        assert_eq!(
            cl::download(&queue2, &buf2).unwrap(),
            forward,
            "{strategy} determinism"
        );
    }
}

#[test]
fn count_transforms_only_the_first_polynomials() {
    // A buffer holding three polynomials, transformed with count = 2: the third stays.
    let (ctx, queue) = device();
    let mut rng = rng();
    let log_n = 10;
    let moduli = primes(log_n, &[40, 30]);
    let tables = create_ntt_tables(log_n, &moduli).unwrap();
    let input = inputs(&mut rng, &tables, 3, |q| q);
    let words = 2 * 2 * (1 << log_n);
    let mut want = input.clone();
    host::transform_batch(&mut want[..words], &tables, host::ntt_negacyclic_harvey);
    for strategy in strategies() {
        let plan = NttPlan::new(&ctx, &queue, log_n, &moduli, strategy).unwrap();
        let buf = ctx.upload(&queue, &input).unwrap();
        plan.ntt_negacyclic_harvey(&queue, &buf, 2).unwrap();
        assert_same(
            &cl::download(&queue, &buf).unwrap(),
            &want,
            &tables,
            "count 2 of 3",
        );
    }
}

/// Below 2^10 (SEAL's own tests use N = 4 .. 128) both strategies run the naive kernels,
/// equal to the host reference.
#[test]
fn sizes_below_1024_match_host_reference() {
    let (ctx, queue) = device();
    for log_n in [1, 2, 3, 5, 7, 9] {
        check_all(&ctx, &queue, log_n, &primes(log_n, &[30, 60]), 2);
        let plan = NttPlan::new(
            &ctx,
            &queue,
            log_n,
            &primes(log_n, &[30]),
            NttStrategy::STAGED,
        );
        assert_eq!(plan.unwrap().strategy(), NttStrategy::Naive);
    }
}

/// A plan over L primes transforms polynomials of the first `primes` < L of them (the
/// levels of a CKKS modulus chain) exactly as a plan over just those primes would.
#[test]
fn prefix_of_the_primes_matches_host_reference() {
    let (ctx, queue) = device();
    let mut rng = rng();
    let log_n = 12;
    let moduli = primes(log_n, &[60, 40, 50, 30]);
    let count = 3;
    for strategy in strategies() {
        let plan = NttPlan::new(&ctx, &queue, log_n, &moduli, strategy).unwrap();
        for primes in [1, 2, 3] {
            let tables = create_ntt_tables(log_n, &moduli[..primes]).unwrap();
            for (direction, reduce, host_fn, bound) in [
                (
                    NttDirection::Forward,
                    false,
                    host::ntt_negacyclic_harvey_lazy as fn(&mut [u64], &NttTables),
                    4,
                ),
                (
                    NttDirection::Inverse,
                    true,
                    host::inverse_ntt_negacyclic_harvey,
                    2,
                ),
            ] {
                let input = inputs(&mut rng, &tables, count, |q| bound * q);
                let mut want = input.clone();
                host::transform_batch(&mut want, &tables, host_fn);
                let buf = ctx.buffer(&queue, input.len() + (1 << log_n)).unwrap();
                cl::poison(&queue, &buf, POISON).unwrap();
                cl::write(&queue, &buf, 0, &input).unwrap();
                // Without events (as the operations enqueue when not profiling): none come
                // back, and the words are the same.
                let events = plan
                    .transform(&queue, &buf, count, primes, direction, reduce, false)
                    .unwrap();
                assert!(events.is_empty(), "events created when none were asked for");
                let got = cl::download(&queue, &buf).unwrap();
                assert!(got[input.len()..].iter().all(|&w| w == POISON));
                let what = format!("{direction:?} {strategy} first {primes} of 4 primes");
                assert_same(&got[..input.len()], &want, &tables, &what);
                cl::write(&queue, &buf, 0, &input).unwrap();
                let events = plan
                    .transform(&queue, &buf, count, primes, direction, reduce, true)
                    .unwrap();
                assert!(!events.is_empty(), "transform returns its launches' events");
                assert_same(
                    &cl::download(&queue, &buf).unwrap()[..input.len()],
                    &want,
                    &tables,
                    &what,
                );
            }
        }
        let buf = ctx.buffer(&queue, 4 << log_n).unwrap();
        assert_invalid(
            plan.transform(&queue, &buf, 1, 0, NttDirection::Forward, true, true),
            "no primes",
        );
        assert_invalid(
            plan.transform(&queue, &buf, 1, 5, NttDirection::Forward, true, true),
            "more primes than the plan",
        );
    }
}

fn assert_invalid<T>(r: seal_opencl::Result<T>, what: &str) {
    match r {
        Err(e @ Error::InvalidArgument(_)) => assert_eq!(e.kind(), ErrorKind::InvalidArgument),
        Err(other) => panic!("{what}: expected InvalidArgument, got {other:?}"),
        Ok(_) => panic!("{what}: expected an error"),
    }
}

#[test]
fn bad_arguments_are_errors() {
    let (ctx, queue) = device();
    let moduli = primes(12, &[50, 40]);
    for strategy in strategies() {
        // N outside 2^1 .. 2^17, no moduli, a modulus without a 2N-th root.
        assert_invalid(NttPlan::new(&ctx, &queue, 0, &moduli, strategy), "N = 1");
        assert_invalid(
            NttPlan::new(&ctx, &queue, 18, &moduli, strategy),
            "N = 2^18",
        );
        assert_invalid(NttPlan::new(&ctx, &queue, 12, &[], strategy), "no moduli");
        let not_ntt_friendly = Modulus::new(get_primes(2 << 10, 40, 1).unwrap()[0]).unwrap();
        if not_ntt_friendly.value() % (2 << 12) != 1 {
            assert_invalid(
                NttPlan::new(&ctx, &queue, 12, &[not_ntt_friendly], strategy),
                "modulus not 1 mod 2N",
            );
        }
        let sixty_five = vec![moduli[0]; 65];
        assert_invalid(
            NttPlan::new(&ctx, &queue, 12, &sixty_five, strategy),
            "65 moduli",
        );

        let plan = NttPlan::new(&ctx, &queue, 12, &moduli, strategy).unwrap();
        let short = ctx.buffer(&queue, 2 * 4096 - 1).unwrap();
        assert_invalid(
            plan.ntt_negacyclic_harvey(&queue, &short, 1),
            "short buffer",
        );
        assert_invalid(
            plan.inverse_ntt_negacyclic_harvey(&queue, &short, 1),
            "short buffer",
        );
        let exact = ctx.buffer(&queue, 2 * 4096).unwrap();
        assert_invalid(
            plan.ntt_negacyclic_harvey(&queue, &exact, 2),
            "count too large",
        );
        assert_invalid(plan.ntt_negacyclic_harvey(&queue, &exact, 0), "count 0");
        assert_invalid(
            plan.ntt_negacyclic_harvey(&queue, &exact, usize::MAX),
            "count overflows",
        );
    }
    assert!("fastest".parse::<NttStrategy>().is_err());
}

/// What the device's inverse leaves after its first pass on `layout`: the host's first
/// log G inverse rounds, lazy, or the whole inverse, reduced, with one pass.
fn host_inverse_first_pass(res: &mut [u64], tables: &NttTables, layout: StagedLayout) {
    if layout.launches() == 1 {
        host::inverse_ntt_negacyclic_harvey(res, tables);
    } else {
        host::inverse_ntt_negacyclic_harvey_lazy_rounds(res, tables, layout.log_g());
    }
}

/// A staged plan of the first-pass tests, with its primes ({50, 40, 60} bits) and their
/// host tables.
struct FirstPassPlan {
    log_n: u32,
    strategy: NttStrategy,
    moduli: Vec<Modulus>,
    tables: Vec<NttTables>,
    plan: Arc<NttPlan>,
    layout: StagedLayout,
}

impl FirstPassPlan {
    /// The plan's size and variant, for failure messages.
    fn name(&self) -> String {
        format!("2^{} {}", self.log_n, self.strategy)
    }

    /// `residues` random residues of N words, residue r below the plan's prime
    /// `prime_of(r)`.
    fn random(
        &self,
        rng: &mut impl Rng,
        residues: usize,
        prime_of: impl Fn(usize) -> usize,
    ) -> Vec<u64> {
        let n = 1usize << self.log_n;
        (0..residues * n)
            .map(|w| rng.gen_range(0..self.moduli[prime_of(w / n)].value()))
            .collect()
    }
}

/// The first-pass tests' plans: one- (2^12) and two-pass (2^13) layouts of every staged
/// variant.
fn first_pass_plans<'a>(
    ctx: &'a Arc<Context>,
    queue: &'a Queue,
) -> impl Iterator<Item = FirstPassPlan> + 'a {
    [12, 13]
        .into_iter()
        .flat_map(|log_n| staged().into_iter().map(move |s| (log_n, s)))
        .map(|(log_n, strategy)| {
            let moduli = primes(log_n, &[50, 40, 60]);
            let tables = create_ntt_tables(log_n, &moduli).unwrap();
            let plan = Arc::new(NttPlan::new(ctx, queue, log_n, &moduli, strategy).unwrap());
            let layout = plan.staged_layout().unwrap();
            FirstPassPlan {
                log_n,
                strategy,
                moduli,
                tables,
                plan,
                layout,
            }
        })
}

/// `inverse_first_pass_from` reads residues at a stride and offset of another buffer:
/// equal to the host's first log G inverse rounds of the gathered residues (the whole
/// inverse, reduced, with one pass), on one- (2^12) and two-pass (2^13) layouts of every
/// staged variant.
#[test]
fn inverse_first_pass_from_equals_host_rounds_on_gathered_residues() {
    let (ctx, queue) = device();
    let mut rng = rng();
    // 2 polynomials of residues 1 and 2 (primes 0 and 1 of the plan) from a source of 2
    // polynomials of 4 residues.
    let (stride, first, count, primes) = (4, 1, 2, 2);
    for fp in first_pass_plans(&ctx, &queue) {
        let n = 1usize << fp.log_n;
        // Source residue r holds words below the prime it is read under (residue
        // p * stride + first + j under prime j; the others are never read).
        let prime_of = |r: usize| (r % stride).saturating_sub(first).min(primes - 1);
        let src_words = fp.random(&mut rng, count * stride, prime_of);
        let mut want = Vec::new();
        for p in 0..count {
            for j in 0..primes {
                let mut res = src_words[(p * stride + first + j) * n..][..n].to_vec();
                host_inverse_first_pass(&mut res, &fp.tables[j], fp.layout);
                want.extend(res);
            }
        }
        let src_buf = ctx.upload(&queue, &src_words).unwrap();
        let values = ctx.buffer(&queue, count * primes * n).unwrap();
        cl::poison(&queue, &values, POISON).unwrap();
        fp.plan
            .inverse_first_pass_from(
                &queue, &values, &src_buf, stride, first, count, primes, false,
            )
            .unwrap();
        assert_eq!(
            cl::download(&queue, &values).unwrap(),
            want,
            "{}",
            fp.name()
        );
        let src_after = cl::download(&queue, &src_buf).unwrap();
        assert_eq!(src_after, src_words, "{}: source unchanged", fp.name());
    }
}

/// A launch of one rotation's permutation: `src` (times `plain`) by `galois_elt`.
fn one<'a>(src: &'a Region, plain: Option<&'a Region>, galois_elt: u32) -> [Permutation<'a>; 1] {
    [Permutation {
        src,
        plain,
        galois_elt,
    }]
}

/// `inverse_first_pass_galois` permutes every residue of 2 polynomials as SEAL's
/// apply_galois_ntt does (`host::ckks_galois_ntt`) and runs the first log G inverse rounds
/// (the whole inverse, reduced, with one pass) on the second's: equal to that host
/// composition on one- (2^12) and two-pass (2^13) layouts of every staged variant, for the
/// smallest and largest galois elements and one between, of the source and of the source
/// times a plaintext (`host::ckks_multiply_plain` first); the source is unchanged.
#[test]
fn inverse_first_pass_galois_equals_host_permutation_and_rounds() {
    let (ctx, queue) = device();
    let mut rng = rng();
    for fp in first_pass_plans(&ctx, &queue) {
        let n = 1usize << fp.log_n;
        let (count, primes) = (2, fp.moduli.len());
        let src_words = fp.random(&mut rng, count * primes, |r| r % primes);
        let src_buf = ctx.upload(&queue, &src_words).unwrap();
        let plain_words = fp.random(&mut rng, primes, |r| r);
        let plain_buf = ctx.upload(&queue, &plain_words).unwrap();
        let fused = FusedPasses::new(fp.plan.clone(), None).unwrap();
        for galois_elt in [3, 2 * n as u32 - 1, rng.gen_range(0..n as u32) * 2 + 1] {
            for times_plain in [false, true] {
                let mut rotated = src_words.clone();
                if times_plain {
                    for ct in rotated.chunks_exact_mut(primes * n) {
                        seal_opencl::ckks::host::ckks_multiply_plain(
                            ct,
                            &plain_words,
                            &fp.moduli,
                            n,
                        );
                    }
                }
                let mut want_permuted = vec![0; src_words.len()];
                seal_opencl::ckks::host::ckks_galois_ntt(
                    &mut want_permuted,
                    &rotated,
                    galois_elt,
                    fp.log_n,
                );
                let mut want = want_permuted[(count - 1) * primes * n..].to_vec();
                for (j, res) in want.chunks_exact_mut(n).enumerate() {
                    host_inverse_first_pass(res, &fp.tables[j], fp.layout);
                }
                let values = ctx.buffer(&queue, primes * n).unwrap();
                let permuted = ctx.buffer(&queue, count * primes * n).unwrap();
                cl::poison(&queue, &values, POISON).unwrap();
                cl::poison(&queue, &permuted, POISON).unwrap();
                fused
                    .inverse_first_pass_galois(
                        &queue,
                        &values,
                        &one(&src_buf, times_plain.then_some(&plain_buf), galois_elt),
                        &permuted,
                        count,
                        primes,
                        false,
                    )
                    .unwrap();
                let what = format!(
                    "{} element {galois_elt} times_plain {times_plain}",
                    fp.name()
                );
                assert_eq!(
                    cl::download(&queue, &permuted).unwrap(),
                    want_permuted,
                    "{what}: permuted"
                );
                assert_eq!(
                    cl::download(&queue, &values).unwrap(),
                    want,
                    "{what}: first pass"
                );
            }
        }
        let src_after = cl::download(&queue, &src_buf).unwrap();
        assert_eq!(src_after, src_words, "{}: source unchanged", fp.name());
    }
}

#[test]
fn fused_passes_reject_bad_arguments() {
    let (ctx, queue) = device();
    let moduli = primes(12, &[50, 40]);
    let n = 4096;
    let buf = |words| ctx.buffer(&queue, words).unwrap();
    let (values, src) = (buf(2 * n), buf(4 * n));
    let naive = NttPlan::new(&ctx, &queue, 12, &moduli, NttStrategy::Naive).unwrap();
    assert_invalid(
        naive.inverse_first_pass_from(&queue, &values, &src, 2, 0, 1, 2, false),
        "naive plan",
    );
    let plan = NttPlan::new(&ctx, &queue, 12, &moduli, NttStrategy::STAGED).unwrap();
    assert_invalid(
        plan.inverse_first_pass_from(&queue, &values, &values, 2, 0, 1, 2, false),
        "src is values",
    );
    assert_invalid(
        plan.inverse_first_pass_from(&queue, &values, &src, 2, 3, 1, 2, false),
        "src too short",
    );
    // The kernels read the tables of every prime below `primes`: more than the plan's
    // are an error, with buffers long enough for them.
    let long = buf(8 * n);
    assert_invalid(
        plan.inverse_first_pass_from(&queue, &long, &src, 3, 0, 1, 3, false),
        "more primes than the plan's",
    );
    let permuted = buf(4 * n);
    assert_invalid(
        FusedPasses::new(Arc::new(naive), None),
        "fused passes of a naive plan",
    );
    let plan = FusedPasses::new(Arc::new(plan), None).unwrap();
    // One launch of `jobs` over `count` polynomials of `primes` residues.
    let galois = |values: &Region, jobs: &[Permutation], permuted: &Region, count, primes| {
        plan.inverse_first_pass_galois(&queue, values, jobs, permuted, count, primes, false)
    };
    for (elt, what) in [(4, "even element"), (2 * n as u32 + 1, "element above 2N")] {
        assert_invalid(
            galois(&values, &one(&src, None, elt), &permuted, 2, 2),
            what,
        );
    }
    assert_invalid(
        galois(&values, &one(&src, None, 3), &src, 2, 2),
        "permuted is src",
    );
    assert_invalid(
        galois(&permuted, &one(&src, None, 3), &permuted, 2, 2),
        "values is permuted",
    );
    assert_invalid(
        galois(&values, &one(&src, None, 3), &permuted, 3, 2),
        "src too short for 3 polynomials",
    );
    assert_invalid(
        galois(&values, &one(&src, None, 3), &buf(3 * n), 2, 2),
        "permuted too short",
    );
    assert_invalid(
        galois(&values, &one(&src, Some(&buf(n)), 3), &permuted, 2, 2),
        "plain too short for 2 primes",
    );
    assert_invalid(
        galois(&values, &one(&src, Some(&permuted), 3), &permuted, 2, 2),
        "plain is permuted",
    );
    assert_invalid(
        galois(&buf(n), &one(&src, None, 3), &permuted, 2, 2),
        "values too short for the last polynomial",
    );
    assert_invalid(
        galois(&long, &one(&src, None, 3), &buf(8 * n), 1, 3),
        "galois over more primes than the plan's",
    );
    // Launches of several jobs: 1 to KS_JOBS_MAX, each job's words in its share of values
    // and permuted, and no job's source overlapping them.
    let job = Permutation {
        src: &src,
        plain: None,
        galois_elt: 3,
    };
    let many = buf(16 * n);
    assert!(galois(&long, &[job; 2], &many, 2, 2).is_ok());
    for (jobs, what) in [
        (0, "no job"),
        (KS_JOBS_MAX + 1, "more jobs than KS_JOBS_MAX"),
    ] {
        assert_invalid(galois(&long, &vec![job; jobs], &many, 2, 2), what);
    }
    assert_invalid(
        galois(&long, &[job; 2], &permuted, 2, 2),
        "permuted too short for two jobs",
    );
    assert_invalid(
        galois(&values, &[job; 2], &many, 2, 2),
        "values too short for two jobs",
    );
    let overlapping = Permutation { src: &many, ..job };
    assert_invalid(
        galois(&long, &[job, overlapping], &many, 2, 2),
        "a second job's source is permuted",
    );
    let (last, dst, inv) = (buf(n), buf(2 * n), buf(4));
    let md = |dst, acc_polys| ModDown {
        last: &last,
        scratch: &last,
        divide: DivideRound {
            dst,
            dst_stride: 1,
            src: &src,
            src_stride: 1,
            last_prime: 1,
            inv: &inv,
            acc: Some((&src, acc_polys)),
            polys: 1,
            primes: 1,
        },
        more: &[],
    };
    assert!(plan.forward_moddown(&queue, &md(&dst, 0), false).is_ok());
    assert_invalid(
        plan.forward_moddown(&queue, &md(&last, 0), false),
        "dst is last",
    );
    assert_invalid(
        plan.forward_moddown(&queue, &md(&dst, 2), false),
        "acc_polys > count",
    );
    // A second job dividing into the first's destination, and one more job than a launch
    // carries.
    let into = |dst| DivideInto { dst, acc: &src };
    let others = [buf(2 * n), buf(2 * n), buf(2 * n), buf(2 * n)];
    let (second, same) = ([into(&others[0])], [into(&dst)]);
    let too_many: Vec<DivideInto> = others.iter().map(into).collect();
    let lasts = buf(8 * n);
    let jobs = |more| ModDown {
        last: &lasts,
        scratch: &lasts,
        more,
        ..md(&dst, 0)
    };
    assert!(plan.forward_moddown(&queue, &jobs(&second), false).is_ok());
    assert_invalid(
        plan.forward_moddown(&queue, &jobs(&same), false),
        "two jobs' dst overlap",
    );
    assert_invalid(
        plan.forward_moddown(&queue, &jobs(&too_many), false),
        "more mod-downs than KS_JOBS_MAX",
    );
    let ks = KeySwitch {
        t_target: &values,
        target: &values,
        target_first: 0,
        key: &src,
        key_stride_primes: 2,
        key_special_index: 1,
        reduce_every: 1,
        prod: &dst,
        last: &last,
        scratch: &values,
        k: 2,
        more: &[],
    };
    assert_invalid(plan.forward_key_switch(&queue, &ks, false), "K + 1 > L");
    let operands = SwitchOperands {
        target: &values,
        key: &src,
    };
    let ks = KeySwitch {
        k: 1,
        more: &[operands; KS_JOBS_MAX],
        ..ks
    };
    assert_invalid(
        plan.forward_key_switch(&queue, &ks, false),
        "more key switches than KS_JOBS_MAX",
    );
}
