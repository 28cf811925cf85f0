//! The SEAL patch applier of build.rs (build/patch.rs), on in-memory trees, and its choice of
//! series by SEAL version (build/version.rs). It reads nothing of the source tree, so it runs
//! from the GPU bundle on another machine; that every supported version's series names
//! existing patches is checked by build.rs, at every build.

#[path = "../build/patch.rs"]
mod patch;
#[path = "../build/version.rs"]
mod version;

use std::collections::BTreeMap;

use patch::{apply_series, parse_series, PatchError};

fn tree(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_string()))
        .collect()
}

fn apply(
    base: &BTreeMap<String, String>,
    patches: &[(&str, &str)],
) -> Result<BTreeMap<String, Option<String>>, PatchError> {
    let patches: Vec<(String, String)> = patches
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    apply_series(&patches, |path| Ok(base.get(path).cloned()))
}

const EVALUATOR: &str = "void Evaluator::add()\n{\n    check();\n    add_inplace();\n}\n";
const CIPHERTEXT: &str = "class Ciphertext\n{\npublic:\n    int size;\n};\n";

/// As `git format-patch` writes it: a description, `diff --git` and `index` lines, two
/// files, and a mail signature.
const TWO_FILES: &str = "\
From: someone
Subject: [PATCH] route add

Routes add to the backend.
---
diff --git a/native/src/seal/evaluator.cpp b/native/src/seal/evaluator.cpp
index 1111111..2222222 100644
--- a/native/src/seal/evaluator.cpp
+++ b/native/src/seal/evaluator.cpp
@@ -1,5 +1,6 @@
 void Evaluator::add()
 {
     check();
+    route();
     add_inplace();
 }
diff --git a/native/src/seal/ciphertext.h b/native/src/seal/ciphertext.h
index 3333333..4444444 100644
--- a/native/src/seal/ciphertext.h
+++ b/native/src/seal/ciphertext.h
@@ -2,4 +2,5 @@
 {
 public:
     int size;
+    bool on_gpu;
 };
-- 
2.39.2
";

#[test]
fn series_lists_names_in_order_without_comments() {
    let series = "# header\n\n0001-a.patch\n  0002-b.patch  # why\n#0003-off.patch\n";
    assert_eq!(parse_series(series), ["0001-a.patch", "0002-b.patch"]);
}

#[test]
fn two_file_diff_applies_cleanly() {
    let base = tree(&[
        ("native/src/seal/evaluator.cpp", EVALUATOR),
        ("native/src/seal/ciphertext.h", CIPHERTEXT),
    ]);
    let out = apply(&base, &[("0001-route.patch", TWO_FILES)]).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(
        out["native/src/seal/evaluator.cpp"].as_deref(),
        Some("void Evaluator::add()\n{\n    check();\n    route();\n    add_inplace();\n}\n")
    );
    assert_eq!(
        out["native/src/seal/ciphertext.h"].as_deref(),
        Some("class Ciphertext\n{\npublic:\n    int size;\n    bool on_gpu;\n};\n")
    );
}

#[test]
fn later_patches_see_earlier_results_and_files_are_created_and_deleted() {
    let base = tree(&[("a.h", "one\n"), ("old.h", "gone\n")]);
    let first = "--- a/a.h\n+++ b/a.h\n@@ -1 +1,2 @@\n one\n+two\n";
    let second = "\
--- a/a.h
+++ b/a.h
@@ -1,2 +1,3 @@
 one
 two
+three
--- /dev/null
+++ b/gpu/backend.h
@@ -0,0 +1,2 @@
+#pragma once
+struct Backend;
--- a/old.h
+++ /dev/null
@@ -1 +0,0 @@
-gone
";
    let out = apply(&base, &[("1.patch", first), ("2.patch", second)]).unwrap();
    assert_eq!(out["a.h"].as_deref(), Some("one\ntwo\nthree\n"));
    assert_eq!(
        out["gpu/backend.h"].as_deref(),
        Some("#pragma once\nstruct Backend;\n")
    );
    assert_eq!(out["old.h"], None);
}

#[test]
fn a_deleted_line_that_looks_like_a_file_header_stays_in_its_hunk() {
    let base = tree(&[("notes.txt", "keep\n-- dashes\nend\n")]);
    let text = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,2 @@\n keep\n--- dashes\n end\n";
    let out = apply(&base, &[("dash.patch", text)]).unwrap();
    assert_eq!(out["notes.txt"].as_deref(), Some("keep\nend\n"));
}

#[test]
fn a_failing_hunk_names_the_patch_and_the_file() {
    let base = tree(&[
        ("native/src/seal/evaluator.cpp", EVALUATOR),
        // The second file's context line differs from what the patch expects.
        (
            "native/src/seal/ciphertext.h",
            "class Ciphertext\n{\npublic:\n    long size;\n};\n",
        ),
    ]);
    let err = apply(&base, &[("0001-route.patch", TWO_FILES)]).unwrap_err();
    assert_eq!(err.patch, "0001-route.patch");
    assert_eq!(err.file.as_deref(), Some("native/src/seal/ciphertext.h"));
    let message = err.to_string();
    assert!(
        message.starts_with(
            "seal-patch/0001-route.patch: native/src/seal/ciphertext.h: error applying hunk #1"
        ),
        "{message}"
    );
}

#[test]
fn a_missing_file_names_the_patch_and_the_file() {
    let base = tree(&[("native/src/seal/evaluator.cpp", EVALUATOR)]);
    let err = apply(&base, &[("0001-route.patch", TWO_FILES)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "seal-patch/0001-route.patch: native/src/seal/ciphertext.h: file not found in the SEAL tree"
    );
}

#[test]
fn malformed_or_unsafe_patches_are_rejected_with_their_name() {
    let base = tree(&[("a.h", "one\n")]);
    let cases = [
        (
            "empty.patch",
            "just a description\n",
            "contains no file diff",
        ),
        (
            "short.patch",
            "--- a/a.h\n+++ b/a.h\n@@ -1,2 +1,2 @@\n one\n",
            "ends before its line counts",
        ),
        (
            "escape.patch",
            "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-one\n+two\n",
            "relative to the SEAL tree",
        ),
        (
            "exists.patch",
            "--- /dev/null\n+++ b/a.h\n@@ -0,0 +1 @@\n+new\n",
            "already exists",
        ),
    ];
    for (name, text, reason) in cases {
        let err = apply(&base, &[(name, text)]).unwrap_err();
        assert_eq!(err.patch, name);
        assert!(err.to_string().contains(reason), "{name}: {err}");
    }
}

#[test]
fn the_seal_version_comes_from_cmakelists_and_must_be_supported() {
    let cmake = |line: &str| format!("cmake_minimum_required(VERSION 3.13)\n\n{line}\n");
    for supported in version::SUPPORTED_SEAL_VERSIONS {
        let text = cmake(&format!(
            "project(SEAL VERSION {supported} LANGUAGES CXX C)"
        ));
        assert_eq!(version::seal_version(&text).as_deref(), Ok(*supported));
    }
    let err =
        version::seal_version(&cmake("project(SEAL VERSION 4.1.2 LANGUAGES CXX C)")).unwrap_err();
    assert!(
        err.contains("SEAL 4.1.2") && err.contains("4.0.0 and 4.4.3"),
        "{err}"
    );
    let err = version::seal_version(&cmake("project(Other VERSION 4.4.3)")).unwrap_err();
    assert!(err.contains("no `project(SEAL VERSION"), "{err}");
}
