//! examples/cpp (the XeHE paper's Listing 1 in C++, options set in code, the host-path, request
//! and application benchmarks, the integer schemes' application benchmarks) builds as a user's
//! project does: `scripts/install.sh` into a fresh prefix, then CMake's
//! `find_package(SEALOpenCL)`; its GPU ciphertexts equal the CPU ones word for word on the
//! default OpenCL device (PoCL on CI).

mod cpp_build;

use std::path::Path;
use std::process::{Command, Output};

/// The line listing1 prints last when every compared ciphertext is identical.
const IDENTICAL: &str = "RESULT: GPU and CPU ciphertexts are identical word for word";

#[test]
fn listing1_gpu_ciphertexts_equal_cpu_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prefix = cpp_build::install("cpp-install", &[]);
    let build = cpp_build::cmake_build(
        &root.join("examples").join("cpp"),
        &prefix,
        "cpp-example",
        &[],
    );

    // The default device, as a user gets it: the first GPU, else PoCL.
    let output = cpp_build::run(
        "listing1",
        Command::new(build.join("listing1")).env_remove("SEAL_OPENCL_DEVICE"),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.lines().any(|l| l == IDENTICAL),
        "listing1 exited with {} without reporting identical ciphertexts\n{}",
        output.status,
        cpp_build::printed(&output)
    );

    // Options set in code instead of the environment.
    let output = cpp_build::run("options", &mut Command::new(build.join("options")));
    assert!(
        output.status.success()
            && String::from_utf8_lossy(&output.stdout)
                .contains("RESULT: install_backend(options) behaves as documented"),
        "options exited with {}\n{}",
        output.status,
        cpp_build::printed(&output)
    );

    // The C++ benchmarks (run for their figures on the GPU machine): short runs, for their
    // check that every GPU result equals SEAL's CPU result.
    for bench in ["host_path", "request"] {
        smoke_run(&build, bench, &["--log-n", "12", "--reps", "3"]);
    }
    // Every application (16 x 16 layers, 4 batch requests), its kernel time from a profiled
    // run of itself.
    smoke_run(
        &build,
        "apps",
        &[
            "--log-n",
            "12",
            "--dim",
            "16",
            "--reps",
            "1",
            "--cpu-reps",
            "1",
            "--requests",
            "4",
        ],
    );
    // The integer schemes' applications in small (a degree-15 polynomial, a database of 16
    // elements at N = 2^12): every Evaluator call routed, none reported as run on the CPU.
    let output = smoke_run(
        &build,
        "integer_apps",
        &[
            "--log-n",
            "12",
            "--degree",
            "15",
            "--bundles",
            "2",
            "--db",
            "16",
            "--reps",
            "1",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.matches("every Evaluator call routed").count() == 2
            && !String::from_utf8_lossy(&output.stderr).contains("ran on the CPU"),
        "integer_apps ran calls on the CPU\n{}",
        cpp_build::printed(&output)
    );
}

/// Runs the C++ benchmark `name` of `build` briefly with `args` on the default device; it must
/// report identical results and write its JSON, which names the backend's settings the run's
/// environment held (`SEAL_OPENCL_LOG`, set here) and no other. Returns its output.
fn smoke_run(build: &Path, name: &str, args: &[&str]) -> Output {
    let json = build.join(format!("{name}-smoke.json"));
    let mut command = Command::new(build.join(name));
    command.args(args).arg("--json").arg(&json);
    for (var, _) in std::env::vars() {
        if var.starts_with("SEAL_OPENCL_") || var.starts_with("SEAL_GPU_") {
            command.env_remove(var);
        }
    }
    let output = cpp_build::run(name, command.env("SEAL_OPENCL_LOG", "warn"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success()
            && stdout.contains("RESULT: every GPU result identical to SEAL's CPU result")
            && json.exists(),
        "{name} exited with {}\n{}",
        output.status,
        cpp_build::printed(&output)
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        written["settings"],
        serde_json::json!({"SEAL_OPENCL_LOG": "warn"}),
        "{name}'s JSON names the settings of its run"
    );
    output
}
