//! CKKS routines benchmark: MulLin, MulLinRS, SqrLinRS,
//! MulLinRSModSwAdd and Rotate through patched SEAL, on SEAL's CPU path (one thread), on
//! the naive GPU baseline (radix-2 global-memory NTT, unfused multiply-add, memcache off)
//! and on the tuned backend, in one process: the backend is uninstalled and installed
//! again with the other configuration (`common::Setup`).
//!
//! ```text
//! cargo bench --bench routines -- [--quick] [--sizes 13,14,15,16] [--sets default,9]
//!                                 [--routines MulLin,Rotate,..] [--reps R] [--json PATH]
//! ```
//! Parameter sets per N = 2^n: `default` (`routines::default_data_primes` data primes,
//! `default_bit_sizes`; {60, 50 x 7, 60} at 2^15 and 2^16) and `9`, the 9-prime
//! set {60, 50 x 7, 60} where it differs from the default (at 2^13 and 2^14 it exceeds
//! SEAL's 128-bit security table, so it runs with the check off). Scale 2^50 (2^40 with
//! 40-bit primes: never, the sets here hold 50-bit primes).
//!
//! Per routine: medians over R runs after one warm-up run per configuration (each run
//! ends with a device synchronisation; the CPU takes min(R, 5) runs); every GPU result is
//! checked equal, word for word, to the CPU result of the same run. Columns: CPU us,
//! baseline wall us, tuned wall us, tuned host us (the backend's time to issue the
//! routine's calls, profiler), tuned kernel us (profiler events), kernel launches per
//! routine (tuned, baseline), speedups tuned vs CPU and tuned vs baseline, NTT share of
//! the tuned kernel time. Defaults: sizes 13..16, both sets, R = 10; `--quick`: 2^13,
//! default set, R = 3. JSON as `benches/ntt.rs` does
//! (`benches/results/routines-<device>-<date>.json`, with `--quick` only given `--json`).

mod common;

use rand::SeedableRng;
use serde::Serialize;

use common::{us, Args, Run, Setup, BASELINE, TUNED};
use seal_opencl::profiler;
use seal_opencl::Result;
use seal_opencl_testkit::routines::{
    default_bit_sizes, default_data_primes, time_routine, Routine, Workload,
};
use seal_opencl_testkit::seal_c::SecLevelType;

const USAGE: &str = "routines [--quick] [--sizes 13,14,15,16] [--sets default,9] \
                     [--routines MulLin,..] [--reps R] [--json PATH]";

/// One configuration's device figures for one routine.
#[derive(Serialize)]
struct Device {
    wall_us: f64,
    /// Host time the backend took to issue the routine's calls (profiler).
    host_us: f64,
    kernel_us: f64,
    launches: f64,
    ntt_share: f64,
    identical: bool,
    /// Per kernel (a multi-pass transform's passes as `name.1`, `name.2`): launches and
    /// device time per routine, largest first (the per-kernel table of `REPORT.md`).
    kernels: Vec<Kernel>,
}

#[derive(Serialize)]
struct Kernel {
    name: String,
    launches: f64,
    us: f64,
}

#[derive(Serialize)]
struct Row {
    log_n: u32,
    coeff_modulus_bits: Vec<i32>,
    routine: &'static str,
    cpu_us: f64,
    baseline: Device,
    tuned: Device,
    speedup_vs_cpu: f64,
    speedup_vs_baseline: f64,
}

#[derive(Serialize)]
struct Body {
    reps: usize,
    cpu_reps: usize,
    scale_bits: i32,
    setups: [Setup; 2],
    /// A device copy of 2^16 x 32 words (16 MiB) in this run: the bandwidth per-kernel
    /// bytes are set against.
    copy_gb_s: f64,
    rows: Vec<Row>,
}

fn main() -> Result<()> {
    let args = Args::parse(USAGE, &["--sizes", "--sets", "--routines", "--reps"])?;
    let sizes: Vec<u32> = args.list("--sizes", &[13], &[13, 14, 15, 16])?;
    let sets: Vec<String> = args.list(
        "--sets",
        &["default".to_string()],
        &["default".to_string(), "9".to_string()],
    )?;
    let routines: Vec<Routine> = args.list("--routines", &Routine::ALL, &Routine::ALL)?;
    let reps = args.count("--reps", 3, 10)?;
    let cpu_reps = reps.min(5);
    let scale_bits = 50;

    let profiler = profiler::enable_global();
    let mut run = Run::new("routines", args.quick)?;
    run.banner();
    println!("median of {reps} runs (CPU: {cpu_reps}) after a warm-up; baseline = naive NTT, unfused tensor, memcache off\n");
    println!(
        "{:>5} {:>2} {:<17} {:>11} {:>11} {:>10} {:>9} {:>10} {:>9} {:>8} {:>9} {:>5}  check",
        "N",
        "K",
        "routine",
        "CPU us",
        "base us",
        "tuned us",
        "host us",
        "kernel us",
        "launches",
        "xCPU",
        "xbase",
        "NTT%"
    );
    let mut rows = Vec::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
    for &log_n in &sizes {
        let default = default_bit_sizes(default_data_primes(log_n)?);
        let nine = default_bit_sizes(8);
        let mut bit_sets = Vec::new();
        if sets.iter().any(|s| s == "default") {
            bit_sets.push((default.clone(), SecLevelType::TC128));
        }
        if sets.iter().any(|s| s == "9") && nine != default {
            bit_sets.push((nine, SecLevelType::None));
        }
        for (bits, security) in bit_sets {
            let security = if log_n > 15 {
                SecLevelType::None
            } else {
                security
            };
            let w = Workload::with_security(1 << log_n, &bits, scale_bits, security)?;
            let (a, b) = (w.encrypt_random(&mut rng)?, w.encrypt_random(&mut rng)?);
            let cpu: Vec<_> = routines
                .iter()
                .map(|&r| time_routine(&w, r, &a, &b, cpu_reps, None))
                .collect::<Result<_>>()?;
            let device = |setup: &Setup| -> Result<Vec<Device>> {
                setup.install()?;
                routines
                    .iter()
                    .zip(&cpu)
                    .map(|(&r, (_, cpu_result))| {
                        time_routine(&w, r, &a, &b, 1, Some(&profiler))?;
                        let (t, result) = time_routine(&w, r, &a, &b, reps, Some(&profiler))?;
                        let op = profiler.add_operation(
                            &format!("{} {} 2^{log_n} K={}", setup.name, r.name(), bits.len() - 1),
                            t,
                            reps as u32,
                        )?;
                        Ok(Device {
                            wall_us: us(t),
                            host_us: op.host_ns / 1e3,
                            kernel_us: op.kernel_ns / 1e3,
                            launches: op.kernels.iter().map(|k| k.calls_per_loop).sum(),
                            ntt_share: op.ntt_share,
                            identical: result.data()? == cpu_result.data()?,
                            kernels: op
                                .kernels
                                .iter()
                                .map(|k| Kernel {
                                    name: k.name.clone(),
                                    launches: k.calls_per_loop,
                                    us: k.ns_per_loop / 1e3,
                                })
                                .collect(),
                        })
                    })
                    .collect()
            };
            let baseline = device(&BASELINE)?;
            let tuned = device(&TUNED)?;
            for (((&r, (cpu_t, _)), base), tuned) in
                routines.iter().zip(&cpu).zip(baseline).zip(tuned)
            {
                let row = Row {
                    log_n,
                    coeff_modulus_bits: bits.clone(),
                    routine: r.name(),
                    cpu_us: us(*cpu_t),
                    speedup_vs_cpu: us(*cpu_t) / tuned.wall_us,
                    speedup_vs_baseline: base.wall_us / tuned.wall_us,
                    baseline: base,
                    tuned,
                };
                println!(
                    "{:>5} {:>2} {:<17} {:>11.1} {:>11.1} {:>10.1} {:>9.1} {:>10.1} {:>4.0}/{:<4.0} {:>7.1}x {:>8.2}x {:>4.0}%  {}",
                    format!("2^{log_n}"),
                    bits.len() - 1,
                    row.routine,
                    row.cpu_us,
                    row.baseline.wall_us,
                    row.tuned.wall_us,
                    row.tuned.host_us,
                    row.tuned.kernel_us,
                    row.tuned.launches,
                    row.baseline.launches,
                    row.speedup_vs_cpu,
                    row.speedup_vs_baseline,
                    row.tuned.ntt_share * 100.0,
                    common::check_cell(row.tuned.identical && row.baseline.identical)
                );
                rows.push(row);
            }
        }
    }
    println!("(K: data primes; launches: tuned/baseline kernels per routine; xCPU, xbase: tuned wall time speedups)");
    let all = rows
        .iter()
        .all(|r| r.tuned.identical && r.baseline.identical);
    let body = Body {
        reps,
        cpu_reps,
        scale_bits,
        setups: [BASELINE, TUNED],
        copy_gb_s: common::device_copy_gb_s(32 << 16)?,
        rows,
    };
    common::write_json(&args, &mut run, &body)?;
    common::require_identical(all)
}
