#!/usr/bin/env bash
# Builds every test, bench and example in release mode, plus the C++ programs (the
# XeHE paper's Listing 1 example, SEAL's googletest suite against the staticlib, and SEAL's own
# examples and sealbench through the SEAL package), and packs them with scripts/gpu-env.sh,
# scripts/gpu-suite.sh and scripts/seal-gtest-run.sh into .gpu/ (ignored by git) for a run on
# the GPU machine, which has no Rust toolchain:
#   scripts/gpu-bundle.sh                        # scripts/seal-source.sh's SEAL: 4.4.3, else 4.0.0
#   SEAL_OFFLINE=1 scripts/gpu-bundle.sh         # SEAL 4.0.0
#   scripts/gpu-bundle.sh --cpp-only                             # no test or bench binaries
#   device run, carry [".gpu"]:  . .gpu/gpu-env.sh && .gpu/gpu-suite.sh tests
# Each SEAL version's binaries travel as one xz archive, .gpu/bundle-VERSION.tar.xz (the
# working tree and carried folders may not exceed 64 MiB); bundles of other versions already
# in .gpu/ stay, so one run can compare them (gpu-suite.sh picks one with SEAL=VERSION).
# Names inside: test-<target>, bench-<target>, ex-<target>, cpp-listing1, cpp-host_path,
# cpp-request, cpp-apps, cpp-integer_path, cpp-integer_apps, cpp-hostile_load, cpp-sealtest, cpp-sealexamples, cpp-sealbench, cpp-route_all.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
seal_env=$(scripts/seal-source.sh)
eval "$seal_env"
release=${CARGO_TARGET_DIR:-target}/release
stage=$release/gpu-stage
rm -rf "$stage" && mkdir -p .gpu "$stage"
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
# --cpp-only: the examples and the C++ programs alone, e.g. a second SEAL version's bundle for
# `gpu-suite.sh versions` that must fit beside the first.
if [ "${1:-}" != --cpp-only ]; then
  cargo test --release --no-run --message-format=json | copy_executables test test-
  cargo bench --no-run --message-format=json | copy_executables bench bench-
fi
cargo build --release --examples --message-format=json | copy_executables example ex-
# These drive cargo and cmake, which the GPU machine lacks; their programs travel prebuilt
# instead (below), and the archive test/staticlib checks is the one built here.
rm -f "$stage/test-cpp_example" "$stage/test-seal_gtest" "$stage/test-seal_clients" "$stage/test-hostile_load" \
  "$stage/test-staticlib"

# The C++ programs, built as tests/cpp_example.rs, tests/seal_clients.rs,
# tests/hostile_load.rs (without its AddressSanitizer build, which is for PoCL) and
# scripts/seal-gtest.sh build them.
# Absolute either way: CARGO_TARGET_DIR may be absolute or relative to the checkout.
prefix=$(realpath -m "$release/cpp-install")
scripts/install.sh "$prefix" >/dev/null
# The patched tree and the staticlib; exported for seal-gtest.sh, which then runs no cargo
# (SEAL_SOURCE_DIR now names the patched tree, which no cargo build may take as its source).
eval "$(cargo run --release --quiet --example build_info)"
export SEAL_SOURCE_DIR SEAL_OPENCL_INCLUDE_DIRS SEAL_OPENCL_LIB
cmake_build() { # SOURCE BUILD [-DNAME=VALUE...]
  local source=$1 build=$2
  shift 2
  # A build folder configured from another source tree (SEAL's folder moved) starts over.
  if [ -f "$build/CMakeCache.txt" ] &&
    ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$(cd "$source" && pwd -P)" "$build/CMakeCache.txt"; then
    rm -rf "$build"
  fi
  cmake -S "$source" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" "$@" >/dev/null
  cmake --build "$build" --parallel "$(nproc)" >/dev/null
}
cmake_build examples/cpp "$release/cpp-example"
for program in listing1 host_path request apps integer_path integer_apps; do
  cp "$release/cpp-example/$program" "$stage/cpp-$program"
done
cmake_build tests/hostile-load "$release/hostile-load"
cp "$release/hostile-load/hostile_load" "$stage/cpp-hostile_load"
cmake_build tests/cpp-route-all "$release/route-all"
cp "$release/route-all/route_all" "$stage/cpp-route_all"
cmake_build "$SEAL_SOURCE_DIR/native/examples" "$release/seal-examples"
cp "$release/seal-examples/bin/sealexamples" "$stage/cpp-sealexamples"
cmake_build "$SEAL_SOURCE_DIR/native/bench" "$release/seal-bench" -DSEAL_BUILD_DEPS=OFF
cp "$release/seal-bench/bin/sealbench" "$stage/cpp-sealbench"
# Debian's Google Benchmark is a shared library, which the GPU machine lacks.
mkdir -p "$stage/lib"
cp "$(ldd "$stage/cpp-sealbench" | awk '/libbenchmark/ { print $3 }')" "$stage/lib/"
if [ "${1:-}" != --cpp-only ]; then # for the tests part only, like the test binaries
  SEAL_GTEST_BUILD_DIR=$release/seal-gtest scripts/seal-gtest.sh --build-only >/dev/null
  cp "$release/seal-gtest/bin/sealtest" "$stage/cpp-sealtest"
fi

strip "$stage"/* "$stage"/lib/* 2>/dev/null || true
tar -C "$stage" -cJf ".gpu/bundle-$SEAL_VERSION.tar.xz" .
ls "$stage"
du -sh .gpu/*
