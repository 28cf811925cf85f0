#!/usr/bin/env bash
# The README's test command: system packages, then every test on the default OpenCL
# device (PoCL when the machine has no GPU): cargo's, then TenSEAL's Python suite through
# the backend (scripts/tenseal-test.sh). Arguments go to cargo test and run only cargo's.
# All on one SEAL: 4.4.3 where its source can be had, else the offline 4.0.0
# (scripts/seal-source.sh; offline, the download fails at once and the warning says so).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
seal_env=$(scripts/seal-source.sh)
eval "$seal_env"
cargo test --release "$@"
if [ $# -eq 0 ]; then
  scripts/tenseal-test.sh
fi
