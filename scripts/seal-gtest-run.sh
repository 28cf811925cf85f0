#!/usr/bin/env bash
# Runs a built `sealtest` (scripts/seal-gtest.sh builds it; scripts/gpu-bundle.sh carries
# it to the GPU machine):
#   1. GpuBackendTest.* with no backend of ours: those tests install their own recording
#      backend and uninstall it at the end, which would switch ours off for every later test;
#   2. the rest (or the gtest filter given as $2) with SEAL_OPENCL_INSTALL=1 and
#      SEAL_GPU_ROUTE_ALL=1, so every ciphertext the tests create is marked and every CKKS
#      Evaluator call goes to the backend, on the device that SEAL_OPENCL_DEVICE picks
#      (default: the first GPU, else PoCL); SEAL_OPENCL_EXPECT_ROUTED=1 fails the run if
#      nothing reached the backend.
# Usage: seal-gtest-run.sh PATH/TO/sealtest [FILTER]
set -euo pipefail
sealtest=$1
filter=${2:-'-GpuBackendTest.*'}

echo "== GpuBackendTest.* (SEAL's side of the interface, recording backend, not ours)"
env -u SEAL_GPU_ROUTE_ALL -u SEAL_OPENCL_INSTALL "$sealtest" --gtest_filter='GpuBackendTest.*'

echo "== $filter through the OpenCL backend, SEAL_GPU_ROUTE_ALL=1"
SEAL_OPENCL_INSTALL=1 SEAL_GPU_ROUTE_ALL=1 SEAL_OPENCL_EXPECT_ROUTED=1 \
    "$sealtest" --gtest_filter="$filter"
