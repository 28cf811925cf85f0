#!/usr/bin/env bash
# Builds every test, bench and example in release mode, plus the C++ programs (the
# seed 001 Listing 1 example and SEAL's googletest suite against the staticlib), and packs
# them with scripts/gpu-env.sh and scripts/gpu-suite.sh into .gpu/ (ignored by
# git) for a run on the GPU machine, which has no Rust toolchain:
#   device run, carry [".gpu"]:  . .gpu/gpu-env.sh && .gpu/gpu-suite.sh tests
#                                . .gpu/gpu-env.sh && .gpu/gpu-suite.sh benches
# The binaries travel as one xz archive (the working tree and carried folders may not
# exceed 64 MiB); gpu-suite.sh unpacks it. Names inside: test-<target>, bench-<target>,
# ex-<target>, cpp-listing1, cpp-host_path, cpp-request, cpp-apps, cpp-sealtest.
set -euo pipefail
cd "$(dirname "$0")/.."
stage=target/release/gpu-stage
rm -rf .gpu "$stage" && mkdir -p .gpu "$stage"
cp scripts/gpu-env.sh scripts/gpu-suite.sh scripts/seal-gtest-run.sh .gpu/
# copy_executables KIND PREFIX: copies the executables of targets of KIND (cargo's JSON
# messages on stdin; the library's unit-test binary counts as kind "test").
copy_executables() {
  python3 -c '
import json, shutil, sys
want, prefix, stage = sys.argv[1], sys.argv[2], sys.argv[3]
for line in sys.stdin:
    m = json.loads(line)
    exe = m.get("executable")
    if not exe:
        continue
    kinds = m["target"]["kind"]
    kind = "test" if "rlib" in kinds or "lib" in kinds else kinds[0]
    if kind == want:
        shutil.copy(exe, stage + "/" + prefix + m["target"]["name"])
' "$1" "$2" "$stage"
}
cargo test --release --no-run --message-format=json | copy_executables test test-
cargo bench --no-run --message-format=json | copy_executables bench bench-
cargo build --release --examples --message-format=json | copy_executables example ex-
# These two drive cargo and cmake, which the GPU machine lacks; their programs travel
# prebuilt instead (below).
rm -f "$stage/test-cpp_example" "$stage/test-seal_gtest"

# The C++ programs, built as tests/cpp_example.rs and scripts/seal-gtest.sh build them
# (seal-gtest.sh needs SEAL's source tree for its tests, so it takes the build's paths).
scripts/install.sh target/release/cpp-install >/dev/null
cmake -S examples/cpp -B target/release/cpp-example -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PWD/target/release/cpp-install" >/dev/null
cmake --build target/release/cpp-example --parallel "$(nproc)" >/dev/null
cp target/release/cpp-example/listing1 "$stage/cpp-listing1"
cp target/release/cpp-example/host_path "$stage/cpp-host_path"
cp target/release/cpp-example/request "$stage/cpp-request"
cp target/release/cpp-example/apps "$stage/cpp-apps"
SEAL_GTEST_BUILD_DIR=target/release/seal-gtest scripts/seal-gtest.sh --build-only >/dev/null
cp target/release/seal-gtest/bin/sealtest "$stage/cpp-sealtest"

strip "$stage"/* 2>/dev/null || true
tar -C "$stage" -cJf .gpu/bundle.tar.xz .
ls "$stage"
du -sh .gpu
