#!/usr/bin/env bash
# Packs TenSEAL through the backend for the GPU machine, which has python3 but no network,
# into .gpu/tenseal/ (ignored by git): the wheel of scripts/tenseal-wheel.sh, stock TenSEAL
# 0.3.18's wheel from PyPI (the CPU baseline), numpy and pytest wheels, tests/python and
# benches/tenseal_bench.py, with scripts/tenseal-gpu-run.sh as run.sh. The wheels are for this
# machine's Python (PYTHON, default python3): the GPU machine's python3 must be the same
# minor version.
#   scripts/tenseal-bundle.sh
#   device run, carry [".gpu/tenseal"]:  .gpu/tenseal/run.sh suite     (or: bench)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
scripts/tenseal-wheel.sh
build="${CARGO_TARGET_DIR:-target}/tenseal"
bundle=.gpu/tenseal
rm -rf "$bundle"
mkdir -p "$bundle/gpu" "$bundle/stock" "$bundle/wheels" "$bundle/tests" "$bundle/benches"
cp "$build"/dist/tenseal-*.whl "$bundle/gpu/"
"$python" -m pip download --quiet --only-binary :all: --no-deps -d "$bundle/stock" tenseal==0.3.18
"$python" -m pip download --quiet --only-binary :all: -d "$bundle/wheels" numpy pytest
cp tests/python/*.py "$bundle/tests/"
cp benches/tenseal_bench.py "$bundle/benches/"
cp scripts/tenseal-gpu-run.sh "$bundle/run.sh"
du -sh "$bundle"
