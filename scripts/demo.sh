#!/usr/bin/env bash
# The README's main job: system packages, then the demo on the default OpenCL device
# (the first GPU, else PoCL on the CPU; SEAL_OPENCL_DEVICE overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release --example ntt_roundtrip -- "$@"
