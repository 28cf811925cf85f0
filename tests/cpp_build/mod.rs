//! Shared by the tests that build C++ against the crate (tests/cpp_example.rs,
//! tests/seal_gtest.rs, tests/hostile_load.rs): where the staticlib and the patched SEAL are,
//! installing the crate and building a CMake project against it as a user does, and running
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
/// one archive, built now by `cargo build --lib` for this test's profile. `cargo test`
/// compiles the library's staticlib too, but leaves it in `deps/` under a hash that differs
/// from `cargo build`'s (dev-dependencies change the features) and does not copy it up; a
/// `target/<profile>/libseal_opencl.a` from an earlier `cargo build` may be stale. Asking
/// cargo gives the current archive's exact path, following CARGO_TARGET_DIR and the
/// profile; when nothing changed it is a no-op.
pub fn staticlib() -> PathBuf {
    let profile = profile_dir();
    let profile_name = profile
        .file_name()
        .and_then(|n| n.to_str())
        .expect("the profile folder's name");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "--lib", "--message-format=json-render-diagnostics"])
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"));
    match profile_name {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        custom => {
            cmd.args(["--profile", custom]);
        }
    }
    let output = run_ok("cargo build --lib", &mut cmd);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" || message["target"]["name"] != "seal_opencl" {
            continue;
        }
        let staticlib = message["filenames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str())
            .find(|f| f.ends_with(".a"));
        if let Some(path) = staticlib {
            return PathBuf::from(path);
        }
    }
    panic!(
        "cargo build --lib reported no libseal_opencl.a (is crate-type staticlib still in Cargo.toml?)\n{}",
        printed(&output)
    );
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
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Installs the crate for C++ projects (`scripts/install.sh`) into a fresh prefix,
/// `target/<profile>/<name>`, and returns it.
pub fn install(name: &str) -> PathBuf {
    let prefix = build_dir(name);
    std::fs::remove_dir_all(&prefix).expect("a fresh install prefix");
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join("install.sh");
    run_ok("scripts/install.sh", Command::new(script).arg(&prefix));
    prefix
}

/// Configures the CMake project `source` (Release, `find_package` against the install
/// `prefix`, each of `defines` as a `-D` option) in `target/<profile>/<build>`, builds it on
/// every core and returns that folder.
pub fn cmake_build(source: &Path, build: &str, prefix: &Path, defines: &[&str]) -> PathBuf {
    let dir = build_dir(build);
    run_ok(
        &format!("configuring {}", source.display()),
        Command::new("cmake")
            .arg("-S")
            .arg(source)
            .arg("-B")
            .arg(&dir)
            .arg("-DCMAKE_BUILD_TYPE=Release")
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
            .args(defines.iter().map(|d| format!("-D{d}"))),
    );
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    run_ok(
        &format!("building {}", source.display()),
        Command::new("cmake")
            .arg("--build")
            .arg(&dir)
            .arg("--parallel")
            .arg(jobs.to_string()),
    );
    dir
}

/// Runs `cmd` to the end and returns its output; panics with the command line, its exit
/// status and everything it printed unless it succeeds.
pub fn run_ok(what: &str, cmd: &mut Command) -> Output {
    let output = run(what, cmd);
    if !output.status.success() {
        panic!(
            "{what} failed ({}): {cmd:?}\n{}",
            output.status,
            printed(&output)
        );
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
