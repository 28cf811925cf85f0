#!/usr/bin/env bash
# The README's test command: system packages, then every test on the default OpenCL
# device (PoCL when the machine has no GPU): cargo's, then TenSEAL's Python suite through
# the backend (scripts/tenseal-test.sh). Arguments go to cargo test and run only cargo's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --release "$@"
if [ $# -eq 0 ]; then
  scripts/tenseal-test.sh
fi
