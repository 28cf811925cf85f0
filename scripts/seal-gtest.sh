#!/usr/bin/env bash
# SEAL's own googletest suite (native/tests of the patched tree) through the OpenCL backend:
# configures and builds `sealtest` from tests/seal-gtest/ against the crate's staticlib, then
# runs it with scripts/seal-gtest-run.sh (a gtest filter as $1 is passed on), unless
# --build-only comes first.
#
# Paths come from the environment when set (tests/seal_gtest.rs sets them), else from
# `cargo run --release --example build_info`. SEAL_GTEST_BUILD_DIR: the build tree
# (default target/release/seal-gtest). JOBS: parallel compile jobs (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=false
if [[ "${1:-}" == "--build-only" ]]; then
    build_only=true
    shift
fi

if [[ -z "${SEAL_SOURCE_DIR:-}" || -z "${SEAL_OPENCL_INCLUDE_DIRS:-}" || -z "${SEAL_OPENCL_LIB:-}" ]]; then
    # `cargo build --lib` puts the current staticlib at target/release/libseal_opencl.a;
    # building the example alone updates only the copy in deps/.
    cargo build --release --lib
    eval "$(cargo run --release --quiet --example build_info)"
fi
build_dir=${SEAL_GTEST_BUILD_DIR:-target/release/seal-gtest}

cmake -S tests/seal-gtest -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
    -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
    -DSEAL_SOURCE_DIR="$SEAL_SOURCE_DIR" \
    -DSEAL_OPENCL_INCLUDE_DIRS="$SEAL_OPENCL_INCLUDE_DIRS" \
    -DSEAL_OPENCL_LIB="$SEAL_OPENCL_LIB"
cmake --build "$build_dir" --target sealtest --parallel "${JOBS:-$(nproc)}"

$build_only || scripts/seal-gtest-run.sh "$build_dir/bin/sealtest" "$@"
