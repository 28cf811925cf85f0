#!/usr/bin/env bash
# Runs in the folder scripts/tenseal-bundle.sh packs (as its run.sh), on a machine without
# network: installs the carried wheels into fresh environments and
#   run.sh suite    runs the TenSEAL suite (tests/python) with the seal-opencl wheel
#   run.sh bench    runs benches/tenseal_bench.py three ways: stock TenSEAL (SEAL on the CPU),
#                   the seal-opencl wheel without and with SEAL_GPU_ROUTE_ALL=1; with
#                   UNCHAINED=1 a fourth, routed with SEAL_OPENCL_CHAIN=0 (key switches and
#                   rescales in their separate launches), for a before and after in one run;
#                   with SHARED=1 two more with TENSEAL_SHARED_ROTATIONS=1 (tenseal-patch 0005),
#                   the seal-opencl wheel on the CPU and routed; ROUTED_ONLY=1 leaves out the runs on
#                   the CPU, CPU_WHEEL=0 only the seal-opencl wheel's (stock and routed remain:
#                   the ratios, in less of a lease)
#   run.sh decompose
#                   benches/tenseal_decompose.py: where TenSEAL's evaluation time goes on the
#                   device path (WORKLOADS, default lr,mnist-8192,dot; REPS, default 3)
#   run.sh states   benches/tenseal_bench.py (its arguments after `states`) under
#                   benches/thread_states.py, stock TenSEAL and routed: where every thread of
#                   the process (TenSEAL's pool too, which py-spy does not see) spends the run
#   run.sh upstream TenSEAL's own suite (packed with TENSEAL_TESTS) through
#                   benches/tenseal_upstream.py: MODES (default stock,gpu,crosscheck) with
#                   WORKERS pytest-xdist workers (default 8)
# Arguments after the first go to pytest or to the benchmark. Logs and JSON go to
# $OUT/tenseal-PART/ (OUT defaults to ./out), which is packed at the end, however the part
# ends, into one file, $OUT/tenseal-PART.tar: the device tool brings back at most 8 files from
# its $OUT, and a part writes up to 12. KEEP=1 leaves the folder unpacked. SEAL_OPENCL_DEVICE
# picks the device.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
part=${1:?usage: run.sh suite|bench|decompose|states|upstream [ARGS]}
shift
out=${OUT:-$here/out}/tenseal-$part
mkdir -p "$out"
# The interpreter the wheels were built for, where this machine's python3 is another version.
want=$(cd "$here/gpu" && ls tenseal-*.whl | sed -n 's/.*-cp\([0-9]\)\([0-9]*\)-.*/\1.\2/p')
have=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
if [ "$want" != "$have" ] && [ -f "$here/python.tar.xz" ]; then
  tar -C / -xJf "$here/python.tar.xz"
  prefix=$(cat "$here/python.prefix")
  export PATH=$prefix/bin:$PATH
fi
# The environments live outside the bundle, which stays small enough to carry.
envs=$(mktemp -d)
finish() {
  local rc=$?
  rm -rf "$envs"
  if [ "${KEEP:-0}" != 1 ]; then
    tar -C "$(dirname "$out")" -cf "$out.tar" "$(basename "$out")" && rm -rf "$out"
  fi
  exit "$rc"
}
trap finish EXIT

# The device's name for the reports (empty where nvidia-smi is missing).
gpu_name() {
  nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
}

# env_with DIR WHEELS [PACKAGE...]: a fresh environment at DIR with the tenseal wheel of WHEELS.
env_with() {
  python3 -m venv "$1"
  "$1/bin/pip" install --quiet --no-index --find-links "$here/wheels" "$2"/tenseal-*.whl pytest "${@:3}"
}

case "$part" in
  suite)
    env_with "$envs/gpu" "$here/gpu"
    "$envs/gpu/bin/python" -m pytest "$here/tests" -v "$@" 2>&1 | tee "$out/tenseal-suite.log"
    ;;
  bench)
    env_with "$envs/stock" "$here/stock"
    env_with "$envs/gpu" "$here/gpu"
    bench="$here/benches/tenseal_bench.py"
    if [ "${ROUTED_ONLY:-0}" != 1 ]; then
      env -u SEAL_GPU_ROUTE_ALL "$envs/stock/bin/python" "$bench" --out "$out/tenseal-stock-cpu.json" "$@" \
        2>&1 | tee "$out/tenseal-stock-cpu.log"
      if [ "${CPU_WHEEL:-1}" != 0 ]; then
        env -u SEAL_GPU_ROUTE_ALL "$envs/gpu/bin/python" "$bench" --out "$out/tenseal-opencl-cpu.json" "$@" \
          2>&1 | tee "$out/tenseal-opencl-cpu.log"
      fi
    fi
    SEAL_GPU_ROUTE_ALL=1 "$envs/gpu/bin/python" "$bench" --out "$out/tenseal-opencl-gpu.json" "$@" \
      2>&1 | tee "$out/tenseal-opencl-gpu.log"
    if [ "${SHARED:-0}" = 1 ]; then
      if [ "${ROUTED_ONLY:-0}" != 1 ] && [ "${CPU_WHEEL:-1}" != 0 ]; then
        TENSEAL_SHARED_ROTATIONS=1 env -u SEAL_GPU_ROUTE_ALL "$envs/gpu/bin/python" "$bench" \
          --out "$out/tenseal-opencl-cpu-shared.json" "$@" 2>&1 | tee "$out/tenseal-opencl-cpu-shared.log"
      fi
      TENSEAL_SHARED_ROTATIONS=1 SEAL_GPU_ROUTE_ALL=1 "$envs/gpu/bin/python" "$bench" \
        --out "$out/tenseal-opencl-gpu-shared.json" "$@" 2>&1 | tee "$out/tenseal-opencl-gpu-shared.log"
    fi
    if [ "${UNCHAINED:-0}" = 1 ]; then
      SEAL_GPU_ROUTE_ALL=1 SEAL_OPENCL_CHAIN=0 "$envs/gpu/bin/python" "$bench" \
        --out "$out/tenseal-opencl-gpu-unchained.json" "$@" 2>&1 | tee "$out/tenseal-opencl-gpu-unchained.log"
    fi
    ;;
  decompose)
    env_with "$envs/gpu" "$here/gpu" py-spy
    "$envs/gpu/bin/python" "$here/benches/tenseal_decompose.py" --bench "$here/benches/tenseal_bench.py" \
      --python "$envs/gpu/bin/python" --py-spy "$envs/gpu/bin/py-spy" --out "$out/decompose" \
      --workloads "${WORKLOADS:-lr,mnist-8192,dot}" --reps "${REPS:-3}" \
      --device "$(gpu_name)" "$@"
    ;;
  states)
    env_with "$envs/stock" "$here/stock"
    env_with "$envs/gpu" "$here/gpu"
    bench="$here/benches/tenseal_bench.py"
    states="$here/benches/thread_states.py"
    env -u SEAL_GPU_ROUTE_ALL python3 "$states" --out "$out/states-stock.json" -- \
      "$envs/stock/bin/python" "$bench" --out "$out/states-stock-bench.json" "$@" 2>&1 | tee "$out/states-stock.log"
    SEAL_GPU_ROUTE_ALL=1 python3 "$states" --out "$out/states-gpu.json" -- \
      "$envs/gpu/bin/python" "$bench" --out "$out/states-gpu-bench.json" "$@" 2>&1 | tee "$out/states-gpu.log"
    ;;
  upstream)
    env_with "$envs/stock" "$here/stock" pytest-xdist
    env_with "$envs/gpu" "$here/gpu" pytest-xdist
    python3 "$here/benches/tenseal_upstream.py" --tests "$here/upstream/tests" \
      --stock "$envs/stock/bin/python" --ours "$envs/gpu/bin/python" --out "$out/upstream" \
      --modes "${MODES:-stock,gpu,crosscheck}" --workers "${WORKERS:-8}" \
      --device "$(gpu_name)" "$@"
    ;;
  *)
    echo "usage: run.sh suite|bench|decompose|states|upstream [ARGS]" >&2
    exit 2
    ;;
esac
