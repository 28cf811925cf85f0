#!/usr/bin/env bash
# The README's main job: system packages, then the CKKS routines of the XeHE paper on SEAL's CPU
# path and on the default OpenCL device (the first GPU, else PoCL on the CPU;
# SEAL_OPENCL_DEVICE overrides), every GPU result checked equal to the CPU result.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release --example ckks_routines -- "$@"
