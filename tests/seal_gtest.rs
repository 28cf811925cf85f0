//! SEAL's own googletest suite (native/tests of the patched tree) passes through the
//! OpenCL backend with SEAL_GPU_ROUTE_ALL=1: scripts/seal-gtest.sh builds `sealtest`
//! against the crate's staticlib and runs it on the default device (PoCL on CI).

mod cpp_build;

use std::path::Path;
use std::process::Command;

use seal_opencl::build_info;

#[test]
fn seal_googletest_suite_passes_through_the_backend() {
    let staticlib = cpp_build::staticlib();
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = cpp_build::run(
        "scripts/seal-gtest.sh",
        Command::new(manifest_dir.join("scripts").join("seal-gtest.sh"))
            .env("SEAL_SOURCE_DIR", build_info::SEAL_SOURCE_DIR)
            .env(
                "SEAL_OPENCL_INCLUDE_DIRS",
                cpp_build::include_dirs().join(";"),
            )
            .env("SEAL_OPENCL_LIB", &staticlib)
            .env("SEAL_GTEST_BUILD_DIR", cpp_build::build_dir("seal-gtest"))
            .env_remove("SEAL_OPENCL_DEVICE"),
    );
    assert!(
        output.status.success(),
        "scripts/seal-gtest.sh exited with {}\n{}",
        output.status,
        cpp_build::printed(&output)
    );
}
