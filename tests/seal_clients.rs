//! SEAL's own clients, unmodified, through the `SEAL` CMake package that `scripts/install.sh`
//! installs: SEAL's example programs (`native/examples`) and sealbench (`native/bench`, Google
//! Benchmark from the system) from the patched SEAL tree, built as their own CMake projects
//! build against an installed SEAL. They never call `install_backend`; with
//! `SEAL_GPU_ROUTE_ALL=1` the backend installs itself at the first routed call.
//! `examples/seal_clients.rs` runs them on both paths and compares (see its docs).

mod cpp_build;

use std::path::Path;
use std::process::Command;

use seal_opencl::build_info;

#[test]
fn seal_examples_and_sealbench_run_unmodified_on_the_gpu_path() {
    let prefix = cpp_build::install("seal-clients-install");
    let native = Path::new(build_info::SEAL_SOURCE_DIR).join("native");
    let examples = cpp_build::cmake_build(&native.join("examples"), &prefix, "seal-examples", &[]);
    // SEAL_BUILD_DEPS=OFF: Google Benchmark from the system instead of a download.
    let bench = cpp_build::cmake_build(
        &native.join("bench"),
        &prefix,
        "seal-bench",
        &["-DSEAL_BUILD_DEPS=OFF"],
    );
    let runner = cpp_build::profile_dir()
        .join("examples")
        .join("seal_clients");

    // Every example of SEAL's menu but the performance test (8), which only times.
    let output = cpp_build::run_ok(
        "seal_clients examples",
        Command::new(&runner)
            .arg("examples")
            .arg(examples.join("bin").join("sealexamples"))
            .args(["--select", "1,2,3,4,5,6,7", "--work"])
            .arg(&examples)
            .env_remove("SEAL_OPENCL_DEVICE"),
    );
    // The runner fails unless every GPU run printed what the CPU run printed and the CKKS
    // examples (5, 6, 7) routed their Evaluator calls, each cross-checked word for word.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("RESULT: SEAL's examples ran unmodified on the GPU path"),
        "{}",
        cpp_build::printed(&output)
    );

    // sealbench's CKKS evaluation at its smallest key-switching set, as a smoke run.
    let output = cpp_build::run_ok(
        "seal_clients bench",
        Command::new(&runner)
            .arg("bench")
            .arg(bench.join("bin").join("sealbench"))
            .args([
                "--filter",
                r"n=4096 / .* / CKKS / Evaluate(MulCt|RelinInplace|RescaleInplace|Rotate)$",
            ])
            .env_remove("SEAL_OPENCL_DEVICE"),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("n=4096")).count(),
        4,
        "{}",
        cpp_build::printed(&output)
    );
}
