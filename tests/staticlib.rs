//! What the shipped archive holds: `libseal_opencl.a` as `cargo build --lib` (and
//! scripts/install.sh) makes it defines no function of SEAL's C API, none of the test kit's
//! oracle and no test hook. SEAL's C API and the oracle are linked by the test kit alone
//! (testkit/build.rs); the hook needs the `test-hooks` feature.

mod cpp_build;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use cpp_build::{run_ok, staticlib};
use seal_opencl::build_info;

/// The functions SEAL's C API declares (`SEAL_C_FUNC Name(` in `seal/c/*.h`).
fn c_api_functions() -> BTreeSet<String> {
    let dir = Path::new(build_info::SEAL_INCLUDE_DIRS[0])
        .join("seal")
        .join("c");
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("SEAL's C API headers") {
        let path = entry.expect("a C API header").path();
        if path.extension().is_none_or(|e| e != "h") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a readable header");
        for declaration in text.split("SEAL_C_FUNC").skip(1) {
            let name: String = declaration
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    assert!(
        names.len() > 100,
        "only {} C API functions in {}",
        names.len(),
        dir.display()
    );
    names
}

/// The functions of the test kit's oracle bridge (`fn name(` in testkit/src/oracle.rs).
fn oracle_functions() -> BTreeSet<String> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("testkit/src/oracle.rs");
    let text = std::fs::read_to_string(&source).expect("the oracle's bridge");
    let names: BTreeSet<String> = text
        .split("fn ")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .filter(|name: &String| name.starts_with("seal_"))
        .collect();
    assert!(names.len() >= 10, "only {names:?} in {}", source.display());
    names
}

#[test]
fn the_staticlib_defines_no_c_api_no_oracle_and_no_test_hook() {
    let archive = staticlib();
    let output = run_ok(
        "nm",
        Command::new("nm")
            .args(["--defined-only", "--format=posix"])
            .arg(&archive),
    );
    // posix format: "name type value [size]" per symbol, the name mangled (no spaces).
    let symbols: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split(' ').next())
        .map(str::to_string)
        .collect();
    assert!(
        symbols.len() > 1000,
        "nm listed only {} symbols of {}",
        symbols.len(),
        archive.display()
    );

    let c_api = c_api_functions();
    let c_api_defined: Vec<&String> = symbols
        .iter()
        .filter(|s| c_api.contains(s.as_str()))
        .collect();
    assert!(
        c_api_defined.is_empty(),
        "SEAL's C API in {}: {c_api_defined:?}",
        archive.display()
    );

    let oracle = oracle_functions();
    // Mangled, a function's name is a part of its symbol (`_ZN11seal_opencl15seal_get_primes...`,
    // `seal_opencl$cxxbridge1$seal_get_primes`).
    let oracle_defined: Vec<&String> = symbols
        .iter()
        .filter(|s| oracle.iter().any(|name| s.contains(name.as_str())))
        .collect();
    assert!(
        oracle_defined.is_empty(),
        "the test kit's oracle in {}: {oracle_defined:?}",
        archive.display()
    );

    let hooks: Vec<&String> = symbols
        .iter()
        .filter(|s| s.contains("crosscheck_corrupt_next_result"))
        .collect();
    assert!(
        hooks.is_empty(),
        "a test hook in {}: {hooks:?}",
        archive.display()
    );
}
