#!/usr/bin/env bash
# Runs on the GPU machine from the bundle scripts/gpu-bundle.sh makes (no Rust toolchain
# there). Source gpu-env.sh first, which registers NVIDIA's OpenCL driver and sets
# SEAL_OPENCL_DEVICE=gpu unless it is set.
#   gpu-suite.sh tests    every test binary, the C++ Listing 1 example, SEAL's googletest
#                         suite through the backend, and the main job (ckks_routines)
#   gpu-suite.sh benches  every benchmark, the C++ host-path, request and apps ones included, and
#                         the differential fuzzer and the soak run (examples/seal_fuzz.rs,
#                         soak.rs) (with --quick, or fewer operations, when QUICK=1: a smoke run)
#   gpu-suite.sh request  only the request and transfer benchmark, N = 2^15 and 2^13
#   gpu-suite.sh apps     only the application benchmarks: the network, polynomial,
#                         inner product and batch at N = 2^15 (64 x 64 layers) and 2^14 (128 x 128)
#   gpu-suite.sh multi    MulLin/s by threads on 1 device and on every device (run it
#                         on a machine with several GPUs): host_path at N = 2^16 with 16 data
#                         primes and at 2^15 {60, 50 x 7, 60}
#   gpu-suite.sh server   only the fuzzer and the soak run; `SERVER=0 gpu-suite.sh
#                         benches` leaves them out, for two device calls of under 10 minutes
#   gpu-suite.sh clients  SEAL's own examples and sealbench, unmodified, with
#                         SEAL_GPU_ROUTE_ALL=1 and no install_backend call (examples/seal_clients.rs):
#                         the examples against SEAL's CPU path, sealbench's CKKS benchmarks at
#                         N = 2^13, 2^14, 2^15 side by side; and tests/cpp-route-all's program
#   gpu-suite.sh chain    chained key switches and rescales against their separate launches,
#                         alternating in one run: host_path at N = 2^13, 2^14 and 2^15 with
#                         SEAL_OPENCL_CHAIN=0 (never) and 15 (up to 2^15) with
#                         SEAL_OPENCL_CHAIN_GROUPS 0, 4, 8 and 16
#   gpu-suite.sh chain-apps  the same for the application benchmarks at 2^13 and 2^14
#   gpu-suite.sh defer    a multiply deferred to its relinearization (one launch for both)
#                         against the two launches, alternating in one run, two rounds:
#                         host_path at N = 2^13 and 2^14 with SEAL_OPENCL_DEFER_MULTIPLY=0
#                         and 1, then the application benchmarks at 2^13
#   gpu-suite.sh integer  BFV and BGV: synchronized calls through SEAL's C++ API against SEAL's
#                         CPU at N = 2^13 and 2^14 (cpp-integer_path), APSI's sender (4 bundles
#                         of degree 63, 16 of degree 15) and SealPIR's server (4096 elements) at
#                         N = 2^13 (the server also at 2^12) against SEAL's CPU
#                         (cpp-integer_apps), the integer tests, the
#                         differential fuzzer (>= 10^4 calls
#                         per scheme), SEAL's BFV and BGV googletests routed
#                         with every operation cross-checked against SEAL's CPU, and sealbench's
#                         BFV and BGV benchmarks at N = 2^13 and 2^14 on the CPU and routed
#   gpu-suite.sh versions host_path at 2^15 from every bundle in .gpu/ (one per SEAL version),
#                         alternating, twice each: the same operations through each SEAL
# The bundle comes from scripts/gpu-bundle.sh, one per SEAL version (.gpu/bundle-VERSION.tar.xz);
# SEAL=VERSION picks one where there are several (default: 4.4.3 if present).
# Everything goes to $OUT (or ./gpu-out): `<part>.log` with every program's output and
# `<part>-results.tar` with the files the programs wrote (benchmark JSON, the main job's
# profiler dump and chart). The exit status is 1 if any program failed; each failure is
# listed at the end of the log.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
part=${1:?usage: gpu-suite.sh tests|benches|request|apps|server|multi|clients|chain|chain-apps|defer|integer|versions}
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
# unpack VERSION: the bundle of that SEAL version into /tmp/seal-opencl-bundle-VERSION.
unpack() {
  local dir=/tmp/seal-opencl-bundle-$1
  rm -rf "$dir" && mkdir -p "$dir" && tar -C "$dir" -xJf "$here/bundle-$1.tar.xz" || exit 2
  echo "$dir"
}
versions=()
for b in "$here"/bundle-*.tar.xz; do
  [ -e "$b" ] && versions+=("$(basename "$b" .tar.xz | sed 's/^bundle-//')")
done
[ ${#versions[@]} -gt 0 ] || { echo "no bundle in $here (scripts/gpu-bundle.sh)" >&2; exit 2; }
seal=${SEAL:-}
if [ -z "$seal" ]; then
  seal=${versions[0]}
  for v in "${versions[@]}"; do [ "$v" = 4.4.3 ] && seal=4.4.3; done
fi
bin=$(unpack "$seal") || exit 2
# Shared libraries the bundle carries (Google Benchmark for sealbench).
export LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=/tmp/seal-opencl-results
rm -rf "$work" && mkdir -p "$work/benches/results"
cd "$work"
log="$out/$part.log"
: >"$log"
failed=()

# run NAME COMMAND...: runs one program, its output appended to the log with a header
# and its time, and remembers a failure.
run() {
  local name=$1
  shift
  echo "=== $name: $*" | tee -a "$log"
  local start=$SECONDS
  if "$@" >>"$log" 2>&1; then
    echo "=== $name: ok ($((SECONDS - start)) s)" | tee -a "$log"
  else
    echo "=== $name: FAILED with $? ($((SECONDS - start)) s)" | tee -a "$log"
    failed+=("$name")
  fi
}

# run_request REPS: a server's request (upload 2, MulLinRS, download 1) and raw transfer
# bandwidth, from page-locked and pageable host memory.
run_request() {
  for log_n in 15 13; do
    run "cpp-request-2^$log_n" "$bin/cpp-request" --log-n "$log_n" --reps "$1"
  done
}

# run_apps REPS: programs as SEAL users write them, wall time per request against
# the kernel time of the same requests (the programs rerun themselves under the profiler and
# leave its JSON, CSV and trace beside their results) and SEAL's CPU time.
run_apps() {
  local cpu_reps=3
  [ "$1" -lt 3 ] && cpu_reps=1
  for log_n in 15 14; do
    run "cpp-apps-2^$log_n" "$bin/cpp-apps" --log-n "$log_n" --reps "$1" --cpu-reps "$cpu_reps"
  done
}

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  echo "SEAL_OPENCL_DEVICE=${SEAL_OPENCL_DEVICE:-}"
  echo "SEAL: $seal (bundles: ${versions[*]})"
} >>"$log"

# run_server: differential fuzzing against SEAL's CPU path (>= 10^4 Evaluator
# calls over N = 2^12..2^16; exits 1 on a mismatch, printing the shortest reproducer) and the
# soak (1000 clients' key sets under a 64 MiB key cap, evicting, then 10^5 saved
# results without a decrypt; device memory printed as it goes).
run_server() {
  local fuzz_ops=10000 soak=(--sets 1000 --operations 100000)
  if [ "${QUICK:-0}" = 1 ]; then
    fuzz_ops=300
    soak=(--sets 50 --operations 2000)
  fi
  run ex-seal_fuzz "$bin/ex-seal_fuzz" --ops "$fuzz_ops" --out "$work/benches/results/seal_fuzz.json"
  run ex-soak env SEAL_OPENCL_MAX_KEY_BYTES=67108864 "$bin/ex-soak" "${soak[@]}" \
    --out "$work/benches/results/soak.json"
}

case $part in
tests)
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  for t in "$bin"/test-*; do
    # With fewer than two GPUs the tiles test falls back to the CPU device split in two,
    # which is CI's run (PoCL 3.1); the PoCL of the GPU machine's image fails an assertion
    # compiling our kernels there, so the test runs here only across GPUs.
    # SEAL_OPENCL_DEVICES naming one device counts as one GPU.
    used=$gpus
    [[ "${SEAL_OPENCL_DEVICES:-all}" =~ ^[[:space:]]*[0-9]+[[:space:]]*$ ]] && used=1
    if [ "$(basename "$t")" = test-seal_gpu_tiles ] && [ "$used" -lt 2 ]; then
      echo "=== test-seal_gpu_tiles: skipped ($used GPU used; it runs across two GPUs or on CI's PoCL)" | tee -a "$log"
      continue
    fi
    run "$(basename "$t")" "$t" --test-threads=4
  done
  run cpp-listing1 "$bin/cpp-listing1"
  run cpp-hostile_load "$bin/cpp-hostile_load"
  run cpp-sealtest "$here/seal-gtest-run.sh" "$bin/cpp-sealtest"
  run ex-ckks_routines "$bin/ex-ckks_routines" --out "$work/ckks-routines"
  ;;
benches)
  # The benches write benches/results/<bench>-<device>-<date>.json below the working folder.
  quick=()
  [ "${QUICK:-0}" = 1 ] && quick=(--quick)
  for b in ntt runtime routines ops matmul multiqueue butterflies launch; do
    run "bench-$b" "$bin/bench-$b" "${quick[@]}"
  done
  # The server runs (below); SERVER=0 leaves them to a call of their own (`server`), so that
  # each device call stays under its time limit.
  [ "${SERVER:-1}" = 1 ] && run_server
  # The host's cost of routed calls through SEAL's C++ API, no profiler.
  reps=200
  [ "${QUICK:-0}" = 1 ] && reps=5
  for log_n in 15 13; do
    run "cpp-host_path-2^$log_n" "$bin/cpp-host_path" --log-n "$log_n" --reps "$reps"
  done
  # The same at 2^15 with every thread on one shared queue (SEAL_OPENCL_QUEUES=1, the design
  # before per-thread queues), for the threads comparison in one run.
  run "cpp-host_path-2^15-one-queue" env SEAL_OPENCL_QUEUES=1 "$bin/cpp-host_path" --log-n 15 \
    --reps "$reps" --json "benches/results/host_path-one-queue-2^15.json"
  run_request "$reps"
  apps_reps=20
  [ "${QUICK:-0}" = 1 ] && apps_reps=2
  run_apps "$apps_reps"
  ;;
apps)
  run_apps 20
  ;;
request)
  run_request 100
  ;;
multi)
  # host_path's thread table has a column per device count (1, ..., every GPU the backend
  # uses: SEAL_OPENCL_DEVICES, default all), each thread bound to device t mod d.
  run "cpp-host_path-2^16-16-primes" "$bin/cpp-host_path" --log-n 16 --primes 16 --reps 20
  run "cpp-host_path-2^15-multi" "$bin/cpp-host_path" --log-n 15 --reps 100 \
    --json "benches/results/host_path-multi-2^15.json"
  ;;
server)
  run_server
  ;;
clients)
  run ex-seal_clients-examples "$bin/ex-seal_clients" examples "$bin/cpp-sealexamples" --work "$work"
  run cpp-route_all-threads env SEAL_GPU_ROUTE_ALL=1 SEAL_OPENCL_CROSSCHECK=1 "$bin/cpp-route_all" threads
  run cpp-route_all-no-device env SEAL_GPU_ROUTE_ALL=1 SEAL_OPENCL_DEVICE=99:0 "$bin/cpp-route_all" no-device
  run ex-seal_clients-bench "$bin/ex-seal_clients" bench "$bin/cpp-sealbench" \
    --filter 'n=(8192|16384|32768) / .* / CKKS / ' --out "$work/benches/results/sealbench-$seal.json"
  ;;
integer)
  for t in seal_gpu_integer seal_fuzz_integer bfv_multiply integer_ops integer_kernels; do
    run "test-$t" "$bin/test-$t" --test-threads=4
  done
  for log_n in 13 14; do
    run "cpp-integer_path-2^$log_n" "$bin/cpp-integer_path" --log-n "$log_n" --reps 100
  done
  # Both applications at N = 2^13; APSI's sender also with many low-degree bundles; SealPIR's
  # server also at its usual 2^12 (where APSI's depth leaves no noise budget).
  run cpp-integer_apps-2^13 "$bin/cpp-integer_apps" --log-n 13 --reps 10 \
    --json "benches/results/integer_apps-2^13.json"
  run cpp-integer_apps-2^13-psi-16-bundles "$bin/cpp-integer_apps" --log-n 13 --app psi --degree 15 \
    --bundles 16 --reps 10 --json "benches/results/integer_apps-psi-16-bundles-2^13.json"
  run cpp-integer_apps-2^12-pir "$bin/cpp-integer_apps" --log-n 12 --app pir --reps 10 \
    --json "benches/results/integer_apps-pir-2^12.json"
  run ex-seal_fuzz_integer "$bin/ex-seal_fuzz_integer" --calls 11000 \
    --out "$work/benches/results/seal_fuzz_integer.json"
  run cpp-sealtest-integer-crosscheck env SEAL_OPENCL_INSTALL=1 SEAL_GPU_ROUTE_ALL=1 \
    SEAL_OPENCL_EXPECT_ROUTED=1 SEAL_OPENCL_CROSSCHECK=1 "$bin/cpp-sealtest" \
    --gtest_filter='*BFV*:*BGV*:*Batch*'
  run ex-seal_clients-bench-integer "$bin/ex-seal_clients" bench "$bin/cpp-sealbench" \
    --filter 'n=(8192|16384) / .* / (BFV|BGV) / ' --out "$work/benches/results/sealbench-integer-$seal.json"
  ;;
chain)
  for log_n in 13 14 15; do
    for chain in 0 15-0 15-4 15-8 15-16; do
      run "cpp-host_path-2^$log_n-chain-$chain" env SEAL_OPENCL_CHAIN="${chain%-*}" \
        SEAL_OPENCL_CHAIN_GROUPS="${chain#*-}" "$bin/cpp-host_path" --log-n "$log_n" --reps 200 \
        --json "benches/results/host_path-chain-$chain-2^$log_n.json"
    done
  done
  ;;
chain-apps)
  for log_n in 13 14; do
    for chain in 0 15; do
      run "cpp-apps-2^$log_n-chain-$chain" env SEAL_OPENCL_CHAIN=$chain "$bin/cpp-apps" \
        --log-n "$log_n" --reps 10 --cpu-reps 1 \
        --json "benches/results/apps-chain-$chain-2^$log_n.json"
    done
  done
  ;;
defer)
  for round in 1 2; do
    for log_n in 13 14; do
      for defer in 0 1; do
        run "cpp-host_path-2^$log_n-defer-$defer-round-$round" env SEAL_OPENCL_DEFER_MULTIPLY=$defer \
          "$bin/cpp-host_path" --log-n "$log_n" --reps 200 \
          --json "benches/results/host_path-defer-$defer-2^$log_n-round-$round.json"
      done
    done
  done
  for defer in 0 1; do
    run "cpp-apps-2^13-defer-$defer" env SEAL_OPENCL_DEFER_MULTIPLY=$defer "$bin/cpp-apps" \
      --log-n 13 --reps 10 --cpu-reps 1 --json "benches/results/apps-defer-$defer-2^13.json"
  done
  ;;
versions)
  for v in "${versions[@]}"; do unpack "$v" >/dev/null; done
  for round in 1 2; do
    for v in "${versions[@]}"; do
      run "cpp-host_path-2^15-seal-$v-round-$round" "/tmp/seal-opencl-bundle-$v/cpp-host_path" --log-n 15 \
        --reps 200 --json "benches/results/host_path-seal-$v-round-$round.json"
    done
  done
  ;;
*)
  echo "unknown part $part (tests | benches | request | apps | server | multi | clients | chain | chain-apps | defer | integer | versions)" >&2
  exit 2
  ;;
esac

tar -C "$work" -cf "$out/$part-results.tar" .
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" | tee -a "$log"
  exit 1
fi
echo "all passed" | tee -a "$log"
