//! Prints where this build put the patched SEAL and the crate's staticlib, as shell
//! assignments (`eval "$(cargo run --release --quiet --example build_info)"`), for C++
//! builds against the crate: examples/cpp/CMakeLists.txt and scripts/seal-gtest.sh.
//! CMake lists are `;`-separated, so the values pass to `-D` options as they are.
//!
//! `SEAL_OPENCL_LIB` is `target/<profile>/libseal_opencl.a`, which only `cargo build
//! --lib` (or a plain `cargo build`) brings up to date: run it first.

use seal_opencl::build_info;
use std::path::{Path, PathBuf};

/// `target/<profile>`: examples run from `target/<profile>/examples/`, and cargo puts the
/// staticlib one level up.
fn profile_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.to_path_buf())
}

/// Single-quoted for sh: only `'` itself needs care.
fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

fn main() {
    let include_dirs: Vec<&str> = build_info::SEAL_INCLUDE_DIRS
        .iter()
        .copied()
        .chain([build_info::FFI_INCLUDE_DIR])
        .collect();
    let staticlib = profile_dir()
        .map(|d| d.join("libseal_opencl.a"))
        .unwrap_or_else(|| Path::new("libseal_opencl.a").to_path_buf());
    let vars = [
        ("SEAL_VERSION", build_info::SEAL_VERSION.to_string()),
        ("SEAL_SOURCE_DIR", build_info::SEAL_SOURCE_DIR.to_string()),
        ("SEAL_OPENCL_INCLUDE_DIRS", include_dirs.join(";")),
        ("SEAL_LIB_DIR", build_info::SEAL_LIB_DIR.to_string()),
        ("SEAL_OPENCL_LIB", staticlib.display().to_string()),
    ];
    for (name, value) in vars {
        println!("{name}={}", quoted(&value));
    }
}
