#!/usr/bin/env bash
# Key switching's rows per work group, 2 (default) against 1, with roots in local memory.
set -u
. .gpu/gpu-env.sh
B=/tmp/seal-opencl-bundle
[ -x $B/bench-routines ] || { rm -rf $B; mkdir -p $B; tar -C $B -xJf .gpu/bundle.tar.xz; }
mkdir -p $OUT/ab
cd /tmp
date -u
for r in 1 2; do
  for v in r4g8c2k4p2o0 r4g8c2k4p1o0; do
    echo "=== routines $v round $r"
    SEAL_OPENCL_NTT_VARIANT=$v $B/bench-routines --sizes 13,14,15,16 --sets default --routines MulLin,Rotate,MulLinRS --reps 10 --json $OUT/ab/routines-$v-r$r.json 2>&1
    echo "=== ops $v round $r"
    SEAL_OPENCL_NTT_VARIANT=$v $B/bench-ops --reps 20 --json $OUT/ab/ops-$v-r$r.json 2>&1
  done
done
date -u
cd $OUT && tar cf ab.tar ab && rm -rf ab
