//! Runtime benchmarks: allocation latency with and without the memcache, and independent
//! batches of work on one queue vs two queues (and two tiles where the device has them).
//!
//! ```text
//! cargo bench --bench runtime -- [--out PATH] [--quick] [--log-n N] [--primes L]
//!                                [--batches N] [--reps N] [--alloc-iters N]
//! ```
//! `--out` (or `SEAL_OPENCL_BENCH_OUT`) writes the results as JSON (device, date,
//! parameters, numbers); the table always goes to stdout. The device comes from
//! `SEAL_OPENCL_DEVICE`, tiles from `SEAL_OPENCL_TILES` (e.g. `2` to split a device).
//! `--quick` shrinks everything for a smoke run on a CPU device.
//!
//! First use: the host time to get a buffer the pool has none of and to launch a kernel on
//! it (what an operation into a new ciphertext pays), taken apart: a miss carved from a
//! slab of a fresh pool, that miss followed by a one-item kernel launch writing the new
//! buffer, a pool hit followed by the same launch, and the launch on a new sub-buffer of an
//! existing buffer and on a new buffer of its own, without the pool.
//!
//! The queue measurement takes a *batch maker*: given a graph, it prepares buffers and
//! kernels once and returns a closure that enqueues one batch on that graph. A batch is
//! one staged forward NTT of a polynomial of L primes at N = 2^log_n.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use seal_opencl::arith::{self, Modulus};
use seal_opencl::cl;
use seal_opencl::config::Config;
use seal_opencl::device::{Devices, Graph};
use seal_opencl::memcache::{Memcache, MemcacheConfig, DEFAULT_SLAB_BYTES};
use seal_opencl::ntt::{NttPlan, NttStrategy};
use seal_opencl::Result;

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

/// Host time per buffer, median over rounds, of getting a buffer of `words` words and
/// using it first (see the module documentation), by way of getting it and using it.
#[derive(Serialize)]
struct FirstUseRow {
    words: usize,
    /// (way, ns per buffer) in the order of [`FIRST_USE_WAYS`].
    ns: Vec<(&'static str, f64)>,
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
    let touch = |buf: &cl::Buffer<u64>| -> Result<()> {
        buf.cmd().fill(1u64, Some(1)).enq()?;
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

/// The kernels of the first-use measurement: `touch` writes word 0 of its buffer,
/// `touch_other` does the same (a second kernel, to see whether a buffer's first-use cost
/// is paid once per buffer or once per kernel), `touch8` touches eight buffers in one launch.
const TOUCH_SOURCE: &str = "\
__kernel void touch(__global ulong *a) { a[0] = 1; }
__kernel void touch_other(__global ulong *a) { a[0] = 2; }
__kernel void add_one(__global ulong *d, __global const ulong *s) { size_t i = get_global_id(0); d[i] = s[i] + 1; }
__kernel void touch8(__global ulong *a, __global ulong *b, __global ulong *c, __global ulong *d,
                     __global ulong *e, __global ulong *f, __global ulong *g, __global ulong *h)
{ a[0] = 1; b[0] = 1; c[0] = 1; d[0] = 1; e[0] = 1; f[0] = 1; g[0] = 1; h[0] = 1; }
";

/// Where a first-use row's buffers come from.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    /// A pool with 64 MiB slabs (sub-buffers), as the backend's.
    Slabs,
    /// A pool without slabs: every new buffer a device allocation of its own.
    Own,
    /// New sub-buffers of one existing buffer, no pool.
    SubBuffers,
    /// New sub-buffers of one existing buffer whose words were all written before.
    SubBuffersOfWritten,
}

/// The command a first-use row times on each buffer after getting it.
#[derive(Clone, Copy, PartialEq)]
enum Use {
    Nothing,
    Touch,
    Other,
    Fill,
    /// One `touch8` launch per eight buffers.
    Touch8,
}

/// One way of getting and using buffers: from `source`, after the pool's buffers were
/// used by the kernels of `before` in turn (each on every buffer, then freed: the timed
/// requests hit), then `then` on each.
struct Way {
    name: &'static str,
    source: Source,
    before: &'static [Use],
    then: Use,
}

const FIRST_USE_WAYS: [Way; 11] = [
    Way { name: "miss", source: Source::Slabs, before: &[], then: Use::Nothing },
    Way { name: "miss+touch", source: Source::Slabs, before: &[], then: Use::Touch },
    Way { name: "miss+fill", source: Source::Slabs, before: &[], then: Use::Fill },
    Way { name: "miss+touch8", source: Source::Slabs, before: &[], then: Use::Touch8 },
    Way { name: "touched+touch", source: Source::Slabs, before: &[Use::Touch], then: Use::Touch },
    Way { name: "touched+other", source: Source::Slabs, before: &[Use::Touch], then: Use::Other },
    Way { name: "t,o+touch", source: Source::Slabs, before: &[Use::Touch, Use::Other], then: Use::Touch },
    Way { name: "own:miss+touch", source: Source::Own, before: &[], then: Use::Touch },
    Way { name: "own:touched+other", source: Source::Own, before: &[Use::Touch], then: Use::Other },
    Way { name: "sub-buf+touch", source: Source::SubBuffers, before: &[], then: Use::Touch },
    Way { name: "sub-written+touch", source: Source::SubBuffersOfWritten, before: &[], then: Use::Touch },
];

/// The first-use rows, one per size in `p.alloc_words` scaled to a product ciphertext
/// (3 polynomials where the allocation rows take 2), and one of 512 words.
fn first_use(g: &Graph, p: &Params) -> Result<Vec<FirstUseRow>> {
    let context = g.context();
    let q = g.queue();
    let program = context.program(&[TOUCH_SOURCE], "")?;
    let kernel = |name: &str, args: usize| -> Result<ocl::Kernel> {
        let mut builder = ocl::Kernel::builder();
        builder.program(&program).name(name);
        for _ in 0..args {
            builder.arg(None::<&cl::Buffer<u64>>);
        }
        Ok(builder.build()?)
    };
    let (touch, other, touch8) = (kernel("touch", 1)?, kernel("touch_other", 1)?, kernel("touch8", 8)?);
    // A kernel of its own for SVM pointers: its argument is never a memory object.
    let svm_touch = kernel("touch", 1)?;
    let launch = |k: &ocl::Kernel, bufs: &[&cl::Buffer<u64>]| -> Result<()> {
        for (i, b) in bufs.iter().enumerate() {
            k.set_arg(i, *b)?;
        }
        // SAFETY: one work item writes word 0 of buffers of at least one word.
        unsafe { cl::enqueue_on(q, k, 1, None, None) }
    };
    // Each kernel launched once first, so that no row pays a kernel's own first launch.
    let scratch = context.buffer(q, 8)?;
    launch(&touch, &[&scratch])?;
    launch(&other, &[&scratch])?;
    launch(&touch8, &[&scratch; 8])?;
    q.finish()?;
    let slabs = MemcacheConfig {
        slab_bytes: DEFAULT_SLAB_BYTES,
        ..MemcacheConfig::default()
    };
    let n = p.first_use_buffers.div_ceil(8) * 8;
    // ns per buffer of `make` giving `n` buffers held together; the queue is drained after.
    let timed = |make: &mut dyn FnMut() -> Result<Vec<cl::Buffer<u64>>>| -> Result<f64> {
        let start = Instant::now();
        let held = make()?;
        let ns = start.elapsed().as_nanos() as f64 / n as f64;
        q.finish()?;
        drop(held);
        Ok(ns)
    };
    let sizes = std::iter::once(512).chain(p.alloc_words.iter().map(|&two| two / 2 * 3));
    sizes
        .map(|words| {
            let mut rounds: Vec<Vec<f64>> = vec![Vec::new(); FIRST_USE_WAYS.len()];
            let mut names: Vec<&'static str> = FIRST_USE_WAYS.iter().map(|w| w.name).collect();
            for _ in 0..p.first_use_rounds {
                for (way, row) in FIRST_USE_WAYS.iter().zip(rounds.iter_mut()) {
                    let config = match way.source {
                        Source::Own => MemcacheConfig::default(),
                        _ => slabs,
                    };
                    let pool = Memcache::new(context.clone(), config);
                    let parent = context.buffer(q, words * n)?;
                    if way.source == Source::SubBuffersOfWritten {
                        cl::fill_range(q, &parent, 0, words * n, 0)?;
                        q.finish()?;
                    }
                    let apply = |u: Use, bufs: &[&cl::Buffer<u64>]| -> Result<()> {
                        for chunk in bufs.chunks(8) {
                            match u {
                                Use::Nothing => {}
                                Use::Touch8 if chunk.len() == 8 => launch(&touch8, chunk)?,
                                Use::Touch8 => {}
                                Use::Fill => chunk.iter().try_for_each(|b| cl::fill_range(q, b, 0, 1, 1))?,
                                Use::Touch => chunk.iter().try_for_each(|b| launch(&touch, &[*b]))?,
                                Use::Other => chunk.iter().try_for_each(|b| launch(&other, &[*b]))?,
                            }
                        }
                        Ok(())
                    };
                    if !way.before.is_empty() {
                        let used = (0..n)
                            .map(|_| pool.alloc(q, words))
                            .collect::<Result<Vec<_>>>()?;
                        let bufs: Vec<&cl::Buffer<u64>> = used.iter().map(|b| b.buffer()).collect();
                        for &u in way.before {
                            apply(u, &bufs)?;
                        }
                        q.finish()?;
                    }
                    let mut pooled = Vec::new();
                    let ns = timed(&mut || {
                        let mut held = Vec::with_capacity(n);
                        for i in 0..n {
                            let b = match way.source {
                                Source::SubBuffers | Source::SubBuffersOfWritten => {
                                    cl::sub_buffer(&parent, i * words, words)?
                                }
                                _ => {
                                    let b = pool.alloc(q, words)?;
                                    let buffer = b.buffer().clone();
                                    pooled.push(b);
                                    buffer
                                }
                            };
                            held.push(b);
                            if way.then != Use::Touch8 {
                                apply(way.then, &[&held[i]])?;
                            } else if held.len() % 8 == 0 {
                                let last: Vec<&cl::Buffer<u64>> = held[i - 7..].iter().collect();
                                apply(Use::Touch8, &last)?;
                            }
                        }
                        Ok(held)
                    })?;
                    row.push(ns);
                }
            }
            for written in [false, true] {
                let name = if written { "svm-written+touch" } else { "svm+touch" };
                let ns: Vec<f64> = (0..p.first_use_rounds)
                    .filter_map(|_| svm_first_use(q, &svm_touch, words, n, written).transpose())
                    .collect::<Result<_>>()?;
                rounds.push(ns);
                if names.len() < rounds.len() {
                    names.push(name);
                }
            }
            Ok(FirstUseRow {
                words,
                ns: names.iter().copied().zip(rounds.into_iter().map(median)).collect(),
            })
        })
        .collect()
}

/// ns per region of `n` regions of `words` words of one coarse-grained SVM allocation,
/// each passed to `touch` as a pointer (`clSetKernelArgSVMPointer`, no memory object per
/// region); with `written`, the allocation is filled first. None where SVM is missing.
fn svm_first_use(q: &cl::Queue, kernel: &ocl::Kernel, words: usize, n: usize, written: bool) -> Result<Option<f64>> {
    use cl_sys::{clEnqueueNDRangeKernel, clEnqueueSVMMemFill, clSVMAlloc, clSVMFree, clSetKernelArgSVMPointer, CL_MEM_READ_WRITE};
    let context = q.context();
    let bytes = words * n * 8;
    // SAFETY: a plain allocation on a live context; checked for null below and freed
    // with clSVMFree after the queue finished every command using it.
    let base = unsafe { clSVMAlloc(context.as_ptr(), CL_MEM_READ_WRITE, bytes, 0) };
    if base.is_null() {
        return Ok(None);
    }
    let zero = 0u64;
    let mut status = 0;
    if written {
        // SAFETY: the fill lies inside the allocation; the pattern outlives the call
        // (blocking on the finish below).
        status = unsafe { clEnqueueSVMMemFill(q.as_ptr(), base, &zero as *const u64 as *const _, 8, bytes, 0, std::ptr::null(), std::ptr::null_mut()) };
        q.finish()?;
    }
    let global = 1usize;
    let start = Instant::now();
    for i in 0..n {
        if status != 0 {
            break;
        }
        // SAFETY: the pointer lies inside the allocation, which outlives the launch; the
        // kernel writes word 0 of it.
        status = unsafe {
            let ptr = (base as *mut u64).add(i * words) as *const _;
            let s = clSetKernelArgSVMPointer(kernel.as_core().as_ptr(), 0, ptr);
            if s != 0 {
                s
            } else {
                clEnqueueNDRangeKernel(q.as_ptr(), kernel.as_core().as_ptr(), 1, std::ptr::null(), &global, std::ptr::null(), 0, std::ptr::null(), std::ptr::null_mut())
            }
        };
    }
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    q.finish()?;
    // SAFETY: every command using the allocation finished.
    unsafe { clSVMFree(context.as_ptr(), base) };
    if status != 0 {
        return Err(seal_opencl::Error::Logic(format!("SVM launch failed with {status}")));
    }
    Ok(Some(ns))
}

/// Wall ns per launch of `add_one` over `words` words (20 launches after one warm-up,
/// then a finish) between two memory objects and between two regions of one SVM
/// allocation: whether kernels run as fast on SVM words.
fn svm_kernel_speed(context: &cl::Context, q: &cl::Queue, words: usize) -> Result<Option<(f64, f64)>> {
    use cl_sys::{clEnqueueNDRangeKernel, clSVMAlloc, clSVMFree, clSetKernelArgSVMPointer, CL_MEM_READ_WRITE};
    let program = context.program(&[TOUCH_SOURCE], "")?;
    let build = || -> Result<ocl::Kernel> {
        Ok(ocl::Kernel::builder()
            .program(&program)
            .name("add_one")
            .arg(None::<&cl::Buffer<u64>>)
            .arg(None::<&cl::Buffer<u64>>)
            .build()?)
    };
    const LAUNCHES: usize = 20;
    let (d, s) = (context.buffer(q, words)?, context.buffer(q, words)?);
    let mem_kernel = build()?;
    mem_kernel.set_arg(0, &d)?;
    mem_kernel.set_arg(1, &s)?;
    let mut mem_ns = 0.0;
    for round in 0..2 {
        let start = Instant::now();
        for _ in 0..if round == 0 { 1 } else { LAUNCHES } {
            // SAFETY: both buffers hold `words` words, one per work item.
            unsafe { cl::enqueue_on(q, &mem_kernel, words, None, None) }?;
        }
        q.finish()?;
        mem_ns = start.elapsed().as_nanos() as f64 / LAUNCHES as f64;
    }
    let svm_kernel = build()?;
    // SAFETY: a plain allocation on a live context, checked for null, freed after the
    // queue finished every command using it.
    let base = unsafe { clSVMAlloc(q.context().as_ptr(), CL_MEM_READ_WRITE, words * 16, 0) };
    if base.is_null() {
        return Ok(None);
    }
    let mut svm_ns = 0.0;
    let mut status = 0;
    for round in 0..2 {
        let start = Instant::now();
        for _ in 0..if round == 0 { 1 } else { LAUNCHES } {
            // SAFETY: two disjoint regions of `words` words inside the allocation, one word
            // per work item; the allocation outlives the launches (finish below).
            status |= unsafe {
                let k = svm_kernel.as_core().as_ptr();
                clSetKernelArgSVMPointer(k, 0, base as *const _)
                    | clSetKernelArgSVMPointer(k, 1, (base as *mut u64).add(words) as *const _)
                    | clEnqueueNDRangeKernel(q.as_ptr(), k, 1, std::ptr::null(), &words, std::ptr::null(), 0, std::ptr::null(), std::ptr::null_mut())
            };
        }
        q.finish()?;
        svm_ns = start.elapsed().as_nanos() as f64 / LAUNCHES as f64;
    }
    // SAFETY: every command using the allocation finished.
    unsafe { clSVMFree(q.context().as_ptr(), base) };
    if status != 0 {
        return Err(seal_opencl::Error::Logic(format!("SVM launch failed with {status}")));
    }
    Ok(Some((mem_ns, svm_ns)))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
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
    print!("{:>10} {:>8}", "words", "MiB");
    for (name, _) in first.first().map_or(&[][..], |r| &r.ns[..]) {
        print!(" {name:>15}");
    }
    println!();
    for r in &first {
        print!("{:>10} {:>8.2}", r.words, (r.words * 8) as f64 / (1 << 20) as f64);
        for (_, ns) in &r.ns {
            print!(" {ns:>15.0}");
        }
        println!();
    }

    for words in [1usize << 20, 1 << 23] {
        if let Some((mem, svm)) = svm_kernel_speed(g.context(), g.queue(), words)? {
            println!(
                "add_one over {words} words: {:.1} us between memory objects, {:.1} us between SVM regions",
                mem / 1e3,
                svm / 1e3
            );
        }
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
