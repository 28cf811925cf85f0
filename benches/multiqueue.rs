//! Multi-queue throughput: independent MulLin streams (tensor product, then key
//! switching of the third polynomial, as `relinearize` does) on 1, 2 and 4 in-order queues
//! of one tile.
//!
//! Through SEAL the backend (`seal_backend::Backend`) gives each issuing thread a queue of
//! its own, so queues there come with threads (`examples/cpp/host_path` measures that, with
//! the driver's cross-thread cost). This bench separates the queues from the threads: one
//! host thread drives the library below SEAL: `Devices` with N queues per tile
//! (`DeviceOptions::queues_per_tile`, what `SEAL_OPENCL_QUEUES` sets), N graphs
//! (`Devices::graph` hands them out round-robin over the queues), one `CkksContext`, and
//! `LevelOps::tensor` + `LevelOps::switch_key` on random reduced data and a random key. One
//! host thread enqueues S MulLins per stream, interleaved over the streams, then waits
//! for all queues. Throughput = N * S / wall time. Check: every stream's result equals
//! the first stream's (same inputs, so any difference is a race between queues).
//!
//! ```text
//! cargo bench --bench multiqueue -- [--quick] [--queues 1,2,4] [--log-n 15] [--primes P]
//!                                   [--per-stream S] [--reps R] [--json PATH]
//! ```
//! Defaults: N = 2^15 with `routines::default_data_primes`, S = 20, R = 5 (median wall);
//! `--quick`: 2^13, S = 4, R = 2.

mod common;

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use serde::Serialize;

use common::{us, Args, Run};
use seal_opencl::arith::coeff_modulus_create;
use seal_opencl::ckks::context::{CkksContext, KernelChoices, KswitchKey};
use seal_opencl::ckks::ops::LevelOps;
use seal_opencl::cl::{self, Region};
use seal_opencl::config::Config;
use seal_opencl::device::{DeviceOptions, Devices};
use seal_opencl::{Error, Result};
use seal_opencl_testkit::routines::{default_bit_sizes, default_data_primes, median};

const USAGE: &str = "multiqueue [--quick] [--queues 1,2,4] [--log-n 15] [--primes P] \
                     [--per-stream S] [--reps R] [--json PATH]";

#[derive(Serialize)]
struct Row {
    queues: usize,
    streams: usize,
    mullin_per_stream: usize,
    wall_us: f64,
    mullin_per_s: f64,
    speedup_vs_one_queue: f64,
    identical: bool,
}

#[derive(Serialize)]
struct Body {
    poly_modulus_degree: u64,
    coeff_modulus_bits: Vec<i32>,
    through_seal: &'static str,
    reps: usize,
    rows: Vec<Row>,
}

/// `polys` polynomials over `moduli` with uniformly random reduced residues.
fn random(rng: &mut impl Rng, moduli: &[u64], polys: usize, n: usize) -> Vec<u64> {
    (0..polys * moduli.len() * n)
        .map(|w| rng.gen_range(0..moduli[(w / n) % moduli.len()]))
        .collect()
}

fn bench(
    queues: usize,
    log_n: u32,
    key_moduli: &[u64],
    per_stream: usize,
    reps: usize,
) -> Result<(Duration, bool)> {
    let devices = Devices::new(DeviceOptions {
        queues_per_tile: queues,
        ..Config::from_env()?.device_options()
    })?;
    let graphs: Vec<_> = (0..queues).map(|_| devices.graph()).collect();
    let context = CkksContext::new(
        graphs[0].context(),
        log_n,
        key_moduli,
        true,
        seal_opencl::config::Config::from_env()?.experiment.ntt(),
        KernelChoices::default(),
    )?;
    let (n, l) = (1usize << log_n, key_moduli.len());
    let k = l - 1;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let data = &key_moduli[..k];
    let (a, b) = (random(&mut rng, data, 2, n), random(&mut rng, data, 2, n));
    let key_words = random(&mut rng, key_moduli, 2 * k, n);
    struct Stream {
        a: Region,
        b: Region,
        dst: Region,
        key: KswitchKey,
    }
    let streams: Vec<Stream> = graphs
        .iter()
        .map(|g| {
            let ctx = g.context();
            Ok(Stream {
                a: ctx.upload(g.queue(), &a)?,
                b: ctx.upload(g.queue(), &b)?,
                dst: ctx.buffer(g.queue(), 3 * k * n)?,
                key: KswitchKey::upload(&context, g.queue(), k, &key_words)?,
            })
        })
        .collect::<Result<_>>()?;
    let ops: Vec<LevelOps> = graphs
        .iter()
        .map(|g| LevelOps::new(&context, g, k))
        .collect::<Result<_>>()?;
    let mullin = |s: usize| {
        let (st, op) = (&streams[s], &ops[s]);
        op.tensor(&st.dst, &st.a, 2, &st.b, 2)?;
        op.switch_key(&st.dst, &st.dst, 2 * op.poly_words(), &st.key)
    };
    let mut times = Vec::new();
    for rep in 0..=reps {
        devices.finish()?;
        let start = Instant::now();
        for _ in 0..per_stream {
            (0..queues).try_for_each(mullin)?;
        }
        devices.finish()?;
        if rep > 0 {
            times.push(start.elapsed()); // rep 0: warm-up
        }
    }
    let first = cl::download(graphs[0].queue(), &streams[0].dst)?;
    let identical = streams[1..].iter().try_fold(true, |ok, s| {
        Ok::<_, Error>(ok && cl::download(graphs[0].queue(), &s.dst)? == first)
    })?;
    Ok((median(times), identical))
}

fn main() -> Result<()> {
    let args = Args::parse(
        USAGE,
        &["--queues", "--log-n", "--primes", "--per-stream", "--reps"],
    )?;
    let queues: Vec<usize> = args.list("--queues", &[1, 2, 4], &[1, 2, 4])?;
    let log_n = args.count("--log-n", 13, 15)? as u32;
    let default_primes = default_data_primes(log_n)?;
    let primes = args.count("--primes", default_primes, default_primes)?;
    let per_stream = args.count("--per-stream", 4, 20)?;
    let reps = args.count("--reps", 2, 5)?;
    let bits = default_bit_sizes(primes);
    let key_moduli = coeff_modulus_create(1 << log_n, &bits)?;
    let mut run = Run::new("multiqueue", args.quick)?;
    run.banner();
    println!(
        "N = 2^{log_n}, bits {bits:?}; one stream per queue, {per_stream} MulLin (tensor + key switch) each, \
         enqueued interleaved from one thread; median of {reps} after a warm-up. Below SEAL, whose \
         backend gives each thread its own queue (examples/cpp/host_path measures threads)."
    );
    println!(
        "{:>6} {:>12} {:>12} {:>10}  check",
        "queues", "wall us", "MulLin/s", "x 1 queue"
    );
    let mut rows: Vec<Row> = Vec::new();
    for &q in &queues {
        let (t, identical) = bench(q, log_n, &key_moduli, per_stream, reps)?;
        let rate = (q * per_stream) as f64 / t.as_secs_f64();
        let one = rows.first().map_or(rate, |r| r.mullin_per_s);
        let row = Row {
            queues: q,
            streams: q,
            mullin_per_stream: per_stream,
            wall_us: us(t),
            mullin_per_s: rate,
            speedup_vs_one_queue: rate / one,
            identical,
        };
        println!(
            "{:>6} {:>12.1} {:>12.1} {:>9.2}x  {}",
            q,
            row.wall_us,
            row.mullin_per_s,
            row.speedup_vs_one_queue,
            common::check_cell(identical)
        );
        rows.push(row);
    }
    let all = rows.iter().all(|r| r.identical);
    let body = Body {
        poly_modulus_degree: 1 << log_n,
        coeff_modulus_bits: bits,
        through_seal:
            "one queue per issuing thread (measured with threads by examples/cpp/host_path)",
        reps,
        rows,
    };
    common::write_json(&args, &mut run, &body)?;
    if all {
        Ok(())
    } else {
        Err(Error::Logic(
            "streams on different queues gave different results".into(),
        ))
    }
}
