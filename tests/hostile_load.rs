//! Hostile input: `tests/hostile-load/hostile_load.cpp` loads truncated,
//! corrupted, oversized and out-of-range serializations of Ciphertext, Plaintext, RelinKeys
//! and GaloisKeys into `.gpu()`-marked objects (fresh, host_newer, in_sync, device_newer) and
//! into keys the backend caches, and checks each against an unmarked twin on SEAL's CPU path:
//! the same exception, the object's device state and words unchanged by a rejected load,
//! routed results equal to SEAL's CPU results afterwards (see the comment at the top of the
//! program). Built as a user's project (`scripts/install.sh`, CMake) and run on the default
//! device (PoCL on CI), once as built and once with AddressSanitizer in the program
//! (`-DHOSTILE_LOAD_ASAN=ON`), SEAL and the C++ bridge (`SEAL_OPENCL_SANITIZE=address`, a build
//! of the crate in a target folder of its own).

mod cpp_build;

use std::path::Path;
use std::process::Command;

/// The line hostile_load prints last when every check held.
const PASSED: &str =
    "RESULT: every hostile load ended as on SEAL's CPU path, and left nothing on the device";

#[test]
fn hostile_serializations_leave_gpu_objects_as_seal_leaves_cpu_ones() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("hostile-load");
    let plain = cpp_build::install("hostile-load-install", &[]);
    // SEAL and the bridge compiled with AddressSanitizer too: a build of the crate of its own.
    let asan_target = cpp_build::build_dir("asan-target");
    let asan = cpp_build::install(
        "hostile-load-asan-install",
        &[
            ("SEAL_OPENCL_SANITIZE", "address"),
            (
                "CARGO_TARGET_DIR",
                asan_target.to_str().expect("a UTF-8 path"),
            ),
        ],
    );
    for (build, prefix, defines) in [
        ("hostile-load", &plain, &[][..]),
        ("hostile-load-asan", &asan, &["-DHOSTILE_LOAD_ASAN=ON"][..]),
    ] {
        let build = cpp_build::cmake_build(&source, prefix, build, defines);
        // The default device, as a user gets it; SEAL_GPU_ROUTE_ALL would mark the CPU twins.
        let output = cpp_build::run(
            "hostile_load",
            Command::new(build.join("hostile_load"))
                .env_remove("SEAL_OPENCL_DEVICE")
                .env_remove("SEAL_GPU_ROUTE_ALL"),
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.lines().any(|l| l == PASSED),
            "{} exited with {}\n{}",
            build.display(),
            output.status,
            cpp_build::printed(&output)
        );
        println!("{}:\n{stdout}", build.display());
    }
}
