#!/usr/bin/env bash
# TenSEAL through the backend, as a Python user gets it: builds the wheel
# (scripts/tenseal-wheel.sh), installs it with pip into a fresh environment and runs
# tests/python (each case on SEAL's CPU path and with SEAL_GPU_ROUTE_ALL=1, results equal
# byte for byte). Arguments go to pytest.
#   scripts/tenseal-test.sh [-k CASE]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
seal_env=$(scripts/seal-source.sh)
eval "$seal_env"
# tests/python arms the backend's test hook (crosscheck_corrupt_next_result).
SEAL_OPENCL_TEST_HOOKS=1 scripts/tenseal-wheel.sh
build="${CARGO_TARGET_DIR:-target}/tenseal"
env="$build/test-venv"
rm -rf "$env"
"${PYTHON:-python3}" -m venv "$env"
"$env/bin/python" -m pip install --quiet "$build"/dist/tenseal-*.whl pytest
"$env/bin/python" -m pytest tests/python -v "$@"
