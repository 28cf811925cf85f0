//! Differential fuzzing of SEAL's BFV and BGV through the backend against SEAL's CPU path
//! (`seal_opencl_testkit::integer::fuzz_scheme`), at every parameter set of the integer tests.
//!
//! ```text
//! seal_fuzz_integer [--calls PER_SCHEME] [--seed S] [--out JSON]
//! ```
//!
//! `--calls` (default 10000) draws per scheme are split evenly over the parameter sets (one
//! draw in 16 encrypts a slot afresh instead of calling). Prints one line per
//! scheme and set; exits 1 on any mismatch, naming the first with the calls before it.

use seal_opencl_testkit::fuzz::install_backend;
use seal_opencl_testkit::integer::{fuzz_scheme, PARAMETER_SETS};

fn main() {
    if let Err(e) = run() {
        eprintln!("seal_fuzz_integer: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let calls: u64 = value("--calls")
        .map_or(Ok(10_000), |v| v.parse())
        .map_err(|e| format!("--calls: {e}"))?;
    let seed: u64 = value("--seed")
        .map_or(Ok(rand::random()), |v| v.parse())
        .map_err(|e| format!("--seed: {e}"))?;
    install_backend().map_err(|e| e.to_string())?;
    let per_set = calls.div_ceil(PARAMETER_SETS.len() as u64);
    let mut rows = Vec::new();
    let mut mismatches = 0;
    for (scheme, bgv) in [("BFV", false), ("BGV", true)] {
        let started = std::time::Instant::now();
        for (case, report) in fuzz_scheme(bgv, per_set, seed).map_err(|e| e.to_string())? {
            println!(
                "{scheme} N=2^{} {:?} t {} bits seed {}: {} calls, {} routed, {} mismatches {}",
                case.log_n,
                case.coeff_bits,
                case.plain_bits,
                case.seed,
                report.calls,
                report.routed,
                report.mismatches,
                report.first
            );
            mismatches += report.mismatches;
            rows.push(serde_json::json!({
                "scheme": scheme, "log_n": case.log_n, "coeff_bits": case.coeff_bits,
                "plain_bits": case.plain_bits, "seed": case.seed, "calls": report.calls,
                "routed": report.routed,
                "mismatches": report.mismatches, "first": report.first,
            }));
        }
        println!("{scheme}: {:.1} s", started.elapsed().as_secs_f64());
    }
    if let Some(out) = value("--out") {
        let json = serde_json::json!({
            "bench": "seal_fuzz_integer",
            "device": seal_opencl::config::Config::from_env()
                .map(|c| c.device)
                .and_then(|d| d.resolve())
                .map_or_else(|e| format!("unknown ({e})"), |d| d.device_name),
            "date": seal_opencl::profiler::utc_date(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            ),
            "runs": rows,
        });
        std::fs::write(&out, serde_json::to_string_pretty(&json).unwrap())
            .map_err(|e| format!("{out}: {e}"))?;
    }
    if mismatches > 0 {
        return Err(format!("{mismatches} mismatches"));
    }
    Ok(())
}
