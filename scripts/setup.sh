#!/usr/bin/env bash
# Installs the system packages the build and the tests need, if any is missing:
# cmake and a C++17 compiler (SEAL), curl (SEAL 4.4.3's source, scripts/seal-source.sh), zlib
# and Zstandard (SEAL's compressed serialization), libclang (bindgen), the OpenCL ICD loader
# and headers, PoCL (an OpenCL device on the CPU, used when there is no GPU), and GoogleTest
# and Google Benchmark for SEAL's own test suite and sealbench; and the Debian packages given
# as arguments (scripts/tenseal-wheel.sh adds TenSEAL's).
#   scripts/setup.sh [PACKAGE...]
set -euo pipefail
packages=(cmake g++ make curl ca-certificates zlib1g-dev libzstd-dev libclang-dev ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libgtest-dev libbenchmark-dev "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
