//! Differential fuzzing of the GPU backend against SEAL's CPU path
//! (`seal_opencl_testkit::fuzz`): random programs of every routed CKKS operation, valid and invalid, each
//! call run on `.gpu()` copies and on unmarked CPU copies; valid calls must give SEAL's
//! words and metadata, invalid ones SEAL's exception with the operands intact.
//!
//! ```text
//! cargo run --release --example seal_fuzz -- [--ops N] [--seed S] [--params SETS]
//!     [--random-params K] [--program-len L] [--out FILE] [--trace]
//! ```
//! `--ops`: Evaluator calls in all (default 10000), spread evenly over the parameter sets.
//! `--params`: `;`-separated sets `LOG_N:BITS,BITS,...` (`BITSxCOUNT` repeats; the last
//! prime is the special prime; a single prime has no key switching); the default covers
//! N = 2^12..2^16, 1 to 15 primes of 30 to 60 bits. `--random-params K` adds K random sets
//! (N up to 2^14). `--program-len`: steps per program (default 60). `--trace`: prints the
//! operations of every program. `--out`: a JSON summary.
//!
//! Prints, per set, the Evaluator calls run (valid and invalid) and the failures, each with
//! the shortest program found that reproduces it. Exits 1 on any failure.

use std::path::PathBuf;
use std::time::Instant;

use rand::SeedableRng;
use serde::Serialize;

mod common;

use common::Flags;
use seal_opencl::{Error, Result};
use seal_opencl_testkit::fuzz::{self, Counts, ParamSet, Program, Setup};

/// N = 2^12..2^16; 1 (no special prime), 2 and 15 primes; 30- to 60-bit primes.
const DEFAULT_SETS: &str = "12:50;12:30,30;12:40,30,30,50;13:60,40,40,60;13:30x15;\
                            14:60,50x5,60;15:60,45x7,60;16:60,40x3,60";

struct Args {
    ops: u64,
    seed: u64,
    sets: Vec<ParamSet>,
    program_len: usize,
    out: Option<PathBuf>,
    trace: bool,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        ops: 10_000,
        seed: 1,
        sets: Vec::new(),
        program_len: 60,
        out: None,
        trace: false,
    };
    let mut random_sets = 0;
    let mut sets = DEFAULT_SETS.to_string();
    let mut flags = Flags::from_env();
    while let Some(flag) = flags.next_flag() {
        match flag.as_str() {
            "--ops" => args.ops = flags.number(&flag)?,
            "--seed" => args.seed = flags.number(&flag)?,
            "--params" => sets = flags.value(&flag)?,
            "--random-params" => random_sets = flags.number(&flag)?,
            "--program-len" => args.program_len = flags.number(&flag)?,
            "--out" => args.out = Some(PathBuf::from(flags.value(&flag)?)),
            "--trace" => args.trace = true,
            _ => return Err(Error::InvalidArgument(format!("unknown flag {flag}"))),
        }
    }
    args.sets = ParamSet::parse_list(&sets)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    args.sets
        .extend((0..random_sets).map(|_| ParamSet::random(&mut rng, 14)));
    if args.sets.is_empty() {
        return Err(Error::InvalidArgument("no parameter set".into()));
    }
    Ok(args)
}

#[derive(Serialize)]
struct SetReport {
    params: String,
    programs: u64,
    valid: u64,
    invalid: u64,
    other_steps: u64,
    seconds: f64,
    /// Each failure with its shortest reproducer (one operation a line).
    failures: Vec<String>,
    /// Set when SEAL refused the set (no fuzzing ran on it).
    refused: Option<String>,
}

#[derive(Serialize)]
struct Report {
    /// The bench name `bench_report` files the run under.
    bench: &'static str,
    device: String,
    seed: u64,
    evaluator_calls: u64,
    valid: u64,
    invalid: u64,
    mismatches: usize,
    cpu_fallbacks: Vec<String>,
    sets: Vec<SetReport>,
}

fn fuzz_set(args: &Args, set: &ParamSet, calls: u64, rng: &mut rand::rngs::StdRng) -> SetReport {
    let start = Instant::now();
    let mut report = SetReport {
        params: set.to_string(),
        programs: 0,
        valid: 0,
        invalid: 0,
        other_steps: 0,
        seconds: 0.0,
        failures: Vec::new(),
        refused: None,
    };
    let setup = match Setup::new(set) {
        Ok(setup) => setup,
        Err(e) => {
            report.refused = Some(e.to_string());
            return report;
        }
    };
    let mut counts = Counts::default();
    while counts.valid + counts.invalid < calls {
        let program = Program::random(rng, args.program_len);
        report.programs += 1;
        if args.trace {
            match fuzz::trace(&setup, &program) {
                Ok(lines) => println!("program {}:\n  {}", report.programs, lines.join("\n  ")),
                Err(e) => println!("program {}: harness error {e}", report.programs),
            }
        }
        match fuzz::run(&setup, &program) {
            Ok(Ok(c)) => counts.add(c),
            Ok(Err(failure)) => {
                let short = fuzz::shrink(&program, 300, |p| Ok(fuzz::run(&setup, p)?.is_err()))
                    .and_then(|short| fuzz::trace(&setup, &short));
                let text = match short {
                    Ok(lines) => format!("{failure}\n  {}", lines.join("\n  ")),
                    Err(e) => format!("{failure} (shrinking failed: {e})"),
                };
                println!("FAILURE on {set}: {text}");
                report.failures.push(text);
                // A program that fails is not counted; go on with the next one.
                counts.other += 1;
            }
            Err(e) => {
                report.failures.push(format!("harness error: {e}"));
                break;
            }
        }
    }
    report.valid = counts.valid;
    report.invalid = counts.invalid;
    report.other_steps = counts.other;
    report.seconds = start.elapsed().as_secs_f64();
    report
}

fn main() {
    common::exit_on_error("seal_fuzz", 2, run);
}

fn run() -> Result<()> {
    let args = parse_args()?;
    fuzz::install_backend()?;
    let device = common::device_description()?;
    println!("device: {device}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    let per_set = args.ops.div_ceil(args.sets.len() as u64);
    let mut sets = Vec::new();
    println!(
        "{:<40} {:>8} {:>8} {:>8} {:>9} {:>8}",
        "parameters", "programs", "valid", "invalid", "failures", "seconds"
    );
    for set in &args.sets {
        let r = fuzz_set(&args, set, per_set, &mut rng);
        println!(
            "{:<40} {:>8} {:>8} {:>8} {:>9} {:>8.1}{}",
            r.params,
            r.programs,
            r.valid,
            r.invalid,
            r.failures.len(),
            r.seconds,
            r.refused
                .as_ref()
                .map(|e| format!("  refused by SEAL: {e}"))
                .unwrap_or_default()
        );
        sets.push(r);
    }
    let report = Report {
        bench: "seal_fuzz",
        device,
        seed: args.seed,
        evaluator_calls: sets.iter().map(|s| s.valid + s.invalid).sum(),
        valid: sets.iter().map(|s| s.valid).sum(),
        invalid: sets.iter().map(|s| s.invalid).sum(),
        mismatches: sets.iter().map(|s| s.failures.len()).sum(),
        cpu_fallbacks: seal_opencl::ffi::cpu_fallbacks(),
        sets,
    };
    println!(
        "evaluator calls {} (valid {}, invalid {}), mismatches {}, CPU fallbacks {:?}",
        report.evaluator_calls,
        report.valid,
        report.invalid,
        report.mismatches,
        report.cpu_fallbacks
    );
    if let Some(path) = &args.out {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Io(e.to_string()))?;
        }
        let json = serde_json::to_string_pretty(&report).map_err(|e| Error::Io(e.to_string()))?;
        std::fs::write(path, json).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    }
    if report.mismatches > 0 {
        std::process::exit(1);
    }
    Ok(())
}
