//! SEAL's own clients, unmodified, on the GPU without a code change: SEAL's example programs
//! (`sealexamples`) and benchmarks (`sealbench`), built from the patched SEAL tree against the
//! `SEAL` CMake package that `scripts/install.sh` installs (so they link the backend and never
//! call `install_backend`), run once on SEAL's CPU path and once with `SEAL_GPU_ROUTE_ALL=1`.
//!
//! ```text
//! seal_clients examples SEALEXAMPLES [--select 1,2,3,4,5,6,7] [--work DIR]
//! seal_clients bench SEALBENCH --filter REGEX [--out JSON]
//! ```
//!
//! `examples` answers the program's menu with each selection. The GPU run also sets
//! `SEAL_OPENCL_CROSSCHECK=1`, so every routed operation's result is compared word for word
//! with SEAL's CPU result inside the run (a difference throws out of the Evaluator call and
//! ends the program), and `SEAL_OPENCL_PROFILE`, whose dump lists the routed calls. Each GPU
//! run must exit cleanly and print what the CPU run prints; encryption draws fresh randomness
//! in each run, so numbers may differ within [`close`]'s tolerance (the printed digits of CKKS
//! results), and the numbers of lines that report a BFV or BGV noise budget are not compared:
//! they measure the fresh encryption's noise (34 and 39 bits in two runs of example 4), not a
//! computation. The line reporting SEAL's memory pool is not compared: it reports the
//! allocator, not a result. The examples that evaluate (BFV 1 to 3, BGV 4, CKKS 5 to 7) must
//! route each of their operations ([`ROUTED_OPERATIONS`]), and no GPU run may print a warning
//! of the backend (a `WARN` line on stderr; an operation SEAL runs on the CPU for device
//! operands says so there).
//!
//! `bench` runs sealbench's benchmarks matching REGEX on both paths and prints them side by
//! side (sealbench runs 10 iterations of each). sealbench times each call without synchronizing: on the GPU path a routed call
//! returns once its kernels are issued, and its inputs (rewritten on the host before every
//! iteration) are uploaded inside the timed call.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use seal_opencl::profiler::ProfileReport;

// tests/seal_clients.rs includes this file as a module and calls `examples` and `bench`.

/// The examples of SEAL's `native/examples` that evaluate, each with the operations (as the
/// profile names them) its Evaluator calls must route: BFV's basics (1), encoders (2, BFV and
/// CKKS), levels (3, BFV), BGV's basics (4), CKKS's basics (5), rotations (6, BFV's rows and
/// columns, CKKS's vector) and serialization (7, a CKKS product of loaded ciphertexts). An
/// operation SEAL runs on the CPU without saying so would be missing from the profile.
const ROUTED_OPERATIONS: &[(u32, &[&str])] = &[
    (
        1,
        &[
            "square",
            "multiply",
            "multiply_plain",
            "add_plain",
            "relinearize",
        ],
    ),
    (2, &["add_plain", "square", "relinearize"]),
    (3, &["mod_switch_to_next", "square", "relinearize"]),
    (4, &["square", "relinearize", "mod_switch_to_next"]),
    (
        5,
        &[
            "square",
            "multiply",
            "multiply_plain",
            "add",
            "add_plain",
            "relinearize",
            "rescale_to_next",
            "mod_switch_to_next",
        ],
    ),
    (6, &["apply_galois"]),
    (7, &["multiply", "relinearize", "rescale_to_next"]),
];

/// The line the examples print after each run, with the pool's allocation in MB.
const POOL_LINE: &str = "Total allocation from the memory pool";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("examples") => examples(&args[1..]),
        Some("bench") => bench(&args[1..]),
        _ => Err(usage()),
    };
    if let Err(e) = result {
        eprintln!("seal_clients: {e}");
        std::process::exit(1);
    }
}

fn usage() -> String {
    "usage: seal_clients examples SEALEXAMPLES [--select 1,2,...] [--work DIR]\n       \
     seal_clients bench SEALBENCH --filter REGEX [--out JSON]"
        .into()
}

/// `--name value` options after the positional program path.
fn options(args: &[String]) -> Result<(PathBuf, BTreeMap<String, String>), String> {
    let (program, rest) = args.split_first().ok_or_else(usage)?;
    let mut options = BTreeMap::new();
    for pair in rest.chunks(2) {
        match pair {
            [name, value] if name.starts_with("--") => {
                options.insert(name[2..].to_string(), value.clone());
            }
            _ => return Err(usage()),
        }
    }
    Ok((PathBuf::from(program), options))
}

/// SEAL's CPU path: the switch off, whatever the caller's environment says.
fn cpu_run(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("SEAL_GPU_ROUTE_ALL")
        .env_remove("SEAL_OPENCL_CROSSCHECK")
        .env_remove("SEAL_OPENCL_PROFILE");
    cmd
}

/// The GPU path as an unmodified program gets it: only the switch.
fn gpu_run(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env("SEAL_GPU_ROUTE_ALL", "1");
    cmd
}

fn run_with_input(what: &str, mut cmd: Command, input: &str) -> Result<Output, String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {what}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.as_bytes())
            .map_err(|e| format!("cannot write to {what}: {e}"))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("{what} did not finish: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{what} exited with {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(output)
}

pub fn examples(args: &[String]) -> Result<(), String> {
    let (program, options) = options(args)?;
    let selections: Vec<u32> = options
        .get("select")
        .map_or("1,2,3,4,5,6,7", String::as_str)
        .split(',')
        .map(|s| s.trim().parse().map_err(|_| format!("bad selection {s:?}")))
        .collect::<Result<_, _>>()?;
    let work = options
        .get("work")
        .map_or_else(std::env::temp_dir, PathBuf::from);
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;

    for selection in selections {
        // The menu: run one example, then exit.
        let input = format!("{selection}\n0\n");
        let cpu = run_with_input(
            &format!("example {selection} on the CPU"),
            cpu_run(&program),
            &input,
        )?;
        let profile = work.join(format!("seal-example-{selection}.json"));
        let _ = std::fs::remove_file(&profile);
        let mut gpu = gpu_run(&program);
        gpu.env("SEAL_OPENCL_CROSSCHECK", "1")
            .env("SEAL_OPENCL_PROFILE", &profile);
        let gpu = run_with_input(&format!("example {selection} on the GPU"), gpu, &input)?;

        let cpu_text = String::from_utf8_lossy(&cpu.stdout);
        let gpu_text = String::from_utf8_lossy(&gpu.stdout);
        compare_outputs(&cpu_text, &gpu_text)
            .map_err(|e| format!("example {selection}: the GPU run printed otherwise: {e}"))?;

        let gpu_errors = String::from_utf8_lossy(&gpu.stderr);
        let warnings: Vec<&str> = gpu_errors
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("ran on the CPU"))
            .collect();
        if !warnings.is_empty() {
            return Err(format!(
                "example {selection} on the GPU printed warnings:\n{}",
                warnings.join("\n")
            ));
        }
        let routed = routed_calls(&profile)?;
        let total: u64 = routed.values().sum();
        let required = ROUTED_OPERATIONS
            .iter()
            .find(|(example, _)| *example == selection)
            .map_or(&[][..], |(_, operations)| *operations);
        let missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|op| !routed.contains_key(*op))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "example {selection} routed no {} call to the backend (routed: {routed:?})\n{gpu_errors}",
                missing.join(", ")
            ));
        }
        let calls: Vec<String> = routed.iter().map(|(n, c)| format!("{n} x{c}")).collect();
        println!(
            "example {selection}: output as on the CPU; {total} routed calls, each equal to SEAL's \
             CPU result word for word{}{}",
            if calls.is_empty() { "" } else { ": " },
            calls.join(", ")
        );
    }
    println!("RESULT: SEAL's examples ran unmodified on the GPU path, output as on the CPU");
    Ok(())
}

/// The routed calls by SEAL operation name, from the profiler's dump at exit (none when the
/// backend was never installed, so nothing was profiled).
fn routed_calls(profile: &Path) -> Result<BTreeMap<String, u64>, String> {
    let Ok(text) = std::fs::read_to_string(profile) else {
        return Ok(BTreeMap::new());
    };
    let report: ProfileReport = serde_json::from_str(&text)
        .map_err(|e| format!("cannot parse the profile {}: {e}", profile.display()))?;
    Ok(report
        .host_calls
        .into_iter()
        .map(|c| (c.name, c.calls))
        .collect())
}

/// The two outputs line by line, the pool line excepted: the same text around the numbers,
/// and numbers [`close`] to each other.
fn compare_outputs(cpu: &str, gpu: &str) -> Result<(), String> {
    let keep = |l: &&str| !l.contains(POOL_LINE);
    let cpu_lines: Vec<&str> = cpu.lines().filter(keep).collect();
    let gpu_lines: Vec<&str> = gpu.lines().filter(keep).collect();
    if cpu_lines.len() != gpu_lines.len() {
        return Err(format!(
            "{} lines against {} on the CPU",
            gpu_lines.len(),
            cpu_lines.len()
        ));
    }
    for (c, g) in cpu_lines.iter().zip(&gpu_lines) {
        let (c_text, c_numbers) = split_numbers(c);
        let (g_text, g_numbers) = split_numbers(g);
        let noise_budget = c.to_ascii_lowercase().contains("noise budget");
        let numbers_close = c_numbers.len() == g_numbers.len()
            && c_numbers
                .iter()
                .zip(&g_numbers)
                .all(|(&a, &b)| close(a, b, noise_budget));
        if c_text != g_text || !numbers_close {
            return Err(format!("CPU: {c}\n GPU: {g}"));
        }
    }
    Ok(())
}

/// Two printed results of separate encryptions of the same values: within 0.01 plus 2%. A
/// noise budget is any number.
fn close(a: f64, b: f64, noise_budget: bool) -> bool {
    noise_budget || (a - b).abs() <= 0.01 + 0.02 * a.abs().max(b.abs())
}

/// A line's text with every number replaced by `#`, and the numbers.
fn split_numbers(line: &str) -> (String, Vec<f64>) {
    let bytes = line.as_bytes();
    let mut text = String::new();
    let mut numbers = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let signed = bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if bytes[i].is_ascii_digit() || signed {
            let start = i;
            i += 1;
            while i < bytes.len()
                && (bytes[i].is_ascii_digit()
                    || (bytes[i] == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)))
            {
                i += 1;
            }
            match line[start..i].parse() {
                Ok(n) => {
                    numbers.push(n);
                    text.push('#');
                }
                Err(_) => text.push_str(&line[start..i]),
            }
        } else {
            let c = line[i..].chars().next().unwrap_or(' ');
            text.push(c);
            i += c.len_utf8();
        }
    }
    (text, numbers)
}

/// One benchmark's time per iteration on each path (google-benchmark's JSON).
struct Timing {
    cpu_ns: f64,
    gpu_ns: Option<f64>,
}

pub fn bench(args: &[String]) -> Result<(), String> {
    let (program, options) = options(args)?;
    let filter = options.get("filter").ok_or_else(usage)?;
    let work = std::env::temp_dir();
    let mut timings: BTreeMap<String, Timing> = BTreeMap::new();
    let mut order = Vec::new();
    for gpu in [false, true] {
        let json = work.join(format!(
            "sealbench-{}-{}.json",
            std::process::id(),
            if gpu { "gpu" } else { "cpu" }
        ));
        let mut cmd = if gpu {
            gpu_run(&program)
        } else {
            cpu_run(&program)
        };
        cmd.arg(format!("--benchmark_filter={filter}"))
            .arg(format!("--benchmark_out={}", json.display()))
            .arg("--benchmark_out_format=json");
        run_with_input(
            &format!("sealbench on the {}", if gpu { "GPU" } else { "CPU" }),
            cmd,
            "",
        )?;
        let text = std::fs::read_to_string(&json)
            .map_err(|e| format!("cannot read {}: {e}", json.display()))?;
        let _ = std::fs::remove_file(&json);
        if text.trim().is_empty() {
            // sealbench writes nothing when the filter matches no benchmark.
            return Err(format!("no sealbench benchmark matches {filter:?}"));
        }
        let report: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("cannot parse sealbench's JSON: {e}"))?;
        for b in report["benchmarks"].as_array().into_iter().flatten() {
            let (Some(name), Some(time), Some(unit)) = (
                b["name"].as_str(),
                b["real_time"].as_f64(),
                b["time_unit"].as_str(),
            ) else {
                continue;
            };
            let ns = time
                * match unit {
                    "s" => 1e9,
                    "ms" => 1e6,
                    "us" => 1e3,
                    _ => 1.0,
                };
            if gpu {
                if let Some(t) = timings.get_mut(name) {
                    t.gpu_ns = Some(ns);
                }
            } else {
                order.push(name.to_string());
                timings.insert(
                    name.to_string(),
                    Timing {
                        cpu_ns: ns,
                        gpu_ns: None,
                    },
                );
            }
        }
    }
    if order.is_empty() {
        return Err(format!("no sealbench benchmark matches {filter:?}"));
    }
    println!(
        "{:<60} {:>12} {:>12} {:>8}",
        "sealbench (not synchronized)", "CPU us", "GPU us", "CPU/GPU"
    );
    let mut rows = Vec::new();
    for name in &order {
        let t = &timings[name];
        let gpu = t
            .gpu_ns
            .ok_or_else(|| format!("{name} ran on the CPU path only"))?;
        println!(
            "{name:<60} {:>12.1} {:>12.1} {:>7.1}x",
            t.cpu_ns / 1e3,
            gpu / 1e3,
            t.cpu_ns / gpu
        );
        rows.push(
            serde_json::json!({ "name": name, "cpu_us": t.cpu_ns / 1e3, "gpu_us": gpu / 1e3 }),
        );
    }
    if let Some(out) = options.get("out") {
        let device = seal_opencl::config::Config::from_env()
            .map(|c| c.device)
            .and_then(|d| d.resolve())
            .map_or_else(|e| format!("unknown ({e})"), |d| d.device_name);
        let report = serde_json::json!({
            "bench": "sealbench",
            "device": device,
            "seal": seal_opencl::build_info::SEAL_VERSION,
            "synchronized": false,
            "rows": rows,
        });
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(out, text).map_err(|e| format!("cannot write {out}: {e}"))?;
    }
    Ok(())
}
