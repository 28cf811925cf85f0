//! Runtime benchmarks: allocation latency with and without the memcache, the cost of a
//! new buffer's first use, and independent batches of work on one queue vs two queues (and
//! two tiles where the device has them).
//!
//! ```text
//! cargo bench --bench runtime -- [--out PATH] [--quick] [--log-n N] [--primes L]
//!                                [--batches N] [--reps N] [--alloc-iters N]
//!                                [--first-use-buffers N] [--first-use-rounds N]
//! ```
//! `--out` (or `SEAL_OPENCL_BENCH_OUT`) writes the results as JSON (device, date,
//! parameters, numbers); the table always goes to stdout. The device comes from
//! `SEAL_OPENCL_DEVICE`, tiles from `SEAL_OPENCL_TILES` (e.g. `2` to split a device).
//! `--quick` shrinks everything for a smoke run on a CPU device.
//!
//! First use: the host time to get a buffer the pool has none of and to launch a kernel on
//! it (what an operation into a new ciphertext pays), against a buffer the pool hands out
//! again: a miss carved from a slab of a fresh pool, the miss followed by a one-item launch
//! writing the new buffer, and a hit (buffers used and given back) followed by the launch.
//! On NVIDIA's driver the first command on a new memory object pays for the object, once;
//! a miss is a region of a slab, no new object, and the pool touches each new slab when it
//! makes it, so miss + launch should cost about what hit + launch does.
//!
//! The queue measurement takes a *batch maker*: given a graph, it prepares buffers and
//! kernels once and returns a closure that enqueues one batch on that graph. A batch is
//! one staged forward NTT of a polynomial of L primes at N = 2^log_n.

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use seal_opencl::arith::{self, Modulus};
use seal_opencl::cl;
use seal_opencl::cl::{ArgType, KernelArg, KernelSig};
use seal_opencl::config::Config;
use seal_opencl::device::{Devices, Graph};
use seal_opencl::memcache::{Memcache, MemcacheConfig, DEFAULT_SLAB_BYTES};
use seal_opencl::ntt::{NttPlan, NttStrategy};
use seal_opencl::Result;

use common::median;

/// Enqueues one batch on the graph it was made for (does not wait).
type EnqueueBatch = Box<dyn FnMut() -> Result<()>>;
/// Prepares one batch's buffers and kernels on a graph.
type BatchMaker<'a> = &'a dyn Fn(&Graph) -> Result<EnqueueBatch>;

struct Params {
    out: Option<String>,
    log_n: u32,
    primes: usize,
    batches: usize,
    reps: usize,
    alloc_iters: usize,
    alloc_words: Vec<usize>,
    /// Buffers per round of the first-use measurement, and its rounds.
    first_use_buffers: usize,
    first_use_rounds: usize,
}

impl Params {
    fn from_args() -> Params {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let quick = args.iter().any(|a| a == "--quick");
        let value = |name: &str| -> Option<String> {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1).cloned())
        };
        let num = |name: &str, default: usize| -> usize {
            value(name).map_or(default, |v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{name} wants a number, got {v:?}"))
            })
        };
        Params {
            out: value("--out").or_else(|| std::env::var("SEAL_OPENCL_BENCH_OUT").ok()),
            log_n: num("--log-n", if quick { 12 } else { 16 }) as u32,
            primes: num("--primes", if quick { 2 } else { 8 }),
            batches: num("--batches", 2),
            reps: num("--reps", if quick { 3 } else { 10 }),
            alloc_iters: num("--alloc-iters", if quick { 200 } else { 2_000 }),
            // Ciphertext-sized: 2 polynomials x L = 8 primes x N words, N = 2^12 .. 2^17.
            alloc_words: if quick {
                vec![12, 14]
            } else {
                vec![12, 14, 15, 17]
            }
            .into_iter()
            .map(|log_n| 2 * 8 * (1usize << log_n))
            .collect(),
            first_use_buffers: num("--first-use-buffers", if quick { 8 } else { 100 }),
            first_use_rounds: num("--first-use-rounds", if quick { 2 } else { 5 }),
        }
    }
}

#[derive(Serialize)]
struct AllocRow {
    words: usize,
    bytes: usize,
    /// alloc + free, served from the free pool.
    cached_ns: f64,
    /// alloc + free as device allocation + release (lazy drivers may defer the memory).
    uncached_ns: f64,
    /// alloc, write one word, wait, free: the device memory is really used.
    cached_touch_ns: f64,
    uncached_touch_ns: f64,
}

/// Host ns per buffer (median over rounds) of getting `first_use_buffers` buffers of
/// `words` words, held together, from a pool with slabs (see the module documentation).
#[derive(Serialize)]
struct FirstUseRow {
    words: usize,
    miss_ns: f64,
    miss_launch_ns: f64,
    hit_launch_ns: f64,
}

#[derive(Serialize)]
struct QueueRow {
    scenario: String,
    /// (tile, queue) of each batch.
    placement: Vec<(usize, usize)>,
    median_ms: f64,
    min_ms: f64,
    /// Median one-queue time over this scenario's median time.
    speedup: f64,
}

#[derive(Serialize)]
struct Report {
    bench: &'static str,
    device: String,
    platform: String,
    tiles: usize,
    date_utc: String,
    unix_time_s: u64,
    log_n: u32,
    primes: usize,
    batches: usize,
    reps: usize,
    alloc_iters: usize,
    batch_kernel: &'static str,
    alloc: Vec<AllocRow>,
    first_use: Vec<FirstUseRow>,
    queues: Vec<QueueRow>,
}

/// One batch: a staged forward NTT of one polynomial of `primes` 50-bit primes at
/// N = 2^`log_n`, on data drawn once below the smallest prime.
fn ntt_batch(log_n: u32, primes: usize) -> impl Fn(&Graph) -> Result<EnqueueBatch> {
    move |g: &Graph| {
        let moduli = arith::get_primes(2 << log_n, 50, primes)?
            .into_iter()
            .map(Modulus::new)
            .collect::<Result<Vec<_>>>()?;
        let plan = NttPlan::new(g.context(), g.queue(), log_n, &moduli, NttStrategy::STAGED)?;
        let q_min = moduli.iter().map(Modulus::value).min().unwrap_or(2);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let data: Vec<u64> = (0..primes << log_n)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 11) % q_min
            })
            .collect();
        let buf = g.alloc(data.len())?;
        buf.write(&data)?;
        let g = g.clone();
        Ok(Box::new(move || {
            plan.ntt_negacyclic_harvey(g.queue(), buf.buffer(), 1)?;
            Ok(())
        }))
    }
}

fn time_per_op(iters: usize, mut op: impl FnMut() -> Result<()>) -> Result<f64> {
    op()?; // warm: the first round allocates, builds programs, fills the pool
    let start = Instant::now();
    for _ in 0..iters {
        op()?;
    }
    Ok(start.elapsed().as_nanos() as f64 / iters as f64)
}

fn allocation_latency(g: &Graph, p: &Params) -> Result<Vec<AllocRow>> {
    let pool: &Memcache = g.tile().memcache();
    let q = g.queue();
    let touch = |buf: &cl::Region| -> Result<()> {
        cl::fill_range(q, buf, 0, 1, 1)?;
        q.finish()?;
        Ok(())
    };
    p.alloc_words
        .iter()
        .map(|&words| {
            Ok(AllocRow {
                words,
                bytes: words * 8,
                cached_ns: time_per_op(p.alloc_iters, || pool.alloc(q, words).map(drop))?,
                uncached_ns: time_per_op(p.alloc_iters, || {
                    pool.alloc_uncached(q, words).map(drop)
                })?,
                cached_touch_ns: time_per_op(p.alloc_iters, || {
                    touch(pool.alloc(q, words)?.buffer())
                })?,
                uncached_touch_ns: time_per_op(p.alloc_iters, || {
                    touch(pool.alloc_uncached(q, words)?.buffer())
                })?,
            })
        })
        .collect()
}

/// The kernel of the first-use rows: one work item writes word 0 of its region.
const TOUCH_SOURCE: &str =
    "__kernel void touch(__global ulong *a, ulong a_at) { a += a_at; a[0] = 1; }";
const TOUCH: KernelSig = KernelSig {
    name: "touch",
    params: &[("a", ArgType::Buf)],
};

/// The first-use rows, one per size in `p.alloc_words` scaled to a product ciphertext
/// (3 polynomials where the allocation rows take 2).
fn first_use(g: &Graph, p: &Params) -> Result<Vec<FirstUseRow>> {
    let (context, q) = (g.context(), g.queue());
    let touch = TOUCH.build(&context.program(&[TOUCH_SOURCE], "")?, &[])?;
    let launch = |buf: &cl::Region| -> Result<()> {
        // SAFETY: `touch` is TOUCH's kernel, its one argument set here; one work item
        // writes word 0 of a region of at least one word.
        unsafe {
            TOUCH.set(&touch, &[("a", KernelArg::Buf(buf))], &[])?;
            cl::enqueue_on(q, &touch, 1, None, None)
        }
    };
    // The kernel's own first launch is paid here, not in a row.
    launch(&context.buffer(q, 1)?)?;
    q.finish()?;
    let slabs = MemcacheConfig {
        slab_bytes: DEFAULT_SLAB_BYTES,
        ..MemcacheConfig::default()
    };
    let n = p.first_use_buffers;
    // ns per buffer of taking `n` buffers from `pool`, launching on each if `use_them`.
    let take = |pool: &Memcache, words: usize, use_them: bool| -> Result<(f64, Vec<_>)> {
        let start = Instant::now();
        let held = (0..n)
            .map(|_| {
                let b = pool.alloc(q, words)?;
                if use_them {
                    launch(b.buffer())?;
                }
                Ok(b)
            })
            .collect::<Result<Vec<_>>>()?;
        let ns = start.elapsed().as_nanos() as f64 / n as f64;
        q.finish()?;
        Ok((ns, held))
    };
    p.alloc_words
        .iter()
        .map(|&two_polys| {
            let words = two_polys / 2 * 3;
            let (mut miss, mut miss_launch, mut hit_launch) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..p.first_use_rounds {
                miss.push(take(&Memcache::new(context.clone(), slabs), words, false)?.0);
                let pool = Memcache::new(context.clone(), slabs);
                let (ns, held) = take(&pool, words, true)?;
                miss_launch.push(ns);
                drop(held);
                hit_launch.push(take(&pool, words, true)?.0);
            }
            Ok(FirstUseRow {
                words,
                miss_ns: median(miss),
                miss_launch_ns: median(miss_launch),
                hit_launch_ns: median(hit_launch),
            })
        })
        .collect()
}

/// Runs `batches` batches made by `make`, batch k on `graphs[k % graphs.len()]`, all in
/// flight together, `reps` times; returns (median, min) wall time from the first enqueue
/// to the last batch finished.
fn run_batches(
    graphs: &[Graph],
    batches: usize,
    reps: usize,
    make: BatchMaker,
) -> Result<(Duration, Duration)> {
    let mut enqueue: Vec<(Graph, EnqueueBatch)> = (0..batches)
        .map(|k| {
            let g = graphs[k % graphs.len()].clone();
            make(&g).map(|e| (g, e))
        })
        .collect::<Result<_>>()?;
    let mut once = || -> Result<Duration> {
        let start = Instant::now();
        for (_, e) in enqueue.iter_mut() {
            e()?;
        }
        for (g, _) in &enqueue {
            g.finish()?;
        }
        Ok(start.elapsed())
    };
    once()?; // warm-up: program build, first launch
    let mut times: Vec<Duration> = (0..reps).map(|_| once()).collect::<Result<_>>()?;
    times.sort();
    Ok((times[times.len() / 2], times[0]))
}

fn queue_concurrency(devices: &Devices, p: &Params, make: BatchMaker) -> Result<Vec<QueueRow>> {
    let t0 = &devices.tiles()[0];
    let mut scenarios: Vec<(&str, Vec<Graph>)> = vec![
        ("one queue", vec![t0.graph(0)?]),
        ("two queues, one tile", vec![t0.graph(0)?, t0.graph(1)?]),
    ];
    if let Some(t1) = devices.tiles().get(1) {
        scenarios.push(("two tiles", vec![t0.graph(0)?, t1.graph(0)?]));
    }
    let mut rows = Vec::new();
    let mut baseline = None;
    for (name, graphs) in scenarios {
        let (median, min) = run_batches(&graphs, p.batches, p.reps, make)?;
        let base = *baseline.get_or_insert(median);
        rows.push(QueueRow {
            scenario: name.to_string(),
            placement: (0..p.batches)
                .map(|k| {
                    let g = &graphs[k % graphs.len()];
                    (g.tile().index(), g.queue_index())
                })
                .collect(),
            median_ms: median.as_secs_f64() * 1e3,
            min_ms: min.as_secs_f64() * 1e3,
            speedup: base.as_secs_f64() / median.as_secs_f64(),
        });
    }
    Ok(rows)
}

fn main() -> Result<()> {
    let p = Params::from_args();
    let mut options = Config::from_env()?.device_options();
    // The concurrency measurement needs two queues on a tile.
    options.queues_per_tile = options.queues_per_tile.max(2);
    let devices = Devices::new(options)?;
    let info = devices.tiles()[0].context().info().clone();
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    println!(
        "seal-opencl runtime bench on {} ({}), {} tile(s), {}",
        info.name,
        info.platform,
        devices.tiles().len(),
        seal_opencl::profiler::utc_date(unix)
    );

    let g = devices.tiles()[0].graph(0)?;
    let alloc = allocation_latency(&g, &p)?;
    println!(
        "\nallocation latency, {} iterations (ns per alloc+free)",
        p.alloc_iters
    );
    println!(
        "{:>10} {:>10} {:>12} {:>12} {:>14} {:>16}",
        "words", "MiB", "cached", "uncached", "cached+touch", "uncached+touch"
    );
    for r in &alloc {
        println!(
            "{:>10} {:>10.2} {:>12.0} {:>12.0} {:>14.0} {:>16.0}",
            r.words,
            r.bytes as f64 / (1 << 20) as f64,
            r.cached_ns,
            r.uncached_ns,
            r.cached_touch_ns,
            r.uncached_touch_ns
        );
    }

    let first = first_use(&g, &p)?;
    println!(
        "\nfirst use, {} buffers held x {} rounds (ns per buffer, median round)",
        p.first_use_buffers, p.first_use_rounds
    );
    println!(
        "{:>10} {:>8} {:>10} {:>12} {:>12}",
        "words", "MiB", "miss", "miss+launch", "hit+launch"
    );
    for r in &first {
        println!(
            "{:>10} {:>8.2} {:>10.0} {:>12.0} {:>12.0}",
            r.words,
            (r.words * 8) as f64 / (1 << 20) as f64,
            r.miss_ns,
            r.miss_launch_ns,
            r.hit_launch_ns
        );
    }

    let make = ntt_batch(p.log_n, p.primes);
    let queues = queue_concurrency(&devices, &p, &make)?;
    println!(
        "\n{} independent batches (forward NTT, N = 2^{}, {} primes), {} reps",
        p.batches, p.log_n, p.primes, p.reps
    );
    println!(
        "{:<22} {:>12} {:>10} {:>8}  placement (tile, queue)",
        "scenario", "median ms", "min ms", "speedup"
    );
    for r in &queues {
        println!(
            "{:<22} {:>12.3} {:>10.3} {:>8.2}  {:?}",
            r.scenario, r.median_ms, r.min_ms, r.speedup, r.placement
        );
    }

    if let Some(path) = &p.out {
        let report = Report {
            bench: "runtime",
            device: info.name.clone(),
            platform: info.platform.clone(),
            tiles: devices.tiles().len(),
            date_utc: seal_opencl::profiler::utc_date(unix),
            unix_time_s: unix,
            log_n: p.log_n,
            primes: p.primes,
            batches: p.batches,
            reps: p.reps,
            alloc_iters: p.alloc_iters,
            batch_kernel: "staged forward NTT, 50-bit primes",
            alloc,
            first_use: first,
            queues,
        };
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| seal_opencl::Error::Io(e.to_string()))?;
        std::fs::write(path, text).map_err(|e| seal_opencl::Error::Io(format!("{path}: {e}")))?;
        println!("\nresults written to {path}");
    }
    Ok(())
}
