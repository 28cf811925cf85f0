#!/usr/bin/env bash
# TenSEAL's own test suite, as its authors run it, on stock TenSEAL 0.3.18 from PyPI and on this
# wheel (benches/tenseal_upstream.py: MODES, default stock,cpu,gpu,crosscheck, with WORKERS
# pytest-xdist workers, default 1). TENSEAL_TESTS is the `tests` folder of an OpenMined/TenSEAL
# checkout (the suite is not in TenSEAL's source distribution). Reports, logs and a summary of
# the tests that fail where stock passes go to OUT (default target/tenseal/upstream); the exit
# status is 1 when there is any. Arguments go to pytest.
#   TENSEAL_TESTS=/path/to/TenSEAL/tests scripts/tenseal-upstream.sh [-k EXPR]
set -euo pipefail
cd "$(dirname "$0")/.."
tests=${TENSEAL_TESTS:?set TENSEAL_TESTS to the tests folder of a TenSEAL checkout}
scripts/tenseal-wheel.sh
# Absolute: the suite runs from the tests folder.
build="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/tenseal"
python=${PYTHON:-python3}
for env in stock ours; do
  [ -x "$build/upstream-$env/bin/python" ] || "$python" -m venv "$build/upstream-$env"
done
"$build/upstream-stock/bin/python" -m pip install --quiet tenseal==0.3.18 pytest pytest-xdist
"$build/upstream-ours/bin/python" -m pip install --quiet --force-reinstall --no-deps "$build"/dist/tenseal-*.whl
"$build/upstream-ours/bin/python" -m pip install --quiet "$build"/dist/tenseal-*.whl pytest pytest-xdist
"$python" benches/tenseal_upstream.py --tests "$tests" --stock "$build/upstream-stock/bin/python" \
  --ours "$build/upstream-ours/bin/python" --out "${OUT:-$build/upstream}" \
  --modes "${MODES:-stock,cpu,gpu,crosscheck}" --workers "${WORKERS:-1}" \
  --device "$(clinfo -l 2>/dev/null | sed -n 's/.*Device #0: //p' | head -1)" "$@"
