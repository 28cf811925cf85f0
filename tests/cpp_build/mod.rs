//! Shared by the tests that build C++ against the crate (tests/cpp_example.rs,
//! tests/seal_gtest.rs): where the staticlib and the patched SEAL are, and running
//! commands so that a failure shows their whole output.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use seal_opencl::build_info;

/// `target/<profile>`, from the test executable in `target/<profile>/deps/`. Follows
/// CARGO_TARGET_DIR and the profile without reading either.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("test executables live in target/<profile>/deps")
        .to_path_buf()
}

/// The crate's staticlib, `libseal_opencl.a`: SEAL, the C++ bridge and the Rust code in
/// one archive. Cargo builds every crate type of the library for the tests and copies
/// the archive up to `target/<profile>/`, so it is there and current whenever the test
/// binary is.
pub fn staticlib() -> PathBuf {
    let lib = profile_dir().join("libseal_opencl.a");
    assert!(
        lib.is_file(),
        "{} is missing: cargo should have built it with the library ([lib] crate-type)",
        lib.display()
    );
    lib
}

/// Header folders for a C++ program using patched SEAL and `seal_opencl.h`.
pub fn include_dirs() -> Vec<&'static str> {
    let mut dirs = build_info::SEAL_INCLUDE_DIRS.to_vec();
    dirs.push(build_info::FFI_INCLUDE_DIR);
    dirs
}

/// A folder of `target/<profile>/` for a C++ build tree: kept between runs, so a second run
/// only rebuilds what changed.
pub fn build_dir(name: &str) -> PathBuf {
    let dir = profile_dir().join(name);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Runs `cmd` to the end and returns its output; panics with the command line, its exit
/// status and everything it printed unless it succeeds.
pub fn run_ok(what: &str, cmd: &mut Command) -> Output {
    let output = run(what, cmd);
    if !output.status.success() {
        panic!("{what} failed ({}): {cmd:?}\n{}", output.status, printed(&output));
    }
    output
}

/// Runs `cmd` to the end, whatever its exit status.
pub fn run(what: &str, cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot start {what} ({cmd:?}): {e}"))
}

/// stdout and stderr of a finished command, labelled.
pub fn printed(output: &Output) -> String {
    format!(
        "--- stdout ---\n{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
