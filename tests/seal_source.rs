//! scripts/seal-source.sh, the choice of SEAL of the build scripts, run on archives given as
//! file:// URLs (SEAL_SOURCE_URL) in a scratch copy of the repository's scripts/: a download
//! that fails falls back to SEAL 4.0.0 with a warning, an archive whose content is not SEAL
//! 4.4.3's is rejected, and SEAL 4.4.3's own content (when this build has a 4.4.3 tree,
//! SEAL_SOURCE_DIR) is accepted and cached with a target folder of its own.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The script, built in: the test reads nothing of the source tree, so it runs from the GPU
/// bundle on another machine.
const SEAL_SOURCE_SH: &str = include_str!("../scripts/seal-source.sh");

/// A scratch folder holding `scripts/seal-source.sh`, so that its cache (`target/`) is its own.
fn scratch(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("seal-source-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("scripts")).unwrap();
    fs::write(root.join("scripts/seal-source.sh"), SEAL_SOURCE_SH).unwrap();
    root
}

/// Runs the script through bash rather than executing the file just written: a child that
/// another test thread forks meanwhile may still hold it open for writing (ETXTBSY).
fn seal_source(root: &Path, url: &str) -> Output {
    Command::new("bash")
        .arg(root.join("scripts/seal-source.sh"))
        .env_remove("SEAL_SOURCE_DIR")
        .env_remove("SEAL_OFFLINE")
        .env_remove("CARGO_TARGET_DIR")
        .env("SEAL_SOURCE_URL", url)
        .output()
        .unwrap()
}

/// `tree` packed as GitHub packs a tag: one top folder, gzip.
fn archive(tree: &Path, into: &Path) -> String {
    let file = into.join("seal.tar.gz");
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&file)
        .arg("--transform=s,^\\.,SEAL-4.4.3,")
        .arg("-C")
        .arg(tree)
        .arg(".")
        .status()
        .unwrap();
    assert!(status.success());
    format!("file://{}", file.display())
}

#[test]
fn a_failed_download_falls_back_to_seal_4_0_0_with_a_warning() {
    let root = scratch("fallback");
    let out = seal_source(&root, &format!("file://{}/absent.tar.gz", root.display()));
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "export SEAL_OFFLINE=1\n"
    );
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(
        warning.contains("WARNING: cannot download SEAL 4.4.3"),
        "{warning}"
    );
    assert!(warning.contains("hardened deserialization"), "{warning}");
    assert!(
        warning.contains("cannot load data written by SEAL 4.1 or newer"),
        "{warning}"
    );
}

#[test]
fn an_archive_whose_content_is_not_seal_4_4_3_is_rejected() {
    let root = scratch("tampered");
    let tree = root.join("tree");
    fs::create_dir_all(tree.join("native")).unwrap();
    fs::write(
        tree.join("CMakeLists.txt"),
        "project(SEAL VERSION 4.4.3 LANGUAGES CXX C)\n",
    )
    .unwrap();
    let url = archive(&tree, &root);
    let out = seal_source(&root, &url);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("REJECTED"), "{message}");
    assert!(!root.join("target/seal-4.4.3/src").exists());
}

/// The SEAL tree this build was given, if it is 4.4.3.
fn seal_4_4_3_tree() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("SEAL_SOURCE_DIR")?);
    let cmake = fs::read_to_string(dir.join("CMakeLists.txt")).ok()?;
    cmake.contains("project(SEAL VERSION 4.4.3 ").then_some(dir)
}

#[test]
fn seal_4_4_3_content_is_accepted_and_cached() {
    let Some(tree) = seal_4_4_3_tree() else {
        eprintln!("no SEAL 4.4.3 tree (SEAL_SOURCE_DIR): only the rejection is tested");
        return;
    };
    let root = scratch("genuine");
    let url = archive(&tree, &root);
    let out = seal_source(&root, &url);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cached = root.join("target/seal-4.4.3/src");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "export SEAL_SOURCE_DIR={}\nexport CARGO_TARGET_DIR=target/s443\n",
            cached.display()
        )
    );
    // Cached: no download the second time.
    let again = seal_source(&root, "file:///absent.tar.gz");
    assert_eq!(again.stdout, out.stdout);
}
