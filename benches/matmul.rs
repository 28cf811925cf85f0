//! matMul: element-wise polynomial matrix products
//! C = A * B, C m x n, A m x k, B k x n (`matMul_mxnk`), each element an encrypted
//! N = 8192 plaintext polynomial, each element product a ciphertext multiply (no
//! relinearization) and the k products summed with add. The whole process is timed, as
//! in the paper: encode + encrypt the inputs, the products on the device (`.gpu()`
//! operands, ending with a synchronisation), decrypt + decode the results; the phases
//! are reported separately. Configurations: SEAL on the CPU (one thread), then the backend
//! with and without the memcache (`SEAL_OPENCL_MEMCACHE`) and with and without the fused
//! multiply-add tensor kernel (`SEAL_OPENCL_FUSED`), NTT staged. Every device result is
//! checked equal, word for word, to SEAL's CPU product of the same encrypted inputs.
//!
//! ```text
//! cargo bench --bench matmul -- [--quick] [--shapes 100x10x1,10x9x8] [--reps R] [--json PATH]
//! ```
//! Shapes are m x n x k. Defaults: 100x10x1 and 10x9x8, R = 3 (median of the totals);
//! `--quick`: 10x5x1 and 4x3x2, R = 1. Parameters: N = 8192, {60, 50, 60} bits (SEAL's
//! 128-bit default at 8K), scale 2^40 (two products of 2^40 stay below the 110-bit
//! modulus without a rescale).

mod common;

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use serde::Serialize;

use common::{us, Args, Run, Setup};
use seal_opencl::{Error, Result};
use seal_opencl_testkit::routines::{default_bit_sizes, default_data_primes, median, Workload};
use seal_opencl_testkit::seal_c::{self, Ciphertext};

const USAGE: &str = "matmul [--quick] [--shapes 100x10x1,10x9x8] [--reps R] [--json PATH]";
const LOG_N: u32 = 13;

/// The four backend configurations of Figure 20's optimisations we have switches for.
const SETUPS: [Setup; 4] = [
    Setup {
        name: "no memcache, unfused",
        ntt: "staged",
        fused: false,
        memcache: false,
    },
    Setup {
        name: "no memcache, fused",
        ntt: "staged",
        fused: true,
        memcache: false,
    },
    Setup {
        name: "memcache, unfused",
        ntt: "staged",
        fused: false,
        memcache: true,
    },
    Setup {
        name: "memcache, fused",
        ntt: "staged",
        fused: true,
        memcache: true,
    },
];

#[derive(Clone, Copy, Debug, Serialize)]
struct Shape {
    m: usize,
    n: usize,
    k: usize,
}

impl std::str::FromStr for Shape {
    type Err = ();
    fn from_str(s: &str) -> std::result::Result<Shape, ()> {
        let v: Vec<usize> = s
            .split('x')
            .map(|x| x.parse().map_err(drop))
            .collect::<std::result::Result<_, _>>()?;
        match v[..] {
            [m, n, k] if m > 0 && n > 0 && k > 0 => Ok(Shape { m, n, k }),
            _ => Err(()),
        }
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

/// Median phase times of one configuration, in microseconds.
#[derive(Serialize)]
struct Timing {
    config: &'static str,
    total_us: f64,
    encode_encrypt_us: f64,
    compute_us: f64,
    decrypt_decode_us: f64,
    identical: bool,
}

#[derive(Serialize)]
struct Row {
    shape: String,
    multiplies: usize,
    adds: usize,
    configs: Vec<Timing>,
}

#[derive(Serialize)]
struct Body {
    poly_modulus_degree: u64,
    coeff_modulus_bits: Vec<i32>,
    scale_bits: i32,
    reps: usize,
    rows: Vec<Row>,
}

/// C[i][j] = sum_l A[i][l] * B[l][j] (row-major vectors), on whichever side the operands
/// are (device when marked).
fn product(w: &Workload, s: Shape, a: &[Ciphertext], b: &[Ciphertext]) -> Result<Vec<Ciphertext>> {
    let mut c = Vec::with_capacity(s.m * s.n);
    for i in 0..s.m {
        for j in 0..s.n {
            let mut acc = Ciphertext::new()?;
            w.evaluator.multiply(&a[i * s.k], &b[j], &mut acc)?;
            for l in 1..s.k {
                let mut t = Ciphertext::new()?;
                w.evaluator
                    .multiply(&a[i * s.k + l], &b[l * s.n + j], &mut t)?;
                w.evaluator.add_inplace(&mut acc, &t)?;
            }
            c.push(acc);
        }
    }
    Ok(c)
}

/// One whole process: phase times, and (device runs) whether C equals SEAL's CPU product
/// of the same encrypted inputs.
fn process(
    w: &Workload,
    s: Shape,
    values: &[Vec<f64>],
    device: bool,
) -> Result<([Duration; 3], bool)> {
    let start = Instant::now();
    let encrypt = |v: &Vec<f64>| {
        w.encryptor
            .encrypt(&w.encoder.encode(v, &w.context.first_parms_id(), w.scale)?)
    };
    let mut inputs: Vec<Ciphertext> = values.iter().map(encrypt).collect::<Result<_>>()?;
    let t_encrypt = start.elapsed();
    // Untimed: CPU copies of the inputs for the check.
    let cpu_inputs: Vec<Ciphertext> = if device {
        inputs
            .iter()
            .map(Ciphertext::try_clone)
            .collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    let start = Instant::now();
    if device {
        inputs.iter_mut().try_for_each(Ciphertext::gpu)?;
    }
    let (a, b) = inputs.split_at(s.m * s.k);
    let c = product(w, s, a, b)?;
    if device {
        seal_c::synchronize()?;
    }
    let t_compute = start.elapsed();
    let start = Instant::now();
    for ct in &c {
        w.encoder.decode(&w.decryptor.decrypt(ct)?)?;
    }
    let t_decrypt = start.elapsed();
    let identical = if device {
        let (a, b) = cpu_inputs.split_at(s.m * s.k);
        let want = product(w, s, a, b)?;
        want.iter().zip(&c).try_fold(true, |ok, (x, y)| {
            Ok::<_, Error>(ok && x.data()? == y.data()?)
        })?
    } else {
        true
    };
    Ok(([t_encrypt, t_compute, t_decrypt], identical))
}

fn main() -> Result<()> {
    let args = Args::parse(USAGE, &["--shapes", "--reps"])?;
    let shapes: Vec<Shape> = args.list(
        "--shapes",
        &[Shape { m: 10, n: 5, k: 1 }, Shape { m: 4, n: 3, k: 2 }],
        &[
            Shape {
                m: 100,
                n: 10,
                k: 1,
            },
            Shape { m: 10, n: 9, k: 8 },
        ],
    )?;
    let reps = args.count("--reps", 1, 3)?;
    let bits = default_bit_sizes(default_data_primes(LOG_N)?);
    let scale_bits = 40;
    let mut run = Run::new("matmul", args.quick)?;
    run.banner();
    let w = Workload::new(1 << LOG_N, &bits, scale_bits)?;
    println!(
        "N = {}, coeff_modulus bits {bits:?}, scale 2^{scale_bits}; median of {reps} whole processes; ms",
        1 << LOG_N
    );
    println!(
        "{:<9} {:<22} {:>10} {:>12} {:>10} {:>12} {:>8}  check",
        "shape", "config", "total", "enc+encrypt", "compute", "dec+decode", "x CPU"
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
    let mut rows = Vec::new();
    for &s in &shapes {
        let values: Vec<Vec<f64>> = (0..s.m * s.k + s.k * s.n)
            .map(|_| {
                (0..w.encoder.slot_count())
                    .map(|_| rng.gen_range(-1.0..1.0))
                    .collect()
            })
            .collect();
        let mut configs = Vec::new();
        let mut cpu_total = 0.0;
        for setup in std::iter::once(None).chain(SETUPS.iter().map(Some)) {
            if let Some(setup) = setup {
                setup.install()?;
                process(&w, s, &values, true)?; // warm-up: programs, tables, pools
            }
            let runs: Vec<_> = (0..reps)
                .map(|_| process(&w, s, &values, setup.is_some()))
                .collect::<Result<_>>()?;
            let phase = |p: usize| us(median(runs.iter().map(|(t, _)| t[p]).collect()));
            let total = us(median(runs.iter().map(|(t, _)| t.iter().sum()).collect()));
            if setup.is_none() {
                cpu_total = total;
            }
            let t = Timing {
                config: setup.map_or("SEAL CPU", |s| s.name),
                total_us: total,
                encode_encrypt_us: phase(0),
                compute_us: phase(1),
                decrypt_decode_us: phase(2),
                identical: runs.iter().all(|(_, ok)| *ok),
            };
            println!(
                "{:<9} {:<22} {:>10.1} {:>12.1} {:>10.1} {:>12.1} {:>7.2}x  {}",
                s.to_string(),
                t.config,
                t.total_us / 1e3,
                t.encode_encrypt_us / 1e3,
                t.compute_us / 1e3,
                t.decrypt_decode_us / 1e3,
                cpu_total / t.total_us,
                if setup.is_none() {
                    "-"
                } else {
                    common::check_cell(t.identical)
                }
            );
            configs.push(t);
        }
        rows.push(Row {
            shape: s.to_string(),
            multiplies: s.m * s.n * s.k,
            adds: s.m * s.n * (s.k - 1),
            configs,
        });
    }
    let all = rows.iter().all(|r| r.configs.iter().all(|c| c.identical));
    let body = Body {
        poly_modulus_degree: 1 << LOG_N,
        coeff_modulus_bits: bits,
        scale_bits,
        reps,
        rows,
    };
    common::write_json(&args, &mut run, &body)?;
    if !run.cpu_fallbacks.is_empty() {
        println!(
            "SEAL ran these on the CPU for device operands: {:?}",
            run.cpu_fallbacks
        );
    }
    common::require_identical(all)
}
