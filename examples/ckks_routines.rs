//! The main job: the CKKS routines (MulLin, MulLinRS, SqrLinRS,
//! MulLinRSModSwAdd, Rotate) through patched SEAL's API, once on CPU ciphertexts and once
//! on `.gpu()` ciphertexts on the default OpenCL device (the first GPU, else PoCL on the
//! CPU). Every GPU result is checked equal, word for word, to the CPU result.
//!
//! ```text
//! cargo run --release --example ckks_routines -- [--log-n 13..16] [--primes P]
//!     [--reps R] [--routines MulLin,Rotate,..] [--out DIR]
//! ```
//! Defaults: N = 2^15, P = 8 data primes ({60, 50 x 7, 60} bits: SEAL's key switching
//! with one special prime; at other N as many as SEAL's 128-bit security allows, see
//! `routines::default_data_primes`), scale 2^50, R = 10 on a GPU (3 on a CPU device).
//!
//! Prints one row per routine: SEAL on one CPU thread (median ms), the GPU wall time
//! (median over R runs, each ending with a device synchronisation), the device time of
//! its kernels (profiler events) and their number, the speedup (CPU / GPU wall) and the
//! share of NTT kernels in the device time. Writes to DIR (default
//! `target/ckks-routines`): the profiler dump (`profile.json`, `profile.csv`,
//! `profile.trace.json`, the last loadable in Perfetto / chrome://tracing), `routines.json`
//! with every figure, and `speedup.svg`, a bar chart of the speedups.

use std::path::PathBuf;

use rand::SeedableRng;
use serde::Serialize;

mod common;

use common::Flags;
use seal_opencl::profiler;
use seal_opencl::{Error, Result};
use seal_opencl_testkit::routines::{
    default_bit_sizes, default_data_primes, time_routine, Routine, Workload,
};

struct Args {
    log_n: u32,
    primes: Option<usize>,
    reps: Option<usize>,
    routines: Vec<Routine>,
    out: PathBuf,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        log_n: 15,
        primes: None,
        reps: None,
        routines: Routine::ALL.to_vec(),
        out: PathBuf::from("target/ckks-routines"),
    };
    let mut flags = Flags::from_env();
    while let Some(flag) = flags.next_flag() {
        match flag.as_str() {
            "--log-n" => args.log_n = flags.number(&flag)?,
            "--primes" => args.primes = Some(flags.number(&flag)?),
            "--reps" => args.reps = Some(flags.number::<usize>(&flag)?.max(1)),
            "--routines" => {
                args.routines = flags
                    .value(&flag)?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_>>()?
            }
            "--out" => args.out = PathBuf::from(flags.value(&flag)?),
            "-h" | "--help" => {
                println!("usage: ckks_routines [--log-n 13..16] [--primes P] [--reps R] [--routines A,B] [--out DIR]");
                std::process::exit(0);
            }
            other => {
                return Err(Error::InvalidArgument(format!(
                    "unknown argument {other:?}"
                )))
            }
        }
    }
    if !(13..=16).contains(&args.log_n) || args.primes == Some(0) {
        return Err(Error::InvalidArgument(
            "--log-n must be 13..16 and --primes at least 1".into(),
        ));
    }
    Ok(args)
}

/// One routine's figures.
#[derive(Serialize)]
struct Row {
    routine: &'static str,
    cpu_ms: f64,
    gpu_wall_us: f64,
    /// Host time the backend took to issue the routine's calls (profiler).
    gpu_host_us: f64,
    gpu_kernel_us: f64,
    launches: f64,
    speedup: f64,
    ntt_share: f64,
    identical: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    device: String,
    date: String,
    poly_modulus_degree: u64,
    coeff_modulus_bits: &'a [i32],
    scale_bits: i32,
    reps: usize,
    rows: &'a [Row],
}

fn main() -> Result<()> {
    let args = parse_args()?;
    let profiler = profiler::enable_global();
    seal_opencl::ffi::install_backend().map_err(|e| Error::Logic(e.to_string()))?;
    let device = common::device_description()?;
    let on_cpu_device = !device.contains("GPU");
    let reps = args.reps.unwrap_or(if on_cpu_device { 3 } else { 10 });
    let primes = match args.primes {
        Some(primes) => primes,
        None => default_data_primes(args.log_n)?,
    };
    let bits = default_bit_sizes(primes);
    let scale_bits = 50;
    let n = 1u64 << args.log_n;
    println!("device: {device}");
    if on_cpu_device {
        println!("(no GPU found: the OpenCL device is the CPU, e.g. PoCL; GPU columns are that device's times)");
    }
    println!(
        "N = {n}, coeff_modulus bits {bits:?}, scale 2^{scale_bits}, {reps} runs per routine\n"
    );

    let w = Workload::new(n, &bits, scale_bits)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
    let (a, b) = (w.encrypt_random(&mut rng)?, w.encrypt_random(&mut rng)?);

    let mut rows = Vec::new();
    for &routine in &args.routines {
        let (cpu_time, cpu_result) = time_routine(&w, routine, &a, &b, reps.min(5), None)?;
        // A first GPU run builds programs and uploads tables and keys: not timed.
        time_routine(&w, routine, &a, &b, 1, Some(&profiler))?;
        let (gpu_time, gpu_result) = time_routine(&w, routine, &a, &b, reps, Some(&profiler))?;
        let op = profiler.add_operation(routine.name(), gpu_time, reps as u32)?;
        let identical = gpu_result.data()? == cpu_result.data()?;
        rows.push(Row {
            routine: routine.name(),
            cpu_ms: cpu_time.as_secs_f64() * 1e3,
            gpu_wall_us: gpu_time.as_secs_f64() * 1e6,
            gpu_host_us: op.host_ns / 1e3,
            gpu_kernel_us: op.kernel_ns / 1e3,
            launches: op.kernels.iter().map(|k| k.calls_per_loop).sum(),
            speedup: cpu_time.as_secs_f64() / gpu_time.as_secs_f64(),
            ntt_share: op.ntt_share,
            identical,
        });
    }

    println!(
        "{:<18} {:>10} {:>13} {:>13} {:>15} {:>9} {:>9} {:>10}  GPU == CPU",
        "routine",
        "CPU ms",
        "GPU wall us",
        "GPU host us",
        "GPU kernel us",
        "launches",
        "speedup",
        "NTT share"
    );
    for r in &rows {
        println!(
            "{:<18} {:>10.2} {:>13.1} {:>13.1} {:>15.1} {:>9.0} {:>8.1}x {:>9.0}%  {}",
            r.routine,
            r.cpu_ms,
            r.gpu_wall_us,
            r.gpu_host_us,
            r.gpu_kernel_us,
            r.launches,
            r.speedup,
            r.ntt_share * 100.0,
            if r.identical {
                "identical"
            } else {
                "DIFFERENT"
            }
        );
    }

    std::fs::create_dir_all(&args.out)
        .map_err(|e| Error::Io(format!("{}: {e}", args.out.display())))?;
    let files = profiler.export_all(&args.out.join("profile.json"))?;
    let report = Report {
        device: device.clone(),
        date: utc_now(),
        poly_modulus_degree: n,
        coeff_modulus_bits: &bits,
        scale_bits,
        reps,
        rows: &rows,
    };
    let json = serde_json::to_string_pretty(&report).map_err(|e| Error::Io(e.to_string()))?;
    let write = |name: &str, text: &str| {
        let path = args.out.join(name);
        std::fs::write(&path, text).map_err(|e| Error::Io(format!("{}: {e}", path.display())))
    };
    write("routines.json", &json)?;
    write("speedup.svg", &speedup_svg(&rows, &device, n))?;
    println!(
        "\nwrote {} and routines.json, speedup.svg in {}",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        args.out.display()
    );

    if rows.iter().all(|r| r.identical) {
        println!("every GPU result is identical to SEAL's CPU result");
        Ok(())
    } else {
        Err(Error::Logic(
            "a GPU result differs from SEAL's CPU result".into(),
        ))
    }
}

/// A bar chart of the speedups, as SVG text (a handful of rectangles and labels; a
/// plotting crate would need font files to lay out the same labels).
fn speedup_svg(rows: &[Row], device: &str, n: u64) -> String {
    let (width, bar, gap, left, top) = (640.0, 36.0, 16.0, 170.0, 40.0);
    let height = top + rows.len() as f64 * (bar + gap) + 30.0;
    let max = rows.iter().map(|r| r.speedup).fold(1.0, f64::max);
    let scale = (width - left - 80.0) / max;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="13">
<text x="10" y="22" font-size="15">Speedup over SEAL on one CPU thread, N = {n} ({})</text>
"#,
        escape(device)
    );
    for (i, r) in rows.iter().enumerate() {
        let y = top + i as f64 * (bar + gap);
        let w = (r.speedup * scale).max(1.0);
        svg += &format!(
            r##"<text x="10" y="{:.1}">{}</text><rect x="{left}" y="{y:.1}" width="{w:.1}" height="{bar}" fill="#3b7dd8"/><text x="{:.1}" y="{:.1}">{:.1}x</text>
"##,
            y + bar * 0.65,
            r.routine,
            left + w + 6.0,
            y + bar * 0.65,
            r.speedup
        );
    }
    svg + "</svg>\n"
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{} UTC", profiler::utc_date(secs))
}
