//! Builds the patched SEAL and the C++ side of the bridge.
//!
//! 1. SEAL's source: `SEAL_SOURCE_DIR` (stock SEAL 4.4.3 recommended), else the `SEAL/` folder
//!    of the crates.io package `sealy` 0.2.0 (SEAL 4.0.0), fetched by cargo itself (no other
//!    download). The version comes from SEAL's CMakeLists.txt and must be one of
//!    `version::SUPPORTED_SEAL_VERSIONS` (build/version.rs).
//! 2. The tree is synced into OUT_DIR with that version's series (`seal-patch/VERSION/series`)
//!    applied (pure Rust).
//! 3. cmake builds the static `seal-X.Y` and `sealc-X.Y` (C API) libraries. The library links
//!    only `seal-X.Y`: SEAL's C API is the test kit's (testkit/build.rs links it).
//! 4. cxx_build compiles `src/ffi/mod.rs`'s bridge and the C++ of `ffi/` against the tree; the
//!    `test-hooks` feature adds the test hooks (`SEAL_OPENCL_TEST_HOOKS`).
//! 5. SEAL's include folders go to dependents' build scripts as `DEP_SEAL_OPENCL_INCLUDE`
//!    (a path list; testkit/build.rs runs bindgen over SEAL's C API with it), the folder of
//!    SEAL's archives as `DEP_SEAL_OPENCL_LIB_DIR` and the C API's archive as
//!    `DEP_SEAL_OPENCL_C_API_LIB`.
//!
//! 6. Every OpenCL source under `opencl/` names the sources it uses on its first line, and
//!    the build fails where it uses another's identifier without naming it
//!    (build/cl_prelude.rs).
//!
//! Steps 2 and 3 take minutes, so they are skipped while a stamp says that the same
//! source, patches and cmake settings were already built. They happen in one folder of the
//! profile (`target/<profile>/build/seal-opencl-seal`), not in OUT_DIR, because cargo gives
//! each feature set of this package an OUT_DIR of its own: `cargo build --lib` (no test hooks)
//! and `cargo test` (test hooks) would otherwise build SEAL twice.

#[path = "build/cl_prelude.rs"]
mod cl_prelude;
#[path = "build/patch.rs"]
mod patch;
#[path = "build/version.rs"]
mod version;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

type BuildResult<T> = Result<T, String>;

const SEALY_VERSION: &str = "0.2.0";

/// Top-level folders of the SEAL tree that the build never reads. `dotnet/` stays: SEAL's
/// CMakeLists configures the .NET wrapper's project templates whenever the C API is on.
const SKIPPED_TOP_LEVEL: &[&str] = &["android"];

/// SEAL's cmake options. Part of the stamp, so changing one rebuilds SEAL.
const CMAKE_DEFINES: &[(&str, &str)] = &[
    // SEAL_DEBUG's checks make SEAL several times slower; tests compare against SEAL,
    // so its speed matters even in debug builds of this crate.
    ("CMAKE_BUILD_TYPE", "Release"),
    ("CMAKE_POSITION_INDEPENDENT_CODE", "ON"),
    ("BUILD_SHARED_LIBS", "OFF"),
    ("SEAL_BUILD_SEAL_C", "ON"),
    ("SEAL_BUILD_STATIC_SEAL_C", "ON"),
    // SEAL's CMakeLists refuses SEAL_C without SEAL_BUILD_DEPS, which would download zlib and
    // Zstandard (sealy's tree builds them from thirdparty/). SEAL_FIND_COMPRESSION
    // (seal-patch/*/0009) takes both from the system instead (Debian's zlib1g-dev and
    // libzstd-dev, scripts/setup.sh), and every other optional dependency is off:
    // FETCHCONTENT_FULLY_DISCONNECTED makes sure that nothing is downloaded.
    ("SEAL_BUILD_DEPS", "ON"),
    ("FETCHCONTENT_FULLY_DISCONNECTED", "ON"),
    ("SEAL_USE_ZLIB", "ON"),
    ("SEAL_USE_ZSTD", "ON"),
    ("SEAL_FIND_COMPRESSION", "ON"),
    ("SEAL_USE_MSGSL", "OFF"),
    ("SEAL_USE_INTEL_HEXL", "OFF"),
    ("SEAL_USE_CXX17", "ON"),
    ("SEAL_USE_INTRIN", "ON"),
    ("SEAL_BUILD_TESTS", "OFF"),
    ("SEAL_BUILD_BENCH", "OFF"),
    ("SEAL_BUILD_EXAMPLES", "OFF"),
];

/// The C++ side of the bridge (`ffi/backend.h` names what each backend file holds).
const BRIDGE_SOURCES: &[&str] = &[
    "ffi/bridge.cc",
    "ffi/residency.cc",
    "ffi/routing.cc",
    "ffi/crosscheck.cc",
    "ffi/install.cc",
];

/// The system's shared libraries that SEAL's archives need, in link order
/// (cmake/SEALOpenCLConfig.cmake lists them for C++ programs).
const SEAL_SYSTEM_LIBS: &[&str] = &["zstd", "z", "stdc++"];

/// SEAL's static archives (`lib{name}.a`) for a version: cmake names them by major.minor.
struct SealLibs {
    /// SEAL itself, linked into the library.
    seal: String,
    /// SEAL's C API, built for the test kit and linked by it alone.
    c_api: String,
}

impl SealLibs {
    fn of(version: &str) -> SealLibs {
        let major_minor = version.rsplit_once('.').map_or(version, |(mm, _)| mm);
        SealLibs {
            seal: format!("seal-{major_minor}"),
            c_api: format!("sealc-{major_minor}"),
        }
    }

    fn both(&self) -> [&str; 2] {
        [&self.c_api, &self.seal]
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> BuildResult<()> {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
    let out_dir = PathBuf::from(env("OUT_DIR")?);
    println!("cargo:rerun-if-changed=seal-patch");
    println!("cargo:rerun-if-changed=ffi");
    println!("cargo:rerun-if-changed=src/ffi/mod.rs");
    println!("cargo:rerun-if-changed=opencl");
    cl_prelude::check(&manifest_dir.join("opencl"))
        .map_err(|e| format!("OpenCL sources' preludes (their `// Uses:` lines):\n{e}"))?;
    println!("cargo:rerun-if-env-changed=SEAL_SOURCE_DIR");
    println!("cargo:rerun-if-env-changed={SANITIZE_ENV}");
    let sanitizer = sanitizer_flags()?;

    let seal_source = locate_seal_source(&out_dir)?;
    let version = seal_version(&seal_source)?;
    let seal_libs = SealLibs::of(&version);
    let tree = list_tree(&seal_source)?;
    let patches = read_every_series(&manifest_dir.join("seal-patch"), &version)?;

    let seal_dir = seal_build_dir(&out_dir);
    let seal_src = seal_dir.join("seal-src");
    let cmake_out = seal_dir.join("seal-cmake");
    let lib_dir = cmake_out.join("build").join("lib");
    let stamp = seal_dir.join("seal-build.stamp");
    let fingerprint = fingerprint(&seal_source, &tree, &patches, sanitizer)?;

    let libs_present = seal_libs
        .both()
        .iter()
        .all(|l| lib_dir.join(format!("lib{l}.a")).is_file());
    let up_to_date =
        libs_present && fs::read_to_string(&stamp).ok().as_deref() == Some(&fingerprint);
    if !up_to_date {
        // A stamp left from an older build must not survive a failed one.
        remove_if_present(&stamp)?;
        let patched = patch::apply_series(&patches, |rel| read_tree_file(&seal_source, rel))
            .map_err(|e| e.to_string())?;
        sync_tree(&tree, &patched, &seal_src)?;
        build_seal(&seal_src, &cmake_out, sanitizer);
        for lib in seal_libs.both() {
            let file = lib_dir.join(format!("lib{lib}.a"));
            if !file.is_file() {
                return Err(format!("the SEAL build did not produce {}", file.display()));
            }
        }
        fs::write(&stamp, &fingerprint).map_err(|e| io_context("write", &stamp, e))?;
    }

    let include_dirs = [
        seal_src.join("native").join("src"),
        // seal/util/config.h, generated by cmake
        cmake_out.join("build").join("native").join("src"),
    ];
    let include_list = std::env::join_paths(&include_dirs)
        .map_err(|e| format!("SEAL's include folders cannot form a path list: {e}"))?;
    println!("cargo:include={}", include_list.to_string_lossy());
    let seal = BuiltSeal {
        version: &version,
        source: &seal_src,
        include_dirs: &include_dirs,
        lib_dir: &lib_dir,
        lib: &seal_libs.seal,
    };
    write_build_info(&out_dir, &manifest_dir, &seal)?;

    // The bridge archive refers to SEAL, so it goes first on the link line.
    let mut bridge = cxx_build::bridge("src/ffi/mod.rs");
    bridge
        .files(BRIDGE_SOURCES)
        .includes(&include_dirs)
        .std("c++17");
    if std::env::var_os("CARGO_FEATURE_TEST_HOOKS").is_some() {
        bridge.define("SEAL_OPENCL_TEST_HOOKS", None);
    }
    if let Some(flags) = sanitizer {
        for flag in flags {
            bridge.flag(flag);
        }
        // The instrumented code needs the sanitizer's runtime in every binary that links it
        // (rustc links with -nodefaultlibs, so -fsanitize=address alone would not bring it).
        // In a Rust binary it does not come first in the library list, which ASan checks at
        // start: run those with ASAN_OPTIONS=verify_asan_link_order=0 (scripts/install.sh does).
        println!("cargo:rustc-link-lib=dylib=asan");
    }
    bridge.compile("seal_opencl_bridge");

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=static={}", seal_libs.seal);
    println!("cargo:lib_dir={}", lib_dir.display());
    println!("cargo:c_api_lib={}", seal_libs.c_api);
    // SEAL's archives need the system's Zstandard and zlib (SEAL_FIND_COMPRESSION) and the
    // C++ runtime after them on the link line.
    for lib in SEAL_SYSTEM_LIBS {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
    // Patched SEAL refers to the default backend's installer weakly, which does not pull its
    // archive member in: this package's tests, examples and benches get it, as C++ programs
    // linked through cmake/SEALOpenCLConfig.cmake do.
    println!("cargo:rustc-link-arg=-Wl,--undefined=seal_gpu_install_default_backend");
    Ok(())
}

/// Where SEAL's patched tree, build and stamp live: `seal-opencl-seal` beside this package's
/// build folders (OUT_DIR is `<profile>/build/seal-opencl-<hash>/out`), shared by every
/// feature set of the package; OUT_DIR itself if it lies elsewhere. Cargo locks the target
/// folder and unifies the package's features within one build, so the folder has one writer.
fn seal_build_dir(out_dir: &Path) -> PathBuf {
    match out_dir.parent().and_then(Path::parent) {
        Some(build) if build.file_name().is_some_and(|n| n == "build") => {
            build.join("seal-opencl-seal")
        }
        _ => out_dir.to_path_buf(),
    }
}

/// The patched SEAL this build made.
struct BuiltSeal<'a> {
    version: &'a str,
    source: &'a Path,
    include_dirs: &'a [PathBuf],
    lib_dir: &'a Path,
    /// SEAL's archive in the library (`lib{lib}.a` in `lib_dir`).
    lib: &'a str,
}

/// `OUT_DIR/build_info.rs`, included by `src/build_info.rs`: which SEAL was built and where
/// the patched tree, its headers and libraries lie, so that C++ builds against this crate
/// (examples/cpp, SEAL's googletest suite) need not search `target/*/build/seal-opencl-*/out`.
fn write_build_info(out_dir: &Path, manifest_dir: &Path, seal: &BuiltSeal) -> BuildResult<()> {
    let text = |p: &Path| {
        p.to_str()
            .map(|s| format!("{s:?}"))
            .ok_or_else(|| format!("{} is not UTF-8", p.display()))
    };
    let list = |paths: &[PathBuf]| -> BuildResult<String> {
        let items: BuildResult<Vec<String>> = paths.iter().map(|p| text(p)).collect();
        Ok(format!("&[{}]", items?.join(", ")))
    };
    let source = format!(
        "pub const SEAL_VERSION: &str = {:?};\n\
         pub const SEAL_SOURCE_DIR: &str = {};\n\
         pub const SEAL_INCLUDE_DIRS: &[&str] = {};\n\
         pub const SEAL_LIB_DIR: &str = {};\n\
         pub const SEAL_LIB: &str = {:?};\n\
         pub const FFI_INCLUDE_DIR: &str = {};\n",
        seal.version,
        text(seal.source)?,
        list(seal.include_dirs)?,
        text(seal.lib_dir)?,
        seal.lib,
        text(&manifest_dir.join("ffi"))?,
    );
    write_if_changed(&out_dir.join("build_info.rs"), source.as_bytes())
}

fn env(name: &str) -> BuildResult<String> {
    std::env::var(name).map_err(|_| format!("cargo did not set {name}"))
}

fn io_context(what: &str, path: &Path, e: std::io::Error) -> String {
    format!("cannot {what} {}: {e}", path.display())
}

fn remove_if_present(path: &Path) -> BuildResult<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_context("remove", path, e)),
        _ => Ok(()),
    }
}

/// The root of the SEAL tree (the folder holding CMakeLists.txt and native/).
fn locate_seal_source(out_dir: &Path) -> BuildResult<PathBuf> {
    let root = match std::env::var_os("SEAL_SOURCE_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            println!("cargo:rerun-if-changed={}", dir.display());
            dir
        }
        None => sealy_package_dir(out_dir)?.join("SEAL"),
    };
    if !root.join("CMakeLists.txt").is_file() || !root.join("native/src/seal/c").is_dir() {
        return Err(format!(
            "{} is not a SEAL source tree (no CMakeLists.txt or native/src/seal/c)",
            root.display()
        ));
    }
    Ok(root)
}

/// The unpacked crates.io package `sealy`, which ships SEAL 4.0.0 with its third-party
/// sources. `cargo metadata` on a stub manifest that depends on it makes cargo download
/// and unpack it into its registry cache like any other dependency.
fn sealy_package_dir(out_dir: &Path) -> BuildResult<PathBuf> {
    let stub = out_dir.join("sealy-stub");
    fs::create_dir_all(&stub).map_err(|e| io_context("create", &stub, e))?;
    let manifest = stub.join("Cargo.toml");
    let text = format!(
        "[package]\nname = \"seal-opencl-seal-source\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [lib]\npath = \"empty.rs\"\n\n[dependencies]\nsealy = \"={SEALY_VERSION}\"\n\n\
         # Keeps the stub out of any workspace above OUT_DIR.\n[workspace]\n"
    );
    write_if_changed(&manifest, text.as_bytes())?;
    write_if_changed(&stub.join("empty.rs"), b"")?;

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .map_err(|e| format!("cannot run {cargo} metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`{cargo} metadata` for sealy {SEALY_VERSION} failed (set SEAL_SOURCE_DIR to a SEAL 4.4.3 tree, upstream microsoft/SEAL at tag v4.4.3, to build without it):\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cannot parse cargo metadata output: {e}"))?;
    let manifest_path = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "sealy" && p["version"] == SEALY_VERSION)
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or_else(|| format!("cargo metadata does not list sealy {SEALY_VERSION}"))?;
    Path::new(manifest_path)
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("sealy's manifest path {manifest_path} has no folder"))
}

fn write_if_changed(path: &Path, content: &[u8]) -> BuildResult<()> {
    if fs::read(path).ok().as_deref() != Some(content) {
        fs::write(path, content).map_err(|e| io_context("write", path, e))?;
    }
    Ok(())
}

/// One file of the SEAL tree: its `/`-separated path relative to the root, and where
/// it lies.
struct TreeFile {
    rel: String,
    path: PathBuf,
}

/// Every file of the SEAL tree the build needs, sorted by relative path.
fn list_tree(root: &Path) -> BuildResult<Vec<TreeFile>> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<TreeFile>) -> BuildResult<()> {
        let entries = fs::read_dir(dir).map_err(|e| io_context("read", dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io_context("read", dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == ".git" || (rel.is_empty() && SKIPPED_TOP_LEVEL.contains(&name.as_str())) {
                continue;
            }
            let child_rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let path = entry.path();
            // metadata() follows symbolic links, so a linked file is copied as a file.
            let meta = fs::metadata(&path).map_err(|e| io_context("stat", &path, e))?;
            if meta.is_dir() {
                walk(&path, &child_rel, out)?;
            } else {
                out.push(TreeFile {
                    rel: child_rel,
                    path,
                });
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(root, "", &mut files)?;
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(files)
}

fn read_tree_file(root: &Path, rel: &str) -> Result<Option<String>, String> {
    let path = root.join(rel);
    match fs::read(&path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("{} is not UTF-8 text", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_context("read", &path, e)),
    }
}

/// The SEAL version of the tree at `root` (build/version.rs), or an error naming the tree.
fn seal_version(root: &Path) -> BuildResult<String> {
    let path = root.join("CMakeLists.txt");
    let text = fs::read_to_string(&path).map_err(|e| io_context("read", &path, e))?;
    version::seal_version(&text).map_err(|e| format!("{}: {e}", root.display()))
}

/// The series of SEAL `version` ([`read_patches`]), after reading every supported version's:
/// the crate ships them all, so a series naming a missing patch fails every build, whichever
/// SEAL it is on.
fn read_every_series(dir: &Path, version: &str) -> BuildResult<Vec<(String, String)>> {
    let mut chosen = None;
    for supported in version::SUPPORTED_SEAL_VERSIONS {
        let patches = read_patches(dir, supported)?;
        if *supported == version {
            chosen = Some(patches);
        }
    }
    chosen.ok_or_else(|| format!("no series for SEAL {version} in {}", dir.display()))
}

/// The series' patches of SEAL `version` as (name, text), in series order; a name is the
/// patch's path under `seal-patch/` (`4.4.3/0001-backend-interface.patch`).
fn read_patches(dir: &Path, version: &str) -> BuildResult<Vec<(String, String)>> {
    let dir = dir.join(version);
    let series_path = dir.join("series");
    let series =
        fs::read_to_string(&series_path).map_err(|e| io_context("read", &series_path, e))?;
    patch::parse_series(&series)
        .into_iter()
        .map(|name| {
            let path = dir.join(&name);
            let text = fs::read_to_string(&path).map_err(|e| {
                format!(
                    "seal-patch/{version}/series names {name}, but {}",
                    io_context("read", &path, e)
                )
            })?;
            Ok((format!("{version}/{name}"), text))
        })
        .collect()
}

/// What the SEAL build depends on: the source tree (paths, sizes, modification times),
/// the patches and the cmake settings.
fn fingerprint(
    root: &Path,
    tree: &[TreeFile],
    patches: &[(String, String)],
    sanitizer: Option<&[&str]>,
) -> BuildResult<String> {
    let mut h = DefaultHasher::new();
    root.hash(&mut h);
    for file in tree {
        let meta = fs::metadata(&file.path).map_err(|e| io_context("stat", &file.path, e))?;
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_nanos());
        (&file.rel, meta.len(), modified).hash(&mut h);
    }
    patches.hash(&mut h);
    CMAKE_DEFINES.hash(&mut h);
    sanitizer.hash(&mut h);
    Ok(format!("{:016x}\n", h.finish()))
}

/// Makes `dest` hold exactly the patched tree. Files whose content is already right
/// are left alone, so their timestamps stay old and cmake recompiles only what a
/// changed patch touched.
fn sync_tree(
    tree: &[TreeFile],
    patched: &BTreeMap<String, Option<String>>,
    dest: &Path,
) -> BuildResult<()> {
    let mut wanted = BTreeSet::new();
    for file in tree {
        if !patched.contains_key(&file.rel) {
            let target = dest.join(&file.rel);
            let source = fs::read(&file.path).map_err(|e| io_context("read", &file.path, e))?;
            if fs::read(&target).ok() != Some(source) {
                create_parent(&target)?;
                fs::copy(&file.path, &target).map_err(|e| io_context("copy to", &target, e))?;
            }
            wanted.insert(file.rel.clone());
        }
    }
    for (rel, content) in patched {
        if let Some(content) = content {
            let target = dest.join(rel);
            create_parent(&target)?;
            write_if_changed(&target, content.as_bytes())?;
            wanted.insert(rel.clone());
        }
    }
    // Files of an earlier source or series that are no longer part of the tree.
    let mut present = Vec::new();
    if dest.is_dir() {
        present = list_tree(dest)?;
    }
    for file in present {
        if !wanted.contains(&file.rel) {
            fs::remove_file(&file.path).map_err(|e| io_context("remove", &file.path, e))?;
        }
    }
    Ok(())
}

fn create_parent(path: &Path) -> BuildResult<()> {
    match path.parent() {
        Some(parent) => fs::create_dir_all(parent).map_err(|e| io_context("create", parent, e)),
        None => Ok(()),
    }
}

/// Configures and builds the `sealc` target (which pulls in `seal`); the cmake crate
/// panics with cmake's output if either step fails.
fn build_seal(source: &Path, out: &Path, sanitizer: Option<&[&str]>) {
    let mut config = cmake::Config::new(source);
    config.out_dir(out).profile("Release").build_target("sealc");
    for (key, value) in CMAKE_DEFINES {
        config.define(key, value);
    }
    for flag in sanitizer.unwrap_or_default() {
        config.cxxflag(flag);
    }
    config.build();
}

/// `SEAL_OPENCL_SANITIZE=address` compiles SEAL and the C++ bridge with AddressSanitizer, so
/// that a C++ program linked with `-fsanitize=address` (tests/hostile_load.rs) checks SEAL's
/// own code, its deserialization included; the Rust code is not instrumented. Unset or empty:
/// no sanitizer. Use a target folder of its own (CARGO_TARGET_DIR), since the setting rebuilds
/// SEAL.
const SANITIZE_ENV: &str = "SEAL_OPENCL_SANITIZE";

const ADDRESS_SANITIZER: &[&str] = &["-fsanitize=address", "-fno-omit-frame-pointer"];

fn sanitizer_flags() -> BuildResult<Option<&'static [&'static str]>> {
    match std::env::var(SANITIZE_ENV).as_deref() {
        Err(_) | Ok("") => Ok(None),
        Ok("address") => Ok(Some(ADDRESS_SANITIZER)),
        Ok(other) => Err(format!(
            "{SANITIZE_ENV}={other:?}: the only sanitizer supported is `address`"
        )),
    }
}
