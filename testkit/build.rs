//! SEAL from the test kit: its C API and its arithmetic as the tests' oracle, neither of which
//! the library (or its staticlib) holds.
//!
//! 1. bindgen over SEAL's C API (`native/src/seal/c/*.h`) into `OUT_DIR/seal_c.rs`
//!    (`src/sys.rs`). The headers are those of the patched SEAL that seal-opencl's build.rs
//!    built: it passes their folders as `DEP_SEAL_OPENCL_INCLUDE` (a path list, the source
//!    tree's `native/src` first, then the folder of the generated `seal/util/config.h`).
//! 2. The C API's archive (built beside SEAL's: `DEP_SEAL_OPENCL_LIB_DIR`,
//!    `DEP_SEAL_OPENCL_C_API_LIB`) is linked here. It calls into SEAL, which seal-opencl links
//!    after this crate's libraries.
//! 3. cxx_build compiles the oracles' bridges (`src/oracle.rs`, `cpp/oracle.cc`; BFV and
//!    BGV's `src/oracle_integer.rs`, `cpp/oracle_integer.cc`, `src/oracle_bfv.rs`,
//!    `cpp/oracle_bfv.cc`, `src/integer.rs` and `cpp/integer.cc`; CKKS encryption's
//!    `src/encrypt.rs` and `cpp/encrypt.cc`) against the same headers.

use std::fs;
use std::path::{Path, PathBuf};

/// Headers of `seal/c/` that bindgen must not read: C++ helpers of the C API's
/// implementation, and a Windows-only SDK include.
const C_API_INTERNAL_HEADERS: &[&str] = &["utilities.h", "targetver.h"];

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let include = std::env::var_os("DEP_SEAL_OPENCL_INCLUDE")
        .ok_or("seal-opencl's build script did not pass DEP_SEAL_OPENCL_INCLUDE")?;
    let include_dirs: Vec<PathBuf> = std::env::split_paths(&include).collect();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?);
    generate_c_bindings(&include_dirs, &out_dir.join("seal_c.rs"))?;

    let lib_dir = std::env::var("DEP_SEAL_OPENCL_LIB_DIR")
        .map_err(|_| "seal-opencl's build script did not pass DEP_SEAL_OPENCL_LIB_DIR")?;
    let c_api = std::env::var("DEP_SEAL_OPENCL_C_API_LIB")
        .map_err(|_| "seal-opencl's build script did not pass DEP_SEAL_OPENCL_C_API_LIB")?;

    println!("cargo:rerun-if-changed=cpp");
    println!("cargo:rerun-if-changed=src/oracle.rs");
    println!("cargo:rerun-if-changed=src/integer.rs");
    println!("cargo:rerun-if-changed=src/oracle_bfv.rs");
    println!("cargo:rerun-if-changed=src/encrypt.rs");
    cxx_build::bridges([
        "src/oracle.rs",
        "src/integer.rs",
        "src/oracle_bfv.rs",
        "src/encrypt.rs",
    ])
    .file("cpp/oracle.cc")
    .file("cpp/integer.cc")
    .file("cpp/oracle_bfv.cc")
    .file("cpp/encrypt.cc")
    .includes(&include_dirs)
    .std("c++17")
    .compile("seal_opencl_testkit_oracle");
    println!("cargo:rerun-if-changed=src/oracle_integer.rs");
    cxx_build::bridge("src/oracle_integer.rs")
        .file("cpp/oracle_integer.cc")
        .includes(&include_dirs)
        .std("c++17")
        .compile("seal_opencl_testkit_oracle_integer");
    println!("cargo:rustc-link-search=native={lib_dir}");
    println!("cargo:rustc-link-lib=static={c_api}");
    Ok(())
}

/// bindgen over every public C API header.
fn generate_c_bindings(include_dirs: &[PathBuf], out: &Path) -> Result<(), String> {
    let c_dir = include_dirs
        .first()
        .ok_or("DEP_SEAL_OPENCL_INCLUDE is empty")?
        .join("seal")
        .join("c");
    let mut headers: Vec<PathBuf> = fs::read_dir(&c_dir)
        .map_err(|e| format!("cannot read {}: {e}", c_dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "h")
                && !C_API_INTERNAL_HEADERS.iter().any(|h| p.ends_with(h))
        })
        .collect();
    headers.sort();

    // SEAL's C headers include C++ standard headers, hence the C++ mode.
    let mut builder = bindgen::Builder::default()
        .clang_args(["-xc++", "-std=c++17"])
        .clang_args(include_dirs.iter().map(|d| format!("-I{}", d.display())))
        .allowlist_file(".*/seal/c/[^/]*\\.h")
        .layout_tests(false);
    for header in &headers {
        println!("cargo:rerun-if-changed={}", header.display());
        builder = builder.header(header.to_string_lossy());
    }
    let bindings = builder
        .generate()
        .map_err(|e| format!("bindgen over {} failed: {e}", c_dir.display()))?;
    bindings
        .write_to_file(out)
        .map_err(|e| format!("cannot write {}: {e}", out.display()))
}
