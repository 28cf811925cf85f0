#!/bin/bash
# issue 26 (branch issue-26): the application benchmarks before (apps-base: 638e972, main
# d0d1cb8 plus the benchmark) and after (apps-new: copy on write, 0244bee) on one GPU.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu-env.sh"
set +e
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
work=/tmp/apps26
rm -rf "$work" && mkdir -p "$work"
run() {
  local v=$1 n=$2 start=$SECONDS
  mkdir -p "$work/$v-$n"
  (cd "$work/$v-$n" && timeout 150 "$here/apps-$v" --log-n "$n" --reps 10 --cpu-reps 1 \
    --json "$work/$v-$n/apps-$v-2^$n.json") >"$OUT/$v-$n.log" 2>&1
  echo "=== $v 2^$n: exit $? ($((SECONDS - start)) s)"
  grep -E "wall|kernels|stream|thread|batch|per request|resident|RESULT|ERROR" "$OUT/$v-$n.log"
}
run new 15
run base 15
run new 14
run base 14
tar -C "$work" -cJf "$OUT/profiles.tar.xz" .
ls -la "$OUT"
