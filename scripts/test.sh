#!/usr/bin/env bash
# The README's test command: system packages, then every test on the default OpenCL
# device (PoCL when the machine has no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --release "$@"
