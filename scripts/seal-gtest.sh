#!/usr/bin/env bash
# SEAL's own googletest suite (native/tests of the patched tree) through the OpenCL backend:
# configures and builds `sealtest` from tests/seal-gtest/ against the crate's staticlib, then
#   1. runs GpuBackendTest.* with no backend of ours: those tests install their own recording
#      backend and uninstall it at the end, which would switch ours off for every later test;
#   2. runs the rest (or the gtest filter given as $1) with SEAL_OPENCL_INSTALL=1 and
#      SEAL_GPU_ROUTE_ALL=1, so every ciphertext the tests create is marked and every CKKS
#      Evaluator call goes to the backend, on the device that SEAL_OPENCL_DEVICE picks
#      (default: the first GPU, else PoCL).
#
# Paths come from the environment when set (tests/seal_gtest.rs sets them), else from
# `cargo run --release --example build_info`. SEAL_GTEST_BUILD_DIR: the build tree
# (default target/release/seal-gtest). JOBS: parallel compile jobs (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."

filter=${1:-'-GpuBackendTest.*'}

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

sealtest="$build_dir/bin/sealtest"
echo "== GpuBackendTest.* (SEAL's side of the interface, recording backend, not ours)"
env -u SEAL_GPU_ROUTE_ALL -u SEAL_OPENCL_INSTALL "$sealtest" --gtest_filter='GpuBackendTest.*'

echo "== $filter through the OpenCL backend, SEAL_GPU_ROUTE_ALL=1"
SEAL_OPENCL_INSTALL=1 SEAL_GPU_ROUTE_ALL=1 SEAL_OPENCL_EXPECT_ROUTED=1 \
    "$sealtest" --gtest_filter="$filter"
