#!/usr/bin/env bash
# Packs TenSEAL through the backend for the GPU machine, which has python3 but no network,
# into .gpu/tenseal/ (ignored by git): the wheel of scripts/tenseal-wheel.sh, stock TenSEAL
# 0.3.18's wheel from PyPI (the CPU baseline), numpy, pytest and py-spy wheels, tests/python,
# benches/tenseal_bench.py, tenseal_decompose.py and thread_states.py, with scripts/tenseal-gpu-run.sh as
# run.sh. The wheels are for this machine's Python (PYTHON, default python3): the GPU machine's
# python3 must be the same minor version.
# With TENSEAL_TESTS (the `tests` folder of a TenSEAL checkout, OpenMined/TenSEAL) it also packs
# TenSEAL's own suite, benches/tenseal_upstream.py and pytest-xdist, for `run.sh upstream`.
#   scripts/tenseal-bundle.sh
#   device run, carry [".gpu/tenseal"]:  .gpu/tenseal/run.sh suite  (or: bench, decompose, states, upstream)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
scripts/setup.sh
seal_env=$(scripts/seal-source.sh)
eval "$seal_env"
# tests/python arms the backend's test hook (crosscheck_corrupt_next_result).
SEAL_OPENCL_TEST_HOOKS=1 scripts/tenseal-wheel.sh
build="${CARGO_TARGET_DIR:-target}/tenseal"
bundle=.gpu/tenseal
rm -rf "$bundle"
mkdir -p "$bundle/gpu" "$bundle/stock" "$bundle/wheels" "$bundle/tests" "$bundle/benches"
cp "$build"/dist/tenseal-*.whl "$bundle/gpu/"
"$python" -m pip download --quiet --only-binary :all: --no-deps -d "$bundle/stock" tenseal==0.3.18
"$python" -m pip download --quiet --only-binary :all: -d "$bundle/wheels" numpy pytest
# The suite; test_stock_clients.py needs PyPI, which the GPU machine cannot reach.
cp tests/python/test_tenseal_gpu.py tests/python/tenseal_cases.py "$bundle/tests/"
cp benches/tenseal_bench.py benches/tenseal_decompose.py benches/thread_states.py "$bundle/benches/"
"$python" -m pip download --quiet --only-binary :all: -d "$bundle/wheels" py-spy
if [ -n "${TENSEAL_TESTS:-}" ]; then
  mkdir -p "$bundle/upstream"
  cp -r "$TENSEAL_TESTS" "$bundle/upstream/tests"
  cp benches/tenseal_upstream.py "$bundle/benches/"
  "$python" -m pip download --quiet --only-binary :all: -d "$bundle/wheels" pytest-xdist
fi
cp scripts/tenseal-gpu-run.sh "$bundle/run.sh"
# The interpreter the wheels are built for, for a machine whose python3 is another minor
# version (the GPU machine runs Ubuntu 24.04): its tree without what running and making venvs
# do not need (tests, site-packages, headers, the static library, tkinter, idle), to be
# unpacked at the same path (run.sh does, when its python3 differs).
"$python" - "$bundle/python.tar.xz" <<'PY'
import os, sys, tarfile
root = sys.prefix
lib = os.path.join("lib", "python%d.%d" % sys.version_info[:2])
skip = ("include", "share") + tuple(os.path.join(lib, d) for d in
        ("test", "site-packages", "config-", "idlelib", "tkinter", "lib2to3"))
def keep(info):
    rel = os.path.relpath("/" + info.name, root)
    return None if rel.startswith(skip) or "__pycache__" in rel else info
with tarfile.open(sys.argv[1], "w:xz") as tar:
    tar.add(root, arcname=root.lstrip("/"), filter=keep)
with open(sys.argv[1].replace(".tar.xz", ".prefix"), "w") as f:
    f.write(root + "\n")
PY
du -sh "$bundle"
