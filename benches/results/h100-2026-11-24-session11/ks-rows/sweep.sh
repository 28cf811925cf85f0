#!/usr/bin/env bash
# Key switching's layout sweep with its roots in local memory, after the test suite.
set -u
. .gpu/gpu-env.sh
B=/tmp/seal-opencl-bundle
[ -x $B/bench-ntt ] || { rm -rf $B; mkdir -p $B; tar -C $B -xJf .gpu/bundle.tar.xz; }
V=r4g8c2k4p2o0,r4g7c2k4p2o0,r4g7c2k4p4o0,r4g8c2k4p1o0,r4g8c2k4p3o0,r4g9c3k4p2o0,r8g8c2k8p2o0
cd /tmp
for r in 1 2; do
  for ks in 15x8 16x8 14x7; do
    echo "=== sweep ks $ks round $r"
    $B/bench-ntt --strategies staged --sizes 15 --primes 8 --variants $V --ks $ks --reps 30 2>&1 | grep -v "^$"
  done
done
