//! Single CKKS operations at the default parameters: forward and inverse NTT of
//! a whole ciphertext (transform_to_ntt / transform_from_ntt), multiply, relinearize,
//! rescale_to_next, rotate_vector (one step), add and multiply_plain, through patched
//! SEAL on `.gpu()` ciphertexts with the tuned backend, each result checked equal to SEAL's
//! CPU result.
//!
//! ```text
//! cargo bench --bench ops -- [--quick] [--log-n 15] [--primes P] [--reps R] [--json PATH]
//! ```
//! Defaults: N = 2^15 with `routines::default_data_primes` ({60, 50 x 7, 60}),
//! R = 20; `--quick`: N = 2^13, R = 3.
//!
//! Per operation: wall us (median over R runs, each ending with a synchronisation), host us
//! (the backend's time to issue the call, from the profiler) and kernel us (profiler events
//! per run); with the profiler attached, launches carry events, so these host times are
//! above what a program without a profiler sees (examples/cpp/host_path measures that), and GB/s = bytes / kernel time, where bytes counts
//! one ideal pass over the operands: every input polynomial read once, every output
//! polynomial written once, plaintext and key read once (K data primes, c = K * N words
//! per polynomial, 8 bytes per word; e.g. multiply: 2 + 2 read, 3 written; relinearize: 3
//! read + the key, 2 written). For key switching (relinearize, rotate), `x key read` =
//! kernel time / the time to read the key once at the device's copy bandwidth, measured in
//! the same run with `cl::copy` of a buffer of the key's size (a copy reads and writes
//! it, so one read takes half the copy time). The key: K keys of 2 polynomials over the
//! key level's K + 1 primes. `x copy` = kernel time / the event time of one `cl::copy` that
//! moves the operation's bytes (reads half, writes half), also measured in the run.

mod common;

use std::time::Duration;

use rand::{Rng, SeedableRng};
use serde::Serialize;

use common::{us, Args, Run, TUNED};
use seal_opencl::cl::{self, Context, Event, Queue};
use seal_opencl::config::Config;
use seal_opencl::profiler;
use seal_opencl::{Error, Result};
use seal_opencl_testkit::routines::{default_bit_sizes, default_data_primes, time_op, Workload};
use seal_opencl_testkit::seal_c::{Ciphertext, Plaintext};

const USAGE: &str = "ops [--quick] [--log-n 15] [--primes P] [--reps R] [--json PATH]";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    NttForward,
    NttInverse,
    Multiply,
    Relinearize,
    Rescale,
    Rotate,
    Add,
    MultiplyPlain,
}

impl Op {
    const ALL: [Op; 8] = [
        Op::NttForward,
        Op::NttInverse,
        Op::Multiply,
        Op::Relinearize,
        Op::Rescale,
        Op::Rotate,
        Op::Add,
        Op::MultiplyPlain,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::NttForward => "transform_to_ntt",
            Op::NttInverse => "transform_from_ntt",
            Op::Multiply => "multiply",
            Op::Relinearize => "relinearize",
            Op::Rescale => "rescale_to_next",
            Op::Rotate => "rotate_vector",
            Op::Add => "add",
            Op::MultiplyPlain => "multiply_plain",
        }
    }

    /// Polynomials (of c = K * N words) read and written, plaintext polynomials read,
    /// whether the key is read, and the output's primes lost (rescale).
    fn traffic(self) -> (usize, usize, usize, bool) {
        match self {
            Op::NttForward | Op::NttInverse => (2, 2, 0, false),
            Op::Multiply => (4, 3, 0, false),
            Op::Relinearize => (3, 2, 0, true),
            Op::Rescale => (2, 2, 0, false),
            Op::Rotate => (2, 2, 0, true),
            Op::Add => (4, 2, 0, false),
            Op::MultiplyPlain => (2, 2, 1, false),
        }
    }

    fn run(
        self,
        w: &Workload,
        x: &mut Ciphertext,
        b: &Ciphertext,
        plain: &Plaintext,
    ) -> Result<()> {
        let ev = &w.evaluator;
        match self {
            Op::NttForward => ev.transform_to_ntt_inplace(x),
            Op::NttInverse => ev.transform_from_ntt_inplace(x),
            Op::Multiply => ev.multiply_inplace(x, b),
            Op::Relinearize => ev.relinearize_inplace(x, &w.relin_keys),
            Op::Rescale => ev.rescale_to_next_inplace(x),
            Op::Rotate => ev.rotate_vector_inplace(x, 1, &w.galois_keys),
            Op::Add => ev.add_inplace(x, b),
            Op::MultiplyPlain => ev.multiply_plain_inplace(x, plain),
        }
    }
}

#[derive(Serialize)]
struct Row {
    op: &'static str,
    wall_us: f64,
    /// Host time the backend took to issue the call (profiler).
    host_us: f64,
    kernel_us: f64,
    launches: f64,
    ntt_share: f64,
    bytes: usize,
    gb_s: f64,
    /// A one-launch device copy moving the same bytes (half read, half written), and the
    /// kernel time over it: the floor a memory-bound operation is held to.
    copy_same_bytes_us: f64,
    over_copy: f64,
    key_bytes: Option<usize>,
    key_read_us: Option<f64>,
    over_key_read: Option<f64>,
    identical: bool,
}

#[derive(Serialize)]
struct Body {
    poly_modulus_degree: u64,
    coeff_modulus_bits: Vec<i32>,
    reps: usize,
    bytes_counted: &'static str,
    copy_bytes: usize,
    copy_us: f64,
    copy_gb_s: f64,
    rows: Vec<Row>,
}

/// Median device time of `reps` copies of a `words`-word buffer (plus one warm-up), on
/// `queue` (profiling) of `ctx`.
fn copy_time(ctx: &Context, queue: &Queue, words: usize, reps: usize) -> Result<Duration> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let data: Vec<u64> = (0..words).map(|_| rng.gen()).collect();
    let (src, dst) = (ctx.upload(queue, &data)?, ctx.buffer(queue, words)?);
    let mut times = Vec::new();
    for i in 0..=reps {
        let mut e = Event::empty();
        cl::copy(queue, &src, &dst, Some(&mut e))?;
        queue.finish()?;
        let t = cl::event_times(&e)?;
        if i > 0 {
            times.push(Duration::from_nanos(t.end - t.start));
        }
    }
    Ok(seal_opencl_testkit::routines::median(times))
}

fn main() -> Result<()> {
    let args = Args::parse(USAGE, &["--log-n", "--primes", "--reps"])?;
    let log_n = args.count("--log-n", 13, 15)? as u32;
    let default_primes = default_data_primes(log_n)?;
    let primes = args.count("--primes", default_primes, default_primes)?;
    let reps = args.count("--reps", 3, 20)?;
    let bits = default_bit_sizes(primes);
    let n = 1usize << log_n;

    let profiler = profiler::enable_global();
    let mut run = Run::new("ops", args.quick)?;
    run.banner();
    TUNED.install()?;
    let w = Workload::new(n as u64, &bits, 50)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
    let (a, b) = (w.encrypt_random(&mut rng)?, w.encrypt_random(&mut rng)?);
    let plain = w.plain_random(&mut rng)?;
    let (mut b_dev, mut plain_dev) = (b.try_clone()?, plain.try_clone()?);
    b_dev.gpu()?;
    plain_dev.gpu()?;
    // Inputs: a in coefficient form for the forward NTT, a * b (3 polynomials) for
    // relinearize, a itself otherwise.
    let mut coeff = a.try_clone()?;
    w.evaluator.transform_from_ntt_inplace(&mut coeff)?;
    let mut product = a.try_clone()?;
    w.evaluator.multiply_inplace(&mut product, &b)?;

    let c = primes * n * 8;
    let key_bytes = primes * 2 * (primes + 1) * n * 8;
    let copy_ctx = Context::new(&Config::from_env()?.device)?;
    let copy_queue = copy_ctx.queue(true)?;
    let copy_time = |words| copy_time(&copy_ctx, &copy_queue, words, reps.max(5));
    let copy = copy_time(key_bytes / 8)?;
    let key_read_us = us(copy) / 2.0;
    println!(
        "N = {n}, coeff_modulus bits {bits:?}, median of {reps} runs after a warm-up; \
         copy of the key's {} MB: {:.1} us = {:.1} GB/s (read + write)",
        key_bytes as f64 / 1e6,
        us(copy),
        2.0 * key_bytes as f64 / (us(copy) * 1e3)
    );
    println!(
        "{:<19} {:>10} {:>10} {:>10} {:>8} {:>8} {:>7} {:>5} {:>11}  check",
        "operation",
        "wall us",
        "host us",
        "kernel us",
        "launches",
        "GB/s",
        "x copy",
        "NTT%",
        "x key read"
    );
    let mut rows = Vec::new();
    for op in Op::ALL {
        let input = match op {
            Op::NttForward => &coeff,
            Op::Relinearize => &product,
            _ => &a,
        };
        let (_, cpu) = time_op(&w.evaluator, input, 1, None, |x| op.run(&w, x, &b, &plain))?;
        let device = |reps| {
            time_op(&w.evaluator, input, reps, Some(&profiler), |x| {
                op.run(&w, x, &b_dev, &plain_dev)
            })
        };
        device(1)?;
        let (t, result) = device(reps)?;
        let stats = profiler.add_operation(op.name(), t, reps as u32)?;
        let (read, written, plain_read, key) = op.traffic();
        let written_bytes = if op == Op::Rescale {
            written * (primes - 1) * n * 8
        } else {
            written * c
        };
        let bytes = (read + plain_read) * c + written_bytes + if key { key_bytes } else { 0 };
        let kernel_us = stats.kernel_ns / 1e3;
        let copy_same_bytes_us = us(copy_time(bytes / 16)?);
        let row = Row {
            op: op.name(),
            wall_us: us(t),
            host_us: stats.host_ns / 1e3,
            kernel_us,
            launches: stats.kernels.iter().map(|k| k.calls_per_loop).sum(),
            ntt_share: stats.ntt_share,
            bytes,
            gb_s: bytes as f64 / (kernel_us * 1e3),
            copy_same_bytes_us,
            over_copy: kernel_us / copy_same_bytes_us,
            key_bytes: key.then_some(key_bytes),
            key_read_us: key.then_some(key_read_us),
            over_key_read: key.then_some(kernel_us / key_read_us),
            identical: result.data()? == cpu.data()?,
        };
        println!(
            "{:<19} {:>10.1} {:>10.1} {:>10.1} {:>8.0} {:>8.1} {:>7.2} {:>4.0}% {:>11}  {}",
            row.op,
            row.wall_us,
            row.host_us,
            row.kernel_us,
            row.launches,
            row.gb_s,
            row.over_copy,
            row.ntt_share * 100.0 + 0.0,
            row.over_key_read.map_or("-".into(), |x| format!("{x:.2}")),
            common::check_cell(row.identical)
        );
        rows.push(row);
    }
    let all = rows.iter().all(|r| r.identical);
    let body = Body {
        poly_modulus_degree: n as u64,
        coeff_modulus_bits: bits,
        reps,
        bytes_counted: "inputs read once + outputs written once (+ plaintext, + key for key \
                        switching), 8 bytes per word; GB/s = bytes / kernel time",
        copy_bytes: key_bytes,
        copy_us: us(copy),
        copy_gb_s: 2.0 * key_bytes as f64 / (us(copy) * 1e3),
        rows,
    };
    common::write_json(&args, &mut run, &body)?;
    if !run.cpu_fallbacks.is_empty() {
        return Err(Error::Logic(format!(
            "SEAL ran on the CPU: {:?}",
            run.cpu_fallbacks
        )));
    }
    common::require_identical(all)
}
