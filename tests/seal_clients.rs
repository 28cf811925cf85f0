//! SEAL's own clients, unmodified, through the `SEAL` CMake package that `scripts/install.sh`
//! installs: SEAL's example programs (`native/examples`) and sealbench (`native/bench`, Google
//! Benchmark from the system) from the patched SEAL tree, built as their own CMake projects
//! build against an installed SEAL. They never call `install_backend`; with
//! `SEAL_GPU_ROUTE_ALL=1` the backend installs itself at the first routed call.
//! `examples/seal_clients.rs` runs them on both paths and compares (see its docs).
//! `tests/cpp-route-all/route_all.cpp` checks what such a program sees of the installation:
//! threads racing to their first routed call, and a device that cannot be found.

mod cpp_build;
#[allow(dead_code)] // its `main` serves the example binary
#[path = "../examples/seal_clients.rs"]
mod runner;

use std::path::Path;
use std::process::Command;

use seal_opencl::build_info;

/// One test, so that its cargo and cmake runs do not race a sibling's in the same target
/// folder.
#[test]
fn unmodified_seal_programs_run_on_the_gpu_path() {
    let prefix = cpp_build::install("seal-clients-install", &[]);
    route_all_program(&prefix);
    seal_examples_and_sealbench(&prefix);
}

/// SEAL's examples on both paths, then sealbench's CKKS evaluation as a smoke run.
fn seal_examples_and_sealbench(prefix: &Path) {
    let native = Path::new(build_info::SEAL_SOURCE_DIR).join("native");
    let examples = cpp_build::cmake_build(&native.join("examples"), prefix, "seal-examples", &[]);
    // SEAL_BUILD_DEPS=OFF: Google Benchmark from the system instead of a download.
    let bench = cpp_build::cmake_build(
        &native.join("bench"),
        prefix,
        "seal-bench",
        &["-DSEAL_BUILD_DEPS=OFF"],
    );
    // Every example of SEAL's menu but the performance test (8), which only times. The runner
    // fails unless every GPU run printed what the CPU run printed and no warning, and every
    // example (BFV 1 to 3, BGV 4, CKKS 5 to 7) routed Evaluator calls, each cross-checked word
    // for word.
    let args = |list: &[&str]| -> Vec<String> { list.iter().map(|a| a.to_string()).collect() };
    let sealexamples = examples.join("bin").join("sealexamples");
    let work = examples.display().to_string();
    runner::examples(&args(&[
        &sealexamples.display().to_string(),
        "--select",
        "1,2,3,4,5,6,7",
        "--work",
        &work,
    ]))
    .unwrap_or_else(|e| panic!("{e}"));

    // sealbench's CKKS evaluation at its smallest key-switching set, as a smoke run.
    let sealbench = bench.join("bin").join("sealbench");
    runner::bench(&args(&[
        &sealbench.display().to_string(),
        "--filter",
        r"n=4096 / .* / CKKS / Evaluate(MulCt|RelinInplace|RescaleInplace|Rotate)/",
    ]))
    .unwrap_or_else(|e| panic!("{e}"));
}

/// route_all.cpp: threads racing to the first routed call, and an install that fails.
fn route_all_program(prefix: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("cpp-route-all");
    let build = cpp_build::cmake_build(&source, prefix, "route-all", &[]);
    let program = build.join("route_all");
    let run = |mode: &str, device: Option<&str>| {
        let mut cmd = Command::new(&program);
        cmd.arg(mode)
            .env("SEAL_GPU_ROUTE_ALL", "1")
            .env("SEAL_OPENCL_CROSSCHECK", "1");
        match device {
            Some(d) => cmd.env("SEAL_OPENCL_DEVICE", d),
            None => cmd.env_remove("SEAL_OPENCL_DEVICE"),
        };
        let output = cpp_build::run_ok(&format!("route_all {mode}"), &mut cmd);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            stdout.contains("RESULT:"),
            "{}",
            cpp_build::printed(&output)
        );
        stdout
    };
    run("threads", None);
    // Platform 99 exists nowhere: the install fails, and says which devices there are.
    let stdout = run("no-device", Some("99:0"));
    let failed_installs = stdout
        .lines()
        .filter(|l| l.starts_with("attempt ") && l.contains("no OpenCL device matches"))
        .count();
    assert_eq!(failed_installs, 2, "{stdout}");
}
