//! NTT benchmark: forward and inverse negacyclic NTT of a batch of L residues (one
//! polynomial over L primes of 50 to 60 bits), naive radix-2 vs staged, against a
//! device-to-device copy of the same bytes measured in the same run; then the staged
//! variants (`StagedVariant`: values per work item, group words, strided columns) side by
//! side at the shapes that matter, and key switching's fused forward transforms
//! (`FusedPasses::forward_key_switch`) per variant.
//!
//! ```text
//! cargo bench --bench ntt -- [--quick] [--sizes 12,13,..] [--primes 1,8,32]
//!                            [--strategies naive,staged] [--variants r4g8c2k4p2,r16,..]
//!                            [--shapes 15x8,16x32,..] [--ks 15x8] [--reps N] [--json PATH]
//! ```
//! Strategies: `--strategies`, else `SEAL_OPENCL_NTT` (one strategy) if set, else both;
//! staged with the variant of `SEAL_OPENCL_NTT_VARIANT` if set. Variants: `--variants`, else
//! `SEAL_OPENCL_NTT_VARIANT` (one) if set, else `DEFAULT_VARIANTS`; measured at `--shapes`
//! (log N x L, default `DEFAULT_SHAPES`) and in the key switch at `--ks` (log N x K,
//! default 15x8: the K (K + 1) = 72 transforms of MulLin at N = 2^15). `--variants ""`
//! skips both.
//!
//! Times are device time from profiling events: from the start of a transform's first
//! kernel to the end of its last (launch gaps between its kernels included), the median
//! over `--reps` transforms after a warm-up, rotating over three buffers so that small
//! batches are not served from the cache. "GB/s" counts 2 * words * 8 bytes per transform,
//! the reads and writes of an ideal single pass over the data (whatever the kernels
//! really move); the copy's GB/s counts its read and write the same way, so
//! ntt/copy is the transform's time in units of the time one read + write of the data
//! takes. Every configuration's output is checked word for word against the host
//! reference before it is timed.
//!
//! The table goes to stdout; JSON (device, date, parameters, every figure) to `--json
//! PATH`, by default `benches/results/ntt-<device>-<date>.json` (with `--quick` only when
//! `--json` is given). The device comes from `SEAL_OPENCL_DEVICE`.

mod common;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rand::{Rng, SeedableRng};
use serde::Serialize;

use seal_opencl::arith::{coeff_modulus_create, Modulus};
use seal_opencl::ckks::fused::{FusedPasses, KeySwitch};
use seal_opencl::ckks::host::{ckks_ks_decompose, ckks_ks_inner_product};
use seal_opencl::ckks::kernels::reduce_every;
use seal_opencl::cl::{self, Context, Event, Queue, Region};
use seal_opencl::config::{env_settings, Config, Setting, NTT, NTT_VARIANT};
use seal_opencl::ntt::{create_ntt_tables, host, NttPlan, NttStrategy, NttTables, StagedVariant};
use seal_opencl::{Error, Result};

use common::median;

/// Input buffers a configuration rotates over.
const ROTATE: usize = 3;

/// Fills outputs before a checked run, so that words a kernel leaves unwritten show.
const POISON: u64 = 0xBAD0_BAD0_BAD0_BAD0;

/// The variants compared by default: today's layout first (the baseline); 4 values per
/// work item in groups of 2^9 and 2^10 words; 8 values in groups of 2^11 words with
/// today's key switching (4 values in two-row groups), with 8 values in one row of the
/// layout's blocks there (the previous default) and with 16; 8 values in groups of
/// 2^12 and 2^8 words; 16 values with groups of 2^11 and 2^12 words, the latter with wider
/// strided groups.
const DEFAULT_VARIANTS: [&str; 10] = [
    "r4g8c2k4p2",
    "r4g9c3k4p2",
    "r4g10c4k4p2",
    "r8g11c4k4p2",
    "r8g11c4k8p1",
    "r8g11c4k16p1",
    "r8g12c4k4p2",
    "r8g8c2k4p2",
    "r16g11c4k4p2",
    "r16g12c5k4p2",
];

/// (log N, L) where variants are compared: one prime and 8 at 2^15, CKKS batches at
/// 2^13 .. 2^16, 32 primes at 2^16, and 64 at 2^15, the most primes a plan holds (SEAL's
/// limit; key switching's K (K + 1) = 72 transforms at K = 8 are timed in the key-switch
/// rows instead).
const DEFAULT_SHAPES: [(u32, usize); 7] = [
    (15, 1),
    (15, 8),
    (16, 32),
    (13, 8),
    (14, 8),
    (16, 8),
    (15, 64),
];

struct Params {
    quick: bool,
    sizes: Vec<u32>,
    primes: Vec<usize>,
    strategies: Vec<NttStrategy>,
    variants: Vec<StagedVariant>,
    shapes: Vec<(u32, usize)>,
    /// (log N, K) of the key-switch comparison.
    ks: (u32, usize),
    reps: usize,
    warmup: usize,
    json: Option<String>,
}

impl Params {
    fn from_args() -> Result<Params> {
        // cargo bench passes `--bench` to harness = false targets; ignore it.
        let args: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| a != "--bench")
            .collect();
        let quick = args.iter().any(|a| a == "--quick");
        let value = |name: &str| -> Option<&str> {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1))
                .map(String::as_str)
        };
        fn list<T: std::str::FromStr>(name: &str, v: &str) -> Result<Vec<T>>
        where
            T::Err: std::fmt::Display,
        {
            v.split(',')
                .filter(|x| !x.trim().is_empty())
                .map(|x| {
                    x.trim().parse().map_err(|e| {
                        Error::InvalidArgument(format!(
                            "{name} wants a comma-separated list, got {v:?}: {e}"
                        ))
                    })
                })
                .collect()
        }
        // `AxB`: log N and a count.
        let shape = |name: &str, x: &str| -> Result<(u32, usize)> {
            x.trim()
                .split_once('x')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                .ok_or_else(|| {
                    Error::InvalidArgument(format!("{name} wants log2(N)xCOUNT, got {x:?}"))
                })
        };
        // The environment's settings: a strategy or variant it names is the only one run.
        let config = Config::from_env()?;
        let set_in_env = |setting: Setting| env_settings().iter().any(|(n, _)| *n == setting.name);
        let known = [
            "--quick",
            "--sizes",
            "--primes",
            "--strategies",
            "--variants",
            "--shapes",
            "--ks",
            "--reps",
            "--json",
        ];
        for (i, a) in args.iter().enumerate() {
            let is_value = i > 0 && known[1..].contains(&args[i - 1].as_str());
            if !is_value && !known.contains(&a.as_str()) {
                return Err(Error::InvalidArgument(format!(
                    "unknown argument {a:?}; options: {}",
                    known.join(" ")
                )));
            }
        }
        let reps = match value("--reps") {
            Some(v) => v
                .parse()
                .map_err(|_| Error::InvalidArgument(format!("--reps wants a number, got {v:?}")))?,
            None if quick => 5,
            None => 100,
        };
        Ok(Params {
            quick,
            sizes: match value("--sizes") {
                Some(v) => list("--sizes", v)?,
                None if quick => vec![12, 13],
                None => (12..=17).collect(),
            },
            primes: match value("--primes") {
                Some(v) => list("--primes", v)?,
                None if quick => vec![1, 8],
                None => vec![1, 8, 32],
            },
            strategies: match value("--strategies") {
                Some(v) => {
                    // `staged` is the settings' variant.
                    let env = NttStrategy::Staged(config.experiment.variant);
                    list("--strategies", v)?
                        .into_iter()
                        .map(|s| match s {
                            NttStrategy::Staged(_) => env,
                            NttStrategy::Naive => s,
                        })
                        .collect()
                }
                None if set_in_env(NTT) => vec![config.experiment.ntt()],
                None => vec![
                    NttStrategy::Naive,
                    NttStrategy::Staged(config.experiment.variant),
                ],
            },
            variants: match value("--variants") {
                Some(v) => list("--variants", v)?,
                None if set_in_env(NTT_VARIANT) => vec![config.experiment.variant],
                None if quick => vec![StagedVariant::DEFAULT, "r16".parse()?],
                None => DEFAULT_VARIANTS
                    .iter()
                    .map(|v| v.parse())
                    .collect::<Result<_>>()?,
            },
            shapes: match value("--shapes") {
                Some(v) => v
                    .split(',')
                    .map(|x| shape("--shapes", x))
                    .collect::<Result<_>>()?,
                None if quick => vec![(13, 8)],
                None => DEFAULT_SHAPES.to_vec(),
            },
            ks: match value("--ks") {
                Some(v) => shape("--ks", v)?,
                None if quick => (13, 3),
                None => (15, 8),
            },
            reps: reps.max(1),
            warmup: if quick { 2 } else { 10 },
            json: value("--json").map(str::to_string),
        })
    }
}

/// Median and minimum of device times, in microseconds.
#[derive(Clone, Copy, Serialize)]
struct Timing {
    median_us: f64,
    min_us: f64,
    /// Median of the summed kernel durations (the span without the gaps between kernels).
    kernels_median_us: f64,
}

#[derive(Serialize)]
struct Row {
    log_n: u32,
    coeff_modulus_size: usize,
    strategy: String,
    /// The staged variant (`r4g8c2k4p2`), None for naive plans.
    variant: Option<String>,
    /// Values each staged work item holds (4, 8 or 16).
    values_per_item: Option<usize>,
    launches: usize,
    /// Staged layout: log2 of S (strided sub-transform), G (block), C and B per group.
    layout: Option<[u32; 4]>,
    /// Staged work-group sizes and local memory bytes: (block, strided).
    work_group_sizes: Option<(usize, Option<usize>)>,
    local_mem_bytes: Option<(usize, Option<usize>)>,
    bytes: usize,
    forward: Timing,
    inverse: Timing,
    copy: Timing,
    forward_gb_s: f64,
    inverse_gb_s: f64,
    copy_gb_s: f64,
    forward_over_copy: f64,
    inverse_over_copy: f64,
    checked: bool,
}

/// Key switching's fused forward transforms (the target's inverse second pass,
/// decomposition, K (K + 1) forward NTTs less the K taken from the target, inner product
/// with the key, the special prime's inverse first pass) under one variant.
#[derive(Serialize)]
struct KsRow {
    log_n: u32,
    k: usize,
    variant: String,
    launches: usize,
    layout: Option<[u32; 4]>,
    /// Rows per work group of the block pass that the plan holds (the variant's `p`, or
    /// fewer where the device or the kernel's build does not hold them).
    rows: usize,
    /// The key's bytes (2 K (K + 1) residues), the largest read of the pass.
    key_bytes: usize,
    time: Timing,
    /// A device copy of the key's words in the same run: the floor of reading it once.
    key_copy: Timing,
    time_over_key_copy: f64,
    checked: bool,
}

#[derive(Serialize)]
struct Report {
    bench: &'static str,
    device: String,
    platform: String,
    date_utc: String,
    unix_time_s: u64,
    bytes_counted: &'static str,
    reps: usize,
    warmup: usize,
    rotated_buffers: usize,
    prime_bits: &'static str,
    rows: Vec<Row>,
    /// The staged variants at the compared shapes, each shape's rows together.
    variant_rows: Vec<Row>,
    key_switch_rows: Vec<KsRow>,
    /// The variant runs that failed, with their errors.
    failures: Vec<String>,
}

/// L primes for N = 2^log_n with bit sizes cycling over 50 ..= 60 (SEAL's choice of
/// primes for those sizes, as `CoeffModulus::Create` makes them).
fn moduli(log_n: u32, count: usize) -> Result<Vec<Modulus>> {
    let bits: Vec<i32> = (0..count).map(|i| 60 - (i as i32 * 7) % 11).collect();
    coeff_modulus_create(1 << log_n, &bits)?
        .into_iter()
        .map(Modulus::new)
        .collect()
}

/// Enqueues `reps` operations (operation i on buffer i % ROTATE) back to back, waits,
/// and returns the timing of their device events.
fn time_reps(
    queue: &Queue,
    reps: usize,
    mut op: impl FnMut(usize) -> Result<Vec<Event>>,
) -> Result<Timing> {
    let runs: Vec<Vec<Event>> = (0..reps).map(&mut op).collect::<Result<_>>()?;
    queue.finish()?;
    let mut spans = Vec::with_capacity(reps);
    let mut busy = Vec::with_capacity(reps);
    for events in &runs {
        let (first, last) = (events.first(), events.last());
        let (first, last) = first.zip(last).expect("every operation enqueues a command");
        let span = cl::event_times(last)?.end - cl::event_times(first)?.start;
        spans.push(span as f64 / 1e3);
        let mut sum = 0u64;
        for e in events {
            let t = cl::event_times(e)?;
            sum += t.end - t.start;
        }
        busy.push(sum as f64 / 1e3);
    }
    Ok(Timing {
        median_us: median(spans.clone()),
        min_us: spans.iter().copied().fold(f64::INFINITY, f64::min),
        kernels_median_us: median(busy),
    })
}

/// `p.warmup` operations, then the timing of `p.reps` more.
fn measure(
    queue: &Queue,
    p: &Params,
    mut op: impl FnMut(usize) -> Result<Vec<Event>>,
) -> Result<Timing> {
    time_reps(queue, p.warmup, &mut op)?;
    time_reps(queue, p.reps, op)
}

/// `measure` of device copies of the `srcs` (rotated) into `dst`.
fn measure_copy(queue: &Queue, p: &Params, srcs: &[Region], dst: &Region) -> Result<Timing> {
    measure(queue, p, |i| {
        let mut e = Event::empty();
        cl::copy(queue, &srcs[i % srcs.len()], dst, Some(&mut e))?;
        Ok(vec![e])
    })
}

/// Forward then inverse on `input` in `buf`, each checked against the host reference.
fn check(
    queue: &Queue,
    plan: &NttPlan,
    tables: &[NttTables],
    buf: &Region,
    input: &[u64],
) -> Result<()> {
    cl::write(queue, buf, 0, input)?;
    let mut want = input.to_vec();
    host::transform_batch(&mut want, tables, host::ntt_negacyclic_harvey);
    plan.ntt_negacyclic_harvey(queue, buf, 1)?;
    let what = |dir: &str| {
        format!(
            "{dir} {} N = 2^{}",
            plan.strategy(),
            plan.coeff_count_power()
        )
    };
    if cl::download(queue, buf)? != want {
        return Err(Error::Logic(format!(
            "{} differs from the host reference",
            what("forward")
        )));
    }
    host::transform_batch(&mut want, tables, host::inverse_ntt_negacyclic_harvey);
    plan.inverse_ntt_negacyclic_harvey(queue, buf, 1)?;
    if cl::download(queue, buf)? != want || want != input {
        return Err(Error::Logic(format!(
            "{} differs from the host reference",
            what("inverse")
        )));
    }
    Ok(())
}

/// The staged layout's log2 of S, G, C and B.
fn layout(plan: &NttPlan) -> Option<[u32; 4]> {
    plan.staged_layout()
        .map(|s| [s.log_s(), s.log_g(), s.log_c(), s.log_b()])
}

fn bench_one(
    ctx: &Arc<Context>,
    queue: &Queue,
    p: &Params,
    log_n: u32,
    l: usize,
    strategy: NttStrategy,
    rng: &mut impl Rng,
) -> Result<Row> {
    let moduli = moduli(log_n, l)?;
    let tables = create_ntt_tables(log_n, &moduli)?;
    let plan = NttPlan::from_tables(ctx, queue, &tables, strategy)?;
    let words = l << log_n;
    let input: Vec<u64> = (0..words)
        .map(|i| rng.gen_range(0..moduli[(i >> log_n) % l].value()))
        .collect();
    let bufs: Vec<Region> = (0..ROTATE)
        .map(|_| ctx.upload(queue, &input))
        .collect::<Result<_>>()?;
    let copy_dst = ctx.buffer(queue, words)?;
    check(queue, &plan, &tables, &bufs[0], &input)?;

    // Outputs of either transform are fully reduced, so every buffer stays a valid input
    // for the next transform in place.
    let forward = |i: usize| plan.ntt_negacyclic_harvey(queue, &bufs[i % ROTATE], 1);
    let inverse = |i: usize| plan.inverse_ntt_negacyclic_harvey(queue, &bufs[i % ROTATE], 1);
    let forward = measure(queue, p, forward)?;
    let inverse = measure(queue, p, inverse)?;
    let copy = measure_copy(queue, p, &bufs, &copy_dst)?;

    let bytes = 2 * words * 8;
    let gb_s = |t: &Timing| bytes as f64 / (t.median_us * 1e3);
    Ok(Row {
        log_n,
        coeff_modulus_size: l,
        strategy: plan.strategy().to_string(),
        variant: match plan.strategy() {
            NttStrategy::Staged(v) => Some(v.to_string()),
            NttStrategy::Naive => None,
        },
        values_per_item: plan.staged_layout().map(|s| 1 << s.log_r()),
        launches: plan.launches_per_transform(),
        layout: layout(&plan),
        work_group_sizes: plan
            .staged_layout()
            .map(|s| (s.block_work_group_size(), s.strided_work_group_size())),
        local_mem_bytes: plan
            .staged_layout()
            .map(|s| (s.block_local_bytes(), s.strided_local_bytes())),
        bytes,
        forward_gb_s: gb_s(&forward),
        inverse_gb_s: gb_s(&inverse),
        copy_gb_s: gb_s(&copy),
        forward_over_copy: forward.median_us / copy.median_us,
        inverse_over_copy: inverse.median_us / copy.median_us,
        forward,
        inverse,
        copy,
        checked: true,
    })
}

/// Key switching's fused forward transforms at N = 2^`log_n` over K = `k` data primes and
/// a special prime, under each variant, on a random canonical target in NTT form after
/// the first pass of its inverse (`NttPlan::inverse_first_pass_from`, not timed) and a
/// random key (rotated over `ROTATE` copies, as the transforms' inputs are): the timed
/// launches finish the target's inverse, decompose, transform, take the inner product and
/// start the special prime's inverse. Every variant's output is checked against the host
/// composition (the inverse NTT, `ckks_ks_decompose`, lazy forward NTTs with the target's
/// own residues in their place, `ckks_ks_inner_product`, the first inverse rounds of the
/// special prime's residues) before it is timed. A variant that fails (build, launch,
/// check) gets its error; the others still run.
fn bench_key_switch(
    ctx: &Arc<Context>,
    queue: &Queue,
    p: &Params,
    (log_n, k): (u32, usize),
    rng: &mut impl Rng,
) -> Result<Vec<(StagedVariant, Result<KsRow>)>> {
    let n = 1usize << log_n;
    let moduli = moduli(log_n, k + 1)?;
    let tables = create_ntt_tables(log_n, &moduli)?;
    let mut residues = |count: usize, prime: &dyn Fn(usize) -> usize| -> Vec<u64> {
        (0..count * n)
            .map(|i| rng.gen_range(0..moduli[prime(i / n)].value()))
            .collect()
    };
    let target = residues(k, &|r| r);
    // Key residue (J * 2 + c) * (K + 1) + p under prime p; the special prime is the last.
    let key = residues(2 * k * (k + 1), &|r| r % (k + 1));
    let mut t_target = target.clone();
    host::transform_batch(
        &mut t_target,
        &tables[..k],
        host::inverse_ntt_negacyclic_harvey,
    );
    let mut dec = vec![0; k * (k + 1) * n];
    ckks_ks_decompose(&mut dec, &t_target, &moduli, n);
    for (r, residue) in dec.chunks_exact_mut(n).enumerate() {
        let (j, i) = (r / (k + 1), r % (k + 1));
        if j == i {
            residue.copy_from_slice(&target[j * n..][..n]);
        } else {
            host::ntt_negacyclic_harvey_lazy(residue, &tables[i]);
        }
    }
    let (mut want_prod, mut want_last) = (vec![0; 2 * k * n], vec![0; 2 * n]);
    ckks_ks_inner_product(
        &mut want_prod,
        &mut want_last,
        &dec,
        &key,
        k + 1,
        k,
        &moduli,
        n,
    );

    let upload = |words: &[u64]| -> Result<Vec<Region>> {
        (0..ROTATE).map(|_| ctx.upload(queue, words)).collect()
    };
    let (target_bufs, key_bufs) = (upload(&target)?, upload(&key)?);
    let t_bufs = (0..ROTATE)
        .map(|_| ctx.buffer(queue, k * n))
        .collect::<Result<Vec<_>>>()?;
    let prod = ctx.buffer(queue, 2 * k * n)?;
    let last = ctx.buffer(queue, 2 * n)?;
    let scratch = ctx.buffer(queue, k * (k + 1) * n)?;
    let key_copy_dst = ctx.buffer(queue, key.len())?;
    let key_copy = measure_copy(queue, p, &key_bufs, &key_copy_dst)?;
    let reduce_every = reduce_every(&moduli);

    let one = |variant: StagedVariant| -> Result<KsRow> {
        let strategy = NttStrategy::Staged(variant);
        let plan = Arc::new(NttPlan::from_tables(ctx, queue, &tables, strategy)?);
        let fused = FusedPasses::new(Arc::clone(&plan), None)?;
        for (t, target) in t_bufs.iter().zip(&target_bufs) {
            plan.inverse_first_pass_from(queue, t, target, k, 0, 1, k, false)?;
        }
        // The special prime's residues after the inverse's first pass, as `last` leaves.
        let log_g = plan
            .staged_layout()
            .ok_or_else(|| Error::Logic("a staged plan without a layout".into()))?
            .log_g();
        let mut want_last = want_last.clone();
        for residue in want_last.chunks_exact_mut(n) {
            host::inverse_ntt_negacyclic_harvey_lazy_rounds(residue, &tables[k], log_g);
        }
        let run = |i: usize| {
            let ks = KeySwitch {
                t_target: &t_bufs[i % ROTATE],
                target: &target_bufs[i % ROTATE],
                target_first: 0,
                key: &key_bufs[i % ROTATE],
                key_stride_primes: k + 1,
                key_special_index: k,
                reduce_every,
                prod: &prod,
                last: &last,
                scratch: &scratch,
                k,
                more: &[],
            };
            fused.forward_key_switch(queue, &ks, true)
        };
        cl::poison(queue, &prod, POISON)?;
        cl::poison(queue, &last, POISON)?;
        run(0)?;
        if cl::download(queue, &prod)? != want_prod || cl::download(queue, &last)? != want_last {
            return Err(Error::Logic(format!(
                "key switch {variant} N = 2^{log_n} K = {k} differs from the host reference"
            )));
        }
        let time = measure(queue, p, run)?;
        Ok(KsRow {
            log_n,
            k,
            variant: variant.to_string(),
            launches: plan.launches_per_transform(),
            layout: layout(&plan),
            rows: fused.key_switch_rows(),
            key_bytes: key.len() * 8,
            time_over_key_copy: time.median_us / key_copy.median_us,
            time,
            key_copy,
            checked: true,
        })
    };
    Ok(p.variants.iter().map(|&v| (v, one(v))).collect())
}

fn print_header() {
    println!(
        "{:>5} {:>3} {:<16} {:>4} {:<13} {:>10} {:>8} {:>7} {:>10} {:>8} {:>7} {:>9} {:>8}  check",
        "N",
        "L",
        "strategy",
        "krn",
        "S,G,C,B (log)",
        "fwd us",
        "GB/s",
        "x copy",
        "inv us",
        "GB/s",
        "x copy",
        "copy us",
        "GB/s"
    );
}

fn layout_text(layout: Option<[u32; 4]>) -> String {
    layout.map_or("-".to_string(), |[s, g, c, b]| format!("{s},{g},{c},{b}"))
}

/// Prints a checked row under `print_header` and hands it back.
fn print_row(r: Row) -> Row {
    println!(
        "{:>5} {:>3} {:<16} {:>4} {:<13} {:>10.1} {:>8.1} {:>7.2} {:>10.1} {:>8.1} {:>7.2} {:>9.1} {:>8.1}  ok",
        format!("2^{}", r.log_n),
        r.coeff_modulus_size,
        r.strategy,
        r.launches,
        layout_text(r.layout),
        r.forward.median_us,
        r.forward_gb_s,
        r.forward_over_copy,
        r.inverse.median_us,
        r.inverse_gb_s,
        r.inverse_over_copy,
        r.copy.median_us,
        r.copy_gb_s
    );
    r
}

fn main() -> Result<()> {
    // SEAL_OPENCL_LOG=debug shows the plans' choices (e.g. key switching's rows).
    seal_opencl::logging::install_stderr_subscriber(Config::from_env()?.log);
    let p = Params::from_args()?;
    let ctx = Context::new(&Config::from_env()?.device)?;
    let queue = ctx.queue(true)?;
    let info = ctx.info().clone();
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let date = seal_opencl::profiler::utc_date(unix);
    println!(
        "seal-opencl NTT bench on {} ({}), {date} UTC; local memory {} KiB, work groups <= {}",
        info.name,
        info.platform,
        info.local_mem_bytes / 1024,
        info.max_work_group_size
    );
    println!(
        "one polynomial of L residues (primes of 50-60 bits); median of {} reps after {} \
         warm-up, {ROTATE} buffers rotated; us = device time first kernel start -> last \
         kernel end; GB/s counts 2 * words * 8 bytes (one ideal read + write pass); \
         x copy = time / time of a device copy of the same words",
        p.reps, p.warmup
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x05EA_10C1);
    let mut rows = Vec::new();
    print_header();
    for &log_n in &p.sizes {
        for &l in &p.primes {
            for &strategy in &p.strategies {
                rows.push(print_row(bench_one(
                    &ctx, &queue, &p, log_n, l, strategy, &mut rng,
                )?));
            }
        }
    }
    // A variant that fails (a build or launch the device refuses, a wrong word) is
    // reported and the run goes on, so that one GPU run still measures the others; the
    // bench fails at the end.
    let mut variant_rows = Vec::new();
    let mut key_switch_rows = Vec::new();
    let mut failures = Vec::new();
    let mut failed = |what: String, e: Error| {
        println!("{what} FAILED: {e}");
        failures.push(format!("{what}: {e}"));
    };
    if !p.variants.is_empty() {
        println!("\nstaged variants (r<values per item>g<log group words>c<log min columns>)");
        print_header();
        for &(log_n, l) in &p.shapes {
            for &v in &p.variants {
                let strategy = NttStrategy::Staged(v);
                match bench_one(&ctx, &queue, &p, log_n, l, strategy, &mut rng) {
                    Ok(r) => variant_rows.push(print_row(r)),
                    Err(e) => failed(format!("2^{log_n} x {l} {strategy}"), e),
                }
            }
        }
        let (log_n, k) = p.ks;
        println!(
            "\nkey switching's fused forward transforms (FusedPasses::forward_key_switch), \
             N = 2^{log_n}, K = {k}; x key copy = time / a device copy of the key's words"
        );
        println!(
            "{:<12} {:>4} {:<13} {:>4} {:>10} {:>10} {:>12} {:>11}  check",
            "variant", "krn", "S,G,C,B (log)", "rows", "us", "min us", "key copy us", "x key copy"
        );
        for (v, r) in bench_key_switch(&ctx, &queue, &p, p.ks, &mut rng)? {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    failed(format!("key switch {v}"), e);
                    continue;
                }
            };
            println!(
                "{:<12} {:>4} {:<13} {:>4} {:>10.1} {:>10.1} {:>12.1} {:>11.2}  ok",
                r.variant,
                r.launches,
                layout_text(r.layout),
                r.rows,
                r.time.median_us,
                r.time.min_us,
                r.key_copy.median_us,
                r.time_over_key_copy
            );
            key_switch_rows.push(r);
        }
    }

    let path = match (&p.json, p.quick) {
        (Some(path), _) => Some(path.clone()),
        (None, true) => None,
        (None, false) => Some(common::results_path("ntt", &info.name, &date)),
    };
    if let Some(path) = path {
        let report = Report {
            bench: "ntt",
            device: info.name.clone(),
            platform: info.platform.clone(),
            date_utc: date,
            unix_time_s: unix,
            bytes_counted: "2 * words * 8 per transform or copy (one read + one write of the data)",
            reps: p.reps,
            warmup: p.warmup,
            rotated_buffers: ROTATE,
            prime_bits: "50..=60, cycling 60, 53, 57, 50, 54, 58, 51, ...",
            rows,
            variant_rows,
            key_switch_rows,
            failures: failures.clone(),
        };
        let text = serde_json::to_string_pretty(&report).map_err(|e| Error::Io(e.to_string()))?;
        if let Some(dir) = std::path::Path::new(&path).parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Io(format!("{path}: {e}")))?;
        }
        std::fs::write(&path, text).map_err(|e| Error::Io(format!("{path}: {e}")))?;
        println!("results written to {path}");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Error::Logic(format!(
            "{} variant runs failed: {}",
            failures.len(),
            failures.join("; ")
        )))
    }
}
