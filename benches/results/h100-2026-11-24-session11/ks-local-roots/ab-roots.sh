#!/usr/bin/env bash
# Key switching's roots in local memory against global (SEAL_OPENCL_KS_ROOTS), interleaved.
set -u
. .gpu/gpu-env.sh
B=/tmp/seal-opencl-bundle
[ -x $B/bench-ntt ] || { rm -rf $B; mkdir -p $B; tar -C $B -xJf .gpu/bundle.tar.xz; }
mkdir -p $OUT/ab
cd /tmp
date -u
for m in global local; do
  rm -rf /tmp/dump-$m; mkdir -p /tmp/dump-$m
  SEAL_OPENCL_KS_ROOTS=$m SEAL_OPENCL_DUMP_PROGRAMS=/tmp/dump-$m $B/bench-ntt --strategies staged --sizes 15 --primes 8 --ks 15x8 --reps 3 >/dev/null 2>&1
  echo "=== registers roots=$m"
  for f in /tmp/dump-$m/*; do
    tr -d '\000' < $f > /tmp/p.ptx
    grep -q ntt_fwd_block_ks /tmp/p.ptx || continue
    PATH=/usr/local/cuda/bin:$PATH ptxas -arch=sm_90 -O3 -v /tmp/p.ptx -o /tmp/p.cubin 2>&1 | grep -A2 "ntt_fwd_block_ks" | grep -i "registers\|smem\|Function prop" 
  done
done
for r in 1 2; do
  for m in global local; do
    echo "=== ntt roots=$m round $r"
    SEAL_OPENCL_KS_ROOTS=$m $B/bench-ntt --strategies staged --sizes 15 --primes 8 --ks 13x2,14x8,15x8,16x8 --reps 30 2>&1 | grep -v "^$"
    echo "=== routines roots=$m round $r"
    SEAL_OPENCL_KS_ROOTS=$m $B/bench-routines --sizes 13,14,15,16 --sets default --routines MulLin,Rotate,MulLinRS --reps 10 --json $OUT/ab/routines-$m-r$r.json 2>&1
    echo "=== ops roots=$m round $r"
    SEAL_OPENCL_KS_ROOTS=$m $B/bench-ops --reps 20 --json $OUT/ab/ops-$m-r$r.json 2>&1
    echo "=== host_path roots=$m round $r"
    SEAL_OPENCL_KS_ROOTS=$m $B/cpp-host_path --log-n 15 --reps 50 --json $OUT/ab/host_path-$m-r$r.json 2>&1 | head -30
  done
done
date -u
cd $OUT && tar cf ab.tar ab && rm -rf ab
