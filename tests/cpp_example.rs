//! examples/cpp (seeds/001 Listing 1 in C++, and the host-path benchmark) builds with CMake
//! against the patched SEAL and the crate's staticlib, and its GPU ciphertexts equal the CPU
//! ones word for word on the default OpenCL device (PoCL on CI).

mod cpp_build;

use std::path::Path;
use std::process::Command;

/// The line listing1 prints last when every compared ciphertext is identical.
const IDENTICAL: &str = "RESULT: GPU and CPU ciphertexts are identical word for word";

#[test]
fn listing1_gpu_ciphertexts_equal_cpu_ones() {
    let staticlib = cpp_build::staticlib();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join("cpp");
    let build = cpp_build::build_dir("cpp-example");

    cpp_build::run_ok(
        "configuring examples/cpp",
        Command::new("cmake")
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .arg("-DCMAKE_BUILD_TYPE=Release")
            .arg(format!(
                "-DSEAL_OPENCL_INCLUDE_DIRS={}",
                cpp_build::include_dirs().join(";")
            ))
            .arg(format!("-DSEAL_OPENCL_LIB={}", staticlib.display())),
    );
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    cpp_build::run_ok(
        "building examples/cpp",
        Command::new("cmake")
            .arg("--build")
            .arg(&build)
            .arg("--parallel")
            .arg(jobs.to_string()),
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

    // The host-path benchmark (run for its figures on the GPU machine): a short run, for
    // its check that every GPU result equals SEAL's CPU result.
    let json = build.join("host_path-smoke.json");
    let output = cpp_build::run(
        "host_path",
        Command::new(build.join("host_path"))
            .args(["--log-n", "12", "--reps", "3", "--json"])
            .arg(&json)
            .env_remove("SEAL_OPENCL_DEVICE"),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success()
            && stdout.contains("RESULT: every GPU result identical to SEAL's CPU result")
            && json.exists(),
        "host_path exited with {}\n{}",
        output.status,
        cpp_build::printed(&output)
    );
}
