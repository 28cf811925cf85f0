//! NTT benchmark: forward and inverse negacyclic NTT of a batch of L residues (one
//! polynomial over L primes of 50 to 60 bits), naive radix-2 vs staged radix-8, against a
//! device-to-device copy of the same bytes measured in the same run.
//!
//! ```text
//! cargo bench --bench ntt -- [--quick] [--sizes 12,13,..] [--primes 1,8,32]
//!                            [--strategies naive,staged] [--reps N] [--json PATH]
//! ```
//! Strategies: `--strategies`, else `SEAL_OPENCL_NTT` (one strategy) if set, else both.
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

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rand::{Rng, SeedableRng};
use serde::Serialize;

use seal_opencl::arith::{coeff_modulus_create, Modulus};
use seal_opencl::cl::{self, Buffer, Context, Event, Queue};
use seal_opencl::ntt::{
    create_ntt_tables, host, NttPlan, NttStrategy, NttTables, NTT_STRATEGY_ENV_VAR,
};
use seal_opencl::{Error, Result};

/// Input buffers a configuration rotates over.
const ROTATE: usize = 3;

struct Params {
    quick: bool,
    sizes: Vec<u32>,
    primes: Vec<usize>,
    strategies: Vec<NttStrategy>,
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
        fn list<T: std::str::FromStr>(name: &str, v: &str) -> Result<Vec<T>> {
            v.split(',')
                .map(|x| {
                    x.trim().parse().map_err(|_| {
                        Error::InvalidArgument(format!(
                            "{name} wants a comma-separated list, got {v:?}"
                        ))
                    })
                })
                .collect()
        }
        let known = [
            "--quick",
            "--sizes",
            "--primes",
            "--strategies",
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
                Some(v) => list("--strategies", v)?,
                None if std::env::var_os(NTT_STRATEGY_ENV_VAR).is_some() => {
                    vec![NttStrategy::from_env()?]
                }
                None => vec![NttStrategy::Naive, NttStrategy::STAGED],
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
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

/// Forward then inverse on `input` in `buf`, each checked against the host reference.
fn check(
    queue: &Queue,
    plan: &NttPlan,
    tables: &[NttTables],
    buf: &Buffer<u64>,
    input: &[u64],
) -> Result<()> {
    buf.write(input).enq()?;
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
    if cl::download(buf)? != want {
        return Err(Error::Logic(format!(
            "{} differs from the host reference",
            what("forward")
        )));
    }
    host::transform_batch(&mut want, tables, host::inverse_ntt_negacyclic_harvey);
    plan.inverse_ntt_negacyclic_harvey(queue, buf, 1)?;
    if cl::download(buf)? != want || want != input {
        return Err(Error::Logic(format!(
            "{} differs from the host reference",
            what("inverse")
        )));
    }
    Ok(())
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
    let bufs: Vec<Buffer<u64>> = (0..ROTATE)
        .map(|_| ctx.upload(queue, &input))
        .collect::<Result<_>>()?;
    let copy_dst = ctx.buffer(queue, words)?;
    check(queue, &plan, &tables, &bufs[0], &input)?;

    // Outputs of either transform are fully reduced, so every buffer stays a valid input
    // for the next transform in place.
    let forward = |i: usize| plan.ntt_negacyclic_harvey(queue, &bufs[i % ROTATE], 1);
    let inverse = |i: usize| plan.inverse_ntt_negacyclic_harvey(queue, &bufs[i % ROTATE], 1);
    let copy = |i: usize| {
        let mut e = Event::empty();
        cl::copy(queue, &bufs[i % ROTATE], &copy_dst, Some(&mut e))?;
        Ok(vec![e])
    };
    time_reps(queue, p.warmup, forward)?;
    let forward = time_reps(queue, p.reps, forward)?;
    time_reps(queue, p.warmup, inverse)?;
    let inverse = time_reps(queue, p.reps, inverse)?;
    time_reps(queue, p.warmup, copy)?;
    let copy = time_reps(queue, p.reps, copy)?;

    let bytes = 2 * words * 8;
    let gb_s = |t: &Timing| bytes as f64 / (t.median_us * 1e3);
    Ok(Row {
        log_n,
        coeff_modulus_size: l,
        strategy: strategy.to_string(),
        launches: plan.launches_per_transform(),
        layout: plan
            .staged_layout()
            .map(|s| [s.log_s(), s.log_g(), s.log_c(), s.log_b()]),
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

fn main() -> Result<()> {
    let p = Params::from_args()?;
    let ctx = Context::from_env()?;
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
    println!(
        "{:>5} {:>3} {:<7} {:>4} {:<13} {:>10} {:>8} {:>7} {:>10} {:>8} {:>7} {:>9} {:>8}  check",
        "N",
        "L",
        "strat",
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
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x05EA_10C1);
    let mut rows = Vec::new();
    for &log_n in &p.sizes {
        for &l in &p.primes {
            for &strategy in &p.strategies {
                let r = bench_one(&ctx, &queue, &p, log_n, l, strategy, &mut rng)?;
                let layout = r
                    .layout
                    .map_or("-".to_string(), |[s, g, c, b]| format!("{s},{g},{c},{b}"));
                println!(
                    "{:>5} {:>3} {:<7} {:>4} {:<13} {:>10.1} {:>8.1} {:>7.2} {:>10.1} {:>8.1} {:>7.2} {:>9.1} {:>8.1}  ok",
                    format!("2^{log_n}"),
                    l,
                    r.strategy,
                    r.launches,
                    layout,
                    r.forward.median_us,
                    r.forward_gb_s,
                    r.forward_over_copy,
                    r.inverse.median_us,
                    r.inverse_gb_s,
                    r.inverse_over_copy,
                    r.copy.median_us,
                    r.copy_gb_s
                );
                rows.push(r);
            }
        }
    }

    let path = match (&p.json, p.quick) {
        (Some(path), _) => Some(path.clone()),
        (None, true) => None,
        (None, false) => {
            let device: String = info
                .name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            Some(format!("benches/results/ntt-{device}-{}.json", &date[..10]))
        }
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
        };
        let text = serde_json::to_string_pretty(&report).map_err(|e| Error::Io(e.to_string()))?;
        if let Some(dir) = std::path::Path::new(&path).parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Io(format!("{path}: {e}")))?;
        }
        std::fs::write(&path, text).map_err(|e| Error::Io(format!("{path}: {e}")))?;
        println!("results written to {path}");
    }
    Ok(())
}
