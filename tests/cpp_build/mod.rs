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
/// one archive, built now by `cargo build --lib` for this test's profile. `cargo test`
/// compiles the library's staticlib too, but leaves it in `deps/` under a hash that differs
/// from `cargo build`'s (dev-dependencies change the features) and does not copy it up; a
/// `target/<profile>/libseal_opencl.a` from an earlier `cargo build` may be stale. Asking
/// cargo gives the current archive's exact path, following CARGO_TARGET_DIR and the
/// profile; when nothing changed it is a no-op.
pub fn staticlib() -> PathBuf {
    cargo_build(&["--lib"])
        .iter()
        .filter(|m| m["target"]["name"] == "seal_opencl")
        .flat_map(|m| m["filenames"].as_array().into_iter().flatten())
        .filter_map(|f| f.as_str())
        .find(|f| f.ends_with(".a"))
        .map(PathBuf::from)
        .expect("cargo build --lib reported no libseal_opencl.a (is crate-type staticlib still in Cargo.toml?)")
}

/// `cargo build ARGS` for this test's profile; cargo's artifact messages.
fn cargo_build(args: &[&str]) -> Vec<serde_json::Value> {
    let profile = profile_dir();
    let profile_name = profile
        .file_name()
        .and_then(|n| n.to_str())
        .expect("the profile folder's name");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.arg("build")
        .args(args)
        .arg("--message-format=json-render-diagnostics")
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
    let output = run_ok(&format!("cargo build {}", args.join(" ")), &mut cmd);
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .collect()
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

/// `scripts/install.sh` into a fresh prefix `target/<profile>/NAME`, as a user installs the
/// library: the archive, the headers and the `SEALOpenCL` and `SEAL` CMake packages; `envs`
/// for the build (e.g. `SEAL_OPENCL_SANITIZE`, with a `CARGO_TARGET_DIR` of its own). The
/// install builds on this test build's SEAL: the `SEAL_SOURCE_DIR` it inherits, else, as
/// build.rs without it, sealy's 4.0.0 (`SEAL_OFFLINE=1`, where install.sh would pick 4.4.3).
pub fn install(name: &str, envs: &[(&str, &str)]) -> PathBuf {
    let prefix = build_dir(name);
    std::fs::remove_dir_all(&prefix).expect("a fresh install prefix");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(root.join("scripts").join("install.sh"));
    if std::env::var_os("SEAL_SOURCE_DIR").is_none() {
        cmd.env("SEAL_OFFLINE", "1");
    }
    run_ok(
        "scripts/install.sh",
        cmd.arg(&prefix).envs(envs.iter().copied()),
    );
    prefix
}

/// Configures the CMake project at `source` against the packages in `prefix` into
/// `build_dir(name)` (with `defines`, `-DNAME=VALUE`) and builds it on every core. The
/// packages' folders are named outright: CMake keeps those it found in its cache, which a
/// new CMAKE_PREFIX_PATH would not change.
pub fn cmake_build(source: &Path, prefix: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let build = build_dir(name);
    let packages = prefix.join("lib").join("cmake");
    // install.sh leaves one `SEAL-X.Y` folder, named after the SEAL it built.
    let seal_package = std::fs::read_dir(&packages)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", packages.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("SEAL-"))
        })
        .unwrap_or_else(|| panic!("no SEAL-X.Y package in {}", packages.display()));
    run_ok(
        &format!("configuring {}", source.display()),
        Command::new("cmake")
            .arg("-S")
            .arg(source)
            .arg("-B")
            .arg(&build)
            .arg("-DCMAKE_BUILD_TYPE=Release")
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
            .arg(format!(
                "-DSEALOpenCL_DIR={}",
                packages.join("SEALOpenCL").display()
            ))
            .arg(format!("-DSEAL_DIR={}", seal_package.display()))
            .args(defines),
    );
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    run_ok(
        &format!("building {}", source.display()),
        Command::new("cmake")
            .arg("--build")
            .arg(&build)
            .arg("--parallel")
            .arg(jobs.to_string()),
    );
    build
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
